"""Headless stand-in for IPython.core (nn_tutorial imports its debugger)."""
