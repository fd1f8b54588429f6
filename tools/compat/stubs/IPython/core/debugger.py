"""Headless stand-in: programs import ``set_trace`` and leave its calls commented out; a run
has no terminal to debug in, so a call returns at once."""


def set_trace(frame=None):
    return None
