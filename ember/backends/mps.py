"""``ember.backends.mps``: Apple's Metal backend is not part of ember."""
from __future__ import annotations

__all__ = ["is_available", "is_built", "is_macos13_or_newer"]


def is_available():
    """False: ember has no MPS backend."""
    return False


def is_built():
    """False: ember was not built with MPS support."""
    return False


def is_macos13_or_newer(minor=0):
    return False
