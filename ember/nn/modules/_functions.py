"""SyncBatchNorm's autograd function: batch statistics and their gradients summed over ranks.

With m elements per channel on all ranks together, mean = S1/m and var = S2/m - mean^2 from the
all-reduced per-channel sums S1 = sum(x), S2 = sum(x^2). For y = w * xhat + b with
xhat = (x - mean) * invstd, the gradient of the loss summed over ranks is
    dx = w * invstd * (dy - sum(dy)/m - xhat * sum(dy * xhat)/m)
with both sums all-reduced; dw = sum(dy * xhat) and db = sum(dy) stay local, like any parameter
gradient (DistributedDataParallel averages them).
"""
from __future__ import annotations

import numpy as np

import ember

from ...autograd.function import Function, once_differentiable


def _channels_last(a: np.ndarray) -> np.ndarray:
    """(N, C, *) -> (M, C) with the channel last, so per-channel sums are one reduction."""
    return np.moveaxis(a, 1, -1).reshape(-1, a.shape[1])


def _sum_over_group(values: np.ndarray, group) -> np.ndarray:
    t = ember.from_numpy(np.ascontiguousarray(values))
    ember.distributed.all_reduce(t, group=group)
    return t._data


class SyncBatchNormFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias, running, eps, momentum, group):
        x = input._data
        compute = np.float64 if x.dtype == np.float64 else np.float32
        flat = _channels_last(x).astype(compute, copy=False)
        c = x.shape[1]
        local = np.concatenate([flat.sum(0), (flat * flat).sum(0),
                                np.full(1, flat.shape[0], compute)])
        total = _sum_over_group(local, group)
        m = float(total[-1])
        mean = total[:c] / m
        var = np.maximum(total[c:2 * c] / m - mean * mean, 0)
        invstd = 1.0 / np.sqrt(var + eps)
        # running statistics travel in a tuple: they are buffers updated outside autograd
        running_mean, running_var = running
        if running_mean is not None:
            unbiased = var * m / max(m - 1, 1)
            running_mean._data[...] = ((1 - momentum) * running_mean._data + momentum * mean)
            running_var._data[...] = ((1 - momentum) * running_var._data + momentum * unbiased)
            running_mean._bump_version()
            running_var._bump_version()
        shape = (1, c) + (1,) * (x.ndim - 2)
        xhat = (x.astype(compute, copy=False) - mean.reshape(shape)) * invstd.reshape(shape)
        y = xhat
        if weight is not None:
            y = y * weight._data.astype(compute).reshape(shape)
        if bias is not None:
            y = y + bias._data.astype(compute).reshape(shape)
        if weight is not None:
            ctx.save_for_backward(weight)
        ctx.xhat, ctx.invstd, ctx.m, ctx.group = xhat, invstd, m, group
        ctx.has_weight, ctx.has_bias = weight is not None, bias is not None
        return ember.from_numpy(np.ascontiguousarray(y.astype(x.dtype, copy=False)))

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        xhat, invstd, m = ctx.xhat, ctx.invstd, ctx.m
        g = grad._data.astype(xhat.dtype, copy=False)
        c = xhat.shape[1]
        shape = (1, c) + (1,) * (xhat.ndim - 2)
        gflat, hflat = _channels_last(g), _channels_last(xhat)
        sum_dy = gflat.sum(0)
        sum_dy_xhat = (gflat * hflat).sum(0)
        total = _sum_over_group(np.concatenate([sum_dy, sum_dy_xhat]), ctx.group)
        scale = invstd
        if ctx.has_weight:
            (weight,) = ctx.saved_tensors
            scale = invstd * weight._data.astype(xhat.dtype)
        gx = scale.reshape(shape) * (g - (total[:c] / m).reshape(shape)
                                     - xhat * (total[c:] / m).reshape(shape))
        dtype = grad._data.dtype
        gw = ember.from_numpy(sum_dy_xhat.astype(dtype)) if ctx.has_weight else None
        gb = ember.from_numpy(sum_dy.astype(dtype)) if ctx.has_bias else None
        return (ember.from_numpy(np.ascontiguousarray(gx.astype(dtype))), gw, gb,
                None, None, None, None)
