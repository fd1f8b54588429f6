"""Elementwise unary ops: unary math (one ``unary_op`` each: the NumPy forward named after
the op, its derivative in the decorator), predicates, clamp, lerp/addcmul/addcdiv, logit, gelu.

Each op's gradient is written next to it with ember ops, so double backward works.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _dtype as D
from .._backend import reusable_empty
from .._meta import mark
from .._tensor import Tensor, _make
from ..autograd.function import Op, node_class
from ..autograd.grad_mode import _state as _grad_state
from ._kernels import gelu as _kgelu
from ._kernels import pointwise as _kpoint
from .indexing import where
from .registry import ensure_tensor, promote_args, register, result_dtype, sum_to


def _float_of(x):
    """Integer/bool inputs of float-only math are computed in the default float dtype."""
    if x.dtype.kind in "biu":
        return x.astype(D.get_default_dtype().np)
    return x


def unary_op(df, *, save="x", keep_int=False, inplace=True, aliases=(), df_np=None,
             public=True, complex_ok=False, real_out=False, holomorphic=True, quiet=False,
             bool_to_long=False, out_exact=False):
    """Decorator: the NumPy forward ``f(x, *params)``, named after the op, becomes an elementwise
    Op with dL/dx = ``df(grad, saved, *params)`` written with ember ops (so double backward
    works). The decorated name is bound to the Op class.

    ``saved`` is x, or the output y with ``save="y"`` (the cheaper value for exp, tanh, sigmoid).
    ``df_np(grad_array, saved_array, *params)``, the same derivative on NumPy arrays, replaces df
    when the backward itself is not recorded (no create_graph): one fused pass instead of a chain
    of graph nodes and temporaries. ``public`` ops are registered as ``ember.<name>`` with the
    method, in-place and out= forms; the others (nn activations) are called by
    ``ember.nn.functional``. ``params`` are Python scalars and get no gradient.

    ``complex_ok`` ops accept complex input; they are holomorphic there, so ``df`` written for
    real x also serves complex z (see NOTE [Complex gradients]); ``holomorphic=False`` ops (abs,
    sgn) write df for complex z themselves. ``real_out`` (abs): the result of a complex input
    is real. Other ops raise
    NotImplementedError for complex input, as torch does.

    ``quiet`` ops (neg, relu, floor...) cannot raise a floating-point warning in NumPy
    (no overflow, division or invalid operation is possible), so they skip the np.errstate
    block the others enter: about 1 us of a ~2 us small-tensor op.

    ``bool_to_long`` ops (square: torch's pow(x, 2)) compute a bool input as int64 and return
    int64, as torch's type promotion of a bool base does.

    ``out_exact`` ops take only an out= of their result's dtype (NOTE [out= of another dtype]
    in registry.py).
    """

    def deco(f):
        name = f.__name__

        class Unary(Op):
            @staticmethod
            def forward(ctx, x, *params):
                if x.dtype.kind == "c" and not complex_ok:
                    raise NotImplementedError(f"{name}: not implemented for complex tensors; "
                                              f"got dtype {D.from_numpy_dtype(x.dtype)}.")
                if bool_to_long and x.dtype == np.bool_:
                    x = x.astype(np.int64)
                if not keep_int:
                    x = _float_of(x)
                # asarray: a ufunc on a 0-d array returns a NumPy scalar, and a saved output
                # is recognised by identity (see _unary_saves_array in tests/ops)
                if quiet:
                    y = np.asarray(f(x, *params))
                else:
                    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                        y = np.asarray(f(x, *params))
                if y.dtype != x.dtype and not (real_out and x.dtype.kind == "c"):
                    y = y.astype(x.dtype)
                if df is not None:
                    ctx.params = params
                    ctx.save_for_backward(x if save == "x" else y)
                return y

            @staticmethod
            def backward(ctx, grad):
                (v,) = ctx.saved_tensors
                if df_np is not None and not _grad_state.enabled and grad._data.dtype.kind != "c":
                    if quiet:
                        gx = np.asarray(df_np(grad._data, v._data, *ctx.params))
                    else:
                        with np.errstate(over="ignore", invalid="ignore"):
                            gx = np.asarray(df_np(grad._data, v._data, *ctx.params))
                    gx = _make(gx.astype(v._data.dtype, copy=False))
                else:
                    gx = df(grad, v, *ctx.params)
                return (gx,) + (None,) * len(ctx.params) if ctx.params else gx

        Unary.holomorphic = complex_ok and holomorphic
        Unary.__name__ = "".join(p.capitalize() for p in name.split("_"))
        Unary.__qualname__ = Unary.__name__
        Unary._node_cls = node_class(Unary.__name__ + "Backward0")  # named after the rename
        Unary.__doc__ = f.__doc__ or f"Elementwise {name}."
        if public:
            register(name, inplace=inplace, aliases=aliases, params=f,
                     out_exact=out_exact)(Unary)
        return Unary

    return deco


def _erfinv_np(x):
    from scipy.special import erfinv
    return erfinv(x)


def _sigmoid_np(x):
    """1 / (1 + e^-x) without overflow: e^-|x| never overflows, and the sign picks the form
    (1 / (1 + e) for x >= 0, e / (1 + e) below), which also keeps float16 results that
    1 / (1 + inf) would flush to 0."""
    if x.dtype.kind == "c":
        with np.errstate(over="ignore"):
            return 1 / (1 + np.exp(-x))
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1, e) / (1 + e)


def _erf_np(x):
    from scipy.special import erf
    return erf(x)


def _gammaln(x):
    from scipy.special import gammaln
    y = gammaln(x)
    # log|Gamma(x)| grows without bound as x -> -inf (C's lgamma and torch give +inf there);
    # scipy returns -inf
    return np.where(np.isneginf(x), np.inf, y).astype(y.dtype, copy=False)


def _sign(x):
    if x.dtype.kind == "c":
        raise NotImplementedError("sign: Unlike NumPy, torch.sign is not intended to support "
                                  "complex numbers. Please use torch.sgn instead.")
    if x.dtype == np.bool_:  # np.sign has no bool loop
        return x.copy()
    y = np.sign(x)
    if x.dtype.kind == "f":
        # torch computes (0 < x) - (x < 0): NaN gives 0, where np.sign gives NaN
        y = np.where(np.isnan(x), 0, y).astype(x.dtype, copy=False)
    return y


def _digamma(x):
    from scipy.special import digamma
    return digamma(x)


_NO_BOOL = D.ALL[1:]  # every dtype but bool


def _reject_bool(name, x, hint=""):
    """torch's RuntimeError for bool input (NumPy would raise a TypeError)."""
    if x.dtype == np.bool_:
        raise RuntimeError(f"{name}: not supported for bool tensors; got dtype ember.bool." + hint)


def _no_bool_kernel(kernel, x):
    """torch has no bool kernel for these ops: a NotImplementedError (a RuntimeError subclass)
    naming the CPU kernel, where NumPy would compute a bool result."""
    if x.dtype == np.bool_:
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


@unary_op(lambda g, x: -g, save="none", keep_int=True, aliases=("negative",), complex_ok=True,
          quiet=True, out_exact=True)
def neg(x):
    _reject_bool("neg", x, " Negation, the `-` operator, on a bool tensor is not supported; to "
                 "invert a mask use `~` or logical_not().")
    return np.negative(x)


# d e^x = e^x
@unary_op(lambda g, y: g * y, save="y", complex_ok=True)
def exp(x):
    return np.exp(x)


@unary_op(lambda g, y: g * y * math.log(2), save="y", complex_ok=True)
def exp2(x):
    return np.exp2(x)


@unary_op(lambda g, y: g * (y + 1), save="y", complex_ok=True)
def expm1(x):
    return np.expm1(x)


@unary_op(lambda g, x: g / x, complex_ok=True)
def log(x):
    return np.log(x)


@unary_op(lambda g, x: g / (x * math.log(2)), complex_ok=True)
def log2(x):
    return np.log2(x)


@unary_op(lambda g, x: g / (x * math.log(10)), complex_ok=True)
def log10(x):
    return np.log10(x)


@unary_op(lambda g, x: g / (x + 1), complex_ok=True)
def log1p(x):
    return np.log1p(x)


# d sqrt(x) = 1 / (2 sqrt(x))
@unary_op(lambda g, y: g / (2 * y), save="y", complex_ok=True)
def sqrt(x):
    return np.sqrt(x)


@unary_op(lambda g, y: -0.5 * g * y * y * y, save="y", complex_ok=True)
def rsqrt(x):
    return 1 / np.sqrt(x)


@unary_op(lambda g, x: 2 * g * x, keep_int=True, complex_ok=True, bool_to_long=True)
def square(x):
    return np.square(x)


@unary_op(lambda g, y: -g * y * y, save="y", complex_ok=True)
def reciprocal(x):
    return np.reciprocal(x)


@unary_op(lambda g, x: g * x.cos(), complex_ok=True)
def sin(x):
    return np.sin(x)


@unary_op(lambda g, x: -g * x.sin(), complex_ok=True)
def cos(x):
    return np.cos(x)


@unary_op(lambda g, y: g * (1 + y * y), save="y", complex_ok=True)
def tan(x):
    return np.tan(x)


@unary_op(lambda g, x: g * (1 - x * x).rsqrt(), aliases=("arcsin",), complex_ok=True)
def asin(x):
    return np.arcsin(x)


@unary_op(lambda g, x: -g * (1 - x * x).rsqrt(), aliases=("arccos",), complex_ok=True)
def acos(x):
    return np.arccos(x)


@unary_op(lambda g, x: g / (1 + x * x), aliases=("arctan",), complex_ok=True)
def atan(x):
    return np.arctan(x)


@unary_op(lambda g, x: g * x.cosh(), complex_ok=True)
def sinh(x):
    return np.sinh(x)


@unary_op(lambda g, x: g * x.sinh(), complex_ok=True)
def cosh(x):
    return np.cosh(x)


# d tanh = 1 - tanh^2
@unary_op(lambda g, y: g * (1 - y * y), save="y", df_np=_kpoint.tanh_grad, complex_ok=True)
def tanh(x):
    return _kpoint.tanh(x)  # np.tanh; a big array in parts (NOTE [Big passes in parts])


@unary_op(lambda g, x: g * (x * x + 1).rsqrt(), aliases=("arcsinh",), complex_ok=True)
def asinh(x):
    return np.arcsinh(x)


def _acosh_grad(g, x):
    if x.is_complex():  # sqrt(z - 1) sqrt(z + 1): sqrt(z^2 - 1) has the wrong branch cuts
        return g / ((x - 1).sqrt() * (x + 1).sqrt())
    # real x: torch's 1 / sqrt(x^2 - 1), which is also finite below -1 (where acosh is NaN)
    return g * (x * x - 1).rsqrt()


@unary_op(_acosh_grad, aliases=("arccosh",), complex_ok=True)
def acosh(x):
    return np.arccosh(x)


@unary_op(lambda g, x: g / (1 - x * x), aliases=("arctanh",), complex_ok=True)
def atanh(x):
    return np.arctanh(x)


@unary_op(lambda g, y: g * y * (1 - y), save="y", df_np=_kpoint.sigmoid_grad, complex_ok=True)
def sigmoid(x):
    return _sigmoid_np(x)


@unary_op(lambda g, x: g * (2 / math.sqrt(math.pi)) * (-x * x).exp())
def erf(x):
    return _erf_np(x)


@unary_op(lambda g, x: -g * (2 / math.sqrt(math.pi)) * (-x * x).exp())
def erfc(x):
    from scipy.special import erfc as _erfc
    return _erfc(x)  # not 1 - erf(x), which cancels to 0 for x > ~4 (float32) / ~6 (float64)


@unary_op(lambda g, y: g * (math.sqrt(math.pi) / 2) * (y * y).exp(), save="y")
def erfinv(x):
    return _erfinv_np(x)


@unary_op(lambda g, x: g * x.digamma())
def lgamma(x):
    return _gammaln(x)


@unary_op(lambda g, x: g * x.polygamma(1))  # d psi/dx = psi^(1)
def digamma(x):
    return _digamma(x)


# d|x|/dx = sign(x); for complex z the gradient is grad * z/|z| (torch: grad * sgn(z))
@unary_op(lambda g, x: g * x.sgn(), keep_int=True, aliases=("absolute",), complex_ok=True,
          real_out=True, holomorphic=False, out_exact=True)
def abs(x):
    _no_bool_kernel("abs_cpu", x)
    return np.abs(x)


@unary_op(lambda g, x: g * 0, keep_int=True, complex_ok=True,  # _sign raises torch's message
          out_exact=True)
def sign(x):
    return _sign(x)


def _sgn_grad(g, x):
    if not x.is_complex():
        return g * 0
    # s = z/|z|: the gradient keeps the part of g tangent to the unit circle, scaled by 1/|z|
    # (0 at z = 0, as torch)
    r = x.abs()
    safe = r + (r == 0).to(r.dtype)
    s = x / safe
    return (g - (g * s.conj()).real * s) / safe * (r != 0).to(r.dtype)


def _sgn_np(x):
    if x.dtype.kind != "c":
        return _sign(x)
    r = np.abs(x)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(r == 0, 0, x / np.where(r == 0, 1, r)).astype(x.dtype)


@unary_op(_sgn_grad, keep_int=True, complex_ok=True, holomorphic=False, out_exact=True)
def sgn(x):
    return _sgn_np(x)


@unary_op(lambda g, x: g * 0, keep_int=True, quiet=True, out_exact=True)
def floor(x):
    _no_bool_kernel("floor_vml_cpu", x)
    return np.floor(x)


@unary_op(lambda g, x: g * 0, keep_int=True, quiet=True, out_exact=True)
def ceil(x):
    _no_bool_kernel("ceil_vml_cpu", x)
    return np.ceil(x)


@unary_op(lambda g, x: g * 0, keep_int=True, aliases=("fix",), quiet=True, out_exact=True)
def trunc(x):
    _no_bool_kernel("trunc_vml_cpu", x)
    return np.trunc(x)


@unary_op(lambda g, x: g, keep_int=True, out_exact=True)
def frac(x):
    _no_bool_kernel("frac_cpu", x)
    if x.dtype.kind in "iu":  # (torch has no integer kernel: an integer's fraction is 0)
        raise NotImplementedError(f"frac: not implemented for dtype "
                                  f"{D.from_numpy_dtype(x.dtype)}; expected a floating point "
                                  "tensor.")
    return x - np.trunc(x)


# torch's rule: the gradient is zeroed where y <= 0 and passes elsewhere, +inf and NaN included
# (a select, not g * mask: an inf/NaN g where y <= 0 gives 0)
@unary_op(lambda g, y: where(y <= 0, 0.0, g), save="y", keep_int=True,
          df_np=lambda g, y: _kpoint.masked_grad(g, y, 0, None), quiet=True)
def relu(x):
    if x.dtype == np.bool_:
        raise RuntimeError("Boolean inputs not supported for relu")
    return _kpoint.clamp(x, 0, math.inf) if x.dtype.kind == "f" else np.maximum(x, 0)


# d/dx sin(pi x) / (pi x) = (pi x cos(pi x) - sin(pi x)) / (pi x^2), divided by pi x and then
# by x: pi x^2 underflows to 0 for tiny x (1e-30 in float32 gave 0 / 0 = NaN; the limit is 0)
@unary_op(lambda g, x: g * where(
    x == 0, 0.0, ((math.pi * x).cos() * math.pi * x - (math.pi * x).sin()) /
    (math.pi * where(x == 0, 1.0, x)) / where(x == 0, 1.0, x)), complex_ok=True)
def sinc(x):
    return np.sinc(x)


@unary_op(lambda g, x: g * (math.pi / 180))
def deg2rad(x):
    return np.deg2rad(x)


@unary_op(lambda g, x: g * (180 / math.pi))
def rad2deg(x):
    return np.rad2deg(x)



class Round(Op):
    """Round half to even (like torch), optionally to ``decimals`` places."""

    @staticmethod
    def forward(ctx, x, decimals=0):
        _no_bool_kernel("round_cpu" if decimals else "round_vml_cpu", x)
        # torch's kernels: no complex one, and with decimals= floating point only
        if x.dtype.kind == "c" or (decimals and x.dtype.kind in "iu"):
            raise NotImplementedError(f"round: not implemented for dtype "
                                      f"{D.from_numpy_dtype(x.dtype)}" + (
                                          f" with decimals={decimals}; expected a floating "
                                          "point tensor." if decimals else "."))
        return np.round(x, decimals)

    @staticmethod
    def backward(ctx, grad):
        return grad * 0


register("round", inplace=True, out_exact=True)(Round)


def _isnan(input):
    return _pred(input, np.isnan)


def _pred(input, f):
    if not isinstance(input, Tensor):
        raise TypeError(f"{getattr(f, '__name__', 'predicate')}(): argument 'input' (position 1) "
                        f"must be Tensor, not {type(input).__name__}")
    out = _make(np.asarray(f(input._data)))
    return mark(out) if input._meta else out  # computed on the stand-in: its shape holds


# (torch's isnan/isinf/isfinite take no out=; isposinf/isneginf/signbit only a bool one)
register("isnan", wrap_out=False)(_isnan)
register("isinf", wrap_out=False)(lambda input: _pred(input, np.isinf))
register("isfinite", wrap_out=False)(
    lambda input: _pred(input, np.isfinite))


def _infinity_sign(name, ufunc):
    def fn(input):
        if input.is_complex():
            raise RuntimeError(f"{name}: not implemented for complex tensors (dtype "
                               f"{input.dtype}); the sign of a complex infinity is undefined.")
        return _pred(input, ufunc)
    return fn


register("isposinf", out_exact=True)(_infinity_sign("isposinf", np.isposinf))
register("isneginf", out_exact=True)(_infinity_sign("isneginf", np.isneginf))
register("isreal")(lambda input: _pred(input, lambda a: np.ones(
    a.shape, bool)))
register("signbit", out_exact=True)(lambda input: _pred(input, np.signbit))
register("logical_not", inplace=True)(
    lambda input: _pred(input, np.logical_not))


def _bitwise_not(input):
    if input.is_floating_point() or input.is_complex():
        kind = "complex" if input.is_complex() else "floating"
        raise NotImplementedError(f"bitwise_not: not implemented for {kind} dtype "
                                  f"{input.dtype}; expected integer or bool tensors.")
    return _pred(input, np.invert)


register("bitwise_not", inplace=True, out_exact=True)(_bitwise_not)


class NanToNum(Op):
    """Replace NaN and infinities by finite numbers."""

    @staticmethod
    def forward(ctx, x, nan=0.0, posinf=None, neginf=None):
        ctx.save_for_backward(x)
        nan = 0.0 if nan is None else nan   # nan=None is torch's default spelled out
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


register("nan_to_num", inplace=True, out_exact=True)(NanToNum)


# ----------------------------------------------------------------------------- clamp, lerp, ...
class Clamp(Op):
    """Limit values to [min, max]; the gradient passes where the input was inside."""

    @staticmethod
    def forward(ctx, x, lo=None, hi=None):
        y = x
        # bound first: at a tie NumPy returns the second operand, so x = -0.0 clamped at 0
        # stays -0.0, as torch's (and the fused kernel's) x < lo ? lo : x
        if lo is not None:
            y = np.maximum(lo, y)
        if hi is not None:
            y = np.minimum(hi, y)
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
        # selects, as torch: an inf/NaN grad where the mask is off gives 0 (a product gives NaN)
        gx = where(mask, grad, 0.0) if mask is not None else grad
        glo = ghi = None
        # y = min(max(x, lo), hi): when lo > hi every output is hi, so lo gets no gradient
        if lo is not None and ctx.needs_input_grad[1]:
            pick = (x < lo) if hi is None else (x < lo) & (lo < hi)
            glo = sum_to(where(pick, grad, 0.0), lo.shape)
        if hi is not None and ctx.needs_input_grad[2]:
            pick = (x > hi) if lo is None else (x > hi) | (hi < lo)
            ghi = sum_to(where(pick, grad, 0.0), hi.shape)
        return sum_to(gx, x.shape), glo, ghi


def clamp(input, min=None, max=None):
    """Clamp all elements into [min, max] (either bound may be None or a Tensor)."""
    if min is None and max is None:
        ensure_tensor(input, "clamp", "input", 1)  # (torch reports a non-tensor input first)
        raise RuntimeError("clamp: At least one of 'min' or 'max' must not be None")
    if min is not None and max is not None and isinstance(min, Tensor) != isinstance(max,
                                                                                      Tensor):
        raise TypeError(f"clamp(): the bounds must be both numbers or both tensors (or None); got "
                        f"min of type {type(min).__name__} and max of type {type(max).__name__}")
    # the bounds take part in type promotion like any other operand (torch.result_type), so
    # an int tensor clamped by a float number becomes float, a float tensor stays float
    args = promote_args("clamp", input, min, max)
    kind = args[0]._data.dtype.kind
    if kind == "c":  # (a complex bound; a complex input is refused in complex.py)
        raise NotImplementedError(f"clamp: not supported for complex types; got input of dtype "
                                  f"{input.dtype} and bounds {min!r}, {max!r}.")
    for bound in (min, max):  # NOTE [Numbers that do not fit the dtype]
        if bound is not None and not isinstance(bound, Tensor):
            D.check_fits("clamp", bound, args[0].dtype)
    if kind == "b":
        raise NotImplementedError("clamp: not implemented for bool results (a bool input with "
                                  "bool or bool tensor bounds); clamp an integer tensor instead.")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        shapes = [a.shape for a in args if a is not None]
        if any(shape != shapes[0] for shape in shapes):  # same shapes need no check
            _check_broadcast("clamp", [a for a in args if a is not None])
    return Clamp.apply(args[0], args[1], args[2])


def _check_broadcast(name, tensors):
    """torch's RuntimeError for operands that do not broadcast (NumPy would raise ValueError
    from inside the kernel)."""
    try:
        np.broadcast_shapes(*(tuple(t.shape) for t in tensors))
    except ValueError:
        shapes = " and ".join(str(list(t.shape)) for t in tensors)
        raise RuntimeError(f"{name}: the shapes {shapes} do not broadcast; each dim must match "
                           "or be 1") from None


register("clamp", inplace=True, aliases=("clip",), out_exact=True)(clamp)
register("clamp_min", inplace=True, out_exact=True)(lambda input, min: clamp(input, min=min))
register("clamp_max", inplace=True, out_exact=True)(lambda input, max: clamp(input, max=max))


class Lerp(Op):
    """input + weight * (end - input), computed from the nearer end as torch does: below
    weight 0.5 from input, else end - (end - input) * (1 - weight) (exactly end at weight 1;
    an infinite input at weight >= 0.5 stays infinite)."""

    @staticmethod
    def forward(ctx, a, b, w):
        ctx.save_for_backward(a, b, w)
        with np.errstate(invalid="ignore", over="ignore"):
            diff = b - a
            y = np.where(np.abs(w) < 0.5, a + w * diff, b - diff * (1 - w))
        return np.asarray(y, dtype=np.result_type(a, b, w))

    @staticmethod
    def backward(ctx, grad):
        a, b, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        ga = sum_to(grad * (1 - w), a.shape) if need[0] else None
        gb = sum_to(grad * w, b.shape) if need[1] else None
        gw = sum_to(grad * (b - a), w.shape) if need[2] else None
        return ga, gb, gw


def lerp(input, end, weight):
    """input + weight * (end - input)."""
    # torch does not promote here: end and a tensor weight must have input's dtype, a float one
    if isinstance(input, Tensor) and not (input.is_floating_point() or input.is_complex()):
        raise NotImplementedError(f"lerp: not implemented for dtype {input.dtype}; expected a "
                                  "floating point or complex input.")
    for arg, value in (("end", end), ("weight", weight)):
        if isinstance(input, Tensor) and isinstance(value, Tensor) and value.dtype != input.dtype:
            raise RuntimeError(f"lerp: expected dtype {input.dtype} for `{arg}` but got dtype "
                               f"{value.dtype}.")
    args = promote_args("lerp", input, end, weight)
    try:
        return Lerp.apply(*args)
    except ValueError:  # NumPy's broadcasting error, as torch's RuntimeError
        _check_broadcast("lerp", [a for a in args if isinstance(a, Tensor)])
        raise


def _addc_value(name, input, tensor1, tensor2, value):
    """addcmul/addcdiv's checks (torch's): no bool kernel, and value is a number of the result's
    kind: a float value for integer tensors is truncated, as torch casts it."""
    if isinstance(input, Tensor) and input._data.dtype.kind in "fc" and type(value) is not \
            complex:  # a float result (the common case: optimizer states)
        # NOTE [Numbers that do not fit the dtype]; a half input computes in float32
        D.check_fits(name, value, D.float32 if input.dtype in (D.float16, D.bfloat16)
                     else input.dtype)
        return value
    dt = result_dtype(input, tensor1, tensor2)
    if dt is D.bool_:
        raise NotImplementedError(f"{name}: not implemented for bool tensors; got dtypes "
                                  f"{input.dtype}, {tensor1.dtype} and {tensor2.dtype}.")
    D.check_fits(name, value, dt)  # NOTE [Numbers that do not fit the dtype]
    if isinstance(value, complex) and not dt.is_complex:
        value = value.real  # (it fits: its imaginary part is 0) a number of the result's kind
    if not (dt.is_floating_point or dt.is_complex) and isinstance(value, float):
        return int(value)
    return value


def addcmul(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 * tensor2."""
    value = _addc_value("addcmul", input, tensor1, tensor2, value)
    return input + value * tensor1 * tensor2 if value != 1 else input + tensor1 * tensor2


def addcdiv(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 / tensor2."""
    integral = [t for t in (tensor1, tensor2) if isinstance(t, Tensor)
                and not (t.is_floating_point() or t.is_complex())]
    if len(integral) == 2:
        raise RuntimeError("addcdiv: integer division of tensor1 by tensor2 is no longer "
                           f"supported (got dtypes {tensor1.dtype} and {tensor2.dtype}); "
                           "convert them to a floating point dtype first, or use "
                           "input + value * torch.div(tensor1, tensor2, rounding_mode=...).")
    return input + value * (tensor1 / tensor2)


register("lerp", inplace=True)(lerp)
register("addcmul", inplace=True, deprecated="value")(addcmul)
register("addcdiv", inplace=True, deprecated="value")(addcdiv)


class Logit(Op):
    """log(p / (1 - p)), with p clamped to [eps, 1 - eps] when eps is given."""

    @staticmethod
    def forward(ctx, x, eps=None):
        x = _float_of(x)
        ctx.eps = eps
        ctx.save_for_backward(x)
        p = x if eps is None else np.clip(x, eps, 1 - eps)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.asarray(np.log(p / (1 - p)), dtype=x.dtype)

    @staticmethod
    def backward(ctx, grad):
        # torch's derivative: 1 / (p (1 - p)); without eps NaN outside [0, 1], with eps 0
        # where the clamp was active (and at NaN)
        (x,) = ctx.saved_tensors
        gx = grad / (x * (1 - x))
        if ctx.eps is None:
            return where((x < 0) | (x > 1), math.nan, gx), None
        return where((x >= ctx.eps) & (x <= 1 - ctx.eps), gx, 0.0), None


def logit(input, eps=None):
    """log(p / (1 - p)), with p clamped to [eps, 1 - eps] when eps is given."""
    if input.is_complex():  # (torch has no complex kernel)
        raise NotImplementedError(f"logit: not implemented for complex tensors; got "
                                  f"{input.dtype}, expected a real one")
    return Logit.apply(input, None if eps is None else float(eps))


register("logit", inplace=True)(logit)


def _gelu_np(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + _erf_np(x / math.sqrt(2)))


def _c_order(a):
    """a as a C-contiguous array of its own shape (np.ascontiguousarray makes 0-d arrays 1-d)."""
    return a if a.flags.c_contiguous else np.ascontiguousarray(a)


class Gelu(Op):
    """Gaussian error linear unit; approximate='tanh' uses the tanh formula."""

    @staticmethod
    def forward(ctx, x, approximate="none"):
        if approximate not in ("none", "tanh"):
            raise RuntimeError(f"gelu: approximate argument must be either none or tanh, got "
                               f"'{approximate}'")
        ctx.save_for_backward(x)
        ctx.approximate = approximate
        if _kgelu.fused(x, approximate):  # one vectorised pass (ember/ops/_kernels/gelu.py)
            x = _c_order(x)
            return _kgelu.gelu_forward(x, approximate, reusable_empty(x.shape, x.dtype))
        return _gelu_np(x, approximate).astype(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        g = grad._data
        if not _grad_state.enabled and _kgelu.fused(x._data, ctx.approximate) and \
                g.dtype == x._data.dtype and g.shape == x.shape:
            xs = _c_order(x._data)
            gx = _kgelu.gelu_backward(_c_order(g), xs, ctx.approximate,
                                      reusable_empty(xs.shape, xs.dtype))
            return _make(gx)
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


register("gelu", inplace=False)(Gelu)
