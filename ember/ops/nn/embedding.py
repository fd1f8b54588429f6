"""The embedding lookup op."""
from __future__ import annotations

import numba
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
        remember(ctx, weight, indices, padding_idx, scale_grad_by_freq)
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


@numba.njit(nogil=True, cache=True)
def _k_add_rows(acc, idx, rows):
    """acc[idx[k]] += rows[k] for k in order (pointwise._k_index_add_rows' sums, with unsigned
    column offsets so that the row loop vectorizes: NOTE [Unsigned loop indices] in
    optim/_kernels.py). Returns -1, or the first k whose index is outside [0, len(acc))."""
    n, dim = acc.shape
    flat, flat_rows = acc.ravel(), rows.ravel()
    width = numba.uint64(dim)
    for k in range(idx.shape[0]):
        i = idx[k]
        if i < 0 or i >= n:
            return k
        src = numba.uint64(k) * width
        dst = numba.uint64(i) * width
        for t in range(width):
            flat[dst + t] += flat_rows[src + t]
    return -1


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
    # a column slice (NCF: cat's backward hands each table half of a (B, 64) gradient) is
    # copied first: the kernel's loop over a strided row does not vectorize (70 against 24 us
    # for 4096 rows of 32 float32, plus ~15 us for the copy; smoke)
    bad = _k_add_rows(acc, idx, np.ascontiguousarray(rows))
    if bad >= 0:
        raise IndexError(f"index_add: index {idx[bad]} is out of range for {num} rows")
    return acc


def remember(ctx, weight, indices, padding_idx, scale_grad_by_freq):
    """What Embedding's backward reads from its ctx (also set by `gather_cat`)."""
    ctx.indices, ctx.num = indices, weight.shape[0]
    ctx.padding_idx, ctx.scale = padding_idx, scale_grad_by_freq


@numba.njit(nogil=True, cache=True)
def _k_gather_cols(out, weight, idx, col):
    """out[r, col:col + D] = weight[idx[r]]; returns -1, or the first r whose index is outside
    [0, len(weight)) (nothing written for it or after it), which eager's lookup rejects. Flat
    unsigned offsets: numba's negative-index check on signed ones kept the row copy scalar
    (80 us against 25 us for 4096 rows of 32 float32, smoke)."""
    n, dim = weight.shape
    flat_out, flat_w = out.ravel(), weight.ravel()
    width = numba.uint64(out.shape[1])
    for r in range(idx.shape[0]):
        i = idx[r]
        if i < 0 or i >= n:
            return r
        src = numba.uint64(i) * numba.uint64(dim)
        dst = numba.uint64(r) * width + numba.uint64(col)
        for t in range(numba.uint64(dim)):
            flat_out[dst + t] = flat_w[src + t]
    return -1


def gather_cat(ctxs, weights, indices, padding_idx, scale):
    """``np.concatenate([np.take(w, i, axis=0) for w, i in ...], axis=-1)`` written in one pass,
    each Embedding's ctx set as its forward sets it: the compiled replay's form of a cat of
    lookups with one index shape (NCF's MLP branch: two (4096, 32) lookups and a cat, 3 writes
    of the activations, become one; NOTE [Gathers into a cat] in _dynamo/fusion.py)."""
    dims = [w.shape[1] for w in weights]
    total = sum(dims)
    out = np.empty(tuple(indices[0].shape) + (total,), weights[0].dtype)
    flat = out.reshape(-1, total)
    col = 0
    for ctx, w, idx, pad, sc in zip(ctxs, weights, indices, padding_idx, scale, strict=True):
        remember(ctx, w, idx, pad, sc)
        i64 = np.ascontiguousarray(idx, np.int64).reshape(-1)
        bad = _k_gather_cols(flat, np.ascontiguousarray(w), i64, col)
        if bad >= 0:
            raise IndexError(f"embedding: index out of range in self: index {i64[bad]} for a "
                             f"weight with {w.shape[0]} rows (num_embeddings).")
        col += w.shape[1]
    return out
