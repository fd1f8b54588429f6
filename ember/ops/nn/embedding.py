"""The embedding lookup op."""
from __future__ import annotations

import numpy as np

from ..._backend import reusable_empty
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
            gw = _make(dense_grad(ctx.num, idx, g._data))
        return gw, None, None, None


def dense_grad(num, idx, rows):
    """The (num, D) weight gradient: rows[k] added into row idx[k], in order.

    NOTE [Embedding gradient buffer]
    The gradient is as big as the table (NCF: four 10000 x 32 tables, 1.28 MB each, every step)
    while the batch touches a third of its rows. np.zeros handed back fresh memory whose zeroing
    and first writes cost ~45 us a table; the gradient is now a pooled buffer (NOTE [Reused
    buffers] in _backend.py: reused once zero_grad() has dropped last step's .grad) zeroed in
    place, then the rows are scatter-added by the same kernel and in the same order as before,
    so the values are unchanged."""
    if rows.dtype not in _kpoint._FLOATS:
        return _kpoint.index_add_rows(num, idx, rows)
    acc = reusable_empty((num, rows.shape[1]), rows.dtype)
    acc.fill(0)
    idx = np.ascontiguousarray(idx, np.int64)
    bad = _kpoint._k_index_add_rows(acc, idx, np.ascontiguousarray(rows))
    if bad >= 0:
        raise IndexError(f"index_add: index {idx[bad]} is out of range for {num} rows")
    return acc
