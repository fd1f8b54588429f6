"""Activation checkpointing: trade compute for memory by recomputing a segment in backward.

``checkpoint(fn, *args)`` runs ``fn`` without recording a graph, keeping only its inputs; when
the gradient reaches the segment's outputs, ``fn`` runs again (with the random-number state of
the first run restored, so dropout masks match) and the gradient flows through that recomputed
graph. Parameters used inside ``fn`` receive their gradients during that inner backward.

Differs from torch: both ``use_reentrant`` modes recompute the same way, so neither supports
``autograd.grad`` with respect to parameters used only inside ``fn`` (torch's non-reentrant
mode does); gradients with respect to the explicit inputs work in both.
"""

from __future__ import annotations

import contextlib
import warnings

import ember
from ember.autograd import Function

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction",
           "check_backward_validity", "detach_variable", "noop_context_fn",
           "set_checkpoint_early_stop", "set_checkpoint_debug_enabled", "get_device_states",
           "set_device_states", "DefaultDeviceType"]


class CheckpointError(RuntimeError):
    """Raised when a recomputation does not match the original forward."""


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs):
    """Detached copies of the tensors in ``inputs`` that keep their ``requires_grad``."""
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for value in inputs:
        if not isinstance(value, ember.Tensor):
            out.append(value)
            continue
        detached = value.detach()
        detached.requires_grad = value.requires_grad
        out.append(detached)
    return tuple(out)


def check_backward_validity(inputs) -> None:
    if not any(isinstance(v, ember.Tensor) and v.requires_grad for v in inputs):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=3)


def get_device_states(*args):
    return [], []  # ember has no accelerator devices


def set_device_states(devices, states, *, device_type=None) -> None:
    return None


class DefaultDeviceType:
    _default_device_type = "cpu"

    @staticmethod
    def set_device_type(device: str = "cpu") -> None:
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type() -> str:
        return DefaultDeviceType._default_device_type


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """Accepted for compatibility: ember always recomputes the whole segment."""
    yield


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    yield


class CheckpointFunction(Function):
    """The recompute-in-backward node: forward keeps inputs only; backward reruns ``fn``."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, kwargs, *args):
        ctx.run_function = run_function
        ctx.kwargs = kwargs
        ctx.rng_state = ember.get_rng_state() if preserve_rng_state else None
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, ember.Tensor)]
        ctx.inputs = [None if isinstance(a, ember.Tensor) else a for a in args]
        ctx.save_for_backward(*[args[i] for i in ctx.tensor_indices])
        with ember.no_grad():
            return run_function(*args, **kwargs)

    @staticmethod
    def backward(ctx, *grads):
        args = list(ctx.inputs)
        for i, saved in zip(ctx.tensor_indices, ctx.saved_tensors, strict=True):
            args[i] = saved
        args = detach_variable(tuple(args))
        state = ember.get_rng_state()
        if ctx.rng_state is not None:
            ember.set_rng_state(ctx.rng_state)
        try:
            with ember.enable_grad():
                outputs = ctx.run_function(*args, **ctx.kwargs)
        finally:
            if ctx.rng_state is not None:
                ember.set_rng_state(state)
        if isinstance(outputs, ember.Tensor):
            outputs = (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads, strict=False)
                 if isinstance(o, ember.Tensor) and o.requires_grad and g is not None]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is "
                               "not necessary")
        ember.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        input_grads = tuple(a.grad if isinstance(a, ember.Tensor) else None for a in args)
        return (None, None, None, *input_grads)


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check="default", debug=False, preserve_rng_state=True, **kwargs):
    """Run ``function(*args, **kwargs)`` keeping only its inputs; recompute it in backward.

    Example:
        >>> import ember
        >>> from ember.utils.checkpoint import checkpoint
        >>> layer = ember.nn.Linear(3, 3)
        >>> x = ember.randn(2, 3, requires_grad=True)
        >>> checkpoint(layer, x, use_reentrant=False).sum().backward()
        >>> x.grad.shape, layer.weight.grad.shape
        (ember.Size([2, 3]), ember.Size([3, 3]))
    """
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed "
                      "explicitly. use_reentrant=False is recommended, but if you need to "
                      "preserve the current default behavior, you can pass use_reentrant=True.",
                      stacklevel=2)
        use_reentrant = True
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant and context_fn is not noop_context_fn:
        raise ValueError("Passing `context_fn` or `debug` is only supported when "
                         "use_reentrant=False.")
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got "
                         f"{determinism_check}")
    if not ember.is_grad_enabled():
        return function(*args, **kwargs)
    if use_reentrant:
        check_backward_validity(args)
        return CheckpointFunction.apply(function, preserve_rng_state, kwargs, *args)
    return _checkpoint_without_reentrant(function, preserve_rng_state, args, kwargs)


# NOTE [Non-reentrant checkpoint]
# use_reentrant=False runs the function once, under saved-tensor hooks whose pack keeps only
# the position of each tensor an op saves; the first unpack in backward reruns the function
# (same inputs, the forward's RNG state, grad mode on so the ops save again) collecting what
# the ops save, in the same order, and hands each saved slot its recomputed tensor. The ops'
# own backward nodes stay in the graph, so autograd.grad, inputs= and create_graph (double
# backward through the recomputed values, which are connected to the real inputs) all work,
# unlike the reentrant form's one opaque node.
def _checkpoint_without_reentrant(function, preserve_rng_state, args, kwargs):
    rng_state = ember.get_rng_state() if preserve_rng_state else None
    count = [0]
    recomputed: list = []

    def pack(_t):
        count[0] += 1
        return count[0] - 1

    def recompute():
        def keep(t):
            recomputed.append(t)
            return t  # the recomputed graph's own nodes need it too (double backward)

        now = ember.get_rng_state()
        if rng_state is not None:
            ember.set_rng_state(rng_state)
        try:
            with ember.autograd.graph.saved_tensors_hooks(keep, lambda t: t), \
                    ember.enable_grad():
                function(*args, **kwargs)
        finally:
            if rng_state is not None:
                ember.set_rng_state(now)
        if len(recomputed) != count[0]:
            raise RuntimeError(
                f"checkpoint: the recomputed forward saved {len(recomputed)} tensors for "
                f"backward, the original {count[0]}; the checkpointed function must run the "
                "same operations each time (no data-dependent branches on state that changed).")

    def unpack(k):
        if not recomputed:
            recompute()
        return recomputed[k]

    with ember.autograd.graph.saved_tensors_hooks(pack, unpack):
        return function(*args, **kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Checkpoint a sequential model (or list of modules) in ``segments`` chunks; the last
    chunk runs normally."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter "
                      "should be passed explicitly.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if isinstance(functions, ember.nn.Sequential):
        functions = list(functions.children())
    functions = list(functions)

    def run(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    segment_size = max(len(functions) // max(segments, 1), 1)
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)
