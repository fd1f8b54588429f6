"""The embedding lookup op."""
from __future__ import annotations

import numba
import numpy as np

from ... import _onepool
from ..._backend import reusable_empty
from ..._kernel_threads import num_workers, parallel_range
from ..._tensor import _make
from ...autograd.function import Op
from ...autograd.grad_mode import _state
from .._kernels import pointwise as _kpoint

# rows x D elements per kernel-thread part of a gradient or a lookup (NOTE [Kernel threads];
# off unless the kernel threads are on, e.g. in a compiled replay with
# EMBER_COMPILE_KERNEL_THREADS: NOTE [Kernel threads in a replay] in _dynamo/runtime.py)
_GRAIN = 1 << 16


class Embedding(Op):
    """Rows of ``weight`` at integer ``indices``; the gradient scatter-adds into the rows."""

    @staticmethod
    def forward(ctx, weight, indices, padding_idx, scale_grad_by_freq):
        remember(ctx, weight, indices, padding_idx, scale_grad_by_freq)
        return lookup(weight, indices)

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
def _k_add_rows(acc, idx, rows, row_stride, lo, hi, zero):
    """Rows lo..hi of acc set to ``zero`` (0 in acc's dtype), then acc[idx[k]] += row k for
    the k (in order) whose index falls in lo..hi (pointwise._k_index_add_rows' sums), row k
    being rows[k * row_stride:][:D] of the flat ``rows`` (a column slice of a wider gradient
    needs no copy). Parts over disjoint row ranges give the same sums as one call. Unsigned
    offsets, so that the row loop vectorizes: NOTE [Unsigned loop indices] in
    optim/_kernels.py. Returns -1, or the first k whose index is outside [0, len(acc))."""
    n, dim = acc.shape
    flat = acc.ravel()
    width = numba.uint64(dim)
    stride = numba.uint64(row_stride)
    for t in range(numba.uint64(lo) * width, numba.uint64(hi) * width):
        flat[t] = zero
    for k in range(idx.shape[0]):
        i = idx[k]
        if i < 0 or i >= n:
            return k
        if i < lo or i >= hi:
            continue
        src = numba.uint64(k) * stride
        dst = numba.uint64(i) * width
        for t in range(width):
            flat[dst + t] += rows[src + t]
    return -1


# NOTE [Embedding kernels on the one pool]
# With ember's one pool on (NOTE [One pool] in ember/_onepool.py) the lookups, the cat of lookups
# and the weight gradient run their row kernels in one part per pool thread through a numba
# prange (never ember's Python kernel threads: one pool, not two). The parts are the ones the
# kernel threads use - disjoint rows of the output, and for the gradient disjoint rows of the
# table, each part scanning the whole batch in order - so the values are the serial kernel's
# bit for bit. Used from _POOL_WORK elements (NCF: 4096 x 32 per lookup; the gradient zeroes
# and scatters 10000 x 32 + 4096 x 32 per table).
_POOL_WORK = 1 << 15


def _on_pool(work):
    return work >= _POOL_WORK and _onepool.enabled()


def _pool_bounds(n):
    parts = max(1, min(numba.get_num_threads(), n))
    return np.array([n * i // parts for i in range(parts + 1)], np.int64)


@_onepool.twin
def _k_add_rows_parts(acc, idx, rows, row_stride, bounds, zero):
    """_k_add_rows over the row ranges bounds[p]..bounds[p + 1], one part per prange step;
    each part's result (-1 or the first bad k) in the returned array."""
    res = np.empty(bounds.size - 1, np.int64)
    for p in numba.prange(bounds.size - 1):
        res[p] = _k_add_rows(acc, idx, rows, row_stride, bounds[p], bounds[p + 1], zero)
    return res


@_onepool.twin
def _k_gather_cols_parts(out, weight, idx, col, bounds):
    """_k_gather_cols over the row ranges bounds[p]..bounds[p + 1], one part per prange step;
    each part's result (-1 or its first bad row) in the returned array."""
    res = np.empty(bounds.size - 1, np.int64)
    for p in numba.prange(bounds.size - 1):
        res[p] = _k_gather_cols(out, weight, idx, col, bounds[p], bounds[p + 1])
    return res


def _flat_rows(rows):
    """(flat 1-D array, row stride in elements) over a 2-D array whose rows are each
    contiguous (a column slice: cat's backward hands each table of NCF's MLP branch half of a
    (B, 64) gradient); other layouts are copied first."""
    if rows.flags.c_contiguous:
        return rows.reshape(-1), rows.shape[1]
    item = rows.itemsize
    s0, s1 = rows.strides
    if s1 != item or s0 % item or s0 < rows.shape[1] * item or rows.shape[0] == 0:
        rows = np.ascontiguousarray(rows)
        return rows.reshape(-1), rows.shape[1]
    n = (rows.shape[0] - 1) * (s0 // item) + rows.shape[1]
    return np.lib.stride_tricks.as_strided(rows, shape=(n,), strides=(item,)), s0 // item


def dense_grad(num, idx, rows):
    """The (num, D) weight gradient: rows[k] added into row idx[k], in order.

    NOTE [Embedding gradient buffer]
    The gradient is as big as the table (NCF: four 10000 x 32 tables, 1.28 MB each, every step)
    while the batch touches a third of its rows. np.zeros handed back fresh memory whose zeroing
    and first writes cost ~45 us a table; the gradient is now a pooled buffer (NOTE [Reused
    buffers] in _backend.py: reused once zero_grad() has dropped last step's .grad) zeroed in
    place, then the rows are scatter-added by the same kernel and in the same order as before,
    so the values are unchanged. A column slice of a wider gradient is read in place (its
    rows' starts a fixed stride apart): copying it first cost ~27 us a table (4096 rows of 32
    float32, hot, smoke) and half a MB more of cache."""
    if rows.dtype not in _kpoint._FLOATS:
        return _kpoint.index_add_rows(num, idx, rows)
    acc = reusable_empty((num, rows.shape[1]), rows.dtype)
    idx = np.ascontiguousarray(idx, np.int64)
    flat, stride = _flat_rows(rows)
    zero = acc.dtype.type(0)
    bad = []
    if _on_pool((num + idx.size) * rows.shape[1]):
        res = _k_add_rows_parts.parallel(acc, idx, flat, stride, _pool_bounds(num), zero)
        bad = [int(k) for k in res if k >= 0]
    else:
        def part(lo, hi):  # NOTE [Kernel threads]: parts own disjoint rows of acc
            k = _k_add_rows(acc, idx, flat, stride, lo, hi, zero)
            if k >= 0:
                bad.append(k)

        parallel_range(part, num, max(1, _GRAIN // max(1, rows.shape[1])))
    if bad:
        raise IndexError(f"index_add: index {idx[min(bad)]} is out of range for {num} rows")
    return acc


@numba.njit(nogil=True, cache=True)
def _k_add_row_products(acc, idx, a, a_stride, b, b_stride, lo, hi, zero):
    """_k_add_rows with row k being the product of rows k of ``a`` and ``b`` (each read from a
    flat array at its own row stride): rows lo..hi of acc set to ``zero``, then
    acc[idx[k]] += a_k * b_k in order. The product is rounded to acc's dtype before the add
    (numba contracts nothing into an FMA without fastmath), so the sums are dense_grad's of the
    written product, bit for bit. Returns -1, or the first k whose index is out of range."""
    n, dim = acc.shape
    flat = acc.ravel()
    width = numba.uint64(dim)
    sa, sb = numba.uint64(a_stride), numba.uint64(b_stride)
    for t in range(numba.uint64(lo) * width, numba.uint64(hi) * width):
        flat[t] = zero
    for k in range(idx.shape[0]):
        i = idx[k]
        if i < 0 or i >= n:
            return k
        if i < lo or i >= hi:
            continue
        ka, kb = numba.uint64(k) * sa, numba.uint64(k) * sb
        dst = numba.uint64(i) * width
        for t in range(width):
            flat[dst + t] += a[ka + t] * b[kb + t]
    return -1


def dense_grad_of_product(num, indices, a, b):
    """``dense_grad(num, indices.reshape(-1), a * b)`` without writing the product: the weight
    gradient of an Embedding whose output gradient is a product (NCF's GMF branch: the lookup
    times the other lookup, times the gradient), for a compiled replay (NOTE [Products
    scattered into embedding gradients] in _dynamo/scatter.py). The same numbers as the
    product followed by dense_grad; shapes or dtypes off the common path take that route."""
    idx = np.ascontiguousarray(indices, np.int64).reshape(-1)
    dim = a.shape[-1] if a.ndim else 0
    if a.shape != b.shape or a.dtype != b.dtype or a.dtype not in _kpoint._FLOATS or \
            a.ndim < 1 or dim == 0 or a.size != idx.size * dim or \
            _on_pool((num + idx.size) * dim):
        prod = np.multiply(a, b)
        return dense_grad(num, idx, prod.reshape(-1, prod.shape[-1]))
    acc = reusable_empty((num, dim), a.dtype)  # NOTE [Embedding gradient buffer]
    fa, st_a = _flat_rows(a.reshape(-1, dim))
    fb, st_b = _flat_rows(b.reshape(-1, dim))
    zero = acc.dtype.type(0)
    bad = []

    def part(lo, hi):  # NOTE [Kernel threads]: parts own disjoint rows of acc
        k = _k_add_row_products(acc, idx, fa, st_a, fb, st_b, lo, hi, zero)
        if k >= 0:
            bad.append(k)

    parallel_range(part, num, max(1, _GRAIN // dim))
    if bad:
        raise IndexError(f"index_add: index {idx[min(bad)]} is out of range for {num} rows")
    return acc


def remember(ctx, weight, indices, padding_idx, scale_grad_by_freq):
    """What Embedding's backward reads from its ctx (also set by `gather_cat`)."""
    ctx.indices, ctx.num = indices, weight.shape[0]
    ctx.padding_idx, ctx.scale = padding_idx, scale_grad_by_freq


@numba.njit(nogil=True, cache=True)
def _k_gather_cols(out, weight, idx, col, lo, hi):
    """out[r, col:col + D] = weight[idx[r]] for r in lo..hi; returns -1, or the first r whose
    index is outside [0, len(weight)) (nothing written for it or after it in the range), which
    eager's lookup rejects. Flat unsigned offsets: numba's negative-index check on signed ones
    kept the row copy scalar (80 us against 25 us for 4096 rows of 32 float32, smoke)."""
    n, dim = weight.shape
    flat_out, flat_w = out.ravel(), weight.ravel()
    width = numba.uint64(out.shape[1])
    for r in range(lo, hi):
        i = idx[r]
        if i < 0 or i >= n:
            return r
        src = numba.uint64(i) * numba.uint64(dim)
        dst = numba.uint64(r) * width + numba.uint64(col)
        for t in range(numba.uint64(dim)):
            flat_out[dst + t] = flat_w[src + t]
    return -1


def _gather_parts(flat, tables, n_rows):
    """Rows of the (n_rows, total) ``flat`` from ``tables`` = [(weight, int64 indices, first
    column)], in row parts on the kernel threads; returns the first bad (row, table) or None."""
    dim = sum(w.shape[1] for w, _, _ in tables)
    if _on_pool(n_rows * dim):  # NOTE [Embedding kernels on the one pool]
        bounds = _pool_bounds(n_rows)
        for j, (w, i64, col) in enumerate(tables):
            res = _k_gather_cols_parts.parallel(flat, w, i64, col, bounds)
            rows = [int(r) for r in res if r >= 0]
            if rows:
                return min(rows), j
        return None
    bad = []

    def part(lo, hi):  # NOTE [Kernel threads]: parts write disjoint rows
        for j, (w, i64, col) in enumerate(tables):
            r = _k_gather_cols(flat, w, i64, col, lo, hi)
            if r >= 0:
                bad.append((r, j))
                return

    parallel_range(part, n_rows, max(1, _GRAIN // max(1, dim)))
    return min(bad) if bad else None


def lookup(weight, indices):
    """``np.take(weight, indices, axis=0)``: with the one pool on (NOTE [Embedding kernels on
    the one pool]) or the kernel threads (a compiled replay with EMBER_COMPILE_KERNEL_THREADS)
    a float table's rows are copied in parts; the same values either way. An index out of
    range goes to np.take, which raises."""
    if weight.dtype not in _kpoint._FLOATS or weight.ndim != 2 or not (
            _on_pool(indices.size * weight.shape[1]) or
            num_workers() >= 2 and indices.size * weight.shape[1] >= 2 * _GRAIN):
        return np.take(weight, indices, axis=0)
    out = np.empty(tuple(indices.shape) + (weight.shape[1],), weight.dtype)
    i64 = np.ascontiguousarray(indices, np.int64).reshape(-1)
    if _gather_parts(out.reshape(-1, weight.shape[1]), [(np.ascontiguousarray(weight), i64, 0)],
                     i64.size) is not None:
        return np.take(weight, indices, axis=0)
    return out


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
    tables = []
    for ctx, w, idx, pad, sc in zip(ctxs, weights, indices, padding_idx, scale, strict=True):
        remember(ctx, w, idx, pad, sc)
        tables.append((np.ascontiguousarray(w), np.ascontiguousarray(idx, np.int64).reshape(-1),
                       col))
        col += w.shape[1]
    bad = _gather_parts(flat, tables, flat.shape[0])
    if bad is not None:
        w, i64, _ = tables[bad[1]]
        raise IndexError(f"embedding: index out of range in self: index {i64[bad[0]]} for a "
                         f"weight with {w.shape[0]} rows (num_embeddings).")
    return out
