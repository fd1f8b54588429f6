"""torch.special: special functions, elementwise.

Most are SciPy's cephes routines behind ember ops (ember/ops/special.py) with gradients where
torch has them; the rest are the top-level ops under their special-namespace names.

Example:
    >>> import ember
    >>> ember.special.expit(ember.tensor([0.0]))
    tensor([0.5000])
"""

from __future__ import annotations

import ember as _ember
from ember.ops import special as _ops
from ember.ops.registry import with_out, write_out

__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma",
    "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc",
    "gammaln", "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e",
    "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax",
    "logit", "logsumexp", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
    "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0", "xlog1py",
    "xlogy", "zeta",
]

# the same functions as at the top level
digamma = psi = _ember.digamma
erf = _ember.erf
erfc = _ember.erfc
erfinv = _ember.erfinv
exp2 = _ember.exp2
expit = _ember.sigmoid
expm1 = _ember.expm1
gammaln = _ember.lgamma
i0 = _ember.i0
log1p = _ember.log1p
logit = _ember.logit
logsumexp = _ember.logsumexp
polygamma = _ember.polygamma
sinc = _ember.sinc
xlogy = _ember.xlogy
multigammaln = _ember.mvlgamma

# only in this namespace
airy_ai = with_out(_ops.airy_ai, "special.airy_ai")
bessel_j0 = with_out(_ops.bessel_j0, "special.bessel_j0")
bessel_j1 = with_out(_ops.bessel_j1, "special.bessel_j1")
bessel_y0 = with_out(_ops.bessel_y0, "special.bessel_y0")
bessel_y1 = with_out(_ops.bessel_y1, "special.bessel_y1")
modified_bessel_i0 = with_out(_ops.modified_bessel_i0, "special.modified_bessel_i0")
modified_bessel_i1 = with_out(_ops.modified_bessel_i1, "special.modified_bessel_i1")
modified_bessel_k0 = with_out(_ops.modified_bessel_k0, "special.modified_bessel_k0")
modified_bessel_k1 = with_out(_ops.modified_bessel_k1, "special.modified_bessel_k1")
scaled_modified_bessel_k0 = with_out(_ops.scaled_modified_bessel_k0,
                                     "special.scaled_modified_bessel_k0")
scaled_modified_bessel_k1 = with_out(_ops.scaled_modified_bessel_k1,
                                     "special.scaled_modified_bessel_k1")
spherical_bessel_j0 = with_out(_ops.spherical_bessel_j0, "special.spherical_bessel_j0")
i0e = with_out(_ops.i0e, "special.i0e")
i1 = with_out(_ops.i1, "special.i1")
i1e = with_out(_ops.i1e, "special.i1e")
entr = with_out(_ops.entr, "special.entr")
erfcx = with_out(_ops.erfcx, "special.erfcx")
log_ndtr = with_out(_ops.log_ndtr, "special.log_ndtr")
ndtri = with_out(_ops.ndtri, "special.ndtri")
xlog1py = with_out(_ops.xlog1py, "special.xlog1py")
zeta = with_out(_ops.zeta, "special.zeta")
chebyshev_polynomial_t = _ops.chebyshev_polynomial_t
chebyshev_polynomial_u = _ops.chebyshev_polynomial_u
chebyshev_polynomial_v = _ops.chebyshev_polynomial_v
chebyshev_polynomial_w = _ops.chebyshev_polynomial_w
shifted_chebyshev_polynomial_t = _ops.shifted_chebyshev_polynomial_t
shifted_chebyshev_polynomial_u = _ops.shifted_chebyshev_polynomial_u
shifted_chebyshev_polynomial_v = _ops.shifted_chebyshev_polynomial_v
shifted_chebyshev_polynomial_w = _ops.shifted_chebyshev_polynomial_w
hermite_polynomial_h = _ops.hermite_polynomial_h
hermite_polynomial_he = _ops.hermite_polynomial_he
laguerre_polynomial_l = _ops.laguerre_polynomial_l
legendre_polynomial_p = _ops.legendre_polynomial_p


def ndtr(input, *, out=None):
    """The standard normal CDF: (1 + erf(x / sqrt 2)) / 2."""
    if out is not None:
        return write_out(out, ndtr(input), "special.ndtr")
    if input.is_complex():  # (torch's erf kernel has none)
        raise NotImplementedError(f"special.ndtr: not implemented for complex tensors; got "
                                  f"{input.dtype}, expected a real one")
    x = input if input.is_floating_point() else input.to(_ember.get_default_dtype())
    return 0.5 * (1 + _ember.erf(x * 0.7071067811865476))




def _real_floats(name, *tensors):
    """torch's CPU kernel of ``name`` has no integer, bool or complex version."""
    for t in tensors:
        if not isinstance(t, _ember.Tensor):
            raise TypeError(f"special.{name}(): expected Tensor arguments, got "
                            f"{type(t).__name__}")
        if not t.is_floating_point():
            raise NotImplementedError(f"special.{name}: not implemented for {t.dtype}; expected "
                                      "a real floating point tensor")


def round(input, *, decimals=0, out=None):
    """Round to ``decimals`` decimal places, half to even (floats only, as torch.special)."""
    _real_floats("round", input)
    return _ember.round(input, decimals=decimals, out=out)


def gammainc(input, other, *, out=None):
    """The regularized lower incomplete gamma function P(input, other)."""
    _real_floats("gammainc", input, other)
    return _ember.igamma(input, other, out=out)


def gammaincc(input, other, *, out=None):
    """The regularized upper incomplete gamma function Q(input, other)."""
    _real_floats("gammaincc", input, other)
    return _ember.igammac(input, other, out=out)


def softmax(input, dim, *, dtype=None):
    """softmax along ``dim`` (``dim`` is required here, as in torch.special)."""
    return _ember.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    """log_softmax along ``dim`` (``dim`` is required here, as in torch.special)."""
    return _ember.log_softmax(input, dim, dtype=dtype)
