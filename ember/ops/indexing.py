"""Indexing: __getitem__/__setitem__, where, masked ops (gather/scatter/index_* are in
gather.py)."""
from __future__ import annotations

import warnings

import numpy as np

from .. import _dtype as D
from .._meta import refuse, refuses_meta
from .._tensor import Tensor, _make
from ..autograd.function import Op, _fw_active, guard_inputs, rename_node
from ..autograd.grad_mode import _state
from .registry import (
    FUNCTIONS,
    apply_inplace,
    check_inplace,
    promote_args,
    register,
    sum_to,
    write_out,
)

# ----------------------------------------------------------------------------- getitem
_UINT8_WARNED = [False]


def _warn_uint8_mask():
    """torch warns once per process that a uint8 index is read as a mask (deprecated)."""
    if not _UINT8_WARNED[0]:
        _UINT8_WARNED[0] = True
        import warnings
        warnings.warn("indexing: a uint8 (byte) tensor index is read as a boolean mask, which is "
                      "deprecated; index with a bool tensor (mask.bool()) instead.",
                      UserWarning, stacklevel=4)


_SEQUENCE_PARTS = (Tensor, list, tuple, np.ndarray, slice, type(None), type(Ellipsis))
_NUMBERS = {int, bool, np.int64, np.int32, float}


def _as_tuple(key):
    """torch reads a short list that holds a tensor, a sequence, a slice, None or ... as a
    tuple of indices, one per dim (NumPy's old rule): ``x[[[0, 1], [1, 2]]]`` is
    ``x[[0, 1], [1, 2]]``, ``x[[0, slice(None)]]`` is ``x[0, :]``; other lists index dim 0."""
    # the set of the entries' types first: a list of ints (the common case) costs no loop
    if len(key) < 32 and not set(map(type, key)) <= _NUMBERS and any(
            isinstance(k, _SEQUENCE_PARTS) for k in key):
        return tuple(key)
    return (key,)


def _convert_key(x, key):
    """A torch index as a numpy one; returns (key, is_basic)."""
    if type(key) is list:
        key = _as_tuple(key)
    elif not isinstance(key, tuple):
        key = (key,)
    out, basic = [], True
    for k in key:
        if isinstance(k, Tensor):
            a = k._data
            if a.dtype.kind in "fc" or a.dtype == D.bfloat16.np:
                raise IndexError("tensors used as indices must be long, int, byte or bool "
                                 f"tensors; got {k.dtype}")
            if a.ndim == 0 and a.dtype.kind in "iu" and a.dtype != np.uint8:
                # torch indexes with a 0-d integer tensor as with an int; read through the
                # tensor, so that a compile capture sees the data-dependent read
                out.append(int(k))
                continue
            if a.dtype == np.uint8:
                _warn_uint8_mask()
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
            error = TypeError if isinstance(k, str) else IndexError  # as torch's
            raise error(f"index: only integers, slices (`:`), ellipsis (`...`), None and long "
                        f"or byte Variables are valid indices (got {type(k).__name__})")
    return tuple(out), basic


def _int(v):
    if v is None:
        return None
    if isinstance(v, Tensor):
        return int(v.item())
    return int(v)


def _index_error(e, x):
    if x.ndim == 0:  # the torch 0.3 idiom loss.data[0]: say how to read a 0-d tensor
        return IndexError("index: invalid index of a 0-dim tensor: it has no dimension to "
                          "index; got an integer, slice or index tensor, expected None, ... or "
                          "True. Use tensor.item() to read a 0-dim tensor as a Python number.")
    msg = str(e).replace("axis", "dimension")
    return IndexError(f"index: {msg} (tensor of shape {list(x.shape)})")


def _empty_selection(x, key):
    """x[key]'s (empty) result when key's integer arrays are out of bounds but select nothing,
    else None. torch checks an index only for the elements it moves, so x[..., 0:0, [7]] is an
    empty result there while NumPy raises; retried with every integer array zeroed (in bounds
    wherever the dimension is not empty) to learn the result's shape."""
    if not isinstance(key, tuple):
        key = (key,)
    safe = tuple(np.zeros_like(k) if isinstance(k, np.ndarray) and k.dtype.kind in "iu" else k
                 for k in key)
    try:
        out = x[safe]
    except IndexError:
        return None
    return out if out.size == 0 else None


def _index(x, key):
    try:
        return x[key]
    except IndexError as e:
        out = _empty_selection(x, key)
        if out is None:
            raise _index_error(e, x) from None
        return out.copy()


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


_ALL = slice(None)


def _take(x, key):
    """x[:, ..., idx, :, ...] (one integer array or 1-D mask after full slices) as np.take
    along that dim: a C-contiguous result in one pass, where NumPy's fancy indexing gives a
    strided one that would need a second copy; None for any other key (or a bad index, which
    _index then reports)."""
    dim = None
    for i, c in enumerate(key):
        if type(c) is np.ndarray:
            if dim is not None:
                return None
            dim = i
        elif not (c is Ellipsis and dim is not None) and not (type(c) is slice and c == _ALL):
            return None
    if not dim:  # no array, or it indexes dim 0: NumPy's result is contiguous already
        return None
    idx = key[dim]
    if idx.dtype == bool:
        if idx.ndim != 1 or idx.shape[0] != x.shape[dim]:
            return None
        idx = np.flatnonzero(idx)
    try:
        return np.take(x, idx, axis=dim)
    except IndexError:
        return None


class AdvancedIndex(Op):
    """x[key] with integer or boolean tensors: a copy (gradient scatter-adds)."""

    grad_name = "IndexBackward0"  # torch's name: NOTE [Node class names]

    @staticmethod
    def forward(ctx, x, key):
        ctx.key, ctx.shape = key, x.shape
        out = _take(x, key)
        if out is not None:
            return out
        out = _index(x, key)
        # NumPy puts the advanced dims of x[:, idx] outermost in memory; torch's result is
        # contiguous, and programs rely on it (x[:, idx].view(-1))
        return out if out.flags.c_contiguous else np.ascontiguousarray(out)

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


def _tensors_in(key):
    """The index tensors of a torch index (a tensor, or a tuple holding some)."""
    if isinstance(key, Tensor):
        return (key,)
    if isinstance(key, (tuple, list)):
        return tuple(k for k in key if isinstance(k, Tensor))
    return ()


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


_BOUND_TYPES = (int, type(None))  # a slice bound kept as it is


def _plain_key(key):
    """Whether every entry of a key tuple is a Python int, None, ... or a slice with int/None
    bounds and no step: a basic index _convert_key would return unchanged (x[:, -1], x[0])."""
    for k in key:
        t = type(k)
        if t is int or k is None or k is Ellipsis:
            continue
        if (t is slice and k.step is None and type(k.start) in _BOUND_TYPES
                and type(k.stop) in _BOUND_TYPES):
            continue
        return False
    return True


def getitem(self, key):
    plain = key if type(key) is tuple else (key,)
    if _plain_key(plain):  # the common case without _convert_key's conversions
        return BasicIndex.apply(self, plain)
    k, basic = _convert_key(self, key)
    if basic:
        return BasicIndex.apply(self, k)
    # see NOTE [Guarded inputs]: the backward scatters by the index tensors' values
    split = _split_ints(k)
    if split is not None:   # see _split_ints: integers first, as torch does
        return guard_inputs(getitem(BasicIndex.apply(self, split[0]), split[1]),
                            *_tensors_in(key))
    return guard_inputs(AdvancedIndex.apply(self, k), *_tensors_in(key))


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
            _check_key_bounds(x, key)  # torch reports a bad index before a bad value shape
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
    _check_put_dtype(input, v, k)
    if v._data.dtype != input._data.dtype:  # one value for a mask: cast, as masked_fill
        v = v.to(input.dtype)
    return guard_inputs(IndexPut.apply(input, v, k, accumulate), *_tensors_in(indices))


register("index_put", inplace=True)(index_put)


def _check_key_bounds(x, key):
    """Raise torch's IndexError when key does not fit x's shape (indexes a read-only broadcast
    of one element: no copy). Only on error paths."""
    try:
        np.broadcast_to(np.zeros((), bool), x.shape)[key]
    except IndexError as e:
        raise _index_error(e, x) from None


def _check_put_dtype(dst, value, key):
    """torch writes a tensor at an advanced index (index_put_, x[mask] = v, x[idx] = v) only
    from a tensor of dst's dtype; a slice or int target casts (copy_), and so does a mask
    target given one value (torch fills it: masked_fill). key: the converted (NumPy) key."""
    if isinstance(value, Tensor) and value._data.dtype != dst._data.dtype:
        arrays = [c for c in key if isinstance(c, np.ndarray)]
        if value._data.size == 1 and all(c.dtype == bool for c in arrays):
            return
        _check_key_bounds(dst._data, key)  # torch checks the index first
        raise RuntimeError(f"index_put_: Index put requires the source and destination dtypes "
                           f"match; got {value.dtype} for the source and {dst.dtype} for the "
                           f"destination. Convert the value with .to({dst.dtype}).")


class Copy(Op):
    """src broadcast to x's shape and dtype (what copy_ writes)."""

    @staticmethod
    def forward(ctx, x, src):
        ctx.src_shape, ctx.src_dtype = src.shape, src.dtype
        try:
            return D.astype(np.broadcast_to(src, x.shape), x.dtype)
        except ValueError:
            raise RuntimeError(f"copy_: the source of shape {list(src.shape)} is not "
                               f"broadcastable to the destination of shape {list(x.shape)}") \
                from None

    @staticmethod
    def backward(ctx, grad):
        g = sum_to(grad, ctx.src_shape)
        floating = ctx.src_dtype.kind == "c" or D.from_numpy_dtype(ctx.src_dtype).is_floating_point
        if floating and g._data.dtype != ctx.src_dtype:
            if g._data.dtype.kind == "c" and ctx.src_dtype.kind != "c":
                g = g.real  # see NOTE [Complex gradients]
            g = g.to(D.from_numpy_dtype(ctx.src_dtype))
        return None, g


def _copy_(self, other, non_blocking=False):
    """Copy other's values into self (broadcasting, casting); differentiable."""
    if not isinstance(other, Tensor):
        other = _make(np.asarray(other))
    return apply_inplace(self, Copy.apply, "copy_", other)


Tensor.copy_ = _copy_


def _drop_leading_ones(value):
    """torch drops a written value's leading size-1 dims before broadcasting it into the
    selection (``x[i] = model(batch_of_one)`` writes a (1, n) row into an (n,) row, and a (1,)
    value into one element); copy_ itself keeps the stricter rule."""
    shape = value._data.shape
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    return value.reshape(shape[k:])


def write_at(dst, k, v):
    """``dst[k] = v`` on arrays with torch's errors (eager setitem, and its compiled replay)."""
    try:
        dst[k] = v
    except IndexError as e:
        empty = _empty_selection(dst, k)
        if empty is None:
            raise _index_error(e, dst) from None
        try:
            np.broadcast_to(v, empty.shape)   # a value that fits writes nothing, as in torch
        except ValueError:
            raise RuntimeError(f"__setitem__: shape mismatch: value of shape "
                               f"{list(np.shape(v))} cannot be broadcast to indexing result "
                               f"of shape {list(empty.shape)}") from None
    except ValueError as e:
        raise RuntimeError(f"__setitem__: shape mismatch: value of shape {list(np.shape(v))}"
                           f" cannot be broadcast to indexing result ({e})") from None
    except (OverflowError, TypeError) as e:  # 300 into uint8, 1j into float64
        raise RuntimeError(f"__setitem__: value {v!r} cannot be converted to type {dst.dtype} "
                           f"without overflow ({e})") from None


def store(self, k, value, key):
    """``self[key] = value`` without autograd (``k``: key as NumPy's); bumps the version. A
    compile capture records the write here (NOTE [In-place writes in a compiled call] in
    ember/_dynamo/writes.py), so it takes the torch key too: the index tensors it holds."""
    write_at(self._data, k, value._data if isinstance(value, Tensor) else value)
    self._bump_version()


def setitem(self, key, value):
    k, basic = _convert_key(self, key)
    if not basic:
        _check_put_dtype(self, value, k)
    split = None if basic else _split_ints(k)
    if split is not None:   # see _split_ints: write through the integer-indexed view
        return setitem(getitem(self, split[0]), split[1], value)
    if isinstance(value, Tensor) and value._data.ndim and value._data.shape[0] == 1:
        value = _drop_leading_ones(value)
    record = _state.enabled and (self._requires_grad or (isinstance(value, Tensor) and
                                                          value._requires_grad))
    if not record and _fw_active[0] and (self._fw is not None or (
            isinstance(value, Tensor) and value._fw is not None)):
        record = True  # forward AD: the op path carries the tangents into self's
    if not record:
        check_inplace(self, "__setitem__")
        if not self._data.flags.writeable:
            raise RuntimeError("__setitem__: cannot write into this tensor: its memory is "
                               "read-only (a read-only NumPy array, or an expanded view).")
        store(self, k, value, key)
        return
    if basic:
        _copy_(getitem(self, key), value)
    else:
        # the torch key, not the converted one: index_put guards its index tensors
        apply_inplace(self, index_put, "index_put_", key if isinstance(key, tuple) else (key,),
                      value)


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


_HALF_NP = (np.dtype(np.float16), D.bfloat16.np)


def where(condition, input=None, other=None, *, out=None):
    """where(cond, x, y) elementwise choice; where(cond) is nonzero(cond, as_tuple=True)."""
    if input is None and other is None:
        if condition._meta:
            refuse("where(condition) (the size of its result depends on the data)")
        return nonzero(condition, as_tuple=True)
    if out is not None:  # write_out resizes an empty out= (to 0-d too), as torch does
        result = where(condition, input, other)
        if isinstance(out, Tensor) and out.dtype != result.dtype:
            raise RuntimeError(f"where(): expected out= to have dtype {result.dtype} (the result's "
                               f"dtype), but got {out.dtype}")
        return write_out(out, result, "where")
    c = condition if isinstance(condition, Tensor) else _make(np.asarray(condition))
    if c._data.dtype == np.uint8:  # torch still takes a uint8 condition, with a warning
        warnings.warn("where received a uint8 condition tensor; this is deprecated (as in torch). "
                      "Use a boolean condition instead.", UserWarning, stacklevel=2)
        c = _make(c._data.astype(np.bool_))
    if c._data.dtype != np.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {c.dtype}")
    a, b = promote_args("where", input, other)
    for branch, promoted in ((input, a), (other, b)):  # NOTE [Numbers that do not fit the dtype]
        if not isinstance(branch, Tensor) and promoted.dtype not in _HALF_NP:  # (torch takes
            # the number as a float32 there)
            D.check_fits("where", branch, D.from_numpy_dtype(promoted.dtype))
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
        # (NumPy would cast NaN/inf to an arbitrary integer, 300 into int8 would wrap)
        D.check_fits("masked_fill", value, input.dtype)
        v = np.asarray(value).astype(input._data.dtype)
    # a mask with more dims or larger sizes broadcasts the result, as torch's out-of-place
    # masked_fill (masked_fill_ then refuses to write it back into input)
    out = Where.apply(m, v, input)
    return rename_node(out, "MaskedFillBackward0")  # torch's name: NOTE [Node class names]


register("masked_fill", inplace=True)(masked_fill)


def _bool_mask(name, input, mask):
    """mask's array and the shape input and mask broadcast to, with torch's errors (a mask of
    another dtype, shapes that do not broadcast)."""
    if not isinstance(mask, Tensor) or mask._data.dtype != np.bool_:
        got = mask.dtype if isinstance(mask, Tensor) else type(mask).__name__
        raise RuntimeError(f"{name}: expected a bool tensor for mask; got {got}")
    try:
        shape = np.broadcast_shapes(mask._data.shape, input._data.shape)
    except ValueError:
        raise RuntimeError(f"{name}: the mask of shape {list(mask.shape)} and the input of "
                           f"shape {list(input.shape)} do not broadcast") from None
    return mask._data, shape


def masked_select(input, mask):
    m, shape = _bool_mask("masked_select", input, mask)
    x = input.expand(shape) if tuple(input.shape) != shape else input
    return guard_inputs(AdvancedIndex.apply(x, (np.broadcast_to(m, shape),)), mask)


register("masked_select")(refuses_meta(masked_select, "masked_select"))


def masked_scatter(input, mask, source):
    m, shape = _bool_mask("masked_scatter", input, mask)
    if source.dtype != input.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have the same dtype; "
                           f"got {input.dtype} and {source.dtype}")
    # out of place the result has the broadcast shape (masked_scatter_ refuses a larger one
    # when it writes back)
    x = input.expand(shape).contiguous() if tuple(input.shape) != shape else input
    m = np.broadcast_to(m, shape)
    n = int(m.sum())
    if source.numel() < n:
        raise RuntimeError(f"masked_scatter: Number of elements of source < number of ones in "
                           f"mask; got {source.numel()} and {n}")
    return guard_inputs(IndexPut.apply(x, source.reshape(-1)[:n], (m,), False), mask)


register("masked_scatter", inplace=True)(masked_scatter)


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


register("nonzero")(refuses_meta(nonzero, "nonzero"))
register("argwhere")(refuses_meta(lambda input: nonzero(input), "argwhere"))
