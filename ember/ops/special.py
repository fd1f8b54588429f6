"""Special functions: gamma-family, Bessel, error-function relatives and orthogonal polynomials.

Values come from SciPy's cephes implementations, so they match torch's to rounding. Gradients
are written with ember ops where torch has them; the Bessel functions and polynomials have no
derivative in torch and raise the same error when one is requested.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special as sp

from .. import _dtype as D
from .._tensor import Tensor
from ..autograd.function import Op
from .elementwise import _binary_fn, _to_float
from .indexing import where
from .registry import register, sum_to
from .unary import _float_of

_SQRT_PI = math.sqrt(math.pi)
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _as_dtype_of(y, x):
    y = np.asarray(y)
    return y if y.dtype == x.dtype else y.astype(x.dtype)


class _Unary(Op):
    """y = f(x) on floats (integers computed in the default float dtype). Complex inputs, and
    half ones where ``half_ok`` is False, raise torch's NotImplementedError: torch has no CPU
    kernel for them."""

    f = None
    public_name = ""
    half_ok = True

    @classmethod
    def forward(cls, ctx, x):
        if x.dtype.kind == "c" or (not cls.half_ok and x.dtype.name in ("float16", "bfloat16")):
            raise NotImplementedError(f"{cls.public_name}: not implemented for {x.dtype.name} "
                                      "tensors; expected a real float32/float64 (or integer) "
                                      "input")
        x = _float_of(x)
        with np.errstate(all="ignore"):
            y = _as_dtype_of(cls.f(x), x)
        ctx.save_for_backward(x, y)
        return y


def _unary_op(name, f, grad=None, public=True, half=True):
    """Register ``name`` as y = f(x); ``grad(g, x, y)`` gives the input gradient or None.
    ``half=False``: float16/bfloat16 inputs raise, as torch's CPU kernel has none."""

    class Unary(_Unary):
        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            if grad is None:  # torch's type and key phrase
                raise NotImplementedError(f"the derivative for '{name}' is not implemented.")
            return grad(g, x, y)

    Unary.f = staticmethod(f)
    Unary.half_ok = half
    Unary.public_name = name.replace("special_", "special.")
    Unary.__name__ = "".join(p.capitalize() for p in name.split("_"))
    Unary.__doc__ = f"Elementwise {name}."
    if public:
        register(name, method=True, inplace=True)(Unary)
        return Unary.apply

    def fn(input):  # an Op's apply takes tensors positionally: special.i0e(input=t) comes here
        return Unary.apply(input)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = Unary.__doc__
    return fn


# ---- gamma family ----------------------------------------------------------------------------

class Polygamma(Op):
    """The n-th derivative of the digamma function."""

    @staticmethod
    def forward(ctx, x, n):
        x = _float_of(x)
        ctx.n = n
        ctx.save_for_backward(x)
        with np.errstate(all="ignore"):
            if n == 0:
                return _as_dtype_of(sp.digamma(x), x)
            y = sp.polygamma(n, x)
            if n == 1:  # trigamma oscillates between poles toward -inf: NaN, as torch (SciPy: inf)
                y = np.where(np.isneginf(x), np.nan, y)
            return _as_dtype_of(y, x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * polygamma(ctx.n + 1, x), None  # d psi^(n)/dx = psi^(n+1)


def polygamma(n, input):
    """The ``n``-th derivative of the digamma function, elementwise."""
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 0:
        raise RuntimeError(f"polygamma: n must be a non-negative integer; got {n!r}")
    return Polygamma.apply(input, int(n))


register("polygamma", method=False)(polygamma)
Tensor.polygamma = lambda self, n: polygamma(n, self)


def _polygamma_(self, n):
    from .registry import apply_inplace
    return apply_inplace(self, lambda x: polygamma(n, x), "polygamma_")


Tensor.polygamma_ = _polygamma_


def mvlgamma(input, p):
    """Multivariate log-gamma of dimension ``p``: sum_i lgamma(x - i/2) + p(p-1)/4 log(pi)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"mvlgamma(): argument 'input' must be Tensor, not {type(input).__name__}")
    if p < 1:
        raise RuntimeError(f"mvlgamma: p has to be greater than or equal to 1; got {p}")
    # torch 2.13 has no domain check any more: x <= (p - 1) / 2 meets a pole of lgamma (inf)
    x = input if input.is_floating_point() else input.to(D.get_default_dtype())
    offsets = np.arange(p, dtype=np.float64) / 2
    total = (x.unsqueeze(-1) - x.new_tensor(offsets)).lgamma().sum(-1)
    return total + p * (p - 1) / 4 * math.log(math.pi)


register("mvlgamma", method=True)(mvlgamma)


class Igamma(Op):
    """Regularised lower (upper=False) or upper incomplete gamma function P(a, x) / Q(a, x)."""

    @staticmethod
    def forward(ctx, a, x, upper=False):
        ctx.upper = upper
        ctx.save_for_backward(a, x)
        with np.errstate(all="ignore"):
            return _as_dtype_of((sp.gammaincc if upper else sp.gammainc)(a, x), a)

    @staticmethod
    def backward(ctx, g):
        a, x = ctx.saved_tensors
        if ctx.needs_input_grad[0]:
            name = "igammac" if ctx.upper else "igamma"
            # torch's type (NotImplementedError, a RuntimeError) and key phrase
            raise NotImplementedError(f"the derivative for '{name}: input' is not implemented.")
        # d P(a, x)/dx = x^(a-1) e^(-x) / Gamma(a); Q = 1 - P
        density = ((a - 1) * x.log() - x - a.lgamma()).exp()
        gx = g * (-density if ctx.upper else density)
        return None, sum_to(gx, x.shape)


def _igamma_public(name, upper):
    fn = _binary_fn(name, Igamma, result=_to_float)
    return lambda input, other: fn(input, other, upper=upper)


igamma = _igamma_public("igamma", False)
igammac = _igamma_public("igammac", True)
register("igamma", inplace=True)(igamma)
register("igammac", inplace=True)(igammac)


# ---- Bessel functions, with torch's derivatives ------------------------------------------------

def _i0_grad(g, x, y):
    return g * i1(x)  # I0' = I1


def _i0e_grad(g, x, y):
    return g * (i1e(x) - x.sign() * y)  # d(e^-|x| I0)/dx = e^-|x| I1 - sign(x) e^-|x| I0


def _i1_grad(g, x, y):
    # I1' = I0 - I1 / x, with the limit 1/2 at x = 0
    safe = where(x == 0, 1.0, x)
    return g * where(x == 0, 0.5, i0(x) - y / safe)


def _i1e_grad(g, x, y):
    safe = where(x == 0, 1.0, x)
    return g * where(x == 0, 0.5, i0e(x) - y * (x.sign() + safe.reciprocal()))


i0 = _unary_op("i0", sp.i0, _i0_grad)
i0e = _unary_op("special_i0e", sp.i0e, _i0e_grad, public=False)
i1 = _unary_op("special_i1", sp.i1, _i1_grad, public=False)
i1e = _unary_op("special_i1e", sp.i1e, _i1e_grad, public=False)

# no derivative in torch either
bessel_j0 = _unary_op("special_bessel_j0", sp.j0, public=False, half=False)
bessel_j1 = _unary_op("special_bessel_j1", sp.j1, public=False, half=False)
bessel_y0 = _unary_op("special_bessel_y0", sp.y0, public=False, half=False)
bessel_y1 = _unary_op("special_bessel_y1", sp.y1, public=False, half=False)
modified_bessel_i0 = _unary_op("special_modified_bessel_i0", sp.i0, public=False, half=False)
modified_bessel_i1 = _unary_op("special_modified_bessel_i1", sp.i1, public=False, half=False)
modified_bessel_k0 = _unary_op("special_modified_bessel_k0", sp.k0, public=False, half=False)
modified_bessel_k1 = _unary_op("special_modified_bessel_k1", sp.k1, public=False, half=False)
scaled_modified_bessel_k0 = _unary_op("special_scaled_modified_bessel_k0", sp.k0e, public=False,
                                      half=False)
scaled_modified_bessel_k1 = _unary_op("special_scaled_modified_bessel_k1", sp.k1e, public=False,
                                      half=False)
airy_ai = _unary_op("special_airy_ai", lambda x: sp.airy(x)[0], public=False, half=False)


def _spherical_j0(x):
    safe = np.where((x == 0) | np.isinf(x), 1, x)
    # sin(x) / x -> 0 as |x| -> inf (sin(inf) is NaN), as torch
    return np.where(x == 0, 1.0, np.where(np.isinf(x), 0.0, np.sin(safe) / safe))


spherical_bessel_j0 = _unary_op("special_spherical_bessel_j0", _spherical_j0, public=False,
                                half=False)


# ---- error-function relatives ------------------------------------------------------------------

def _erfcx_grad(g, x, y):
    return g * (2 * x * y - 2 / _SQRT_PI)  # d/dx e^(x^2) erfc(x)


def _log_ndtr_grad(g, x, y):
    return g * (-0.5 * x * x - _LOG_SQRT_2PI - y).exp()  # pdf(x) / ndtr(x)


def _entr(x):
    # -x log x; 0 at 0, -inf below (NaN stays NaN, as torch)
    return np.where(x < 0, -np.inf, np.where(x == 0, 0.0, -sp.xlogy(x, x)))


def _entr_grad(g, x, y):
    return g * -(x.log() + 1)  # d(-x log x)/dx


def _ndtri_grad(g, x, y):
    return g * math.sqrt(2 * math.pi) * (y * y / 2).exp()  # 1 / pdf(ndtri(p))


erfcx = _unary_op("special_erfcx", sp.erfcx, _erfcx_grad, public=False, half=False)
# SciPy's ndtri, not sqrt(2) erfinv(2p - 1), which rounds 2p - 1 to -1 for p < ~1e-8 (float32)
# or ~1e-17 (float64) and gives -inf
ndtri = _unary_op("special_ndtri", sp.ndtri, _ndtri_grad, public=False, half=False)
log_ndtr = _unary_op("special_log_ndtr", sp.log_ndtr, _log_ndtr_grad, public=False,
                     half=False)
entr = _unary_op("special_entr", _entr, _entr_grad, public=False)


class Xlog1py(Op):
    """input * log1p(other), 0 where input == 0."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        with np.errstate(all="ignore"):
            return _as_dtype_of(sp.xlog1py(a, b), a)

    @staticmethod
    def backward(ctx, g):
        # torch's derivatives, as xlogy's: d/da = log1p(b), 0 where a == 0 and b <= -1;
        # d/db = a / (1 + b) everywhere
        a, b = ctx.saved_tensors
        ga = where((a == 0) & (b <= -1), 0.0, xlog1py(g, b))
        return sum_to(ga, a.shape), sum_to(g * a / (1 + b), b.shape)


xlog1py = _binary_fn("xlog1py", Xlog1py, result=_to_float)


class Zeta(Op):
    """Hurwitz zeta function zeta(x, q)."""

    @staticmethod
    def forward(ctx, x, q):
        ctx.save_for_backward(x, q)
        with np.errstate(all="ignore"):
            return _as_dtype_of(sp.zeta(x, q), x)

    @staticmethod
    def backward(ctx, g):
        x, q = ctx.saved_tensors
        if ctx.needs_input_grad[0]:  # (no closed form in x; torch has none either)
            raise NotImplementedError("the derivative for 'special_zeta: self' is not "
                                      "implemented.")
        # d/dq sum_k (k + q)^-x = -x sum_k (k + q)^-(x+1) = -x zeta(x + 1, q)
        return None, sum_to(g * -x * zeta(x + 1, q), q.shape)


zeta = _binary_fn("zeta", Zeta, result=_to_float)


# ---- orthogonal polynomials (no derivatives, as in torch) -------------------------------------

def _recurrence(x, n, p1):
    """p_n(x) for p_0 = 1, p_1 = p1(x), p_{k+1} = 2x p_k - p_{k-1} (Chebyshev's recurrence)."""
    n = np.broadcast_to(n, np.broadcast(x, n).shape)
    x = np.broadcast_to(x, n.shape)
    prev, cur = np.ones_like(x), p1(x)
    out = np.where(n == 0, prev, cur)
    for k in range(1, int(n.max(initial=0))):
        prev, cur = cur, 2 * x * cur - prev
        out = np.where(n == k + 1, cur, out)
    return np.where(n < 0, 0.0, out)


_POLYNOMIALS = {
    "chebyshev_polynomial_t": lambda x, n: sp.eval_chebyt(n, x),
    "chebyshev_polynomial_u": lambda x, n: sp.eval_chebyu(n, x),
    "chebyshev_polynomial_v": lambda x, n: _recurrence(x, n, lambda t: 2 * t - 1),
    "chebyshev_polynomial_w": lambda x, n: _recurrence(x, n, lambda t: 2 * t + 1),
    "hermite_polynomial_h": lambda x, n: sp.eval_hermite(n, x),
    "hermite_polynomial_he": lambda x, n: sp.eval_hermitenorm(n, x),
    "laguerre_polynomial_l": lambda x, n: sp.eval_laguerre(n, x),
    "legendre_polynomial_p": lambda x, n: sp.eval_legendre(n, x),
}


class _Polynomial(Op):
    @staticmethod
    def forward(ctx, x, n, kind=""):
        ctx.kind = kind
        xs = _float_of(x)
        degrees = np.asarray(n).astype(np.int64)
        with np.errstate(all="ignore"):
            values = _POLYNOMIALS[kind](xs, np.where(degrees < 0, 0, degrees))
        # degree 0 is the constant 1, also at NaN and inf (the recurrences would give NaN)
        values = np.where(degrees == 0, 1.0, values)
        return _as_dtype_of(np.where(degrees < 0, 0.0, values), xs)

    @staticmethod
    def backward(ctx, g):
        raise NotImplementedError(f"the derivative for 'special_{ctx.kind}' is not implemented.")


def _polynomial(kind, shift=False):
    def fn(input, n, *, out=None):
        if not isinstance(input, Tensor) and not isinstance(n, Tensor):
            raise TypeError(f"{kind}(): expected at least one Tensor argument")
        x = input if isinstance(input, Tensor) else _tensor_like(input, n)
        if shift:
            x = 2 * x - 1  # the shifted polynomials live on [0, 1]
        result = _Polynomial.apply(x, n if isinstance(n, Tensor) else np.asarray(n), kind=kind)
        if out is not None:
            from .registry import write_out
            return write_out(out, result, kind)
        return result

    fn.__name__ = ("shifted_" if shift else "") + kind
    fn.__doc__ = f"The {'shifted ' if shift else ''}{kind.replace('_', ' ')} of degree n at input."
    return fn


def _tensor_like(value, like):
    from .creation import tensor
    return tensor(value, dtype=like.dtype if like.is_floating_point() else None)


chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t")
chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u")
chebyshev_polynomial_v = _polynomial("chebyshev_polynomial_v")
chebyshev_polynomial_w = _polynomial("chebyshev_polynomial_w")
shifted_chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t", shift=True)
shifted_chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u", shift=True)
shifted_chebyshev_polynomial_v = _polynomial("chebyshev_polynomial_v", shift=True)
shifted_chebyshev_polynomial_w = _polynomial("chebyshev_polynomial_w", shift=True)
hermite_polynomial_h = _polynomial("hermite_polynomial_h")
hermite_polynomial_he = _polynomial("hermite_polynomial_he")
laguerre_polynomial_l = _polynomial("laguerre_polynomial_l")
legendre_polynomial_p = _polynomial("legendre_polynomial_p")
