"""ONNX translations of call_function / call_method nodes (ember functions, Tensor methods and
Python operators). Each takes the Builder, the fx node and its arguments with fx values
replaced by ONNX values (``T``) or Python constants, and returns the node's ONNX value."""
from __future__ import annotations

import builtins
import math
import operator

import numpy as np

import ember
import ember.nn.functional as F

from ._builder import Builder, T

FUNCTIONS: dict = {}
METHODS: dict = {}


def _e(name: str):
    """``ember.<name>`` (or ``ember.nn.functional.<name>``) if it exists, else None."""
    return getattr(ember, name, None) or getattr(F, name, None)


def _reg(*targets, methods=()):
    def deco(fn):
        for t in targets:
            if t is not None:
                FUNCTIONS[t] = fn
        for m in methods:
            METHODS[m] = fn
        return fn
    return deco


def _out_dtype(node):
    return node.meta["onnx_dtype"]


def _norm(d: int, rank: int) -> int:
    return d + rank if d < 0 else d


# ------------------------------------------------------------------------------ elementwise
def _arith(op_type):
    def tr(b: Builder, node, args, kwargs):
        a, c = args[0], args[1]
        alpha = kwargs.get("alpha")
        if not isinstance(a, T) and not isinstance(c, T):
            return _python_scalar(op_type, a, c)
        dt = _safe_dtype(node, a, c)
        ta, tc = b.tensor(a, dt), b.tensor(c, dt)
        if alpha is not None and alpha != 1:
            tc = b.op("Mul", [tc, b.tensor(alpha, dt)])
        return b.op(op_type, [ta, tc], dtype=dt)
    return tr


def _python_scalar(op_type, a, c):
    fn = {"Add": operator.add, "Sub": operator.sub, "Mul": operator.mul,
          "Div": operator.truediv, "Pow": operator.pow}[op_type]
    return fn(a, c)


_reg(operator.add, _e("add"), methods=("add", "__add__"))(_arith("Add"))
_reg(operator.sub, _e("sub"), methods=("sub", "__sub__"))(_arith("Sub"))
_reg(operator.mul, _e("mul"), methods=("mul", "__mul__"))(_arith("Mul"))
_reg(operator.pow, _e("pow"), methods=("pow",))(_arith("Pow"))


@_reg(operator.truediv, _e("div"), _e("true_divide"), methods=("div", "true_divide"))
def _truediv(b, node, args, kwargs):
    a, c = args[0], args[1]
    mode = kwargs.get("rounding_mode")
    dt = _safe_dtype(node, a, c)
    if not isinstance(a, T) and not isinstance(c, T):
        return a / c
    q = b.op("Div", [b.tensor(a, dt), b.tensor(c, dt)], dtype=dt)
    if mode == "floor" and np.issubdtype(dt, np.floating):
        q = b.op("Floor", [q])
    return q


@_reg(operator.floordiv, _e("floor_divide"), methods=("floor_divide",))
def _floordiv(b, node, args, kwargs):
    a, c = args
    if not isinstance(a, T) and not isinstance(c, T):
        return a // c
    dt = _safe_dtype(node, a, c)
    q = b.op("Div", [b.tensor(a, dt), b.tensor(c, dt)], dtype=dt)
    # integer Div truncates; shape arithmetic only divides non-negative sizes
    return q if np.issubdtype(dt, np.integer) else b.op("Floor", [q])


def _safe_dtype(node, *vals):
    """The result dtype: from the eager run for tensors; int64 for computed sizes."""
    if "onnx_dtype" in node.meta:
        return node.meta["onnx_dtype"]
    for v in vals:
        if isinstance(v, T):
            return v.dtype
    return np.dtype(np.int64)


def _compare(op_type, swap=False, negate=False):
    def tr(b: Builder, node, args, kwargs):
        a, c = args[0], args[1]
        if not isinstance(a, T) and not isinstance(c, T):
            return {"Equal": operator.eq, "Less": operator.lt, "Greater": operator.gt,
                    "LessOrEqual": operator.le, "GreaterOrEqual": operator.ge}[op_type](a, c)
        ref = a if isinstance(a, T) else c
        other = c if ref is a else a
        dt = ref.dtype
        if isinstance(other, T) and other.dtype != dt:
            dt = np.promote_types(dt, other.dtype)
        ta, tc = b.tensor(a, dt), b.tensor(c, dt)
        out = b.op(op_type, [ta, tc], dtype=np.bool_)
        return b.op("Not", [out], dtype=np.bool_) if negate else out
    return tr


_reg(operator.eq, _e("eq"), methods=("eq",))(_compare("Equal"))
_reg(operator.ne, _e("ne"), methods=("ne",))(_compare("Equal", negate=True))
_reg(operator.lt, _e("lt"), methods=("lt",))(_compare("Less"))
_reg(operator.gt, _e("gt"), methods=("gt",))(_compare("Greater"))
_reg(operator.le, _e("le"), methods=("le",))(_compare("LessOrEqual"))
_reg(operator.ge, _e("ge"), methods=("ge",))(_compare("GreaterOrEqual"))


def _logical(op_type):
    def tr(b, node, args, kwargs):
        return b.op(op_type, [b.tensor(args[0], np.bool_), b.tensor(args[1], np.bool_)],
                    dtype=np.bool_)
    return tr


_reg(operator.and_, _e("logical_and"), methods=("logical_and",))(_logical("And"))
_reg(operator.or_, _e("logical_or"), methods=("logical_or",))(_logical("Or"))


def _unary(op_type, **attrs):
    def tr(b: Builder, node, args, kwargs):
        x = args[0]
        if not isinstance(x, T):
            raise _Unsupported()
        return b.op(op_type, [b.tensor(x, _out_dtype(node))], **attrs)
    return tr


class _Unsupported(Exception):
    """A translation does not cover this form of the call (turned into a user-facing error)."""


for _name, _op in (("neg", "Neg"), ("abs", "Abs"), ("exp", "Exp"), ("log", "Log"),
                   ("sqrt", "Sqrt"), ("sin", "Sin"), ("cos", "Cos"), ("tanh", "Tanh"),
                   ("sigmoid", "Sigmoid"), ("relu", "Relu"), ("erf", "Erf"),
                   ("reciprocal", "Reciprocal"), ("floor", "Floor"), ("ceil", "Ceil"),
                   ("logical_not", "Not"), ("sign", "Sign"), ("tan", "Tan"),
                   ("asin", "Asin"), ("acos", "Acos"), ("atan", "Atan")):
    _targets = [getattr(ember, _name)] if hasattr(ember, _name) else []
    if hasattr(F, _name):
        _targets.append(getattr(F, _name))
    _reg(*_targets, methods=(_name,))(_unary(_op))
_reg(operator.neg)(_unary("Neg"))
_reg(operator.abs)(_unary("Abs"))
_reg(operator.invert)(_unary("Not"))
_reg(getattr(ember, "arcsin", _e("asin")))(_unary("Asin"))
_reg(getattr(ember, "arccos", _e("acos")))(_unary("Acos"))
_reg(_e("relu6"))(lambda b, node, args, kwargs: clip(b, args[0], 0.0, 6.0))


@_reg(_e("rsqrt"), methods=("rsqrt",))
def _rsqrt(b, node, args, kwargs):
    return b.op("Reciprocal", [b.op("Sqrt", [args[0]])])


def clip(b: Builder, x: T, lo, hi) -> T:
    lo_t = b.tensor(lo, x.dtype) if lo is not None else ""
    hi_t = b.tensor(hi, x.dtype) if hi is not None else ""
    return b.op("Clip", [x, lo_t, hi_t])


@_reg(_e("clamp"), _e("hardtanh"), methods=("clamp", "clip"))
def _clamp(b, node, args, kwargs):
    x = args[0]
    lo = args[1] if len(args) > 1 else kwargs.get("min", kwargs.get("min_val"))
    hi = args[2] if len(args) > 2 else kwargs.get("max", kwargs.get("max_val"))
    if node.target is F.hardtanh:
        lo = -1.0 if lo is None else lo
        hi = 1.0 if hi is None else hi
    return clip(b, x, lo, hi)


def gelu(b: Builder, x: T, approximate: str = "none") -> T:
    half = b.tensor(0.5, x.dtype)
    one = b.tensor(1.0, x.dtype)
    if approximate == "tanh":
        # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        cube = b.op("Mul", [b.op("Mul", [x, x]), x])
        inner = b.op("Add", [x, b.op("Mul", [cube, b.tensor(0.044715, x.dtype)])])
        t = b.op("Tanh", [b.op("Mul", [inner, b.tensor(math.sqrt(2 / math.pi), x.dtype)])])
        return b.op("Mul", [b.op("Mul", [x, half]), b.op("Add", [t, one])])
    # 0.5 x (1 + erf(x / sqrt(2)))
    e = b.op("Erf", [b.op("Div", [x, b.tensor(math.sqrt(2.0), x.dtype)])])
    return b.op("Mul", [b.op("Mul", [x, half]), b.op("Add", [e, one])])


@_reg(_e("gelu"))
def _gelu(b, node, args, kwargs):
    return gelu(b, args[0], kwargs.get("approximate", args[1] if len(args) > 1 else "none"))


def silu(b: Builder, x: T) -> T:
    return b.op("Mul", [x, b.op("Sigmoid", [x])])


_reg(_e("silu"))(lambda b, node, args, kwargs: silu(b, args[0]))


@_reg(_e("leaky_relu"))
def _leaky(b, node, args, kwargs):
    slope = args[1] if len(args) > 1 else kwargs.get("negative_slope", 0.01)
    return b.op("LeakyRelu", [args[0]], alpha=float(slope))


@_reg(_e("elu"))
def _elu(b, node, args, kwargs):
    return b.op("Elu", [args[0]], alpha=float(args[1] if len(args) > 1 else
                                              kwargs.get("alpha", 1.0)))


@_reg(_e("softplus"))
def _softplus(b, node, args, kwargs):
    beta = kwargs.get("beta", args[1] if len(args) > 1 else 1.0)
    if beta != 1:
        raise _Unsupported()
    return b.op("Softplus", [args[0]])


@_reg(_e("where"), methods=("where",))
def _where(b, node, args, kwargs):
    cond, x, y = args[0], args[1], args[2]
    dt = _out_dtype(node)
    return b.op("Where", [b.tensor(cond, np.bool_), b.tensor(x, dt), b.tensor(y, dt)], dtype=dt)


@_reg(_e("masked_fill"), methods=("masked_fill",))
def _masked_fill(b, node, args, kwargs):
    x, mask = args[0], args[1]
    value = args[2] if len(args) > 2 else kwargs["value"]
    return b.op("Where", [b.tensor(mask, np.bool_), b.tensor(value, x.dtype), x])


def _tri(upper):
    def tr(b, node, args, kwargs):
        k = args[1] if len(args) > 1 else kwargs.get("diagonal", 0)
        return b.op("Trilu", [args[0], b.tensor(int(k), np.int64)], upper=int(upper))
    return tr


_reg(_e("tril"), methods=("tril",))(_tri(False))
_reg(_e("triu"), methods=("triu",))(_tri(True))


# ------------------------------------------------------------------------------ products
@_reg(operator.matmul, _e("matmul"), _e("bmm"), _e("mm"), methods=("matmul", "bmm", "mm"))
def _matmul(b, node, args, kwargs):
    return b.op("MatMul", [args[0], args[1]], dtype=_out_dtype(node))


def linear(b: Builder, x: T, w: T, bias) -> T:
    if x.shape is not None and len(x.shape) == 2 and bias is not None:
        return b.op("Gemm", [x, w, bias], transB=1)
    wt = b.op("Transpose", [w], perm=[1, 0], shape=(w.shape[1], w.shape[0]))
    y = b.op("MatMul", [x, wt])
    return b.op("Add", [y, bias]) if bias is not None else y


@_reg(_e("linear"))
def _linear(b, node, args, kwargs):
    bias = args[2] if len(args) > 2 else kwargs.get("bias")
    return linear(b, args[0], args[1], bias)


# ------------------------------------------------------------------------------ reductions
def _reduce(op_type):
    def tr(b: Builder, node, args, kwargs):
        x = args[0]
        dim = args[1] if len(args) > 1 else kwargs.get("dim")
        keep = args[2] if len(args) > 2 else kwargs.get("keepdim", False)
        if kwargs.get("dtype") is not None:
            x = b.cast(x, kwargs["dtype"])
        if isinstance(dim, int):
            dim = [dim]
        axes = None if dim is None else [_norm(d, x.rank) for d in dim]
        op, ins, kw = b.axes(op_type, [x], axes, keepdims=int(bool(keep)))
        return b.op(op, ins, **kw)
    return tr


_reg(_e("sum"), methods=("sum",))(_reduce("ReduceSum"))
_reg(_e("mean"), methods=("mean",))(_reduce("ReduceMean"))
_reg(_e("amax"), methods=("amax",))(_reduce("ReduceMax"))
_reg(_e("amin"), methods=("amin",))(_reduce("ReduceMin"))
_reg(_e("prod"), methods=("prod",))(_reduce("ReduceProd"))


@_reg(_e("max"), _e("min"), methods=("max", "min"))
def _max(b, node, args, kwargs):
    name = node.target if isinstance(node.target, str) else node.target.__name__
    if len(args) == 1 and not kwargs:
        return _reduce("ReduceMax" if name == "max" else "ReduceMin")(b, node, args, kwargs)
    other = args[1] if len(args) > 1 else kwargs.get("other")
    if isinstance(other, T):
        return b.op("Max" if name == "max" else "Min", [args[0], other])
    dim = args[1] if len(args) > 1 else kwargs.get("dim")
    if isinstance(dim, int):     # (values, indices) along dim
        x, keep = args[0], args[2] if len(args) > 2 else kwargs.get("keepdim", False)
        values = _reduce("ReduceMax" if name == "max" else "ReduceMin")(
            b, node, (x, dim, keep), {})
        arg_op = "ArgMax" if name == "max" else "ArgMin"
        if x.rank == 0:
            return values, b.const(0, np.int64)
        return values, b.op(arg_op, [x], dtype=np.int64, axis=_norm(dim, x.rank),
                            keepdims=int(bool(keep)))
    raise _Unsupported()


def _softmax(op_type):
    def tr(b: Builder, node, args, kwargs):
        x = args[0]
        dim = args[1] if len(args) > 1 else kwargs.get("dim")
        if kwargs.get("dtype") is not None:
            x = b.cast(x, kwargs["dtype"])
        if dim is None:
            raise _Unsupported()
        return b.op(op_type, [x], axis=_norm(dim, x.rank))
    return tr


_reg(_e("softmax"), getattr(F, "softmax", None), methods=("softmax",))(_softmax("Softmax"))
_reg(_e("log_softmax"), getattr(F, "log_softmax", None), methods=("log_softmax",))(
    _softmax("LogSoftmax"))


# ------------------------------------------------------------------------------ shapes
@_reg(builtins.getattr)
def _getattr(b, node, args, kwargs):
    x, attr = args
    if isinstance(x, tuple) and not hasattr(x, attr):
        # a named-tuple result (values/indices, sign/logabsdet, ...): its eager run's
        # description has the field names
        desc = getattr(node.args[0], "meta", {}).get("onnx_desc")
        if hasattr(desc, "_fields") and attr in desc._fields:
            return x[desc._fields.index(attr)]
    if not isinstance(x, T):
        return getattr(x, attr)
    if attr == "shape":
        return tuple(b.dims(x))
    if attr == "T" or attr == "mT":
        perm = list(range(x.rank))
        if attr == "T":
            perm.reverse()
        else:
            perm[-2], perm[-1] = perm[-1], perm[-2]
        return b.op("Transpose", [x], perm=perm)
    if attr == "dtype":
        return ember.from_numpy(np.zeros(0, x.dtype)).dtype
    raise _Unsupported()


@_reg(methods=("size",))
def _size(b, node, args, kwargs):
    x = args[0]
    dim = args[1] if len(args) > 1 else kwargs.get("dim")
    return tuple(b.dims(x)) if dim is None else b.dim(x, dim)


@_reg(methods=("dim",))
def _dim(b, node, args, kwargs):
    return args[0].rank


def _shape_args(args):
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return list(args[0])
    return list(args)


@_reg(_e("reshape"), methods=("view", "reshape"))
def _reshape(b, node, args, kwargs):
    x = args[0]
    shape = _shape_args(args[1:]) if len(args) > 1 else list(kwargs.get("shape"))
    if len(args) == 2 and isinstance(args[1], ember.dtype):
        raise _Unsupported()
    return b.op("Reshape", [x, b.i64_vec(shape)])


@_reg(_e("flatten"), methods=("flatten",))
def _flatten(b, node, args, kwargs):
    x = args[0]
    start = args[1] if len(args) > 1 else kwargs.get("start_dim", 0)
    end = args[2] if len(args) > 2 else kwargs.get("end_dim", -1)
    return flatten(b, x, start, end)


def flatten(b: Builder, x: T, start: int, end: int) -> T:
    if x.rank == 0:
        return b.op("Reshape", [x, b.const([1], np.int64)])
    start, end = _norm(start, x.rank), _norm(end, x.rank)
    if start == 1 and end == x.rank - 1:
        return b.op("Flatten", [x], axis=1)
    dims = b.dims(x)
    # 0 in an ONNX Reshape copies the input's size at that position (dynamic batch safe)
    shape = [0 if isinstance(d, T) else d for d in dims[:start]] + [-1] + dims[end + 1:]
    return b.op("Reshape", [x, b.i64_vec(shape)])


@_reg(_e("unsqueeze"), methods=("unsqueeze",))
def _unsqueeze(b, node, args, kwargs):
    x = args[0]
    d = args[1] if len(args) > 1 else kwargs["dim"]
    return b.op("Unsqueeze", [x, b.const([_norm(d, x.rank + 1)], np.int64)])


@_reg(_e("squeeze"), methods=("squeeze",))
def _squeeze(b, node, args, kwargs):
    x = args[0]
    d = args[1] if len(args) > 1 else kwargs.get("dim")
    if d is None:
        axes = [i for i, s in enumerate(x.shape) if s == 1]
    else:
        axes = [_norm(e, x.rank) for e in (d if isinstance(d, (tuple, list)) else [d])]
        axes = [a for a in axes if x.shape[a] == 1]
    if not axes:
        return b.op("Identity", [x])
    return b.op("Squeeze", [x, b.const(axes, np.int64)])


@_reg(_e("transpose"), _e("swapaxes"), methods=("transpose", "swapaxes"))
def _transpose(b, node, args, kwargs):
    # transpose(dim0, dim1) or swapaxes(axis0, axis1), positional or by keyword
    x = args[0]
    d0 = args[1] if len(args) > 1 else kwargs.get("dim0", kwargs.get("axis0"))
    d1 = args[2] if len(args) > 2 else kwargs.get("dim1", kwargs.get("axis1"))
    perm = list(range(x.rank))
    d0, d1 = _norm(d0, x.rank), _norm(d1, x.rank)
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return b.op("Transpose", [x], perm=perm)


@_reg(_e("t"), methods=("t",))
def _t(b, node, args, kwargs):
    x = args[0]
    return b.op("Transpose", [x], perm=[1, 0]) if x.rank == 2 else b.op("Identity", [x])


@_reg(_e("permute"), methods=("permute",))
def _permute(b, node, args, kwargs):
    x = args[0]
    perm = _shape_args(args[1:]) if len(args) > 1 else list(kwargs["dims"])
    return b.op("Transpose", [x], perm=[_norm(p, x.rank) for p in perm])


@_reg(methods=("contiguous", "clone", "detach", "requires_grad_"))
def _identity(b, node, args, kwargs):
    return b.op("Identity", [args[0]])


_reg(_e("clone"), _e("detach"))(_identity)


@_reg(methods=("to", "type", "float", "double", "half", "long", "int", "bool"))
def _to(b, node, args, kwargs):
    return b.cast(args[0], _out_dtype(node))


@_reg(methods=("expand",))
def _expand(b, node, args, kwargs):
    x = args[0]
    sizes = _shape_args(args[1:])
    # -1 keeps the input's size; Expand broadcasts a 1 against it
    sizes = [1 if (isinstance(s, int) and s == -1) else s for s in sizes]
    return b.op("Expand", [x, b.i64_vec(sizes)])


@_reg(methods=("expand_as",))
def _expand_as(b, node, args, kwargs):
    return b.op("Expand", [args[0], b.shape_of(args[1])])


@_reg(_e("cat"), _e("concat"), _e("concatenate"))
def _cat(b, node, args, kwargs):
    tensors = list(args[0])
    dim = args[1] if len(args) > 1 else kwargs.get("dim", 0)
    dt = _out_dtype(node)
    ts = [b.tensor(t, dt) for t in tensors]
    return b.op("Concat", ts, axis=_norm(dim, ts[0].rank))


@_reg(_e("stack"))
def _stack(b, node, args, kwargs):
    tensors = list(args[0])
    dim = args[1] if len(args) > 1 else kwargs.get("dim", 0)
    rank = tensors[0].rank + 1
    d = _norm(dim, rank)
    ups = [b.op("Unsqueeze", [t, b.const([d], np.int64)]) for t in tensors]
    return b.op("Concat", ups, axis=d)


def _split(b, node, args, kwargs, dim):
    x = args[0]
    d = _norm(dim, x.rank)
    parts = node.meta["onnx_value"]
    sizes = [p[2][d] for p in parts]
    if x.shape[d] is None:
        raise _Unsupported()
    outs = b.op("Split", [x, b.const(sizes, np.int64)], outputs=len(sizes), axis=d)
    outs = outs if isinstance(outs, list) else [outs]
    return tuple(outs)


@_reg(_e("split"), methods=("split",))
def _split_tr(b, node, args, kwargs):
    dim = args[2] if len(args) > 2 else kwargs.get("dim", 0)
    return _split(b, node, args, kwargs, dim)


@_reg(_e("chunk"), methods=("chunk",))
def _chunk(b, node, args, kwargs):
    dim = args[2] if len(args) > 2 else kwargs.get("dim", 0)
    return _split(b, node, args, kwargs, dim)


@_reg(_e("unbind"), methods=("unbind",))
def _unbind(b, node, args, kwargs):
    x = args[0]
    dim = _norm(args[1] if len(args) > 1 else kwargs.get("dim", 0), x.rank)
    n = x.shape[dim]
    if n is None:
        raise _Unsupported()
    # the parts' descriptions have dim removed already: split into n slices of size 1
    parts = b.op("Split", [x, b.const([1] * n, np.int64)], outputs=n, axis=dim)
    parts = parts if isinstance(parts, list) else [parts]
    return tuple(b.op("Squeeze", [p, b.const([dim], np.int64)]) for p in parts)


# the other families register themselves on import
from . import _functional, _indexing, _linalg, _math, _nn, _reductions, _scan, _shape, _special, _spectral, _stats  # noqa: E402,F401,I001,E501

_nn._alias_functional()
