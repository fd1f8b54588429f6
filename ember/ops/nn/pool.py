"""Pooling ops around the numba kernels. Kernels take (..., H, W); indices are int64 offsets
into each H*W plane. Each op pairs with its adjoint, as the convolutions do (see NOTE
[Convolution adjoint triangle] in conv.py): avg pooling <-> its backward, and max pooling's
backward is a scatter by the saved indices whose adjoint is a gather.
"""
from __future__ import annotations

import numpy as np

from ...autograd.function import Op
from .._kernels import pool as _kpool
from ._common import _back, _prep


class MaxPool2d(Op):
    """Max pooling; returns (y, indices). The gradient scatters by the indices."""

    @staticmethod
    def forward(ctx, x, kernel_size, stride, padding, dilation, ceil_mode):
        y, indices = _kpool.maxpool2d_forward(_prep(x), kernel_size, stride, padding, dilation,
                                              ceil_mode)
        ctx.in_shape = x.shape
        ctx.save_for_backward(indices)
        return _back(y, x.dtype), indices

    @staticmethod
    def backward(ctx, grad, grad_indices):
        indices = ctx.saved_tensors[0].detach()
        return PlaneScatter.apply(grad, indices, ctx.in_shape)


class PlaneScatter(Op):
    """zeros(shape) with src[..., k] added at plane offset indices[..., k] (max-pool backward)."""

    @staticmethod
    def forward(ctx, src, indices, shape):
        ctx.save_for_backward(indices)
        gx = _kpool.maxpool2d_backward(_prep(src), np.ascontiguousarray(indices), shape)
        return _back(gx, src.dtype)

    @staticmethod
    def backward(ctx, grad):
        (indices,) = ctx.saved_tensors
        return PlaneGather.apply(grad, indices), None, None


class PlaneGather(Op):
    """out[..., k] = x[..., plane offset indices[..., k]]; the adjoint of PlaneScatter."""

    @staticmethod
    def forward(ctx, x, indices):
        ctx.shape = x.shape
        ctx.save_for_backward(indices)
        lead = x.shape[:-2]
        planes = x.reshape(lead + (-1,))
        idx = indices.reshape(lead + (-1,))
        return np.take_along_axis(planes, idx, axis=-1).reshape(indices.shape)

    @staticmethod
    def backward(ctx, grad):
        (indices,) = ctx.saved_tensors
        return PlaneScatter.apply(grad, indices, ctx.shape), None


class MaxUnpool(Op):
    """zeros(shape) with x written (not added) at plane offsets ``indices``, like torch."""

    @staticmethod
    def forward(ctx, x, indices, shape):
        ctx.save_for_backward(indices)
        out = np.zeros(shape, x.dtype)
        lead = shape[:-2]
        np.put_along_axis(out.reshape(lead + (-1,)), indices.reshape(lead + (-1,)),
                          x.reshape(lead + (-1,)), axis=-1)
        return out

    @staticmethod
    def backward(ctx, grad):
        (indices,) = ctx.saved_tensors
        return PlaneGather.apply(grad, indices), None, None


class AvgPool2d(Op):
    """Average pooling on (..., H, W); its adjoint is AvgPool2dBackward."""

    @staticmethod
    def forward(ctx, x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                divisor_override):
        ctx.args = (kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
        ctx.in_shape = x.shape
        y = _kpool.avgpool2d_forward(_prep(x), *ctx.args)
        return _back(y, x.dtype)

    @staticmethod
    def backward(ctx, grad):
        return AvgPool2dBackward.apply(grad, ctx.in_shape, *ctx.args)


class AvgPool2dBackward(Op):
    """Gradient of AvgPool2d (linear in grad, so its own gradient is AvgPool2d)."""

    @staticmethod
    def forward(ctx, grad, in_shape, kernel_size, stride, padding, ceil_mode, count_include_pad,
                divisor_override):
        ctx.args = (kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
        gx = _kpool.avgpool2d_backward(_prep(grad), in_shape, *ctx.args)
        return _back(gx, grad.dtype)

    @staticmethod
    def backward(ctx, gg):
        return AvgPool2d.apply(gg, *ctx.args)


class AdaptiveAvgPool2d(Op):
    """Adaptive average pooling on (..., H, W) to output_size (oh, ow)."""

    @staticmethod
    def forward(ctx, x, output_size):
        ctx.in_shape = x.shape
        y = _kpool.adaptive_avgpool2d_forward(_prep(x), output_size)
        return _back(y, x.dtype)

    @staticmethod
    def backward(ctx, grad):
        return AdaptiveAvgPool2dBackward.apply(grad, ctx.in_shape)


class AdaptiveAvgPool2dBackward(Op):
    """Gradient of AdaptiveAvgPool2d; its own gradient is AdaptiveAvgPool2d."""

    @staticmethod
    def forward(ctx, grad, in_shape):
        ctx.out_hw = grad.shape[-2:]
        gx = _kpool.adaptive_avgpool2d_backward(_prep(grad), in_shape)
        return _back(gx, grad.dtype)

    @staticmethod
    def backward(ctx, gg):
        return AdaptiveAvgPool2d.apply(gg, tuple(ctx.out_hw))


class AdaptiveMaxPool2d(Op):
    """Adaptive max pooling; returns (y, indices) with plane offsets like MaxPool2d."""

    @staticmethod
    def forward(ctx, x, output_size):
        y, indices = _kpool.adaptive_maxpool2d_forward(_prep(x), output_size)
        ctx.in_shape = x.shape
        ctx.save_for_backward(indices)
        return _back(y, x.dtype), indices

    @staticmethod
    def backward(ctx, grad, grad_indices):
        indices = ctx.saved_tensors[0].detach()
        return PlaneScatter.apply(grad, indices, ctx.in_shape)
