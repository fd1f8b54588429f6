"""3-D convolution and pooling (N, C, D, H, W), built on the 2-D ops.

NOTE [3-D ops from 2-D slices]
A 3-D window is a stack of 2-D windows, one per kernel depth ``kd``. So conv3d is the sum over
``kd`` of one batched conv2d: the input depths that kernel depth ``kd`` meets (a strided slice)
are folded into the batch, convolved with the weight's ``kd`` plane, and unfolded again. Max
pooling is the maximum over ``kd`` of 2-D max pools; average pooling is a sum of 2-D window
sums divided by the window's element count. Everything is a composition of differentiable
ops, so gradients (and double backward) come from the 2-D ops; the cost is ``kd`` 2-D calls.
"""
from __future__ import annotations

import math

import ember

from ._conv import _conv_checks, _conv_padding
from ._pool import (
    adaptive_avg_pool2d,
    adaptive_max_pool2d,
    avg_pool2d,
    inf_norm_pool,
    max_pool2d_with_indices,
)
from ._resize import pad
from ._utils import _conv_arg, _finish_unbatched, _spatial_input, _tuple

__all__ = ["conv3d", "conv_transpose3d", "max_pool3d", "max_pool3d_with_indices", "avg_pool3d",
           "adaptive_avg_pool3d", "adaptive_max_pool3d", "adaptive_max_pool3d_with_indices",
           "max_unpool3d", "lp_pool3d"]


def _depth_slices(x, k, stride, dilation, d_out):
    """For each kernel depth, the (N * d_out, C, H, W) batch of input planes it meets."""
    n, c = x.shape[0], x.shape[1]
    for kd in range(k):
        start = kd * dilation
        planes = x[:, :, start:start + stride * (d_out - 1) + 1:stride]
        yield kd, planes.transpose(1, 2).reshape(n * d_out, c, x.shape[3], x.shape[4])


def _unfold_depth(y, n, d_out):
    """(N * d_out, C, H, W) back to (N, C, d_out, H, W)."""
    return y.reshape(n, d_out, y.shape[1], y.shape[2], y.shape[3]).transpose(1, 2)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D cross-correlation over (N, C_in, D, H, W) or unbatched (C_in, D, H, W) input.

    Example:
        >>> import ember
        >>> conv3d(ember.ones(1, 2, 4, 5, 5), ember.ones(3, 2, 3, 3, 3), padding=1).shape
        ember.Size([1, 3, 4, 5, 5])
    """
    name = "conv3d"
    x, batched = _spatial_input(input, name, 3)
    _conv_checks(x, weight, bias, groups, 3, name, batched=batched)
    kernel = tuple(weight.shape[2:])
    stride = _conv_arg(stride, 3, name, "stride")
    dilation = _conv_arg(dilation, 3, name, "dilation")
    if any(s <= 0 for s in stride) or any(d <= 0 for d in dilation):
        raise RuntimeError(f"{name}: stride and dilation must be positive; got stride={stride}, "
                           f"dilation={dilation}.")
    pads, extra = _conv_padding(padding, 3, kernel, dilation, stride, name)
    extra = extra or (0, 0, 0)
    # depth padding explicitly; height and width padding through conv2d (asymmetric 'same'
    # extras explicitly too)
    x = pad(x, [0, extra[2], 0, extra[1], pads[0], pads[0] + extra[0]])
    spans = [dilation[i] * (kernel[i] - 1) + 1 for i in range(3)]
    sizes = [x.shape[2], x.shape[3] + 2 * pads[1], x.shape[4] + 2 * pads[2]]
    if any(size < span for size, span in zip(sizes, spans, strict=True)):
        raise RuntimeError(f"{name}: Calculated padded input size per channel: {tuple(sizes)}. "
                           f"Kernel size: {kernel}. Kernel size can't be greater than actual "
                           "input size.")
    d_out = (x.shape[2] - spans[0]) // stride[0] + 1
    n = x.shape[0]
    total = None
    for kd, planes in _depth_slices(x, kernel[0], stride[0], dilation[0], d_out):
        y = ember.nn.functional.conv2d(planes, weight[:, :, kd], None, stride[1:], pads[1:],
                                       dilation[1:], groups)
        total = y if total is None else total + y
    out = _unfold_depth(total, n, d_out)
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1, 1)
    return _finish_unbatched(out, batched)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """3-D transposed convolution over (N, C_in, D, H, W) or (C_in, D, H, W) input.

    Example:
        >>> import ember
        >>> conv_transpose3d(ember.ones(1, 2, 3, 3, 3), ember.ones(2, 4, 2, 2, 2), stride=2).shape
        ember.Size([1, 4, 6, 6, 6])
    """
    name = "conv_transpose3d"
    x, batched = _spatial_input(input, name, 3)
    _conv_checks(x, weight, bias, groups, 3, name, transposed=True, batched=batched)
    kernel = tuple(weight.shape[2:])
    stride = _conv_arg(stride, 3, name, "stride")
    padding = _conv_arg(padding, 3, name, "padding")
    dilation = _conv_arg(dilation, 3, name, "dilation")
    out_pad = _conv_arg(output_padding, 3, name, "output_padding")
    for s, d, op in zip(stride, dilation, out_pad, strict=True):
        if op >= s and op >= d:
            raise RuntimeError(f"{name}: output padding must be smaller than either stride or "
                               f"dilation; got output_padding={out_pad}, stride={stride}, "
                               f"dilation={dilation}.")
    n, d_in = x.shape[0], x.shape[2]
    full = (d_in - 1) * stride[0] + dilation[0] * (kernel[0] - 1) + 1 + out_pad[0]
    d_out = full - 2 * padding[0]
    if d_out <= 0:
        raise RuntimeError(f"{name}: computed output depth {d_out} is not positive for input "
                           f"{tuple(x.shape)}; reduce padding.")
    planes = x.transpose(1, 2).reshape(n * d_in, x.shape[1], x.shape[3], x.shape[4])
    out = None
    for kd in range(kernel[0]):
        y = ember.nn.functional.conv_transpose2d(planes, weight[:, :, kd], None, stride[1:],
                                                 padding[1:], out_pad[1:], groups, dilation[1:])
        y = _unfold_depth(y, n, d_in)
        if out is None:
            out = y.new_zeros((n, y.shape[1], full, y.shape[3], y.shape[4]))
        depths = ember.arange(d_in) * stride[0] + kd * dilation[0]
        out = out.index_add(2, depths, y)
    out = out[:, :, padding[0]:padding[0] + d_out]
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1, 1)
    return _finish_unbatched(out, batched)


def _pool3d_args(kernel_size, stride, padding, dilation, name):
    k = _tuple(kernel_size, 3, name, "kernel_size")
    s = k if stride is None or (isinstance(stride, (list, tuple)) and not stride) else \
        _tuple(stride, 3, name, "stride")
    p = _tuple(padding, 3, name, "padding")
    d = _tuple(dilation, 3, name, "dilation")
    for i in range(3):
        if p[i] > k[i] // 2:
            raise RuntimeError(f"{name}: pad should be at most half of effective kernel size, "
                               f"but got pad={p[i]}, kernel_size={k[i]} and dilation={d[i]}")
    return k, s, p, d


def _out_size(size, k, s, p, d, ceil_mode):
    span = d * (k - 1) + 1
    if ceil_mode:
        out = math.ceil((size + 2 * p - span) / s) + 1
        if (out - 1) * s >= size + p:
            out -= 1
    else:
        out = (size + 2 * p - span) // s + 1
    if out <= 0:
        raise RuntimeError(f"Given input size too small: output size {out} is not positive")
    return out


def _pool_input3d(input, name):
    if input.ndim not in (4, 5):
        raise RuntimeError(f"{name}: Expected 4D or 5D (batch mode) tensor for input; got "
                           f"{input.ndim}-D input of shape {tuple(input.shape)}")
    return (input, True) if input.ndim == 5 else (input.unsqueeze(0), False)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """3-D max pooling returning (values, indices into each D*H*W volume)."""
    name = "max_pool3d"
    x, batched = _pool_input3d(input, name)
    k, s, p, d = _pool3d_args(kernel_size, stride, padding, dilation, name)
    D, H, W = x.shape[2:]
    d_out = _out_size(D, k[0], s[0], p[0], d[0], ceil_mode)
    span = d[0] * (k[0] - 1) + 1
    right = max((d_out - 1) * s[0] + span - D - p[0], 0)
    xp = pad(x, [0, 0, 0, 0, p[0], right], value=-math.inf)
    n = x.shape[0]
    values, indices = [], []
    for kd, planes in _depth_slices(xp, k[0], s[0], d[0], d_out):
        v, idx = max_pool2d_with_indices(planes, k[1:], s[1:], p[1:], d[1:], ceil_mode)
        values.append(_unfold_depth(v, n, d_out))
        depth = ember.arange(d_out) * s[0] + kd * d[0] - p[0]
        indices.append(_unfold_depth(idx, n, d_out) + depth.reshape(1, 1, -1, 1, 1) * (H * W))
    stacked = ember.stack(values)
    best = stacked.argmax(0, keepdim=True)
    out = stacked.gather(0, best).squeeze(0)
    idx = ember.stack(indices).gather(0, best).squeeze(0)
    return _finish_unbatched(out, batched), _finish_unbatched(idx, batched)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """3-D max pooling over (N, C, D, H, W) or (C, D, H, W); padding counts as -inf.

    Example:
        >>> import ember
        >>> max_pool3d(ember.arange(8.).reshape(1, 1, 2, 2, 2), 2)
        tensor([[[[[7.]]]]])
    """
    out, idx = max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (out, idx) if return_indices else out


def _window_sum3d(x, k, s, p, ceil_mode, pad_value):
    """Sums over 3-D windows of x, padded by p (value pad_value) and by zeros past the padding
    where ceil_mode adds a partial window."""
    D, H, W = x.shape[2:]
    outs = [_out_size(size, k[i], s[i], p[i], 1, ceil_mode) for i, size in enumerate((D, H, W))]
    rights = [max((outs[i] - 1) * s[i] + k[i] - size - p[i], 0) for i, size in
              enumerate((D, H, W))]
    xp = pad(x, [p[2], p[2], p[1], p[1], p[0], p[0]], value=pad_value)
    xp = pad(xp, [0, max(rights[2] - p[2], 0), 0, max(rights[1] - p[1], 0), 0,
                  max(rights[0] - p[0], 0)], value=0.0)
    n = x.shape[0]
    total = None
    for _, planes in _depth_slices(xp, k[0], s[0], 1, outs[0]):
        y = avg_pool2d(planes, k[1:], s[1:], 0, False, True, divisor_override=1)
        y = y[:, :, :outs[1], :outs[2]]
        total = y if total is None else total + y
    return _unfold_depth(total, n, outs[0])


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """3-D average pooling over (N, C, D, H, W) or (C, D, H, W).

    Example:
        >>> import ember
        >>> avg_pool3d(ember.ones(1, 1, 4, 4, 4), 2).shape
        ember.Size([1, 1, 2, 2, 2])
    """
    name = "avg_pool3d"
    x, batched = _pool_input3d(input, name)
    k, s, p, _ = _pool3d_args(kernel_size, stride, padding, 1, name)
    sums = _window_sum3d(x, k, s, p, ceil_mode, 0.0)
    if divisor_override is not None:
        if divisor_override == 0:
            raise RuntimeError("avg_pool3d: divisor must be not zero")
        out = sums / divisor_override
    else:
        ones = ember.ones((1, 1) + tuple(x.shape[2:]), dtype=x.dtype)
        counts = _window_sum3d(ones, k, s, p, ceil_mode, 1.0 if count_include_pad else 0.0)
        out = sums / counts
    return _finish_unbatched(out, batched)


def _bins(size, out):
    return [(math.floor(i * size / out), math.ceil((i + 1) * size / out)) for i in range(out)]


def _adaptive3d_size(output_size, x):
    if isinstance(output_size, (tuple, list)) and len(output_size) == 3:
        sizes = tuple(output_size)
    else:
        sizes = _tuple(output_size, 3, "adaptive_pool3d", "output_size")
    return tuple(x.shape[2 + i] if s is None else s for i, s in enumerate(sizes))


def adaptive_avg_pool3d(input, output_size):
    """Average pooling to a fixed (D_out, H_out, W_out) size."""
    x, batched = _pool_input3d(input, "adaptive_avg_pool3d")
    od, oh, ow = _adaptive3d_size(output_size, x)
    planes = [adaptive_avg_pool2d(x[:, :, lo:hi].mean(2), (oh, ow))
              for lo, hi in _bins(x.shape[2], od)]
    return _finish_unbatched(ember.stack(planes, 2), batched)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """Max pooling to a fixed size, returning (values, indices into each D*H*W volume)."""
    x, batched = _pool_input3d(input, "adaptive_max_pool3d")
    od, oh, ow = _adaptive3d_size(output_size, x)
    H, W = x.shape[3], x.shape[4]
    values, indices = [], []
    for lo, hi in _bins(x.shape[2], od):
        per_depth = [adaptive_max_pool2d(x[:, :, d], (oh, ow), return_indices=True)
                     for d in range(lo, hi)]
        v = ember.stack([pv for pv, _ in per_depth])
        i = ember.stack([pi + d * H * W for (_, pi), d in zip(per_depth, range(lo, hi),
                                                               strict=True)])
        best = v.argmax(0, keepdim=True)
        values.append(v.gather(0, best).squeeze(0))
        indices.append(i.gather(0, best).squeeze(0))
    out, idx = ember.stack(values, 2), ember.stack(indices, 2)
    return _finish_unbatched(out, batched), _finish_unbatched(idx, batched)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max pooling to a fixed (D_out, H_out, W_out) size."""
    out, idx = adaptive_max_pool3d_with_indices(input, output_size)
    return (out, idx) if return_indices else out


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool3d: values put back at their indices, zeros elsewhere."""
    x, batched = _pool_input3d(input, "max_unpool3d")
    idx = indices if batched else indices.unsqueeze(0)
    k, s, p, _ = _pool3d_args(kernel_size, stride, padding, 1, "max_unpool3d")
    default = tuple((x.shape[2 + i] - 1) * s[i] - 2 * p[i] + k[i] for i in range(3))
    size = default if output_size is None else tuple(output_size)[-3:]
    n, c = x.shape[:2]
    volume = size[0] * size[1] * size[2]
    if bool((idx < 0).any()) or bool((idx >= volume).any()):
        raise RuntimeError(f"max_unpool3d: Found an invalid max index: indices must lie in "
                           f"[0, {volume}) for output size {size}")
    flat = x.new_zeros((n, c, volume)).scatter(2, idx.reshape(n, c, -1), x.reshape(n, c, -1))
    return _finish_unbatched(flat.reshape((n, c) + size), batched)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling: (sum over the window of x ** p) ** (1 / p)."""
    k = _tuple(kernel_size, 3, "lp_pool3d", "kernel_size")
    if norm_type in (math.inf, -math.inf):
        return inf_norm_pool(max_pool3d, input, norm_type, k, stride, ceil_mode)
    out = avg_pool3d(input.pow(norm_type), k, stride, 0, ceil_mode)
    volume = k[0] * k[1] * k[2]
    return (out.sign() * ember.relu(out.abs())).mul(volume).pow(1.0 / norm_type)
