"""Higher-level autograd: vjp, jvp, jacobian, hessian, hvp, vhp (torch.autograd.functional)."""
from __future__ import annotations

import numpy as np


def _tup(x):
    from .._tensor import Tensor
    return (x,) if isinstance(x, Tensor) else tuple(x), isinstance(x, Tensor)


def _prep(inputs, create_graph):
    ins, single = _tup(inputs)
    ins = tuple(i.detach().requires_grad_(True) if not create_graph or not i.requires_grad
                else i.view_as(i) for i in ins)
    return ins, single


def _zeros_if_none(gs, like):
    from .._tensor import _make
    return tuple(_make(np.zeros(x._data.shape, x._data.dtype)) if g is None else g
                 for g, x in zip(gs, like))


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J)."""
    from . import grad
    from .grad_mode import enable_grad
    ins, single = _prep(inputs, create_graph)
    with enable_grad():
        out = func(*ins)
        outs, out_single = _tup(out)
        vs = _tup(v)[0] if v is not None else (None,) * len(outs)
        gs = grad(outs, ins, vs, create_graph=create_graph, allow_unused=True)
    gs = _zeros_if_none(gs, ins)
    if not create_graph:
        out = out.detach() if out_single else tuple(o.detach() for o in outs)
    return out, (gs[0] if single else gs)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v), through the double-vjp trick (two reverse passes)."""
    from .._tensor import _make
    from . import grad
    from .grad_mode import enable_grad
    ins, single = _prep(inputs, create_graph)
    vs = _tup(v)[0] if v is not None else tuple(_make(np.ones(i._data.shape, i._data.dtype))
                                                 for i in ins)
    with enable_grad():
        out = func(*ins)
        outs, out_single = _tup(out)
        us = tuple(_make(np.zeros(o._data.shape, o._data.dtype)).requires_grad_() for o in outs)
        gs = grad(outs, ins, us, create_graph=True, allow_unused=True)
        pairs = [(g, vv) for g, vv in zip(gs, vs) if g is not None]
        if not pairs:
            res = _zeros_if_none((None,) * len(outs), outs)
        else:
            res = grad([g for g, _ in pairs], us, [vv for _, vv in pairs],
                       create_graph=create_graph, allow_unused=True)
            res = _zeros_if_none(res, outs)
    if not create_graph:
        out = out.detach() if out_single else tuple(o.detach() for o in outs)
        res = tuple(r.detach() for r in res)
    return out, (res[0] if out_single else res)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian d func(inputs) / d inputs, row by row with reverse mode."""
    from .._tensor import _make
    from ..ops.join import stack
    from . import grad
    from .grad_mode import enable_grad
    ins, single = _prep(inputs, create_graph)
    with enable_grad():
        out = func(*ins)
        outs, out_single = _tup(out)
        result = []
        for o in outs:
            flat = o.reshape(-1)
            rows = [[] for _ in ins]
            for r in range(flat.numel()):
                gs = grad(flat[r], ins, retain_graph=True, create_graph=create_graph,
                          allow_unused=True)
                for k, (g, x) in enumerate(zip(gs, ins)):
                    rows[k].append(g if g is not None else _make(np.zeros(x._data.shape,
                                                                           x._data.dtype)))
            per_in = []
            for k, x in enumerate(ins):
                if rows[k]:
                    j = stack(rows[k]).reshape(tuple(o.shape) + tuple(x.shape))
                else:
                    j = _make(np.zeros(tuple(o.shape) + tuple(x.shape), x._data.dtype))
                per_in.append(j if create_graph else j.detach())
            result.append(per_in[0] if single else tuple(per_in))
    return result[0] if out_single else tuple(result)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar function."""
    from . import grad
    ins, single = _tup(inputs)

    def gradient(*xs):
        out = func(*xs)
        gs = grad(out, xs, create_graph=True, allow_unused=True)
        gs = _zeros_if_none(gs, xs)
        return gs[0] if single else gs

    return jacobian(gradient, inputs, create_graph=create_graph)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H)."""
    from . import grad
    from .grad_mode import enable_grad
    ins, single = _prep(inputs, create_graph)
    vs, _ = _tup(v)
    with enable_grad():
        out = func(*ins)
        gs = grad(out, ins, create_graph=True, allow_unused=True)
        gs = _zeros_if_none(gs, ins)
        res = grad(gs, ins, vs, create_graph=create_graph, allow_unused=True)
        res = _zeros_if_none(res, ins)
    out = out if create_graph else out.detach()
    res = res if create_graph else tuple(r.detach() for r in res)
    return out, (res[0] if single else res)


hvp = vhp  # the Hessian is symmetric for twice continuously differentiable functions
