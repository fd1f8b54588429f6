"""Samples and NumPy references for the order-statistics ops (ember/ops/sorting.py).

Sample values are distinct (a shuffled ramp of exactly representable numbers), so which element
a sort, top-k, median or mode selects does not depend on tie-breaking, and gradients through the
selected positions are well defined for gradcheck. Ties are covered where the tie-breaking rule
is the point (mode, unique).
"""
from __future__ import annotations

import numpy as np

from .. import _dtype as D
from .._tensor import _make
from ._generators import SampleInput as S


def _distinct(rng, shape, dtype):
    """Distinct values in shuffled order: a ramp of step 0.5 (exact in every float dtype)."""
    n = int(np.prod(shape))
    if dtype is D.bool_:
        values = np.arange(n) % 2  # only two bool values exist; the samples use stable sorts
        return values.astype(np.bool_)[rng.permutation(n)].reshape(shape)
    ramp = np.arange(n, dtype=np.float64)
    ramp = ramp * 0.5 - n / 4 if dtype.is_floating_point else ramp + (0 if not dtype.is_signed
                                                                      else -(n // 2))
    return ramp[rng.permutation(n)].reshape(shape).astype(dtype.np)


def _x(rng, shape, dtype):
    return _make(np.array(_distinct(rng, shape, dtype), order="C"))


def _xt(rng, shape, dtype):
    """Non-contiguous: the transpose of a contiguous array of the reversed shape."""
    return _make(_distinct(rng, tuple(reversed(shape)), dtype).T)


def _stable(dtype):
    return {"stable": True} if dtype is D.bool_ else {}


def sort_samples(rng, dtype):
    st = _stable(dtype)
    return [S(_x(rng, (2, 3), dtype), (), st, "2-d"),
            S(_x(rng, (2, 3), dtype), (0,), dict(st, descending=True), "dim 0 descending"),
            S(_x(rng, (), dtype), (), st, "0-d"), S(_x(rng, (0, 3), dtype), (), st, "empty"),
            S(_xt(rng, (2, 3), dtype), (-1,), st, "transposed")]


def _order(x, axis, descending):
    """Stable argsort along axis; descending keeps equal elements in their original order."""
    if x.ndim == 0:
        return np.zeros((), np.int64)
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    rank = np.unique(x, return_inverse=True)[1].reshape(x.shape)  # order-preserving ints
    return np.argsort(-rank, axis=axis, kind="stable")


def sort_ref(x, dim=-1, descending=False, stable=False):
    idx = _order(x, dim, descending)
    return (x.copy(), idx) if x.ndim == 0 else (np.take_along_axis(x, idx, dim), idx)


def argsort_ref(x, dim=-1, descending=False, stable=False):
    return _order(x, dim, descending)


def msort_samples(rng, dtype):
    return [S(_x(rng, (3, 2), dtype), (), {}, "2-d"), S(_x(rng, (), dtype), (), {}, "0-d"),
            S(_x(rng, (0, 2), dtype), (), {}, "empty"),
            S(_xt(rng, (3, 2), dtype), (), {}, "transposed")]


def msort_ref(x):
    return np.sort(x, axis=0, kind="stable") if x.ndim else x.copy()


def topk_samples(rng, dtype):
    return [S(_x(rng, (2, 3), dtype), (2,), {}, "k=2"),
            S(_x(rng, (3, 2), dtype), (1,), {"dim": 0, "largest": False}, "smallest dim 0"),
            S(_x(rng, (), dtype), (1,), {}, "0-d"), S(_x(rng, (0, 3), dtype), (2,), {}, "empty"),
            S(_xt(rng, (2, 3), dtype), (3,), {}, "transposed k=all")]


def topk_ref(x, k, dim=-1, largest=True, sorted=True):
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    idx = np.take(_order(x, dim, largest), np.arange(k), axis=dim)
    return np.take_along_axis(x, idx, dim), idx


def kthvalue_samples(rng, dtype):
    return [S(_x(rng, (2, 3), dtype), (2,), {}, "k=2"),
            S(_x(rng, (3, 2), dtype), (1,), {"dim": 0, "keepdim": True}, "dim 0 keepdim"),
            S(_x(rng, (), dtype), (1,), {}, "0-d"),
            S(_xt(rng, (2, 3), dtype), (3,), {}, "transposed")]


def kthvalue_ref(x, k, dim=-1, keepdim=False):
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    idx = np.take(_order(x, dim, False), [k - 1], axis=dim)
    values = np.take_along_axis(x, idx, dim)
    return (values, idx) if keepdim else (values.squeeze(dim), idx.squeeze(dim))


def median_samples(rng, dtype):
    return [S(_x(rng, (2, 3), dtype), (), {}, "all"), S(_x(rng, (2, 4), dtype), (), {}, "even"),
            S(_x(rng, (2, 4), dtype), (1,), {}, "dim 1 even"),
            S(_x(rng, (3, 2), dtype), (0,), {"keepdim": True}, "dim 0 keepdim"),
            S(_x(rng, (), dtype), (), {}, "0-d"), S(_x(rng, (), dtype), (0,), {}, "0-d dim 0"),
            S(_xt(rng, (2, 3), dtype), (-1,), {}, "transposed")]


def nanmedian_samples(rng, dtype):
    out = median_samples(rng, dtype)
    if dtype.is_floating_point:
        for s in out:
            if s.input.numel() >= 6:  # one NaN, never a whole row of them
                s.input._data.reshape(-1)[1] = np.nan
    return out


def _lower_median(x, axis, ignore_nan):
    """(values, indices) of the lower median along axis (torch's median is not the mean of the
    two middle values); NaN sorts last, and propagates unless ignored."""
    n = x.shape[axis]
    nan = np.isnan(x) if x.dtype.kind == "f" else np.zeros(x.shape, bool)
    count = (n - nan.sum(axis=axis, keepdims=True)) if ignore_nan else np.full(
        nan.sum(axis=axis, keepdims=True).shape, n)
    order = np.argsort(x, axis=axis, kind="stable")
    pos = np.maximum((count - 1) // 2, 0)
    if not ignore_nan:  # a NaN anywhere makes the median NaN, at the first NaN's index
        first_nan = np.argmax(np.take_along_axis(nan, order, axis), axis=axis)
        pos = np.where(nan.any(axis=axis, keepdims=True), np.expand_dims(first_nan, axis), pos)
    idx = np.take_along_axis(order, pos, axis)
    return np.take_along_axis(x, idx, axis), idx


def median_ref(ignore_nan=False):
    def ref(x, dim=None, keepdim=False):
        if dim is None:
            v, _ = _lower_median(x.reshape(-1), 0, ignore_nan)
            return v.reshape(())
        if x.ndim == 0:
            return x.copy(), np.zeros((), np.int64)
        v, i = _lower_median(x, dim, ignore_nan)
        return (v, i) if keepdim else (v.squeeze(dim), i.squeeze(dim))
    return ref


def mode_samples(rng, dtype):
    rows = np.array([[1, 0, 1, 2], [2, 2, 0, 0], [1, 0, 2, 3]])  # a winner, a tie, all distinct
    if dtype is D.bool_:
        rows = rows % 2
    x = _make(rows.astype(dtype.np))
    return [S(x, (), {}, "rows"), S(_make(rows.T.astype(dtype.np)), (0,), {"keepdim": True},
                                    "dim 0 keepdim"),
            S(_make(np.asarray(1, dtype.np)), (), {}, "0-d"),
            S(_make(rows.T.astype(dtype.np).copy().T), (-1,), {}, "transposed")]


def mode_grad_samples(rng, dtype):
    """Rows of distinct values: a repeated value is a point where mode is not differentiable
    (nudging one copy changes which value is most frequent)."""
    return [S(_x(rng, (2, 3), dtype), (), {}, "distinct rows"),
            S(_x(rng, (3, 2), dtype), (0,), {"keepdim": True}, "dim 0 keepdim"),
            S(_x(rng, (), dtype), (), {}, "0-d")]


def mode_ref(x, dim=-1, keepdim=False):
    """The most frequent value (the smallest among ties) and the index of its last occurrence."""
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    moved = np.moveaxis(x, dim, -1)
    flat = moved.reshape(-1, moved.shape[-1])
    values = np.empty(flat.shape[0], x.dtype)
    idx = np.empty(flat.shape[0], np.int64)
    for r, row in enumerate(flat):
        best = max(sorted(set(row.tolist())), key=lambda v: (row == v).sum())
        values[r], idx[r] = best, np.flatnonzero(row == best)[-1]
    shape = moved.shape[:-1]
    values, idx = values.reshape(shape), idx.reshape(shape)
    if keepdim:
        values, idx = np.expand_dims(values, dim), np.expand_dims(idx, dim)
    return values, idx


def quantile_samples(rng, dtype):
    x = _make(rng.uniform(-2, 2, (2, 5)).astype(dtype.np))
    q = _make(np.array([0.25, 0.5, 0.9], dtype.np))
    return [S(x, (0.3,), {}, "all"), S(x, (q,), {"dim": 1}, "tensor q dim 1"),
            S(x, (0.5,), {"dim": 0, "keepdim": True}, "dim 0 keepdim"),
            *[S(x, (0.4,), {"dim": 1, "interpolation": m}, m)
              for m in ("lower", "higher", "midpoint", "nearest")],
            S(_make(np.asarray(1.5, dtype.np)), (0.5,), {}, "0-d"),
            S(_make(rng.uniform(-2, 2, (5, 2)).astype(dtype.np).T), (0.7,), {"dim": -1},
              "transposed")]


def nanquantile_samples(rng, dtype):
    out = quantile_samples(rng, dtype)
    for s in out:
        if s.input.numel() >= 6:
            s.input._data[0, 2] = np.nan
    return out


def quantile_grad_samples(samples):
    """The samples without a tensor ``q``: the gradient is taken for the input only. (torch
    returns a partial gradient for a tensor q, nonzero only where the interpolation weight is
    at least 0.5; ember treats q as a constant.)"""
    def grad_samples(rng, dtype):
        return [s for s in samples(rng, dtype) if not s.name.startswith("tensor q")]
    return grad_samples


def quantile_ref(npf):
    def ref(x, q, dim=None, keepdim=False, interpolation="linear"):
        if dim is None:
            x, dim = x.reshape(-1), 0
        elif x.ndim == 0:
            x = x.reshape(1)
            return npf(x, q, axis=0, method=interpolation)
        return npf(x, q, axis=dim, keepdims=keepdim, method=interpolation)
    return ref


def unique_samples(rng, dtype):
    rows = np.array([[2, 0, 2], [1, 1, 0]])
    if dtype is D.bool_:
        rows = rows % 2
    x = _make(rows.astype(dtype.np))
    return [S(x, (), {}, "sorted"),
            S(x, (), {"return_inverse": True, "return_counts": True}, "inverse and counts"),
            S(x, (), {"dim": 1}, "dim 1"),
            S(_make(np.asarray(1, dtype.np)), (), {}, "0-d"),
            S(_make(np.zeros(0, dtype.np)), (), {}, "empty"),
            S(_make(rows.T.astype(dtype.np).copy().T), (), {"return_counts": True},
              "transposed")]


def unique_ref(x, sorted=True, return_inverse=False, return_counts=False, dim=None):
    res = np.unique(x, return_inverse=True, return_counts=True, axis=dim)
    values, inverse, counts = res
    out = [values]
    if return_inverse:
        out.append(inverse.reshape(x.shape if dim is None else -1))
    if return_counts:
        out.append(counts)
    return tuple(out) if len(out) > 1 else values


def unique_consecutive_samples(rng, dtype):
    run = np.array([1, 1, 0, 0, 0, 1, 2, 2]) % (2 if dtype is D.bool_ else 3)
    x = _make(run.astype(dtype.np))
    return [S(x, (), {}, "runs"),
            S(x, (), {"return_inverse": True, "return_counts": True}, "inverse and counts"),
            S(_make(np.asarray(1, dtype.np)), (), {}, "0-d"),
            S(_make(np.zeros(0, dtype.np)), (), {}, "empty"),
            S(_make(np.repeat(run, 2).astype(dtype.np)[::2]), (), {}, "stepped slice")]


def unique_consecutive_ref(x, return_inverse=False, return_counts=False, dim=None):
    flat = x.reshape(-1)
    starts = np.flatnonzero(np.r_[True, flat[1:] != flat[:-1]]) if flat.size else np.zeros(
        0, np.int64)
    out = [flat[starts]]
    if return_inverse:
        out.append((np.cumsum(np.r_[True, flat[1:] != flat[:-1]]) - 1).reshape(x.shape)
                   if flat.size else np.zeros(x.shape, np.int64))
    if return_counts:
        out.append(np.diff(np.r_[starts, flat.size]))
    return tuple(out) if len(out) > 1 else out[0]


def cum_extreme_samples(rng, dtype):
    return [S(_x(rng, (2, 3), dtype), (1,), {}, "dim 1"),
            S(_x(rng, (3, 2), dtype), (0,), {}, "dim 0"),
            S(_x(rng, (), dtype), (0,), {}, "0-d"), S(_x(rng, (0, 3), dtype), (1,), {}, "empty"),
            S(_xt(rng, (2, 3), dtype), (-1,), {}, "transposed")]


def cum_extreme_ref(ufunc):
    def ref(x, dim):
        if x.ndim == 0:
            return x.copy(), np.zeros((), np.int64)
        run = ufunc.accumulate(x, axis=dim)
        pos = np.arange(x.shape[dim]).reshape([-1 if i == dim % x.ndim else 1
                                               for i in range(x.ndim)])
        # the latest index that attains the running extreme (ties go to the later one)
        idx = np.maximum.accumulate(np.where(x == run, pos, 0), axis=dim)
        return run, idx
    return ref


def logcumsumexp_samples(rng, dtype):
    x = _make(rng.uniform(-2, 2, (2, 3)).astype(dtype.np))
    return [S(x, (1,), {}, "dim 1"), S(x, (0,), {}, "dim 0"),
            S(_make(np.asarray(0.5, dtype.np)), (0,), {}, "0-d"),
            S(_make(np.zeros((0, 3), dtype.np)), (1,), {}, "empty"),
            S(_make(rng.uniform(-2, 2, (3, 2)).astype(dtype.np).T), (-1,), {}, "transposed")]


def logcumsumexp_ref(x, dim):
    return x.copy() if x.ndim == 0 else np.logaddexp.accumulate(x, axis=dim)


def histc_samples(rng, dtype):
    x = _make(rng.uniform(-2, 2, (2, 5)).astype(dtype.np))
    return [S(x, (), {"bins": 4}, "data range"),
            S(x, (), {"bins": 3, "min": -1, "max": 1}, "given range"),
            S(_make(np.asarray(0.5, dtype.np)), (), {"bins": 2}, "0-d"),
            S(_make(np.zeros(0, dtype.np)), (), {"bins": 2}, "empty"),
            S(_make(rng.uniform(-2, 2, (5, 2)).astype(dtype.np).T), (), {"bins": 5},
              "transposed")]


def histc_ref(x, bins=100, min=0, max=0):
    lo, hi = float(min), float(max)
    if lo == hi and x.size:
        lo, hi = float(x.min()), float(x.max())
    if lo == hi:  # torch widens an empty range by one on each side
        lo, hi = lo - 1, hi + 1
    inside = x[(x >= lo) & (x <= hi)]
    return np.histogram(inside, bins=bins, range=(lo, hi))[0].astype(x.dtype)


def bincount_samples(rng, dtype):
    x = _make(np.array([0, 3, 1, 3, 3]).astype(dtype.np))
    w = _make(np.array([0.5, 1.0, 2.0, -1.0, 0.25]))
    return [S(x, (), {}, "counts"), S(x, (w,), {}, "weights"),
            S(x, (), {"minlength": 6}, "minlength"),
            S(_make(np.zeros(0, dtype.np)), (), {}, "empty"),
            S(_make(np.array([2, 0, 1, 0, 2, 2]).astype(dtype.np)[::2]), (), {}, "stepped")]


def bincount_ref(x, weights=None, minlength=0):
    return np.bincount(x, weights, minlength)
