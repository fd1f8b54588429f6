"""One-row products y = W x (+ b) in parts on OpenBLAS's threads (a decoding step's Linear
calls): NOTE [One-row products in parts].
"""

# NOTE [One-row products in parts]
# A decoding step (GPT-S: batch 1, one new token) makes 17 matrix-vector products, 13.6 MB of
# weights read from beyond L2 once per token. NumPy's OpenBLAS gemv gained nothing from its
# second thread on the Intel Xeon of the twenty-third session (quiet slot, the step's 17
# products cycled over their own weights: 626 us a round on two threads, 630 on one; hot single
# products the same), while torch's two threads took its products from 792 to 513 us. Here the
# output rows are cut into one part per OpenBLAS thread through blas_level1_thread (NOTE
# [Kernels on OpenBLAS's threads] in ember/_blas_parts.py): each part computes whole outputs,
# each the dot product of one contiguous weight row with x (vectorised: the additions are
# reassociated), plus the bias. A given output gets the same arithmetic whatever the split, so
# the result does not depend on the thread count; it differs from BLAS's gemv by rounding (the
# order of the additions), as torch's MKL differs from both. User "gemv" of _blas_parts.
# Measured (quiet slot 23:43 UTC, load 0.02; GPT-S generation in one process, the parts off/on
# alternating, 10 pairs, benchmarks/generate_ab.py's protocol): 123.6 against 106.3 ms, paired
# off/on 1.179, the same tokens.

from time import perf_counter

import numba
import numpy as np

from ... import _blas_parts
from ..._onepool import _call13

_PARTS: dict = {}


def _part_of(dt):
    """Outputs r0..r0+m-1 of y = W x (+ b). Slots: 1 W (n_out, n_in) C-contiguous, 2 x, 3 b
    (0: none), 4 y, 5 n_in."""
    as_ptr, kind, item = _blas_parts.as_ptr, numba.from_dtype(dt), dt.itemsize

    def part(m, n_, k_, alpha, a, lda, b_, ldb, c, ldc, sb):
        arg = numba.carray(as_ptr(c, numba.int64), (6,))
        n_in = arg[5]
        r0 = a >> arg[0]
        w = numba.carray(as_ptr(arg[1] + r0 * n_in * item, kind), (m, n_in))
        x = numba.carray(as_ptr(arg[2], kind), (n_in,))
        y = numba.carray(as_ptr(arg[4] + r0 * item, kind), (m,))
        for o in range(m):
            row = w[o]
            total = kind(0)
            for i in range(n_in):
                total += row[i] * x[i]
            y[o] = total
        if arg[3]:
            bias = numba.carray(as_ptr(arg[3] + r0 * item, kind), (m,))
            for o in range(m):
                y[o] += bias[o]

    return part


def _part(dt):
    key = np.dtype(dt)
    fn = _PARTS.get(key)
    if fn is None:
        fn = _PARTS[key] = numba.cfunc(_blas_parts.PART, nopython=True, cache=True,
                                       fastmath={"reassoc"})(_part_of(key))
    return fn


@numba.njit(nogil=True, cache=True)
def _launch(run_at, part_at, alpha_at, shift, threads, w, x, b, has_bias, y):
    """Fill the part's argument slots and run the parts (the slots made here: a NumPy array
    made in Python per call cost ~0.4 us more)."""
    # numba frees an array after its last use (NOTE [Scratch arrays outlive their addresses] in
    # attention.py), here reading its address before the parts run: the read after the call
    # keeps the slots alive until the parts are done
    args = np.empty(6, np.int64)
    args[0] = shift
    args[1] = w.ctypes.data
    args[2] = x.ctypes.data
    args[3] = b.ctypes.data if has_bias else 0
    args[4] = y.ctypes.data
    args[5] = w.shape[1]
    i = np.int64
    _call13(run_at, (i(_blas_parts._MODE), i(w.shape[0]), i(0), i(0), i(alpha_at), i(0), i(1),
                     i(0), i(1), i(args.ctypes.data), i(0), i(part_at), i(threads)))
    return args[5]


def gemv_in_parts(x, weight, bias, shape=None):
    """weight @ x + bias for a C-contiguous x of `in` values (any shape: a (1, 1, in) row is
    read as the vector) and a C-contiguous (out, in) weight of x's float dtype (bias 1-D
    contiguous or None), in parts on OpenBLAS's threads, as an array of `shape` (default
    (out,)); the caller checked `_blas_parts.on("gemv")`."""
    y = np.empty(weight.shape[:1] if shape is None else shape, x.dtype)
    part = _PARTS.get(x.dtype)
    if part is None:
        part = _part(x.dtype)
    state = _blas_parts._state[0]
    start = perf_counter()
    # one part, on this thread, while a late worker's solo period lasts (NOTE [A late worker])
    threads = 1 if _blas_parts.late_solo(start) else state[2]()
    _launch(state[3], part.address, _blas_parts._ALPHA_AT, state[1], threads, weight, x,
            x if bias is None else bias, bias is not None, y)
    if threads > 1:
        _blas_parts.note_hand_off(perf_counter() - start > _blas_parts.LATE_S)
    return y
