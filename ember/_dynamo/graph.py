"""The captured forward as an ember.fx GraphModule, for ``backend=`` callables and "eager".

Each recorded op call becomes a ``call_function`` node whose target runs that op eagerly (so the
graph module is differentiable like any ember code); inputs are placeholders, parameters and
buffers ``get_attr`` nodes on the live tensors, constants ``get_attr`` nodes on copies.
"""
from __future__ import annotations

import functools

import numpy as np

from .. import _tensor
from .capture import SideEffect, redraw, unflatten

_targets: dict = {}


def op_target(cls):
    """A function named after the op that runs it eagerly (the node's ``target``)."""
    fn = _targets.get(cls)
    if fn is None:
        @functools.wraps(cls.apply)
        def fn(*args, **kwargs):
            return cls.apply(*args, **kwargs)
        name = "".join("_" + c.lower() if c.isupper() else c for c in cls.__name__).lstrip("_")
        fn.__name__ = fn.__qualname__ = name
        fn.__module__ = __name__
        fn._ember_op = cls
        _targets[cls] = fn
    return fn


def random_mask(recipe):
    """Draw a dropout mask again (a node target; see capture.RandArray)."""
    return redraw(recipe)


def to_graph_module(cap, placeholders=None, nested_output=False):
    """(GraphModule, example inputs) for the forward of a capture.

    ``placeholders``: (name, index of the input tensor or None) per argument of the generated
    forward (default: one per distinct input tensor, ``arg<k>``); ``nested_output``: return the
    captured function's output structure instead of a flat tuple.
    """
    from ..fx import Graph, GraphModule
    g = Graph()
    env, attrs = {}, {}
    example = []
    in_slot = {kind[1]: s for s, kind in enumerate(cap.kinds) if kind[0] == "in"}
    if placeholders is None:
        placeholders = [(f"arg{k}", k) for k in sorted(in_slot)]
    for name, k in placeholders:
        node = g.placeholder(name)
        if k in in_slot:
            env[in_slot[k]] = node
            example.append(_tensor._make(cap.arrays[in_slot[k]]))
    for s, kind in enumerate(cap.kinds):
        if kind[0] == "ext":
            name = f"_tensor_{kind[1]}"
            attrs[name] = cap.ext[kind[1]]
            env[s] = g.get_attr(name)

    def ref(r):
        if r[0] == "c":
            return r[1]
        if r[0] == "k":
            return r[1](ref(x) for x in r[2])
        s = r[1]
        if s not in env:
            kind = cap.kinds[s]
            if kind[0] == "rand":
                env[s] = g.call_function(random_mask, (kind[1],))
            else:  # a constant
                name = f"_const_{s}"
                attrs[name] = _tensor._make(np.array(cap.arrays[s]))
                env[s] = g.get_attr(name)
        return env[s]

    for inst in cap.fwd:
        if hasattr(inst, "graph_node"):  # an in-place write (writes.py)
            inst.graph_node(g, ref)
            continue
        if isinstance(inst, SideEffect):
            g.call_function(inst.fn, inst.args, inst.kwargs)
            continue
        args = tuple(ref(a) for a in inst.args)
        kwargs = {k: ref(v) for k, v in inst.params.items()}
        node = g.call_function(op_target(inst.cls), args, kwargs)
        if len(inst.outs) == 1 and not inst.tuple_out:
            env[inst.outs[0]] = node
        else:
            import operator
            for j, s in enumerate(inst.outs):
                env[s] = g.call_function(operator.getitem, (node, j))
    outs = tuple(ref(("s", o)) if isinstance(o, int) else ref(("s", o[1])) if o[0] == "item"
                 else o[1] if nested_output else None for o in cap.outputs)
    g.output(unflatten(cap.out_spec, iter(outs)) if nested_output else outs)
    return GraphModule(attrs, g), example


class GraphRunner:
    """Runs what a backend returned for the graph module, with the capture's output structure."""

    def __init__(self, cap, fn, gm):
        self.fn, self.gm = fn, gm
        self.out_spec = cap.out_spec
        self.py = {i: o[1] for i, o in enumerate(cap.outputs)
                   if isinstance(o, tuple) and o[0] == "py"}
        self.items = {i for i, o in enumerate(cap.outputs)
                      if isinstance(o, tuple) and o[0] == "item"}
        self.ext = cap.ext
        self.ext_meta = [(t._data.shape, t._data.dtype, t._requires_grad) for t in cap.ext]
        self.sources = (getattr(gm, "code", ""), None)

    def guard_ext(self):
        return all(t._data.shape == s and t._data.dtype == d and t._requires_grad == r
                   for t, (s, d, r) in zip(self.ext, self.ext_meta, strict=False))

    def run(self, inputs):
        res = self.fn(*inputs)
        if not isinstance(res, (tuple, list)):
            res = (res,)
        outs = [r.item() if i in self.items else self.py.get(i, r) for i, r in enumerate(res)]
        return unflatten(self.out_spec, iter(outs))
