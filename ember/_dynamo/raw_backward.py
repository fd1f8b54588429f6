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

import math

import numpy as np

from .. import _tensor
from ..autograd.grad_mode import _state
from .codegen import Ctx, node_backward

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _linear(cls, ctx, grads, n):
    from ..ops.nn.linear import _linear_weight_grad
    from ..ops.products import Matmul
    from ..ops.reduce import Sum
    g = grads[0]
    x, w = ctx._to_save
    if (g is None or g.ndim != 2 or x.ndim != 2 or not g.flags.c_contiguous
            or not g.dtype == x.dtype == w.dtype or g.dtype not in _FLOATS):
        return node_backward(cls, ctx, grads, n)
    need = ctx.needs_input_grad
    n_out, n_in = w.shape
    gx = gw = gb = None
    if need[0]:  # grad.matmul(weight): Matmul's forward, as the 2-D fast path calls it
        gx = Matmul.forward(Ctx(()), g, w)
    if need[1]:
        prev = _state.enabled
        _state.enabled = False
        try:
            gw = _linear_weight_grad(_tensor._make(g), _tensor._make(x), n_out, n_in)._data
        finally:
            _state.enabled = prev
    if len(need) > 2 and need[2]:  # grad.reshape(-1, n_out).sum(0)
        gb = Sum.forward(Ctx(()), g.reshape(-1, n_out), 0)
    return (gx, gw, gb)[:n]


def _embedding(cls, ctx, grads, n):
    from ..ops._kernels import pointwise
    g = grads[0]
    if g is None or ctx.padding_idx is not None or ctx.scale or g.dtype not in _FLOATS:
        return node_backward(cls, ctx, grads, n)
    gw = pointwise.index_add_rows(ctx.num, ctx.indices.reshape(-1), g.reshape(-1, g.shape[-1]))
    return (gw, None, None, None)[:n]


def _relu(cls, ctx, grads, n):
    from ..ops._kernels import pointwise
    g = grads[0]
    (y,) = ctx._to_save
    if g is None or g.dtype not in _FLOATS or g.dtype != y.dtype or g.shape != y.shape:
        return node_backward(cls, ctx, grads, n)
    if y.flags.c_contiguous:
        # a strided gradient (a column slice after torch.cat's backward) would send
        # masked_grad to np.where: 3 passes (270 us vs 41 us for (4096, 16) float32 here)
        g = np.ascontiguousarray(g)
    return (pointwise.masked_grad(g, y, 0, math.inf),)


def raw_backward(cls):
    """The array-level backward for op class ``cls``, or None (use node_backward)."""
    from ..ops.nn.embedding import Embedding
    from ..ops.nn.linear import Linear
    from ..ops.unary import relu
    return {Linear: _linear, Embedding: _embedding, relu: _relu}.get(cls)
