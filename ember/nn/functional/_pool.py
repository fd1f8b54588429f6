"""Pooling of ``ember.nn.functional`` (max, average, adaptive, unpooling, power-average).

The heavy ops are ``Op`` classes in ``ember/ops/nn/pool.py`` that call numba kernels; 1-D
pooling runs through the 2-D ops with a height of one.
"""
from __future__ import annotations

import numpy as np

from ... import _dtype as D
from ...ops.nn import pool as _ops
from ._utils import _check_float, _check_tensor, _tuple

__all__ = [
    "max_pool1d", "max_pool2d", "max_pool1d_with_indices", "max_pool2d_with_indices", "avg_pool1d",
    "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d",
    "adaptive_max_pool2d", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
    "max_unpool1d", "max_unpool2d", "lp_pool1d", "lp_pool2d",
]


# ---------------------------------------------------------------------------------------------
# pooling


def _pool_input(input, name, nd):
    """(x as (..., H, W), restore) for 1-D / 2-D pooling over 2-3 / 3-4 dim inputs."""
    _check_tensor(name, input)
    if input.ndim not in (nd + 1, nd + 2):
        dims = "L" if nd == 1 else "H, W"
        raise RuntimeError(f"{name}: expected {nd + 1}-D (C, {dims}) or {nd + 2}-D "
                           f"(N, C, {dims}) input, got {input.ndim}-D input of shape "
                           f"{tuple(input.shape)}.")
    _check_float(name, input)
    if nd == 1:
        return input.unsqueeze(-2), (lambda y: y.squeeze(-2))
    return input, (lambda y: y)


def _pool_args(kernel_size, stride, padding, dilation, nd, name):
    k = _tuple(kernel_size, nd, name, "kernel_size")
    s = k if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) \
        else _tuple(stride, nd, name, "stride")
    p = _tuple(padding, nd, name, "padding")
    d = _tuple(dilation, nd, name, "dilation")
    if nd == 1:
        return (1,) + k, (1,) + s, (0,) + p, (1,) + d
    return k, s, p, d


def _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, nd, name):
    x, restore = _pool_input(input, name, nd)
    k, s, p, d = _pool_args(kernel_size, stride, padding, dilation, nd, name)
    y, indices = _ops.MaxPool2d.apply(x, kernel_size=k, stride=s, padding=p, dilation=d,
                                      ceil_mode=bool(ceil_mode))
    return restore(y), restore(indices)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """1-D max pooling returning (values, indices); indices index the last dim."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 1, "max_pool1d")


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """2-D max pooling returning (values, indices); indices are offsets into each H*W plane."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 2, "max_pool2d")


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """1-D max pooling over (N, C, L) or (C, L); padding counts as -inf.

    Example:
        >>> import ember
        >>> max_pool1d(ember.arange(6.).reshape(1, 1, 6), 2)
        tensor([[[1., 3., 5.]]])
    """
    y, idx = _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 1, "max_pool1d")
    return (y, idx) if return_indices else y


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """2-D max pooling over (N, C, H, W) or (C, H, W); stride defaults to kernel_size.

    Example:
        >>> import ember
        >>> max_pool2d(ember.arange(16.).reshape(1, 1, 4, 4), 2)
        tensor([[[[ 5.,  7.],
                  [13., 15.]]]])
    """
    y, idx = _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 2, "max_pool2d")
    return (y, idx) if return_indices else y


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """1-D average pooling over (N, C, L) or (C, L).

    Example:
        >>> import ember
        >>> avg_pool1d(ember.arange(4.).reshape(1, 1, 4), 2)
        tensor([[[0.5000, 2.5000]]])
    """
    x, restore = _pool_input(input, "avg_pool1d", 1)
    k, s, p, _ = _pool_args(kernel_size, stride, padding, 1, 1, "avg_pool1d")
    return restore(_ops.AvgPool2d.apply(x, kernel_size=k, stride=s, padding=p,
                                        ceil_mode=bool(ceil_mode),
                                        count_include_pad=bool(count_include_pad),
                                        divisor_override=None))


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """2-D average pooling over (N, C, H, W) or (C, H, W).

    Example:
        >>> import ember
        >>> avg_pool2d(ember.ones(1, 1, 4, 4), 2).shape
        ember.Size([1, 1, 2, 2])
    """
    x, restore = _pool_input(input, "avg_pool2d", 2)
    k, s, p, _ = _pool_args(kernel_size, stride, padding, 1, 2, "avg_pool2d")
    return _ops.AvgPool2d.apply(x, kernel_size=k, stride=s, padding=p, ceil_mode=bool(ceil_mode),
                                count_include_pad=bool(count_include_pad),
                                divisor_override=divisor_override)


def _adaptive_size(output_size, nd, name):
    if isinstance(output_size, (int, np.integer)) or output_size is None:
        sizes = (output_size,) * nd
    else:
        sizes = tuple(output_size)
        if len(sizes) != nd:
            raise RuntimeError(f"{name}: output_size must have {nd} elements; got "
                               f"{output_size!r}.")
    return tuple(None if v is None else int(v) for v in sizes)


def adaptive_avg_pool1d(input, output_size):
    """Average pooling to a fixed output length over (N, C, L) or (C, L)."""
    x, restore = _pool_input(input, "adaptive_avg_pool1d", 1)
    (size,) = _adaptive_size(output_size, 1, "adaptive_avg_pool1d")
    return restore(_ops.AdaptiveAvgPool2d.apply(x, output_size=(1, size)))


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to a fixed (OH, OW) (None keeps that input size).

    Example:
        >>> import ember
        >>> adaptive_avg_pool2d(ember.ones(2, 3, 7, 5), 1).shape
        ember.Size([2, 3, 1, 1])
    """
    x, restore = _pool_input(input, "adaptive_avg_pool2d", 2)
    size = _adaptive_size(output_size, 2, "adaptive_avg_pool2d")
    return _ops.AdaptiveAvgPool2d.apply(x, output_size=size)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    x, restore = _pool_input(input, "adaptive_max_pool1d", 1)
    (size,) = _adaptive_size(output_size, 1, "adaptive_max_pool1d")
    y, idx = _ops.AdaptiveMaxPool2d.apply(x, output_size=(1, size))
    return restore(y), restore(idx)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    x, _ = _pool_input(input, "adaptive_max_pool2d", 2)
    size = _adaptive_size(output_size, 2, "adaptive_max_pool2d")
    return _ops.AdaptiveMaxPool2d.apply(x, output_size=size)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max pooling to a fixed output length; optionally returns the argmax indices."""
    y, idx = adaptive_max_pool1d_with_indices(input, output_size)
    return (y, idx) if return_indices else y


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling to a fixed (OH, OW); optionally returns the argmax indices."""
    y, idx = adaptive_max_pool2d_with_indices(input, output_size)
    return (y, idx) if return_indices else y


def _max_unpool(input, indices, kernel_size, stride, padding, output_size, nd, name):
    _check_tensor(name, input)
    _check_tensor(name, indices, "indices")
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}: expected {nd + 1}-D or {nd + 2}-D input, got shape "
                           f"{tuple(input.shape)}.")
    if indices.shape != input.shape or indices.dtype != D.int64:
        raise RuntimeError(f"{name}: expected int64 indices of the input's shape "
                           f"{tuple(input.shape)}, got {indices.dtype} {tuple(indices.shape)}.")
    k = _tuple(kernel_size, nd, name, "kernel_size")
    s = k if stride is None else _tuple(stride, nd, name, "stride")
    p = _tuple(padding, nd, name, "padding")
    spatial = tuple(input.shape[-nd:])
    default = tuple((spatial[i] - 1) * s[i] - 2 * p[i] + k[i] for i in range(nd))
    if output_size is None:
        out = default
    else:
        out = tuple(int(v) for v in tuple(output_size)[-nd:])
        for i in range(nd):
            if not default[i] - s[i] < out[i] < default[i] + s[i]:
                raise ValueError(f"{name}: invalid output_size {tuple(output_size)}; each size "
                                 f"must be between {tuple(d - st for d, st in zip(default, s))} "
                                 f"and {tuple(d + st for d, st in zip(default, s))} (exclusive).")
    plane = int(np.prod(out))
    idx = indices._data
    if idx.size and (idx.min() < 0 or idx.max() >= plane):
        bad = idx.max() if idx.max() >= plane else idx.min()
        raise RuntimeError(f"{name}: Found an invalid max index: {bad} (output volumes are of "
                           f"size {' x '.join(map(str, out))}).")
    x, ix = input, indices
    if nd == 1:
        x, ix, out = x.unsqueeze(-2), ix.unsqueeze(-2), (1,) + out
    y = _ops.MaxUnpool.apply(x, ix, tuple(x.shape[:-2]) + out)
    return y.squeeze(-2) if nd == 1 else y


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of max_pool1d: zeros except the maxima put back at ``indices``."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1,
                       "max_unpool1d")


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of max_pool2d: zeros except the maxima put back at ``indices``.

    Example:
        >>> import ember
        >>> y, i = max_pool2d(ember.arange(16.).reshape(1, 1, 4, 4), 2, return_indices=True)
        >>> max_unpool2d(y, i, 2).shape
        ember.Size([1, 1, 4, 4])
    """
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2,
                       "max_unpool2d")


def inf_norm_pool(max_pool, input, norm_type, k, stride, ceil_mode):
    """lp pooling with p = +inf (-inf): the window's largest (smallest) |x|, as torch's special
    case; the power form would overflow (x^inf) and give 1 or nan."""
    if norm_type > 0:
        return max_pool(input.abs(), k, stride, 0, 1, ceil_mode)
    return -max_pool(-input.abs(), k, stride, 0, 1, ceil_mode)


def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, nd, name):
    k = _tuple(kernel_size, nd, name, "kernel_size")
    if norm_type in (float("inf"), -float("inf")):
        return inf_norm_pool(max_pool1d if nd == 1 else max_pool2d, input, norm_type, k, stride,
                             ceil_mode)
    pool = avg_pool1d if nd == 1 else avg_pool2d
    out = pool(input.pow(norm_type), k, stride, 0, ceil_mode)
    # avg * window = sum of x^p; relu keeps the root real (negative sums only arise for odd p)
    return (out.sign() * out.abs().relu()).mul(int(np.prod(k))).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling: (sum over the window of x^p)^(1/p)."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1, "lp_pool1d")


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling over 2-D windows: (sum of x^p)^(1/p)."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2, "lp_pool2d")
