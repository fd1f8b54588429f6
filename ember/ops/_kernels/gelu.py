"""GELU forward and backward in one vectorised pass each (float32 erf form; both dtypes for
the tanh form), instead of a chain of NumPy / SciPy ufuncs and, in the backward, ember ops.

The erf form needs Phi(x) = (1 + erf(x / sqrt 2)) / 2 in a loop that vectorises, so it is
computed here (in float64, rounded once to float32; float64 inputs keep SciPy's erf):
* |x| / sqrt 2 = z < 0.8: erf(z) = z P(z^2);
* otherwise Phi(-|x|) = erfc(z) / 2 = e^(-z^2) R(t) / 2 with t = 1 / (1 + z / 2).
P (degree 6) and R (degree 12) are least-squares Chebyshev fits made for this file (max
relative error 2.2e-10 and 2.7e-11 on their ranges; z is clamped to 10.5 inside R, where
e^(-z^2) is already far below float32's smallest denormal). e^(-z^2) = e^(-x^2/2) is also the
Gaussian density the backward needs: d/dx x Phi(x) = Phi(x) + x phi(x).
"""

import math

import numba
import numpy as np

from .vmath import _exp64, vtanh

_OPTS = {"nogil": True, "cache": True, "error_model": "numpy"}
_INV_SQRT2 = 1 / math.sqrt(2)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_TANH_K = math.sqrt(2 / math.pi)
_TANH_C = 0.044715


@numba.njit(inline="always")
def _small(u):
    """erf(z) / z as a polynomial in u = z^2 (Horner, unrolled so that it vectorises)."""
    acc = 9.260563745225793e-05
    acc = acc * u + -0.000832357451770406
    acc = acc * u + 0.0052148260532179835
    acc = acc * u + -0.026864247045864837
    acc = acc * u + 0.11283772423108002
    acc = acc * u + -0.37612638183631825
    acc = acc * u + 1.1283791670518881
    return acc


@numba.njit(inline="always")
def _tail(u):
    """erfc(z) e^(z^2) as a polynomial in u = 1 / (1 + z/2)."""
    acc = -0.0006769979343553394
    acc = acc * u + 0.07674306010722923
    acc = acc * u + -0.3873060792025986
    acc = acc * u + 0.8085673123453142
    acc = acc * u + -0.8320147441342344
    acc = acc * u + 0.4202619488110873
    acc = acc * u + -0.20579655404012034
    acc = acc * u + 0.1439647498670542
    acc = acc * u + 0.16353999772233033
    acc = acc * u + 0.24871341637374503
    acc = acc * u + 0.2819118764808842
    acc = acc * u + 0.2821053533050941
    acc = acc * u + -2.73878022982732e-07
    return acc


@numba.njit(inline="always")
def _cdf_and_gauss(x):
    """(Phi(x), e^(-x^2 / 2)) in float64 for a float64 x."""
    z = abs(x) * _INV_SQRT2
    gauss = _exp64(-z * z)
    zc = z if z < 10.5 else 10.5
    half_erfc = 0.5 * gauss * _tail(1.0 / (1.0 + 0.5 * zc))
    near = 0.5 + 0.5 * (x * _INV_SQRT2) * _small(z * z)
    far = half_erfc if x < 0.0 else 1.0 - half_erfc
    return (near if z < 0.8 else far), gauss


@numba.njit(**_OPTS)
def _k_gelu_fwd(x, out):
    for t in range(out.size):
        v = np.float64(x[t])
        cdf, _ = _cdf_and_gauss(v)
        out[t] = v * cdf


@numba.njit(**_OPTS)
def _k_gelu_bwd(g, x, out):
    for t in range(out.size):
        v = np.float64(x[t])
        cdf, gauss = _cdf_and_gauss(v)
        out[t] = g[t] * (cdf + v * gauss * _INV_SQRT_2PI)


@numba.njit(**_OPTS)
def _k_gelu_tanh_fwd(x, out):
    # computed in x's dtype, as torch does
    k, c, half, one = (x.dtype.type(_TANH_K), x.dtype.type(_TANH_C), x.dtype.type(0.5),
                       x.dtype.type(1))
    for t in range(out.size):
        v = x[t]
        out[t] = half * v * (one + vtanh(k * (v + c * v * v * v)))


@numba.njit(**_OPTS)
def _k_gelu_tanh_bwd(g, x, out):
    k, c, half, one = (x.dtype.type(_TANH_K), x.dtype.type(_TANH_C), x.dtype.type(0.5),
                       x.dtype.type(1))
    c3 = x.dtype.type(3 * _TANH_C)
    for t in range(out.size):
        v = x[t]
        th = vtanh(k * (v + c * v * v * v))
        d = half * (one + th) + half * v * (one - th * th) * k * (one + c3 * v * v)
        out[t] = g[t] * d


def fused(x, approximate):
    """Whether these kernels compute gelu of array x (else the caller's NumPy/SciPy path)."""
    kinds = (np.float32, np.float64) if approximate == "tanh" else (np.float32,)
    return x.dtype in kinds and x.size > 0


def gelu_forward(x, approximate, out):
    """gelu of C-contiguous x into out (same shape and dtype)."""
    kernel = _k_gelu_tanh_fwd if approximate == "tanh" else _k_gelu_fwd
    kernel(x.reshape(-1), out.reshape(-1))
    return out


def gelu_backward(grad, x, approximate, out):
    """dL/dx of gelu given dL/dy; all C-contiguous of one shape and dtype."""
    kernel = _k_gelu_tanh_bwd if approximate == "tanh" else _k_gelu_bwd
    kernel(grad.reshape(-1), x.reshape(-1), out.reshape(-1))
    return out
