"""Graph inspection and saved-tensor hooks (torch.autograd.graph).

``get_gradient_edge(t)`` names the edge t's gradient flows into (its grad_fn and output index,
or a leaf's gradient accumulator); ``autograd.grad`` accepts such edges as inputs.
``register_multi_grad_hook(tensors, fn, mode=...)`` calls ``fn`` once per backward: with all
the tensors' gradients ('all'; None for a tensor the backward does not reach) or with the
first one computed ('any').

``saved_tensors_hooks(pack_hook, unpack_hook)``: inside the block, every tensor an op saves for
backward goes through ``pack_hook(tensor) -> anything`` when it is saved, and the node keeps
only that result; backward gets the tensor back through ``unpack_hook(packed) -> Tensor``. The
stack of active hooks is per thread, as torch's (NOTE [Per-thread autograd state] in
grad_mode.py): hooks entered in one thread never see another thread's saved tensors.
"""
from __future__ import annotations

import contextlib
from typing import Any, NamedTuple

from .function import Node, _edge
from .grad_mode import _saved_hooks as _hooks

__all__ = ["Node", "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks",
           "GradientEdge", "get_gradient_edge", "register_multi_grad_hook"]


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


class GradientEdge(NamedTuple):
    """An edge of the autograd graph: the ``node`` a gradient flows into and which of its
    inputs (``output_nr``). ``autograd.grad`` accepts one in place of a tensor."""

    node: Any
    output_nr: int
    ownership_token: Any = None


def get_gradient_edge(tensor):
    """The GradientEdge the gradient of ``tensor`` flows into: (tensor.grad_fn, output_nr) for
    a computed tensor, (its AccumulateGrad node, 0) for a leaf.

    Example:
        >>> import ember
        >>> x = ember.ones(2, requires_grad=True)
        >>> y = x * 2
        >>> ember.autograd.grad((y * y).sum(), get_gradient_edge(y))
        (tensor([4., 4.]),)
    """
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does "
                           "not require gradients")
    node, nr = _edge(tensor)
    return GradientEdge(node, nr)


class _MultiHandle:
    """Removes every per-tensor hook of one register_multi_grad_hook call."""

    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for handle in self.handles:
            handle.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Call ``fn`` once per backward with the gradients of several tensors.

    mode='all': ``fn(grads)`` with one entry per tensor, once every tensor this backward reaches
    has its gradient; a tensor it does not reach gets None. mode='any': ``fn(grad)`` with the
    first of the tensors' gradients this backward computes. ``fn`` must not return a value (it
    cannot replace gradients). Returns a handle whose ``remove()`` unregisters the hook.

    Example:
        >>> import ember
        >>> a, b = ember.ones(2, requires_grad=True), ember.ones(2, requires_grad=True)
        >>> seen = []
        >>> h = register_multi_grad_hook((a, b), lambda gs: seen.append(
        ...     [None if g is None else g.tolist() for g in gs]))
        >>> (a * 3).sum().backward()
        >>> seen
        [[[3.0, 3.0], None]]
    """
    from .engine import current_graph_task
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    for t in tensors:
        if not t.requires_grad:
            # torch's check is an assertion on the tensor's grad_fn
            raise AssertionError("register_multi_grad_hook: expected every tensor to require "
                                 "grad (Expected gradient function to be set)")
    key = object()        # this registration's slot in each backward's task state

    if mode == "any":
        def any_hook(grad):
            task = current_graph_task()
            if task is not None and key not in task.state:
                task.state[key] = True
                fn(grad)

        return _MultiHandle([t.register_hook(any_hook) for t in tensors])

    nodes = [_edge(t)[0] for t in tensors]

    def fire(task):
        pending = task.state[key]
        if not pending["fired"]:
            pending["fired"] = True
            fn(pending["grads"])

    def state_of(task):
        pending = task.state.get(key)
        if pending is None:
            reached = [i for i, node in enumerate(nodes) if node in task.nodes]
            pending = task.state[key] = {"grads": [None] * len(tensors), "left": set(reached),
                                         "fired": False}
            # a reached tensor whose gradient turns out None never calls its hook: fire at the
            # end of the backward with what arrived
            task.callbacks.append(lambda: fire(task))
        return pending

    def make_hook(i):
        def hook(grad):
            task = current_graph_task()
            if task is None:
                return
            pending = state_of(task)
            pending["grads"][i] = grad
            pending["left"].discard(i)
            if not pending["left"]:
                fire(task)

        return hook

    return _MultiHandle([t.register_hook(make_hook(i)) for i, t in enumerate(tensors)])


def increment_version(tensor):
    """Count an in-place change the autograd graph cannot see (a write through NumPy or a
    kernel of the program's own) on ``tensor`` or each tensor of an iterable: backward then
    refuses the stale saved values, as after an in-place op."""
    from .._tensor import Tensor
    for t in ((tensor,) if isinstance(tensor, Tensor) else tensor):
        t._bump_version()


class allow_mutation_on_saved_tensors:
    """Inside the block, a tensor saved for backward may be modified in place afterwards:
    backward uses the value it had when it was saved.

    Differs from torch: every saved tensor is copied when it is saved (torch copies lazily, at
    the first in-place write); the copies are freed with the graph.
    """

    def __init__(self):
        self._hooks = saved_tensors_hooks(_saved_copy, _identity)

    def __enter__(self):
        self._hooks.__enter__()
        return self

    def __exit__(self, *exc):
        return self._hooks.__exit__(*exc)


def _saved_copy(t):
    return t.detach().clone()

