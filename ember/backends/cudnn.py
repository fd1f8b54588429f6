"""``ember.backends.cudnn``: settable cuDNN flags of a machine without cuDNN.

``benchmark``, ``deterministic``, ``enabled``, ``allow_tf32`` and ``benchmark_limit`` can be set
and read back (with PyTorch's defaults) so that training scripts keep running; they have no
effect, since ember's convolutions are CPU kernels. For reproducibility use
``ember.use_deterministic_algorithms``.
"""
from __future__ import annotations

import contextlib
import sys
import types

__all__ = ["is_available", "version", "flags", "benchmark", "deterministic", "enabled",
           "allow_tf32", "benchmark_limit"]


def is_available():
    """False: ember does not use cuDNN."""
    return False


def version():
    """None: cuDNN is not present."""
    return None


def is_acceptable(tensor):
    return False


class _CudnnModule(types.ModuleType):
    """Module type whose flag attributes accept only bools, like PyTorch's."""

    _BOOL_FLAGS = ("enabled", "benchmark", "deterministic", "allow_tf32")

    def __setattr__(self, name, value):
        if name in self._BOOL_FLAGS and not isinstance(value, bool):
            raise TypeError(f"ember.backends.cudnn.{name} must be a bool; got "
                            f"{type(value).__name__}")
        super().__setattr__(name, value)


enabled = True
benchmark = False
deterministic = False
allow_tf32 = True
benchmark_limit = 10


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False,
          allow_tf32=True):
    """Set the cuDNN flags inside a ``with`` block, restoring them afterwards."""
    mod = sys.modules[__name__]
    names = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")
    old = {n: getattr(mod, n) for n in names}
    new = dict(zip(names, (enabled, benchmark, benchmark_limit, deterministic, allow_tf32)))
    for n, v in new.items():
        setattr(mod, n, v)
    try:
        yield
    finally:
        for n, v in old.items():
            setattr(mod, n, v)


sys.modules[__name__].__class__ = _CudnnModule
