"""Graph inspection and saved-tensor hooks (torch.autograd.graph).

``saved_tensors_hooks(pack_hook, unpack_hook)``: inside the block, every tensor an op saves for
backward goes through ``pack_hook(tensor) -> anything`` when it is saved, and the node keeps
only that result; backward gets the tensor back through ``unpack_hook(packed) -> Tensor``. The
stack of active hooks is per thread, as torch's (NOTE [Per-thread autograd state] in
grad_mode.py): hooks entered in one thread never see another thread's saved tensors.
"""
from __future__ import annotations

import contextlib

from .function import Node
from .grad_mode import _saved_hooks as _hooks

__all__ = ["Node", "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks"]


class saved_tensors_hooks:
    """Context manager: pack/unpack every tensor saved for backward inside the block.

    Args:
        pack_hook: called with each saved tensor when the forward saves it; may return anything.
            It must not modify the tensor in place.
        unpack_hook: called with what ``pack_hook`` returned when backward needs the tensor;
            must return a Tensor with the saved tensor's values.

    As in torch, a value that went through hooks is not version-checked (the hooks own it),
    and hooks apply to the thread that entered them.

    Example:
        >>> import ember
        >>> packed = []
        >>> x = ember.ones(3, requires_grad=True)
        >>> with ember.autograd.graph.saved_tensors_hooks(
        ...         lambda t: packed.append(t) or len(packed) - 1, lambda i: packed[i]):
        ...     y = (x * x).sum()
        >>> y.backward()
        >>> x.grad.tolist(), len(packed)
        ([2.0, 2.0, 2.0], 2)
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _hooks.disabled_message is not None:
            raise RuntimeError(_hooks.disabled_message)
        _hooks.stack = _hooks.stack + ((self.pack_hook, self.unpack_hook),)
        return self

    def __exit__(self, *exc):
        _hooks.stack = _hooks.stack[:-1]
        return False


class save_on_cpu(saved_tensors_hooks):
    """Keep saved tensors in CPU memory: on ember, where every tensor is on the CPU already, the
    saved tensor is kept as it is (``pin_memory`` and ``device_type`` are accepted for
    compatibility)."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda"):
        super().__init__(_identity, _identity)


def _identity(t):
    return t


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str):
    """Inside the block, entering ``saved_tensors_hooks`` raises RuntimeError(error_message);
    entering this block while hooks are active raises too (both as in torch)."""
    prev = _hooks.disabled_message
    if _hooks.stack:
        raise RuntimeError(error_message)
    _hooks.disabled_message = error_message
    try:
        yield
    finally:
        _hooks.disabled_message = prev
