"""exp, expm1, sigmoid and tanh that LLVM can vectorise inside numba kernels.

numba on this machine has no SVML, so ``math.exp`` inside a kernel loop is a scalar libm call and
the loop stays scalar, while NumPy's ufuncs are SIMD. These functions are plain arithmetic
(range reduction, a polynomial and the exponent built from integer bits), branch-free, so a loop
calling them vectorises; kernels that fuse a row's passes (softmax: max, exp, sum, scale) then
beat a chain of NumPy ufuncs instead of losing to it.

``vexp(x)`` etc. are generic over float32 / float64: each dtype gets its own polynomial, and
float32 is computed in float32 (twice the SIMD width). Accuracy (tests/ops/test_vmath.py): within
2 ulp of NumPy in float32 and a few ulp in float64, with NumPy's edge cases (inf, NaN, overflow
to inf, gradual underflow through the denormals to 0, -0.0).

NOTE [Fast-math and the range reduction]
A kernel that sums with ``fastmath={"reassoc"}`` must not inline these functions into the
reassociated loop: reassociation may fold ``(x - n*ln2_hi) - n*ln2_lo`` into
``x - n*(ln2_hi + ln2_lo)`` and lose the split that keeps r exact. Kernels therefore write the
exponentials in a plain loop and sum them with `row_sum`, a separate reassociating function.
"""

import numba
import numpy as np
from numba import types
from numba.extending import intrinsic, overload

# ---------------------------------------------------------------------------------------------
# NOTE [512-bit vectors]
# On AVX-512 CPUs of Intel's Skylake-X line (this machine's Xeon among them) LLVM's tuning tables
# say "prefer 256-bit", so numba's loops vectorise to 8 float32 lanes although the core has 16.
# For loops that are pure arithmetic on data in cache that halves the rate: GELU's erf kernels
# (~45 vector instructions per element) ran 1.10 / 1.19 ms forward / backward for 2^20 float32
# elements on one thread with 256-bit vectors and 0.82 / 0.80 ms with 512-bit ones, bit for bit
# the same results (each lane does the same arithmetic; only the lane count changes).
# `wide_vectors()`, called first in a kernel, sets LLVM's per-function "prefer-vector-width"
# attribute (what clang's -mprefer-vector-width=512 sets) on the function being compiled, so only
# the kernels that call it change; the numba target stays as it is for everything else. It is
# a hint: without AVX-512 the widest vectors the CPU has are used, as before. A kernel whose
# loop sums with fastmath "reassoc" adds in a different order with wider vectors (equal to
# rounding, not bit for bit); the kernels that call this do not. llvmlite's attribute set only
# accepts the attributes it knows by name, hence the plain set.add of the "key"="value" form
# (written into the function's definition as it is).
_WIDE_ATTRIBUTE = '"prefer-vector-width"="512"'


@intrinsic
def wide_vectors(typingctx):
    """Compile the calling kernel with 512-bit vectors where the CPU has them (NOTE [512-bit
    vectors]); no code of its own."""
    def codegen(context, builder, sig, args):
        set.add(builder.function.attributes, _WIDE_ATTRIBUTE)
        return context.get_dummy_value()
    return types.none(), codegen


# ---------------------------------------------------------------------------------------------
# constants. ln2 is split in a high part with few mantissa bits (so n * hi is exact for every n
# the clamp allows) and a low remainder (Cody and Waite's reduction).

_F32 = np.float32
_LOG2E_32 = _F32(1.4426950408889634)
_LN2_HI_32 = _F32(0.693359375)            # 355/512: 9 significant bits
_LN2_LO_32 = _F32(-2.1219444005469057e-4)  # ln 2 - 355/512
_LO_32, _HI_32 = _F32(-104.0), _F32(89.0)  # e^-104 rounds to 0, e^89 overflows float32
_HALF_32, _ONE_32, _TWO_32, _ZERO_32 = _F32(0.5), _F32(1.0), _F32(2.0), _F32(0.0)
# Taylor coefficients 1/k!, k = 2..7: on |r| <= ln2/2 the truncation error is below 1e-8
_C32 = tuple(_F32(1.0 / f) for f in (2, 6, 24, 120, 720, 5040))

_LOG2E_64 = 1.4426950408889634
_LN2_HI_64 = 6.93147180369123816490e-01  # 32 significant bits
_LN2_LO_64 = 1.90821492927058770002e-10
_LO_64, _HI_64 = -746.0, 710.0
# 1/k!, k = 2..13: truncation below 4e-18 relative on |r| <= ln2/2
_C64 = tuple(1.0 / f for f in (2, 6, 24, 120, 720, 5040, 40320, 362880, 3628800, 39916800,
                               479001600, 6227020800))


# ---------------------------------------------------------------------------------------------
# float32


@numba.njit(inline="always")
def _reduce32(x):
    """(n, r) with x = n ln2 + r, |r| <= ln2/2, for x already clamped to [_LO_32, _HI_32]."""
    n = np.floor(x * _LOG2E_32 + _HALF_32)
    r = (x - n * _LN2_HI_32) - n * _LN2_LO_32
    return n, r


@numba.njit(inline="always")
def _expm1_poly32(r):
    """e^r - 1 on |r| <= ln2/2, without the cancellation of e^r - 1."""
    c2, c3, c4, c5, c6, c7 = _C32
    return r + r * r * (c2 + r * (c3 + r * (c4 + r * (c5 + r * (c6 + r * c7)))))


@numba.njit(inline="always")
def _pow2_32(n):
    """2^n as two float32 factors, both normal for n in [-150, 128]: their product then rounds
    once, so results in the denormal range underflow gradually and n = 128 gives inf."""
    k = np.int32(n)
    half = k >> 1
    s1 = np.int32((half + 127) << 23).view(np.float32)
    s2 = np.int32((k - half + 127) << 23).view(np.float32)
    return s1, s2


@numba.njit(inline="always")
def _exp32(x):
    xc = x if x > _LO_32 else _LO_32  # NaN compares false and becomes _LO_32; restored below
    xc = xc if xc < _HI_32 else _HI_32
    n, r = _reduce32(xc)
    s1, s2 = _pow2_32(n)
    y = ((_ONE_32 + _expm1_poly32(r)) * s1) * s2
    return y if x == x else x


@numba.njit(inline="always")
def _expm1_32(x):
    """e^x - 1 for x in [-104, 89]: 2^n (1 + p) - 1 = 2^n p + (2^n - 1), where 2^n - 1 is exact
    for the n that matter (|n| <= 25) and the sum loses at most a bit for n = +-1."""
    n, r = _reduce32(x)
    s1, s2 = _pow2_32(n)
    s = s1 * s2
    return s * _expm1_poly32(r) + (s - _ONE_32)


# ---------------------------------------------------------------------------------------------
# float64


@numba.njit(inline="always")
def _reduce64(x):
    n = np.floor(x * _LOG2E_64 + 0.5)
    r = (x - n * _LN2_HI_64) - n * _LN2_LO_64
    return n, r


@numba.njit(inline="always")
def _expm1_poly64(r):
    c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13 = _C64
    p = c12 + r * c13
    p = c11 + r * p
    p = c10 + r * p
    p = c9 + r * p
    p = c8 + r * p
    p = c7 + r * p
    p = c6 + r * p
    p = c5 + r * p
    p = c4 + r * p
    p = c3 + r * p
    p = c2 + r * p
    return r + r * r * p


@numba.njit(inline="always")
def _pow2_64(n):
    k = np.int64(n)
    half = k >> 1
    s1 = np.int64((half + 1023) << 52).view(np.float64)
    s2 = np.int64((k - half + 1023) << 52).view(np.float64)
    return s1, s2


@numba.njit(inline="always")
def _exp64(x):
    xc = x if x > _LO_64 else _LO_64
    xc = xc if xc < _HI_64 else _HI_64
    n, r = _reduce64(xc)
    s1, s2 = _pow2_64(n)
    y = ((1.0 + _expm1_poly64(r)) * s1) * s2
    return y if x == x else x


@numba.njit(inline="always")
def _expm1_64(x):
    n, r = _reduce64(x)
    s1, s2 = _pow2_64(n)
    s = s1 * s2
    return s * _expm1_poly64(r) + (s - 1.0)


# ---------------------------------------------------------------------------------------------
# generic entry points (one name for both dtypes, resolved when a kernel is compiled)


def vexp(x):
    """e^x, vectorisable; see the module docstring."""
    return np.exp(x)


def vsigmoid(x):
    """1 / (1 + e^-x), vectorisable, without overflow for any x."""
    return 1.0 / (1.0 + np.exp(-x))


def vtanh(x):
    """tanh(x), vectorisable, relatively accurate near 0 (through expm1)."""
    return np.tanh(x)


def _is32(x):
    return isinstance(x, types.Float) and x.bitwidth == 32


@overload(vexp, inline="always")
def _ov_vexp(x):
    if isinstance(x, types.Float):
        return (lambda x: _exp32(x)) if _is32(x) else (lambda x: _exp64(x))
    return None


@overload(vsigmoid, inline="always")
def _ov_vsigmoid(x):
    # e = e^-|x| in (0, 1]: 1 / (1 + e) for x >= 0, e / (1 + e) below, so nothing overflows
    # and the small tail keeps its relative accuracy (1 - 1/(1 + e^x) would cancel)
    if _is32(x):
        def impl(x):
            e = _exp32(-abs(x))
            return (_ONE_32 if x >= _ZERO_32 else e) / (_ONE_32 + e) if x == x else x
        return impl
    if isinstance(x, types.Float):
        def impl(x):
            e = _exp64(-abs(x))
            return (1.0 if x >= 0.0 else e) / (1.0 + e) if x == x else x
        return impl
    return None


@overload(vtanh, inline="always")
def _ov_vtanh(x):
    # tanh|x| = e / (e + 2) with e = expm1(2|x|); past the clamp tanh is 1 to the last bit
    # (float32: 1 - tanh(9) < 2^-25; float64: 1 - tanh(19) < 2^-54). The sign is copied so that
    # -0.0 stays -0.0.
    if _is32(x):
        def impl(x):
            a = abs(x)
            a2 = _TWO_32 * (a if a < _F32(9.0) else _F32(9.0))
            e = _expm1_32(a2)
            t = e / (e + _TWO_32)
            t = t if a < _F32(9.0) else _ONE_32
            return np.copysign(t, x) if x == x else x
        return impl
    if isinstance(x, types.Float):
        def impl(x):
            a = abs(x)
            a2 = 2.0 * (a if a < 19.0 else 19.0)
            e = _expm1_64(a2)
            t = e / (e + 2.0)
            t = t if a < 19.0 else 1.0
            return np.copysign(t, x) if x == x else x
        return impl
    return None


# ---------------------------------------------------------------------------------------------
# elementwise kernels over flat contiguous arrays and the row helpers the fused kernels share


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _k_exp(x, out):
    for t in range(out.size):
        out[t] = vexp(x[t])


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _k_sigmoid(x, out):
    for t in range(out.size):
        out[t] = vsigmoid(x[t])


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _k_tanh(x, out):
    for t in range(out.size):
        out[t] = vtanh(x[t])


@numba.njit(nogil=True, cache=True, fastmath={"reassoc"})
def row_sum(v):
    """Sum of a 1-D array, vectorised (reassociated: see NOTE [Fast-math and the range
    reduction]); NaN and inf still propagate."""
    total = v.dtype.type(0)
    for k in range(v.size):
        total += v[k]
    return total


@numba.njit(inline="always")
def row_max(v):
    """Largest element of a non-empty 1-D array, NaN if it holds one (so a row with a NaN
    softmaxes to NaN, as in torch). Four independent running maxima: one is a chain of dependent
    compares that LLVM does not vectorise without fast-math (which would drop the NaN check)."""
    n = v.size
    m0 = m1 = m2 = m3 = v[0]
    nan = v[0] != v[0]
    k = 0
    while k + 4 <= n:
        a, b, c, d = v[k], v[k + 1], v[k + 2], v[k + 3]
        nan |= (a != a) | (b != b) | (c != c) | (d != d)
        m0 = a if a > m0 else m0
        m1 = b if b > m1 else m1
        m2 = c if c > m2 else m2
        m3 = d if d > m3 else m3
        k += 4
    for j in range(k, n):
        a = v[j]
        nan |= a != a
        m0 = a if a > m0 else m0
    m0 = m1 if m1 > m0 else m0
    m2 = m3 if m3 > m2 else m2
    m0 = m2 if m2 > m0 else m0
    if nan:
        for j in range(n):
            if v[j] != v[j]:
                m0 = v[j]
    return m0


@numba.njit(nogil=True, cache=True, fastmath={"reassoc"})
def row_dot(a, b):
    """sum(a * b) of two 1-D arrays, vectorised like `row_sum`."""
    total = a.dtype.type(0)
    for k in range(a.size):
        total += a[k] * b[k]
    return total


def _flat_apply(kernel, ufunc, x):
    """kernel over a float32/float64 array (any layout: copied to C order first), else ufunc."""
    if x.dtype not in (np.float32, np.float64):
        return ufunc(x)
    xc = np.ascontiguousarray(x)
    out = np.empty_like(xc)
    kernel(xc.reshape(-1), out.reshape(-1))
    return out


def exp(x):
    """NumPy-compatible exp of a float array through `vexp`."""
    return _flat_apply(_k_exp, np.exp, x)


def sigmoid(x):
    return _flat_apply(_k_sigmoid, lambda a: 1 / (1 + np.exp(-a)), x)


def tanh(x):
    return _flat_apply(_k_tanh, np.tanh, x)
