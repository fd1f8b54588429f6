"""MKL's two-part products without the GIL: NOTE [MKL's parts without the GIL].

NOTE [MKL's parts without the GIL]
A product of NOTE [MKL's sgemm] (ember/_mkl.py) in two halves, and a Linear's two gradients at
once (NOTE [Linear's two gradients at once] in ops/nn/linear.py), ran as Python parts on
OpenBLAS's threads (`run_ranges`): each part takes the GIL for the few Python lines that slice
its operands and call MKL. The worker's part could not start until the caller's had released
the GIL inside its MKL call, and the caller could not return until the worker's Python had
released it again: in a GPT-S training step the worker's part started 45-80 us after the
caller's, ~2.7 ms a step in all (benchmarks/parts_wait.py, RESULTS.md, twenty-eighth session).
Here each part is a numba cfunc reading the operands' addresses, leading dimensions and sizes
from an int64 argument array made before the hand-off; it calls MKL's Fortran sgemm by address
(as the one-row and small-Linear kernels do) and adds the bias, and never touches Python. Each
part has its own scratch slots for the Fortran call's by-pointer arguments. The products are
the same MKL calls as before, so the bits are the same; the bias is one float32 addition per
element as before. The bias gradient is summed in the dx part by the kernel every other path
uses (ops/_kernels/reduce.column_sums, from ops/nn/linear._column_sums): the same bits.
"""

import numba
import numpy as np

from ... import _blas_parts
from .attention import _gemm_rm
from .reduce import column_sums

# argument slots (int64) after the row shift in slot 0
_F, _TA, _A, _LDA, _TB, _B, _LDB, _C, _LDC, _M, _N, _K, _CUT, _ROWS, _BIAS = range(1, 16)
_SCRATCH = 16        # each part's scratch: 6 slots from _SCRATCH + 6 * part
_SLOTS = _SCRATCH + 12
_F32 = np.dtype(np.float32)


@numba.njit(nogil=True, cache=True)
def _scratch(at):
    """alpha = 1, beta = 0, the two flag bytes and the six int32 arguments of one part's call,
    in the 48 bytes at address `at`."""
    scal = numba.carray(_blas_parts.as_ptr(at, numba.float32), (2,))
    scal[0] = 1.0
    scal[1] = 0.0
    flags = numba.carray(_blas_parts.as_ptr(at + 8, numba.uint8), (2,))
    args = numba.carray(_blas_parts.as_ptr(at + 16, numba.int32), (6,))
    return scal, flags, args


def _halves_part(m, n_, k_, alpha, a, lda, b_, ldb, c, ldc, sb):
    """Half p of c = op(a) @ op(b) (+ bias): rows p*cut.. of c when slot _ROWS is set, else its
    columns."""
    arg = numba.carray(_blas_parts.as_ptr(c, numba.int64), (_SLOTS,))
    first = a >> arg[0]
    big_m, big_n, cut = arg[_M], arg[_N], arg[_CUT]
    for p in range(first, first + m):
        scal, flags, iargs = _scratch(c + 8 * (_SCRATCH + 6 * p))
        lo = p * cut
        a_at, b_at, c_at, bias_at = arg[_A], arg[_B], arg[_C], arg[_BIAS]
        if arg[_ROWS]:
            hi = min(big_m, lo + cut)
            a_at += 4 * lo * (1 if arg[_TA] else arg[_LDA])
            c_at += 4 * lo * arg[_LDC]
            rows, cols = hi - lo, big_n
        else:
            hi = min(big_n, lo + cut)
            b_at += 4 * lo * (arg[_LDB] if arg[_TB] else 1)
            c_at += 4 * lo
            if bias_at:
                bias_at += 4 * lo
            rows, cols = big_m, hi - lo
        if rows <= 0 or cols <= 0:
            continue
        _gemm_rm(arg[_F], scal, 4, flags, iargs, arg[_TA] != 0, arg[_TB] != 0, a_at, arg[_LDA],
                 b_at, arg[_LDB], c_at, arg[_LDC], rows, cols, arg[_K])
        if bias_at:
            bias = numba.carray(_blas_parts.as_ptr(bias_at, numba.float32), (cols,))
            for i in range(rows):
                out = numba.carray(_blas_parts.as_ptr(c_at + 4 * i * arg[_LDC], numba.float32),
                                   (cols,))
                for j in range(cols):
                    out[j] += bias[j]


def _pair_part(m, n_, k_, alpha, a, lda, b_, ldb, c, ldc, sb):
    """Part 0: dx = G W, then db (column sums of G) when slot _BIAS holds its address; part 1:
    dW = G^T X. Slots: _A G (rows, n_out), _B W (n_out, n_in), _C X (rows, n_in), _LDA dx,
    _LDB dW, _M rows, _N n_out, _K n_in; all C-contiguous float32."""
    arg = numba.carray(_blas_parts.as_ptr(c, numba.int64), (_SLOTS,))
    first = a >> arg[0]
    rows, n_out, n_in = arg[_M], arg[_N], arg[_K]
    g_at = arg[_A]
    for p in range(first, first + m):
        scal, flags, iargs = _scratch(c + 8 * (_SCRATCH + 6 * p))
        if p == 0:
            _gemm_rm(arg[_F], scal, 4, flags, iargs, False, False, g_at, n_out, arg[_B], n_in,
                     arg[_LDA], n_in, rows, n_in, n_out)
            if arg[_BIAS]:
                db = numba.carray(_blas_parts.as_ptr(arg[_BIAS], numba.float32), (n_out,))
                g = numba.carray(_blas_parts.as_ptr(g_at, numba.float32), (rows, n_out))
                column_sums(g, db)  # linear._column_sums' kernel: the same bits
        else:
            _gemm_rm(arg[_F], scal, 4, flags, iargs, True, False, g_at, n_out, arg[_C], n_in,
                     arg[_LDB], n_in, n_out, n_in, rows)


_CFUNCS: dict = {}


def _cfunc(fn):
    f = _CFUNCS.get(fn)
    if f is None:
        f = _CFUNCS[fn] = numba.cfunc(_blas_parts.PART, nopython=True, cache=True)(fn)
    return f


def _run(fn, args):
    args[0] = _blas_parts._state[0][1]
    _blas_parts.run(_cfunc(fn).address, 2, args.ctypes.data, min(2, _blas_parts.threads()))


def halves(f, ta, lda, tb, ldb, a, b, out, bias, by_rows, cut):
    """out = op(a) @ op(b) (+ bias) by MKL's Fortran sgemm at address f in two halves of `cut`
    rows (by_rows) or columns, on the caller and OpenBLAS's worker (the caller checked
    `_blas_parts.on("split")`). ta/tb: the operand is stored transposed (_mkl._operand)."""
    args = np.zeros(_SLOTS, np.int64)
    args[1:_SCRATCH] = (f, ta, a.ctypes.data, lda, tb, b.ctypes.data, ldb, out.ctypes.data,
                        out.strides[0] // 4, a.shape[0], b.shape[1], a.shape[1], cut, by_rows,
                        0 if bias is None else bias.ctypes.data)
    _run(_halves_part, args)
    return out


def pair(f, g2, x2, w, gx2, gw, gb):
    """gx2 = g2 @ w and gw = g2^T @ x2 at once (and gb = the column sums of g2 unless None) by
    MKL's Fortran sgemm at address f, on the caller and OpenBLAS's worker; all C-contiguous
    float32, outputs included."""
    args = np.zeros(_SLOTS, np.int64)
    args[1:_SCRATCH] = (f, 0, g2.ctypes.data, gx2.ctypes.data, 0, w.ctypes.data, gw.ctypes.data,
                        x2.ctypes.data, 0, g2.shape[0], g2.shape[1], w.shape[1], 0, 0,
                        0 if gb is None else gb.ctypes.data)
    _run(_pair_part, args)
