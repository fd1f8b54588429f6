"""NumPy references for the op database: each takes the op's own arguments (tensors as
ndarrays) and returns what the ember op should return."""
from __future__ import annotations

import math

import numpy as np

from .. import _dtype as D


def np_axis(dim):
    if dim is None or dim == ():
        return None
    return tuple(dim) if isinstance(dim, (tuple, list)) else dim


def diag_embed_ref(x, offset=0, dim1=-2, dim2=-1):
    """Last dim of x onto the offset diagonal of two new last dims (default dims only)."""
    n = x.shape[-1] + abs(offset)
    out = np.zeros(x.shape[:-1] + (n, n), x.dtype)
    i = np.arange(x.shape[-1])
    rows, cols = (i, i + offset) if offset >= 0 else (i - offset, i)
    out[..., rows, cols] = x
    return out


def reduce_ref(npf):
    def ref(x, dim=None, keepdim=False, **kw):
        if x.ndim == 0 and np_axis(dim) is not None:  # torch: a 0-d tensor has one dim 0 / -1
            return np.asarray(npf(x.reshape(1), axis=0, **kw)).reshape(())
        return npf(x, axis=np_axis(dim), keepdims=keepdim, **kw)
    return ref


def max_ref(npf, argf, binary):
    def ref(x, dim=None, keepdim=False):
        if isinstance(dim, np.ndarray):
            return binary(x, dim)
        if dim is None:
            return npf(x)
        if x.ndim == 0:
            return x, np.zeros((), np.int64)
        return npf(x, axis=dim, keepdims=keepdim), argf(x, axis=dim, keepdims=keepdim)
    return ref


def var_ref(npf):
    def ref(x, dim=None, unbiased=None, keepdim=False, correction=None):
        c = correction if correction is not None else (0 if unbiased is False else 1)
        return npf(x, axis=np_axis(dim), ddof=c, keepdims=keepdim)
    return ref


def var_mean_ref(npf):
    def ref(x, dim=None, unbiased=None, keepdim=False, correction=None):
        return (var_ref(npf)(x, dim, unbiased, keepdim, correction),
                np.mean(x, axis=np_axis(dim), keepdims=keepdim))
    return ref


def cum_ref(npf):
    def ref(x, dim):
        return npf(x.reshape(1), axis=0).reshape(()) if x.ndim == 0 else npf(x, axis=dim)
    return ref


def logsumexp_ref(x, dim, keepdim=False):
    if x.ndim == 0:
        return x.copy()
    axis = np_axis(dim)
    m = np.max(x, axis=axis, keepdims=True) if x.size else np.zeros((1,) * x.ndim, x.dtype)
    m = np.where(np.isfinite(m), m, 0)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdim else np.squeeze(out, axis=axis)


def clamp_ref(x, min=None, max=None):
    y = x if min is None else np.maximum(x, min)
    return y if max is None else np.minimum(y, max)


def _torch_split_sizes(n, size):
    return [min(size, n - i) for i in range(0, n, size)] if n else [0]


def split_ref(x, size, dim=0):
    sizes = _torch_split_sizes(x.shape[dim], size) if isinstance(size, int) else size
    return tuple(np.split(x, np.cumsum(sizes)[:-1], axis=dim))


def chunk_ref(x, chunks, dim=0):
    n = x.shape[dim]
    return split_ref(x, -(-n // chunks) if n else 1, dim) if n else (x,)


def tensor_split_ref(x, sections, dim=0):
    return tuple(np.array_split(x, sections, axis=dim))


def gather_ref(x, dim, index):
    if x.ndim == 0:
        return x.copy()
    return np.take_along_axis(x, index, axis=dim)


def scatter_ref(x, dim, index, src, reduce=None):
    out = x.copy()
    if x.ndim == 0:
        v = np.asarray(src).reshape(())
        return out + v if reduce in ("add", "sum") else v.astype(x.dtype)
    for pos in np.ndindex(*index.shape):
        tgt = list(pos)
        tgt[dim] = index[pos]
        v = src[pos] if np.ndim(src) else src
        out[tuple(tgt)] = _combine(out[tuple(tgt)], v, reduce)
    return out


def _combine(old, v, reduce):
    if reduce in ("add", "sum"):
        return old + v
    if reduce in ("multiply", "prod"):
        return old * v
    if reduce == "amax":
        return max(old, v)
    if reduce == "amin":
        return min(old, v)
    return v


def scatter_reduce_ref(x, dim, index, src, reduce, include_self=True):
    if not include_self:
        # the positions that receive values start from the reduction's identity
        hit = scatter_ref(np.zeros(x.shape, bool), dim, index, np.ones(index.shape, bool))
        fill = {"sum": 0, "mean": 0, "prod": 1}.get(reduce)
        if fill is None and x.dtype.kind == "b":
            fill = reduce == "amin"
        elif fill is None:
            big = np.iinfo(x.dtype).max if x.dtype.kind in "iu" else np.inf
            fill = -big if reduce == "amax" else big
        x = np.where(hit, np.asarray(fill).astype(x.dtype), x)
        if reduce == "mean":
            s = scatter_ref(x, dim, index, src, "sum")
            cnt = scatter_ref((~hit).astype(x.dtype), dim, index, np.ones_like(src), "sum")
            return s / cnt if x.dtype.kind == "f" else np.floor_divide(s, cnt)
    if reduce == "mean":
        s = scatter_ref(x, dim, index, src, "sum")
        cnt = scatter_ref(np.ones_like(x), dim, index, np.ones_like(src), "sum")
        return s / cnt if x.dtype.kind == "f" else np.floor_divide(s, cnt)
    return scatter_ref(x, dim, index, src, reduce)


def index_select_ref(x, dim, index):
    if x.ndim == 0:
        return np.take(x.reshape(1), index, axis=0).reshape(())
    return np.take(x, index, axis=dim)


def index_add_ref(x, dim, index, source, alpha=1):
    out = np.moveaxis(x.copy(), dim, 0)
    np.add.at(out, index, np.moveaxis(source * alpha, dim, 0))
    return np.moveaxis(out, 0, dim)


def index_copy_ref(x, dim, index, source):
    out = np.moveaxis(x.copy(), dim, 0)
    out[index] = np.moveaxis(source, dim, 0)
    return np.moveaxis(out, 0, dim)


def index_fill_ref(x, dim, index, value):
    out = np.moveaxis(x.copy(), dim, 0)
    out[index] = value
    return np.moveaxis(out, 0, dim)


def take_along_dim_ref(x, index, dim=None):
    if dim is None:
        return np.take(x.reshape(-1), index.reshape(-1))
    return np.take_along_axis(x, index, axis=dim)


def masked_fill_ref(x, mask, value):
    return np.where(mask, np.asarray(value).astype(x.dtype), x)


def masked_select_ref(x, mask):
    shape = np.broadcast_shapes(x.shape, mask.shape)
    return np.broadcast_to(x, shape)[np.broadcast_to(mask, shape)]


def masked_scatter_ref(x, mask, source):
    out = x.copy()
    m = np.broadcast_to(mask, x.shape)
    out[m] = source.reshape(-1)[:int(m.sum())]
    return out


def index_put_ref(x, indices, values, accumulate=False):
    out = x.copy()
    key = tuple(indices)
    if accumulate:
        np.add.at(out, key, values)
    else:
        out[key] = values
    return out


def as_strided_ref(x, size, stride, offset=0):
    flat = x.reshape(-1)
    return np.lib.stride_tricks.as_strided(flat[offset:], size,
                                           [s * x.itemsize for s in stride]).copy()


def matmul_ref(a, b):
    return np.matmul(a, b)


def addmm_like(prod):
    def ref(input, a, b, beta=1, alpha=1):
        p = prod(a, b)
        return alpha * p + (beta * input if beta != 0 else 0 * p)
    return ref


def gelu_ref(x, approximate="none"):
    from scipy.special import erf
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def xlogy_ref(a, b):
    import scipy.special as sp
    return sp.xlogy(a, b)


def compare_ref(ufunc):
    def ref(a, b):
        if not isinstance(b, np.ndarray):  # a Python number takes the tensor's dtype
            b = np.asarray(b).astype(a.dtype)
        return ufunc(a, b)
    return ref


def logit_ref(x, eps=None):
    if eps is not None:
        x = np.clip(x, eps, 1 - eps)
    return np.log(x / (1 - x))


def div_ref(a, b, rounding_mode=None):
    if rounding_mode == "floor":
        return np.floor_divide(a, b)
    if rounding_mode == "trunc":
        return np.trunc(np.true_divide(a, b)).astype(np.result_type(a, b))
    return np.true_divide(a, b)


def nan_to_num_ref(x, nan=0.0, posinf=None, neginf=None):
    if x.dtype == D.bfloat16.np:  # np.nan_to_num does not know ml_dtypes' bfloat16
        import ml_dtypes
        big = float(ml_dtypes.finfo(x.dtype).max)
        posinf = big if posinf is None else posinf
        neginf = -big if neginf is None else neginf
        return np.nan_to_num(x.astype(np.float64), nan=nan, posinf=posinf, neginf=neginf)
    return np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)
