"""use_deterministic_algorithms: a flag kernels with nondeterministic variants consult.

ember's kernels are deterministic today (NumPy ufunc.at and numba loops reduce in a fixed
order), so the flag changes nothing yet; a kernel added later that is not deterministic must
call ``check_deterministic(name)``.
"""
from __future__ import annotations

_flags = {"enabled": False, "warn_only": False}


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    _flags["enabled"], _flags["warn_only"] = bool(mode), bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    return _flags["enabled"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _flags["warn_only"]


def check_deterministic(name: str) -> None:
    """Call from a nondeterministic kernel: raises (or warns) when determinism is requested."""
    if _flags["enabled"]:
        msg = (f"{name} does not have a deterministic implementation, but you set "
               "'ember.use_deterministic_algorithms(True)'.")
        if _flags["warn_only"]:
            import warnings
            warnings.warn(msg, stacklevel=3)
        else:
            raise RuntimeError(msg)
