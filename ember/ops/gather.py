"""Ops that address elements along a dim through an index tensor: gather/scatter
(scatter_add, scatter_reduce), index_select/index_add/index_copy/index_fill, take and
take_along_dim."""
from __future__ import annotations

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor, _make, _wrap_dim
from ..autograd.function import Op, guard_inputs
from .indexing import AdvancedIndex, IndexPut, _IndexPutZeros
from .registry import register
from .scatter_reduce import scatter_reduce


def _along(index, dim):
    """Full numpy index addressing, for each element of ``index``, position index[...] on dim."""
    grids = np.indices(index.shape, sparse=True)
    key = list(grids)
    key[dim] = index
    return tuple(key)


def _check_index(name, input, dim, index, src=None):
    if not isinstance(index, Tensor) or index._data.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index; got "
                           f"{getattr(index, 'dtype', type(index).__name__)}")
    nd = max(input.ndim, 1)
    d = _wrap_dim(dim, nd, name)
    # NOTE [0-d index]: torch compares dims as if a 0-d tensor were 1-d, so a 0-d index
    # addresses one element of a 1-d input (``zeros(10).scatter_(0, tensor(y), value=1)``, the
    # one-hot target transform of pytorch/tutorials' transforms chapter) and a 1-d index one of
    # a 0-d input; gather's result keeps the index's shape
    if max(index.ndim, 1) != max(input.ndim, 1) and index.numel():
        raise RuntimeError(f"{name}(): Index tensor must have the same number of dimensions as "
                           f"input tensor; got index {list(index.shape)} and input "
                           f"{list(input.shape)}")
    for k in range(index.ndim if index.numel() else 0):  # an empty index selects nothing
        if k != d and index.shape[k] > input.shape[k]:
            raise RuntimeError(f"{name}(): Size does not match at dimension {k} expected index "
                               f"{list(index.shape)} to be smaller than self "
                               f"{list(input.shape)} apart from dimension {d}")
    a = index._data
    n = input.shape[d] if input.ndim else 1  # a 0-d tensor indexes like a 1-element one
    _check_bounds(name, a, d, n)
    return d


# torch raises IndexError for these ops' out-of-range indices, RuntimeError for the others
_INDEX_ERROR_OPS = ("index_select", "index_copy", "index_fill")


def _check_bounds(name, a, d, n):
    """torch's rule for gather/scatter/index_* indices: 0 <= i < n (no negative indices)."""
    if a.size and (a.min() < 0 or a.max() >= n):
        error = IndexError if name in _INDEX_ERROR_OPS else RuntimeError
        raise error(f"{name}(): index {a.max() if a.max() >= n else a.min()} "
                    f"is out of bounds for dimension {d} with size {n}")


def _idx64(index):
    """index's data as int64; another integer dtype is cast by an op, so that a compile capture
    sees where the array comes from (NOTE [Arrays computed outside the registry])."""
    if index._data.dtype != np.int64:
        index = index.to(D.int64)
    return index._data


class Gather(Op):
    """out[i][j] = x[i][index[i][j]] along dim."""

    @staticmethod
    def forward(ctx, x, dim, index):
        ctx.shape, ctx.dim, ctx.index = x.shape, dim, index
        if x.ndim == 0:
            return x.copy()
        return x[_along(index, dim)]

    @staticmethod
    def backward(ctx, grad):
        z = _make(np.zeros(ctx.shape, grad._data.dtype))
        return z.scatter_add(ctx.dim, _make(ctx.index), grad), None, None


def gather(input, dim, index, *, sparse_grad=False):
    d = _check_index("gather", input, dim, index)
    if input.ndim != index.ndim:   # one is 0-d, the other 1-d (NOTE [0-d index])
        return gather(input.reshape(-1), d, index.reshape(-1)).reshape(index.shape)
    # see NOTE [Guarded inputs]: the backward scatters by index's values
    return guard_inputs(Gather.apply(input, d, _idx64(index)), index)


register("gather")(gather)


class Scatter(Op):
    """x with src written (reduce=None) or added ('add') at index along dim."""

    @staticmethod
    def forward(ctx, x, src, dim, index, reduce=None):
        ctx.dim, ctx.index, ctx.reduce, ctx.src_shape = dim, index, reduce, src.shape
        out = np.array(x, copy=True)
        if index.size == 0:
            return out
        if x.ndim == 0:  # a 0-d tensor scatters like a 1-element one
            one = Scatter.forward(ctx, x.reshape(1), np.reshape(src, -1), 0, index.reshape(1),
                                  reduce)
            ctx.src_shape, ctx.index = src.shape, index
            return one.reshape(())
        key = _along(index, dim)
        vals = src[tuple(slice(0, s) for s in index.shape)] if src.ndim else src
        if reduce is None:
            out[key] = vals
        elif reduce in ("add", "sum"):
            np.add.at(out, key, vals)
        elif reduce in ("multiply", "prod"):
            np.multiply.at(out, key, vals)
        elif reduce == "amax":
            np.maximum.at(out, key, vals)
        elif reduce == "amin":
            np.minimum.at(out, key, vals)
        else:
            raise RuntimeError(f"scatter: reduce argument must be either add, multiply, sum, "
                               f"prod, amax or amin; got {reduce}")
        return out

    @staticmethod
    def backward(ctx, grad):
        index = _make(ctx.index)
        if ctx.reduce in ("add", "sum"):
            gx = grad
        elif ctx.reduce is None:
            gx = grad.scatter(ctx.dim, index, 0.0)
        else:
            raise RuntimeError(f"scatter with reduce='{ctx.reduce}' is not differentiable in "
                               "ember")
        gsrc = grad.gather(ctx.dim, index)
        if tuple(gsrc.shape) != tuple(ctx.src_shape) and len(ctx.src_shape):
            gsrc = _zero_pad(gsrc, ctx.src_shape)  # src may be larger than index
        return gx, (gsrc if len(ctx.src_shape) else gsrc.sum()), None, None, None


def _zero_pad(g, shape):
    key = tuple(slice(0, s) for s in g.shape)
    return _IndexPutZeros.apply(g, key, tuple(shape), False)


def scatter(input, dim, index, src=None, value=None, *, reduce=None):
    if src is None and value is None:
        raise TypeError("scatter(): expected src or value")
    d = _check_index("scatter", input, dim, index)
    if index.ndim == 0:   # NOTE [0-d index]
        index = index.reshape(1)
    if src is None or not isinstance(src, Tensor):
        v = value if value is not None else src
        D.check_fits("scatter", v, input.dtype)  # NOTE [Numbers that do not fit the dtype]
        s = np.asarray(v).astype(input._data.dtype)
        return guard_inputs(Scatter.apply(input, s, d, _idx64(index), reduce), index)
    if src._data.dtype != input._data.dtype:
        raise RuntimeError(f"scatter(): Expected self.dtype to be equal to src.dtype; got "
                           f"{input.dtype} and {src.dtype}")
    return guard_inputs(Scatter.apply(input, src, d, _idx64(index), reduce), index)


def scatter_add(input, dim, index, src):
    return scatter(input, dim, index, src, reduce="add")


register("scatter", inplace=True)(scatter)
register("scatter_add", inplace=True)(scatter_add)
register("scatter_reduce", inplace=True)(scatter_reduce)  # in scatter_reduce.py


def _scatter_into_zeros(g, idx, dim, shape):
    z = _make(np.zeros(shape, g._data.dtype))
    return z.scatter(dim, _make(np.asarray(idx, np.int64)), g)


class IndexSelect(Op):
    """x.take(index, axis=dim) for an integer index (a tensor's data, read in the forward so
    that a compile capture sees it as an input); the adjoint is IndexSelectBackward."""

    @staticmethod
    def forward(ctx, x, index, dim):
        index = index.reshape(-1).astype(np.int64, copy=False)
        ctx.index, ctx.dim, ctx.size = index, dim, x.shape[dim]
        return np.take(x, index, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        return IndexSelectBackward.apply(grad, ctx.index, ctx.dim, ctx.size), None


class IndexSelectBackward(Op):
    """Sum the slices of g along dim into position index[k] of a length-``size`` dim.

    np.add.at is slow for this; sorting the index once turns it into np.add.reduceat over the
    runs of equal indices (each output position is a contiguous run after the sort).
    """

    @staticmethod
    def forward(ctx, g, index, dim, size):
        ctx.index, ctx.dim = index, dim
        shape = list(g.shape)
        shape[dim] = size
        out = np.zeros(shape, g.dtype)
        if index.size == 0:
            return out
        order = np.argsort(index, kind="stable")
        ordered = index[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        g_sorted = g if np.all(order == np.arange(order.size)) else np.take(g, order, axis=dim)
        sums = np.add.reduceat(g_sorted, starts, axis=dim)
        key = [slice(None)] * g.ndim
        key[dim] = ordered[starts]
        out[tuple(key)] = sums
        return out

    @staticmethod
    def backward(ctx, grad):
        return IndexSelect.apply(grad, ctx.index, ctx.dim)


def index_select(input, dim, index):
    """Entries of input at ``index`` (1-D int64) along dim."""
    if not isinstance(index, Tensor) or index._data.dtype.kind not in "iu":
        raise RuntimeError("index_select(): Expected dtype int32/int64 for index")
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    d = _wrap_dim(dim, max(input.ndim, 1), "index_select")
    n = input.shape[d] if input.ndim else 1
    a = index._data.reshape(-1)
    if input.ndim == 0 and a.size != 1:  # torch's RuntimeError, before the bounds
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got "
                           f"{a.size} value(s)")
    if n == 0 and a.size:
        raise RuntimeError(f"index_select(): self indexing axis dim should be positive; dim {d} "
                           f"of the input of shape {list(input.shape)} is empty")
    _check_bounds("index_select", a, d, n)
    if input.ndim == 0:  # torch: the result of indexing a scalar is a scalar
        return guard_inputs(input.reshape(1)[index.reshape(-1)], index).reshape(())
    return guard_inputs(IndexSelect.apply(input, index, d), index)


register("index_select")(index_select)


def _index_key(name, input, dim, index):
    """The numpy key selecting ``index`` (1-D int tensor) along dim, bounds checked."""
    if not isinstance(index, Tensor) or index._data.dtype.kind not in "iu":
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index; got "
                           f"{getattr(index, 'dtype', type(index).__name__)}")
    d = _wrap_dim(dim, max(input.ndim, 1), name)
    a = _idx64(index.reshape(-1))  # (by ops: a compile capture replays it from the index)
    _check_bounds(name, a, d, input.shape[d] if input.ndim else 1)
    return (slice(None),) * d + (a,)


def _check_source(name, input, dim, index, source):
    """torch's checks of index_add/index_copy's index and source, in its order and with its
    exception types (which differ between the two ops). On NumPy shapes and dtypes: this runs
    on every call (an embedding's backward is an index_add)."""
    if not isinstance(source, Tensor):
        raise TypeError(f"{name}(): argument 'source' must be Tensor, not "
                        f"{type(source).__name__}")
    idx = index._data if isinstance(index, Tensor) else None
    if idx is not None and idx.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector; got an index of shape "
                         f"{list(index.shape)}")
    if name == "index_copy" and idx is not None and idx.dtype != np.int64:
        raise RuntimeError(f"index_copy(): Expected a long tensor for index, but got "
                           f"{index.dtype}")
    ishape, sshape = input._data.shape, source._data.shape
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(f"{name}(): self ({input.dtype}) and source ({source.dtype}) must "
                           "have the same dtype")
    d = dim if type(dim) is int and 0 <= dim < len(ishape) else \
        _wrap_dim(dim, max(len(ishape), 1), name)
    count = sshape[d] if len(sshape) > d else 1
    if idx is not None and idx.size != count:
        error = IndexError if name == "index_copy" else RuntimeError
        raise error(f"{name}(): Number of indices ({idx.size}) should be equal to "
                    f"source.size(dim) ({count}), for dim {d}")
    if name == "index_add" and (len(sshape) != len(ishape) or sshape[:d] != ishape[:d]
                                or sshape[d + 1:] != ishape[d + 1:]):
        raise RuntimeError(f"index_add(): source tensor shape must match self tensor shape, "
                           f"excluding the specified dimension; got self {list(ishape)} and "
                           f"source {list(sshape)} for dim {d}")


def _on_0d(fn, input, dim, index, *rest):
    """A 0-d input indexes like a 1-element 1-d one (NOTE [0-d index]); back to 0-d after."""
    flat = [r.reshape(1) if isinstance(r, Tensor) and r.ndim == 0 else r for r in rest]
    return fn(input.reshape(1), dim, index.reshape(-1), *flat).reshape(())


def index_add(input, dim, index, source, *, alpha=1):
    _check_source("index_add", input, dim, index, source)
    if input.ndim == 0:
        return _on_0d(lambda x, d, i, s: index_add(x, d, i, s, alpha=alpha), input, dim, index,
                      source)
    key = _index_key("index_add", input, dim, index)
    if isinstance(alpha, float) and input._data.dtype.kind in "iu":
        alpha = int(alpha)  # torch converts alpha to the integer dtype first (0.5 -> 0)
    src = source * alpha if alpha != 1 else source
    return guard_inputs(IndexPut.apply(input, src.to(input.dtype), key, True), index)


def index_copy(input, dim, index, source):
    _check_source("index_copy", input, dim, index, source)
    if input.ndim == 0:
        return _on_0d(index_copy, input, dim, index, source)
    key = _index_key("index_copy", input, dim, index)
    return guard_inputs(IndexPut.apply(input, source.to(input.dtype), key, False), index)


def index_fill(input, dim, index, value):
    if isinstance(index, Tensor) and index.ndim > 1:
        raise RuntimeError(f"index_fill(): Index has to be a vector/scalar; got an index of "
                           f"shape {list(index.shape)}")
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.ndim} dimension(s).")
    if input.ndim == 0:  # (the value stays 0-d)
        return index_fill(input.reshape(1), dim, index.reshape(-1), value).reshape(())
    if isinstance(index, Tensor) and index._data.dtype.kind in "iu" and index.numel() and \
            index._data.min() < 0:  # index_fill (alone of these ops) counts from the end
        d = _wrap_dim(dim, input.ndim, "index_fill")
        n = input.shape[d]
        if index._data.min() >= -n:
            index = index + n * (index < 0).to(index.dtype)
    key = _index_key("index_fill", input, dim, index)
    if not isinstance(value, Tensor):  # NOTE [Numbers that do not fit the dtype]
        if isinstance(value, complex) and not input.is_complex():
            raise RuntimeError(f"index_fill_(): Converting complex Scalar to non-complex type is "
                               f"not supported; got value {value!r} for a tensor of dtype "
                               f"{input.dtype}")
        D.check_fits("index_fill", value, input.dtype)
    v = value.to(input.dtype) if isinstance(value, Tensor) else np.asarray(value).astype(
        input._data.dtype)
    return guard_inputs(IndexPut.apply(input, v, key, False), index)


register("index_add", inplace=True)(index_add)
register("index_copy", inplace=True)(index_copy)
register("index_fill", inplace=True)(index_fill)


def take(input, index):
    if not isinstance(index, Tensor) or index.dtype is not D.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got "
                           f"{getattr(index, 'dtype', type(index).__name__)}")
    return guard_inputs(AdvancedIndex.apply(input.reshape(-1), (index._data.astype(np.int64),)),
                        index)


def take_along_dim(input, indices, dim=None):
    if dim is None:
        return take(input, indices.reshape(-1))
    d = _wrap_dim(dim, input.ndim, "take_along_dim")
    if indices.ndim != input.ndim:
        raise RuntimeError(f"take_along_dim(): input and indices should have the same number of "
                           f"dimensions, but got {input.ndim} dimensions for input, and "
                           f"{indices.ndim} dimensions for indices")
    shape = list(np.broadcast_shapes(
        tuple(s for i, s in enumerate(input.shape) if i != d),
        tuple(s for i, s in enumerate(indices.shape) if i != d)))
    ishape = shape[:d] + [input.shape[d]] + shape[d:]
    jshape = shape[:d] + [indices.shape[d]] + shape[d:]
    return gather(input.expand(ishape), d, indices.expand(jshape))


register("take")(take)
register("take_along_dim")(take_along_dim)
