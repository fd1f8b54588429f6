"""A small float32 Linear's products by MKL's sgemm, called from numba: NOTE [A small Linear on
MKL] in ember/ops/nn/linear.py.
"""

import numba
import numpy as np

from .attention import _gemm_rm


@numba.njit(nogil=True, cache=True)
def _scratch():
    """alpha = 1, beta = 0 and room for the Fortran call's flags and integer arguments."""
    scal = np.empty(2, np.float32)
    scal[0] = 1.0
    scal[1] = 0.0
    return scal, np.empty(2, np.uint8), np.empty(6, np.int32)


@numba.njit(nogil=True, cache=True)
def linear_forward(f, x, w, bias, has_bias, out):
    """out = x @ w^T (+ bias) for C-contiguous float32 x (m, k), w (n, k), bias (n,), out (m, n);
    f is the address of a Fortran sgemm. The bias is added to the finished product (as the
    general path adds it)."""
    scal, flags, args = _scratch()
    m, k = x.shape
    n = w.shape[0]
    _gemm_rm(f, scal, 4, flags, args, False, True, x.ctypes.data, k, w.ctypes.data, k,
             out.ctypes.data, n, m, n, k)
    if has_bias:
        for i in range(m):
            for j in range(n):
                out[i, j] += bias[j]


@numba.njit(nogil=True, cache=True)
def linear_backward(f, g, x, w, dx, dw, db, need_x, need_w, need_b):
    """dx = g @ w, dw = g^T @ x and db = the column sums of g, each when asked, for C-contiguous
    float32 g (m, n), x (m, k), w (n, k) and outputs shaped like x, w and (n,)."""
    scal, flags, args = _scratch()
    m, n = g.shape
    k = w.shape[1]
    if need_x:
        _gemm_rm(f, scal, 4, flags, args, False, False, g.ctypes.data, n, w.ctypes.data, k,
                 dx.ctypes.data, k, m, k, n)
    if need_w:
        _gemm_rm(f, scal, 4, flags, args, True, False, g.ctypes.data, n, x.ctypes.data, k,
                 dw.ctypes.data, k, n, k, m)
    if need_b:
        db[:] = 0.0
        for i in range(m):  # row by row, in the order np.add.reduce(g, axis=0) adds them
            for j in range(n):
                db[j] += g[i, j]
