"""A float32 GEMM in numba for AVX-512 hosts whose OpenBLAS runs its AVX2 kernels: NOTE [A GEMM
in numba].
"""

# NOTE [A GEMM in numba]
# This project's EPYC (Zen 5, AVX-512 with full-width units) pins numpy's OpenBLAS to its
# Haswell (AVX2) kernels through OPENBLAS_CORETYPE, a user's setting that ember respects. Those
# kernels use half the vector width the CPU has: ~115-127 GFLOP/s on one thread, where numba
# compiles plain loops for the host's full width. So on such a host the big float32 products of
# the form C = A B^T, with A (m, k) and B (n, k) both C-contiguous (a Linear's forward x W^T, and
# its input gradient G W with W^T copied once), run here instead:
# - a tile of 4 rows of A against 6 rows of B keeps 24 running dot products along k, which LLVM
#   vectorises along k (16 lanes, the additions reassociated); each step loads 10 vectors for
#   24 FMAs, so the loads do not bound it;
# - B^T C-contiguous (the transpose of a C-contiguous (k, n) B, as G W's W^T) is copied first
#   when a has COPY_MIN_ROWS rows or more to pay for it; other layouts stay with BLAS (a
#   transposed copy of a big operand costs about what the faster product saves);
# - k in blocks of KC (the tile's 10 rows of KC values stay in L1), A's rows in blocks of MC
#   (they stay in L2 while every row of B passes them);
# - the indices are unsigned: with signed ones numba wraps negative indices, a select on every
#   load that kept LLVM from vectorising (15 against 150 GFLOP/s);
# - a product's rows are cut in two parts, each computed on one of OpenBLAS's threads (NOTE
#   [Kernels on OpenBLAS's threads]); each output is the same dot product whichever part holds
#   it, so results do not depend on the split (they differ from BLAS's by rounding).
# One thread, thread time, best of 5 (/work/s34/ng5.py, AMD EPYC Zen 5, load ~0.3): 960x960x1024
# 188 GFLOP/s against OpenBLAS's 127; 2040x720x256 148 against 126; 2040x240x1024 196 against
# 120. A short k leaves more of the time to each tile's 24 horizontal sums, so products with
# k < MIN_K stay with BLAS, as do the ones where OpenBLAS has its own AVX-512 kernels.

import numba
import numpy as np

KC = 1024
MC = 64
MIN_K = 128
# products from this many multiply-adds run here, in two parts from PARTS_MACS (a hand-off
# costs a few microseconds)
MIN_MACS = 1 << 20
PARTS_MACS = 1 << 22
# a C-contiguous b (n, k) is copied transposed first, at ~1-2 ns a value against ~2m / 150e9 s
# of products per value: paid back from this many rows of a
COPY_MIN_ROWS = 512
_FM = {"reassoc", "contract"}


@numba.njit(nogil=True, fastmath=_FM, inline="always")
def _tile(a, b, c, r, o, k0, k1):
    """c[r:r+4, o:o+6] += a[r:r+4, k0:k1] @ b[o:o+6, k0:k1]^T (r, o, k0, k1 unsigned)."""
    z = c.dtype.type(0)
    s00 = s01 = s02 = s03 = s04 = s05 = z
    s10 = s11 = s12 = s13 = s14 = s15 = z
    s20 = s21 = s22 = s23 = s24 = s25 = z
    s30 = s31 = s32 = s33 = s34 = s35 = z
    r1, r2, r3 = r + 1, r + 2, r + 3
    o1, o2, o3, o4, o5 = o + 1, o + 2, o + 3, o + 4, o + 5
    for p in range(k0, k1):
        a0, a1, a2, a3 = a[r, p], a[r1, p], a[r2, p], a[r3, p]
        b0, b1, b2, b3, b4, b5 = b[o, p], b[o1, p], b[o2, p], b[o3, p], b[o4, p], b[o5, p]
        s00 += a0 * b0
        s01 += a0 * b1
        s02 += a0 * b2
        s03 += a0 * b3
        s04 += a0 * b4
        s05 += a0 * b5
        s10 += a1 * b0
        s11 += a1 * b1
        s12 += a1 * b2
        s13 += a1 * b3
        s14 += a1 * b4
        s15 += a1 * b5
        s20 += a2 * b0
        s21 += a2 * b1
        s22 += a2 * b2
        s23 += a2 * b3
        s24 += a2 * b4
        s25 += a2 * b5
        s30 += a3 * b0
        s31 += a3 * b1
        s32 += a3 * b2
        s33 += a3 * b3
        s34 += a3 * b4
        s35 += a3 * b5
    c[r, o] += s00
    c[r, o1] += s01
    c[r, o2] += s02
    c[r, o3] += s03
    c[r, o4] += s04
    c[r, o5] += s05
    c[r1, o] += s10
    c[r1, o1] += s11
    c[r1, o2] += s12
    c[r1, o3] += s13
    c[r1, o4] += s14
    c[r1, o5] += s15
    c[r2, o] += s20
    c[r2, o1] += s21
    c[r2, o2] += s22
    c[r2, o3] += s23
    c[r2, o4] += s24
    c[r2, o5] += s25
    c[r3, o] += s30
    c[r3, o1] += s31
    c[r3, o2] += s32
    c[r3, o3] += s33
    c[r3, o4] += s34
    c[r3, o5] += s35


@numba.njit(nogil=True, fastmath=_FM, inline="always")
def _dot(a, b, c, r, o, k0, k1):
    """c[r, o] += a[r, k0:k1] . b[o, k0:k1] (the edges the tiles leave)."""
    s = c.dtype.type(0)
    for p in range(k0, k1):
        s += a[r, p] * b[o, p]
    c[r, o] += s


@numba.njit(nogil=True, cache=True, fastmath=_FM)
def nt_rows(a, b, c, bias, has_bias, lo, hi):
    """c[lo:hi] = a[lo:hi] @ b^T (+ bias) for C-contiguous a (m, k), b (n, k), c (m, n) and
    bias (n,) of one float dtype, 0 <= lo <= hi <= m. The bias starts each output's sum. A
    row's bits depend only on where it sits in the tiles, so parts cut at multiples of 4 rows
    give the bits of the whole."""
    k = a.shape[1]
    n = b.shape[0]
    if has_bias:
        for r in range(lo, hi):
            c[r] = bias
    else:
        c[lo:hi] = 0
    n6 = np.uint64(n - n % 6)
    nu = np.uint64(n)
    for k0 in range(0, k, KC):
        p0 = np.uint64(k0)
        p1 = np.uint64(min(k, k0 + KC))
        for q0 in range(lo, hi, MC):
            q1 = min(hi, q0 + MC)
            q4 = np.uint64(q1 - (q1 - q0) % 4)
            u0 = np.uint64(q0)
            uq = np.uint64(q1)
            for o in range(np.uint64(0), n6, np.uint64(6)):
                for r in range(u0, q4, np.uint64(4)):
                    _tile(a, b, c, r, o, p0, p1)
            # the last n % 6 columns of these rows, and the last (q1 - q0) % 4 rows
            for r in range(u0, q4):
                for o in range(n6, nu):
                    _dot(a, b, c, r, o, p0, p1)
            for r in range(q4, uq):
                for o in range(np.uint64(0), nu):
                    _dot(a, b, c, r, o, p0, p1)


ON = [True]  # a switch for A/Bs and tests
_NO_BIAS = {np.dtype(np.float32): np.zeros(1, np.float32)}


def _host_ok():
    from .small_gemm import _host_kinds
    avx512, blas512 = _host_kinds()
    return avx512 and not blas512


def takes(a, b, out, min_macs=MIN_MACS):
    """Whether `matmul` computes a @ b (into out): 2-D float32 operands, a C-contiguous, b
    C-contiguous or the transpose of a C-contiguous array, k >= MIN_K, at least min_macs
    multiply-adds, a C-contiguous out apart from both, on a host where NOTE [A GEMM in numba]
    holds."""
    if a.ndim != 2 or b.ndim != 2 or a.dtype != np.float32 or b.dtype != np.float32:
        return False
    m, k = a.shape
    n = b.shape[1]
    if k < MIN_K or b.shape[0] != k or m * n * k < min_macs or not a.flags.c_contiguous:
        return False
    if not (b.T.flags.c_contiguous or (b.flags.c_contiguous and m >= COPY_MIN_ROWS)):
        return False
    if out is not None and (out.dtype != np.float32 or out.shape != (m, n)
                            or not out.flags.c_contiguous or not out.flags.writeable
                            or np.may_share_memory(out, a) or np.may_share_memory(out, b)):
        return False
    return ON[0] and _host_ok()


def matmul(a, b, out=None, bias=None, parts=True):
    """a @ b (+ bias, a C-contiguous (n,) row of a's dtype) for operands `takes` accepts; in two
    parts of rows on OpenBLAS's threads when `parts` and the product is big enough."""
    from ... import _blas_parts
    m = a.shape[0]
    bt = b.T if b.T.flags.c_contiguous else np.ascontiguousarray(b.T)
    if out is None:
        out = np.empty((m, bt.shape[0]), a.dtype)
    has_bias = bias is not None
    if not has_bias:
        bias = _NO_BIAS[a.dtype]
    if parts and m >= 8 and m * bt.shape[0] * a.shape[1] >= PARTS_MACS and \
            _blas_parts.on("gemm"):
        cut = 4 * -(-m // 8)  # halves at a multiple of the tile's 4 rows

        def part(lo, hi):
            nt_rows(a, bt, out, bias, has_bias, lo * cut, min(m, hi * cut))

        _blas_parts.run_ranges(part, 2)
    else:
        nt_rows(a, bt, out, bias, has_bias, 0, m)
    return out
