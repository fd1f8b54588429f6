"""Autograd for in-place writes through views (see NOTE [In-place autograd] in registry.py).

A view's elements are located in its base by a *logical index*: for each view element, its flat
C-order index in the base. Two ops built on it carry the gradient: ``_ViewOf`` reads a view's
values out of a base, ``_RegionReplace`` writes new values into a copy of a base.
"""
from __future__ import annotations

import numpy as np

from .._backend import data_ptr
from .._tensor import _make
from ..autograd.function import Op
from .registry import sum_to


def logical_index(base_arr, view_arr):
    """int64 array (view's shape): flat C-order index into base of each view element."""
    item = base_arr.itemsize
    if view_arr.itemsize != item or any(s < 0 for s in base_arr.strides + view_arr.strides):
        raise RuntimeError("in-place operation through this view is not supported by autograd "
                           "(it reinterprets the dtype or has negative strides); clone() first.")
    bstr = [s // item for s in base_arr.strides]
    extent = 1 + sum((n - 1) * s for n, s in zip(base_arr.shape, bstr)) if base_arr.size else 0
    buf = np.full(max(extent, 1), -1, np.int64)
    as_strided = np.lib.stride_tricks.as_strided
    as_strided(buf, base_arr.shape, [s * 8 for s in bstr])[...] = (
        np.arange(base_arr.size, dtype=np.int64).reshape(base_arr.shape))
    off = (data_ptr(view_arr) - data_ptr(base_arr)) // item
    vstr = [s // item * 8 for s in view_arr.strides]
    idx = np.array(as_strided(buf[off:], view_arr.shape, vstr), copy=True)
    if (idx < 0).any():  # pragma: no cover - a view always lies inside its base
        raise RuntimeError("internal error: view lies outside its base")
    return idx


class _ViewOf(Op):
    """Values of the view described by ``index`` read from ``base`` (a copy)."""

    @staticmethod
    def forward(ctx, base, index):
        ctx.index, ctx.base_shape = index, base.shape
        return np.ascontiguousarray(base).reshape(-1)[index]

    @staticmethod
    def backward(ctx, grad):
        return _ViewScatter.apply(grad, ctx.index, ctx.base_shape), None


class _ViewScatter(Op):
    """Zeros of ``shape`` with ``src`` added at ``index`` (adjoint of _ViewOf)."""

    @staticmethod
    def forward(ctx, src, index, shape):
        ctx.index = index
        out = np.zeros(int(np.prod(shape)), src.dtype)
        np.add.at(out, index.reshape(-1), src.reshape(-1))
        return out.reshape(shape)

    @staticmethod
    def backward(ctx, grad):
        return _ViewOf.apply(grad, ctx.index), None, None


class _RegionReplace(Op):
    """A copy of ``base`` whose elements at ``index`` are replaced by ``src``."""

    @staticmethod
    def forward(ctx, base, src, index):
        ctx.index = index
        ctx.src_shape = np.shape(src)
        out = np.array(base, copy=True, order="C")
        out.reshape(-1)[index.reshape(-1)] = np.broadcast_to(src, index.shape).reshape(-1)
        return out

    @staticmethod
    def backward(ctx, grad):
        g_base = _RegionReplace.apply(grad, np.zeros((), grad._data.dtype), ctx.index)
        g_src = sum_to(_ViewOf.apply(grad, ctx.index), ctx.src_shape)
        return g_base, g_src, None


def view_of_base(base, view):
    """A tensor with view's values whose grad_fn reads them out of base's current history."""
    return _ViewOf.apply(base, logical_index(base._data, view._data))


def rebase_history(self, res):
    """After res's values were written into self, make self's history go through res."""
    if self._base is None:
        self._grad_fn, self._output_nr, self._requires_grad = res._grad_fn, res._output_nr, True
        return
    base = self._base
    index = logical_index(base._data, self._data)
    old = _make(base._data, base._vc)
    if base._requires_grad:
        from ..autograd.function import _edge
        old._grad_fn, old._output_nr = _edge(base)
        old._requires_grad = True
    new = _RegionReplace.apply(old, res, index)
    base._grad_fn, base._output_nr, base._requires_grad = new._grad_fn, 0, True
    self._view_v = -1  # every view of base (self included) rebuilds its grad_fn when next used


def carry_tangent(self, res):
    """Forward AD through an in-place op: ``self`` (whose values became ``res``'s) takes res's
    tangent, and when self is a view its base's tangent gets it in the view's region, so the
    base's later ops see the write (torch keeps a view's tangent a view of the base's)."""
    from ..autograd.forward_ad import _track
    tangent = res._fw
    if tangent is None and self._fw is None:
        return
    if tangent is None:  # the op's result has no tangent (a constant written in): zero
        tangent = _make(np.zeros(self._data.shape, self._data.dtype))
    self._fw = tangent
    _track(self)
    base = self._base
    if base is None or not base.is_floating_point():
        return
    bt = base._fw
    merged = (np.zeros(base._data.shape, base._data.dtype) if bt is None
              else np.array(bt._data, dtype=base._data.dtype, order="C"))
    merged.reshape(-1)[logical_index(base._data, self._data)] = tangent._data
    base._fw = _make(merged)
    _track(base)
