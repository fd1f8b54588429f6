"""ONNX translations of order statistics and counting ops: quantile/nanquantile, nanmedian,
mode, unique/unique_consecutive, bincount and histc.

The ones whose result length depends on the data (unique, unique_consecutive, bincount) mark
it as such (``T.ragged``), as boolean-mask indexing does, so the model's output has a named
length and the exporter does not bake in the example's."""
from __future__ import annotations

import numpy as np

from ._builder import Builder, T
from ._functions import _norm, _out_dtype, _Unsupported
from ._math import _by_name, arg
from ._scan import where

F64 = np.float64


def _last(b: Builder, x: T, d: int) -> tuple[T, list[int]]:
    """``x`` with dim d moved last, and the permutation that does it."""
    perm = [i for i in range(x.rank) if i != d] + [d]
    if d == x.rank - 1:
        return x, perm
    return b.op("Transpose", [x], perm=perm), perm


def _sorted_last(b: Builder, x: T) -> tuple[T, T]:
    """Ascending values and their indices along the last axis, NaN treated as +inf."""
    n = b.op("Slice", [b.shape_of(x), b.const([-1], np.int64), b.const([x.rank], np.int64)],
             dtype=np.int64, shape=(1,))
    if np.issubdtype(x.dtype, np.floating):
        x = b.op("Where", [b.op("IsNaN", [x], dtype=np.bool_), b.const(np.inf, x.dtype), x])
    vals, idx = b.op("TopK", [x, n], outputs=2, axis=-1, largest=0, sorted=1)
    idx.dtype = np.dtype(np.int64)
    return vals, idx


def _flat_or_dim(b: Builder, x: T, dim):
    if dim is None:
        flat = b.op("Reshape", [x, b.const([-1], np.int64)], shape=(None,))
        return flat, 0
    return x, _norm(dim, max(x.rank, 1))


def _count_valid(b: Builder, x: T) -> T:
    """(..., 1): how many values along the last axis are not NaN, as float64."""
    ok = b.cast(b.op("Not", [b.op("IsNaN", [x], dtype=np.bool_)]), F64)
    return b.op("ReduceSum", [ok, b.const([-1], np.int64)], keepdims=1)


def _gather_last(b: Builder, v: T, i: T) -> T:
    return b.op("GatherElements", [v, i], axis=-1)


def _quantile(skip_nan: bool):
    def tr(b, node, args, kwargs):
        x, q = args[0], arg(args, kwargs, 1, "q")
        dim, keep = arg(args, kwargs, 2, "dim"), arg(args, kwargs, 3, "keepdim", False)
        mode = kwargs.get("interpolation", "linear")
        if not isinstance(x, T) or x.rank == 0 and dim is not None:
            raise _Unsupported()
        x64 = b.cast(x, F64)
        src, d = _flat_or_dim(b, x64, dim)
        if src.rank == 0:
            src = b.op("Reshape", [src, b.const([1], np.int64)], shape=(1,))
        moved, _ = _last(b, src, d)
        vals, _ = _sorted_last(b, moved)
        n_all = b.cast(b.op("Slice", [b.shape_of(moved), b.const([-1], np.int64),
                                      b.const([moved.rank], np.int64)], dtype=np.int64,
                            shape=(1,)), F64)
        valid = _count_valid(b, moved)                                  # (..., 1)
        # quantile: every value counts (valid * 0 + n keeps the (..., 1) shape)
        count = valid if skip_nan else b.op("Add", [b.op("Mul", [valid, b.const(0.0, F64)]),
                                                    n_all])
        scalar_q = not isinstance(q, T) and not isinstance(q, (list, tuple))
        qs = b.tensor(q if scalar_q or isinstance(q, T) else list(q), F64)
        if not scalar_q and qs.rank == 0:
            scalar_q = True
        # q along a new leading axis: (Q, 1, ..., 1) against vals (..., n)
        qv = b.op("Reshape", [qs, b.const([-1] + [1] * moved.rank, np.int64)])
        pos = b.op("Mul", [qv, b.op("Max", [b.op("Sub", [count, b.const(1.0, F64)]),
                                            b.const(0.0, F64)])])
        lo = b.op("Floor", [pos])
        hi = b.op("Ceil", [pos])
        if mode == "lower":
            pick = [lo]
        elif mode == "higher":
            pick = [hi]
        elif mode == "nearest":
            pick = [b.op("Round", [pos])]       # half to even, as torch's
        elif mode in ("linear", "midpoint"):
            pick = [lo, hi]
        else:
            raise _Unsupported()
        big = b.op("Expand", [vals, b.shape_of(b.op("Add", [vals, pos]))])
        got = []
        for p in pick:
            i = b.cast(b.op("Min", [p, b.op("Sub", [n_all, b.const(1.0, F64)])]), np.int64)
            got.append(_gather_last(b, big, b.op("Expand", [i, b.shape_of(pos)])))
        if len(got) == 1:
            out = got[0]
        else:
            w = b.op("Sub", [pos, lo]) if mode == "linear" else b.const(0.5, F64)
            out = b.op("Add", [got[0], b.op("Mul", [w, b.op("Sub", [got[1], got[0]])])])
        # NaN: anywhere in the slice (quantile), or no value left (nanquantile)
        bad = b.op("Less", [valid, n_all], dtype=np.bool_) if not skip_nan \
            else b.op("Equal", [count, b.const(0.0, F64)], dtype=np.bool_)
        out = b.op("Where", [bad, b.const(np.nan, F64), out])          # (Q, ..., 1)
        out = b.op("Squeeze", [out, b.const([-1], np.int64)])
        if keep:
            if dim is None:
                out = b.op("Reshape", [out, b.const([-1] + [1] * x.rank, np.int64)])
            else:
                out = b.op("Unsqueeze", [out, b.const([d + 1], np.int64)])
        if scalar_q:
            out = b.op("Squeeze", [out, b.const([0], np.int64)])
        return out
    return tr


_by_name("quantile")(_quantile(False))
_by_name("nanquantile")(_quantile(True))


@_by_name("nanmedian")
def _nanmedian(b, node, args, kwargs):
    x = args[0]
    dim = arg(args, kwargs, 1, "dim")
    keep = arg(args, kwargs, 2, "keepdim", False)
    if not isinstance(x, T):
        raise _Unsupported()
    src, d = _flat_or_dim(b, x, dim)
    if src.rank == 0:
        src = b.op("Reshape", [src, b.const([1], np.int64)], shape=(1,))
    moved, perm = _last(b, src, d)
    vals, idx = _sorted_last(b, moved)
    # the lower middle of the values that are not NaN (NaN when there are none)
    count = b.cast(_count_valid(b, moved), np.int64)
    mid = b.op("Div", [b.op("Max", [b.op("Sub", [count, b.const(1, np.int64)]),
                                    b.const(0, np.int64)]), b.const(2, np.int64)])
    v = _gather_last(b, vals, mid)
    i = _gather_last(b, idx, mid)
    none = b.op("Equal", [count, b.const(0, np.int64)], dtype=np.bool_)
    v = b.op("Where", [none, b.const(np.nan, vals.dtype), v])
    i = b.op("Where", [none, b.const(0, np.int64), i])
    if dim is None:
        return b.op("Reshape", [v, b.const([], np.int64)])
    return _finish_dim(b, v, perm, keep), _finish_dim(b, i, perm, keep)


def _finish_dim(b: Builder, v: T, perm: list[int], keep: bool) -> T:
    """A (..., 1) result over the moved-last axis back in place (keepdim) or dropped."""
    if not keep:
        return b.op("Squeeze", [v, b.const([-1], np.int64)])
    inv = [perm.index(i) for i in range(len(perm))]
    return b.op("Transpose", [v], perm=inv) if inv != list(range(len(perm))) else v


@_by_name("mode")
def _mode(b, node, args, kwargs):
    x = args[0]
    dim, keep = arg(args, kwargs, 1, "dim", -1), arg(args, kwargs, 2, "keepdim", False)
    if not isinstance(x, T) or x.rank == 0:
        raise _Unsupported()
    if np.issubdtype(x.dtype, np.integer) and x.dtype != np.int64:
        x = b.cast(x, np.int64)
    moved, perm = _last(b, x, _norm(dim, x.rank))
    xi = b.op("Unsqueeze", [moved, b.const([-1], np.int64)])       # (..., n, 1)
    xj = b.op("Unsqueeze", [moved, b.const([-2], np.int64)])       # (..., 1, n)
    same = b.op("Equal", [xi, xj], dtype=np.bool_)                 # (..., n, n)
    counts = b.op("ReduceSum", [b.cast(same, np.int64), b.const([-1], np.int64)], keepdims=0)
    best = b.op("ReduceMax", [counts, b.const([-1], np.int64)], keepdims=1) if b.opset >= 18 \
        else b.op("ReduceMax", [counts], axes=[-1], keepdims=1)
    # the smallest of the most frequent values, at the last index holding it
    top = b.op("Equal", [counts, best], dtype=np.bool_)
    big = b.const(np.inf if np.issubdtype(moved.dtype, np.floating)
                  else np.iinfo(moved.dtype).max, moved.dtype)
    cand = where(b, top, moved, big)
    v = b.op("ReduceMin", [cand, b.const([-1], np.int64)], keepdims=1) if b.opset >= 18 \
        else b.op("ReduceMin", [cand], axes=[-1], keepdims=1)
    n = b.op("Slice", [b.shape_of(moved), b.const([-1], np.int64),
                       b.const([moved.rank], np.int64)], dtype=np.int64, shape=(1,))
    r = b.op("Range", [b.const(0, np.int64), b.op("Squeeze", [n, b.const([0], np.int64)]),
                       b.const(1, np.int64)], dtype=np.int64, shape=(None,))
    hit = b.op("Equal", [moved, v], dtype=np.bool_)
    i = b.op("Where", [hit, r, b.const(-1, np.int64)])
    i = b.op("ReduceMax", [i, b.const([-1], np.int64)], keepdims=1) if b.opset >= 18 \
        else b.op("ReduceMax", [i], axes=[-1], keepdims=1)
    return _finish_dim(b, v, perm, keep), _finish_dim(b, i, perm, keep)


# ------------------------------------------------------------------------------ unique
@_by_name("unique")
def _unique(b, node, args, kwargs):
    x = args[0]
    inverse = arg(args, kwargs, 2, "return_inverse", False)
    counts = arg(args, kwargs, 3, "return_counts", False)
    if not isinstance(x, T) or arg(args, kwargs, 4, "dim") is not None:
        raise _Unsupported()
    if np.issubdtype(x.dtype, np.floating):
        src = b.cast(x, np.float32) if x.dtype != np.float32 else x
        if x.dtype == np.float64:
            src = x        # onnxruntime's Unique has float64 too
    else:
        src = b.cast(x, np.int64)
    flat = b.op("Reshape", [src, b.const([-1], np.int64)])
    # sorted (torch sorts whatever ``sorted`` says, on CPU)
    y, _, inv, cnt = b.op("Unique", [flat], outputs=4, sorted=1)
    y.dtype, inv.dtype, cnt.dtype = src.dtype, np.dtype(np.int64), np.dtype(np.int64)
    y.ragged = cnt.ragged = 0
    out = [y]
    if inverse:
        out.append(b.op("Reshape", [inv, b.shape_of(x)]))
    if counts:
        out.append(cnt)
    return out[0] if len(out) == 1 else tuple(out)


@_by_name("unique_consecutive")
def _unique_consecutive(b, node, args, kwargs):
    x = args[0]
    inverse = arg(args, kwargs, 1, "return_inverse", False)
    counts = arg(args, kwargs, 2, "return_counts", False)
    if not isinstance(x, T) or arg(args, kwargs, 3, "dim") is not None:
        raise _Unsupported()
    flat = b.op("Reshape", [x, b.const([-1], np.int64)], shape=(None,))
    n = b.op("Shape", [flat], dtype=np.int64, shape=(1,))
    n0 = b.op("Squeeze", [n, b.const([0], np.int64)])
    # a run starts where a value differs from the one before it
    rest = b.op("Slice", [flat, b.const([1], np.int64), n])
    prev = b.op("Slice", [flat, b.const([0], np.int64), b.op("Sub", [n, b.const([1],
                                                                               np.int64)])])
    differ = b.op("Not", [b.op("Equal", [rest, prev], dtype=np.bool_)])
    start = b.op("Concat", [b.const([True]), differ], axis=0)
    start = b.op("Slice", [start, b.const([0], np.int64), n])        # an empty input: none
    y = b.op("Compress", [flat, start], axis=0)
    y.ragged = 0
    out = [y]
    if inverse:
        run = b.op("Sub", [b.op("CumSum", [b.cast(start, np.int64), b.const(0, np.int64)]),
                           b.const(1, np.int64)])
        out.append(b.op("Reshape", [run, b.shape_of(x)]))
    if counts:
        r = b.op("Range", [b.const(0, np.int64), n0, b.const(1, np.int64)], dtype=np.int64)
        starts = b.op("Compress", [r, start], axis=0)
        ends = b.op("Concat", [b.op("Slice", [starts, b.const([1], np.int64),
                                              b.const([np.iinfo(np.int64).max], np.int64)]),
                               n], axis=0)
        c = b.op("Sub", [ends, starts])
        c.ragged = 0
        out.append(c)
    return out[0] if len(out) == 1 else tuple(out)


# ------------------------------------------------------------------------------ counting
@_by_name("bincount")
def _bincount(b, node, args, kwargs):
    x = args[0]
    weights, minlength = arg(args, kwargs, 1, "weights"), arg(args, kwargs, 2, "minlength", 0)
    if not isinstance(x, T) or x.rank != 1 or isinstance(minlength, T):
        raise _Unsupported()
    idx = b.cast(x, np.int64)
    dt = _out_dtype(node)
    acc = np.float64 if np.issubdtype(dt, np.floating) else np.int64
    # length max(x) + 1, at least minlength (an empty input has max -1 here)
    top = b.op("ReduceMax", [b.op("Concat", [idx, b.const([-1], np.int64)], axis=0),
                             b.const([0], np.int64)], keepdims=1) if b.opset >= 18 else \
        b.op("ReduceMax", [b.op("Concat", [idx, b.const([-1], np.int64)], axis=0)], axes=[0],
             keepdims=1)
    size = b.op("Max", [b.op("Add", [top, b.const([1], np.int64)]),
                        b.const([int(minlength)], np.int64)])
    zeros = b.op("ConstantOfShape", [size], dtype=acc,
                 value=b.onnx.numpy_helper.from_array(np.zeros(1, acc)))
    upd = b.cast(weights, acc) if isinstance(weights, T) else \
        b.op("Add", [b.op("Mul", [b.cast(idx, acc), b.const(0, acc)]), b.const(1, acc)])
    out = b.op("ScatterElements", [zeros, idx, upd], axis=0, reduction="add")
    out.ragged = 0
    return out


@_by_name("histc")
def _histc(b, node, args, kwargs):
    x = args[0]
    bins = arg(args, kwargs, 1, "bins", 100)
    lo, hi = arg(args, kwargs, 2, "min", 0), arg(args, kwargs, 3, "max", 0)
    if not isinstance(x, T) or isinstance(lo, T) or isinstance(hi, T) or \
            not np.issubdtype(x.dtype, np.floating):
        raise _Unsupported()
    flat = b.op("Reshape", [x, b.const([-1], np.int64)], shape=(None,))
    f64 = b.cast(flat, F64)
    if float(lo) == float(hi):      # the data's range (widened by 1 if it is one value)
        mn = b.op("ReduceMin", [f64], keepdims=1) if b.opset < 18 else \
            b.op("ReduceMin", [f64, b.const([0], np.int64)], keepdims=1)
        mx = b.op("ReduceMax", [f64], keepdims=1) if b.opset < 18 else \
            b.op("ReduceMax", [f64, b.const([0], np.int64)], keepdims=1)
        same = b.op("Equal", [mn, mx], dtype=np.bool_)
        lo_t = b.op("Where", [same, b.op("Sub", [mn, b.const(1.0, F64)]), mn])
        hi_t = b.op("Where", [same, b.op("Add", [mx, b.const(1.0, F64)]), mx])
    else:
        lo_t, hi_t = b.const([float(lo)], F64), b.const([float(hi)], F64)
    # the bin edges as ember computes them: lo + i * (hi - lo) / bins in float64, the last
    # exactly hi, rounded to the input's dtype; a value's bin is the last edge <= it
    step = b.op("Div", [b.op("Sub", [hi_t, lo_t]), b.const(float(bins), F64)])
    i = b.const(np.arange(bins + 1, dtype=F64))
    edges = b.op("Add", [b.op("Mul", [i, step]), lo_t])
    edges = b.op("Where", [b.const(np.arange(bins + 1) == bins), hi_t, edges])
    edges = b.cast(b.cast(edges, x.dtype), F64)
    xs = b.op("Unsqueeze", [f64, b.const([-1], np.int64)])            # (N, 1)
    below = b.cast(b.op("LessOrEqual", [edges, xs], dtype=np.bool_), np.int64)
    pos = b.op("Sub", [b.op("ReduceSum", [below, b.const([-1], np.int64)], keepdims=0),
                       b.const(1, np.int64)])
    pos = b.op("Min", [pos, b.const(bins - 1, np.int64)])
    first = b.op("Gather", [edges, b.const(0, np.int64)], axis=0)
    last = b.op("Gather", [edges, b.const(bins, np.int64)], axis=0)
    inside = b.op("And", [b.op("GreaterOrEqual", [f64, first], dtype=np.bool_),
                          b.op("LessOrEqual", [f64, last], dtype=np.bool_)])
    ones = b.op("Where", [inside, b.const(1.0, F64), b.const(0.0, F64)])
    pos = b.op("Max", [pos, b.const(0, np.int64)])
    zeros = b.const(np.zeros(bins, dtype=F64))
    return b.op("ScatterElements", [zeros, pos, ones], axis=0, reduction="add")
