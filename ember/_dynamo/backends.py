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


def compile_capture(cap, backend, mode, name):
    """A CompiledGraph (or a graph-module runner) for one capture."""
    from .runtime import CompiledGraph
    be = lookup_backend(backend)
    if be in ("inductor", "aot_eager"):
        fused_f = fused_b = None
        if be == "inductor":
            from .fusion import fuse
            fused_f, fused_b = fuse(cap)
        fwd, bwd, src = codegen.build(cap, fused_f, fused_b, name)
        graph = CompiledGraph(cap, fwd, bwd, src)
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


def _release(cap):
    """Drop the capture run's arrays and autograd graph (the compiled code keeps constants)."""
    for inst in cap.fwd:
        inst.node = None
    cap.arrays = None
    cap.bwd = None


def _is_tensor(x):
    return isinstance(x, _tensor.Tensor)
