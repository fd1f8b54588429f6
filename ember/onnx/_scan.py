"""ONNX translations of the scans ONNX has no operator for (cumprod, cummax/cummin,
logcumsumexp), of kron, diag_embed/diagflat, angle, the bit shifts and masked_scatter.

NOTE [Scans as masked reductions]: a scan along ``dim`` of size n is written as one reduction
over a second copy of that axis under the mask ``j <= i`` (an n x n triangle), so the model has
a fixed number of nodes whatever n is, and n may be a dynamic axis. The cost is n times the
input's size in memory: fine for the sequence lengths models scan over, not for scans over a
million elements."""
from __future__ import annotations

import math
import operator

import numpy as np

from ._builder import Builder, T
from ._functions import _norm, _out_dtype, _reg, _Unsupported
from ._math import _by_name, _k, arg

# onnxruntime's Where has no int8/int16/uint16/uint32/uint64 kernel: select in int64
_NARROW = {np.dtype(t) for t in (np.int8, np.int16, np.uint16, np.uint32, np.uint64)}


def where(b: Builder, cond: T, x: T, y: T) -> T:
    """Where(cond, x, y) in x's dtype, through int64 for the dtypes onnxruntime lacks."""
    if x.dtype not in _NARROW:
        return b.op("Where", [cond, x, b.tensor(y, x.dtype)])
    wide = b.op("Where", [cond, b.cast(x, np.int64), b.cast(b.tensor(y, x.dtype), np.int64)])
    return b.cast(wide, x.dtype)


# ------------------------------------------------------------------------------ scans
def _range(b: Builder, n) -> T:
    if isinstance(n, int):
        return b.const(np.arange(n, dtype=np.int64))
    return b.op("Range", [b.const(0, np.int64), n, b.const(1, np.int64)], dtype=np.int64,
                shape=(None,))


def _pairs(b: Builder, x: T, d: int):
    """(xj, mask, j): ``x`` with a copy of axis d inserted (xj[.., i, j, ..] = x[.., j, ..]),
    the mask j <= i and the index j, both broadcastable against xj."""
    n = b.dim(x, d)
    r = _range(b, n)
    trailing = list(range(2, x.rank - d + 1))
    i = b.op("Unsqueeze", [r, b.const([1] + trailing, np.int64)])     # (n, 1, 1...)
    j = b.op("Unsqueeze", [r, b.const([0] + trailing, np.int64)])     # (1, n, 1...)
    mask = b.op("LessOrEqual", [j, i], dtype=np.bool_)
    xj = b.op("Unsqueeze", [x, b.const([d], np.int64)])
    return xj, mask, j


def _reduce_axis(b: Builder, op_type: str, x: T, axis: int, keep: bool) -> T:
    op, ins, kw = b.axes(op_type, [x], [axis], keepdims=int(keep))
    return b.op(op, ins, **kw)


def _scan_args(args, kwargs):
    x = args[0]
    if not isinstance(x, T) or x.rank == 0:
        raise _Unsupported()
    return x, _norm(arg(args, kwargs, 1, "dim"), x.rank)


@_by_name("cumprod")
def _cumprod(b, node, args, kwargs):
    x, d = _scan_args(args, kwargs)
    x = b.tensor(x, _out_dtype(node))
    xj, mask, _ = _pairs(b, x, d)
    return _reduce_axis(b, "ReduceProd", where(b, mask, xj, _k(b, 1, x)), d + 1, False)


@_by_name("logcumsumexp")
def _logcumsumexp(b, node, args, kwargs):
    x, d = _scan_args(args, kwargs)
    x = b.tensor(x, _out_dtype(node))
    xj, mask, _ = _pairs(b, x, d)
    seen = b.op("Where", [mask, xj, _k(b, -np.inf, x)])
    m = _reduce_axis(b, "ReduceMax", seen, d + 1, True)
    # shift by the running max (0 where it is infinite, so -inf - -inf makes no NaN)
    m = b.op("Where", [b.op("IsInf", [m], dtype=np.bool_), _k(b, 0.0, m), m])
    s = _reduce_axis(b, "ReduceSum", b.op("Exp", [b.op("Sub", [seen, m])]), d + 1, False)
    return b.op("Add", [b.op("Log", [s]), b.op("Squeeze", [m, b.const([d + 1], np.int64)])])


def _extreme(b: Builder, dtype, largest: bool):
    if np.issubdtype(dtype, np.floating):
        return -np.inf if largest else np.inf
    if dtype == np.bool_:
        return not largest
    info = np.iinfo(dtype)
    return info.min if largest else info.max


def _cum_extreme(largest: bool):
    reduce_op = "ReduceMax" if largest else "ReduceMin"

    def tr(b, node, args, kwargs):
        x, d = _scan_args(args, kwargs)
        if x.dtype == np.bool_:
            raise _Unsupported()
        if np.issubdtype(x.dtype, np.integer):
            x = b.cast(x, np.int64)        # exact, and every kernel below has int64
        xj, mask, j = _pairs(b, x, d)
        floating = np.issubdtype(x.dtype, np.floating)
        seen = b.op("Where", [mask, xj, b.const(_extreme(b, x.dtype, largest), x.dtype)])
        if floating:       # NaN wins, as torch's: replace it here and put it back below
            nan = b.op("And", [mask, b.op("IsNaN", [xj], dtype=np.bool_)])
            seen = b.op("Where", [nan, b.const(_extreme(b, x.dtype, largest), x.dtype), seen])
        v = _reduce_axis(b, reduce_op, seen, d + 1, True)
        # the index is the last j <= i holding the running extreme (ties move it forward)
        hit = b.op("And", [mask, b.op("Equal", [xj, v], dtype=np.bool_)])
        none = b.const(-1, np.int64)
        idx = _reduce_axis(b, "ReduceMax", b.op("Where", [hit, j, none]), d + 1, False)
        v = b.op("Squeeze", [v, b.const([d + 1], np.int64)])
        if floating:
            last_nan = _reduce_axis(b, "ReduceMax", b.op("Where", [nan, j, none]), d + 1,
                                    False)
            has_nan = b.op("GreaterOrEqual", [last_nan, b.const(0, np.int64)], dtype=np.bool_)
            v = b.op("Where", [has_nan, b.const(np.nan, x.dtype), v])
            idx = b.op("Where", [has_nan, last_nan, idx])
        return v, idx
    return tr


_by_name("cummax")(_cum_extreme(True))
_by_name("cummin")(_cum_extreme(False))


# ------------------------------------------------------------------------------ kron
@_by_name("kron")
def _kron(b, node, args, kwargs):
    x, y = args[0], arg(args, kwargs, 1, "other")
    if not isinstance(x, T) or not isinstance(y, T):
        raise _Unsupported()
    dt = _out_dtype(node)
    x, y = b.tensor(x, dt), b.tensor(y, dt)
    r = max(x.rank, y.rank)
    if r == 0:
        return b.op("Mul", [x, y])
    x = _lead_ones(b, x, r)
    y = _lead_ones(b, y, r)
    # x[a0, 1, a1, 1, ...] * y[1, b0, 1, b1, ...] -> (a0, b0, a1, b1, ...) -> (a0*b0, ...)
    xs = b.op("Unsqueeze", [x, b.const([2 * k + 1 for k in range(r)], np.int64)])
    ys = b.op("Unsqueeze", [y, b.const([2 * k for k in range(r)], np.int64)])
    shape = b.op("Mul", [b.shape_of(x), b.shape_of(y)], dtype=np.int64, shape=(r,))
    return b.op("Reshape", [b.op("Mul", [xs, ys]), shape])


def _lead_ones(b: Builder, x: T, r: int) -> T:
    if x.rank == r:
        return x
    out = b.op("Unsqueeze", [x, b.const(list(range(r - x.rank)), np.int64)])
    out.shape = (1,) * (r - x.rank) + tuple(x.shape)
    return out


# ------------------------------------------------------------------------------ diagonals
def diag_embed(b: Builder, x: T, offset: int, dim1: int, dim2: int) -> T:
    """x's last axis (static length n) on the offset diagonal of two new (n+|offset|) axes."""
    n = x.shape[-1] if x.rank else None
    if n is None:
        raise _Unsupported()
    m = n + abs(offset)
    rows, cols = np.meshgrid(np.arange(m), np.arange(m), indexing="ij")
    on = cols - rows == offset
    src = np.where(on, np.minimum(rows, cols), 0)        # the diagonal element's index in x
    g = b.op("Gather", [x, b.const(src.astype(np.int64))], axis=-1)
    out = where(b, b.const(on), g, b.tensor(0, x.dtype))
    rank = x.rank + 1
    d1, d2 = _norm(dim1, rank), _norm(dim2, rank)
    if (d1, d2) == (rank - 2, rank - 1):
        return out
    batch = iter(range(rank - 2))
    perm = [rank - 2 if t == d1 else rank - 1 if t == d2 else next(batch) for t in range(rank)]
    return b.op("Transpose", [out], perm=perm)


@_by_name("diag_embed")
def _diag_embed(b, node, args, kwargs):
    x = args[0]
    if not isinstance(x, T) or x.rank == 0:
        raise _Unsupported()
    return diag_embed(b, x, arg(args, kwargs, 1, "offset", 0), arg(args, kwargs, 2, "dim1", -2),
                      arg(args, kwargs, 3, "dim2", -1))


@_by_name("diagflat")
def _diagflat(b, node, args, kwargs):
    x = args[0]
    if not isinstance(x, T) or x.shape is None or None in x.shape:
        raise _Unsupported()
    n = int(np.prod(x.shape, dtype=np.int64))
    flat = b.op("Reshape", [x, b.const([-1], np.int64)], shape=(n,))
    return diag_embed(b, flat, arg(args, kwargs, 1, "offset", 0), 0, 1)


# ------------------------------------------------------------------------------ angle
@_by_name("angle")
def _angle(b, node, args, kwargs):
    x = b.tensor(args[0], _out_dtype(node))
    # a real number's angle: pi below zero (-0.0 included as 0), NaN stays NaN
    neg = b.op("Less", [x, _k(b, 0.0, x)], dtype=np.bool_)
    out = b.op("Where", [neg, _k(b, math.pi, x), _k(b, 0.0, x)])
    return b.op("Where", [b.op("IsNaN", [x], dtype=np.bool_), x, out])


# ------------------------------------------------------------------------------ bit shifts
def _shift(left: bool):
    def tr(b, node, args, kwargs):
        dt = _out_dtype(node)
        if not np.issubdtype(dt, np.integer):
            raise _Unsupported()
        x, s = b.tensor(args[0], dt), b.tensor(arg(args, kwargs, 1, "other"), dt)
        bits = np.dtype(dt).itemsize * 8
        s = b.cast(s, np.int64)
        # shifts outside [0, bits) give 0 (or the sign, right-shifting a negative value)
        out_of_range = b.op("Or", [b.op("Less", [s, b.const(0, np.int64)], dtype=np.bool_),
                                   b.op("GreaterOrEqual", [s, b.const(bits, np.int64)],
                                        dtype=np.bool_)])
        s_ok = b.cast(b.op("Where", [out_of_range, b.const(0, np.int64), s]), np.uint64)
        signed = np.issubdtype(dt, np.signedinteger)
        zero = b.const(0, np.int64)
        if not signed:
            shifted = b.op("BitShift", [b.cast(x, np.uint64), s_ok],
                           direction="LEFT" if left else "RIGHT")
            out = b.op("Where", [out_of_range, zero, b.cast(shifted, np.int64)])
            return b.cast(out, dt)
        # signed: 2**s as a wrapping int64; x * 2**s wraps like a shift, and a right shift
        # is a floor division by 2**s (exact: x minus its non-negative remainder)
        p = b.cast(b.op("BitShift", [b.const(1, np.uint64), s_ok], direction="LEFT"),
                   np.int64)
        x64 = b.cast(x, np.int64)
        if left:
            return b.cast(b.op("Where", [out_of_range, zero, b.op("Mul", [x64, p])]), dt)
        top = b.op("GreaterOrEqual", [s, b.const(bits - 1, np.int64)], dtype=np.bool_)
        p = b.op("Where", [top, b.const(1, np.int64), p])
        floor = b.op("Div", [b.op("Sub", [x64, b.op("Mod", [x64, p], fmod=0)]), p])
        sign = b.op("Where", [b.op("Less", [x64, zero], dtype=np.bool_),
                              b.const(-1, np.int64), zero])
        far = b.op("Or", [out_of_range, top])
        return b.cast(b.op("Where", [far, sign, floor]), dt)
    return tr


_by_name("bitwise_left_shift")(_shift(True))
_by_name("bitwise_right_shift")(_shift(False))
_reg(operator.lshift, methods=("__lshift__",))(_shift(True))
_reg(operator.rshift, methods=("__rshift__",))(_shift(False))


# ------------------------------------------------------------------------------ masked_scatter
@_by_name("masked_scatter")
def _masked_scatter(b, node, args, kwargs):
    x, mask, src = args[0], arg(args, kwargs, 1, "mask"), arg(args, kwargs, 2, "source")
    if not all(isinstance(v, T) for v in (x, mask, src)):
        raise _Unsupported()
    # the k-th True of the mask (row-major, broadcast to x's shape) takes source's k-th value
    full = b.op("Expand", [b.cast(mask, np.bool_), b.shape_of(x)])
    flat = b.op("Reshape", [b.cast(full, np.int64), b.const([-1], np.int64)])
    k = b.op("Sub", [b.op("CumSum", [flat, b.const(0, np.int64)]), b.const(1, np.int64)])
    k = b.op("Max", [k, b.const(0, np.int64)])
    vals = b.op("Gather", [b.op("Reshape", [b.tensor(src, x.dtype), b.const([-1], np.int64)]),
                           k], axis=0)
    vals = b.op("Reshape", [vals, b.shape_of(x)])
    return where(b, full, vals, x)
