"""Sorting and order statistics: sort/argsort/topk/kthvalue, median/mode/quantile, unique,
cummax/cummin, searchsorted/bucketize, histc/bincount.

Selections are composites: the indices come from NumPy (not differentiable, as in torch) and
the values are ``gather(input, dim, indices)``, whose backward scatter-adds the gradient into
the selected positions, so first and second derivatives come for free.
"""
from __future__ import annotations

import functools
import operator

import numpy as np

from .. import _dtype as D
from .._meta import marks_meta, refuses_meta
from .._tensor import Tensor, _make, _wrap_dim
from ..autograd.function import Op
from .indexing import where
from .reduce import values_indices
from .registry import FUNCTIONS, export, keepdim_needs_dim, register, write_out


def _dim(input, dim, name):
    # a 0-d input takes dim 0 or -1 (torch checks the range against one dim)
    try:
        dim = operator.index(dim)
    except TypeError:
        raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}") from None
    return _wrap_dim(dim, input.ndim, name)


def _floating(a):
    return a.dtype.kind == "f" or a.dtype == D.bfloat16.np  # bfloat16's NumPy kind is 'V'


def _sortable(a):
    """a as NumPy sorts it correctly: ml_dtypes' bfloat16 does not order NaN last, so sort
    its exact float32 widening instead."""
    return a.astype(np.float32) if a.dtype == D.bfloat16.np else a


def _register_vi(name, fn, method=True):
    """Register a (values, indices) op; ``out=(values, indices)`` is handled here because the
    generic out= path rebuilds results with ``type(result)(out)``, which a namedtuple rejects."""
    register(name, method=method)(fn)

    def with_out(*args, out=None, **kwargs):
        res = fn(*args, **kwargs)
        if out is None:
            return res
        if not isinstance(res, tuple):  # torch's overload without dim has no out=
            raise TypeError(f"{name}(): out= needs the form with dim; got {name}(input, "
                            f"out=...), expected {name}(input, dim, keepdim=False, out=...).")
        write_out(out[0], res.values, name)
        write_out(out[1], res.indices, name)
        return values_indices[name](*out)

    with_out.__name__, with_out.__doc__ = name, fn.__doc__
    FUNCTIONS[name] = with_out
    return fn


class Order(Op):
    """The int64 indices ``pick(x)`` (an order, a median's position): computed in an op so that
    a compile capture replays them from the input (NOTE [Arrays computed outside the registry]
    in _dynamo/capture.py); ``pick`` is a function of the array and constants only."""

    @staticmethod
    def forward(ctx, x, pick):
        return np.ascontiguousarray(pick(x), dtype=np.int64)

    @staticmethod
    def backward(ctx, grad):  # pragma: no cover - an integer output carries no gradient
        return None, None


def _take(input, index, dim, keepdim, name):
    """(values, indices) namedtuple: input gathered at ``index`` (kept-dim shape) along dim;
    index: an array, or the int64 tensor ``Order`` made."""
    idx = index if isinstance(index, Tensor) else _make(np.ascontiguousarray(index, np.int64))
    values = input.gather(dim, idx) if input.ndim else input.clone()
    if not keepdim and input.ndim:
        values, idx = values.squeeze(dim), idx.squeeze(dim)
    return values_indices[name](values, idx)


# ----------------------------------------------------------------------------- sort
def _argsort(a, axis, descending):
    """Stable argsort; NaN sorts as the largest value (last ascending, first descending)."""
    a = _sortable(a)
    if not descending:
        return np.argsort(a, axis=axis, kind="stable")
    # sorting the reversed array and reversing the result keeps equal elements in their
    # original order, as a stable descending sort must
    n = a.shape[axis]
    rev = np.argsort(np.flip(a, axis), axis=axis, kind="stable")
    return n - 1 - np.flip(rev, axis)


def _first_of_order(a, axis, k, descending, only_last=False):
    """The first k indices of a's stable order along axis (only the k-th with only_last)."""
    order = _argsort(a, axis, descending)
    return np.take(order, [k - 1] if only_last else np.arange(k), axis=axis)


def sort(input, dim=-1, descending=False, stable=False):
    """Sort along ``dim``; returns (values, indices). The sort is always stable."""
    d = _dim(input, dim, "sort")
    if input.ndim == 0:
        return values_indices["sort"](input.clone(), _make(np.zeros((), np.int64)))
    return _take(input, Order.apply(input, functools.partial(_argsort, axis=d,
                                                             descending=descending)),
                 d, True, "sort")


def argsort(input, dim=-1, descending=False, stable=False):
    """Indices that sort ``input`` along ``dim`` (stable)."""
    return sort(input, dim, descending, stable).indices


def msort(input):
    """Values sorted along dim 0."""
    return sort(input, 0).values


_register_vi("sort", marks_meta(sort))
register("argsort")(marks_meta(argsort))
register("msort")(msort)


def topk(input, k, dim=-1, largest=True, sorted=True):
    """The ``k`` largest (or smallest) elements along ``dim``, returned in sorted order."""
    if input._data.dtype == np.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU (convert the input with "
                           ".int() first)")
    d = _dim(input, dim, "topk")
    n = input.shape[d] if input.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError(f"topk: selected index k out of range; got k={k} for dimension {d} "
                           f"of size {n} (input shape {list(input.shape)})")
    if input.ndim == 0:
        return values_indices["topk"](input.clone(), _make(np.zeros((), np.int64)))
    pick = functools.partial(_first_of_order, axis=d, k=k, descending=largest)
    return _take(input, Order.apply(input, pick), d, True, "topk")


_register_vi("topk", topk)


def kthvalue(input, k, dim=-1, keepdim=False):
    """The k-th smallest element (1-based) along ``dim`` and its index."""
    d = _dim(input, dim, "kthvalue")
    n = input.shape[d] if input.ndim else 1
    if input.ndim:  # torch takes a 0-d bool (it returns the input), not a bool dimension
        _no_bool(input, "kthvalue")
    if n == 0:  # before k: torch's reduction-dim check comes first (IndexError)
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size; got "
                         f"input of shape {list(input.shape)}")
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}; got "
                           f"k={k}, expected 1 <= k <= {n}")
    if input.ndim == 0:
        return values_indices["kthvalue"](input.clone(), _make(np.zeros((), np.int64)))
    pick = functools.partial(_first_of_order, axis=d, k=k, descending=False, only_last=True)
    return _take(input, Order.apply(input, pick), d, keepdim, "kthvalue")


_register_vi("kthvalue", kthvalue)


# ----------------------------------------------------------------------------- median / mode
def _median_index(a, axis, ignore_nan):
    """Index (kept-dim shape) of the lower median along axis.

    median: a slice holding NaN gives the index of its first NaN; nanmedian ignores NaNs
    (an all-NaN slice gives its first element).
    """
    a = _sortable(a)
    order = np.argsort(a, axis=axis, kind="stable")  # NaNs last, in their original order
    n = a.shape[axis]
    valid = (~np.isnan(a)).sum(axis=axis, keepdims=True) if _floating(a) else \
        np.full(_kept(a.shape, axis), n)
    if ignore_nan:
        pos = np.maximum(valid - 1, 0) // 2
    else:
        pos = np.where(valid < n, valid, (n - 1) // 2)  # the first NaN, else the lower median
    return np.take_along_axis(order, pos.astype(np.int64), axis=axis)


def _kept(shape, axis):
    return tuple(1 if i == axis else s for i, s in enumerate(shape))


class _SelectAll(Op):
    """The value ``y`` picked from x by a full reduction; the gradient is split evenly among
    all elements equal to it (NaN counts as equal to NaN), as torch does for median()."""

    @staticmethod
    def forward(ctx, x, y=None):
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        mask = (x == y) | (x.isnan() & y.isnan())
        mask = mask.to(grad.dtype)
        return grad * mask / mask.sum()


def _median_all(input, ignore_nan, name):
    a = input._data.reshape(-1)
    if a.size == 0:
        if input.is_floating_point():
            return _make(np.full((), np.nan, a.dtype))
        raise IndexError(f"{name}(): cannot compute the median of an empty integer tensor")
    i = int(_median_index(a, 0, ignore_nan)[0])
    # made as a tensor: a compile capture sees a value computed outside ops (NOTE [Arrays
    # computed outside the registry] in _dynamo/capture.py)
    return _SelectAll.apply(input, y=_make(np.array(a[i]))._data)


def _no_bool(input, name):
    """torch's sorting-based kernels have no bool version: NotImplementedError, as there."""
    if input._data.dtype == np.bool_:
        raise NotImplementedError(f"{name}: not implemented for bool tensors (torch: no 'Bool' "
                                  "kernel); convert the input with .int() first")


def _median(name, ignore_nan):
    def fn(input, dim=None, keepdim=False):
        if dim is None:
            _no_bool(input, name)
            keepdim_needs_dim(name, dim, keepdim)
            return _median_all(input, ignore_nan, name)
        d = _dim(input, dim, name)  # before the dtype, as torch: a bad dim is the error
        _no_bool(input, name)
        if input.ndim and input.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size; got "
                             f"input of shape {list(input.shape)}")
        if input.ndim == 0:
            return values_indices[name](input.clone(), _make(np.zeros((), np.int64)))
        pick = functools.partial(_median_index, axis=d, ignore_nan=ignore_nan)
        return _take(input, Order.apply(input, pick), d, keepdim, name)

    fn.__name__ = name
    fn.__doc__ = (f"{name}(input) -> the lower median{' ignoring NaN' if ignore_nan else ''}; "
                  f"{name}(input, dim, keepdim=False) -> (values, indices).")
    return fn


median = _register_vi("median", _median("median", False))
nanmedian = _register_vi("nanmedian", _median("nanmedian", True))


def _mode_index(a):
    """Per row of a 2-D array: index of the last occurrence of the most frequent value
    (ties between values go to the smallest value)."""
    out = np.empty(a.shape[0], np.int64)
    for r, row in enumerate(a):
        values, counts = np.unique(row, return_counts=True)  # sorted: argmax picks the smallest
        best = values[np.argmax(counts)]
        # np.unique counts the NaNs as one value; row == NaN would find none of them
        hit = np.isnan(row) if best != best else row == best
        out[r] = np.flatnonzero(hit)[-1]
    return out


def mode(input, dim=-1, keepdim=False):
    """The most frequent value along ``dim`` and the index of its last occurrence."""
    d = _dim(input, dim, "mode")
    if input.ndim == 0:
        return values_indices["mode"](input.clone(), _make(np.zeros((), np.int64)))
    if input.shape[d] == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size; got input "
                         f"of shape {list(input.shape)}")
    moved = np.moveaxis(input._data, d, -1)
    idx = _mode_index(moved.reshape(-1, moved.shape[-1])).reshape(moved.shape[:-1] + (1,))
    return _take(input, np.moveaxis(idx, -1, d), d, keepdim, "mode")


_register_vi("mode", marks_meta(mode))


# ----------------------------------------------------------------------------- quantile
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _check_quantile(name, input, q, interpolation):
    if input._data.dtype not in (np.float32, np.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype; got "
                           f"{input.dtype}")
    if input.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor; got shape "
                               f"{list(q.shape)}")
        if q.dtype != input.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor; got "
                               f"{q.dtype} and {input.dtype}")
        qa = q._data
    else:
        qa = np.asarray(q, dtype=input._data.dtype)
    if qa.size and (np.any(qa < 0) or np.any(qa > 1) or np.any(np.isnan(qa))):
        bad = qa.reshape(-1)[~((qa >= 0) & (qa <= 1)).reshape(-1)][0]
        raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {bad}")
    return qa


def _lerp(lo, hi, w):
    # the two-sided form is exact at both ends (w == 0 gives lo, w == 1 gives hi)
    small = _make(w < 0.5)
    return where(small, lo + (hi - lo) * _make(w), hi - (hi - lo) * _make(1 - w))


def _quantile(name, ignore_nan):
    def fn(input, q, dim=None, keepdim=False, *, interpolation="linear"):
        qa = _check_quantile(name, input, q, interpolation)
        scalar_q = qa.ndim == 0
        qa = qa.reshape(-1)
        if dim is None:
            x = input.reshape(-1)
        else:
            d = _dim(input, dim, name)
            x = input.movedim(d, -1) if input.ndim else input.reshape(1)
        srt = sort(x, -1).values  # NaNs sort last
        a = srt._data
        n = a.shape[-1]
        valid = (~np.isnan(a)).sum(-1, keepdims=True)
        # ranks (..., Q) in the input's dtype, as torch computes them; a slice whose result
        # must be NaN (any NaN for quantile, all NaN for nanquantile) points at its last
        # element, which is NaN since NaNs sort last
        if ignore_nan:
            ranks = qa * np.maximum(valid - 1, 0).astype(a.dtype)
            ranks = np.where(valid == 0, n - 1, ranks).astype(a.dtype)
        else:
            ranks = np.where(valid < n, n - 1, qa * a.dtype.type(n - 1)).astype(a.dtype)
        lo = np.floor(ranks).astype(np.int64)
        hi = np.ceil(ranks).astype(np.int64)
        if interpolation == "nearest":
            lo = hi = np.round(ranks).astype(np.int64)  # round half to even, like torch
        lo_v = srt.gather(-1, _make(lo))
        hi_v = srt.gather(-1, _make(hi))
        if interpolation in ("lower", "nearest"):
            out = lo_v
        elif interpolation == "higher":
            out = hi_v
        else:
            w = np.full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - lo
            out = _lerp(lo_v, hi_v, w.astype(a.dtype))
        out = out.movedim(-1, 0)  # (Q, ...)
        if keepdim:
            if dim is None:
                out = out.reshape((out.shape[0],) + (1,) * input.ndim)
            elif input.ndim:
                out = out.unsqueeze(d + 1)
        return out[0] if scalar_q else out

    fn.__name__ = name
    fn.__doc__ = (f"The q-th quantiles of input along dim ({'ignoring NaN, ' if ignore_nan else ''}"
                  "linear interpolation between order statistics by default); a 1-D q adds a "
                  "leading dim of len(q).")
    return fn


register("quantile")(_quantile("quantile", False))
register("nanquantile")(_quantile("nanquantile", True))


# ----------------------------------------------------------------------------- unique
def _unique_result(values, inverse, counts, return_inverse, return_counts):
    out = [_make(values)]
    if return_inverse:
        out.append(_make(inverse.astype(np.int64)))
    if return_counts:
        out.append(_make(counts.astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The unique elements (or slices along ``dim``), always sorted, with optional inverse
    indices (input's shape, or len(input.shape[dim])) and counts. Not differentiable."""
    a = input._data
    if dim is None:  # each NaN is a value of its own, as torch's (NaN != NaN)
        values, inverse, counts = np.unique(a.reshape(-1), return_inverse=True,
                                            return_counts=True, equal_nan=False)
        return _unique_result(values, inverse.reshape(a.shape), counts, return_inverse,
                              return_counts)
    d = _wrap_dim(dim, input.ndim, "unique")
    values, inverse, counts = np.unique(a, return_inverse=True, return_counts=True, axis=d,
                                        equal_nan=False)
    return _unique_result(values, inverse.reshape(-1), counts, return_inverse, return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapse runs of equal consecutive elements (or slices along ``dim``)."""
    a = input._data
    if dim is None:
        flat = a.reshape(-1)
        starts = np.ones(flat.size, bool)
        starts[1:] = flat[1:] != flat[:-1]
        values, shape = flat[starts], a.shape
    else:
        d = _wrap_dim(dim, input.ndim, "unique_consecutive")
        rest = int(np.prod(a.shape, dtype=np.int64)) // a.shape[d] if a.shape[d] else 0
        moved = np.moveaxis(a, d, 0).reshape(a.shape[d], rest)  # (no -1: a.shape[d] may be 0)
        starts = np.ones(a.shape[d], bool)
        starts[1:] = (moved[1:] != moved[:-1]).any(axis=1)
        values = np.take(a, np.flatnonzero(starts), axis=d)
        shape = (a.shape[d],)
    inverse = (np.cumsum(starts) - 1).reshape(shape)
    counts = np.diff(np.append(np.flatnonzero(starts), starts.size))
    return _unique_result(values, inverse, counts, return_inverse, return_counts)


register("unique")(refuses_meta(unique, "unique"))
register("unique_consecutive")(refuses_meta(unique_consecutive, "unique_consecutive"))


# ----------------------------------------------------------------------------- cummax / cummin
def _cum_extreme(name, ufunc):
    def fn(input, dim):
        d = _dim(input, dim, name)
        if input.ndim == 0:
            return values_indices[name](input.clone(), _make(np.zeros((), np.int64)))
        a = input._data
        with np.errstate(invalid="ignore"):
            run = ufunc.accumulate(a, axis=d)
        pos = np.arange(a.shape[d]).reshape(tuple(-1 if i == d else 1 for i in range(a.ndim)))
        # the index moves to i whenever x[i] ties or beats the running extreme (latest index
        # wins on ties, as in torch); the extreme stays NaN after the first NaN, and every
        # later NaN moves the index to itself (torch: [1, nan, 5, nan] -> indices 0, 1, 1, 3)
        hit = a == run
        if _floating(a):
            hit = hit | np.isnan(a)
        idx = np.maximum.accumulate(np.where(hit, pos, 0), axis=d)
        return _take(input, idx, d, True, name)

    fn.__name__ = name
    fn.__doc__ = f"Running {name[3:]} along dim and the index where it was attained."
    return fn


_register_vi("cummax", _cum_extreme("cummax", np.maximum))
_register_vi("cummin", _cum_extreme("cummin", np.minimum))


# ----------------------------------------------------------------------------- bucketing
def _values_array(values, like):
    if isinstance(values, Tensor):
        return values._data, False
    return np.asarray(values), True


def _search_with_nan(seq, vals, right):
    """searchsorted of a sequence holding NaN, by torch's bisection: it moves right past every
    boundary b that fails b >= v (b > v for right), and a comparison with NaN always fails, so
    a NaN boundary counts as smaller than every value (NumPy's order puts NaN last). Vectorised
    over all values: one step of every bisection at a time."""
    rows = seq.reshape(-1, seq.shape[-1])
    v = np.asarray(vals, dtype=np.result_type(seq, vals))
    row = np.zeros(v.shape, np.int64) if seq.ndim == 1 else \
        np.arange(rows.shape[0]).reshape(v.shape[:-1] + (1,)) + np.zeros(v.shape, np.int64)
    start = np.zeros(v.shape, np.int64)
    end = np.full(v.shape, rows.shape[1], np.int64)
    with np.errstate(invalid="ignore"):
        while (active := start < end).any():
            mid = start + (end - start) // 2
            b = rows[row, np.minimum(mid, rows.shape[1] - 1)]
            before = ~(b > v) if right else ~(b >= v)
            start = np.where(active & before, mid + 1, start)
            end = np.where(active & ~before, mid, end)
    return start


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None, out=None):
    """Indices where ``input`` values would be inserted into the last dim of
    ``sorted_sequence`` to keep it sorted (side 'left' by default, 'right' if right=True)."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"searchsorted(): side can only be 'left' or 'right' but got "
                               f"{side}")
        if side == "left" and right:
            raise RuntimeError("searchsorted(): side and right can't be set to opposites, got "
                               "side of left while right was True")
        right = side == "right"
    seq = sorted_sequence._data
    vals, scalar = _values_array(input, seq)
    if sorter is not None:
        seq = np.take_along_axis(seq, sorter._data.astype(np.int64), axis=-1)
    how = "right" if right else "left"
    if seq.ndim == 0:
        raise RuntimeError("searchsorted(): boundaries tensor should have positive dimension, "
                           "but got 0 dimension")
    if seq.ndim > 1 and (scalar or vals.ndim != seq.ndim or vals.shape[:-1] != seq.shape[:-1]):
        raise RuntimeError(
            "searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(seq.shape)} and input value tensor {list(vals.shape)}")
    if seq.size and _floating(seq) and np.isnan(seq[..., -1]).any():  # NaN sorts last
        res = _search_with_nan(seq, vals, right)
    elif seq.ndim == 1:
        res = np.searchsorted(seq, vals, side=how)
    else:
        rows_s = seq.reshape(-1, seq.shape[-1])
        rows_v = vals.reshape(-1, vals.shape[-1])
        res = np.stack([np.searchsorted(s, v, side=how) for s, v in zip(rows_s, rows_v)]
                       ).reshape(vals.shape) if rows_v.shape[0] else np.zeros(vals.shape)
    res = _make(np.asarray(res, np.int32 if out_int32 else np.int64))
    return res if out is None else write_out(out, res, "searchsorted")


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    """Index of the bucket of each element: boundaries[i-1] < x <= boundaries[i]
    (right=False) or boundaries[i-1] <= x < boundaries[i] (right=True)."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"bucketize(): boundaries tensor must be 1 dimension, but got "
                           f"dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right, out=out)


export(searchsorted)
export(bucketize)


def histc(input, bins=100, min=0, max=0):
    """Histogram with ``bins`` equal-width bins on [min, max] (the data range when min == max);
    values outside are ignored, the last bin includes max. Returns input's dtype."""
    if not input.is_floating_point():
        raise NotImplementedError(f"histc: not implemented for {input.dtype} inputs; convert to "
                                  "a floating dtype first")
    if bins <= 0:
        raise RuntimeError(f"histc(): bins must be > 0, but got {bins}")
    a = input._data.reshape(-1)
    lo, hi = float(min), float(max)
    if lo == hi and a.size:
        lo, hi = float(a.min()), float(a.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError(f"histc(): max must be larger than min; got min={min}, max={max}")
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"histc(): range of [{lo}, {hi}] is not finite")
    edges = np.linspace(lo, hi, bins + 1).astype(a.dtype)
    inside = a[(a >= edges[0]) & (a <= edges[-1])]
    pos = np.searchsorted(edges, inside, side="right") - 1
    pos = np.minimum(pos, bins - 1)  # x == max belongs to the last bin
    return _make(np.bincount(pos, minlength=bins).astype(a.dtype))


register("histc")(marks_meta(histc))


def bincount(input, weights=None, minlength=0):
    """Count of each non-negative integer in a 1-D tensor (or sum of ``weights`` per value)."""
    a = input._data
    if a.dtype.kind not in "iub":
        raise NotImplementedError(f"bincount: not implemented for {input.dtype} inputs; expected "
                                  "an integer tensor")
    if a.ndim != 1 or (a.size and a.min() < 0):
        raise RuntimeError(f"bincount only supports 1-d non-negative integral inputs; got shape "
                           f"{list(a.shape)}")
    if minlength < 0:
        raise RuntimeError(f"bincount: minlength should be >= 0; got {minlength}")
    if weights is None:
        return _make(np.bincount(a.astype(np.int64), minlength=minlength).astype(np.int64))
    w = weights._data
    if w.ndim != 1 or w.shape[0] != a.shape[0]:
        raise RuntimeError(f"bincount: weights should be 1-d and have the same length as input; "
                           f"got {list(w.shape)} for input {list(a.shape)}")
    dt = w.dtype if w.dtype in (np.float32, np.float64) else np.dtype(np.float64)
    res = np.bincount(a.astype(np.int64), weights=w.astype(np.float64), minlength=minlength)
    return _make(res.astype(dt))


register("bincount")(refuses_meta(bincount, "bincount"))
