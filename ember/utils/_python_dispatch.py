"""``ember.utils._python_dispatch``: the ``TorchDispatchMode`` name that operator-counting and
tracing libraries subclass at import time (ptflops' aten backend, torch's own FLOP counter).

torch hands every aten operator run inside such a mode to its ``__torch_dispatch__``; ember has
no operator dispatch to intercept (docs/DEVIATIONS.md). A subclass can be defined and made, so
the library imports; entering one raises NotImplementedError, since a mode that silently saw no
operator would report empty counts for work that ran (as ``FlopCounterMode`` does here).
"""
from __future__ import annotations

__all__ = ["TorchDispatchMode", "is_traceable_wrapper_subclass"]


class TorchDispatchMode:
    """A context manager that torch would hand every aten operator call to while entered; in
    ember it can be subclassed and made, and entering it raises NotImplementedError."""

    def __init__(self, _dispatch_key=None):
        self._dispatch_key = _dispatch_key

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        raise NotImplementedError(
            f"{type(self).__name__}: ember has no aten operator dispatch, so a "
            f"TorchDispatchMode would see no operator; count or trace with module hooks "
            f"(register_forward_hook) or ember.fx instead")

    def __exit__(self, exc_type, exc_value, traceback):
        return None

    @classmethod
    def push(cls, *args, **kwargs):
        return cls(*args, **kwargs)


def _get_current_dispatch_mode():
    """The innermost entered dispatch mode: always None (none can be entered)."""
    return None


def is_traceable_wrapper_subclass(t) -> bool:
    """Whether ``t`` is a tensor subclass wrapping inner tensors: ember has none."""
    return False
