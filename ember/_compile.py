"""``ember.compile`` and the float32 matmul precision setting.

``compile`` captures a model's (or function's) forward and backward per input signature and
replays them without per-op Python dispatch, fusing elementwise chains into generated numba
kernels; see ``ember/_dynamo`` for how.
"""
from __future__ import annotations

import warnings

__all__ = ["compile", "set_float32_matmul_precision", "get_float32_matmul_precision"]

_PRECISIONS = ("highest", "high", "medium")
_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
_matmul_precision = ["highest"]


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False):
    """Compile a Module or function: capture per input signature, replay without dispatch.

    Args:
        model: an ``nn.Module`` (an ``OptimizedModule`` wrapping it is returned) or a function;
            without it, a decorator is returned.
        fullgraph: raise ``ember._dynamo.exc.Unsupported`` at a graph break instead of running
            that call eagerly.
        dynamic: True: a shape change does not count as a recompile and reuses every generated
            kernel; None: the same after the first shape change; False: specialise per shape.
        backend: "inductor" (default: fused numba kernels), "aot_eager" (replay without
            fusion), "eager" (run the captured graph op by op), or a callable
            ``fn(graph_module, example_inputs) -> callable`` as in torch.
        mode: None, "default", "reduce-overhead", "max-autotune" (all the same on CPU).
        options: backend options (accepted, unused); disable: return the model unchanged.

    Example:
        >>> import ember
        >>> f = ember.compile(lambda x: (x * 2 + 1).relu())
        >>> f(ember.tensor([-1.0, 2.0]))
        tensor([0., 5.])

    Differs from torch: the first call of each signature runs eagerly while it is recorded.
    At a graph break where Python reads a value (``if t.sum() > 0``, ``print(t)``,
    ``loss.item()`` used by Python) the ops before and after run as separate compiled graphs
    while the function's Python runs each call; a call that takes another path than the
    recorded one runs its remaining ops eagerly, and other breaks (NumPy code, custom
    autograd Functions) run the whole call eagerly (see docs/DEVIATIONS.md).
    """
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode not in _MODES:
        raise RuntimeError(f"compile: unrecognized mode={mode!r}; expected one of "
                           f"{[m for m in _MODES if m]} or None.")
    if model is None:
        def decorator(fn):
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                           options=options, disable=disable)
        return decorator
    if not callable(model):
        raise RuntimeError(f"compile(): model must be a callable (an nn.Module or a function); "
                           f"got {type(model).__name__}")
    if disable:
        return model
    from ._dynamo.backends import lookup_backend
    lookup_backend(backend)  # unknown names fail here, as in torch
    from .nn.modules.module import Module
    if isinstance(model, Module):
        from ._dynamo.eval_frame import OptimizedModule
        return OptimizedModule(model, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                               mode=mode)
    from ._dynamo.eval_frame import CompiledFunction
    return CompiledFunction(model, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                            mode=mode)


def set_float32_matmul_precision(precision):
    """Set "highest" (default), "high" or "medium".

    Only the reported setting changes: ember's float32 matmuls always run in full float32 (the
    lower settings allow TF32/bfloat16 internals on GPUs). Tied to
    ``ember.backends.cuda.matmul.allow_tf32`` as in PyTorch.
    """
    if precision not in _PRECISIONS:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "set_float32_matmul_precision call has no effect.", UserWarning,
                      stacklevel=2)
        return
    _matmul_precision[0] = precision


def get_float32_matmul_precision():
    """The precision last set by set_float32_matmul_precision ("highest" by default)."""
    return _matmul_precision[0]
