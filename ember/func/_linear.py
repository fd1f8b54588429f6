"""Linear layers whose weight is batched: per-sample gradients and model ensembles.

Under ``vmap(grad(f))`` every parameter is a batched tensor (NOTE [vmap batching]): a stride-0
expansion of the shared weight when the parameters are not mapped. ``BatchedLinear`` keeps the
layer one node: its forward is a single GEMM over all samples when the weight is such an
expansion (one weight for every sample), else a batched matmul; its backward produces the
per-sample weight gradients with one batched matmul.
"""

from __future__ import annotations

import numpy as np

from .._backend import gemm
from .._tensor import _make
from ..autograd.function import Op
from ..autograd.grad_mode import _state
from ._batched import is_batched, physical, sizes_of, wrap


def _shared(w):
    """The one (out, in) matrix of a (P, out, in) stack whose samples all share it, or None."""
    return w[0] if w.shape[0] > 1 and w.strides[0] == 0 else (w[0] if w.shape[0] == 1 else None)


class BatchedLinear(Op):
    """y[p] = x[p] W[p]^T + b[p] for x (P, n, in), W (P, out, in), b (P, out) or (out,)."""

    @staticmethod
    def forward(ctx, x, w, b=None):
        ctx.save_for_backward(x, w)
        ctx.bias_shape = None if b is None else b.shape
        p, n, k = x.shape
        shared = _shared(w)
        if shared is not None:
            y = gemm(x.reshape(p * n, k), shared.T).reshape(p, n, w.shape[1])
        else:
            y = np.matmul(x, w.transpose(0, 2, 1))
        if y.dtype != x.dtype:
            y = y.astype(x.dtype)
        if b is not None:
            y += b[:, None, :] if b.ndim == 2 else b
        return y

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        gx = gw = gb = None
        if _state.enabled:  # create_graph: ember ops, so that the gradient is differentiable
            if need[0]:
                gx = grad.matmul(w)
            if need[1]:
                gw = grad.transpose(1, 2).matmul(x)
        else:
            g, xa, wa = grad._data, x._data, w._data
            if need[0]:
                shared = _shared(wa)
                if shared is not None:
                    p, n, o = g.shape
                    gx = _make(gemm(g.reshape(p * n, o), shared)
                                                  .reshape(p, n, -1))
                else:
                    gx = _make(np.matmul(g, wa))
            if need[1]:
                gw = _make(_outer_sum(g, xa))
        if len(need) > 2 and need[2]:
            gb = grad.sum(1) if len(ctx.bias_shape) == 2 else grad.sum((0, 1))
        return gx, gw, gb


def _outer_sum(g, x):
    """sum over n of g[p, n, :] x[p, n, :]^T, for every p: (P, out, in)."""
    if g.shape[1] == 1:  # one row per sample (per-sample gradients): outer products
        return np.einsum("po,pi->poi", g[:, 0], x[:, 0])  # 3x faster than a broadcast product
    return np.matmul(np.ascontiguousarray(g.transpose(0, 2, 1)), np.ascontiguousarray(x))


def batched_linear(x, weight, bias):
    """F.linear's op for a batched weight (or bias): one BatchedLinear node."""
    items = [x, weight] + ([bias] if bias is not None else [])
    levels = tuple(sorted({lv for t in items if is_batched(t) for lv in physical(t)[1]}))
    full = sizes_of(levels)
    p = int(np.prod(full, dtype=np.int64))
    k = len(levels)

    def flat(t):
        if is_batched(t):
            from ._rules import _align
            phys, have = physical(t)
            return _align(phys, have, levels, expand=True)
        return t.expand(full + tuple(t.shape))

    xp = flat(x)
    lx = tuple(xp.shape[k:])
    n = int(np.prod(lx[:-1], dtype=np.int64))
    wp = _reshaped(flat(weight), (p,) + tuple(weight.shape))
    if bias is None:
        bp = None
    elif is_batched(bias):
        bp = _reshaped(flat(bias), (p, bias.shape[0]))
    else:
        bp = bias
    xr = _reshaped(xp, (p, n, lx[-1]))
    y = BatchedLinear.apply(xr, wp, bp) if bp is not None else BatchedLinear.apply(xr, wp)
    return wrap(_reshaped(y, full + lx[:-1] + (weight.shape[0],)), levels)


def _reshaped(t, shape):
    return t if tuple(t.shape) == shape else t.reshape(shape)
