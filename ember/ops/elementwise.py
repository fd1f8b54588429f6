"""Elementwise ops: arithmetic, comparisons, unary math, clamp/where/lerp, logical, bitwise.

Each op's gradient is written next to it with ember ops, so double backward works.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor, _make
from ..autograd.function import Op
from ..autograd.grad_mode import _state as _grad_state
from ._kernels import pointwise as _kpoint
from .registry import promote_args, register, sum_to

_broadcast_binary = _kpoint.broadcast_binary

_FLOAT_KINDS = "f"


def _float_of(x):
    """Integer/bool inputs of float-only math are computed in the default float dtype."""
    if x.dtype.kind in "biu":
        return x.astype(D.get_default_dtype().np)
    return x


def _bcast_error(name, a, b):
    sa, sb = np.shape(a), np.shape(b)
    n = max(len(sa), len(sb))
    pa, pb = (1,) * (n - len(sa)) + tuple(sa), (1,) * (n - len(sb)) + tuple(sb)
    for i in range(n - 1, -1, -1):
        if pa[i] != pb[i] and pa[i] != 1 and pb[i] != 1:
            return RuntimeError(
                f"{name}: The size of tensor a ({pa[i]}) must match the size of tensor b "
                f"({pb[i]}) at non-singleton dimension {i}; got shapes {list(sa)} and "
                f"{list(sb)}, expected shapes that broadcast.")
    return RuntimeError(f"{name}: shapes {list(sa)} and {list(sb)} do not broadcast")


def _binary_fn(name, cls, result=None):
    """Public function for a binary op: dtype promotion, then the Op."""

    def fn(input, other, **kw):
        if isinstance(input, Tensor) and isinstance(other, Tensor) and \
                input._data.dtype == other._data.dtype and result is None:
            a, b = input, other
        else:
            if not isinstance(input, Tensor) and not isinstance(other, Tensor):
                raise TypeError(f"{name}(): expected at least one Tensor argument, got "
                                f"{type(input).__name__} and {type(other).__name__}")
            a, b = promote_args(name, input, other)
            if result is not None:
                a, b = result(a), result(b)
        try:
            return cls.apply(a, b, **kw)
        except ValueError as e:
            if "broadcast" in str(e):
                # _bcast_error takes the operands (it reads their shapes itself)
                raise _bcast_error(name, getattr(a, "_data", a), getattr(b, "_data", b)) \
                    from None
            raise

    fn.__name__ = name
    fn.__doc__ = cls.__doc__
    return fn


def _to_float(t):
    """For true division: integer operands become the default float dtype."""
    if isinstance(t, Tensor):
        return t if t._data.dtype.kind == "f" or t.dtype is D.bfloat16 else t.to(
            D.get_default_dtype())
    # ml_dtypes' bfloat16 has kind "V", so it is checked by identity
    return t if t.dtype.kind == "f" or t.dtype == D.bfloat16.np else t.astype(
        D.get_default_dtype().np)


# ----------------------------------------------------------------------------- arithmetic
class Add(Op):
    """input + alpha * other, broadcasting."""

    @staticmethod
    def forward(ctx, a, b, alpha=1):
        ctx.shapes, ctx.alpha = (a.shape, b.shape), alpha
        if alpha != 1:
            return a + alpha * b
        out = _broadcast_binary("add", a, b)  # NOTE [Row-broadcast binary ops]
        return a + b if out is None else out

    @staticmethod
    def backward(ctx, grad):
        sa, sb = ctx.shapes
        gb = grad if ctx.alpha == 1 else grad * ctx.alpha
        return sum_to(grad, sa), sum_to(gb, sb)


class Sub(Op):
    """input - alpha * other, broadcasting."""

    @staticmethod
    def forward(ctx, a, b, alpha=1):
        if a.dtype == np.bool_:
            raise RuntimeError("sub: Subtraction, the `-` operator, with two bool tensors is not "
                               "supported. Use the `^` or `logical_xor()` operator instead.")
        ctx.shapes, ctx.alpha = (a.shape, b.shape), alpha
        if alpha != 1:
            return a - alpha * b
        out = _broadcast_binary("sub", a, b)  # NOTE [Row-broadcast binary ops]
        return a - b if out is None else out

    @staticmethod
    def backward(ctx, grad):
        sa, sb = ctx.shapes
        return sum_to(grad, sa), sum_to(-grad if ctx.alpha == 1 else grad * -ctx.alpha, sb)


class Mul(Op):
    """input * other, broadcasting."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        out = _broadcast_binary("mul", a, b)  # NOTE [Row-broadcast binary ops]
        return a * b if out is None else out

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        ga = sum_to(grad * b, a.shape) if need[0] else None
        gb = sum_to(grad * a, b.shape) if need[1] else None
        return ga, gb


class Div(Op):
    """input / other (true division; integers divide as floats)."""

    @staticmethod
    def forward(ctx, a, b, rounding_mode=None):
        ctx.rounding_mode = rounding_mode
        if rounding_mode is None:
            ctx.save_for_backward(a, b)
            with np.errstate(divide="ignore", invalid="ignore"):
                return a / b
        ctx.shapes = (a.shape, b.shape)
        if a.dtype.kind in "iu" and (np.asarray(b) == 0).any():
            raise RuntimeError("ZeroDivisionError: integer division by zero")
        with np.errstate(divide="ignore", invalid="ignore"):
            if rounding_mode == "floor":
                return np.floor_divide(a, b) if a.dtype.kind in "iu" else np.floor(a / b)
            if rounding_mode == "trunc":
                if a.dtype.kind in "iu":
                    return (np.trunc(a / b)).astype(a.dtype)
                return np.trunc(a / b)
        raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                         f"found '{rounding_mode}'")

    @staticmethod
    def backward(ctx, grad):
        if ctx.rounding_mode is not None:  # piecewise constant: zero gradient almost everywhere
            sa, sb = ctx.shapes
            return grad.new_zeros(sa), grad.new_zeros(sb)
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        ga = sum_to(grad / b, a.shape) if need[0] else None
        gb = sum_to(-grad * a / (b * b), b.shape) if need[1] else None  # d(a/b)/db = -a/b^2
        return ga, gb


_add = _binary_fn("add", Add)
_sub = _binary_fn("sub", Sub)
_mul = _binary_fn("mul", Mul)
_div_true = _binary_fn("div", Div, result=_to_float)
_div_round = _binary_fn("div", Div)


def _div(input, other, *, rounding_mode=None):
    if rounding_mode is None:
        return _div_true(input, other)
    return _div_round(input, other, rounding_mode=rounding_mode)


def _samples_binary(rng, dtype):
    from ..testing._samples import binary_samples
    return binary_samples(rng, dtype)


register("add", inplace=True, ref=np.add, samples=_samples_binary, dtypes=D.ALL)(_add)
register("sub", inplace=True, ref=np.subtract, samples=_samples_binary,
         aliases=("subtract",))(_sub)
register("mul", inplace=True, ref=np.multiply, samples=_samples_binary, dtypes=D.ALL,
         aliases=("multiply",))(_mul)
register("div", inplace=True, ref=np.true_divide, samples=_samples_binary,
         aliases=("divide", "true_divide"))(_div)


_floor_divide = _binary_fn("floor_divide", Div)  # its own name in error messages


def floor_divide(input, other):
    """input // other, rounding toward negative infinity."""
    return _floor_divide(input, other, rounding_mode="floor")


register("floor_divide", inplace=True, differentiable=False, dtypes=D.INTEGRAL)(floor_divide)


class Remainder(Op):
    """Python-style modulus: the result has the sign of the divisor."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.remainder(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors  # a - floor(a/b)*b: d/da = 1, d/db = -floor(a/b)
        return sum_to(grad, a.shape), sum_to(-grad * (a / b).floor(), b.shape)


class Fmod(Op):
    """C-style modulus: the result has the sign of the dividend."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.fmod(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return sum_to(grad, a.shape), sum_to(-grad * (a / b).trunc(), b.shape)


register("remainder", inplace=True, ref=np.remainder)(_binary_fn("remainder", Remainder))
register("fmod", inplace=True, ref=np.fmod)(_binary_fn("fmod", Fmod))


class Pow(Op):
    """input ** exponent."""

    @staticmethod
    def forward(ctx, a, b):
        if a.dtype.kind in "iu" and b.dtype.kind in "iu" and (np.asarray(b) < 0).any():
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        y = np.asarray(np.power(a, b))  # an array even for 0-d inputs: saved by identity
        ctx.save_for_backward(a, b, y)
        return y

    @staticmethod
    def backward(ctx, grad):
        a, b, y = ctx.saved_tensors
        need = ctx.needs_input_grad
        ga = gb = None
        if need[0]:  # d a^b / da = b * a^(b-1); written so that a = 0, b >= 1 stays finite
            ga = grad * b * a.pow(b - 1)
            # mask before sum_to: b may broadcast against a
            ga = sum_to(where_(b == 0, 0.0, ga) if b.numel() > 0 else ga, a.shape)
        if need[1]:  # d a^b / db = a^b * log(a), taken as 0 where a == 0 and b >= 0
            gb = grad * y * where_(a == 0, 1.0, a).log()
            gb = sum_to(where_((a == 0) & (b >= 0), 0.0, gb), b.shape)
        return ga, gb


def _pow(input, exponent):
    return _pow_fn(input, exponent)


_pow_fn = _binary_fn("pow", Pow)
register("pow", inplace=True, ref=np.power)(_pow)
register("float_power", method=True)(
    lambda input, exponent: _pow(input.double() if isinstance(input, Tensor) else float(input),
                                 exponent.double() if isinstance(exponent, Tensor)
                                 else exponent))


class Atan2(Op):
    """Angle of (other, input) in radians."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return np.arctan2(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors  # d/da = b/(a^2+b^2), d/db = -a/(a^2+b^2)
        den = a * a + b * b
        return sum_to(grad * b / den, a.shape), sum_to(-grad * a / den, b.shape)


register("atan2", inplace=True, ref=np.arctan2, aliases=("arctan2",))(
    _binary_fn("atan2", Atan2, result=_to_float))


class _MaxMin(Op):
    fn = None

    @classmethod
    def forward(cls, ctx, a, b):
        ctx.save_for_backward(a, b)
        return cls.fn(a, b)

    @classmethod
    def backward(cls, ctx, grad):
        a, b = ctx.saved_tensors
        pick_a = (a > b) if cls.fn is np.maximum else (a < b)
        tie = a == b  # torch splits the gradient evenly at ties
        wa = pick_a.to(grad.dtype) + tie.to(grad.dtype) * 0.5
        return sum_to(grad * wa, a.shape), sum_to(grad * (1 - wa), b.shape)


class Maximum(_MaxMin):
    """Elementwise maximum (NaN propagates)."""
    fn = np.maximum


class Minimum(_MaxMin):
    """Elementwise minimum (NaN propagates)."""
    fn = np.minimum


class Fmax(_MaxMin):
    """Elementwise maximum ignoring NaN."""
    fn = np.fmax


class Fmin(_MaxMin):
    """Elementwise minimum ignoring NaN."""
    fn = np.fmin


Fmax.backward = classmethod(lambda cls, ctx, grad: Maximum.backward.__func__(Maximum, ctx, grad))
Fmin.backward = classmethod(lambda cls, ctx, grad: Minimum.backward.__func__(Minimum, ctx, grad))

register("maximum", ref=np.maximum, dtypes=D.ALL)(_binary_fn("maximum", Maximum))
register("minimum", ref=np.minimum, dtypes=D.ALL)(_binary_fn("minimum", Minimum))
register("fmax", ref=np.fmax)(_binary_fn("fmax", Fmax))
register("fmin", ref=np.fmin)(_binary_fn("fmin", Fmin))


class Hypot(Op):
    """sqrt(input^2 + other^2)."""

    @staticmethod
    def forward(ctx, a, b):
        y = np.asarray(np.hypot(a, b))
        ctx.save_for_backward(a, b, y)
        return y

    @staticmethod
    def backward(ctx, grad):
        a, b, y = ctx.saved_tensors
        return sum_to(grad * a / y, a.shape), sum_to(grad * b / y, b.shape)


register("hypot", inplace=True, ref=np.hypot)(_binary_fn("hypot", Hypot))


class Copysign(Op):
    """|input| with the sign of other."""

    @staticmethod
    def forward(ctx, a, b):
        y = np.asarray(np.copysign(a, b))
        ctx.save_for_backward(a, y)
        ctx.bshape = b.shape
        return y

    @staticmethod
    def backward(ctx, grad):
        a, y = ctx.saved_tensors
        s = where_(a == 0, 0.0, y / where_(a == 0, 1.0, a))
        return sum_to(grad * s, a.shape), grad.new_zeros(ctx.bshape)


register("copysign", inplace=True, ref=np.copysign)(
    _binary_fn("copysign", Copysign, result=_to_float))


class Xlogy(Op):
    """input * log(other), defined as 0 where input == 0."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(a == 0, np.zeros((), a.dtype), a * np.log(b)).astype(a.dtype)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        ga = grad * where_(a == 0, 0.0, b.log())
        gb = grad * where_(a == 0, 0.0, a / b)
        return sum_to(ga, a.shape), sum_to(gb, b.shape)


register("xlogy", inplace=True)(_binary_fn("xlogy", Xlogy, result=_to_float))


# ----------------------------------------------------------------------------- comparisons
def _compare(name, ufunc):
    class Cmp(Op):
        @staticmethod
        def forward(ctx, a, b):
            return ufunc(a, b)

    Cmp.__name__ = name.capitalize()
    fn = _binary_fn(name, Cmp)
    fn.__doc__ = f"Elementwise {name} comparison; returns a bool tensor."
    return fn


for _n, _uf, _al in (("eq", np.equal, ()), ("ne", np.not_equal, ("not_equal",)),
                     ("lt", np.less, ("less",)), ("le", np.less_equal, ("less_equal",)),
                     ("gt", np.greater, ("greater",)),
                     ("ge", np.greater_equal, ("greater_equal",))):
    register(_n, inplace=True, ref=_uf, differentiable=False, dtypes=D.ALL, aliases=_al)(
        _compare(_n, _uf))


def _logical(name, ufunc):
    class Logical(Op):
        @staticmethod
        def forward(ctx, a, b):
            return ufunc(a, b)

    Logical.__name__ = "".join(p.capitalize() for p in name.split("_"))

    def fn(input, other):
        a = input._data if isinstance(input, Tensor) else np.asarray(input)
        b = other._data if isinstance(other, Tensor) else np.asarray(other)
        from .._tensor import _make
        try:
            return _make(np.asarray(ufunc(a, b)))
        except ValueError:
            raise _bcast_error(name, a, b) from None

    fn.__name__ = name
    return fn


for _n, _uf in (("logical_and", np.logical_and), ("logical_or", np.logical_or),
                ("logical_xor", np.logical_xor)):
    register(_n, inplace=True, ref=_uf, differentiable=False, dtypes=D.ALL)(_logical(_n, _uf))


def _bitwise(name, ufunc):
    class Bitwise(Op):
        @staticmethod
        def forward(ctx, a, b):
            if a.dtype.kind == "f" or a.dtype == D.bfloat16.np:
                # NotImplementedError (a RuntimeError) is what torch raises here
                raise NotImplementedError(f"{name}: not implemented for floating dtype "
                                          f"{a.dtype}; expected integer or bool tensors.")
            return ufunc(a, b)

    Bitwise.__name__ = "".join(p.capitalize() for p in name.split("_"))
    return _binary_fn(name, Bitwise)


for _n, _uf in (("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
                ("bitwise_xor", np.bitwise_xor), ("bitwise_left_shift", np.left_shift),
                ("bitwise_right_shift", np.right_shift)):
    register(_n, inplace=True, ref=_uf, differentiable=False, dtypes=D.INTEGRAL)(
        _bitwise(_n, _uf))


# ----------------------------------------------------------------------------- unary math
def _unary(name, f, df, save="x", keep_int=False, inplace=True, aliases=(), doc=None,
           differentiable=True, dtypes=D.FLOATING, df_np=None):
    """Define and register a unary op y = f(x) with gradient df(grad, saved).

    ``df_np(grad_array, saved_array)``, the same derivative on NumPy arrays, replaces df when the
    backward itself is not recorded (no create_graph): one fused pass instead of a chain of graph
    nodes and temporaries. df (ember ops) still serves double backward.
    """

    class Unary(Op):
        @staticmethod
        def forward(ctx, x):
            if not keep_int:
                x = _float_of(x)
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                # asarray: a ufunc on a 0-d array returns a NumPy scalar, and a saved output
                # is recognised by identity (see _unary_saves_array in tests/ops)
                y = np.asarray(f(x))
            if y.dtype != x.dtype:
                y = y.astype(x.dtype)
            if df is not None:
                ctx.save_for_backward(x if save == "x" else y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (v,) = ctx.saved_tensors
            if df_np is not None and not _grad_state.enabled:
                return _make(df_np(grad._data, v._data))
            return df(grad, v)

    Unary.__name__ = "".join(p.capitalize() for p in name.split("_"))
    Unary.__doc__ = doc or f"Elementwise {name}."
    register(name, inplace=inplace, ref=f, aliases=aliases, differentiable=differentiable,
             dtypes=dtypes)(Unary)
    return Unary


def where_(cond, a, b):
    from .indexing import where
    return where(cond, a, b)


def _erfinv_np(x):
    from scipy.special import erfinv
    return erfinv(x)


def _sigmoid_np(x):
    """1 / (1 + e^-x) without overflow: e^-|x| never overflows, and the sign picks the form
    (1 / (1 + e) for x >= 0, e / (1 + e) below), which also keeps float16 results that
    1 / (1 + inf) would flush to 0."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1, e) / (1 + e)


def _erf_np(x):
    from scipy.special import erf
    return erf(x)


def _gammaln(x):
    from scipy.special import gammaln
    return gammaln(x)


def _digamma(x):
    from scipy.special import digamma
    return digamma(x)


_NO_BOOL = D.ALL[1:]  # every dtype but bool


def _reject_bool(name, f, hint=""):
    """f, raising torch's RuntimeError for bool input instead of NumPy's TypeError."""
    def g(x):
        if x.dtype == np.bool_:
            raise RuntimeError(f"{name}: not supported for bool tensors; got dtype ember.bool."
                               + hint)
        return f(x)
    return g


_unary("neg", _reject_bool("neg", np.negative, " Negation, the `-` operator, on a bool tensor "
                           "is not supported; to invert a mask use `~` or logical_not()."),
       lambda g, x: -g, save="none", keep_int=True, aliases=("negative",), dtypes=_NO_BOOL)
_unary("exp", np.exp, lambda g, y: g * y, save="y")            # d e^x = e^x
_unary("exp2", np.exp2, lambda g, y: g * y * math.log(2), save="y")
_unary("expm1", np.expm1, lambda g, y: g * (y + 1), save="y")
_unary("log", np.log, lambda g, x: g / x)
_unary("log2", np.log2, lambda g, x: g / (x * math.log(2)))
_unary("log10", np.log10, lambda g, x: g / (x * math.log(10)))
_unary("log1p", np.log1p, lambda g, x: g / (x + 1))
_unary("sqrt", np.sqrt, lambda g, y: g / (2 * y), save="y")    # d sqrt(x) = 1 / (2 sqrt(x))
_unary("rsqrt", lambda x: 1 / np.sqrt(x), lambda g, y: -0.5 * g * y * y * y, save="y")
_unary("square", np.square, lambda g, x: 2 * g * x, keep_int=True)
_unary("reciprocal", np.reciprocal, lambda g, y: -g * y * y, save="y")
_unary("sin", np.sin, lambda g, x: g * x.cos())
_unary("cos", np.cos, lambda g, x: -g * x.sin())
_unary("tan", np.tan, lambda g, y: g * (1 + y * y), save="y")
_unary("asin", np.arcsin, lambda g, x: g * (1 - x * x).rsqrt(), aliases=("arcsin",))
_unary("acos", np.arccos, lambda g, x: -g * (1 - x * x).rsqrt(), aliases=("arccos",))
_unary("atan", np.arctan, lambda g, x: g / (1 + x * x), aliases=("arctan",))
_unary("sinh", np.sinh, lambda g, x: g * x.cosh())
_unary("cosh", np.cosh, lambda g, x: g * x.sinh())
_unary("tanh", np.tanh, lambda g, y: g * (1 - y * y), save="y",  # d tanh = 1 - tanh^2
       df_np=_kpoint.tanh_grad)
_unary("asinh", np.arcsinh, lambda g, x: g * (x * x + 1).rsqrt(), aliases=("arcsinh",))
_unary("acosh", np.arccosh, lambda g, x: g * (x * x - 1).rsqrt(), aliases=("arccosh",))
_unary("atanh", np.arctanh, lambda g, x: g / (1 - x * x), aliases=("arctanh",))
_unary("sigmoid", _sigmoid_np, lambda g, y: g * y * (1 - y), save="y",
       df_np=_kpoint.sigmoid_grad)
_unary("erf", _erf_np, lambda g, x: g * (2 / math.sqrt(math.pi)) * (-x * x).exp())
_unary("erfc", lambda x: 1 - _erf_np(x), lambda g, x: -g * (2 / math.sqrt(math.pi)) *
       (-x * x).exp())
_unary("erfinv", _erfinv_np, lambda g, y: g * (math.sqrt(math.pi) / 2) * (y * y).exp(),
       save="y")
_unary("lgamma", _gammaln, lambda g, x: g * x.digamma())
_unary("digamma", _digamma, lambda g, x: g * x.polygamma(1))  # d psi/dx = psi^(1)
_unary("abs", _reject_bool("abs", np.abs), lambda g, x: g * x.sign(), keep_int=True,
       aliases=("absolute",), dtypes=_NO_BOOL)
_unary("sign", lambda x: x.copy() if x.dtype == np.bool_ else np.sign(x),  # no bool np.sign
       lambda g, x: g * 0, keep_int=True, dtypes=D.ALL)
_unary("sgn", np.sign, lambda g, x: g * 0, keep_int=True)
_unary("floor", np.floor, lambda g, x: g * 0, keep_int=True)
_unary("ceil", np.ceil, lambda g, x: g * 0, keep_int=True)
_unary("trunc", np.trunc, lambda g, x: g * 0, keep_int=True, aliases=("fix",))
_unary("frac", lambda x: x - np.trunc(x), lambda g, x: g, keep_int=True)
_unary("relu", lambda x: _kpoint.clamp(x, 0, math.inf) if x.dtype.kind == "f" else
       np.maximum(x, 0),
       lambda g, y: g * (y > 0).to(g.dtype), save="y",
       keep_int=True, df_np=lambda g, y: _kpoint.masked_grad(g, y, 0, math.inf))
_unary("sinc", np.sinc, lambda g, x: g * where_(
    x == 0, 0.0, ((math.pi * x).cos() * math.pi * x - (math.pi * x).sin()) /
    (math.pi * where_(x == 0, 1.0, x * x))))
_unary("deg2rad", np.deg2rad, lambda g, x: g * (math.pi / 180))
_unary("rad2deg", np.rad2deg, lambda g, x: g * (180 / math.pi))


class Round(Op):
    """Round half to even (like torch), optionally to ``decimals`` places."""

    @staticmethod
    def forward(ctx, x, decimals=0):
        return np.round(x, decimals)

    @staticmethod
    def backward(ctx, grad):
        return grad * 0


register("round", inplace=True, ref=np.round)(Round)


def _isnan(input):
    return _pred(input, np.isnan)


def _pred(input, f):
    from .._tensor import _make
    return _make(np.asarray(f(input._data)))


register("isnan", differentiable=False, dtypes=D.ALL)(_isnan)
register("isinf", differentiable=False, dtypes=D.ALL)(lambda input: _pred(input, np.isinf))
register("isfinite", differentiable=False, dtypes=D.ALL)(
    lambda input: _pred(input, np.isfinite))
register("isposinf", differentiable=False)(lambda input: _pred(input, np.isposinf))
register("isneginf", differentiable=False)(lambda input: _pred(input, np.isneginf))
register("isreal", differentiable=False)(lambda input: _pred(input, lambda a: np.ones(
    a.shape, bool)))
register("signbit", differentiable=False)(lambda input: _pred(input, np.signbit))
register("logical_not", inplace=True, differentiable=False, dtypes=D.ALL)(
    lambda input: _pred(input, np.logical_not))


def _bitwise_not(input):
    if input.is_floating_point():
        raise NotImplementedError(f"bitwise_not: not implemented for floating dtype "
                                  f"{input.dtype}; expected integer or bool tensors.")
    return _pred(input, np.invert)


register("bitwise_not", inplace=True, differentiable=False, dtypes=D.INTEGRAL)(_bitwise_not)


class NanToNum(Op):
    """Replace NaN and infinities by finite numbers."""

    @staticmethod
    def forward(ctx, x, nan=0.0, posinf=None, neginf=None):
        ctx.save_for_backward(x)
        if x.dtype == D.bfloat16.np:  # np.nan_to_num leaves ml_dtypes' bfloat16 untouched
            import ml_dtypes
            big = float(ml_dtypes.finfo(x.dtype).max)
            return np.nan_to_num(x.astype(np.float32), nan=nan,
                                 posinf=big if posinf is None else posinf,
                                 neginf=-big if neginf is None else neginf).astype(x.dtype)
        return np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x.isfinite().to(grad.dtype)


register("nan_to_num", inplace=True)(NanToNum)


# ----------------------------------------------------------------------------- clamp, lerp, ...
class Clamp(Op):
    """Limit values to [min, max]; the gradient passes where the input was inside."""

    @staticmethod
    def forward(ctx, x, lo=None, hi=None):
        y = x
        if lo is not None:
            y = np.maximum(y, lo)
        if hi is not None:
            y = np.minimum(y, hi)
        if y is x:
            y = x.copy()
        ctx.save_for_backward(x, lo, hi)
        return y.astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        x, lo, hi = ctx.saved_tensors
        mask = None
        if lo is not None:
            mask = x >= lo
        if hi is not None:
            mask = (x <= hi) if mask is None else mask & (x <= hi)
        gx = grad * mask.to(grad.dtype) if mask is not None else grad
        glo = ghi = None
        # y = min(max(x, lo), hi): when lo > hi every output is hi, so lo gets no gradient
        if lo is not None and ctx.needs_input_grad[1]:
            pick = (x < lo) if hi is None else (x < lo) & (lo < hi)
            glo = sum_to(grad * pick.to(grad.dtype), lo.shape)
        if hi is not None and ctx.needs_input_grad[2]:
            pick = (x > hi) if lo is None else (x > hi) | (hi < lo)
            ghi = sum_to(grad * pick.to(grad.dtype), hi.shape)
        return sum_to(gx, x.shape), glo, ghi


def clamp(input, min=None, max=None):
    """Clamp all elements into [min, max] (either bound may be None or a Tensor)."""
    if min is None and max is None:
        raise RuntimeError("clamp: At least one of 'min' or 'max' must not be None")
    # the bounds take part in type promotion like any other operand (torch.result_type), so
    # an int tensor clamped by a float number becomes float, a float tensor stays float
    args = promote_args("clamp", input, min, max)
    return Clamp.apply(args[0], args[1], args[2])


register("clamp", inplace=True, ref=np.clip, aliases=("clip",), dtypes=D.ALL)(clamp)
register("clamp_min", inplace=True)(lambda input, min: clamp(input, min=min))
register("clamp_max", inplace=True)(lambda input, max: clamp(input, max=max))


def lerp(input, end, weight):
    """input + weight * (end - input)."""
    return input + weight * (end - input)


def addcmul(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 * tensor2."""
    return input + value * tensor1 * tensor2 if value != 1 else input + tensor1 * tensor2


def addcdiv(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 / tensor2."""
    return input + value * (tensor1 / tensor2)


register("lerp", inplace=True)(lerp)
register("addcmul", inplace=True)(addcmul)
register("addcdiv", inplace=True)(addcdiv)


def logit(input, eps=None):
    """log(p / (1 - p)), with p clamped to [eps, 1 - eps] when eps is given."""
    x = input if eps is None else input.clamp(eps, 1 - eps)
    return (x / (1 - x)).log()


register("logit", inplace=True)(logit)


def _gelu_np(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + _erf_np(x / math.sqrt(2)))


class Gelu(Op):
    """Gaussian error linear unit; approximate='tanh' uses the tanh formula."""

    @staticmethod
    def forward(ctx, x, approximate="none"):
        if approximate not in ("none", "tanh"):
            raise RuntimeError(f"gelu: approximate argument must be either none or tanh, got "
                               f"'{approximate}'")
        ctx.save_for_backward(x)
        ctx.approximate = approximate
        return _gelu_np(x, approximate).astype(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        if ctx.approximate == "tanh":
            k = math.sqrt(2 / math.pi)
            inner = k * (x + 0.044715 * x * x * x)
            t = inner.tanh()
            d = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x)
        else:  # d/dx x Phi(x) = Phi(x) + x phi(x)
            cdf = 0.5 * (1 + (x * (1 / math.sqrt(2))).erf())
            pdf = (-0.5 * x * x).exp() * (1 / math.sqrt(2 * math.pi))
            d = cdf + x * pdf
        return grad * d


register("gelu", inplace=False, ref=_gelu_np)(Gelu)
