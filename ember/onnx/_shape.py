"""ONNX translations of shape and data-movement ops (expand, flip, roll, tile, gather/scatter,
index_* ops, sorting, diagonals) and of the ``*_like``/``full`` creation functions."""
from __future__ import annotations

import numpy as np

from ._builder import INT64_MAX, Builder, T
from ._functions import _e, _norm, _out_dtype, _reg, _shape_args, _split, _Unsupported
from ._indexing import _mask_select
from ._math import _by_name, _lin, arg
from ._reductions import reduce

INT64_MIN = np.iinfo(np.int64).min


def _vec(b: Builder, items) -> T:
    return b.const(list(items), np.int64)


def _size_arg(args, kwargs, name="size"):
    return _shape_args(args[1:]) if len(args) > 1 else list(kwargs[name])


# ------------------------------------------------------------------------------ broadcasting
def expand(b: Builder, x: T, sizes) -> T:
    # -1 keeps the input's size; Expand broadcasts a 1 against it
    sizes = [1 if (isinstance(s, int) and s == -1) else s for s in sizes]
    return b.op("Expand", [x, b.i64_vec(sizes)])


_reg(_e("expand"))(lambda b, node, args, kwargs: expand(b, args[0], _size_arg(args, kwargs)))
_reg(_e("broadcast_to"))(lambda b, node, args, kwargs: expand(b, args[0],
                                                              _size_arg(args, kwargs)))


def _tile(b: Builder, x: T, reps) -> T:
    reps = list(reps)
    if len(reps) < x.rank:                  # missing leading repeats are 1
        reps = [1] * (x.rank - len(reps)) + reps
    if len(reps) > x.rank:                  # extra repeats add leading dims
        x = b.op("Reshape", [x, b.i64_vec([1] * (len(reps) - x.rank) +
                                          [0 if isinstance(d, T) else d for d in b.dims(x)])])
    return b.op("Tile", [x, b.i64_vec(reps)])


_by_name("tile")(lambda b, node, args, kwargs: _tile(b, args[0], _size_arg(args, kwargs, "dims")))
_reg(methods=("repeat",))(lambda b, node, args, kwargs: _tile(b, args[0],
                                                              _size_arg(args, kwargs, "repeats")))


@_by_name("repeat_interleave")
def _repeat_interleave(b, node, args, kwargs):
    x = args[0]
    reps, dim = arg(args, kwargs, 1, "repeats"), arg(args, kwargs, 2, "dim")
    if not isinstance(reps, int) or not isinstance(x, T):
        raise _Unsupported()      # per-element repeat counts make a data-dependent shape
    if dim is None:
        x, dim = b.op("Reshape", [x, b.const([-1], np.int64)]), 0
    d = _norm(dim, x.rank)
    dims = [0 if isinstance(s, T) else s for s in b.dims(x)]
    up = b.op("Unsqueeze", [x, b.const([d + 1], np.int64)])
    sizes = [1] * (x.rank + 1)
    sizes[d + 1] = reps
    tiled = b.op("Tile", [up, _vec(b, sizes)])
    return b.op("Reshape", [tiled, b.i64_vec(dims[:d] + [-1] + dims[d + 1:])])


# ------------------------------------------------------------------------------ reordering
def flip(b: Builder, x: T, dims) -> T:
    axes = [_norm(d, x.rank) for d in dims]
    if not axes or x.rank == 0:
        return b.op("Identity", [x])
    n = len(axes)
    return b.op("Slice", [x, _vec(b, [-1] * n), _vec(b, [INT64_MIN] * n), _vec(b, axes),
                          _vec(b, [-1] * n)])


_by_name("flip")(lambda b, node, args, kwargs: flip(
    b, args[0], _size_arg(args, kwargs, "dims")))
_by_name("fliplr")(lambda b, node, args, kwargs: flip(b, args[0], [1]))
_by_name("flipud")(lambda b, node, args, kwargs: flip(b, args[0], [0]))


def _slice(b: Builder, x: T, axis: int, start, end) -> T:
    return b.op("Slice", [x, b.i64_vec([start]), b.i64_vec([end]), _vec(b, [axis])])


@_by_name("roll")
def _roll(b, node, args, kwargs):
    x = args[0]
    shifts, dims = arg(args, kwargs, 1, "shifts"), arg(args, kwargs, 2, "dims")
    shifts = [shifts] if isinstance(shifts, int) else list(shifts)
    flat = dims is None
    y = b.op("Reshape", [x, b.const([-1], np.int64)]) if flat else x
    dims = [0] if flat else ([dims] if isinstance(dims, int) else list(dims))
    for s, d in zip(shifts, dims, strict=True):
        d = _norm(d, y.rank)
        n = x.shape[d] if not flat else int(np.prod(x.shape)) if None not in x.shape else None
        if n is None or n == 0:
            raise _Unsupported()
        s %= n
        if s:
            y = b.op("Concat", [_slice(b, y, d, n - s, INT64_MAX), _slice(b, y, d, 0, n - s)],
                     axis=d)
    if flat:
        y = b.op("Reshape", [y, b.shape_of(x)])
    return y


@_by_name("adjoint", "mT", "mH")
def _adjoint(b, node, args, kwargs):
    x = args[0]
    perm = list(range(x.rank))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return b.op("Transpose", [x], perm=perm)


@_by_name("rot90")
def _rot90(b, node, args, kwargs):
    x = args[0]
    k = arg(args, kwargs, 1, "k", 1) % 4
    d0, d1 = (_norm(d, x.rank) for d in arg(args, kwargs, 2, "dims", (0, 1)))
    perm = list(range(x.rank))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    if k == 0:
        return b.op("Identity", [x])
    if k == 2:
        return flip(b, x, [d0, d1])
    # k=1 flips dims[1] then swaps the two; k=3 swaps then flips dims[1]
    if k == 1:
        return b.op("Transpose", [flip(b, x, [d1])], perm=perm)
    return flip(b, b.op("Transpose", [x], perm=perm), [d1])


@_by_name("movedim", "moveaxis")
def _movedim(b, node, args, kwargs):
    x = args[0]
    src, dst = arg(args, kwargs, 1, "source"), arg(args, kwargs, 2, "destination")
    src = [src] if isinstance(src, int) else list(src)
    dst = [dst] if isinstance(dst, int) else list(dst)
    src, dst = [_norm(s, x.rank) for s in src], [_norm(d, x.rank) for d in dst]
    rest = iter([i for i in range(x.rank) if i not in src])
    where = dict(zip(dst, src, strict=True))
    perm = [where[i] if i in where else next(rest) for i in range(x.rank)]
    return b.op("Transpose", [x], perm=perm)


# ------------------------------------------------------------------------------ views
@_by_name("narrow")
def _narrow(b, node, args, kwargs):
    x, dim = args[0], _norm(arg(args, kwargs, 1, "dim"), args[0].rank)
    start, length = arg(args, kwargs, 2, "start"), arg(args, kwargs, 3, "length")
    if isinstance(start, int) and start < 0:
        start += x.shape[dim]
    end = start + length if isinstance(start, int) and isinstance(length, int) else \
        b.op("Add", [b.tensor(start, np.int64), b.tensor(length, np.int64)])
    return _slice(b, x, dim, start, end)


@_by_name("select")
def _select(b, node, args, kwargs):
    x, dim, i = args[0], arg(args, kwargs, 1, "dim"), arg(args, kwargs, 2, "index")
    return b.op("Gather", [x, b.tensor(i, np.int64)], axis=_norm(dim, x.rank))


_by_name("ravel")(lambda b, node, args, kwargs: b.op("Reshape", [args[0],
                                                                 b.const([-1], np.int64)]))


@_reg(_e("view"))
def _view(b, node, args, kwargs):
    shape = _size_arg(args, kwargs)
    if len(args) == 2 and not isinstance(args[1], (list, tuple, int, T)):
        raise _Unsupported()      # view(dtype) reinterprets bytes
    return b.op("Reshape", [args[0], b.i64_vec(shape)])


@_by_name("unflatten")
def _unflatten(b, node, args, kwargs):
    x = args[0]
    d = _norm(arg(args, kwargs, 1, "dim"), x.rank)
    sizes = list(arg(args, kwargs, 2, "sizes"))
    dims = [0 if isinstance(s, T) else s for s in b.dims(x)]
    return b.op("Reshape", [x, b.i64_vec(dims[:d] + sizes + dims[d + 1:])])


@_by_name("tensor_split")
def _tensor_split(b, node, args, kwargs):
    return _split(b, node, args, kwargs, arg(args, kwargs, 2, "dim", 0))


# ------------------------------------------------------------------------------ gather/scatter
@_by_name("gather")
def _gather(b, node, args, kwargs):
    x, dim, idx = args[0], arg(args, kwargs, 1, "dim"), arg(args, kwargs, 2, "index")
    if x.rank == 0:
        return b.op("Identity", [x])
    return b.op("GatherElements", [x, b.cast(idx, np.int64)], axis=_norm(dim, x.rank))


@_by_name("take_along_dim")
def _take_along_dim(b, node, args, kwargs):
    x, idx, dim = args[0], args[1], arg(args, kwargs, 2, "dim")
    if dim is None:
        flat = b.const([-1], np.int64)
        x, idx, dim = b.op("Reshape", [x, flat]), b.op("Reshape", [idx, flat]), 0
    elif x.shape != idx.shape:
        # both broadcast to each other except along dim
        d = _norm(dim, x.rank)
        xs, ids = list(x.shape), list(idx.shape)
        if None in xs or None in ids or len(xs) != len(ids):
            raise _Unsupported()
        full = [max(p, q) for p, q in zip(xs, ids, strict=True)]
        x = b.op("Expand", [x, _vec(b, full[:d] + [xs[d]] + full[d + 1:])])
        idx = b.op("Expand", [idx, _vec(b, full[:d] + [ids[d]] + full[d + 1:])])
    return b.op("GatherElements", [x, b.cast(idx, np.int64)], axis=_norm(dim, x.rank))


@_by_name("take")
def _take(b, node, args, kwargs):
    flat = b.op("Reshape", [args[0], b.const([-1], np.int64)])
    return b.op("Gather", [flat, b.cast(args[1], np.int64)], axis=0)


def _updates(b: Builder, src, idx: T, dtype) -> T:
    """ScatterElements needs updates shaped as the index: a scalar expands, a bigger src is
    cut down to the index's extent."""
    if not isinstance(src, T):
        return b.op("Expand", [b.tensor(src, dtype), b.shape_of(idx)])
    if src.shape == idx.shape:
        return src
    zeros = _vec(b, [0] * idx.rank)
    return b.op("Slice", [src, zeros, b.shape_of(idx), _vec(b, range(idx.rank))])


_REDUCTIONS = {"sum": "add", "add": "add", "prod": "mul", "multiply": "mul",
               "amax": "max", "amin": "min"}


def _scatter(default_reduce):
    def tr(b, node, args, kwargs):
        x, dim, idx = args[0], arg(args, kwargs, 1, "dim"), arg(args, kwargs, 2, "index")
        src = arg(args, kwargs, 3, "src", kwargs.get("value"))
        how = arg(args, kwargs, 4, "reduce", default_reduce)
        if kwargs.get("include_self", True) is False or (how and how not in _REDUCTIONS):
            raise _Unsupported()
        idx = b.cast(idx, np.int64)
        upd = _updates(b, src, idx, x.dtype)
        return b.op("ScatterElements", [x, idx, b.cast(upd, x.dtype)],
                    axis=_norm(dim, x.rank), reduction=_REDUCTIONS.get(how, "none"))
    return tr


_by_name("scatter")(_scatter(None))
_by_name("scatter_add")(_scatter("sum"))
_by_name("scatter_reduce")(_scatter(None))


def _along(b: Builder, x: T, dim: int, idx: T, like: T) -> T:
    """A 1-D index along ``dim`` broadcast to the shape of ``like`` (for ScatterElements)."""
    shape = [1] * like.rank
    shape[dim] = -1
    return b.op("Expand", [b.op("Reshape", [b.cast(idx, np.int64), _vec(b, shape)]),
                           b.shape_of(like)])


def _index_scatter(reduction):
    def tr(b, node, args, kwargs):
        x, dim, idx = args[0], arg(args, kwargs, 1, "dim"), arg(args, kwargs, 2, "index")
        d = _norm(dim, x.rank)
        src = arg(args, kwargs, 3, "source", kwargs.get("value"))
        if x.rank == 0:
            raise _Unsupported()
        if not isinstance(src, T) or src.rank == 0:        # index_fill: a value
            shape = b.shape_of(b.op("Gather", [x, b.cast(idx, np.int64)], axis=d))
            src = b.op("Expand", [b.tensor(src, x.dtype), shape])
        alpha = kwargs.get("alpha", 1)
        if alpha != 1:
            src = b.op("Mul", [src, b.tensor(alpha, x.dtype)])
        return b.op("ScatterElements", [x, _along(b, x, d, idx, src), b.cast(src, x.dtype)],
                    axis=d, reduction=reduction)
    return tr


_by_name("index_add")(_index_scatter("add"))
_by_name("index_copy")(_index_scatter("none"))
_by_name("index_fill")(_index_scatter("none"))


@_by_name("index_put")
def _index_put(b, node, args, kwargs):
    x, indices = args[0], list(arg(args, kwargs, 1, "indices"))
    values, acc = arg(args, kwargs, 2, "values"), arg(args, kwargs, 3, "accumulate", False)
    if any(not isinstance(i, T) or i.dtype == np.bool_ for i in indices):
        raise _Unsupported()
    last = b.const([-1], np.int64)
    cols = [b.op("Unsqueeze", [b.cast(i, np.int64), last]) for i in indices]
    nd = cols[0] if len(cols) == 1 else b.op("Concat", cols, axis=-1)
    target = b.shape_of(b.op("GatherND", [x, nd]))
    upd = b.op("Expand", [b.tensor(values, x.dtype), target])
    return b.op("ScatterND", [x, nd, upd], reduction="add" if acc else "none")


@_by_name("masked_select")
def _masked_select(b, node, args, kwargs):
    x, mask = args[0], args[1]
    # Expand's result is the broadcast of both shapes
    xe = b.op("Expand", [x, b.shape_of(mask)])
    rank = max(x.rank, mask.rank)
    xe.shape = (None,) * rank
    me = b.op("Expand", [mask, b.shape_of(xe)], shape=(None,) * rank)
    flat = b.const([-1], np.int64)
    return _mask_select(b, b.op("Reshape", [xe, flat], shape=(None,)), 0,
                        b.op("Reshape", [me, flat], shape=(None,)))


def _nonzero(b, node, args, kwargs):
    if kwargs.get("as_tuple"):
        raise _Unsupported()
    nz = b.op("NonZero", [args[0]], dtype=np.int64)
    out = b.op("Transpose", [nz], dtype=np.int64, perm=[1, 0])
    out.ragged = 0
    return out


_by_name("nonzero", "argwhere")(_nonzero)


# ------------------------------------------------------------------------------ sorting
def topk(b: Builder, x: T, k, dim, largest, sorted_=True):
    d = _norm(dim, max(x.rank, 1))
    vals, idx = b.op("TopK", [x, b.i64_vec([k])], outputs=2, axis=d, largest=int(bool(largest)),
                     sorted=int(bool(sorted_)))
    idx.dtype = np.dtype(np.int64)
    return vals, idx


@_by_name("topk")
def _topk(b, node, args, kwargs):
    x = args[0]
    return topk(b, x, arg(args, kwargs, 1, "k"), arg(args, kwargs, 2, "dim", -1),
                arg(args, kwargs, 3, "largest", True), arg(args, kwargs, 4, "sorted", True))


def _sort_parts(b, x: T, dim, descending):
    d = _norm(dim, max(x.rank, 1))
    if x.rank == 0:
        return b.op("Identity", [x]), b.const(0, np.int64)
    n = x.shape[d] if x.shape[d] is not None else b.dim(x, d)
    return topk(b, x, n, d, descending)


@_by_name("sort")
def _sort(b, node, args, kwargs):
    dim = arg(args, kwargs, 1, "dim", -1)
    if isinstance(dim, bool):        # sort(x, stable=...) keyword-only in torch; never here
        raise _Unsupported()
    return _sort_parts(b, args[0], dim, arg(args, kwargs, 2, "descending", False))


_by_name("argsort")(lambda b, node, args, kwargs: _sort_parts(
    b, args[0], arg(args, kwargs, 1, "dim", -1), arg(args, kwargs, 2, "descending", False))[1])
_by_name("msort")(lambda b, node, args, kwargs: _sort_parts(b, args[0], 0, False)[0])


def _kth(b: Builder, x: T, k, dim, keepdim):
    """The k-th smallest along ``dim`` (values and indices)."""
    d = _norm(dim, max(x.rank, 1))
    vals, idx = topk(b, x, k, d, False)
    last = [_slice(b, v, d, k - 1, k) for v in (vals, idx)]
    if keepdim:
        return tuple(last)
    return tuple(b.op("Squeeze", [v, b.const([d], np.int64)]) for v in last)


@_by_name("kthvalue")
def _kthvalue(b, node, args, kwargs):
    x = args[0]
    if x.rank == 0:
        raise _Unsupported()
    return _kth(b, x, arg(args, kwargs, 1, "k"), arg(args, kwargs, 2, "dim", -1),
                arg(args, kwargs, 3, "keepdim", False))


@_by_name("median")
def _median(b, node, args, kwargs):
    x = args[0]
    dim = arg(args, kwargs, 1, "dim")
    if dim is None:
        if None in x.shape or x.rank == 0:
            raise _Unsupported()
        flat = b.op("Reshape", [x, b.const([-1], np.int64)], shape=(int(np.prod(x.shape)),))
        n = flat.shape[0]
        v = _kth(b, flat, (n + 1) // 2, 0, False)[0]    # the lower of the two middle values
        return v
    d = _norm(dim, x.rank)
    if x.shape[d] is None:
        raise _Unsupported()
    return _kth(b, x, (x.shape[d] + 1) // 2, d, arg(args, kwargs, 2, "keepdim", False))


# ------------------------------------------------------------------------------ diagonals
def diagonal(b: Builder, x: T, offset: int, d1: int, d2: int) -> T:
    """The diagonal of dims d1, d2, as a last dim (GatherND on those two moved to the front)."""
    d1, d2 = _norm(d1, x.rank), _norm(d2, x.rank)
    n1, n2 = x.shape[d1], x.shape[d2]
    if n1 is None or n2 is None:
        raise _Unsupported()
    rows = np.arange(max(0, -offset), min(n1, n2 - offset))
    pairs = np.stack([rows, rows + offset], axis=-1).reshape(-1, 2).astype(np.int64)
    rest = [i for i in range(x.rank) if i not in (d1, d2)]
    front = b.op("Transpose", [x], perm=[d1, d2] + rest)
    if len(pairs) == 0:
        shape = [0 if isinstance(s, T) else s for s in b.dims(x)]
        empty = [shape[i] for i in rest] + [0]
        return b.op("ConstantOfShape", [_vec(b, empty)], dtype=x.dtype,
                    value=b.onnx.numpy_helper.from_array(np.zeros(1, x.dtype)))
    g = b.op("GatherND", [front, b.const(pairs, np.int64)],
             shape=(len(pairs),) + tuple(x.shape[i] for i in rest))
    return b.op("Transpose", [g], perm=list(range(1, len(rest) + 1)) + [0])


@_by_name("diagonal")
def _diagonal(b, node, args, kwargs):
    return diagonal(b, args[0], arg(args, kwargs, 1, "offset", 0), arg(args, kwargs, 2, "dim1", 0),
                    arg(args, kwargs, 3, "dim2", 1))


_reg(_lin("diagonal"))(lambda b, node, args, kwargs: diagonal(
    b, args[0], kwargs.get("offset", 0), kwargs.get("dim1", -2), kwargs.get("dim2", -1)))
_by_name("trace")(lambda b, node, args, kwargs: reduce(b, "ReduceSum",
                                                       diagonal(b, args[0], 0, 0, 1), None,
                                                       False))


@_by_name("diag")
def _diag(b, node, args, kwargs):
    x, k = args[0], arg(args, kwargs, 1, "diagonal", 0)
    if x.rank == 2:
        return diagonal(b, x, k, 0, 1)
    n = x.shape[0]
    if n is None:
        raise _Unsupported()
    m = n + abs(k)
    # place v on the k-th diagonal of an m x m zero matrix
    rows = np.arange(n) + max(0, -k)
    idx = np.stack([rows, rows + k], axis=-1).astype(np.int64)
    zeros = b.op("ConstantOfShape", [_vec(b, [m, m])], dtype=x.dtype,
                 value=b.onnx.numpy_helper.from_array(np.zeros(1, x.dtype)))
    return b.op("ScatterND", [zeros, b.const(idx, np.int64), x])


def cross(b: Builder, x: T, y: T, dim: int) -> T:
    """(x1 y2 - x2 y1, x2 y0 - x0 y2, x0 y1 - x1 y0) along ``dim``."""
    def rot(t, order):
        return b.op("Gather", [t, b.const(order, np.int64)], axis=_norm(dim, t.rank))
    a = b.op("Mul", [rot(x, [1, 2, 0]), rot(y, [2, 0, 1])])
    c = b.op("Mul", [rot(x, [2, 0, 1]), rot(y, [1, 2, 0])])
    return b.op("Sub", [a, c])


@_by_name("cross")
def _cross(b, node, args, kwargs):
    x, y, dim = args[0], args[1], arg(args, kwargs, 2, "dim")
    if dim is None:        # the first dimension of size 3
        dim = next((i for i, s in enumerate(x.shape) if s == 3), None)
        if dim is None:
            raise _Unsupported()
    return cross(b, x, y, dim)


_reg(_lin("cross"))(lambda b, node, args, kwargs: cross(b, args[0], args[1],
                                                        kwargs.get("dim", -1)))


@_by_name("isreal")
def _isreal(b, node, args, kwargs):
    true = b.onnx.numpy_helper.from_array(np.ones(1, np.bool_))
    return b.op("ConstantOfShape", [b.shape_of(args[0])], dtype=np.bool_, value=true)


@_reg(_e("matrix_power"), _lin("matrix_power"), methods=("matrix_power",))
def _matrix_power(b, node, args, kwargs):
    x, n = args[0], arg(args, kwargs, 1, "n")
    if not isinstance(n, int) or n < 0:
        raise _Unsupported()      # negative powers need an inverse, which ONNX lacks
    if n == 0:
        return _batched_eye(b, x)
    out = x
    for _ in range(n - 1):
        out = b.op("MatMul", [out, x])
    return out


def _batched_eye(b: Builder, x: T) -> T:
    n = x.shape[-1]
    if n is None:
        raise _Unsupported()
    return b.op("Expand", [b.const(np.eye(n, dtype=x.dtype)), b.shape_of(x)])


# ------------------------------------------------------------------------------ creation
def _fill_like(value):
    def tr(b, node, args, kwargs):
        v = arg(args, kwargs, 1, "fill_value") if value is None else value
        dt = _out_dtype(node)
        return b.op("Expand", [b.tensor(v, dt), b.shape_of(args[0])], dtype=dt)
    return tr


_reg(_e("zeros_like"))(_fill_like(0))
_reg(_e("ones_like"))(_fill_like(1))
_reg(_e("full_like"))(_fill_like(None))
_reg(_e("empty_like"))(_fill_like(0))


@_reg(_e("full"))
def _full(b, node, args, kwargs):
    size = arg(args, kwargs, 0, "size")
    v = arg(args, kwargs, 1, "fill_value")
    dt = _out_dtype(node)
    return b.op("Expand", [b.tensor(v, dt), b.i64_vec(list(size))], dtype=dt)


@_reg(methods=("new_zeros", "new_ones", "new_full"))
def _new_fill(b, node, args, kwargs):
    value = {"new_zeros": 0, "new_ones": 1}.get(node.target)
    size = args[1] if len(args) > 1 else kwargs["size"]
    if value is None:
        value = arg(args, kwargs, 2, "fill_value")
    dt = _out_dtype(node)
    sizes = list(size) if isinstance(size, (list, tuple)) else _shape_args(args[1:])
    return b.op("Expand", [b.tensor(value, dt), b.i64_vec(sizes)], dtype=dt)
