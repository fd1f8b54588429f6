"""Array-level backwards for the replay, for ops whose own backward computes partly in NumPy.

The recorder replays such a backward as one opaque call (``codegen.node_backward``): it wraps
the gradients in Tensors and the op's backward then reaches its kernels through Tensor methods
and the registry's generated wrappers, a few microseconds of Python per inner op. For the ops
below the replay calls the same kernels directly on arrays -- the op classes' own forwards and
the helpers their backwards use, with the same arguments -- so results are the ones eager
computes, bit for bit. Anything off the common path (other dtypes, padding_idx, batched
inputs) goes back to the op's own backward.
"""
from __future__ import annotations

import numba
import numpy as np

from .. import _onepool
from .._backend import reusable_empty
from ..autograd.grad_mode import _state
from ..ops.nn import linear
from .codegen import node_backward

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _linear(cls, ctx, grads, n):
    g = grads[0]
    x, w = ctx._to_save
    if g is None or not g.dtype == x.dtype == w.dtype or g.dtype not in _FLOATS or \
            g.size == 0 or x.ndim < 1:
        return node_backward(cls, ctx, grads, n)
    # eager's own array-level backward (one contiguous 2-D gradient, dW into a reused buffer),
    # so the replay follows whatever GEMM and thread choices eager makes
    prev = _state.enabled
    _state.enabled = False
    try:
        res = linear._backward_numpy(g, x, w, ctx.needs_input_grad)
    finally:
        _state.enabled = prev
    return tuple(None if r is None else r._data for r in res)[:n]


def linear_part(cls, ctx, grads, n, part):
    """Half of ``_linear`` for a two-thread schedule (NOTE [Two threads in a replay] in
    schedule.py): part 0 the input gradient, part 1 the weight and bias gradients, each by the
    GEMM call ``_linear`` makes for it, so the values are the same bits; None for the other
    half's outputs. Off the common path the whole backward runs and the half is picked."""
    need = ctx.needs_input_grad
    mine = (need[0], False, False) if part == 0 else (False, *need[1:])
    g = grads[0]
    x, w = ctx._to_save
    if g is None or not g.dtype == x.dtype == w.dtype or g.dtype not in _FLOATS or \
            g.size == 0 or x.ndim < 1:
        res = node_backward(cls, ctx, grads, n)
        return tuple(r if m else None for r, m in zip(res, mine, strict=False))
    prev = _state.enabled
    _state.enabled = False
    try:
        res = linear._backward_numpy(g, x, w, mine)
    finally:
        _state.enabled = prev
    return tuple(None if r is None else r._data for r in res)[:n]


def _embedding(cls, ctx, grads, n):
    from ..ops.nn.embedding import dense_grad
    g = grads[0]
    if g is None or ctx.padding_idx is not None or ctx.scale or g.dtype not in _FLOATS:
        return node_backward(cls, ctx, grads, n)
    gw = dense_grad(ctx.num, ctx.indices.reshape(-1), g.reshape(-1, g.shape[-1]))
    return (gw, None, None, None)[:n]


@_onepool.twin
def _k_relu_grad_rows_twin(g, stride, y, out):
    """out = 0 where y <= 0, else g (relu's rule in pointwise._k_masked_grad), for a 2-D y/out
    and a gradient whose row r is g[r * stride:][:cols] (a column slice read in place). A twin
    (NOTE [One pool] in _onepool.py): rows over the pool when it is on and y is big."""
    rows, cols = out.shape
    flat_y, flat_out = y.ravel(), out.ravel()
    width, step = numba.uint64(cols), numba.uint64(stride)
    for r in numba.prange(rows):
        src, dst = numba.uint64(r) * step, numba.uint64(r) * width
        for t in range(width):
            v = flat_y[dst + t]
            flat_out[dst + t] = 0 if v <= 0 else g[src + t]


def _k_relu_grad_rows(g, stride, y, out):
    """The kernel above, its parallel version when the pool is on and out is big."""
    _k_relu_grad_rows_twin.pick(out.size)(g, stride, y, out)


def _relu(cls, ctx, grads, n):
    from ..ops._kernels import pointwise
    from ..ops.nn.embedding import _flat_rows
    g = grads[0]
    (y,) = ctx._to_save
    if g is None or g.dtype not in _FLOATS or g.dtype != y.dtype or g.shape != y.shape:
        return node_backward(cls, ctx, grads, n)
    if y.flags.c_contiguous and not g.flags.c_contiguous:
        # a column slice after torch.cat's backward (NCF's MLP branch): read in place, one pass
        # (masked_grad would copy it first; np.where alone takes 3 strided passes)
        if y.ndim == 2 and y.size and g.strides[1] == g.itemsize:
            flat, stride = _flat_rows(g)
            out = reusable_empty(y.shape, y.dtype)
            _k_relu_grad_rows(flat, stride, y, out)  # passes at y = +inf and NaN, as torch
            return (out,)
        g = np.ascontiguousarray(g)
    return (pointwise.masked_grad(g, y, 0, None),)


def _gelu(cls, ctx, grads, n):
    # eager's one-pass kernel (ops/_kernels/gelu.py): the replay once fused gelu's backward
    # from erf/exp ops instead, ~2x the kernel's time (1.36 vs 0.61 ms for the (8, 64, 1024)
    # block, one thread) and not bit for bit eager's
    from ..ops._kernels import gelu as kgelu
    from ..ops.unary import _c_order
    g = grads[0]
    (x,) = ctx._to_save
    if g is None or not kgelu.fused(x, ctx.approximate) or g.dtype != x.dtype or \
            g.shape != x.shape:
        return node_backward(cls, ctx, grads, n)
    xs = _c_order(x)
    gx = kgelu.gelu_backward(_c_order(g), xs, ctx.approximate, reusable_empty(xs.shape, xs.dtype))
    return (gx, None)[:n]


def raw_backward(cls):
    """The array-level backward for op class ``cls``, or None (use node_backward)."""
    from ..ops.nn.embedding import Embedding
    from ..ops.nn.linear import Linear
    from ..ops.unary import Gelu, relu
    return {Linear: _linear, Embedding: _embedding, relu: _relu, Gelu: _gelu}.get(cls)
