"""Capture for ONNX export: an fx trace whose leaves are the layers with an ONNX translation,
run twice so that every shape-derived Python value is known to be static or dynamic.

# NOTE [Static or dynamic shape values]
# ``x.view(x.size(0), -1)`` records ``size(0)`` as a node. In ONNX it can be a constant or a
# Shape->Gather computation; the latter is only needed when the dimension is one the caller
# declared dynamic. We run the traced graph on the example inputs and again on inputs whose
# dynamic axes are resized: a non-tensor node whose value is the same in both runs is folded
# to a constant; a tensor's dimension that changed is dynamic. So a model exported without
# dynamic_axes is fully static, and one with dynamic batch computes only batch-derived sizes.
"""
from __future__ import annotations

import os
import sys
import types

import numpy as np

import ember
import ember.fx as fx

_EMBER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(ember.__file__)))


def _user_line() -> str:
    """``file.py:line`` of the innermost frame outside ember (where the op was written)."""
    f: types.FrameType | None = sys._getframe(2)
    ember_pkg = os.path.join(_EMBER_DIR, "ember") + os.sep
    while f is not None:
        fn = f.f_code.co_filename
        if not fn.startswith(ember_pkg):
            return f"{os.path.basename(fn)}:{f.f_lineno}"
        f = f.f_back
    return "?"


class OnnxTracer(fx.Tracer):
    """Leaves are exactly the modules with an ONNX translation; everything else is traced
    through. Each node remembers the submodule path and source line it came from."""

    def __init__(self, leaf_types: tuple):
        super().__init__()
        self.leaf_types = leaf_types
        self._scope: list[str] = []

    def is_leaf_module(self, m, qualname: str) -> bool:
        return isinstance(m, self.leaf_types)

    def call_module(self, m, forward, args, kwargs):
        qualname = self.path_of_module(m)
        self._scope.append(f"{qualname} ({type(m).__name__})" if qualname else
                           type(m).__name__)
        try:
            return super().call_module(m, forward, args, kwargs)
        finally:
            self._scope.pop()

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        node = super().create_node(kind, target, args, kwargs, name, type_expr)
        node.meta["onnx_scope"] = self._scope[-1] if self._scope else ""
        node.meta["onnx_line"] = _user_line()
        return node


class _Recorder(fx.Interpreter):
    """Runs the graph and keeps every node's value (tensors as (dtype, shape))."""

    def __init__(self, gm):
        super().__init__(gm, garbage_collect_values=False)
        self.values: dict = {}

    def run_node(self, n):
        result = super().run_node(n)
        self.values[n] = _describe(result)
        return result


def _describe(v):
    if isinstance(v, ember.Tensor):
        return ("tensor", v.dtype, tuple(v.shape))
    if isinstance(v, (tuple, list)):
        # a named tuple (torch.return_types) keeps its type: ``.values`` etc. are looked up
        # by field name at export
        return type(v)(_describe(e) for e in v) if not hasattr(v, "_fields") else \
            type(v)(*(_describe(e) for e in v))
    if isinstance(v, dict):
        return {k: _describe(e) for k, e in v.items()}
    return v


def perturb(arg: ember.Tensor, axes) -> ember.Tensor:
    """A copy of ``arg`` with its dynamic axes resized (values tiled, so ids stay valid)."""
    shape = list(arg.shape)
    for ax in axes:
        d = shape[ax]
        shape[ax] = d - 1 if d > 2 else d + 1
    data = arg.detach().numpy()
    out = data
    for ax, d in enumerate(shape):
        if out.shape[ax] > d:
            out = np.take(out, np.arange(d), axis=ax)
        elif out.shape[ax] < d:
            idx = np.arange(d) % max(out.shape[ax], 1)
            out = np.take(out, idx, axis=ax)
    return ember.from_numpy(np.ascontiguousarray(out))


def capture(model, args: tuple, kwargs: dict, leaf_types: tuple, dynamic: dict):
    """Trace ``model``; returns (GraphModule, values on the example, values on the resized
    example). ``dynamic`` maps a positional input index to its dynamic axes."""
    tracer = OnnxTracer(leaf_types)
    # parameters the caller did not pass keep their defaults (specialised, not inputs)
    import inspect
    fn = model.forward if isinstance(model, ember.nn.Module) else model
    params = list(inspect.signature(fn).parameters.values())
    concrete = {p.name: p.default for p in params[len(args):]
                if p.name not in kwargs and p.default is not inspect.Parameter.empty}
    graph = tracer.trace(model, concrete_args=concrete)
    gm = fx.GraphModule(tracer.root, graph, type(model).__name__)
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    flat = list(args) + [kwargs[p.target] for p in placeholders[len(args):]
                         if p.target in kwargs]
    flat += [p.args[0] for p in placeholders[len(flat):]]
    with ember.no_grad():
        rec_a = _Recorder(gm)
        rec_a.run(*flat)
        if dynamic:
            flat_b = [perturb(a, dynamic[i]) if i in dynamic else a for i, a in enumerate(flat)]
            rec_b = _Recorder(gm)
            try:
                rec_b.run(*flat_b)
            except Exception as e:
                from . import OnnxExporterError
                raise OnnxExporterError(
                    "ember.onnx.export: the model failed on inputs resized along the dynamic "
                    f"axes ({dynamic}), so those axes cannot be exported as dynamic: "
                    f"{type(e).__name__}: {e}") from e
            values_b = rec_b.values
        else:
            values_b = rec_a.values
    return gm, flat, rec_a.values, values_b
