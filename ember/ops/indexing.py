"""Indexing: __getitem__/__setitem__, where, masked ops, gather/scatter, index_* ops."""
from __future__ import annotations

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor, _make, _wrap_dim
from ..autograd.function import Op
from ..autograd.grad_mode import _state
from .registry import FUNCTIONS, apply_inplace, check_inplace, promote_args, register, sum_to


# ----------------------------------------------------------------------------- getitem
def _convert_key(x, key):
    """A torch index as a numpy one; returns (key, is_basic)."""
    if not isinstance(key, tuple):
        key = (key,)
    out, basic = [], True
    for k in key:
        if isinstance(k, Tensor):
            a = k._data
            if a.dtype.kind == "f" or a.dtype == D.bfloat16.np:
                raise IndexError("tensors used as indices must be long, int, byte or bool "
                                 f"tensors; got {k.dtype}")
            if a.ndim == 0 and a.dtype.kind in "iu" and a.dtype != np.uint8:
                out.append(int(a))   # torch indexes with a 0-d integer tensor as with an int
                continue
            if a.dtype == np.uint8:
                a = a.astype(bool)
            out.append(a)
            basic = False
        elif isinstance(k, slice):
            if k.step is not None and int(k.step) <= 0:
                raise ValueError("step must be greater than zero")
            out.append(slice(_int(k.start), _int(k.stop), _int(k.step)))
        elif k is None or k is Ellipsis:
            out.append(k)
        elif isinstance(k, (bool, np.bool_)):
            out.append(bool(k))
            basic = False
        elif isinstance(k, (int, np.integer)):
            out.append(int(k))
        elif isinstance(k, (list, np.ndarray, range)):
            a = np.asarray(k)
            if a.dtype == object:   # a list that mixes tensors and ints: torch takes it too
                a = np.asarray([int(v) if not isinstance(v, bool) else v for v in k])
            if a.size == 0:   # [] and an empty range index nothing; numpy calls them float
                a = a.astype(np.int64)
            if a.dtype.kind == "f" or a.dtype == D.bfloat16.np:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            out.append(a)
            basic = False
        else:
            raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or "
                             f"byte Variables are valid indices (got {type(k).__name__})")
    return tuple(out), basic


def _int(v):
    if v is None:
        return None
    if isinstance(v, Tensor):
        return int(v.item())
    return int(v)


def _index_error(e, x):
    msg = str(e).replace("axis", "dimension")
    return IndexError(f"index: {msg} (tensor of shape {list(x.shape)})")


def _index(x, key):
    try:
        return x[key]
    except IndexError as e:
        raise _index_error(e, x) from None


class BasicIndex(Op):
    """x[key] with ints / slices / None / ...: a view."""

    view = True

    @staticmethod
    def forward(ctx, x, key):
        if Ellipsis not in key:
            key = key + (Ellipsis,)  # all-int keys then give a 0-d view, not a NumPy scalar
        ctx.key, ctx.shape = key, x.shape
        return _index(x, key)

    @staticmethod
    def backward(ctx, grad):
        return _IndexPutZeros.apply(grad, ctx.key, ctx.shape, False), None


class AdvancedIndex(Op):
    """x[key] with integer or boolean tensors: a copy (gradient scatter-adds)."""

    @staticmethod
    def forward(ctx, x, key):
        ctx.key, ctx.shape = key, x.shape
        return _index(x, key)

    @staticmethod
    def backward(ctx, grad):
        return _IndexPutZeros.apply(grad, ctx.key, ctx.shape, True), None


class _IndexPutZeros(Op):
    """zeros(shape) with src written (or accumulated) at key: the adjoint of indexing."""

    @staticmethod
    def forward(ctx, src, key, shape, accumulate):
        ctx.key, ctx.accumulate = key, accumulate
        out = np.zeros(shape, src.dtype)
        if accumulate:
            np.add.at(out, key, src)
        else:
            out[key] = src
        return out

    @staticmethod
    def backward(ctx, grad):
        op = AdvancedIndex if ctx.accumulate else BasicIndex
        return op.apply(grad, ctx.key), None, None, None


def _split_ints(key):
    """(ints-only key, rest) when torch and numpy disagree on where advanced dims go, else None.

    torch applies integer indices first, as basic `select`s, and only then decides whether the
    remaining advanced indices are adjacent; numpy counts integers as advanced indices. They
    disagree when an integer is separated from the advanced indices by a slice or None:
    ``x[0, :, [0]]`` is (5, 1) for a (4, 5, 3) torch tensor and (1, 5) in numpy. Indexing with
    the integers first, then with the rest, gives torch's answer.
    """
    adv = [i for i, c in enumerate(key) if isinstance(c, np.ndarray)]
    ints = [i for i, c in enumerate(key) if isinstance(c, int) and not isinstance(c, bool)]
    if not adv or not ints:
        return None

    def adjacent(positions):
        lo, hi = min(positions), max(positions)
        return all(isinstance(key[i], (np.ndarray, int)) for i in range(lo, hi + 1))
    if adjacent(adv) == adjacent(adv + ints):
        return None
    first, rest = [], []
    for c in key:
        if isinstance(c, np.ndarray):
            first.extend([slice(None)] * (c.ndim if c.dtype == bool else 1))
            rest.append(c)
        elif isinstance(c, int) and not isinstance(c, bool):
            first.append(c)
        elif isinstance(c, slice) or c is Ellipsis:
            first.append(c if c is Ellipsis else slice(None))
            rest.append(c)
        else:   # None and Python bools consume no dim of the input
            rest.append(c)
    return tuple(first), tuple(rest)


def getitem(self, key):
    k, basic = _convert_key(self, key)
    if basic:
        return BasicIndex.apply(self, k)
    split = _split_ints(k)
    if split is not None:   # see _split_ints: integers first, as torch does
        return getitem(BasicIndex.apply(self, split[0]), split[1])
    return AdvancedIndex.apply(self, k)


Tensor.__getitem__ = getitem


class IndexPut(Op):
    """A copy of x with values written (or accumulated) at an advanced index."""

    @staticmethod
    def forward(ctx, x, values, key, accumulate=False):
        ctx.key, ctx.vshape, ctx.accumulate = key, values.shape, accumulate
        out = np.array(x, copy=True)
        try:
            if accumulate:
                np.add.at(out, key, values)
            else:
                out[key] = values
        except IndexError as e:
            raise _index_error(e, x) from None
        except ValueError as e:
            raise RuntimeError(f"index_put_: shape mismatch: value tensor of shape "
                               f"{list(values.shape)} cannot be broadcast to indexing result "
                               f"({e})") from None
        return out

    @staticmethod
    def backward(ctx, grad):
        # accumulate passed explicitly: apply() counts its positional arguments as inputs,
        # and backward returns one gradient for each of the four
        gx = grad if ctx.accumulate else IndexPut.apply(
            grad, np.zeros((), grad._data.dtype), ctx.key, False)
        gv = sum_to(AdvancedIndex.apply(grad, ctx.key), ctx.vshape)
        return gx, gv, None, None


def index_put(input, indices, values, accumulate=False):
    """out-of-place index_put: input with values put at the tensor indices."""
    k, _ = _convert_key(input, tuple(indices))
    v = values if isinstance(values, Tensor) else _make(np.asarray(values, input._data.dtype))
    if v._data.dtype != input._data.dtype:
        v = v.to(input.dtype)
    return IndexPut.apply(input, v, k, accumulate)


register("index_put", inplace=True, dtypes=D.ALL)(index_put)


class Copy(Op):
    """src broadcast to x's shape and dtype (what copy_ writes)."""

    @staticmethod
    def forward(ctx, x, src):
        ctx.src_shape, ctx.src_dtype = src.shape, src.dtype
        try:
            return np.broadcast_to(src, x.shape).astype(x.dtype)
        except ValueError:
            raise RuntimeError(f"copy_: the source of shape {list(src.shape)} is not "
                               f"broadcastable to the destination of shape {list(x.shape)}") \
                from None

    @staticmethod
    def backward(ctx, grad):
        g = sum_to(grad, ctx.src_shape)
        floating = ctx.src_dtype.kind == "f" or ctx.src_dtype == D.bfloat16.np
        if floating and g._data.dtype != ctx.src_dtype:
            g = g.to(D.from_numpy_dtype(ctx.src_dtype))
        return None, g


def _copy_(self, src, non_blocking=False):
    """Copy src's values into self (broadcasting, casting); differentiable."""
    if not isinstance(src, Tensor):
        src = _make(np.asarray(src))
    return apply_inplace(self, Copy.apply, "copy_", src)


Tensor.copy_ = _copy_


def setitem(self, key, value):
    k, basic = _convert_key(self, key)
    split = None if basic else _split_ints(k)
    if split is not None:   # see _split_ints: write through the integer-indexed view
        return setitem(getitem(self, split[0]), split[1], value)
    record = _state.enabled and (self._requires_grad or (isinstance(value, Tensor) and
                                                          value._requires_grad))
    if not record:
        check_inplace(self, "__setitem__")
        if not self._data.flags.writeable:
            raise RuntimeError("__setitem__: cannot write into this tensor: its memory is "
                               "read-only (a read-only NumPy array, or an expanded view).")
        v = value._data if isinstance(value, Tensor) else value
        try:
            self._data[k] = v
        except IndexError as e:
            raise _index_error(e, self) from None
        except ValueError as e:
            raise RuntimeError(f"__setitem__: shape mismatch: value of shape {list(np.shape(v))}"
                               f" cannot be broadcast to indexing result ({e})") from None
        self._vc[0] += 1
        return
    if basic:
        _copy_(getitem(self, key), value)
    else:
        apply_inplace(self, index_put, "index_put_", k, value)


Tensor.__setitem__ = setitem


# ----------------------------------------------------------------------------- where / masks
class Where(Op):
    """Pick from a where cond is True, else from b (broadcasting all three)."""

    @staticmethod
    def forward(ctx, cond, a, b):
        ctx.save_for_backward(cond)
        ctx.shapes = (a.shape, b.shape)
        return np.where(cond, a, b)

    @staticmethod
    def backward(ctx, grad):
        (cond,) = ctx.saved_tensors
        zero = np.zeros((), grad._data.dtype)
        sa, sb = ctx.shapes
        ga = sum_to(Where.apply(cond, grad, zero), sa) if ctx.needs_input_grad[1] else None
        gb = sum_to(Where.apply(cond, zero, grad), sb) if ctx.needs_input_grad[2] else None
        return None, ga, gb


def where(condition, input=None, other=None, *, out=None):
    """where(cond, x, y) elementwise choice; where(cond) is nonzero(cond, as_tuple=True)."""
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if out is not None:
        return out.copy_(where(condition, input, other))
    c = condition if isinstance(condition, Tensor) else _make(np.asarray(condition))
    if c._data.dtype != np.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {c.dtype}")
    a, b = promote_args("where", input, other)
    try:
        return Where.apply(c, a, b)
    except ValueError:
        raise RuntimeError(f"where: shapes of condition {list(c.shape)}, input "
                           f"{list(np.shape(getattr(a, '_data', a)))} and other "
                           f"{list(np.shape(getattr(b, '_data', b)))} do not broadcast") from None


FUNCTIONS["where"] = where
Tensor.where = lambda self, condition, other: where(condition, self, other)


def masked_fill(input, mask, value):
    """input with value where mask is True (mask broadcasts to input's shape)."""
    m = mask if isinstance(mask, Tensor) else _make(np.asarray(mask))
    if m._data.dtype != np.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{m.dtype}")
    try:
        np.broadcast_shapes(m._data.shape, input._data.shape)
    except ValueError:
        raise RuntimeError(f"masked_fill: The size of the mask {list(m.shape)} must be "
                           f"broadcastable to the input of shape {list(input.shape)}") from None
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value.ndim} dimension(s).")
        v = value.to(input.dtype)
    else:
        v = np.asarray(value).astype(input._data.dtype)
    out = Where.apply(m, v, input)
    if out._data.shape != input._data.shape:
        out = out.expand(input.shape).contiguous()
    return out


register("masked_fill", inplace=True, dtypes=D.ALL)(masked_fill)


def masked_select(input, mask):
    m = mask._data.astype(bool)
    shape = np.broadcast_shapes(m.shape, input._data.shape)
    x = input.expand(shape) if tuple(input.shape) != shape else input
    return AdvancedIndex.apply(x, (np.broadcast_to(m, shape),))


register("masked_select", dtypes=D.ALL)(masked_select)


def masked_scatter(input, mask, source):
    m = np.broadcast_to(mask._data.astype(bool), input._data.shape)
    n = int(m.sum())
    return IndexPut.apply(input, source.reshape(-1)[:n], (m,), False)


register("masked_scatter", inplace=True, dtypes=D.ALL)(masked_scatter)


def nonzero(input, *, as_tuple=False):
    """Indices of nonzero elements: (n, ndim) int64, or a tuple of 1-D index tensors."""
    a = input._data
    if as_tuple:
        if a.ndim == 0:
            return (_make(np.nonzero(a.reshape(1))[0].astype(np.int64)),)
        return tuple(_make(i.astype(np.int64)) for i in np.nonzero(a))
    if a.ndim == 0:
        return _make(np.zeros((1 if a.item() else 0, 0), np.int64))
    return _make(np.argwhere(a).astype(np.int64))


register("nonzero", differentiable=False, dtypes=D.ALL)(nonzero)
register("argwhere", differentiable=False, dtypes=D.ALL)(lambda input: nonzero(input))


# ----------------------------------------------------------------------------- gather/scatter
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
    if index.ndim != input.ndim and index.numel():
        raise RuntimeError(f"{name}(): Index tensor must have the same number of dimensions as "
                           f"input tensor; got index {list(index.shape)} and input "
                           f"{list(input.shape)}")
    for k in range(index.ndim):
        if k != d and index.shape[k] > input.shape[k]:
            raise RuntimeError(f"{name}(): Size does not match at dimension {k} expected index "
                               f"{list(index.shape)} to be smaller than self "
                               f"{list(input.shape)} apart from dimension {d}")
    a = index._data
    n = input.shape[d] if input.ndim else 1  # a 0-d tensor indexes like a 1-element one
    _check_bounds(name, a, d, n)
    return d


def _check_bounds(name, a, d, n):
    """torch's rule for gather/scatter/index_* indices: 0 <= i < n (no negative indices)."""
    if a.size and (a.min() < 0 or a.max() >= n):
        raise RuntimeError(f"{name}(): index {a.max() if a.max() >= n else a.min()} "
                           f"is out of bounds for dimension {d} with size {n}")


def _idx64(index):
    return index._data.astype(np.int64, copy=False)


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
    return Gather.apply(input, d, _idx64(index))


register("gather", dtypes=D.ALL)(gather)


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
    if src is None or not isinstance(src, Tensor):
        v = value if value is not None else src
        s = np.asarray(v).astype(input._data.dtype)
        return Scatter.apply(input, s, d, _idx64(index), reduce)
    if src._data.dtype != input._data.dtype:
        src = src.to(input.dtype)
    return Scatter.apply(input, src, d, _idx64(index), reduce)


def scatter_add(input, dim, index, src):
    return scatter(input, dim, index, src, reduce="add")


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    if not include_self:
        raise NotImplementedError("scatter_reduce(include_self=False) is not supported yet")
    if reduce == "mean":
        s = scatter(input, dim, index, src, reduce="sum")
        cnt = scatter(input.new_ones(input.shape) if include_self else input.new_zeros(
            input.shape), dim, index, src.new_ones(src.shape), reduce="sum")
        if not input.is_floating_point():  # torch keeps integer dtypes: floor division
            return s.div(cnt, rounding_mode="floor")
        return s / cnt
    return scatter(input, dim, index, src, reduce=reduce)


register("scatter", inplace=True, dtypes=D.ALL)(scatter)
register("scatter_add", inplace=True, dtypes=D.ALL)(scatter_add)
register("scatter_reduce", inplace=True, dtypes=D.ALL)(scatter_reduce)


def _scatter_into_zeros(g, idx, dim, shape):
    z = _make(np.zeros(shape, g._data.dtype))
    return z.scatter(dim, _make(np.asarray(idx, np.int64)), g)


class IndexSelect(Op):
    """x.take(index, axis=dim) for a fixed int64 index; the adjoint is IndexSelectBackward."""

    @staticmethod
    def forward(ctx, x, index, dim):
        ctx.index, ctx.dim, ctx.size = index, dim, x.shape[dim]
        return np.take(x, index, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        return IndexSelectBackward.apply(grad, ctx.index, ctx.dim, ctx.size)


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
    _check_bounds("index_select", a, d, n)
    key = (slice(None),) * d + (a.astype(np.int64),)
    if input.ndim == 0:  # torch: the result of indexing a scalar is a scalar
        if a.size != 1:
            raise IndexError(f"index_select(): Index to scalar can have only 1 value, got "
                             f"{a.size} value(s)")
        return input.reshape(1)[key].reshape(())
    return IndexSelect.apply(input, key[-1], d)


register("index_select", dtypes=D.ALL)(index_select)


def _index_key(name, input, dim, index):
    """The numpy key selecting ``index`` (1-D int tensor) along dim, bounds checked."""
    if not isinstance(index, Tensor) or index._data.dtype.kind not in "iu":
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index; got "
                           f"{getattr(index, 'dtype', type(index).__name__)}")
    d = _wrap_dim(dim, max(input.ndim, 1), name)
    a = index._data.reshape(-1).astype(np.int64)
    _check_bounds(name, a, d, input.shape[d] if input.ndim else 1)
    return (slice(None),) * d + (a,)


def index_add(input, dim, index, source, *, alpha=1):
    key = _index_key("index_add", input, dim, index)
    src = source * alpha if alpha != 1 else source
    return IndexPut.apply(input, src.to(input.dtype), key, True)


def index_copy(input, dim, index, source):
    key = _index_key("index_copy", input, dim, index)
    return IndexPut.apply(input, source.to(input.dtype), key, False)


def index_fill(input, dim, index, value):
    key = _index_key("index_fill", input, dim, index)
    v = value.to(input.dtype) if isinstance(value, Tensor) else np.asarray(value).astype(
        input._data.dtype)
    return IndexPut.apply(input, v, key, False)


register("index_add", inplace=True, dtypes=D.ALL)(index_add)
register("index_copy", inplace=True, dtypes=D.ALL)(index_copy)
register("index_fill", inplace=True, dtypes=D.ALL)(index_fill)


def take(input, index):
    return AdvancedIndex.apply(input.reshape(-1), (index._data.astype(np.int64),))


def take_along_dim(input, indices, dim=None):
    if dim is None:
        return take(input, indices.reshape(-1))
    d = _wrap_dim(dim, input.ndim, "take_along_dim")
    shape = list(np.broadcast_shapes(
        tuple(s for i, s in enumerate(input.shape) if i != d),
        tuple(s for i, s in enumerate(indices.shape) if i != d)))
    ishape = shape[:d] + [input.shape[d]] + shape[d:]
    jshape = shape[:d] + [indices.shape[d]] + shape[d:]
    return gather(input.expand(ishape), d, indices.expand(jshape))


register("take", dtypes=D.ALL)(take)
register("take_along_dim", dtypes=D.ALL)(take_along_dim)
