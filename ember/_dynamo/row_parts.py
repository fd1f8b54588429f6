"""A Linear's GEMMs in two halves for a two-thread replay (NOTE [GEMM halves in a two-thread
replay]); the units are made in schedule.py.

NOTE [GEMM halves in a two-thread replay]
A transformer block's forward is a chain: nothing runs beside its GEMMs, so on two threads
with OpenBLAS held at one (NOTE [Two threads in a replay]) each GEMM would run on one core where
eager's OpenBLAS uses two. A big Linear GEMM is therefore cut into halves that the schedule
places like any unit: a start unit (allocates the result, or computes the whole op when the
arrays at hand are not the ones the halves take), then one unit per half of the result's rows
(forward y = x W^T + b and input gradient dx = g W: halves of the batch rows; weight gradient
dW = g^T x: halves of dW's rows, i.e. of g's columns). Each half is the whole op's BLAS call on
a block of rows, with the same reduction length and layout, and OpenBLAS computes an output
row of a block as it does in the whole product (checked bit for bit by
tests/compile/test_compile_two_threads.py on the SPEC models and the transformer block); the
bias is added row by row after the product, as Linear.forward adds it. The start unit decides
at each call (C-contiguous float arrays of one dtype, rows enough for both halves to keep
gemm's orientation) and records the answer on the ctx, which the halves read.
"""
from __future__ import annotations

import numpy as np

from .._backend import _NT_MAX_ROWS, reusable_empty
from ..autograd.grad_mode import _state
from ..ops.nn import linear

MIN_MACS = 1 << 22  # smaller GEMMs stay whole (~0.1 ms on one core: a hand-off costs more)
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def splits(x_shape, n_out, dtype):
    """Whether a Linear on an (..., k) input with n_out outputs gets halves."""
    rows = int(np.prod(x_shape[:-1])) if len(x_shape) else 0
    macs = rows * x_shape[-1] * n_out if len(x_shape) else 0
    return np.dtype(dtype) in _FLOATS and macs >= MIN_MACS and rows // 2 > _NT_MAX_ROWS and \
        n_out // 2 > 1


def _same(*arrays):
    dt = arrays[0].dtype
    return dt in _FLOATS and all(a is None or (a.dtype == dt and a.flags.c_contiguous)
                                 for a in arrays)


def _half(n, part):
    return (0, n // 2) if part == 0 else (n // 2, n)


# ------------------------------------------------------------------------------------ forward
def forward_start(ctx, x, weight, bias=None):
    """Linear.forward's result buffer, the halves to come (``ctx._rows`` True); or, when the
    arrays are not the halves' case, Linear.forward's whole result (``ctx._rows`` False)."""
    ctx._rows = (_same(x, weight, bias) and x.ndim >= 2 and
                 splits(x.shape, weight.shape[0], x.dtype) and not linear._split(
                     x.size * weight.shape[0]))
    if not ctx._rows:
        return linear.Linear.forward(ctx, x, weight, bias)
    ctx.save_for_backward(x, weight)
    return reusable_empty(x.shape[:-1] + weight.shape[:1], x.dtype)


def forward_rows(ctx, out, x, weight, bias, part):
    """Rows ``part`` (0: first half, 1: second) of y = x W^T + b into out."""
    if not ctx._rows:
        return
    x2 = x.reshape(-1, x.shape[-1])
    y2 = out.reshape(-1, weight.shape[0])
    lo, hi = _half(x2.shape[0], part)
    np.matmul(x2[lo:hi], weight.T, out=y2[lo:hi])
    if bias is not None:
        y2[lo:hi] += bias


def linear_relu_start(ctx_lin, ctx_relu, x, weight, bias):
    """epilogue.linear_relu's result buffer with its halves to come (``ctx_lin._rows``), each
    ctx set as linear_relu sets it; or linear_relu's whole result."""
    from .epilogue import _fusable_now, linear_relu
    ctx_lin._rows = (_fusable_now(x, weight, bias) and _same(x, weight, bias) and
                     splits(x.shape, weight.shape[0], x.dtype))
    if not ctx_lin._rows:
        return linear_relu(ctx_lin, ctx_relu, x, weight, bias)
    ctx_lin.save_for_backward(x, weight)
    y = reusable_empty((x.shape[0], weight.shape[0]), x.dtype)
    ctx_relu.params = ()
    ctx_relu.save_for_backward(y)
    return y


def linear_relu_rows(ctx_lin, out, x, weight, bias, part):
    """Rows ``part`` of relu(x W^T + b) into out: the GEMM, then epilogue's bias + ReLU pass."""
    from .epilogue import _k_bias_relu
    if not ctx_lin._rows:
        return
    lo, hi = _half(x.shape[0], part)
    np.matmul(x[lo:hi], weight.T, out=out[lo:hi])
    _k_bias_relu(out[lo:hi], bias, out.dtype.type(0))


# ----------------------------------------------------------------------------------- backward
def _common(ctx, g):
    x, w = ctx._to_save
    return (g is not None and _same(g, x, w) and g.size > 0 and x.ndim >= 1 and
            w.shape[0] > 1 and not linear._split(g.size * w.shape[1]))


def _whole(cls, ctx, g, part):
    from .raw_backward import linear_part
    return linear_part(cls, ctx, (g,), 3, part)


def dx_start(cls, ctx, g):
    """The input gradient's buffer (halves to come: ``ctx._dx_rows``), or the whole dx."""
    ctx._dx_rows = _common(ctx, g)
    if not ctx._dx_rows:
        return _whole(cls, ctx, g, 0)[0]
    return reusable_empty(ctx._to_save[0].shape, g.dtype)


def dx_rows(ctx, out, g, part):
    """Rows ``part`` of dx = g W into out."""
    if not ctx._dx_rows:
        return
    w = ctx._to_save[1]
    g2 = g.reshape(-1, w.shape[0])
    lo, hi = _half(g2.shape[0], part)
    np.matmul(g2[lo:hi], w, out=out.reshape(g2.shape[0], w.shape[1])[lo:hi])


def dw_start(cls, ctx, g, n):
    """(dW's buffer, the bias gradient) with dW's halves to come (``ctx._dw_rows``); or the
    whole (dW, db). ``n``: the backward's output count (3 with a bias input, else 2)."""
    need = ctx.needs_input_grad
    ctx._dw_rows = _common(ctx, g) and need[1]
    if not ctx._dw_rows:
        return _whole(cls, ctx, g, 1)[1:n]
    x, w = ctx._to_save
    g2 = g.reshape(-1, w.shape[0])
    prev = _state.enabled
    _state.enabled = False
    try:
        gb = linear._column_sums(g2) if n > 2 and need[2] else None
    finally:
        _state.enabled = prev
    return (reusable_empty(w.shape, g.dtype), gb)[:n - 1]


def dw_rows(ctx, out, g, part):
    """Rows ``part`` of dW = g^T x into out."""
    if not ctx._dw_rows:
        return
    x, w = ctx._to_save
    g2 = g.reshape(-1, w.shape[0])
    lo, hi = _half(w.shape[0], part)
    np.matmul(g2[:, lo:hi].T, x.reshape(-1, w.shape[1]), out=out[lo:hi])
