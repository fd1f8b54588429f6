"""Backends: what turns a capture into something that runs.

``"inductor"`` (the default, as in torch) replays the forward and backward as generated Python
with fused numba kernels; ``"aot_eager"`` replays them without fusion; ``"eager"`` runs the
captured graph op by op through ember's eager ops (as a GraphModule), as does a user's callable
backend ``fn(graph_module, example_inputs)`` with whatever callable it returns.
"""
from __future__ import annotations

from .. import _tensor
from . import codegen
from .exc import BackendCompilerFailed

_REGISTRY: dict = {}


def register_backend(compiler_fn=None, name=None, tags=()):
    """Register a backend under ``name`` (torch._dynamo.register_backend)."""
    def deco(fn):
        _REGISTRY[name or fn.__name__] = fn
        return fn
    return deco(compiler_fn) if compiler_fn is not None else deco


def list_backends(exclude_tags=("debug", "experimental")):
    """Names accepted by ``ember.compile(backend=...)``."""
    return sorted({"inductor", "aot_eager", "eager", *_REGISTRY})


def lookup_backend(backend):
    if callable(backend):
        return backend
    if backend is None:
        return "inductor"
    if backend in ("inductor", "aot_eager", "eager", "aot_eager_decomp_partition", "cudagraphs"):
        return "aot_eager" if backend == "aot_eager_decomp_partition" else \
            "inductor" if backend == "cudagraphs" else backend
    if backend in _REGISTRY:
        return _REGISTRY[backend]
    raise RuntimeError(f"compile: unknown backend {backend!r}; expected one of "
                       f"{list_backends()} or a callable fn(graph_module, example_inputs).")


def compile_capture(cap, backend, mode, name, shadow=None):
    """A CompiledGraph (or a graph-module runner) for one capture; given a ``shadow`` capture
    (the same call at other sizes) the graph keeps a template to replay at any sizes (see
    NOTE [Size generalisation])."""
    from .runtime import CompiledGraph
    be = lookup_backend(backend)
    if be in ("inductor", "aot_eager"):
        fused_f = fused_b = None
        if be == "inductor":
            from .fusion import fuse
            fused_f, fused_b = fuse(cap)
            if shadow is None:  # templates for other sizes know only instructions and groups
                from .catwrite import cat_products
                from .epilogue import linear_relus
                from .fusion import gather_cats
                from .scatter import scatter_all
                fused_f = linear_relus(cap, cat_products(cap, gather_cats(cap, fused_f)))
                fused_f, fused_b = scatter_all(cap, fused_f, fused_b)
        from . import schedule
        plans = [] if schedule.ENABLED[0] else None  # NOTE [Two threads in a replay]
        fwd, bwd, src = codegen.build(cap, fused_f, fused_b, name, plans=plans)
        if plans:
            fwd, bwd = schedule.wrap(plans, cap, fwd, bwd, name)
        graph = CompiledGraph(cap, fwd, bwd, src)
        if shadow is not None:
            from .symbolic import make_template
            scaps, key, dyn, syms = shadow
            graph.template = make_template(cap, scaps, syms, fused_f, fused_b)
            if graph.template is not None:
                graph.template.update(key=key, dyn=dyn, syms=syms)
        _release(cap)
        return graph
    from .graph import GraphRunner, to_graph_module
    gm, example = to_graph_module(cap)
    if be == "eager":
        fn = gm.forward
    else:
        try:
            fn = be(gm, example)
        except Exception as e:
            raise BackendCompilerFailed(
                f"backend={getattr(be, '__name__', be)!r} raised {type(e).__name__}: {e}") from e
    runner = GraphRunner(cap, fn, gm)
    _release(cap)
    return runner


def generalise(tpl, svals, name, inputs):
    """A CompiledGraph for the template at symbol values ``svals``, validated on ``inputs`` (raises
    symbolic.NotGeneral or the op's error when the sizes do not generalise)."""
    import numpy as np

    from ..ops import random as _random
    from .runtime import CompiledGraph
    from .symbolic import instantiate
    cap, ff, fb = instantiate(tpl, svals)
    fwd, bwd, _ = codegen.build(cap, ff, fb, name, check=True)
    arrays = [t._data for t in inputs]
    state = _random.get_rng_state()  # the validation run must not move the random stream
    try:
        outs, values = fwd(arrays, cap.ext)
        if bwd is not None:
            bwd(values, [np.ones(np.shape(outs[i]), np.asarray(outs[i]).dtype)
                         for i in cap.diff_outputs])
    finally:
        _random.set_rng_state(state)
    fwd, bwd, src = codegen.build(cap, ff, fb, name)
    graph = CompiledGraph(cap, fwd, bwd, src)
    graph.template = tpl
    return graph


def _release(cap):
    """Drop the capture run's arrays and autograd graph (the compiled code keeps constants)."""
    for inst in cap.fwd:
        inst.node = None
    cap.arrays = None
    cap.bwd = None


def _is_tensor(x):
    return isinstance(x, _tensor.Tensor)
