"""Reverse-mode automatic differentiation over the dynamically recorded graph."""
from __future__ import annotations

from .anomaly_mode import detect_anomaly, is_anomaly_enabled, set_detect_anomaly  # noqa: F401
from .function import Function, Node, once_differentiable  # noqa: F401
from .function import OpNode as _OpNode  # noqa: F401
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled,  # noqa: F401
                        is_inference_mode_enabled, no_grad, set_grad_enabled)
from ._legacy import (NestedIOFunction, ProfilerConfig, ProfilerEvent,  # noqa: F401
                      ProfilerState, SavedTensor, is_multithreading_enabled, is_tensor_like,
                      set_multithreading_enabled)
from .variable import Variable  # noqa: F401
from .._tensor import Tensor as _Tensor  # loaded by .function above
from . import engine as _engine


def _tuple(x):
    if x is None:
        return None
    if isinstance(x, _Tensor):
        return (x,)
    from .._tensor import Tensor
    from .graph import GradientEdge
    if isinstance(x, (Tensor, GradientEdge)):
        return (x,)
    return tuple(x)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Accumulate gradients of ``tensors`` into the leaves' ``.grad``."""
    _make_root_grads, execute = _engine._make_root_grads, _engine.execute
    if grad_tensors is None and inputs is None and type(tensors) is _Tensor:  # loss.backward()
        execute(_make_root_grads((tensors,), (None,), "backward"),
                create_graph if retain_graph is None else retain_graph, create_graph)
        return
    tensors = _tuple(tensors)
    grads = _tuple(grad_tensors) or (None,) * len(tensors)
    if len(grads) != len(tensors):
        raise RuntimeError(f"backward: got {len(tensors)} tensors and {len(grads)} gradients")
    if retain_graph is None:
        retain_graph = create_graph
    roots = _make_root_grads(tensors, grads, "backward")
    only = None
    if inputs is not None:
        ins = _tuple(inputs)
        if not ins:
            raise RuntimeError("backward: 'inputs' argument to backward() cannot be empty.")
        only = set()
        capture = {}
        for t in ins:
            if not t.requires_grad:
                raise RuntimeError("backward: One of the differentiated Tensors does not require "
                                   "grad")
            if t.grad_fn is None:
                only.add(t._accumulator())
            else:  # a non-leaf input: its .grad is filled like retain_grad would
                capture[(t.grad_fn, t.output_nr)] = len(capture)
        got = execute(roots, retain_graph, create_graph, capture=capture or None,
                      accumulate=True, only=only)
        for t in ins:
            # a non-leaf input that retains its grad got it from its retain_grad hook already
            if t.grad_fn is not None and not t._retains_grad:
                g = got[capture[(t.grad_fn, t.output_nr)]]
                if g is not None:
                    t._grad = g if t._grad is None else t._grad + g
        return
    execute(roots, retain_graph, create_graph)


def _check_not_mixing_samples(outs, ins):
    """Inside vmap, the gradient of a batched output with respect to a tensor that is not
    batched would add up every sample's gradient (one tensor for the whole batch) where the
    caller asked for each sample's: refused, as torch refuses it."""
    from ..func import _vmap
    from ..func._batched import is_batched
    from .graph import GradientEdge
    if not _vmap.ACTIVE or not any(isinstance(o, _Tensor) and is_batched(o) for o in outs):
        return
    for t in ins:
        if not isinstance(t, GradientEdge) and not is_batched(t):
            raise RuntimeError(
                "autograd.grad inside vmap: an output is batched but an input (shape "
                f"{tuple(t.shape)}) is not, so its gradient would add up all the samples'. "
                "Use ember.func.grad (vmap(grad(f)) gives per-sample gradients).")


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of outputs with respect to inputs (nothing is accumulated into .grad).
    With ``is_grads_batched=True`` each grad_output carries a leading batch dim and the result
    is one vector-Jacobian product per batch entry, stacked (rows of a Jacobian)."""
    from .engine import _make_root_grads, execute
    outs = _tuple(outputs)
    ins = _tuple(inputs)
    if not ins:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty: pass the tensors to "
                           "differentiate with respect to.")
    if materialize_grads and allow_unused is False:
        raise ValueError("grad: materialize_grads=True gives unused inputs zero gradients, so "
                         "it needs allow_unused=True (or allow_unused not passed); got "
                         "allow_unused=False.")
    gouts = _tuple(grad_outputs) or (None,) * len(outs)
    if len(gouts) != len(outs):
        raise RuntimeError(f"grad: got {len(outs)} tensors and {len(gouts)} gradients; pass one "
                           "grad_output per output (None for a scalar output).")
    from .function import _batch_hook
    if _batch_hook[0] is not None:
        _check_not_mixing_samples(outs, ins)
    if is_grads_batched:
        return _grad_batched(outs, ins, gouts, retain_graph, create_graph, allow_unused,
                             materialize_grads)
    if allow_unused is None:
        allow_unused = materialize_grads
    if retain_graph is None:
        retain_graph = create_graph
    from .graph import GradientEdge
    for t in ins:
        if not isinstance(t, GradientEdge) and not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    roots = _make_root_grads(outs, gouts, "grad")
    capture = {}
    slots = []
    for t in ins:
        if isinstance(t, GradientEdge):       # an edge of the graph instead of a tensor
            edge = (t.node, t.output_nr)
        elif t.grad_fn is not None:
            edge = (t.grad_fn, t.output_nr)
        else:
            edge = (t._accumulator(), 0)
        slots.append(capture.setdefault(edge, len(capture)))
    got = execute(roots, retain_graph, create_graph, capture=capture, accumulate=False)
    res = []
    for t, s in zip(ins, slots):
        g = got[s]
        if g is None:
            if materialize_grads and not isinstance(t, GradientEdge):
                from .._tensor import _make
                import numpy as np
                g = _make(np.zeros(t._data.shape, t._data.dtype))
            elif not allow_unused:
                raise RuntimeError("One of the differentiated Tensors appears to not have been "
                                   "used in the graph. Set allow_unused=True if this is the "
                                   "desired behavior.")
        elif not create_graph:
            g = g.detach()
        res.append(g)
    return tuple(res)


from . import forward_ad, functional  # noqa: E402,F401
from .gradcheck import gradcheck, gradgradcheck  # noqa: E402,F401
from . import graph  # noqa: E402,F401


def variable(*args, **kwargs):
    """Removed constructor: raises, as in torch (use ``ember.tensor``)."""
    raise RuntimeError("ember.autograd.variable(...) is deprecated, use ember.tensor(...) instead")


def __getattr__(name):
    # the profiler imports Tensor, which is not importable yet while this package loads
    if name == "ProfilerActivity":
        from ..profiler import ProfilerActivity
        return ProfilerActivity
    if name == "profiler":  # torch.autograd.profiler without importing it first
        import importlib
        return importlib.import_module(".profiler", __name__)
    raise AttributeError(f"module 'ember.autograd' has no attribute '{name}'")


def _grad_batched(outs, ins, gouts, retain_graph, create_graph, allow_unused, materialize):
    """grad(..., is_grads_batched=True): one backward pass per entry of the grad_outputs'
    leading dim (torch vmaps the backward; the rows are the same), results stacked on dim 0."""
    from ..ops.join import stack
    if any(g is None for g in gouts):
        raise RuntimeError("grad: is_grads_batched=True needs grad_outputs for every output; "
                           "got None, expected tensors with a leading batch dim.")
    sizes = {g.shape[0] if g.dim() else None for g in gouts}
    if len(sizes) != 1 or None in sizes:
        raise RuntimeError("grad: is_grads_batched=True expects every grad_output to have the "
                           f"same leading batch dim; got shapes {[tuple(g.shape) for g in gouts]}")
    (n,) = sizes
    keep = create_graph if retain_graph is None else retain_graph
    rows = [grad(outs, ins, tuple(g[i] for g in gouts), retain_graph=True if i < n - 1 else keep,
                 create_graph=create_graph, allow_unused=allow_unused,
                 materialize_grads=materialize) for i in range(n)]
    out = []
    for j in range(len(ins)):
        col = [r[j] for r in rows]
        out.append(None if any(c is None for c in col) else stack(col))
    return tuple(out)
