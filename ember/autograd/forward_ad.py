"""Forward-mode AD with dual numbers: ``dual_level``, ``make_dual``, ``unpack_dual``.

An op propagates tangents with its ``jvp`` staticmethod when it has one; otherwise with the
transpose of its (linear in the output gradient) backward: jvp = d/du <vjp(u), tangent>. That
covers every op whose backward is written in ember ops, at about three times the op's cost.
"""
from __future__ import annotations

import weakref
from collections import namedtuple

import numpy as np

from .function import _fw_active
from .grad_mode import _state

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])

_levels: list = []  # per open level: weak references to tensors given a tangent


class dual_level:
    """Context manager: tangents live while the level is open and are dropped on exit."""

    def __enter__(self):
        if _levels:
            raise RuntimeError("Nested forward-AD levels are not supported in ember; close the "
                               "current dual_level first.")
        _levels.append([])
        _fw_active[0] = True
        return 0

    def __exit__(self, *exc):
        for ref in _levels.pop():
            t = ref()
            if t is not None:
                t._fw = None
        _fw_active[0] = bool(_levels)
        return False


def enter_dual_level():
    return dual_level().__enter__()


def exit_dual_level(*, level=None):
    dual_level().__exit__(None, None, None)


def _track(t):
    if _levels:
        _levels[-1].append(weakref.ref(t))


def make_dual(tensor, tangent, *, level=None):
    """A tensor with tensor's values (sharing memory) carrying ``tangent``."""
    if not _levels:
        raise RuntimeError("make_dual: there is no active forward AD level; use it inside "
                           "`with ember.autograd.forward_ad.dual_level():`")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(f"make_dual: Trying to set a forward gradient that has a different "
                           f"size than that of the original Tensor; got {list(tangent.shape)} "
                           f"and {list(tensor.shape)}")
    if not tensor.is_floating_point():
        raise ValueError(f"make_dual: expected a floating primal, got dtype {tensor.dtype}")
    prev = _state.fw_enabled
    _state.fw_enabled = False
    try:
        out = tensor.view_as(tensor)
    finally:
        _state.fw_enabled = prev
    out._fw = _as_tangent_of(tensor, tangent)
    _track(out)
    return out


def _as_tangent_of(primal, tangent):
    """The tangent a dual tensor keeps, as torch chooses it: the given tensor itself (same
    object, same dtype) when its strides are the primal's, else a copy laid out like the primal
    in the primal's dtype. A tangent that requires grad is detached (ember's forward AD does
    not record forward-over-reverse graphs), so it is never the same object."""
    if tangent.requires_grad:
        tangent = tangent.detach()
    elif tangent.stride() == primal.stride():
        return tangent
    from .._surface_functions import empty_strided
    out = empty_strided(tuple(primal.shape), primal.stride(), dtype=primal.dtype)
    prev = _state.fw_enabled
    _state.fw_enabled = False
    try:
        out.copy_(tangent)
    finally:
        _state.fw_enabled = prev
    return out


def unpack_dual(tensor, *, level=None):
    """(primal, tangent) of a dual tensor; tangent is None when it has none."""
    tangent = tensor._fw
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    prev = _state.fw_enabled
    _state.fw_enabled = False
    try:
        primal = tensor.view_as(tensor)
    finally:
        _state.fw_enabled = prev
    return UnpackedDualTensor(primal, tangent)


def _propagate(cls, node, args, outs, params):
    from .._tensor import Tensor, _make
    tangents = [a._fw if isinstance(a, Tensor) else None for a in args]
    if all(t is None for t in tangents):
        return
    if not any(o.is_floating_point() or o.is_complex() for o in outs):
        return  # comparisons, argmax...: no output carries a tangent (nor has a backward)
    prev = _state.fw_enabled, _state.enabled
    _state.fw_enabled = False
    try:
        jvp = getattr(cls, "jvp", None)
        if jvp is not None:
            res = jvp(node, *tangents)
            res = res if isinstance(res, tuple) else (res,)
        else:
            res = _jvp_by_transpose(cls, node, args, outs, tangents)
    finally:
        _state.fw_enabled, _state.enabled = prev
    for o, r in zip(outs, res):
        if r is not None and o.is_floating_point():
            o._fw = r.detach() if isinstance(r, Tensor) else _make(np.asarray(r))
            _track(o)


# NOTE [Function.jvp]: a user Function's jvp(ctx, *tangents) receives one tangent per
# forward argument (zeros for a tensor without one, None for a non-tensor) and returns one per
# output; forward ran without tangents, so what it saved on ctx are plain tensors. The results
# become the outputs' tangents, detached like every tangent in ember.
def _function_jvp(cls, ctx, args, tangents, outs):
    from .._tensor import Tensor
    full = [t if t is not None or not isinstance(a, Tensor) else a.detach().new_zeros(a.shape)
            for a, t in zip(args, tangents)]
    prev = _state.fw_enabled
    _state.fw_enabled = False
    ctx._in_jvp = True  # ctx.saved_tensors: what setup_context/forward saved for forward
    try:
        res = cls.jvp(ctx, *full)
    finally:
        _state.fw_enabled = prev
        ctx._in_jvp = False
    res = res if isinstance(res, tuple) else (res,)
    for o, r in zip(outs, res):
        if isinstance(o, Tensor) and isinstance(r, Tensor) and o.is_floating_point() and \
                not any(o is a for a in args):
            o._fw = r.detach()
            _track(o)


def _jvp_by_transpose(cls, node, args, outs, tangents):
    from .._tensor import _make
    from . import grad as autograd_grad
    from .function import _pack
    _state.enabled = True
    if node._to_save:  # not packed because no graph was recorded: pack for our use
        arrays = [a._data if hasattr(a, "_data") else a for a in args]
        node._saved = [_pack(node, v, args, arrays, outs, [o._data for o in outs])
                       for v in node._to_save]
        node._to_save = ()
    node.needs_input_grad = tuple(t is not None for t in tangents)
    us = [_make(np.zeros(o._data.shape, o._data.dtype)).requires_grad_()
          if o.is_floating_point() else None for o in outs]
    grads = cls.backward(node, *[u if u is not None else _make(np.zeros(o._data.shape))
                                 for u, o in zip(us, outs)])
    grads = grads if isinstance(grads, tuple) else (grads,)
    total = None
    for g, t in zip(grads, tangents):
        if g is not None and t is not None and g.requires_grad:
            term = (g * t.to(g.dtype)).sum()
            total = term if total is None else total + term
    live = [u for u in us if u is not None]
    if total is None:
        return [None] * len(outs)
    got = autograd_grad(total, live, allow_unused=True, materialize_grads=True)
    it = iter(got)
    return [next(it) if u is not None else None for u in us]
