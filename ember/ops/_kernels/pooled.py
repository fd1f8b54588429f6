"""Twin kernels (NOTE [One pool] in ember/_onepool.py) for generic ops that big elementwise work
reaches: the sums that undo the broadcasts of GNMT-S's attention scores (B, T, S, H).

With the pool on, NumPy's reductions still run on one core; these run the same arithmetic on
the pool. Each helper returns None where it does not apply (pool off, too few elements, other
dtypes or layouts) and the caller keeps its NumPy call, so nothing changes with the pool off.
Not tanh: vmath's tanh runs at ~2/3 of NumPy's SIMD tanh on one core (3.3M float32 1.78 vs
1.18 ms), so two threads would gain ~20% of it and change its last bits.
"""
import numba
import numpy as np

from ... import _onepool

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
# a reduction reads each element once: memory-bound, worth a launch from a few 100k elements
SUM_MIN = 1 << 17


@numba.njit(nogil=True, cache=True)
def sum_mid_span(x, out, o0, o1, i0, i1):
    """out[o, i] = x[o, 0, i] + x[o, 1, i] + ... in that order (NumPy's order for a reduction
    over an axis that is not the innermost) for o in [o0, o1), i in [i0, i1)."""
    for o in range(o0, o1):
        acc = out[o, i0:i1]
        first = x[o, 0, i0:i1]
        for j in range(i1 - i0):
            acc[j] = first[j]
        for m in range(1, x.shape[1]):
            src = x[o, m, i0:i1]
            for j in range(i1 - i0):
                acc[j] += src[j]


@_onepool.twin(min_work=SUM_MIN)
def _k_sum_mid(x, out, blocks):
    """sum_mid_span over all of x (n_o, n_m, n_i), `blocks` spans of o (or of i when there are
    fewer o than blocks) in parallel: every output element is summed the same way for any
    split."""
    n_o, n_i = x.shape[0], x.shape[2]
    for b in numba.prange(blocks):
        if n_o >= blocks:
            sum_mid_span(x, out, n_o * b // blocks, n_o * (b + 1) // blocks, 0, n_i)
        else:
            sum_mid_span(x, out, 0, n_o, n_i * b // blocks, n_i * (b + 1) // blocks)


def sum_dims(x, dims):
    """x summed over `dims` (sorted, a contiguous run that leaves the last axis) in x's dtype,
    as an (outer, inner) array, on the pool; None where that does not apply."""
    if (x.size < SUM_MIN or x.dtype not in _FLOATS or not x.flags.c_contiguous or not dims
            or dims[-1] >= x.ndim - 1 or dims[-1] - dims[0] != len(dims) - 1):
        return None
    kernel = _k_sum_mid.pick(x.size)
    if kernel is not _k_sum_mid.parallel:
        return None
    shape = x.shape
    n_o = int(np.prod(shape[:dims[0]], dtype=np.int64))
    n_i = int(np.prod(shape[dims[-1] + 1:], dtype=np.int64))
    x3 = x.reshape(n_o, -1, n_i)
    out = np.empty((n_o, n_i), x.dtype)
    kernel(x3, out, numba.get_num_threads())
    return out
