"""ONNX translations of elementwise math, reductions and products beyond the basic arithmetic of
_functions.py (the registry is there). ONNX has no operator for several of them (log1p, trunc,
atan2, var, ...): those are written as small compositions of standard operators."""
from __future__ import annotations

import math
import operator

import numpy as np

import ember

from ._builder import Builder, T
from ._functions import _e, _out_dtype, _reg, _Unsupported


def arg(args, kwargs, i: int, name: str, default=None):
    """Argument ``i`` of the call, given positionally or as ``name=``."""
    return args[i] if len(args) > i else kwargs.get(name, default)


def _lin(name: str):
    """``ember.linalg.<name>`` if it exists."""
    return getattr(ember.linalg, name, None)


def _k(b: Builder, v, x: T) -> T:
    """A constant (or value) in ``x``'s dtype."""
    return b.tensor(v, x.dtype)


def _f(b: Builder, node, x) -> T:
    """``x`` in the call's result dtype (integer inputs of float functions are promoted)."""
    return b.tensor(x, _out_dtype(node))


# ------------------------------------------------------------------------------ unary
def _unary(build):
    def tr(b, node, args, kwargs):
        if not isinstance(args[0], T):
            raise _Unsupported()
        return build(b, _f(b, node, args[0]))
    return tr


def _by_name(*names, methods=True):
    targets = [_e(n) for n in names]
    return _reg(*targets, methods=names if methods else ())


for _name, _op in (("acosh", "Acosh"), ("asinh", "Asinh"), ("atanh", "Atanh"),
                   ("cosh", "Cosh"), ("sinh", "Sinh"), ("sgn", "Sign")):
    _by_name(_name)(_unary(lambda b, x, _op=_op: b.op(_op, [x])))
for _alias, _op in (("arccosh", "Acosh"), ("arcsinh", "Asinh"), ("arctanh", "Atanh")):
    _by_name(_alias)(_unary(lambda b, x, _op=_op: b.op(_op, [x])))


def _scaled_log(base):
    return lambda b, x: b.op("Div", [b.op("Log", [x]), _k(b, math.log(base), x)])


_by_name("log10")(_unary(_scaled_log(10.0)))
_by_name("log2")(_unary(_scaled_log(2.0)))
_by_name("log1p")(_unary(lambda b, x: b.op("Log", [b.op("Add", [x, _k(b, 1.0, x)])])))
_by_name("expm1")(_unary(lambda b, x: b.op("Sub", [b.op("Exp", [x]), _k(b, 1.0, x)])))
_by_name("exp2")(_unary(lambda b, x: b.op("Pow", [_k(b, 2.0, x), x])))
_by_name("erfc")(_unary(lambda b, x: b.op("Sub", [_k(b, 1.0, x), b.op("Erf", [x])])))
_by_name("square")(_unary(lambda b, x: b.op("Mul", [x, x])))
_by_name("deg2rad")(_unary(lambda b, x: b.op("Mul", [x, _k(b, math.pi / 180.0, x)])))
_by_name("rad2deg")(_unary(lambda b, x: b.op("Mul", [x, _k(b, 180.0 / math.pi, x)])))


def trunc(b: Builder, x: T) -> T:
    # ONNX has no Trunc: sign(x) * floor(|x|) rounds toward zero
    if np.issubdtype(x.dtype, np.integer):
        return x
    return b.op("Mul", [b.op("Sign", [x]), b.op("Floor", [b.op("Abs", [x])])])


_by_name("trunc", "fix")(_unary(trunc))
_by_name("frac")(_unary(lambda b, x: b.op("Sub", [x, trunc(b, x)])))


@_by_name("round")
def _round(b, node, args, kwargs):
    x = args[0]
    decimals = arg(args, kwargs, 1, "decimals", 0)
    if np.issubdtype(x.dtype, np.integer) and not decimals:
        return x
    if not decimals:
        return b.op("Round", [x])       # half to even, as ember's
    scale = _k(b, 10.0 ** decimals, x)
    return b.op("Div", [b.op("Round", [b.op("Mul", [x, scale])]), scale])


def _pred(build):
    def tr(b, node, args, kwargs):
        x = args[0]
        if np.issubdtype(x.dtype, np.integer) or x.dtype == np.bool_:
            return build(b, b.cast(x, np.float32))
        return build(b, x)
    return tr


_by_name("isnan")(_pred(lambda b, x: b.op("IsNaN", [x], dtype=np.bool_)))
_by_name("isinf")(_pred(lambda b, x: b.op("IsInf", [x], dtype=np.bool_)))
_by_name("isposinf")(_pred(lambda b, x: b.op("IsInf", [x], dtype=np.bool_,
                                             detect_negative=0)))
_by_name("isneginf")(_pred(lambda b, x: b.op("IsInf", [x], dtype=np.bool_,
                                             detect_positive=0)))
_by_name("isfinite")(_pred(lambda b, x: b.op("Not", [b.op("Or", [
    b.op("IsNaN", [x], dtype=np.bool_), b.op("IsInf", [x], dtype=np.bool_)])])))


def signbit(b: Builder, x: T) -> T:
    # 1/x keeps the sign of a zero (1/-0.0 = -inf), so it tells -0.0 from 0.0
    neg = b.op("Less", [x, _k(b, 0.0, x)], dtype=np.bool_)
    return b.op("Or", [neg, b.op("Less", [b.op("Reciprocal", [x]), _k(b, 0.0, x)],
                                 dtype=np.bool_)])


_by_name("signbit")(_pred(signbit))


@_by_name("logit")
def _logit(b, node, args, kwargs):
    x = _f(b, node, args[0])
    eps = arg(args, kwargs, 1, "eps")
    if eps is not None:
        x = b.op("Clip", [x, _k(b, eps, x), _k(b, 1.0 - eps, x)])
    return b.op("Log", [b.op("Div", [x, b.op("Sub", [_k(b, 1.0, x), x])])])


@_by_name("sinc")
def _sinc(b, node, args, kwargs):
    x = _f(b, node, args[0])
    px = b.op("Mul", [x, _k(b, math.pi, x)])
    zero = b.op("Equal", [x, _k(b, 0.0, x)], dtype=np.bool_)
    safe = b.op("Where", [zero, _k(b, 1.0, x), px])
    return b.op("Where", [zero, _k(b, 1.0, x), b.op("Div", [b.op("Sin", [safe]), safe])])


@_by_name("nan_to_num")
def _nan_to_num(b, node, args, kwargs):
    x = args[0]
    if not np.issubdtype(x.dtype, np.floating):
        return b.op("Identity", [x])
    info = np.finfo(x.dtype)
    nan = arg(args, kwargs, 1, "nan", 0.0)
    pos = arg(args, kwargs, 2, "posinf")
    neg = arg(args, kwargs, 3, "neginf")
    pos = float(info.max) if pos is None else pos
    neg = float(info.min) if neg is None else neg
    y = b.op("Where", [b.op("IsNaN", [x], dtype=np.bool_), _k(b, nan, x), x])
    y = b.op("Where", [b.op("IsInf", [y], dtype=np.bool_, detect_negative=0), _k(b, pos, x), y])
    return b.op("Where", [b.op("IsInf", [y], dtype=np.bool_, detect_positive=0),
                          _k(b, neg, x), y])


# ------------------------------------------------------------------------------ binary
def _binary(build):
    def tr(b, node, args, kwargs):
        a, c = args[0], args[1] if len(args) > 1 else kwargs.get("other")
        if not isinstance(a, T) and not isinstance(c, T):
            raise _Unsupported()
        dt = _out_dtype(node)
        return build(b, b.tensor(a, dt), b.tensor(c, dt))
    return tr


_by_name("maximum")(_binary(lambda b, x, y: b.op("Max", [x, y])))
_by_name("minimum")(_binary(lambda b, x, y: b.op("Min", [x, y])))


def _nan_skipping(op_type):
    def build(b, x, y):
        if not np.issubdtype(x.dtype, np.floating):
            return b.op(op_type, [x, y])
        # fmax/fmin take the other operand where one is NaN
        m = b.op(op_type, [x, y])
        m = b.op("Where", [b.op("IsNaN", [x], dtype=np.bool_), y, m])
        return b.op("Where", [b.op("IsNaN", [y], dtype=np.bool_), x, m])
    return build


_by_name("fmax")(_binary(_nan_skipping("Max")))
_by_name("fmin")(_binary(_nan_skipping("Min")))
_by_name("hypot")(_binary(lambda b, x, y: b.op("Sqrt", [b.op("Add", [b.op("Mul", [x, x]),
                                                                      b.op("Mul", [y, y])])])))
_by_name("logical_xor")(lambda b, node, args, kwargs: b.op(
    "Xor", [b.tensor(args[0], np.bool_), b.tensor(args[1], np.bool_)], dtype=np.bool_))


def atan2(b: Builder, y: T, x: T) -> T:
    # atan(y/x) is right for x > 0; x < 0 adds +-pi by the sign of y; x == 0 gives +-pi/2
    base = b.op("Atan", [b.op("Div", [y, x])])
    pi = _k(b, math.pi, x)
    y_neg = signbit(b, y)
    shift = b.op("Where", [y_neg, b.op("Neg", [pi]), pi])
    left = b.op("Add", [base, shift])
    zero_x = b.op("Where", [b.op("Equal", [y, _k(b, 0.0, y)], dtype=np.bool_),
                            b.op("Where", [signbit(b, x), shift, _k(b, 0.0, x)]),
                            b.op("Mul", [shift, _k(b, 0.5, x)])])
    out = b.op("Where", [b.op("Less", [x, _k(b, 0.0, x)], dtype=np.bool_), left, base])
    return b.op("Where", [b.op("Equal", [x, _k(b, 0.0, x)], dtype=np.bool_), zero_x, out])


_by_name("atan2", "arctan2")(_binary(atan2))
_by_name("copysign")(_binary(lambda b, x, y: b.op("Mul", [b.op("Abs", [x]), b.op(
    "Where", [signbit(b, y), _k(b, -1.0, x), _k(b, 1.0, x)])])))


@_by_name("xlogy")
def _xlogy(b, node, args, kwargs):
    dt = _out_dtype(node)
    x, y = b.tensor(args[0], dt), b.tensor(args[1], dt)
    prod = b.op("Mul", [x, b.op("Log", [y])])
    zero = b.op("And", [b.op("Equal", [x, _k(b, 0.0, x)], dtype=np.bool_),
                        b.op("Not", [b.op("IsNaN", [y], dtype=np.bool_)])])
    return b.op("Where", [zero, _k(b, 0.0, x), prod])


@_by_name("fmod")
def _fmod(b, node, args, kwargs):
    dt = _out_dtype(node)
    return b.op("Mod", [b.tensor(args[0], dt), b.tensor(args[1], dt)], fmod=1)


@_reg(operator.mod)
@_by_name("remainder")
def _remainder(b, node, args, kwargs):
    if not isinstance(args[0], T) and not isinstance(args[1], T):
        return args[0] % args[1]        # Python sizes
    dt = _out_dtype(node)
    x, y = b.tensor(args[0], dt), b.tensor(args[1], dt)
    if np.issubdtype(dt, np.integer):
        return b.op("Mod", [x, y], fmod=0)      # the result takes the divisor's sign
    return b.op("Sub", [x, b.op("Mul", [b.op("Floor", [b.op("Div", [x, y])]), y])])


@_by_name("float_power")
def _float_power(b, node, args, kwargs):
    return b.op("Pow", [b.tensor(args[0], np.float64), b.tensor(args[1], np.float64)])


@_by_name("clamp_min")
def _clamp_min(b, node, args, kwargs):
    lo = arg(args, kwargs, 1, "min")
    return b.op("Max", [args[0], b.tensor(lo, args[0].dtype)])


@_by_name("clamp_max")
def _clamp_max(b, node, args, kwargs):
    hi = arg(args, kwargs, 1, "max")
    return b.op("Min", [args[0], b.tensor(hi, args[0].dtype)])


def _bitwise(op_type, bool_op):
    def tr(b, node, args, kwargs):
        dt = _out_dtype(node)
        ins = [b.tensor(a, dt) for a in args[:2]]
        return b.op(bool_op if dt == np.bool_ else op_type, ins)
    return tr


_by_name("bitwise_and")(_bitwise("BitwiseAnd", "And"))
_by_name("bitwise_or")(_bitwise("BitwiseOr", "Or"))
_by_name("bitwise_xor")(_bitwise("BitwiseXor", "Xor"))
_by_name("bitwise_not")(_bitwise("BitwiseNot", "Not"))


@_by_name("lerp")
def _lerp(b, node, args, kwargs):
    dt = _out_dtype(node)
    x, end, w = (b.tensor(v, dt) for v in (args[0], args[1], arg(args, kwargs, 2, "weight")))
    return b.op("Add", [x, b.op("Mul", [w, b.op("Sub", [end, x])])])


def _addc(op_type):
    def tr(b, node, args, kwargs):
        dt = _out_dtype(node)
        x, t1, t2 = (b.tensor(v, dt) for v in args[:3])
        value = arg(args, kwargs, 3, "value", 1)
        term = b.op(op_type, [t1, t2])
        if value != 1:
            term = b.op("Mul", [term, b.tensor(value, dt)])
        return b.op("Add", [x, term])
    return tr


_by_name("addcmul")(_addc("Mul"))
_by_name("addcdiv")(_addc("Div"))
