"""Hook plumbing shared by nn.Module: removable handles and the full backward hooks."""
from __future__ import annotations

import itertools
from collections import OrderedDict

from ..._tensor import Tensor
from ...autograd.function import Function


class RemovableHandle:
    """Returned by ``register_*_hook``; ``remove()`` unregisters the hook (also a context
    manager)."""

    _next_id = itertools.count()

    def __init__(self, *hooks_dicts):
        self.hooks_dicts = hooks_dicts
        self.id = next(RemovableHandle._next_id)

    def remove(self):
        for d in self.hooks_dicts:
            if isinstance(d, set):
                d.discard(self.id)
            else:
                d.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


# The hooks of every module (torch.nn.modules.module.register_module_*_hook): they run before
# each module's own hooks of the same kind.
GLOBAL_FORWARD_PRE: OrderedDict = OrderedDict()
GLOBAL_FORWARD: OrderedDict = OrderedDict()
GLOBAL_FORWARD_WITH_KWARGS: set = set()
GLOBAL_FORWARD_ALWAYS: set = set()
GLOBAL_BACKWARD: OrderedDict = OrderedDict()
GLOBAL_BACKWARD_PRE: OrderedDict = OrderedDict()


def any_global_hooks():
    return bool(GLOBAL_FORWARD_PRE or GLOBAL_FORWARD or GLOBAL_BACKWARD or GLOBAL_BACKWARD_PRE)


def register_module_forward_pre_hook(hook):
    """``hook(module, args)`` before the forward of every module (see Module's own)."""
    handle = RemovableHandle(GLOBAL_FORWARD_PRE)
    GLOBAL_FORWARD_PRE[handle.id] = hook
    return handle


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """``hook(module, args, output)`` after the forward of every module."""
    handle = RemovableHandle(GLOBAL_FORWARD, GLOBAL_FORWARD_WITH_KWARGS, GLOBAL_FORWARD_ALWAYS)
    GLOBAL_FORWARD[handle.id] = hook
    if with_kwargs:
        GLOBAL_FORWARD_WITH_KWARGS.add(handle.id)
    if always_call:
        GLOBAL_FORWARD_ALWAYS.add(handle.id)
    return handle


def register_module_full_backward_hook(hook):
    """``hook(module, grad_input, grad_output)`` in the backward of every module."""
    handle = RemovableHandle(GLOBAL_BACKWARD)
    GLOBAL_BACKWARD[handle.id] = hook
    return handle


def register_module_full_backward_pre_hook(hook):
    """``hook(module, grad_output)`` before the gradients of every module's inputs."""
    handle = RemovableHandle(GLOBAL_BACKWARD_PRE)
    GLOBAL_BACKWARD_PRE[handle.id] = hook
    return handle


def _insert(hooks, key, hook, prepend):
    hooks[key] = hook
    if prepend:
        hooks.move_to_end(key, last=False)



# ---------------------------------------------------------------------------------------------
# full backward hooks
#
# NOTE [Module backward hooks]: the module's tensor inputs pass through an identity Function
# before forward and its tensor outputs through another one after. Backward reaches the output
# identity first: it records grad_output (running the backward pre-hooks, which may replace
# it). It then reaches the input identity, whose backward sees grad_input and runs the
# backward hooks (which may replace grad_input). When no input requires grad, the hooks run at
# the output identity with grad_input all None, as in torch.


def _spread(values, idx, n):
    """Per-tensor values as one entry per argument/output (None for the non-tensors): the
    grad_input and grad_output tuples full backward hooks see, as torch builds them."""
    full = [None] * n
    for i, v in zip(idx, values):
        full[i] = v
    return tuple(full)


class _BackwardHookState:
    def __init__(self, module):
        self.module = module
        self.grad_output = None
        self.n_inputs = 0
        self.in_idx: list = []
        self.n_outputs = 0
        self.out_idx: list = []
        self.input_tracked = False

    def wrap_inputs(self, args):
        idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        self.n_inputs, self.in_idx = len(args), idx
        tracked = [i for i in idx if args[i].requires_grad]
        if not tracked:
            return args
        self.input_tracked = True
        wrapped = _InputHook.apply(self, *[args[i] for i in idx])
        wrapped = wrapped if isinstance(wrapped, tuple) else (wrapped,)
        out = list(args)
        for i, w in zip(idx, wrapped):
            out[i] = w
        return tuple(out)

    def wrap_outputs(self, output):
        single = isinstance(output, Tensor)
        outs = (output,) if single else output
        if not isinstance(outs, tuple):
            return output
        idx = [i for i, o in enumerate(outs) if isinstance(o, Tensor) and o.requires_grad]
        if not idx:
            return output
        self.n_outputs, self.out_idx = len(outs), idx
        wrapped = _OutputHook.apply(self, *[outs[i] for i in idx])
        wrapped = wrapped if isinstance(wrapped, tuple) else (wrapped,)
        new = list(outs)
        for i, w in zip(idx, wrapped):
            new[i] = w
        return new[0] if single else tuple(new)

    def run_hooks(self, grad_input):
        """The full backward hooks on the tensor inputs' gradients (spread to one per argument
        for the hooks); returns the tensor inputs' gradients."""
        m = self.module
        grad_input = _spread(grad_input, self.in_idx, self.n_inputs)
        for hook in list(GLOBAL_BACKWARD.values()) + list(m._backward_hooks.values()):
            result = hook(m, grad_input, self.grad_output)
            if result is not None:
                result = result if isinstance(result, tuple) else (result,)
                if len(result) != len(grad_input):
                    raise RuntimeError(f"Backward hook returned an invalid number of grad_input, "
                                       f"got {len(result)}, but expected {len(grad_input)}")
                grad_input = result
        return tuple(grad_input[i] for i in self.in_idx)


class _InputHook(Function):
    @staticmethod
    def forward(ctx, state, *tensors):
        ctx.state = state
        return tuple(t.view_as(t) for t in tensors) if len(tensors) > 1 else \
            tensors[0].view_as(tensors[0])

    @staticmethod
    def backward(ctx, *grads):
        grads = ctx.state.run_hooks(tuple(grads))
        return (None,) + tuple(grads)


class _OutputHook(Function):
    @staticmethod
    def forward(ctx, state, *tensors):
        ctx.state = state
        return tuple(t.view_as(t) for t in tensors) if len(tensors) > 1 else \
            tensors[0].view_as(tensors[0])

    @staticmethod
    def backward(ctx, *grads):
        state = ctx.state
        m = state.module
        grads = _spread(grads, state.out_idx, state.n_outputs)
        for hook in list(GLOBAL_BACKWARD_PRE.values()) + list(m._backward_pre_hooks.values()):
            result = hook(m, grads)
            if result is not None:
                grads = tuple(result) if isinstance(result, (tuple, list)) else (result,)
                if len(grads) != state.n_outputs:
                    raise RuntimeError(f"Backward pre hook returned an invalid number of "
                                       f"grad_output, got {len(grads)}, but expected "
                                       f"{state.n_outputs}")
        state.grad_output = grads
        if not state.input_tracked and (m._backward_hooks or GLOBAL_BACKWARD):
            state.run_hooks((None,) * len(state.in_idx))
        return (None,) + tuple(grads[i] for i in state.out_idx)
