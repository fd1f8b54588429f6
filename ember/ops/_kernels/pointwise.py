"""Fused elementwise gradient kernels: one pass instead of a chain of NumPy temporaries.

An activation's backward written in NumPy, e.g. ``np.where((x > lo) & (x < hi), g, 0)``, reads
and writes the whole tensor three or four times (two comparisons, an ``&``, a select). These
kernels do it in one pass. They take C-contiguous arrays of one shape and dtype (float32 or
float64); `masked_grad` falls back to NumPy for anything else (broadcast or strided gradients,
other dtypes), so callers need not check.
"""

import numba
import numpy as np

from ... import _backend, _blas_parts, _onepool
from ..._backend import reusable_empty, reusable_like, row_order
from . import split

# NOTE [Big passes in parts]
# A pass over a big array that no GEMM hides - GNMT-S's additive attention works on a
# (32, 20, 20, 256) float32 tensor, 13 MB: the broadcast adds, tanh and its gradient, the sums
# of Add's backward and the matrix-vector backward, ~1-1.3 ms each at two threads, one core -
# runs in two parts on OpenBLAS's worker, which spins beside it anyway (NOTE [Python parts on
# OpenBLAS's threads] in ember/_blas_parts.py). Each part computes whole rows, elements or
# columns exactly as the one call does, so the numbers are the serial ones bit for bit.
# `_blas_parts.on("passes")` switches it; from PASS_PARTS_MIN elements (as split.run: below
# ~2 MB the data is still in the caller's cache and a hand-off costs more than it saves).
PASS_PARTS_MIN = 1 << 20


def run_pass(part, n, work, *args):
    """part(*args, lo, hi) over range(n) - in parts on OpenBLAS's worker when `work` (elements)
    reaches PASS_PARTS_MIN and the "passes" parts are on (NOTE [Big passes in parts]), else in
    one call. `part` must release the GIL and write disjoint memory for disjoint ranges."""
    if work >= PASS_PARTS_MIN and n >= 2 and not _onepool.enabled() and _blas_parts.on("passes"):
        _blas_parts.run_ranges(lambda lo, hi: part(*args, lo, hi), n)
    else:
        part(*args, 0, n)

# NOTE [Pointwise kernels on the one pool]
# The elementwise kernels below are twins (NOTE [One pool] in ember/_onepool.py): their serial
# versions are the kernels as they were, called everywhere the pool is off; with the pool on,
# a big array goes to the parallel version in one call instead of split.run's parts on the
# kernel threads (one pool, never two). Elementwise: the same numbers for any split.
_POOL_MIN = 1 << 16  # elements from which the parallel version runs


@_onepool.twin(min_work=_POOL_MIN)
def _k_masked_grad(g, x, lo, hi, out):
    """out[t] = g[t] where lo < x[t] < hi, else 0 (flat arrays): hardtanh's rule, NaN gives 0.
    A NaN ``hi`` is relu's rule instead: zeroed only where x[t] <= lo, so +inf and NaN pass.
    See NOTE [Gradients at NaN]."""
    if hi != hi:
        for t in numba.prange(out.size):
            out[t] = 0 if x[t] <= lo else g[t]
    else:
        for t in numba.prange(out.size):
            v = x[t]
            out[t] = g[t] if (v > lo and v < hi) else 0


@_onepool.twin(min_work=_POOL_MIN)
def _k_clamp(x, lo, hi, out):
    """out[t] = x[t] clamped to [lo, hi] (flat arrays). Comparisons are false for NaN, so NaN
    passes through, and -0.0 is not below 0, so it stays -0.0: both as in torch.clamp/relu."""
    for t in numba.prange(out.size):
        v = x[t]
        if v < lo:
            v = lo
        elif v > hi:
            v = hi
        out[t] = v


# NOTE [Row-broadcast binary ops]
# NumPy's broadcasting loop is slow when the broadcast axes are outer ones: attention's
# (32,20,1,256) + (32,1,20,256) -> (32,20,20,256), and outer products such as (12800,1) *
# (1,256), run several times slower than the same arithmetic over contiguous rows (figures in
# benchmarks/RESULTS.md, "Figures behind the design notes"). These kernels see the output as
# rows of its last axis. Each operand is a flat view of its memory plus, for every output row,
# the offset where its row starts there: its leading
# axes may be permuted or broadcast (attention's operands are permuted projections), only its
# last axis must be contiguous, or of length 1 (one number per row: an outer product).
# Three kernels rather than one with an op argument, so that each inner loop vectorizes.


@numba.njit(nogil=True, cache=True)
def _k_rows_add(a, ia, la, b, ib, lb, out):
    for r in range(out.shape[0]):
        x, y, o = a[ia[r]:ia[r] + la], b[ib[r]:ib[r] + lb], out[r]
        if la == 1:
            s = x[0]
            for h in range(o.size):
                o[h] = s + y[h]
        elif lb == 1:
            s = y[0]
            for h in range(o.size):
                o[h] = x[h] + s
        else:
            for h in range(o.size):
                o[h] = x[h] + y[h]


@numba.njit(nogil=True, cache=True)
def _k_rows_sub(a, ia, la, b, ib, lb, out):
    for r in range(out.shape[0]):
        x, y, o = a[ia[r]:ia[r] + la], b[ib[r]:ib[r] + lb], out[r]
        if la == 1:
            s = x[0]
            for h in range(o.size):
                o[h] = s - y[h]
        elif lb == 1:
            s = y[0]
            for h in range(o.size):
                o[h] = x[h] - s
        else:
            for h in range(o.size):
                o[h] = x[h] - y[h]


@numba.njit(nogil=True, cache=True)
def _k_rows_mul(a, ia, la, b, ib, lb, out):
    for r in range(out.shape[0]):
        x, y, o = a[ia[r]:ia[r] + la], b[ib[r]:ib[r] + lb], out[r]
        if la == 1:
            s = x[0]
            for h in range(o.size):
                o[h] = s * y[h]
        elif lb == 1:
            s = y[0]
            for h in range(o.size):
                o[h] = x[h] * s
        else:
            for h in range(o.size):
                o[h] = x[h] * y[h]


@_onepool.twin(min_work=_POOL_MIN)
def _k_tanh_grad(g, y, out):
    for t in numba.prange(out.size):
        out[t] = g[t] * (1 - y[t] * y[t])


@_onepool.twin(min_work=_POOL_MIN)
def _k_sigmoid_grad(g, y, out):
    for t in numba.prange(out.size):
        out[t] = g[t] * (y[t] * (1 - y[t]))


@numba.njit(nogil=True, cache=True)
def _k_index_add_rows(acc, index, rows):
    """acc[index[k], :] += rows[k, :] for every k, in order (the adjoint of a row gather).

    Returns -1, or the first k whose index is outside [0, len(acc)) (nothing is written for it
    or after it): numba does not check bounds, and the index is user data.
    """
    dim = acc.shape[1]
    n = acc.shape[0]
    for k in range(index.shape[0]):
        i = index[k]
        if i < 0 or i >= n:
            return k
        dst = acc[i]
        src = rows[k]
        for t in range(dim):
            dst[t] += src[t]
    return -1


_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _fusable(*arrays):
    first = arrays[0]
    return all(a.dtype == first.dtype and a.shape == first.shape and a.flags.c_contiguous
               for a in arrays) and first.dtype in _FLOATS


def _flat_views(*arrays):
    """Flat views of same-shape, same-dtype arrays that share one dense memory layout (C order,
    or any permutation of it, as elementwise results of permuted inputs have), element t of
    each being the same logical element; None if there are none."""
    first = arrays[0]
    if first.dtype not in _FLOATS:
        return None
    if _fusable(*arrays):
        return [a.reshape(-1) for a in arrays]
    if not all(a.dtype == first.dtype and a.shape == first.shape and a.strides == first.strides
               for a in arrays):
        return None
    flats = [a.ravel(order="K") for a in arrays]
    if any(f.base is None for f in flats):  # ravel copied: the layout is not dense
        return None
    return flats


def _like(a):
    """An uninitialised array with a's shape, dtype and (dense) memory layout, so that its
    ``ravel(order="K")`` is a view matching a's."""
    return np.empty_like(a, order="K")


_ROW_KERNELS = {"add": _k_rows_add, "sub": _k_rows_sub, "mul": _k_rows_mul}


def _rows_part(kernel, a, ia, la, b, ib, lb, out, lo, hi):
    kernel(a, ia[lo:hi], la, b, ib[lo:hi], lb, out[lo:hi])
# Outputs smaller than this (elements) or with shorter rows stay with NumPy: its loop is as
# fast there, and the row offsets would cost more than they save.
_ROWS_MIN_SIZE = 1 << 15
_ROWS_MIN_LENGTH = 16


def _rows(a, ndim, out_lead):
    """Operand a as (flat view of its memory, offset of its row for every output row, row
    length), broadcast to the leading output shape out_lead; None unless its last axis is
    contiguous (or of length 1) and its strides are non-negative multiples of the item size."""
    item = a.itemsize
    shape = (1,) * (ndim - a.ndim) + a.shape
    strides = (0,) * (ndim - a.ndim) + a.strides
    if (shape[-1] > 1 and strides[-1] != item) or any(st < 0 or st % item for st in strides):
        return None
    span = 1 + sum((n - 1) * st for n, st in zip(shape, strides, strict=True)) // item
    flat = np.lib.stride_tricks.as_strided(a, shape=(span,), strides=(item,))
    offsets = np.zeros((1,) * (ndim - 1), np.int64)
    for axis in range(ndim - 1):
        steps = np.arange(shape[axis], dtype=np.int64) * (strides[axis] // item)
        offsets = offsets + steps.reshape((-1,) + (1,) * (ndim - 2 - axis))
    return flat, np.ascontiguousarray(np.broadcast_to(offsets, out_lead)).reshape(-1), shape[-1]


def broadcast_binary(op, a, b):
    """a <op> b ("add", "sub" or "mul") for broadcasting float arrays by rows (NOTE
    [Row-broadcast binary ops]), or None when that does not apply (same shapes, other dtypes,
    rows that are not contiguous, a broadcast last axis of both, small outputs): then NumPy."""
    if (not isinstance(a, np.ndarray) or not isinstance(b, np.ndarray)
            or a.shape == b.shape or a.dtype != b.dtype or a.dtype not in _FLOATS
            or a.size == 1 or b.size == 1):
        # one number against an array (attention's scale): NumPy's scalar loop is already
        # contiguous, and building the row offsets cost more than the arithmetic (x * 0.125 on
        # (8, 4, 64, 64) float32: 73 -> 13 us, one thread; the same float operations)
        return None
    # the ValueError NumPy's own loop would raise; np.broadcast over the arrays takes 0.4 us,
    # np.broadcast_shapes 1.6 (it builds arrays of its own): per-op overhead of small operands
    both = np.broadcast(a, b)
    shape = both.shape
    length = shape[-1] if shape else 0
    if len(shape) < 2 or length < _ROWS_MIN_LENGTH or both.size < _ROWS_MIN_SIZE:
        return None
    # an operand of the output's shape that is dense in a permuted order (the result of
    # elementwise ops on permuted views) gives the output its layout, as NumPy's loop does: work
    # in the frame where it is C-contiguous, so that it is read and the output written in order
    full = a if a.shape == shape else b if b.shape == shape else None
    order = row_order(full) if full is not None else tuple(range(len(shape)))
    if order != tuple(range(len(shape))):
        a = np.broadcast_to(a, shape).transpose(order)
        b = np.broadcast_to(b, shape).transpose(order)
        shape = a.shape
    ra, rb = _rows(a, len(shape), shape[:-1]), _rows(b, len(shape), shape[:-1])
    if ra is None or rb is None or ra[2] == rb[2] == 1:
        return None
    out = reusable_empty(shape, a.dtype)  # NOTE [Reused buffers] in _backend.py
    rows = out.reshape(-1, length)
    run_pass(_rows_part, rows.shape[0], out.size, _ROW_KERNELS[op], *ra, *rb, rows)
    if order == tuple(range(len(shape))):
        return out  # the pooled array itself, not a view of it
    return out.transpose(np.argsort(order))


_BOUNDS = {}  # (dtype, lo, hi) -> the bounds as scalars of that dtype (small-array paths)


def _typed_bounds(dtype, lo, hi):
    """lo, hi as NumPy scalars of ``dtype`` (float32 bounds keep a float32 loop float32),
    remembered: making them costs ~0.6 us of a ~2 us small relu."""
    key = (dtype, lo, hi)
    got = _BOUNDS.get(key)
    if got is None:
        if len(_BOUNDS) > 64:  # NaN bounds never match a key: keep the table small
            _BOUNDS.clear()
        got = _BOUNDS[key] = (dtype.type(lo), dtype.type(_no_bound(hi)))
    return got


def _small_out(a):
    """An uninitialised C-contiguous array like the C-contiguous ``a``: from the reuse pool
    when it is big enough to be pooled (NOTE [Reused buffers] in _backend.py; the threshold
    read from the module, so a test that pools small arrays reaches these too)."""
    if a.nbytes < _backend._REUSE_MIN_BYTES:
        return np.empty(a.shape, a.dtype)
    return reusable_empty(a.shape, a.dtype)


def clamp(x, lo, hi):
    """x clamped to [lo, hi] (either may be +-inf) in a new array: relu, relu6 and hardtanh.

    NumPy's ``np.maximum(x, 0)`` / ``np.clip`` take ~4x as long as this one pass on float32
    (AMD EPYC, (8,64,32,32): 194 vs 47 us), and ``np.maximum`` turns -0.0 into 0.0 where torch
    keeps -0.0. Falls back to ``np.clip`` for other dtypes and non-dense layouts.
    """
    if (x.dtype in _FLOATS and x.flags.c_contiguous and x.size < split._MIN_WORK
            and (x.size < _k_clamp.min_work or not _onepool.enabled())):
        # a small dense array (a small batch's activations): the kernel straight away, with
        # none of the layout and threading steps below (~2 us of a 4 us relu)
        out = _small_out(x)
        t_lo, t_hi = _typed_bounds(x.dtype, lo, hi)
        _k_clamp.serial(x.reshape(-1), t_lo, t_hi, out.reshape(-1))
        return out
    flats = _flat_views(x)
    if flats is None:
        return np.clip(x, lo, hi, out=reusable_like(x))
    out = reusable_empty(x.shape, x.dtype) if x.flags.c_contiguous else _like(x)
    typed = x.dtype.type  # bounds in the array's dtype: float32 stays float32 in the loop
    flat_out = out.ravel(order="K")
    if _onepool.enabled():  # NOTE [Pointwise kernels on the one pool]
        _k_clamp.pick(flat_out.size)(flats[0], typed(lo), typed(hi), flat_out)
        return out
    # in parts on the kernel threads when the pool is on (NOTE [Two halves on two threads])
    split.run(_clamp_part, flat_out.size, flat_out.size, flats[0], typed(lo), typed(hi), flat_out,
              family="pointwise")
    return out


# NOTE [Gradients at NaN]
# torch 2.13's CPU kernels, checked on tensors of 64 elements: relu's gradient is zeroed where
# its output is <= 0 and passes everywhere else, +inf and NaN included (one rule in every code
# path). hardtanh/relu6 pass it strictly inside (min_val, max_val): 0 at the bounds, beyond
# them and at NaN. (torch's scalar loop, which only handles a tensor's last few elements or a
# tensor shorter than one SIMD vector, passes it at NaN instead; the vector loop that computes
# all the rest gives 0, and ember follows that.) Both are selects: an inf or NaN incoming
# gradient where the mask is off gives 0.
def _no_bound(hi):
    # a NaN hi selects relu's rule in _k_masked_grad (no upper bound; NaN x passes)
    return np.nan if hi is None else hi


def masked_grad(g, x, lo, hi):
    """The gradient g passed where lo < x < hi (strictly) and 0 elsewhere (NaN x too): the
    derivative of hardtanh and relu6. ``hi=None``: relu's derivative, g zeroed only where
    x <= lo (passes at +inf and NaN). See NOTE [Gradients at NaN]."""
    if (g.dtype in _FLOATS and g.dtype == x.dtype and g.shape == x.shape
            and g.size < split._MIN_WORK and g.flags.c_contiguous and x.flags.c_contiguous
            and (g.size < _k_masked_grad.min_work or not _onepool.enabled())):
        # small and dense: the kernel straight away, as in clamp
        out = _small_out(g)
        t_lo, t_hi = _typed_bounds(x.dtype, lo, hi)
        _k_masked_grad.serial(g.reshape(-1), x.reshape(-1), t_lo, t_hi, out.reshape(-1))
        return out
    if not _fusable(g, x):
        if not (g.shape == x.shape and g.dtype == x.dtype and g.dtype in _FLOATS):
            if hi is None:
                return np.where(x <= lo, np.zeros((), g.dtype), g)
            return np.where((x > lo) & (x < hi), g, np.zeros((), g.dtype))
        # strided (a column slice of a concatenation's gradient, as NCF's two branches
        # receive): one dense copy and the kernel beat NumPy's four strided passes ~7x
        g = np.ascontiguousarray(g)
        x = np.ascontiguousarray(x)
    out = reusable_empty(g.shape, g.dtype)  # NOTE [Reused buffers] in _backend.py
    typed = x.dtype.type  # bounds in the array's dtype: float32 compares stay float32
    if _onepool.enabled():  # NOTE [Pointwise kernels on the one pool]
        _k_masked_grad.pick(out.size)(g.reshape(-1), x.reshape(-1), typed(lo),
                                      typed(_no_bound(hi)), out.reshape(-1))
        return out
    # in parts on the kernel threads when the pool is on (NOTE [Two halves on two threads])
    split.run(_masked_grad_part, out.size, out.size, g.reshape(-1), x.reshape(-1), typed(lo),
              typed(_no_bound(hi)), out.reshape(-1), family="pointwise")
    return out


def _masked_grad_part(g, x, lo, hi, out, start, stop):
    _k_masked_grad.serial(g[start:stop], x[start:stop], lo, hi, out[start:stop])


def _clamp_part(x, lo, hi, out, start, stop):
    _k_clamp.serial(x[start:stop], lo, hi, out[start:stop])


def _fused(kernel, g, y):
    """kernel(g, y, out) on the flat memory when g and y share a dense layout, else None."""
    flats = _flat_views(g, y)
    if flats is None:
        return None
    out = reusable_like(g)  # NOTE [Reused buffers] in _backend.py
    if out is None:
        out = _like(g)
    flat = out.ravel(order="K")
    if _onepool.enabled():  # NOTE [Pointwise kernels on the one pool]
        kernel.pick(out.size)(*flats, flat)
    else:  # NOTE [Big passes in parts]
        run_pass(_flat_part, flat.size, flat.size, kernel.serial, flats, flat)
    return out


def _flat_part(kernel, flats, out, lo, hi):
    kernel(*(f[lo:hi] for f in flats), out[lo:hi])


def tanh(x):
    """np.tanh(x); a big C-contiguous float array in parts (NOTE [Big passes in parts]):
    NumPy's loop computes each element alone, so any split gives the same numbers."""
    if x.dtype not in _FLOATS or x.size < PASS_PARTS_MIN or not x.flags.c_contiguous:
        return np.tanh(x)
    out = np.empty_like(x)
    src, dst = x.reshape(-1), out.reshape(-1)
    run_pass(_tanh_part, src.size, src.size, src, dst)
    return out


def _tanh_part(src, dst, lo, hi):
    np.tanh(src[lo:hi], out=dst[lo:hi])


def tanh_grad(g, y):
    """g * (1 - y^2): the gradient of tanh from its output y."""
    out = _fused(_k_tanh_grad, g, y)
    if out is not None:
        return out
    if g.dtype != y.dtype:
        return g * (1 - y * y)
    # different layouts: three passes, but one temporary (not three)
    out = np.multiply(y, y)
    np.subtract(1, out, out=out)
    np.multiply(g, out, out=out)
    return out


def sigmoid_grad(g, y):
    """g * y * (1 - y): the gradient of sigmoid from its output y."""
    out = _fused(_k_sigmoid_grad, g, y)
    if out is not None:
        return out
    if g.dtype != y.dtype:
        return g * (y * (1 - y))
    out = np.subtract(1, y)
    np.multiply(y, out, out=out)
    np.multiply(g, out, out=out)
    return out


def index_add_rows(num_rows, index, rows):
    """A (num_rows, D) array with rows[k] added into row index[k]; like ``np.add.at`` on a zero
    array (same summation order), without its per-element overhead."""
    acc = np.zeros((num_rows, rows.shape[1]), rows.dtype)
    if rows.dtype in _FLOATS:
        index = np.ascontiguousarray(index, np.int64)
        bad = _k_index_add_rows(acc, index, np.ascontiguousarray(rows))
        if bad >= 0:
            raise IndexError(f"index_add: index {index[bad]} is out of range for {num_rows} "
                             "rows")
    else:
        np.add.at(acc, index, rows)
    return acc


@_onepool.twin(min_work=1 << 16)
def _k_add_row(y, b):
    """y (M, N) += b (N,), row by row (NOTE [One pool]: a twin kernel, parallel over rows)."""
    for r in numba.prange(y.shape[0]):
        row = y[r]
        for c in range(row.size):
            row[c] += b[c]


_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


# From this many elements `add_row` runs the kernel: NumPy's broadcasting in-place add took
# 2-2.7x as long (one thread, float32: (1024, 1024) 163 vs 69 us, (1024, 256) 40 vs 21 us)
_ADD_ROW_MIN = 1 << 10


def add_row(y, b):
    """y += b in place for y (..., N) and b (N,) (a Linear's bias): for a big C-contiguous float
    y the twin kernel (its parallel version with the one pool on; the same sums as NumPy's),
    NumPy's in-place add otherwise. Returns y."""
    if (y.size >= _ADD_ROW_MIN and y.flags.c_contiguous
            and b.ndim == 1 and y.ndim >= 1 and b.shape[0] == y.shape[-1]
            and y.dtype in _FLOATS and b.dtype == y.dtype):
        _k_add_row.pick(y.size)(y.reshape(-1, y.shape[-1]), b)
        return y
    y += b
    return y
