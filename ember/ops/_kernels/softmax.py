"""Fused row softmax / log-softmax, forward and backward, on (M, K) C-contiguous float arrays.

Each row is read once for its max and once more for everything else, while it sits in cache:
the exponentials are `vmath.vexp` (vectorised; numba has no SVML here), the sums go through
`vmath.row_sum` (see NOTE [Fast-math and the range reduction] in vmath.py). NumPy needs a pass
per step (max, subtract, exp, sum, divide), each over the whole (M, K) array.

Stability: exponents are taken of x - rowmax <= 0. Rows holding NaN or +inf come out all NaN,
and an all -inf row gives 0/0 = NaN (softmax) and -inf - -inf = NaN (log-softmax): torch's
results in each case.
"""

import math

import numba

from ... import _onepool
from .vmath import row_dot, row_max, row_sum, vexp

# The row kernels are twins (NOTE [One pool] in ember/_onepool.py): serial as they were, and
# parallel over rows with the pool on from _POOL_MIN elements (each row one thread's: the same
# numbers for any split).
_POOL_MIN = 1 << 16


@numba.njit(inline="always")
def _shift(row):
    # an all -inf row is shifted by 0 (not by -inf, which would give -inf - -inf = NaN inside
    # the exponent); a +inf or NaN max is kept, so that such rows come out all NaN as in torch
    m = row_max(row)
    return m if m != -math.inf else row.dtype.type(0)


@_onepool.twin(min_work=_POOL_MIN, error_model="numpy")
def _k_softmax_fwd(x, out):
    for r in numba.prange(x.shape[0]):
        row, dst = x[r], out[r]
        m = _shift(row)
        for k in range(row.size):
            dst[k] = vexp(row[k] - m)
        total = row_sum(dst)
        for k in range(row.size):
            dst[k] = dst[k] / total


@_onepool.twin(min_work=_POOL_MIN, error_model="numpy")
def _k_log_softmax_fwd(x, out):
    # out = (x - m) - log(sum(exp(x - m))): subtracting from the shifted values keeps the result
    # exact for large x (x - logsumexp(x) would cancel)
    for r in numba.prange(x.shape[0]):
        row, dst = x[r], out[r]
        m = _shift(row)
        for k in range(row.size):
            dst[k] = vexp(row[k] - m)
        lse = math.log(row_sum(dst))
        for k in range(row.size):
            dst[k] = (row[k] - m) - lse


@_onepool.twin(min_work=_POOL_MIN, error_model="numpy")
def _k_softmax_bwd(g, y, out):
    # d softmax: y * (g - sum(g * y))
    for r in numba.prange(g.shape[0]):
        gr, yr, dst = g[r], y[r], out[r]
        s = row_dot(gr, yr)
        for k in range(gr.size):
            dst[k] = yr[k] * (gr[k] - s)


@_onepool.twin(min_work=_POOL_MIN, error_model="numpy")
def _k_log_softmax_bwd(g, y, out):
    # d log_softmax: g - softmax * sum(g), softmax = exp(y)
    for r in numba.prange(g.shape[0]):
        gr, yr, dst = g[r], y[r], out[r]
        s = row_sum(gr)
        for k in range(gr.size):
            dst[k] = gr[k] - vexp(yr[k]) * s


def softmax_rows(x2d, out, log=False):
    """softmax (or log-softmax) of each row of x2d (M, K) into out; both C-contiguous, one
    float dtype, K >= 1."""
    (_k_log_softmax_fwd if log else _k_softmax_fwd).pick(x2d.size)(x2d, out)
    return out


def softmax_rows_backward(g2d, y2d, out, log=False):
    """The gradient wrt the input rows, given the output rows y2d and their gradient g2d."""
    (_k_log_softmax_bwd if log else _k_softmax_bwd).pick(g2d.size)(g2d, y2d, out)
    return out
