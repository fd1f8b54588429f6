"""The embedding lookup op."""
from __future__ import annotations

import numpy as np

from ..._tensor import _make
from ...autograd.function import Op
from ...autograd.grad_mode import _state
from .._kernels import pointwise as _kpoint


class Embedding(Op):
    """Rows of ``weight`` at integer ``indices``; the gradient scatter-adds into the rows."""

    @staticmethod
    def forward(ctx, weight, indices, padding_idx, scale_grad_by_freq):
        ctx.indices, ctx.num = indices, weight.shape[0]
        ctx.padding_idx, ctx.scale = padding_idx, scale_grad_by_freq
        return np.take(weight, indices, axis=0)

    @staticmethod
    def backward(ctx, grad):
        idx = ctx.indices.reshape(-1)
        dim = grad.shape[-1]
        g = grad.reshape(-1, dim)
        factor = None
        if ctx.padding_idx is not None:
            factor = (idx != ctx.padding_idx).astype(grad._data.dtype)
        if ctx.scale:  # divide by how often each index occurs in the mini-batch
            counts = np.bincount(idx, minlength=ctx.num)[idx].astype(grad._data.dtype)
            factor = 1.0 / counts if factor is None else factor / counts
        if factor is not None:
            g = g * _make(factor.reshape(-1, 1))
        if _state.enabled:
            gw = _make(np.zeros((ctx.num, dim), grad._data.dtype)).index_add(
                0, _make(idx), g)
        else:
            gw = _make(_kpoint.index_add_rows(ctx.num, idx, g._data))
        return gw, None, None, None
