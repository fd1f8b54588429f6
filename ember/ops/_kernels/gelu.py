"""GELU forward and backward in one vectorised pass each (float32 erf form; both dtypes for
the tanh form), instead of a chain of NumPy / SciPy ufuncs and, in the backward, ember ops.

The erf form needs Phi(x) = (1 + erf(x / sqrt 2)) / 2 in a loop that vectorises, so it is
computed here (float32 only; float64 inputs keep SciPy's erf) from one tail formula for every x:
Phi(-|x|) = erfc(z) / 2 = e^(-z^2) R(t) / 2 with z = |x| / sqrt 2 and t = 1 / (1 + z / 2), and
Phi(|x|) = 1 - Phi(-|x|). R (degree 10) is a least-squares Chebyshev fit of erfc(z) e^(z^2)
over all of z in [0, 10.5] made for this file (max relative error 8.1e-9, below float32's
6e-8; z is clamped to 10.5 inside R, where e^(-z^2) is already far below float32's smallest
denormal). Near x = 0, Phi is close to 1/2, so 1 - Phi(-|x|) loses nothing there; one formula
instead of a separate small-z branch (evaluated for every element, as vector code evaluates
both sides of a select) is ~20 % less arithmetic per element. e^(-z^2) = e^(-x^2/2) is also
the Gaussian density the backward needs: d/dx x Phi(x) = Phi(x) + x phi(x).

All of it is evaluated in float32 (16 SIMD lanes instead of float64's 8: 2.6x faster than the
float64 evaluation rounded once that this replaced, 1.3 against 3.4 ms for 2^20 elements on one
core, busy machine), with two guards for the precision float32 would otherwise lose:
* e^(-x^2/2) is taken as e^(a + c) with a = -xh^2/2 exact (xh = x's top 12 significand bits)
  and c = -(x + xh)(x - xh)/2 added after the range reduction (`_gauss32`), so the rounding of
  x^2 does not grow with x^2 (otherwise hundreds of ulp at x = -5);
* the polynomial is the same fit, rounded to float32 coefficients.
Measured against x Phi(x) in float64 on 2e6 points of [-14, 14]: within 9 ulp (9.2 with the FMAs
of NOTE [Fused multiply-adds in GELU]; median 0.3 ulp,
as with the earlier two-branch form; 1.15 against 1.45 ms for 2^20 elements, one core, busy
machine); torch's
float32 x (1 + erf(x / sqrt 2)) / 2 loses far more to cancellation for negative x.
"""

import math

import numba
import numpy as np

from ... import _blas_parts, _onepool
from ..._kernel_threads import parallel_range
from .vmath import (
    _LN2_HI_32,
    _LN2_LO_32,
    _LOG2E_32,
    _expm1_poly32,
    _pow2_32,
    vtanh,
    wide_vectors,
)

_OPTS = {"nogil": True, "cache": True, "error_model": "numpy"}
# NOTE [Fused multiply-adds in GELU]
# numba compiles without LLVM's `contract` flag, so every a * b + c of the polynomials and the
# range reduction was a multiply and a separate add. Allowing contraction into FMA instructions
# (one rounding instead of two: never less accurate, and no reassociation, so the Cody-Waite
# split of NOTE [Fast-math and the range reduction] in vmath.py keeps its exactness) cut the
# float32 erf kernels by a quarter (one thread, 2^20 elements: forward 1.18 -> 0.88 ms,
# backward 1.24 -> 0.91 ms) at the same accuracy (2e6 points of [-14, 14] against float64
# x Phi(x): max 9.0 -> 9.2 ulp, median 0.30 -> 0.29, as measured in the docstring's way).
# The tanh form keeps separate roundings: its backward's 1 - tanh^2 rounds to the 0 torch gets
# for large |x| only that way (with an FMA it keeps tanh's last-bit error, ~1e-7).
_CONTRACT = {"contract"}
_INV_SQRT2 = 1 / math.sqrt(2)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_TANH_K = math.sqrt(2 / math.pi)
_TANH_C = 0.044715


# erfc(z) e^(z^2) as a polynomial in u = 1 / (1 + z/2), highest degree first (z in [0, 10.5])
_TAIL = (0.027763974614428363, -0.20959977069642774, 0.6389161158923006, -0.9624770965005381,
         0.6788941008045349, -0.24789544037075684, 0.2833667522906046, 0.2239803270414691,
         0.28518794461304686, 0.28185500299441363, 8.084747310894305e-06)

_F32 = np.float32
_TAIL32 = tuple(_F32(c) for c in _TAIL)
_R2_32, _HALF32, _ONE32 = _F32(_INV_SQRT2), _F32(0.5), _F32(1.0)
_ZCLAMP32, _XLO32, _XCLAMP32 = _F32(10.5), _F32(-16.0), _F32(16.0)
_EXP_LO32, _DENS32 = _F32(-104.0), _F32(_INV_SQRT_2PI)
_TOP12 = np.int32(-4096)  # clears the low 12 of float32's 23 significand bits


@numba.njit(inline="always")
def _horner32(coefs, u):
    acc = coefs[0]
    for c in coefs[1:]:
        acc = acc * u + c
    return acc


@numba.njit(inline="always")
def _gauss32(x):
    """e^(-x^2 / 2) in float32 for finite |x| <= 16, without the rounding error of x^2 (see
    the module docstring): e^(a + c), c folded in after the Cody-Waite reduction of a + c."""
    xh = np.int32(np.float32(x).view(np.int32) & _TOP12).view(np.float32)
    a_full = -_HALF32 * (xh * xh)          # exact: xh has 12 significant bits
    c = -_HALF32 * ((x + xh) * (x - xh))   # x^2 - xh^2, small
    a = a_full if a_full > _EXP_LO32 else _EXP_LO32  # e^-104 rounds to 0 in float32
    n = np.floor((a + c) * _LOG2E_32 + _HALF32)
    r = ((a - n * _LN2_HI_32) - n * _LN2_LO_32) + c
    s1, s2 = _pow2_32(n)
    return ((_ONE32 + _expm1_poly32(r)) * s1) * s2


@numba.njit(inline="always")
def _cdf_and_gauss32(x):
    """(Phi(x), e^(-x^2 / 2)) in float32 for a float32 x (NaN and +-inf: see the callers)."""
    # NaN becomes -16 (the caller's x * ... stays NaN); +-inf become +-16
    lo = x if x > _XLO32 else _XLO32
    xc = lo if lo < _XCLAMP32 else _XCLAMP32
    z = abs(xc) * _R2_32
    gauss = _gauss32(xc)
    zc = z if z < _ZCLAMP32 else _ZCLAMP32
    half_erfc = _HALF32 * gauss * _horner32(_TAIL32, _ONE32 / (_ONE32 + _HALF32 * zc))
    cdf = half_erfc if xc < 0 else _ONE32 - half_erfc
    return cdf, gauss


@_onepool.twin(error_model="numpy", fastmath=_CONTRACT)
def _k_gelu_fwd(x, out):
    wide_vectors()  # NOTE [512-bit vectors] in vmath.py
    for t in numba.prange(out.size):
        v = x[t]
        cdf, _ = _cdf_and_gauss32(v)
        out[t] = v * cdf


@_onepool.twin(error_model="numpy", fastmath=_CONTRACT)
def _k_gelu_bwd(g, x, out):
    wide_vectors()  # NOTE [512-bit vectors] in vmath.py
    for t in numba.prange(out.size):
        v = x[t]
        cdf, gauss = _cdf_and_gauss32(v)
        out[t] = g[t] * (cdf + v * gauss * _DENS32)


@_onepool.twin(error_model="numpy")
def _k_gelu_tanh_fwd(x, out):
    wide_vectors()
    # computed in x's dtype, as torch does
    k, c, half, one = (x.dtype.type(_TANH_K), x.dtype.type(_TANH_C), x.dtype.type(0.5),
                       x.dtype.type(1))
    for t in numba.prange(out.size):
        v = x[t]
        out[t] = half * v * (one + vtanh(k * (v + c * v * v * v)))


@_onepool.twin(error_model="numpy")
def _k_gelu_tanh_bwd(g, x, out):
    wide_vectors()
    k, c, half, one = (x.dtype.type(_TANH_K), x.dtype.type(_TANH_C), x.dtype.type(0.5),
                       x.dtype.type(1))
    c3 = x.dtype.type(3 * _TANH_C)
    for t in numba.prange(out.size):
        v = x[t]
        th = vtanh(k * (v + c * v * v * v))
        d = half * (one + th) + half * v * (one - th * th) * k * (one + c3 * v * v)
        out[t] = g[t] * d


def fused(x, approximate):
    """Whether these kernels compute gelu of array x (else the caller's NumPy/SciPy path)."""
    kinds = (np.float32, np.float64) if approximate == "tanh" else (np.float32,)
    return x.dtype in kinds and x.size > 0


# elements per part on the kernel threads (~20-40 us of work): NOTE [Kernel threads]
_GRAIN = 1 << 15


def gelu_forward(x, approximate, out):
    """gelu of C-contiguous x into out (same shape and dtype): with the one pool on, the twin
    kernel (parallel from its min_work; NOTE [One pool]), else on the kernel threads or, when
    its parts are on, OpenBLAS's (NOTE [Python parts on OpenBLAS's threads])."""
    kernel = _k_gelu_tanh_fwd if approximate == "tanh" else _k_gelu_fwd
    xf, of = x.reshape(-1), out.reshape(-1)
    if _onepool.enabled():  # never two pools at once
        kernel.pick(of.size)(xf, of)
        return out
    if of.size >= 2 * _GRAIN and _blas_parts.on("gelu"):
        _in_parts(kernel, of, xf)  # NOTE [GELU parts without the GIL]
        return out
    parallel_range(lambda lo, hi: kernel.serial(xf[lo:hi], of[lo:hi]), of.size, _GRAIN)
    return out


def gelu_backward(grad, x, approximate, out):
    """dL/dx of gelu given dL/dy; all C-contiguous of one shape and dtype (pools as in
    `gelu_forward`)."""
    kernel = _k_gelu_tanh_bwd if approximate == "tanh" else _k_gelu_bwd
    gf, xf, of = grad.reshape(-1), x.reshape(-1), out.reshape(-1)
    if _onepool.enabled():
        kernel.pick(of.size)(gf, xf, of)
        return out
    if of.size >= 2 * _GRAIN and _blas_parts.on("gelu"):
        _in_parts(kernel, of, gf, xf)  # NOTE [GELU parts without the GIL]
        return out
    parallel_range(lambda lo, hi: kernel.serial(gf[lo:hi], xf[lo:hi], of[lo:hi]), of.size,
                   _GRAIN)
    return out


# NOTE [GELU parts without the GIL]
# On OpenBLAS's worker (user "gelu" of ember/_blas_parts.py) the parts are numba cfuncs of
# OpenBLAS's part signature, as layer norm's (NOTE [Layer norm parts without the GIL] in
# norm.py): the flat arrays travel as addresses, the range is cut into runs of _GRAIN elements
# (the last one shorter) and each part calls the serial kernel on its runs' span, so no part
# takes the GIL and every element gets the serial kernel's value. The inputs here are flat
# C-contiguous arrays of the kernel's dtype (the callers' contract).
_PARTS = {}


def _in_parts(kernel, out, *inputs):
    """kernel.serial(*inputs, out) over `out` in parts on OpenBLAS's threads."""
    args = _blas_parts.arguments(4)
    args[1:5] = (out.size, out.ctypes.data, inputs[0].ctypes.data, inputs[-1].ctypes.data)
    runs = -(-out.size // _GRAIN)
    _blas_parts.run(_part(kernel, len(inputs), out.dtype).address, runs, args.ctypes.data,
                    _blas_parts.threads())


def _part(kernel, n_inputs, dt):
    """The compiled part calling `kernel` (one of this file's twins) with 1 or 2 inputs."""
    key = (kernel.__name__, np.dtype(dt))
    fn = _PARTS.get(key)
    if fn is None:
        make = _part_of_one if n_inputs == 1 else _part_of_two
        fn = _PARTS[key] = numba.cfunc(_blas_parts.PART, nopython=True, cache=True)(
            make(kernel.serial, np.dtype(dt)))
    return fn


_as_ptr = _blas_parts.as_ptr


@numba.njit(inline="always")
def _span(c, a, m, grain):
    """(argument slots, first element, length) of the part's runs a.. (m runs of grain)."""
    arg = numba.carray(_as_ptr(c, numba.int64), (5,))
    lo = (a >> arg[0]) * grain
    return arg, lo, min(m * grain, arg[1] - lo)


@numba.njit(inline="always")
def _flat(addr, lo, n, kind, item):
    """The n elements from element lo of the flat array at addr."""
    return numba.carray(_as_ptr(addr + lo * item, kind), (n,))


def _part_of_one(serial, dt):
    """Runs a..a+m-1 of serial(x, out). Slots: 1 size, 2 out, 3 x, 4 x."""
    kind, item, grain = numba.from_dtype(dt), dt.itemsize, _GRAIN

    def part(m, n_, k_, alpha, a, lda, b_, ldb, c, ldc, sb):
        wide_vectors()  # the serial kernel may be inlined here
        arg, lo, n = _span(c, a, m, grain)
        serial(_flat(arg[3], lo, n, kind, item), _flat(arg[2], lo, n, kind, item))

    return part


def _part_of_two(serial, dt):
    """Runs a..a+m-1 of serial(g, x, out). Slots: 1 size, 2 out, 3 g, 4 x."""
    kind, item, grain = numba.from_dtype(dt), dt.itemsize, _GRAIN

    def part(m, n_, k_, alpha, a, lda, b_, ldb, c, ldc, sb):
        wide_vectors()
        arg, lo, n = _span(c, a, m, grain)
        serial(_flat(arg[3], lo, n, kind, item), _flat(arg[4], lo, n, kind, item),
               _flat(arg[2], lo, n, kind, item))

    return part
