"""The exception and warning types of ``ember.save`` / ``ember.load``."""
from __future__ import annotations

import pickle


class SerializationError(RuntimeError, pickle.UnpicklingError):
    """A file ``ember.load`` cannot read: in no known format, truncated, corrupted, lying about
    its contents, or asking for something ``weights_only=True`` refuses.

    Every failure to load raises this one type. It is a ``RuntimeError`` (what torch raises for
    a damaged archive) and a ``pickle.UnpicklingError`` (what torch raises when weights-only
    loading refuses a file), so handlers written for torch catch it either way.
    """


class UnpicklingError(SerializationError):
    """``weights_only=True`` refused a global (class or function) or an operation the file's
    pickle asked for, such as setting attributes on an object that is not plain data."""


class UnsafeLoadWarning(UserWarning):
    """``ember.load(weights_only=False)`` ran the full unpickler, which can execute code."""


def bad(msg: str) -> SerializationError:
    return SerializationError(f"ember.load: {msg}")


def refused(msg: str) -> UnpicklingError:
    return UnpicklingError(f"ember.load: Weights only load failed: {msg}")
