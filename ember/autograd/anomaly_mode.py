"""Anomaly detection: NaN checks in backward and forward stack traces on every node.

Anomaly mode is process-wide, as in torch: enabling it in one thread turns it on in all.
"""
from __future__ import annotations

from .function import Anomaly


class detect_anomaly:
    """Context manager/decorator: a NaN produced in backward raises, naming the forward op and
    where it was created; saved arrays are checksummed so that writes through a NumPy alias
    are caught when backward uses them."""

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan
        self.prev = (False, True)

    def __enter__(self):
        self.prev = (Anomaly.enabled, Anomaly.check_nan)
        Anomaly.enabled, Anomaly.check_nan = True, self.check_nan

    def __exit__(self, *exc):
        Anomaly.enabled, Anomaly.check_nan = self.prev
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*a, **k):
            with detect_anomaly(self.check_nan):
                return fn(*a, **k)

        return wrapper


class set_detect_anomaly:
    """Turn anomaly detection on or off (immediately; restored on exit of a `with`)."""

    def __init__(self, mode: bool, check_nan: bool = True):
        self.prev = (Anomaly.enabled, Anomaly.check_nan)
        Anomaly.enabled, Anomaly.check_nan = bool(mode), check_nan

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        Anomaly.enabled, Anomaly.check_nan = self.prev
        return False


def is_anomaly_enabled() -> bool:
    return Anomaly.enabled


def is_anomaly_check_nan_enabled() -> bool:
    return Anomaly.check_nan
