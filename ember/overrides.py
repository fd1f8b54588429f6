"""``ember.overrides``: the names of torch's ``__torch_function__`` machinery that libraries
import, without the dispatch.

ember calls no ``__torch_function__`` (docs/DEVIATIONS.md): its functions run on ember Tensors
and do not ask arguments or modes to take over. Libraries still subclass ``TorchFunctionMode``
at import time and enter their modes (Lightning enters its ``_EmptyInit`` mode around every
``configure_model``, diffusers defines its layer-skip mode), so the mode stack is real - a mode
is entered, is the current mode, and is left - but no function call reaches a mode's
``__torch_function__``.
"""
from __future__ import annotations

from .autograd._legacy import is_tensor_like

__all__ = ["TorchFunctionMode", "get_default_nowrap_functions", "has_torch_function",
           "has_torch_function_unary", "has_torch_function_variadic", "is_tensor_like"]

_MODE_STACK: list = []


class TorchFunctionMode:
    """A context manager that torch would hand every torch function call to while entered.

    In ember the mode is pushed and popped (``_get_current_function_mode()`` sees it) but its
    ``__torch_function__`` is never called: ember has no ``__torch_function__`` dispatch.
    """

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        _MODE_STACK.append(self)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if not _MODE_STACK or _MODE_STACK[-1] is not self:
            raise RuntimeError("TorchFunctionMode: modes must be exited in the reverse order "
                               "they were entered")
        _MODE_STACK.pop()


def _get_current_function_mode():
    """The innermost entered mode, or None."""
    return _MODE_STACK[-1] if _MODE_STACK else None


def _get_current_function_mode_stack() -> list:
    """The entered modes, outermost first (a copy)."""
    return list(_MODE_STACK)


def has_torch_function(relevant_args) -> bool:
    """True if an argument's type defines ``__torch_function__`` (ember's Tensor does not)."""
    return any(hasattr(type(a), "__torch_function__") for a in relevant_args)


def has_torch_function_unary(arg) -> bool:
    return has_torch_function((arg,))


def has_torch_function_variadic(*args) -> bool:
    return has_torch_function(args)


def get_default_nowrap_functions() -> set:
    """Functions whose results a Tensor subclass's ``__torch_function__`` should not wrap:
    torch lists three tensor properties' getters and ``Tensor._base``; ember dispatches
    nothing, so nothing is wrapped and the set is empty."""
    return set()
