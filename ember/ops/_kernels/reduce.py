"""One-pass backward sums over big arrays: the sums that undo a broadcast, for a broadcasting
add (NOTE [Broadcast add gradients in one pass]), and both gradients of a matrix-vector product
(NOTE [Matrix-vector backward in one pass]).

NOTE [Broadcast add gradients in one pass]
Additive attention adds a query and a key broadcast against each other, q (B, T, 1, H) +
k (B, 1, S, H) -> (B, T, S, H), so the add's backward reduces one big gradient twice: over S
for q and over T for k, two reads of B*T*S*H elements (3.3M, 13 MB for GNMT-S). `sum_to_both`
reads it once and produces both sums. Each output element is still summed in NumPy's order
for a reduction over one axis that is not the innermost (the first term, then the others added
one after the other), so the results are NumPy's `sum(axis, keepdims=True)` bit for bit. An
add whose one operand alone is broadcast over a run of leading or middle axes (a bias row)
gets the same one-pass sum. Anything else (several reduced runs per operand, a reduced last
axis, short rows, other dtypes, a non-contiguous gradient) returns None and the caller keeps
`sum_to`; so does everything while the one pool is on, where `sum_to`'s reductions run in
parallel (ops/_kernels/pooled.py).
Measure: `python benchmarks/ab.py gnmt "import ember.ops.elementwise as E; E._FAST_SUMS[0] =
False" "import ember.ops.elementwise as E; E._FAST_SUMS[0] = True"`.
"""
import numba
import numpy as np

from ... import _onepool
from ..._backend import reusable_empty
from . import pooled
from .pointwise import run_pass

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
# Below this many elements NumPy's two reductions cost less than the call's own bookkeeping;
# rows shorter than this do not fill a vector register.
SUM_MIN = 1 << 15
ROW_MIN = 16


@numba.njit(nogil=True, cache=True)
def _k_sum_pair(g, over_n, over_m):
    """over_n[p, m] = sum over n of g[p, m, n], over_m[p, n] = sum over m of g[p, m, n] (rows
    of the last axis), both in NumPy's order, reading g once."""
    n_p, n_m, n_n, _ = g.shape
    for p in range(n_p):
        for m in range(n_m):
            acc_n = over_n[p, m]
            for n in range(n_n):
                row, acc_m = g[p, m, n], over_m[p, n]
                if n == 0 and m == 0:
                    for i in range(row.size):
                        acc_n[i] = row[i]
                        acc_m[i] = row[i]
                elif n == 0:
                    for i in range(row.size):
                        acc_n[i] = row[i]
                        acc_m[i] += row[i]
                elif m == 0:
                    for i in range(row.size):
                        acc_n[i] += row[i]
                        acc_m[i] = row[i]
                else:
                    for i in range(row.size):
                        acc_n[i] += row[i]
                        acc_m[i] += row[i]


def _sum_pair_part(g, over_n, over_m, lo, hi):
    _k_sum_pair(g[lo:hi], over_n[lo:hi], over_m[lo:hi])


def _sum_mid_outer(x, out, lo, hi):
    pooled.sum_mid_span(x, out, lo, hi, 0, x.shape[2])


def _reduced_run(gshape, shape):
    """The axes of gshape that broadcasting `shape` (padded with leading 1s) reduces, as
    (first, stop) of one contiguous run that leaves the last axis; (0, 0) when none; None for
    anything else."""
    pad = (1,) * (len(gshape) - len(shape)) + tuple(shape)
    axes = [i for i, (n, s) in enumerate(zip(gshape, pad, strict=True)) if s == 1 and n != 1]
    if not axes:
        return 0, 0
    if axes[-1] - axes[0] != len(axes) - 1 or axes[-1] == len(gshape) - 1:
        return None
    return axes[0], axes[-1] + 1


def _prod(dims):
    return int(np.prod(dims, dtype=np.int64))


def sum_to_both(g, sa, sb):
    """(g summed to shape sa, g summed to shape sb) for the backward of a broadcasting add,
    None for an operand that needs no sum (its gradient is g itself); None altogether when
    neither needs one or the fast sums do not apply (NOTE [Broadcast add gradients in one
    pass])."""
    if (g.dtype not in _FLOATS or g.size < SUM_MIN or not g.flags.c_contiguous
            or g.ndim < 2 or g.shape[-1] < ROW_MIN or _onepool.enabled()):
        return None
    ra, rb = _reduced_run(g.shape, sa), _reduced_run(g.shape, sb)
    if ra is None or rb is None or ra == rb == (0, 0):
        return None
    shape = g.shape
    if ra == (0, 0) or rb == (0, 0):  # one operand broadcast over one run of axes
        first, stop = ra if rb == (0, 0) else rb
        g3 = g.reshape(_prod(shape[:first]), _prod(shape[first:stop]), -1)
        out = np.empty((g3.shape[0], g3.shape[2]), g.dtype)
        # NumPy's order; in parts of whole outer blocks (NOTE [Big passes in parts] in
        # pointwise.py). Not in column spans: for one block (GNMT-S's attention bias, (1, 12800,
        # 256)) two parts reading half rows each took longer than one call
        run_pass(_sum_mid_outer, g3.shape[0], g.size, g3, out)
        out = out.reshape(sa if rb == (0, 0) else sb)
        return (out, None) if rb == (0, 0) else (None, out)
    # both reduced: two single axes, next to each other (q[:, :, None] + k[:, None])
    if ra[1] - ra[0] != 1 or rb[1] - rb[0] != 1 or abs(ra[0] - rb[0]) != 1:
        return None
    m_axis = min(ra[0], rb[0])
    g4 = g.reshape(_prod(shape[:m_axis]), shape[m_axis], shape[m_axis + 1], -1)
    over_n = np.empty((g4.shape[0], g4.shape[1], g4.shape[3]), g.dtype)
    over_m = np.empty((g4.shape[0], g4.shape[2], g4.shape[3]), g.dtype)
    run_pass(_sum_pair_part, g4.shape[0], g.size, g4, over_n, over_m)  # NOTE [Big passes
    # the operand reducing the later axis gets the sums over it
    a_later = ra[0] > rb[0]
    ga = (over_n if a_later else over_m).reshape(sa)
    gb = (over_m if a_later else over_n).reshape(sb)
    return ga, gb


# NOTE [Matrix-vector backward in one pass]
# The backward of y = A @ v for a big A (R, K) and a vector v (K, as a (K, 1) column): the
# gradient of A is the outer product g v^T, written whole, and the gradient of v is A^T g, a
# read of all of A. Two calls stream the array twice, each alone on one core; one loop that
# reads a row of A while it writes the same row of the outer product keeps both streams in
# flight: GNMT-S's attention scores, (12800, 256) float32 with cold caches, 2.2 -> 1.2-1.4 ms
# (busy machine, thread CPU). A^T g is accumulated in float64 over two fixed halves of the
# rows, which are added and rounded once (BLAS's GEMV accumulated in the input dtype): the
# halves can run in parts on OpenBLAS's worker with the same sums (NOTE [Big passes in parts]
# in pointwise.py; column spans in parts, each reading half of every row, took twice as long
# as one call).
# Measure: `python benchmarks/ab.py gnmt "import ember.ops.products as P; P._FUSED_MV_BWD[0] =
# False" "import ember.ops.products as P; P._FUSED_MV_BWD[0] = True"`.


@numba.njit(nogil=True, cache=True)
def _k_mv_bwd(a, g, v, ga, acc, lo, hi):
    """ga[r] = g[r] * v, and acc[h] = the sum of a[r] * g[r] (float64) over the rows r of
    block h, for the blocks h in [lo, hi) of a (R, K) cut into len(acc) fixed row blocks
    (g (R,), v (K,)); each row of a is read once."""
    for h in range(lo, hi):
        sums = acc[h]
        sums[:] = 0.0
        for r in range(a.shape[0] * h // acc.shape[0], a.shape[0] * (h + 1) // acc.shape[0]):
            s = g[r]
            row, out = a[r], ga[r]
            for i in range(v.size):
                out[i] = s * v[i]
                sums[i] += np.float64(row[i] * s)


def mv_backward(a, g, v):
    """(g v^T, a^T g) for a C-contiguous (..., K), g of a's leading shape (any layout) and v
    (K,) (NOTE [Matrix-vector backward in one pass]); None where it does not apply (other
    dtypes, small or non-contiguous a, the one pool on)."""
    if (a.dtype not in _FLOATS or g.dtype != a.dtype or v.dtype != a.dtype
            or a.size < SUM_MIN or not a.flags.c_contiguous or a.shape[-1] < ROW_MIN
            or _onepool.enabled()):
        return None
    k = a.shape[-1]
    a2 = a.reshape(-1, k)
    ga = reusable_empty(a.shape, a.dtype)  # NOTE [Reused buffers] in _backend.py
    gv = np.empty(k, a.dtype)
    # two fixed halves of the rows, in parts or one after the other (NOTE [Big passes in
    # parts] in pointwise.py): the same sums either way
    acc = np.empty((2, k), np.float64)
    run_pass(_k_mv_bwd, 2, a.size, a2, np.ascontiguousarray(g).reshape(-1),
             np.ascontiguousarray(v), ga.reshape(-1, k), acc)
    np.add(acc[0], acc[1], out=gv, casting="unsafe")
    return ga, gv


@numba.njit(nogil=True, cache=True)
def column_sums(g, out):
    """out[j] = the sum of column j of a C-contiguous 2-D g, row after row from the first: NumPy's
    order for ``np.add.reduce(g, axis=0)``, vectorised along the row (a Linear's bias gradient;
    NOTE [MKL's parts without the GIL] calls it from a part)."""
    rows, cols = g.shape
    out[:] = 0
    for i in range(rows):
        for j in range(cols):
            out[j] += g[i, j]
