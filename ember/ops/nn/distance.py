"""Norm and distance ops behind ``ember.nn.functional``'s normalize / cdist / pdist."""
from __future__ import annotations

import numpy as np

from ...autograd.function import Op
from ...autograd.grad_mode import _state as _grad_state
from ..indexing import where
from ..registry import sum_to


# ----------------------------------------------------------------------------- norms, distances
class LinalgVectorNorm(Op):
    """The p-norm over ``dims``; the gradient is 0 (not NaN) where the norm is 0."""

    @staticmethod
    def forward(ctx, x, p, dims, keepdim):
        a = np.abs(x)
        if p == 2:
            n = np.sqrt(np.sum(x * x, axis=dims, keepdims=True))
        elif p == 1:
            n = np.sum(a, axis=dims, keepdims=True)
        elif p == np.inf:
            n = np.max(a, axis=dims, keepdims=True, initial=0)
        elif p == -np.inf:
            n = np.min(a, axis=dims, keepdims=True)
        elif p == 0:
            n = np.sum(x != 0, axis=dims, keepdims=True).astype(x.dtype)
        else:
            n = np.sum(a ** p, axis=dims, keepdims=True) ** (1.0 / p)
        n = n.astype(x.dtype, copy=False)
        ctx.p, ctx.dims, ctx.keepdim = p, dims, keepdim
        ctx.save_for_backward(x, n)
        return n if keepdim else np.squeeze(n, axis=dims)

    @staticmethod
    def backward(ctx, grad):
        x, n = ctx.saved_tensors
        p = ctx.p
        if _grad_state.enabled and x.requires_grad:
            # create_graph: the saved norm is a constant, but double backward needs its own
            # dependence on x, so recompute it as a graph node
            n = LinalgVectorNorm.apply(x, p, ctx.dims, True)
        g = grad.reshape(n.shape)
        zero = n == 0
        safe = where(zero, 1.0, n)
        if p == 2:
            gx = g * x / safe
        elif p == 1:
            gx = g * x.sign()
        elif p in (np.inf, -np.inf):  # split evenly between the tied extreme entries
            hit = (x.abs() == n).to(x.dtype)
            gx = g * x.sign() * hit / hit.sum(ctx.dims, keepdim=True)
        elif p == 0:
            gx = x * 0
        else:  # d ||x||_p / dx = sign(x) |x|^(p-1) / ||x||^(p-1)
            gx = g * x.sign() * x.abs().pow(p - 1) / safe.pow(p - 1)
        if p not in (1, 0):
            gx = where(zero, 0.0, gx)
        return gx, None, None, None



class Cdist(Op):
    """Euclidean distances between rows via ||a||^2 + ||b||^2 - 2 a.b (one matmul)."""

    @staticmethod
    def forward(ctx, x1, x2):
        sq1 = np.sum(x1 * x1, axis=-1)[..., :, None]
        sq2 = np.sum(x2 * x2, axis=-1)[..., None, :]
        d2 = sq1 + sq2 - 2 * np.matmul(x1, np.swapaxes(x2, -1, -2))
        d = np.sqrt(np.maximum(d2, 0)).astype(x1.dtype, copy=False)
        ctx.save_for_backward(x1, x2, d)
        return d

    @staticmethod
    def backward(ctx, grad):
        x1, x2, d = ctx.saved_tensors
        # d d_ij / d x1_i = (x1_i - x2_j) / d_ij; W = G / D (0 where d = 0)
        w = where(d == 0, 0.0, grad / where(d == 0, 1.0, d))
        gx1 = x1 * w.sum(-1, keepdim=True) - w.matmul(x2)
        gx2 = x2 * w.sum(-2).unsqueeze(-1) - w.mT.matmul(x1)
        return sum_to(gx1, x1.shape), sum_to(gx2, x2.shape)

