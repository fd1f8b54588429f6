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


def short(value) -> str:
    """A bounded description of a value read from a file, for error messages. Never the repr
    of a container: a file can make that exponentially long (shared sublists) or deep."""
    if value is None or type(value) in (bool, float):
        return repr(value)
    if type(value) is int:
        return repr(value) if value.bit_length() <= 64 else f"<int of {value.bit_length()} bits>"
    if type(value) in (str, bytes):
        text = repr(value[:60])
        return text if len(value) <= 60 else f"{text}... ({len(value)} long)"
    if type(value) in (tuple, list) and len(value) <= 8 and all(
            x is None or type(x) in (bool, int, float, str) for x in value):
        return "(" + ", ".join(short(x) for x in value) + ("," if len(value) == 1 else "") + ")"
    if type(value) in (tuple, list, dict, set, frozenset):
        return f"<{type(value).__name__} of {len(value)} items>"
    return f"<{type(value).__module__}.{type(value).__qualname__} object>"
