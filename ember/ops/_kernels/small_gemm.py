"""A small batch's Linear products in numba: NOTE [A small Linear in numba].
"""

# NOTE [A small Linear in numba]
# A Linear on a handful of rows (the 3x256 MLP at batch 8, a 16-token prefill) is a product too
# small for BLAS's blocking to pay: OpenBLAS takes x @ W^T (its "TN" case) in ~17 us for 8 x 256
# x 256 on one thread with its AVX2 kernels and ~30 us with its AVX-512 ones, where ~1 MFLOP is
# ~5 us of a core's FMA units. Written as plain loops, numba compiles these products for the
# host's vector width, and on an AVX-512 CPU they are faster than OpenBLAS on one thread:
# - the forward, y = x W^T + b: each output is the dot product of a weight row with an input
#   row; four weight rows against two input rows at a time (eight running sums, the additions
#   reassociated so that LLVM vectorises along the inputs) share every load;
# - the input gradient, dx = G W: rows of G times W, four rows of W into two rows of dx at a
#   time, vectorised along dx's row. OpenBLAS's own AVX-512 kernels do this case well (5 us),
#   its AVX2 ones not (18 us), so it runs here only under the AVX2 ones (a machine that pins
#   OPENBLAS_CORETYPE=Haswell on an AVX-512 CPU, as this project's EPYC does).
# - the weight gradient, dW = G^T X: four rows of dW at a time, eight rows of G and X per pass
#   (then four, then one), vectorised along dW's row; under the AVX2 OpenBLAS only, like dx
#   (its AVX-512 kernels take 5.6 us), from 4 rows and 96 inputs: with fewer inputs the
#   vectorised row is short and one-thread BLAS is as fast or faster (30 inputs 0.47x, 64
#   inputs 0.96-1.0x; 3 rows 0.87x). float32 8x256x256: 11.6 (pinned) -> 7.5 us; 8x784x128
#   17.1 -> 7.9; 32x256x256 35.5 -> 26.6; the MLP step off/on 1.048-1.054 (/work/s32/ab_wg.py,
#   one process, 40 interleaved pairs of 100 steps, load 0.8).
# Measured on the AMD EPYC Zen 5, one thread, best of 9 x 2000 calls (/work/s31/dx2.py):
#   float32 8x256x256: forward 16.7 (OpenBLAS pinned) / 30.2 (unpinned) -> 6.5 us;
#   dx 18.3 (pinned) -> 8.7 us (unpinned OpenBLAS 5.1); 32x256x256: forward 42.5 -> 25.7,
#   dx 43.3 -> 32.7; 64x128x128 even (hence at most SMALL_ROWS rows); float64 alike.
# Whole Linear layers, path off/on (/work/s31/lin_sweep.py, thread time): forward 1.26-2.19x
# and forward+backward 1.07-1.32x faster over twelve small shapes (batch 4-32, 2-784 inputs,
# 10-512 outputs), one a little slower (32 rows, 30 -> 200: 0.93 / 0.96). The same kernels
# behind a general 2-D matmul were not kept: there the vectorised axis is whatever b's is, and
# x @ W with 27 columns ran 7.0 -> 12.5 us.
# Without AVX-512 (or under MKL's small path on Intel: NOTE [A small Linear on MKL] in
# ops/nn/linear.py) the BLAS paths stay. The sums run in another order than BLAS's, so results
# differ from it by rounding (tests compare them with float64 products).

import numba

SMALL_ROWS = 32
# the weight gradient's kernel: from 4 rows and 96 inputs (fewer lost to one-thread BLAS)
WEIGHT_GRAD_ROWS = 4
WEIGHT_GRAD_MIN_IN = 96
_FM = {"reassoc", "contract"}


@numba.njit(nogil=True, cache=True, fastmath=_FM)
def linear_forward(x, w, bias, has_bias, out):
    """out = x @ w^T (+ bias) for C-contiguous x (m, k), w (n, k), bias (n,), out (m, n)."""
    m, k = x.shape
    n = w.shape[0]
    m2 = m - m % 2
    n4 = n - n % 4
    z = x.dtype.type(0)
    # (the loops' bounds as n - 3 and m - 1: bounds computed as n4 and m2 kept LLVM from
    # vectorising input_grad's inner loop, 66 against 9 us)
    for o in range(0, n - 3, 4):
        for r in range(0, m - 1, 2):
            a0 = z
            a1 = z
            a2 = z
            a3 = z
            b0 = z
            b1 = z
            b2 = z
            b3 = z
            for i in range(k):
                u = x[r, i]
                v = x[r + 1, i]
                w0 = w[o, i]
                w1 = w[o + 1, i]
                w2 = w[o + 2, i]
                w3 = w[o + 3, i]
                a0 += w0 * u
                a1 += w1 * u
                a2 += w2 * u
                a3 += w3 * u
                b0 += w0 * v
                b1 += w1 * v
                b2 += w2 * v
                b3 += w3 * v
            out[r, o] = a0
            out[r, o + 1] = a1
            out[r, o + 2] = a2
            out[r, o + 3] = a3
            out[r + 1, o] = b0
            out[r + 1, o + 1] = b1
            out[r + 1, o + 2] = b2
            out[r + 1, o + 3] = b3
    # the odd last row and the last n % 4 outputs: one sum at a time
    for r in range(m):
        for o in range(n4 if r < m2 else 0, n):
            t = z
            for i in range(k):
                t += w[o, i] * x[r, i]
            out[r, o] = t
    if has_bias:
        for r in range(m):
            for o in range(n):
                out[r, o] += bias[o]


@numba.njit(nogil=True, cache=True, fastmath=_FM)
def input_grad(g, w, out):
    """out = g @ w for C-contiguous g (m, n), w (n, k), out (m, k)."""
    m, n = g.shape
    k = w.shape[1]
    m2 = m - m % 2
    n4 = n - n % 4
    out[:] = 0
    # (the loops' bounds as n - 3 and m - 1: bounds computed as n4 and m2 kept LLVM from
    # vectorising input_grad's inner loop, 66 against 9 us)
    for o in range(0, n - 3, 4):
        for r in range(0, m - 1, 2):
            a0 = g[r, o]
            a1 = g[r, o + 1]
            a2 = g[r, o + 2]
            a3 = g[r, o + 3]
            b0 = g[r + 1, o]
            b1 = g[r + 1, o + 1]
            b2 = g[r + 1, o + 2]
            b3 = g[r + 1, o + 3]
            for i in range(k):
                w0 = w[o, i]
                w1 = w[o + 1, i]
                w2 = w[o + 2, i]
                w3 = w[o + 3, i]
                out[r, i] += a0 * w0 + a1 * w1 + a2 * w2 + a3 * w3
                out[r + 1, i] += b0 * w0 + b1 * w1 + b2 * w2 + b3 * w3
    for r in range(m):
        for o in range(n4 if r < m2 else 0, n):
            a = g[r, o]
            for i in range(k):
                out[r, i] += a * w[o, i]



@numba.njit(nogil=True, cache=True, fastmath=_FM)
def weight_grad(g, x, out):
    """out = g^T @ x for C-contiguous g (m, n), x (m, k), out (n, k)."""
    m, n = g.shape
    # four rows of out at a time, eight (then four, then one) rows of g and x per pass along
    # out's rows; the first pass stores, the others add. `add` is a constant in each call, so
    # that each inlined pass is a loop without a branch (a branch on r inside the loop kept LLVM
    # from vectorising it, 5x slower; zeroing out before passes that all add, 1.5x slower)
    for o in range(0, n - 3, 4):
        if m >= 8:
            _pass8(g, x, out, o, 0, False)
            r = 8
        elif m >= 4:
            _pass4(g, x, out, o, 0, False)
            r = 4
        elif m >= 1:
            _pass1(g, x, out, o, 0, False)
            r = 1
        else:
            out[o:o + 4] = 0
            r = 0
        while r + 8 <= m:
            _pass8(g, x, out, o, r, True)
            r += 8
        if r + 4 <= m:
            _pass4(g, x, out, o, r, True)
            r += 4
        while r < m:
            _pass1(g, x, out, o, r, True)
            r += 1
    # the last n % 4 rows of out: one at a time
    for o in range(n - n % 4, n):
        out[o] = 0
        for r in range(m):
            a = g[r, o]
            for i in range(x.shape[1]):
                out[o, i] += a * x[r, i]


@numba.njit(nogil=True, fastmath=_FM, inline="always")
def _pass8(g, x, out, o, r, add):
    """Rows o..o+3 of out (+)= rows r..r+7 of g's columns o..o+3 times rows r..r+7 of x."""
    a0, a1, a2, a3 = g[r, o], g[r, o + 1], g[r, o + 2], g[r, o + 3]
    b0, b1, b2, b3 = g[r + 1, o], g[r + 1, o + 1], g[r + 1, o + 2], g[r + 1, o + 3]
    c0, c1, c2, c3 = g[r + 2, o], g[r + 2, o + 1], g[r + 2, o + 2], g[r + 2, o + 3]
    d0, d1, d2, d3 = g[r + 3, o], g[r + 3, o + 1], g[r + 3, o + 2], g[r + 3, o + 3]
    e0, e1, e2, e3 = g[r + 4, o], g[r + 4, o + 1], g[r + 4, o + 2], g[r + 4, o + 3]
    f0, f1, f2, f3 = g[r + 5, o], g[r + 5, o + 1], g[r + 5, o + 2], g[r + 5, o + 3]
    h0, h1, h2, h3 = g[r + 6, o], g[r + 6, o + 1], g[r + 6, o + 2], g[r + 6, o + 3]
    q0, q1, q2, q3 = g[r + 7, o], g[r + 7, o + 1], g[r + 7, o + 2], g[r + 7, o + 3]
    for i in range(x.shape[1]):
        u, v, s, t = x[r, i], x[r + 1, i], x[r + 2, i], x[r + 3, i]
        u2, v2, s2, t2 = x[r + 4, i], x[r + 5, i], x[r + 6, i], x[r + 7, i]
        p0 = (a0 * u + b0 * v + c0 * s + d0 * t) + (e0 * u2 + f0 * v2 + h0 * s2 + q0 * t2)
        p1 = (a1 * u + b1 * v + c1 * s + d1 * t) + (e1 * u2 + f1 * v2 + h1 * s2 + q1 * t2)
        p2 = (a2 * u + b2 * v + c2 * s + d2 * t) + (e2 * u2 + f2 * v2 + h2 * s2 + q2 * t2)
        p3 = (a3 * u + b3 * v + c3 * s + d3 * t) + (e3 * u2 + f3 * v2 + h3 * s2 + q3 * t2)
        _store4(out, o, i, p0, p1, p2, p3, add)


@numba.njit(nogil=True, fastmath=_FM, inline="always")
def _pass4(g, x, out, o, r, add):
    """`_pass8` over rows r..r+3."""
    a0, a1, a2, a3 = g[r, o], g[r, o + 1], g[r, o + 2], g[r, o + 3]
    b0, b1, b2, b3 = g[r + 1, o], g[r + 1, o + 1], g[r + 1, o + 2], g[r + 1, o + 3]
    c0, c1, c2, c3 = g[r + 2, o], g[r + 2, o + 1], g[r + 2, o + 2], g[r + 2, o + 3]
    d0, d1, d2, d3 = g[r + 3, o], g[r + 3, o + 1], g[r + 3, o + 2], g[r + 3, o + 3]
    for i in range(x.shape[1]):
        u, v, s, t = x[r, i], x[r + 1, i], x[r + 2, i], x[r + 3, i]
        _store4(out, o, i, a0 * u + b0 * v + c0 * s + d0 * t, a1 * u + b1 * v + c1 * s + d1 * t,
                a2 * u + b2 * v + c2 * s + d2 * t, a3 * u + b3 * v + c3 * s + d3 * t, add)


@numba.njit(nogil=True, fastmath=_FM, inline="always")
def _pass1(g, x, out, o, r, add):
    """`_pass8` over row r alone."""
    a0, a1, a2, a3 = g[r, o], g[r, o + 1], g[r, o + 2], g[r, o + 3]
    for i in range(x.shape[1]):
        u = x[r, i]
        _store4(out, o, i, a0 * u, a1 * u, a2 * u, a3 * u, add)


@numba.njit(nogil=True, fastmath=_FM, inline="always")
def _store4(out, o, i, p0, p1, p2, p3, add):
    if add:
        out[o, i] += p0
        out[o + 1, i] += p1
        out[o + 2, i] += p2
        out[o + 3, i] += p3
    else:
        out[o, i] = p0
        out[o + 1, i] = p1
        out[o + 2, i] = p2
        out[o + 3, i] = p3

_AVX512_BLAS = ("skylakex", "cooperlake", "sapphirerapids")
_host: list = []


def _host_kinds():
    """(the CPU has AVX-512 for numba's code, OpenBLAS runs AVX-512 kernels), probed once."""
    if not _host:
        import llvmlite.binding as llvm
        try:
            features = llvm.get_host_cpu_features()
            avx512 = features.get("avx512f", False)
        except RuntimeError:  # llvmlite cannot read the features on this host
            avx512 = False
        # numba compiles for another CPU when NUMBA_CPU_NAME / NUMBA_CPU_FEATURES say so (a
        # portable cache): then its features, not the host's, decide
        if numba.config.CPU_FEATURES is not None:
            avx512 = "+avx512f" in numba.config.CPU_FEATURES.split(",")
        elif numba.config.CPU_NAME not in (None, "host"):
            avx512 = False
        blas512 = False
        try:
            from threadpoolctl import threadpool_info
            blas512 = any(str(i.get("architecture", "")).lower() in _AVX512_BLAS
                          for i in threadpool_info() if i.get("internal_api") == "openblas")
        except (ImportError, OSError, RuntimeError):  # no BLAS info: assume the better BLAS
            blas512 = True
        _host.extend((bool(avx512), blas512))
    return _host


ON = [True]  # a switch for A/Bs and tests


def forward_ok():
    """Whether the forward kernel beats BLAS here (an AVX-512 host)."""
    return ON[0] and _host_kinds()[0]


def input_grad_ok():
    """Whether the input-gradient kernel beats BLAS here (AVX-512 host, AVX2 OpenBLAS)."""
    return ON[0] and _host_kinds()[0] and not _host_kinds()[1]
