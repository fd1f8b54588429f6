"""A float32 GEMM in numba for AVX-512 hosts whose OpenBLAS runs its AVX2 kernels: NOTE [A GEMM
in numba].
"""

# NOTE [A GEMM in numba]
# This project's EPYC (Zen 5, AVX-512 with full-width units) pins numpy's OpenBLAS to its
# Haswell (AVX2) kernels through OPENBLAS_CORETYPE, a user's setting that ember respects. Those
# kernels use half the vector width the CPU has: ~115-127 GFLOP/s on one thread, where numba
# compiles plain loops for the host's full width. So on such a host (AVX-512 for numba's code,
# OpenBLAS on non-AVX-512 kernels) big float32 products run here instead, in two kernels:
# - C = A B^T with A (m, k) and B (n, k) C-contiguous (a Linear's forward x W^T, a
#   convolution's weight gradient gy cols^T, Winograd's dM V^T): `nt_rows`, a tile of 4 rows of
#   A against 6 rows of B, 24 running dot products that LLVM vectorises along k (16 lanes, the
#   additions reassociated), k in blocks of KC (the tile's rows stay in L1), A's rows in blocks
#   of MC (they stay in L2 while every row of B passes them). A short k leaves too much of the
#   time to each tile's 24 horizontal sums: from MIN_K only. A C-contiguous B of few columns
#   (NT_MIN_N to NN_MIN_N: an LSTM step's W h over a batch of 32, Winograd's planes of 32 tiles)
#   is copied transposed (n x k values) and taken here too: 1024x256x32 140 GFLOP/s with the
#   copy against the first nn_rows' 79 and OpenBLAS's 106 (/work/s34/narrow.py, one thread).
# - C = A B with B (k, n) C-contiguous and A of any strides (a Linear's input gradient G W and
#   weight gradient G^T X, a convolution's forward W cols and input gradient W^T gy, Winograd's
#   U V and U^T dM): `nn_rows`, tiles of 8 x 32 outputs summed in registers against panels of
#   B (NOTE [A register tile]); products of fewer than STREAM_ROWS rows stream B's rows
#   instead (`_nn_stream`: four rows of C take four rows of B at a time along a block of
#   NN_NC columns, vectorised along C's row; a row shorter than NN_MIN_N is too short a loop).
# - the indices are unsigned: with signed ones numba wraps negative indices, a select on every
#   load that kept LLVM from vectorising (15 against 150 GFLOP/s);
# - a product is cut in two parts (a stack of planes: its planes), each computed on one of
#   OpenBLAS's threads (NOTE [Kernels on OpenBLAS's threads]), as the user "gemm": `nt_rows`
#   and `_nn_stream` at multiples of 4 rows, the tile by panels of its columns (`_groups`), so
#   results do not depend on the split (they differ from BLAS's by rounding). A product inside
#   a task that already holds a thread (a Linear's or a convolution's two gradients at once)
#   runs on its thread alone.
# One thread, thread time, best of 5 (AMD EPYC Zen 5): nt_rows 2048x768x256 154 GFLOP/s against
# OpenBLAS's 115, 1000^3 164 against 118, 960x960x1024 188 against 127 (/work/s34/t_gemm.py,
# ng5.py, load ~0.3); nn_rows 192x3600x1600 145 against 122, 1600x675x192 (A transposed) 149
# against 122, 1024x256x1024 132-156 against 121 (/work/s34/t_nn.py, load ~4); the tile
# since: 200-250 (NOTE [A register tile]). Products of
# other layouts (both operands transposed), float64, under MIN_MACS multiply-adds or 8 rows,
# and every product on hosts where OpenBLAS has its own AVX-512 kernels stay with BLAS, as all do
# with EMBER_NUMBA_GEMM=0.

# NOTE [More layouts for the numba GEMM]
# The two kernels first left to BLAS the products whose b is neither C-contiguous with many
# columns nor the transpose of a C-contiguous array with a long k, and those with few columns
# and a transposed a. Those were VGG-19's and ResNet-50's last BLAS products: a 3x3
# convolution's gradients on 2x2 maps (dcols = W^T G with 32 columns, dW = G cols^T with k = 32),
# Winograd's U^T dM on 32 tiles and dM V^T with k = 32, and the per-sample weight gradients of
# 1x1 convolutions. Two more routes (`_kernel`) take them:
# - "nn_copy": b copied C-contiguous (k x n values: from COPY_MIN_M rows of a, a small share of
#   the product), then nn_rows;
# - "t": c^T = b^T a^T by nn_rows (a^T is C-contiguous, b^T a strided a) into a scratch of
#   n x m values, copied over transposed.
# The planes get the same two (`nn_planes_copied`, `t_planes`). One thread, thread time, best
# of 7 (/work/s35/narrow2.py, chk.py; load ~3), BLAS against numba, GFLOP/s: 4608x512x32 with
# a transposed 95 -> 136, 2048x512x32 101 -> 163, 1024x2048x32 96 -> 129; 512x32x4608 with b
# transposed 114 -> 161, 2048x32x512 115 -> 140; 36 planes of 256x256x32 (U^T dM) 91 -> 207,
# of 256x32x256 (dM V^T) 104 -> 168.

import contextlib
import os
from time import perf_counter

import numba
import numpy as np

from ..._blas_parts import as_ptr
from .gemm_tile import MR, NR, tile

# with fewer columns than this a row of c is too short a loop (4 us of 256 x 256 x 32 took 2x
# BLAS's time)
NN_MIN_N = 64
MIN_K = 128
# a product with fewer columns is a matrix-vector product or close to one: BLAS's
NT_MIN_N = 16
# products from this many multiply-adds run here, in two parts from PARTS_MACS (a hand-off
# costs a few microseconds)
MIN_MACS = 1 << 20
PARTS_MACS = 1 << 22
# "nn_copy" copies b (k x n values): from this many rows of a, a small share of the product
COPY_MIN_M = 64
_FM = {"reassoc", "contract"}
# A B^T's dot-product tiles: k in blocks of KC (the tile's rows stay in L1), A's rows in blocks
# of MC (they stay in L2 while every row of B passes them)
KC = 1024
MC = 64
# the streaming A B of few rows: k in blocks of NN_KC (four rows of B at a time), B's columns in
# blocks of NN_NC (a block of NN_KC rows stays in L2 while A's rows pass it)
NN_KC = 128
NN_NC = 1024


@contextlib.contextmanager
def _slp():
    """numba's compilations in this block run LLVM's SLP vectoriser (off by default)."""
    from numba.core import config
    saved = config.SLP_VECTORIZE
    config.SLP_VECTORIZE = 1
    try:
        yield
    finally:
        config.SLP_VECTORIZE = saved


def _tile_signatures():
    """The operands `_tiled` passes `gemm_tile.tile` in the products routed here: float32 A of
    any layout (read-only: a plane shared by a stack, `planes_matmul`'s broadcast), or the
    zero-padded copy of A's last rows; B's panel and C (or the scratch tile) C-contiguous;
    unsigned indices. Each costs ~0.6 MB of resident code, so no more are made ahead (a
    float64 tile, the kernels' tests only, compiles on first use without the pass)."""
    from numba import types
    u = types.uint64
    block = types.Array(types.float32, 2, "C")
    for a in (block, types.Array(types.float32, 2, "F"), types.Array(types.float32, 2, "A"),
              types.Array(types.float32, 2, "A", readonly=True)):
        yield (a, u, u, block, u, u, u, block, u, u)


def _compile_tile():
    """Compile `gemm_tile.tile` for `_tile_signatures` with LLVM's SLP vectoriser on (NOTE [A
    register tile]), before any kernel that calls it is compiled, so each links this code: on
    the first `_host_ok` that finds a host for this GEMM, the gate every route here passes (a
    fresh install elsewhere never compiles it). A signature not listed would compile on first
    use without the pass (correct, several times slower): tests/ops/test_numba_gemm.py checks
    none does."""
    with _slp():
        for sig in _tile_signatures():
            tile.compile(sig)


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


@numba.njit(nogil=True, cache=True)
def _start(c, bias, has_bias, lo, hi, jlo, jhi):
    """c[lo:hi, jlo:jhi] set to the bias (has_bias) or to zero: where the sums start."""
    if has_bias:
        for r in range(lo, hi):
            c[r, jlo:jhi] = bias[jlo:jhi]
    else:
        c[lo:hi, jlo:jhi] = 0


@numba.njit(nogil=True, cache=True, fastmath=_FM)
def nt_rows(a, b, c, bias, has_bias, lo, hi):
    """c[lo:hi] = a[lo:hi] @ b^T (+ bias) for C-contiguous a (m, k), b (n, k), c (m, n) and
    bias (n,) of one float dtype, 0 <= lo <= hi <= m. The bias starts each output's sum. A
    row's bits depend only on where it sits in the tiles, so parts cut at multiples of 4 rows
    give the bits of the whole."""
    k = a.shape[1]
    n = b.shape[0]
    _start(c, bias, has_bias, lo, hi, 0, n)
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



# NOTE [A register tile]
# C = A B is computed in tiles of MR x NR = 8 x 32 outputs (gemm_tile.py): every group of 8
# rows of A runs a block of KB terms against 32 columns of B with its 256 sums in registers,
# 16 vector FMAs a term against 2 vector loads and 8 broadcasts, where the earlier kernel
# loaded and stored four rows of C for every four rows of B. LLVM keeps the sums in registers
# only when the tile's source names each one and its SLP vectoriser packs them, a pass numba
# leaves off by default: the tile is compiled with it on (`_compile_tile`). B is first copied,
# KB rows by NC columns at a time, its rows read in order (a panel read in place touched a new
# page every row where B's rows are 16 KB long), into panels of 32 columns, each contiguous (a
# panel stays in L1 while the rows of A pass it). The tile is called from one place in
# `_tiled` (into C, or into a scratch tile), so its code is linked into each caller once:
# three calls had cost ~28 MB of resident code (ResNet-50's step memory 454 -> 485 MB,
# /work/s37/memprobe.py). The last panel, of fewer than 32 columns, is padded with zeros, the
# last rows of A (fewer than 8) are copied and padded likewise, and those tiles sum into the
# scratch tile whose valid part is then added to C: each output is still the
# same sum, made in the same order with the same FMAs, so blocks cut anywhere along the rows or
# the columns give the bits of the whole. One thread, thread time, best of 10, GFLOP/s against the
# earlier kernel (/work/s37/one.py, machine loaded by helpers, chrt): 512x4608x128 231
# against 138, 1024x256x1024 225 against 157, 256x1024x128 236 against 145, 384x1728x784
# 211 against 194. 12 x 32 spills, 4 x 64 and 6 x 64 ran 5-10 % slower (/work/s37/rt2.py).
# A product of fewer than STREAM_ROWS rows keeps the earlier kernel, whose rows of C take four
# rows of B at a time along long rows (`_nn_stream`): there the copies cost more than the tile
# saves. A B^T keeps the dot-product tiles of `nt_rows`: a panel of B^T is a transposing copy,
# which cost more than the tile saved for the few rows of A a Linear's forward has.
KB = 256
NC = 512
# products of fewer rows keep the earlier kernel, which streams B's rows (`_nn_stream`): one
# thread, GFLOP/s, earlier / tiled (/work/s37/smallm.py): (8, 4096, 4096) 61 / 30, (16, ...) 83
# / 54, (32, ...) 101 / 89, (48, ...) 110 / 111, (64, ...) 146 / 125 and (64, 256, 1024) 134 /
# 178
STREAM_ROWS = 48


@numba.njit(nogil=True, inline="always")
def _pack(b, k0, kk, j0, w, pk):
    """pk[q, :kk, :] = b[k0:k0+kk, j0+32q : j0+32q+32] for the panels of columns j0..j0+w (b's
    rows read in order), zeros past column j0+w."""
    u0, nr = np.uint64(0), np.uint64(NR)
    panels = (w + nr - np.uint64(1)) // nr
    for p in range(u0, kk):
        row = k0 + p
        for q in range(u0, panels):
            jq = j0 + q * nr
            wq = min(nr, w - q * nr)
            for jj in range(u0, wq):
                pk[q, p, jj] = b[row, jq + jj]
            for jj in range(wq, nr):
                pk[q, p, jj] = 0


@numba.njit(nogil=True, inline="always")
def _tiled(a, b, c, lo, hi, jlo, jhi):
    """c[lo:hi, jlo:jhi] += a[lo:hi] @ b[:, jlo:jhi] (NOTE [A register tile])."""
    k = a.shape[1]
    mr, nr, kb, nc = np.uint64(MR), np.uint64(NR), np.uint64(KB), np.uint64(NC)
    lo, hi, jlo, jhi = np.uint64(lo), np.uint64(hi), np.uint64(jlo), np.uint64(jhi)
    uk = np.uint64(k)
    u0 = np.uint64(0)
    pk = np.empty((NC // NR, KB, NR), c.dtype)
    ct = np.empty((MR, NR), c.dtype)
    at = np.empty((MR, KB), c.dtype)
    for jb in range(jlo, jhi, nc):
        wb = min(nc, jhi - jb)
        for k0 in range(u0, uk, kb):
            kk = min(kb, uk - k0)
            _pack(b, k0, kk, jb, wb, pk)
            for r in range(lo, hi, mr):
                rows = min(mr, hi - r)
                if rows < mr:
                    _copy_rows(a, r, rows, k0, kk, at)
                for j0 in range(jb, jb + wb, nr):
                    panel = pk[(j0 - jb) // nr]
                    w = min(nr, jhi - j0)
                    # one call of the tile (its code is linked into each caller once)
                    full = w == nr and rows == mr
                    if full:
                        dst, dr, dc = c, r, j0
                    else:
                        ct[:] = 0
                        dst, dr, dc = ct, u0, u0
                    if rows == mr:
                        tile(a, r, k0, panel, u0, u0, kk, dst, dr, dc)
                    else:
                        tile(at, u0, u0, panel, u0, u0, kk, dst, dr, dc)
                    if not full:
                        for i in range(u0, rows):
                            for jj in range(u0, w):
                                c[r + i, j0 + jj] += ct[i, jj]


@numba.njit(nogil=True, inline="always")
def _copy_rows(a, r0, rows, k0, kk, at):
    """at[:rows, :kk] = a[r0:r0+rows, k0:k0+kk], zeros in at's other rows (a tile's padding);
    a read along its rows, or down its columns when those are contiguous (G^T of a weight
    gradient: the rows of at then fill one term at a time)."""
    u0 = np.uint64(0)
    for i in range(rows, np.uint64(at.shape[0])):
        at[i] = 0
    if a.strides[0] < a.strides[1]:
        for p in range(u0, kk):
            for i in range(u0, rows):
                at[i, p] = a[r0 + i, k0 + p]
    else:
        for i in range(u0, rows):
            for p in range(u0, kk):
                at[i, p] = a[r0 + i, k0 + p]


@numba.njit(nogil=True, fastmath=_FM, inline="always")
def _nn_stream(a, b, c, lo, hi, jlo, jhi):
    """c[lo:hi, jlo:jhi] += a[lo:hi] @ b[:, jlo:jhi] for a product of few rows (NOTE [A register
    tile]); cuts at multiples of 4 rows, and any cut of the columns, give the bits of the whole."""
    k = a.shape[1]
    k4 = k - k % 4
    hi4 = hi - (hi - lo) % 4
    # four rows of c (in L1) take four rows of b at a time along a block of NN_NC columns:
    # sixteen values of a held in registers, 16 FMAs a vector of b's four rows
    for k0 in range(0, k4, NN_KC):
        k1 = np.uint64(min(k4, k0 + NN_KC))
        for j0 in range(jlo, jhi, NN_NC):
            j1 = np.uint64(min(jhi, j0 + NN_NC))
            uj0 = np.uint64(j0)
            for r in range(lo, hi4, 4):
                r = np.uint64(r)
                r1 = r + np.uint64(1)
                r2 = r + np.uint64(2)
                r3 = r + np.uint64(3)
                for p in range(np.uint64(k0), k1, np.uint64(4)):
                    p1 = p + np.uint64(1)
                    p2 = p + np.uint64(2)
                    p3 = p + np.uint64(3)
                    x00 = a[r, p]
                    x01 = a[r, p1]
                    x02 = a[r, p2]
                    x03 = a[r, p3]
                    x10 = a[r1, p]
                    x11 = a[r1, p1]
                    x12 = a[r1, p2]
                    x13 = a[r1, p3]
                    x20 = a[r2, p]
                    x21 = a[r2, p1]
                    x22 = a[r2, p2]
                    x23 = a[r2, p3]
                    x30 = a[r3, p]
                    x31 = a[r3, p1]
                    x32 = a[r3, p2]
                    x33 = a[r3, p3]
                    for j in range(uj0, j1):
                        b0 = b[p, j]
                        b1 = b[p1, j]
                        b2 = b[p2, j]
                        b3 = b[p3, j]
                        c[r, j] += x00 * b0 + x01 * b1 + x02 * b2 + x03 * b3
                        c[r1, j] += x10 * b0 + x11 * b1 + x12 * b2 + x13 * b3
                        c[r2, j] += x20 * b0 + x21 * b1 + x22 * b2 + x23 * b3
                        c[r3, j] += x30 * b0 + x31 * b1 + x32 * b2 + x33 * b3
    # the last (hi - lo) % 4 rows, then the last k % 4 terms of every row
    for r in range(hi4, hi):
        for p in range(0, k4, 4):
            x0 = a[r, p]
            x1 = a[r, p + 1]
            x2 = a[r, p + 2]
            x3 = a[r, p + 3]
            for j in range(jlo, jhi):
                c[r, j] += x0 * b[p, j] + x1 * b[p + 1, j] + x2 * b[p + 2, j] + x3 * b[p + 3, j]
    for p in range(k4, k):
        for r in range(lo, hi):
            x = a[r, p]
            for j in range(jlo, jhi):
                c[r, j] += x * b[p, j]


@numba.njit(nogil=True, cache=True)
def nn_block(a, b, c, bias, has_bias, lo, hi, jlo, jhi):
    """c[lo:hi, jlo:jhi] of c = a @ b (+ bias) for a (m, k) of any strides (a transposed view:
    G^T of a weight gradient), C-contiguous b (k, n), c (m, n) and bias (n,) of one float
    dtype. The bias starts each output's sum. Any block's bits are those of the whole product
    (NOTE [A register tile])."""
    _start(c, bias, has_bias, lo, hi, jlo, jhi)
    if a.shape[0] < STREAM_ROWS:
        _nn_stream(a, b, c, lo, hi, jlo, jhi)
    else:
        _tiled(a, b, c, lo, hi, jlo, jhi)


@numba.njit(nogil=True, cache=True)
def nn_rows(a, b, c, bias, has_bias, lo, hi):
    """c[lo:hi] = a[lo:hi] @ b (+ bias) for `nn_block`'s operands."""
    nn_block(a, b, c, bias, has_bias, lo, hi, 0, b.shape[1])


@numba.njit(nogil=True, cache=True)
def nn_cols(a, b, c, jlo, jhi):
    """c[:, jlo:jhi] = a @ b[:, jlo:jhi] for `nn_block`'s operands: a product cut along its
    columns."""
    nn_block(a, b, c, c[0], False, 0, c.shape[0], jlo, jhi)


# the kernels as the cfunc part compiles them (tests may wrap the module's names)
_NN, _NT = nn_block, nt_rows


@numba.njit(nogil=True, cache=True)
def _plane(x3, p):
    """Plane p of a 3-D array whose planes are C-contiguous, as a C-contiguous 2-D array (numba
    types a plane of a padded stack as of any layout, and its loops then do not vectorise)."""
    return numba.carray(as_ptr(x3.ctypes.data + p * x3.strides[0], x3.dtype),
                        (x3.shape[1], x3.shape[2]))


@numba.njit(nogil=True, cache=True, fastmath=_FM)
def nn_planes(a3, a_t, b3, c3, lo, hi):
    """c3[p] = A_p @ b3[p] for planes lo..hi, A_p = a3[p] (a3[p].T when a_t), every plane of
    a3, b3 and c3 C-contiguous."""
    for p in range(lo, hi):
        b = _plane(b3, p)
        c = _plane(c3, p)
        if a_t:
            nn_rows(_plane(a3, p).T, b, c, b[0], False, 0, c.shape[0])
        else:
            nn_rows(_plane(a3, p), b, c, b[0], False, 0, c.shape[0])


@numba.njit(nogil=True, cache=True, inline="always")
def _transpose_into(src, dst):
    """dst = src^T for 2-D arrays of transposed shapes (src read row by row)."""
    for i in range(src.shape[0]):
        for j in range(src.shape[1]):
            dst[j, i] = src[i, j]


@numba.njit(nogil=True, cache=True, fastmath=_FM)
def nt_planes_copied(a3, b3, c3, lo, hi):
    """c3[p] = a3[p] @ b3[p] for planes lo..hi, every plane C-contiguous, by nt_rows on a
    transposed copy of each plane of b3 (a plane of few columns: n x k values)."""
    k, n = b3.shape[1], b3.shape[2]
    bt = np.empty((n, k), b3.dtype)
    for p in range(lo, hi):
        _transpose_into(_plane(b3, p), bt)
        c = _plane(c3, p)
        nt_rows(_plane(a3, p), bt, c, bt[0], False, 0, c.shape[0])


@numba.njit(nogil=True, cache=True, fastmath=_FM)
def nn_planes_copied(a3, b3t, c3, lo, hi):
    """c3[p] = a3[p] @ b3t[p]^T for planes lo..hi, every plane C-contiguous, by nn_rows on a
    transposed copy of each plane of b3t (a short k: k x n values)."""
    n, k = b3t.shape[1], b3t.shape[2]
    b = np.empty((k, n), b3t.dtype)
    for p in range(lo, hi):
        _transpose_into(_plane(b3t, p), b)
        c = _plane(c3, p)
        nn_rows(_plane(a3, p), b, c, b[0], False, 0, c.shape[0])


@numba.njit(nogil=True, cache=True, fastmath=_FM)
def t_planes(a3t, b3, c3, lo, hi):
    """c3[p] = a3t[p]^T @ b3[p] for planes lo..hi, every plane C-contiguous, as its transpose
    b3[p]^T a3t[p] by nn_rows into a scratch plane, then copied over (b of few columns)."""
    m, n = c3.shape[1], c3.shape[2]
    ct = np.empty((n, m), c3.dtype)
    for p in range(lo, hi):
        nn_rows(_plane(b3, p).T, _plane(a3t, p), ct, ct[0], False, 0, n)
        _transpose_into(ct, _plane(c3, p))


@numba.njit(nogil=True, cache=True, fastmath=_FM)
def nt_planes(a3, b3, c3, lo, hi):
    """c3[p] = a3[p] @ b3[p]^T for planes lo..hi, every plane C-contiguous."""
    for p in range(lo, hi):
        b = _plane(b3, p)
        c = _plane(c3, p)
        nt_rows(_plane(a3, p), b, c, b[0], False, 0, c.shape[0])

# a switch for A/Bs and tests; EMBER_NUMBA_GEMM=0 leaves every product to BLAS
ON = [os.environ.get("EMBER_NUMBA_GEMM", "").strip() != "0"]
_NO_BIAS = {np.dtype(np.float32): np.zeros(1, np.float32)}


_host: list = []


def _host_ok():
    """An AVX-512 host whose OpenBLAS runs non-AVX-512 kernels (probed once)."""
    if not _host:
        from .small_gemm import _host_kinds
        avx512, blas512 = _host_kinds()
        if avx512 and not blas512:
            _compile_tile()
        _host.append(avx512 and not blas512)
    return _host[0]


def _tiles_columns(m, n):
    """Whether A B of m rows and n columns, B C-contiguous, goes to `nn_rows`: from NN_MIN_N
    columns, or exactly one panel of NR when the register tile takes it (STREAM_ROWS rows or
    more; NOTE [A register tile]): 32 columns ran at 220-250 GFLOP/s there against 105-125 for
    the dot tiles on a transposed copy (Winograd's planes of 32 tiles, /work/s37/replay.py).
    33-63 columns would pad a second panel with up to 31 columns of zeros."""
    return n >= NN_MIN_N or (n == NR and m >= STREAM_ROWS)


def _kernel(a, b):
    """How a @ b runs here (NOTE [More layouts for the numba GEMM]), or None:
    - "nn": nn_rows, for a C-contiguous b of enough columns (`_tiles_columns`; a of any
      strides);
    - "nt": nt_rows, for a C-contiguous a with k >= MIN_K and b of at least NT_MIN_N columns,
      the transpose of a C-contiguous array or (fewer than NN_MIN_N columns) C-contiguous
      itself, then copied transposed;
    - "nn_copy": nn_rows on b copied C-contiguous (k x n values), for b of another layout with
      at least NN_MIN_N columns and a of at least COPY_MIN_M rows;
    - "t": the transposed product c^T = b^T a^T by nn_rows, for a transposed C-contiguous a of
      at least NN_MIN_N rows and b of NT_MIN_N to NN_MIN_N columns."""
    m, k = a.shape
    n = b.shape[1]
    if b.flags.c_contiguous and _tiles_columns(m, n):
        return "nn"
    if (a.flags.c_contiguous and k >= MIN_K and n >= NT_MIN_N
            and (b.T.flags.c_contiguous or b.flags.c_contiguous)):
        return "nt"
    if n >= NN_MIN_N and m >= COPY_MIN_M:
        return "nn_copy"
    if NT_MIN_N <= n and a.T.flags.c_contiguous and m >= NN_MIN_N:
        return "t"
    return None


def takes(a, b, out, min_macs=MIN_MACS):
    """Whether `matmul` computes a @ b (into out): 2-D float32 operands of a layout a kernel
    takes (`_kernel`), at least 8 rows and min_macs multiply-adds, a C-contiguous out apart from
    both, on a host where NOTE [A GEMM in numba] holds."""
    if not (ON[0] and _host_ok()):  # (first: elsewhere every product asks, and is refused here)
        return False
    if a.ndim != 2 or b.ndim != 2 or a.dtype != np.float32 or b.dtype != np.float32:
        return False
    m, k = a.shape
    n = b.shape[1]
    if b.shape[0] != k or m < 8 or m * n * k < min_macs or _kernel(a, b) is None:
        return False
    if out is not None and (out.dtype != np.float32 or out.shape != (m, n)
                            or not out.flags.c_contiguous or not out.flags.writeable
                            or np.may_share_memory(out, a) or np.may_share_memory(out, b)):
        return False
    return True


def matmul(a, b, out=None, bias=None, parts=True):
    """a @ b (+ bias, a C-contiguous (n,) row of a's dtype) for operands `takes` accepts; in two
    parts of rows on OpenBLAS's threads when `parts` and the product is big enough."""
    from ... import _blas_parts
    route = _kernel(a, b)
    m, n = a.shape[0], b.shape[1]
    if out is None:
        out = np.empty((m, n), a.dtype)
    has_bias = bias is not None
    if not has_bias:
        bias = _NO_BIAS[a.dtype]
    nt = route == "nt"
    if route == "t":  # c^T = b^T a^T into a scratch (n, m), then copied over
        left, right, target = b.T, a.T, np.empty((n, m), a.dtype)
    else:
        left, right, target = a, b, out
        if nt:
            right = b.T if b.T.flags.c_contiguous else np.ascontiguousarray(b.T)
        elif route == "nn_copy":
            right = np.ascontiguousarray(b)
    start = has_bias and route != "t"  # (the scratch's rows are the output's columns)
    rows, cols = target.shape
    if parts and m * n * a.shape[1] >= PARTS_MACS and _blas_parts.on("gemm"):
        if _cfunc_parts(left, right, nt, target, bias, start):
            pass  # NOTE [GEMM parts without the GIL]
        else:
            _blas_parts.run_ranges(_python_part(left, right, nt, target, bias, start),
                                   _groups(nt, rows, cols)[1])
    elif nt:
        nt_rows(left, right, target, bias, start, 0, rows)
    else:
        nn_rows(left, right, target, bias, start, 0, rows)
    if route == "t":
        out[...] = target.T
        if has_bias:
            out += bias
    return out


# NOTE [GEMM parts without the GIL]
# A product's two parts went to OpenBLAS's worker as a Python callable (`run_ranges`): the
# worker takes the GIL to reach the kernel, after the caller's Python has reached its own
# part's kernel. An LSTM time loop makes ~180 such products a step of ~80 us a part, and the
# caller waited ~20-40 us for the worker in each (/work/s35/busy.py under chrt -f 10: GNMT-S's
# step waited 12 ms in 179 calls). The parts are instead a numba cfunc of OpenBLAS's part
# signature (NOTE [Kernels on OpenBLAS's threads]), as layer norm's are: the operands travel as
# addresses in the int64 argument array, the part rebuilds them with the types the serial call
# has (a C-contiguous or transposed a, C-contiguous b and c) and runs the serial kernel on its
# groups of 4 rows, so the bits are those of the serial product. Other layouts keep the Python
# parts. A machine busy enough for a late worker (NOTE [A late worker]) runs the product on
# the calling thread alone while the solo period lasts.


def _groups(nt, rows, cols):
    """How a product's parts cut it: (by columns, number of groups). `nt_rows` and the
    streaming A B of few rows (`_nn_stream`) take groups of 4 rows (their tiles': the bits of
    the whole). The tiled A B gives the whole's bits at any cut and takes panels of NR columns
    when there are two or more (each part then copies only its own panels of b), else groups
    of MR rows."""
    if nt or rows < STREAM_ROWS:
        return False, -(-rows // 4)
    panels = -(-cols // NR)
    if panels >= 2:
        return True, panels
    return False, -(-rows // MR)


def _python_part(left, right, nt, target, bias, start):
    """The part(lo, hi) over `_groups`' groups that `run_ranges` calls."""
    rows, cols = target.shape
    by_cols, _ = _groups(nt, rows, cols)
    size = NR if by_cols else 4 if nt or rows < STREAM_ROWS else MR

    def part(lo, hi):
        lo, hi = lo * size, min(cols if by_cols else rows, hi * size)
        if nt:
            nt_rows(left, right, target, bias, start, lo, hi)
        elif by_cols:
            nn_block(left, right, target, bias, start, 0, rows, lo, hi)
        else:
            nn_block(left, right, target, bias, start, lo, hi, 0, cols)

    return part


def _cfunc_parts(left, right, nt, target, bias, start):
    """Run the product in parts by the cfunc of NOTE [GEMM parts without the GIL] when the
    operands' layouts allow; whether it did."""
    from ... import _blas_parts
    transposed = not left.flags.c_contiguous
    if ((transposed and not left.T.flags.c_contiguous) or not right.flags.c_contiguous
            or not target.flags.c_contiguous or (nt and transposed)
            or _blas_parts.late_solo(perf_counter())):
        return False
    rows, cols = target.shape
    by_cols, groups = _groups(nt, rows, cols)
    args = _blas_parts.arguments(13)
    args[1:] = (nt, left.ctypes.data, transposed, rows, left.shape[1], right.ctypes.data,
                right.shape[0], right.shape[1], target.ctypes.data, cols, bias.ctypes.data,
                start, by_cols)
    _blas_parts.run(_gemm_part().address, groups, args.ctypes.data, _blas_parts.threads())
    return True


_GEMM_PART: list = []


def _gemm_part():
    """The cfunc part of NOTE [GEMM parts without the GIL] (float32), made on first use."""
    if not _GEMM_PART:
        from ... import _blas_parts
        _GEMM_PART.append(numba.cfunc(_blas_parts.PART, nopython=True, cache=True)(_part))
    return _GEMM_PART[0]


def _part(m, n_, k_, alpha, a, lda, b_, ldb, c, ldc, sb):
    """Groups g0..g0+m-1 of `_groups`. Slots: 1 nt_rows (else nn_block), 2 a, 3 a transposed,
    4 rows, 5 k, 6 b, 7 and 8 b's shape, 9 c, 10 c's columns, 11 bias, 12 bias starts the
    sums, 13 groups of columns (else of rows)."""
    arg = numba.carray(as_ptr(c, numba.int64), (14,))
    g0 = a >> arg[0]
    rows, k, n = arg[4], arg[5], arg[10]
    f32 = numba.float32
    b = numba.carray(as_ptr(arg[6], f32), (arg[7], arg[8]))
    out = numba.carray(as_ptr(arg[9], f32), (rows, n))
    has_bias = arg[12] != 0
    bias = numba.carray(as_ptr(arg[11], f32), (n if has_bias else 1,))
    if arg[1] != 0:
        lo, hi = 4 * g0, min(rows, 4 * (g0 + m))
        _NT(numba.carray(as_ptr(arg[2], f32), (rows, k)), b, out, bias, has_bias, lo, hi)
        return
    lo, hi, jlo, jhi = 0, rows, 0, n
    size = 4 if rows < STREAM_ROWS else MR
    if arg[13] != 0:
        jlo, jhi = NR * g0, min(n, NR * (g0 + m))
    else:
        lo, hi = size * g0, min(rows, size * (g0 + m))
    if arg[3] != 0:
        _NN(numba.carray(as_ptr(arg[2], f32), (k, rows)).T, b, out, bias, has_bias, lo, hi, jlo,
            jhi)
    else:
        _NN(numba.carray(as_ptr(arg[2], f32), (rows, k)), b, out, bias, has_bias, lo, hi, jlo,
            jhi)


def _c_planes(x):
    """Whether every plane of a 3-D array is C-contiguous."""
    return x.strides[2] == x.itemsize and x.strides[1] == x.shape[2] * x.itemsize


def planes_matmul(a, b, out, parts=True):
    """a @ b into out for 3-D b and out with C-contiguous planes and a 3-D or 2-D (shared) a,
    plane by plane in the kernels of `_kernel`, in two halves of planes on OpenBLAS's threads
    when `parts` and big enough; returns out, or None when the operands do not fit (BLAS's)."""
    from ... import _blas_parts
    if (a.dtype != np.float32 or b.dtype != np.float32 or out.dtype != np.float32
            or b.ndim != 3 or out.ndim != 3 or a.ndim not in (2, 3) or not ON[0]):
        return None
    count, m, n = out.shape
    k = b.shape[1]
    if a.ndim == 2:
        a = np.broadcast_to(a, (count,) + a.shape)  # one plane shared: a zero step
    if (a.shape != (count, m, k) or b.shape[0] != count or m < 4 or count * m * n * k < MIN_MACS
            or not _c_planes(out) or not out.flags.writeable or np.may_share_memory(out, a)
            or np.may_share_memory(out, b) or not _host_ok()):
        return None
    if (_c_planes(b) and _tiles_columns(m, n)
            and (_c_planes(a) or _c_planes(a.transpose(0, 2, 1)))):
        a_t = not _c_planes(a)
        a3 = a.transpose(0, 2, 1) if a_t else a

        def part(lo, hi):
            nn_planes(a3, a_t, b, out, lo, hi)
    elif _c_planes(b.transpose(0, 2, 1)) and _c_planes(a) and k >= MIN_K and n >= NT_MIN_N:
        b3 = b.transpose(0, 2, 1)

        def part(lo, hi):
            nt_planes(a, b3, out, lo, hi)
    elif _c_planes(b) and _c_planes(a) and k >= MIN_K and n >= NT_MIN_N:

        def part(lo, hi):  # few columns: each plane of b copied transposed first
            nt_planes_copied(a, b, out, lo, hi)
    elif _c_planes(b.transpose(0, 2, 1)) and _c_planes(a) and n >= NN_MIN_N and m >= COPY_MIN_M:
        b3t = b.transpose(0, 2, 1)

        def part(lo, hi):  # a short k: each plane of b copied C-contiguous first
            nn_planes_copied(a, b3t, out, lo, hi)
    elif (_c_planes(b) and _c_planes(a.transpose(0, 2, 1)) and NT_MIN_N <= n < NN_MIN_N
            and m >= NN_MIN_N):
        a3t = a.transpose(0, 2, 1)

        def part(lo, hi):  # few columns and a transposed: the transposed products
            t_planes(a3t, b, out, lo, hi)
    else:
        return None
    if parts and count >= 2 and count * m * n * k >= PARTS_MACS and _blas_parts.on("gemm"):
        _blas_parts.run_ranges(part, count)
    else:
        part(0, count)
    return out
