"""ember.nn.functional, part B: convolution, pooling, padding, resizing, sampling, attention.

Re-exported by ``ember.nn.functional``. The heavy ops (convolution, fold/unfold, pooling) are
``Op`` classes in ``ember.ops.nn_ops`` that call numba kernels; everything else here is a
composite of ember ops and gets its gradient (of any order) for free. 1-D convolution and
pooling run through the 2-D ops with a height of one.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor, _make
from ..amp import _state as _amp
from ..autograd.function import Op
from ..ops import nn_ops as _ops

__all__ = [
    "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "unfold", "fold",
    "max_pool1d", "max_pool2d", "max_pool1d_with_indices", "max_pool2d_with_indices",
    "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
    "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices", "max_unpool1d", "max_unpool2d", "lp_pool1d", "lp_pool2d",
    "pad", "interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "pixel_shuffle",
    "pixel_unshuffle", "channel_shuffle", "grid_sample", "affine_grid",
    "scaled_dot_product_attention", "multi_head_attention_forward",
]


# ---------------------------------------------------------------------------------------------
# argument helpers


def _tuple(value, n, name, arg):
    """An int or a length-n sequence of ints as an n-tuple (torch's _pair / _single)."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),) * n
    if isinstance(value, (tuple, list)) and len(value) == n and all(
            isinstance(v, (int, np.integer)) for v in value):
        return tuple(int(v) for v in value)
    if isinstance(value, (tuple, list)) and len(value) == 1 and n > 1:
        return _tuple(value[0], n, name, arg)
    raise TypeError(f"{name}(): argument '{arg}' must be an int or a tuple of {n} ints, "
                    f"got {value!r}")


def _check_tensor(x, name, arg="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' must be Tensor, not {type(x).__name__}")


def _check_float(x, name):
    if not x.is_floating_point():
        raise RuntimeError(f"{name}: expected a floating point input, got dtype {x.dtype}; "
                           "convert it with .float().")


def _spatial_input(x, name, nd, batched_only=False):
    """Check x is (N, C, *spatial) or unbatched (C, *spatial); returns (x batched, was_batched)."""
    _check_tensor(x, name)
    full = nd + 2
    if x.ndim == full:
        return x, True
    if x.ndim == full - 1 and not batched_only:
        return x.unsqueeze(0), False
    dims = ("H", "W") if nd == 2 else ("L",) if nd == 1 else ("D", "H", "W")
    shape = ", ".join(("N", "C") + dims)
    unb = "" if batched_only else f" or {full - 1}-D unbatched ({', '.join(('C',) + dims)})"
    raise RuntimeError(f"{name}: expected {full}-D (batched) input of shape ({shape}){unb}; "
                       f"got {x.ndim}-D input of shape {tuple(x.shape)}.")


def _finish_unbatched(y, batched):
    return y if batched else y.squeeze(0)


# ---------------------------------------------------------------------------------------------
# convolution


def _same_padding(kernel, dilation, stride, name):
    """'same' padding per dim as (left, right); torch puts an odd extra element on the right."""
    if any(s != 1 for s in stride):
        raise ValueError(f"{name}: padding='same' is not supported for strided convolutions; "
                         f"got stride={stride}.")
    pads = []
    for k, d in zip(kernel, dilation):
        total = d * (k - 1)
        pads.append((total // 2, total - total // 2))
    return pads


def _conv_padding(padding, nd, kernel, dilation, stride, name):
    """Resolve padding to (symmetric per-dim tuple, extra right-side pads or None)."""
    if isinstance(padding, str):
        if padding == "valid":
            return (0,) * nd, None
        if padding == "same":
            pads = _same_padding(kernel, dilation, stride, name)
            sym = tuple(lo for lo, _ in pads)
            extra = tuple(hi - lo for lo, hi in pads)
            return sym, (extra if any(extra) else None)
        raise ValueError(f"{name}: Invalid padding string {padding!r}, should be one of "
                         "{'valid', 'same'}")
    pads = _tuple(padding, nd, name, "padding")
    if any(p < 0 for p in pads):
        raise RuntimeError(f"{name}: negative padding is not supported; got padding={pads}.")
    return pads, None


def _conv_checks(x, weight, bias, groups, nd, name, transposed=False, batched=True):
    _check_tensor(weight, name, "weight")
    if weight.ndim != nd + 2:
        raise RuntimeError(f"{name}: expected a {nd + 2}-D weight, got weight of shape "
                           f"{tuple(weight.shape)}.")
    if not isinstance(groups, (int, np.integer)) or groups <= 0:
        raise RuntimeError(f"{name}: non-positive groups is not supported; got groups={groups}.")
    if x.dtype != weight.dtype or (bias is not None and bias.dtype != x.dtype):
        bt = "" if bias is None else f", bias {bias.dtype}"
        raise RuntimeError(f"{name}: Input type ({x.dtype}) and weight type ({weight.dtype}"
                           f"{bt}) should be the same; cast them with .to(dtype).")
    _check_float(x, name)
    in_ch = x.shape[1]
    if transposed:
        expected = weight.shape[0]
        out_ch = weight.shape[1] * groups
        if weight.shape[0] % groups:
            raise RuntimeError(f"{name}: weight.shape[0]={weight.shape[0]} must be divisible "
                               f"by groups={groups}.")
    else:
        expected = weight.shape[1] * groups
        out_ch = weight.shape[0]
        if out_ch % groups:
            raise RuntimeError(f"{name}: out_channels={out_ch} (weight.shape[0]) must be "
                               f"divisible by groups={groups}.")
    if in_ch != expected:
        hint = ""
        if not batched:
            hint = (f" A {nd + 1}-D input {list(x.shape[1:])} is read as one unbatched "
                    f"(C, {'H, W' if nd == 2 else 'L'}) sample, expected {nd + 2}-D "
                    f"(N, C, {'H, W' if nd == 2 else 'L'}); for a batch of single-channel "
                    "inputs use input.unsqueeze(1).")
        raise RuntimeError(
            f"{name}: Given groups={groups}, weight of size {list(weight.shape)}, expected "
            f"input{list(x.shape)} to have {expected} channels, but got {in_ch} channels "
            f"instead.{hint}")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != out_ch):
        raise RuntimeError(f"{name}: expected bias of shape ({out_ch},), got "
                           f"{tuple(bias.shape)}.")


def _conv(input, weight, bias, stride, padding, dilation, groups, nd, name):
    """Shared conv1d/conv2d (and Conv1d/Conv2d module) implementation."""
    if nd == 2:
        input, weight, bias = _amp.maybe_autocast("conv2d", input, weight, bias)
    x, batched = _spatial_input(input, name, nd)
    _conv_checks(x, weight, bias, groups, nd, name, batched=batched)
    kernel = tuple(weight.shape[2:])
    stride = _tuple(stride, nd, name, "stride")
    dilation = _tuple(dilation, nd, name, "dilation")
    if any(s <= 0 for s in stride) or any(d <= 0 for d in dilation):
        raise RuntimeError(f"{name}: stride and dilation must be positive; got stride={stride}, "
                           f"dilation={dilation}.")
    pads, extra = _conv_padding(padding, nd, kernel, dilation, stride, name)
    if extra is not None:  # asymmetric 'same': pad the odd element on the right explicitly
        flat = []
        for e in reversed(extra):
            flat += [0, e]
        x = pad(x, flat)
    for i in range(nd):
        size = x.shape[2 + i] + 2 * pads[i]
        span = dilation[i] * (kernel[i] - 1) + 1
        if size < span:
            raise RuntimeError(
                f"{name}: Calculated padded input size per channel: {tuple(x.shape[2:])} plus "
                f"padding {pads}. Kernel size: {kernel} (dilated span {span} in dim {i}). "
                "Kernel size can't be greater than actual input size.")
    if nd == 1:
        y = _ops.Conv2d.apply(x.unsqueeze(2), weight.unsqueeze(2), bias, stride=(1,) + stride,
                              padding=(0,) + pads, dilation=(1,) + dilation, groups=int(groups))
        y = y.squeeze(2)
    else:
        y = _ops.Conv2d.apply(x, weight, bias, stride=stride, padding=pads, dilation=dilation,
                              groups=int(groups))
    return _finish_unbatched(y, batched)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D cross-correlation over (N, C_in, L) or unbatched (C_in, L) input.

    Args:
        weight: (C_out, C_in / groups, k). bias: (C_out,) or None. padding: int, tuple,
            'valid' or 'same' (stride 1 only).

    Example:
        >>> import ember
        >>> conv1d(ember.ones(1, 2, 5), ember.ones(3, 2, 3)).shape
        ember.Size([1, 3, 3])
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D cross-correlation over (N, C_in, H, W) or unbatched (C_in, H, W) input.

    Args:
        weight: (C_out, C_in / groups, kh, kw). bias: (C_out,) or None.
        stride, dilation: int or (int, int). padding: int, (int, int), 'valid' or 'same'.
        groups: split channels into groups (groups == C_in gives a depthwise convolution).

    Example:
        >>> import ember
        >>> conv2d(ember.ones(1, 3, 5, 5), ember.ones(4, 3, 3, 3), padding='same').shape
        ember.Size([1, 4, 5, 5])
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def _transposed_size(size, k, s, p, d, op):
    return (size - 1) * s - 2 * p + d * (k - 1) + op + 1


def _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, nd,
                    name):
    if nd == 2:
        input, weight, bias = _amp.maybe_autocast("conv2d", input, weight, bias)
    x, batched = _spatial_input(input, name, nd)
    _conv_checks(x, weight, bias, groups, nd, name, transposed=True, batched=batched)
    kernel = tuple(weight.shape[2:])
    stride = _tuple(stride, nd, name, "stride")
    padding = _tuple(padding, nd, name, "padding")
    dilation = _tuple(dilation, nd, name, "dilation")
    out_pad = _tuple(output_padding, nd, name, "output_padding")
    for s, d, op in zip(stride, dilation, out_pad):
        if op >= s and op >= d:
            raise RuntimeError(f"{name}: output padding must be smaller than either stride or "
                               f"dilation; got output_padding={out_pad}, stride={stride}, "
                               f"dilation={dilation}.")
    out = tuple(_transposed_size(x.shape[2 + i], kernel[i], stride[i], padding[i], dilation[i],
                                 out_pad[i]) for i in range(nd))
    if any(o <= 0 for o in out):
        raise RuntimeError(f"{name}: computed output size {out} is not positive for input "
                           f"{tuple(x.shape)}; reduce padding.")
    if nd == 1:
        y = _ops.ConvTranspose2d.apply(x.unsqueeze(2), weight.unsqueeze(2), bias,
                                       out_hw=(1,) + out, stride=(1,) + stride,
                                       padding=(0,) + padding, dilation=(1,) + dilation,
                                       groups=int(groups))
        y = y.squeeze(2)
    else:
        y = _ops.ConvTranspose2d.apply(x, weight, bias, out_hw=out, stride=stride,
                                       padding=padding, dilation=dilation, groups=int(groups))
    return _finish_unbatched(y, batched)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """1-D transposed convolution; weight is (C_in, C_out / groups, k).

    Example:
        >>> import ember
        >>> conv_transpose1d(ember.ones(1, 2, 4), ember.ones(2, 3, 3), stride=2).shape
        ember.Size([1, 3, 9])
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 1, "conv_transpose1d")


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """2-D transposed convolution ("deconvolution"); weight is (C_in, C_out / groups, kh, kw).

    The output size is (H - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1.

    Example:
        >>> import ember
        >>> conv_transpose2d(ember.ones(1, 2, 4, 4), ember.ones(2, 3, 2, 2), stride=2).shape
        ember.Size([1, 3, 8, 8])
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 2, "conv_transpose2d")


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extract sliding blocks: (N, C, H, W) -> (N, C * kh * kw, L) (im2col).

    Example:
        >>> import ember
        >>> unfold(ember.ones(1, 2, 4, 4), 2).shape
        ember.Size([1, 8, 9])
    """
    name = "unfold"
    x, batched = _spatial_input(input, name, 2)
    args = [_tuple(a, 2, name, n) for a, n in ((kernel_size, "kernel_size"),
                                               (dilation, "dilation"), (padding, "padding"),
                                               (stride, "stride"))]
    k, d, p, s = args
    for i in range(2):
        if k[i] <= 0 or d[i] <= 0 or s[i] <= 0 or p[i] < 0:
            raise RuntimeError(f"{name}: kernel_size, dilation and stride must be positive and "
                               f"padding non-negative; got {k}, {d}, {p}, {s}.")
        if x.shape[2 + i] + 2 * p[i] - d[i] * (k[i] - 1) - 1 < 0:
            raise RuntimeError(f"{name}: input {tuple(x.shape)} with padding {p} is smaller than "
                               f"the dilated kernel {k} (dilation {d}).")
    _check_float(x, name)
    return _finish_unbatched(_ops.Unfold.apply(x, k, d, p, s), batched)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Combine sliding blocks (N, C * kh * kw, L) into (N, C, H, W), summing overlaps (col2im).

    Example:
        >>> import ember
        >>> fold(ember.ones(1, 8, 9), (4, 4), 2).shape
        ember.Size([1, 2, 4, 4])
    """
    name = "fold"
    _check_tensor(input, name)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"{name}: expected 2-D (unbatched) or 3-D (batched) input of shape "
                           f"(N, C * kh * kw, L), got {tuple(input.shape)}.")
    batched = input.ndim == 3
    x = input if batched else input.unsqueeze(0)
    out = _tuple(output_size, 2, name, "output_size")
    k = _tuple(kernel_size, 2, name, "kernel_size")
    d = _tuple(dilation, 2, name, "dilation")
    p = _tuple(padding, 2, name, "padding")
    s = _tuple(stride, 2, name, "stride")
    blocks = [(out[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(2)]
    if x.shape[1] % (k[0] * k[1]) or x.shape[2] != blocks[0] * blocks[1] or min(blocks) <= 0:
        raise RuntimeError(
            f"{name}: input of shape {tuple(input.shape)} does not match kernel_size {k} and "
            f"output_size {out}; expected (N, C * {k[0] * k[1]}, {blocks[0] * blocks[1]}) "
            f"({blocks[0]} x {blocks[1]} blocks).")
    _check_float(x, name)
    return _finish_unbatched(_ops.Fold.apply(x, out, k, d, p, s), batched)


# ---------------------------------------------------------------------------------------------
# pooling


def _pool_input(input, name, nd):
    """(x as (..., H, W), restore) for 1-D / 2-D pooling over 2-3 / 3-4 dim inputs."""
    _check_tensor(input, name)
    if input.ndim not in (nd + 1, nd + 2):
        dims = "L" if nd == 1 else "H, W"
        raise RuntimeError(f"{name}: expected {nd + 1}-D (C, {dims}) or {nd + 2}-D "
                           f"(N, C, {dims}) input, got {input.ndim}-D input of shape "
                           f"{tuple(input.shape)}.")
    _check_float(input, name)
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
    _check_tensor(input, name)
    _check_tensor(indices, name, "indices")
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


def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, nd, name):
    k = _tuple(kernel_size, nd, name, "kernel_size")
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


# ---------------------------------------------------------------------------------------------
# padding

_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def _pad_index(n, lo, hi, mode, dim, name, shape):
    """Source index along one dim for each padded position -lo .. n + hi - 1."""
    pos = np.arange(-lo, n + hi)
    if mode == "reflect":
        if lo >= n or hi >= n:
            raise RuntimeError(
                f"{name}: Padding size should be less than the corresponding input dimension, "
                f"but got: padding ({lo}, {hi}) at dimension {dim} of input {list(shape)}.")
        period = 2 * (n - 1)
        m = np.abs(pos) % period if period else np.zeros_like(pos)
        return np.where(m >= n, period - m, m)
    if mode == "replicate":
        if n == 0:
            raise RuntimeError(f"{name}: cannot replicate-pad an empty dimension {dim} of input "
                               f"{list(shape)}.")
        return np.clip(pos, 0, n - 1)
    if lo > n or hi > n:  # circular
        raise RuntimeError(f"{name}: Padding value causes wrapping around more than once; got "
                           f"padding ({lo}, {hi}) at dimension {dim} of size {n}.")
    return pos % n


def pad(input, pad, mode="constant", value=None):
    """Pad (or, with negative amounts, crop) the last len(pad) // 2 dims.

    ``pad`` lists (left, right) pairs starting from the last dim. Modes: 'constant' (any number
    of dims, fill ``value``), 'reflect' (mirror without repeating the edge), 'replicate'
    (repeat the edge), 'circular' (wrap around).

    Example:
        >>> import ember
        >>> pad(ember.tensor([[1., 2., 3.]]), (1, 2), mode='reflect')
        tensor([[2., 1., 2., 3., 2., 1.]])
    """
    name = "pad"
    _check_tensor(input, name)
    pads = [int(p) for p in pad]
    if len(pads) % 2:
        raise ValueError(f"{name}: Padding length must be divisible by 2; got {len(pads)} "
                         f"values {tuple(pad)}.")
    nd = len(pads) // 2
    if nd > input.ndim:
        raise ValueError(f"{name}: Padding length {len(pads)} is too large for a {input.ndim}-D "
                         f"input; expected at most {2 * input.ndim} values.")
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"{name}: Unrecognised padding mode {mode!r}; expected one of "
                                  f"{_PAD_MODES}.")
    if mode == "constant":
        return _constant_pad(input, pads, 0.0 if value is None else value)
    if value is not None and value != 0:
        raise ValueError(f"{name}: Padding mode {mode!r} doesn't take in value argument.")
    if not nd <= input.ndim - 1 <= nd + 1:
        raise NotImplementedError(
            f"{name}: {mode} padding of {nd} dim(s) needs a {nd + 1}-D (unbatched) or "
            f"{nd + 2}-D (batched) input; got input of shape {tuple(input.shape)}.")
    out = input
    for i in range(nd):
        dim = input.ndim - 1 - i
        lo, hi = pads[2 * i], pads[2 * i + 1]
        if lo == 0 and hi == 0:
            continue
        # negative amounts crop first; the positive ones then pad the cropped tensor
        start = max(-lo, 0)
        n = input.shape[dim] - start - max(-hi, 0)
        idx = start + _pad_index(n, max(lo, 0), max(hi, 0), mode, dim, name, input.shape)
        out = _along(out, dim, idx)
    return out


def _constant_pad(input, pads, value):
    # crop first (a differentiable view), then pad the non-negative amounts
    crop = [slice(None)] * input.ndim
    grow = [(0, 0)] * input.ndim
    for i in range(len(pads) // 2):
        dim = input.ndim - 1 - i
        lo, hi = pads[2 * i], pads[2 * i + 1]
        n = input.shape[dim]
        if n + lo + hi < 0:
            raise RuntimeError(f"pad: The input size {n}, plus negative padding {lo} and {hi} "
                               f"resulted in a negative output size at dimension {dim}.")
        crop[dim] = slice(max(-lo, 0), n - max(-hi, 0))
        grow[dim] = (max(lo, 0), max(hi, 0))
    x = input[tuple(crop)] if any(s != slice(None) for s in crop) else input
    if all(g == (0, 0) for g in grow):
        return x if x is not input else input.clone()
    return _ConstantPad.apply(x, tuple(grow), value)


class _ConstantPad(Op):
    """np.pad with a constant; the gradient is the interior slice of the incoming gradient."""

    @staticmethod
    def forward(ctx, x, widths, value):
        ctx.key = tuple(slice(lo, lo + n) for (lo, _), n in zip(widths, x.shape))
        out = np.full(tuple(n + lo + hi for n, (lo, hi) in zip(x.shape, widths)), value,
                      dtype=x.dtype)
        out[ctx.key] = x
        return out

    @staticmethod
    def backward(ctx, grad):
        return grad[ctx.key]


# ---------------------------------------------------------------------------------------------
# resizing

_LINEAR_MODES = {"linear": 1, "bilinear": 2, "trilinear": 3, "bicubic": 2}


def _interp_sizes(x, size, scale_factor, nd, name):
    """(output sizes, scales used for the source coordinate or None per dim)."""
    spatial = tuple(x.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError(f"{name}: only one of size or scale_factor should be defined")
    if size is not None:
        sizes = (size,) * nd if isinstance(size, (int, np.integer)) else tuple(size)
        if len(sizes) != nd:
            raise ValueError(f"{name}: Input and output must have the same number of spatial "
                             f"dimensions, but got input with spatial dimensions of "
                             f"{list(spatial)} and output size of {list(sizes)}. Please provide "
                             f"input tensor in (N, C, d1, d2, ...,dK) format and output size in "
                             f"(o1, o2, ...,oK) format.")
        return tuple(int(s) for s in sizes), (None,) * nd
    if scale_factor is None:
        raise ValueError(f"{name}: either size or scale_factor should be defined")
    scales = (scale_factor,) * nd if isinstance(scale_factor, numbers.Number) \
        else tuple(scale_factor)
    if len(scales) != nd:
        raise ValueError(f"{name}: Input and scale_factor must have the same number of spatial "
                         f"dimensions, but got input with spatial dimensions of {list(spatial)} "
                         f"and scale_factor of shape {list(scales)}.")
    return tuple(int(math.floor(n * float(s))) for n, s in zip(spatial, scales)), \
        tuple(float(s) for s in scales)


def _src_scale(n_in, n_out, scale, align_corners):
    """Step between source coordinates of consecutive outputs (torch's area_pixel scale)."""
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    if scale is not None and scale > 0:
        return 1.0 / scale
    return n_in / n_out


def _along(x, dim, idx):
    return _ops.IndexSelect.apply(x, np.ascontiguousarray(idx, np.int64), dim=dim)


def _weights_for(w, dim, ndim, dtype):
    shape = [1] * ndim
    shape[dim] = w.size
    return _make(w.astype(dtype).reshape(shape))


def _nearest_dim(x, dim, n_out, scale, exact):
    n_in = x.shape[dim]
    if scale is None and n_out % n_in == 0 and n_out > 0:
        # integer upsampling: repeat each element (expand + reshape backprop as a sum)
        k = n_out // n_in
        shape = list(x.shape)
        y = x.unsqueeze(dim + 1)
        y = y.expand(*shape[:dim + 1], k, *shape[dim + 1:])
        shape[dim] = n_out
        return y.reshape(*shape)
    step = np.float32(1.0 / scale if scale else n_in / n_out)
    pos = np.arange(n_out, dtype=np.float32)
    # torch computes nearest indices in float32; matching that keeps the same rounding
    src = np.floor((pos + np.float32(0.5)) * step) if exact else np.floor(pos * step)
    return _along(x, dim, np.minimum(src.astype(np.int64), n_in - 1))


def _linear_dim(x, dim, n_out, scale, align_corners):
    n_in = x.shape[dim]
    step = _src_scale(n_in, n_out, scale, align_corners)
    pos = np.arange(n_out, dtype=np.float64)
    src = pos * step if align_corners else np.maximum((pos + 0.5) * step - 0.5, 0.0)
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    i1 = np.minimum(i0 + 1, n_in - 1)
    lam = src - i0
    dt = x._data.dtype
    w0 = _weights_for(1.0 - lam, dim, x.ndim, dt)
    w1 = _weights_for(lam, dim, x.ndim, dt)
    return _along(x, dim, i0) * w0 + _along(x, dim, i1) * w1


def _cubic_weights(t, a=-0.75):
    """Keys' cubic convolution weights for taps at offsets -1, 0, 1, 2 from floor(src)."""
    def near(d):  # |d| <= 1
        return ((a + 2) * d - (a + 3)) * d * d + 1

    def far(d):  # 1 < |d| < 2
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a

    return far(t + 1), near(t), near(1 - t), far(2 - t)


def _cubic_dim(x, dim, n_out, scale, align_corners):
    n_in = x.shape[dim]
    step = _src_scale(n_in, n_out, scale, align_corners)
    pos = np.arange(n_out, dtype=np.float64)
    src = pos * step if align_corners else (pos + 0.5) * step - 0.5  # no clamp for cubic
    base = np.floor(src).astype(np.int64)
    ws = _cubic_weights(src - base)
    dt = x._data.dtype
    out = None
    for off, w in zip((-1, 0, 1, 2), ws):
        term = _along(x, dim, np.clip(base + off, 0, n_in - 1)) * _weights_for(w, dim, x.ndim,
                                                                                 dt)
        out = term if out is None else out + term
    return out


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize (N, C, *spatial) input to ``size`` or by ``scale_factor``.

    Modes: 'nearest', 'nearest-exact', 'linear' (3-D), 'bilinear' / 'bicubic' (4-D),
    'trilinear' (5-D), 'area' (adaptive average pooling, 3-D / 4-D). Linear modes map
    coordinates by pixel centres unless ``align_corners=True`` (corner pixels aligned).

    Differs from torch: ``antialias=True`` is not supported (NotImplementedError).

    Example:
        >>> import ember
        >>> interpolate(ember.ones(1, 1, 2, 2), scale_factor=2, mode='bilinear').shape
        ember.Size([1, 1, 4, 4])
    """
    name = "interpolate"
    _check_tensor(input, name)
    if input.ndim not in (3, 4, 5):
        raise NotImplementedError(f"{name}: Input Error: Only 3D, 4D and 5D input Tensors "
                                  f"supported (got {input.ndim}D) for the modes: nearest | "
                                  f"linear | bilinear | bicubic | trilinear | area | "
                                  f"nearest-exact (got {mode})")
    nd = input.ndim - 2
    if mode in ("nearest", "nearest-exact", "area"):
        if align_corners is not None:
            raise ValueError(f"{name}: align_corners option can only be set with the "
                             "interpolating modes: linear | bilinear | bicubic | trilinear")
    elif mode in _LINEAR_MODES:
        if _LINEAR_MODES[mode] != nd:
            raise NotImplementedError(f"{name}: mode {mode!r} needs a "
                                      f"{_LINEAR_MODES[mode] + 2}-D input, got "
                                      f"{input.ndim}-D input {tuple(input.shape)}.")
        align_corners = bool(align_corners)
    else:
        raise NotImplementedError(f"{name}: unknown mode {mode!r}; expected one of nearest, "
                                  "nearest-exact, linear, bilinear, bicubic, trilinear, area.")
    if antialias:
        raise NotImplementedError(f"{name}: antialias=True is not supported by ember.")
    sizes, scales = _interp_sizes(input, size, scale_factor, nd, name)
    if recompute_scale_factor:
        scales = (None,) * nd  # derive the coordinate scale from the rounded output size
    if any(s <= 0 for s in sizes):
        raise RuntimeError(f"{name}: computed output size {sizes} must be positive (input "
                           f"{tuple(input.shape)}).")
    if input.is_floating_point() is False and mode != "nearest":
        raise RuntimeError(f"{name}: mode {mode!r} needs a floating point input, got "
                           f"{input.dtype}.")
    if mode == "area":
        if nd == 1:
            return adaptive_avg_pool1d(input, sizes)
        if nd == 2:
            return adaptive_avg_pool2d(input, sizes)
        raise NotImplementedError(f"{name}: mode 'area' supports 3-D and 4-D inputs only.")
    out = input
    for i in range(nd):
        dim = 2 + i
        if mode in ("nearest", "nearest-exact"):
            if out.shape[dim] != sizes[i] or scales[i] not in (None, 1.0):
                out = _nearest_dim(out, dim, sizes[i], scales[i], mode == "nearest-exact")
        elif mode == "bicubic":
            out = _cubic_dim(out, dim, sizes[i], scales[i], align_corners)
        else:
            out = _linear_dim(out, dim, sizes[i], scales[i], align_corners)
    return out if out is not input else input.clone()


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of :func:`interpolate`."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: interpolate(..., mode='nearest')."""
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: interpolate(..., mode='bilinear', align_corners=True)."""
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def pixel_shuffle(input, upscale_factor):
    """(*, C * r^2, H, W) -> (*, C, H * r, W * r).

    Example:
        >>> import ember
        >>> pixel_shuffle(ember.ones(1, 8, 3, 3), 2).shape
        ember.Size([1, 2, 6, 6])
    """
    name = "pixel_shuffle"
    _check_tensor(input, name)
    r = int(upscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"{name}: expects input to have at least 3 dimensions, but got input "
                           f"with {input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"{name}: upscale_factor must be greater than 0, but got {r}")
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"{name}: expects its input's 'channel' dimension to be divisible by "
                           f"the square of upscale_factor, but input.size(-3)={c} is not "
                           f"divisible by {r * r}")
    n = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H * r, W * r) -> (*, C * r^2, H, W), the inverse of pixel_shuffle."""
    name = "pixel_unshuffle"
    _check_tensor(input, name)
    r = int(downscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"{name}: expects input to have at least 3 dimensions, but got input "
                           f"with {input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"{name}: downscale_factor must be greater than 0, but got {r}")
    *lead, c, h, w = input.shape
    if h % r or w % r:
        raise RuntimeError(f"{name}: expects height and width to be divisible by "
                           f"downscale_factor={r}, but got input of shape {tuple(input.shape)}")
    n = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


def channel_shuffle(input, groups):
    """Interleave channel groups: (N, g * k, *) viewed as (N, g, k, *) -> (N, k, g, *)."""
    name = "channel_shuffle"
    _check_tensor(input, name)
    g = int(groups)
    if input.ndim < 3:
        raise RuntimeError(f"{name}: expects input to have at least 3 dimensions, but got input "
                           f"with {input.ndim} dimension(s)")
    if g <= 0:
        raise ValueError(f"{name}: Number of groups to divide channels in must be positive. "
                         f"Value of groups:{g}")
    n, c, *rest = input.shape
    if c % g:
        raise RuntimeError(f"{name}: Number of channels must be divisible by groups. Got {c} "
                           f"channels and {g} groups.")
    x = input.reshape(n, g, c // g, *rest).transpose(1, 2)
    return x.reshape(n, c, *rest)


# ---------------------------------------------------------------------------------------------
# sampling grids


def affine_grid(theta, size, align_corners=None):
    """Sampling grid (N, H, W, 2) (or (N, D, H, W, 3)) for affine matrices theta (N, 2, 3).

    Example:
        >>> import ember
        >>> affine_grid(ember.eye(2, 3).unsqueeze(0), (1, 1, 2, 3), align_corners=False).shape
        ember.Size([1, 2, 3, 2])
    """
    name = "affine_grid"
    _check_tensor(theta, name, "theta")
    size = tuple(int(s) for s in size)
    if not theta.is_floating_point():
        raise ValueError(f"{name}: Expected theta to have floating point type, but got "
                         f"{theta.dtype}")
    nd = len(size) - 2
    if nd not in (2, 3):
        raise NotImplementedError(f"{name}: only supports 4D and 5D sizes, for 2D and 3D affine "
                                  f"transforms, respectively. Got size {size}.")
    if theta.ndim != 3 or tuple(theta.shape[1:]) != (nd, nd + 1) or theta.shape[0] != size[0]:
        raise ValueError(f"{name}: Expected a batch of {nd}D affine matrices of shape Nx{nd}x"
                         f"{nd + 1} for size {size}. Got {tuple(theta.shape)}.")
    if min(size[2:]) <= 0:
        raise ValueError(f"{name}: Expected non-zero, positive output size. Got {size}")
    dt = theta._data.dtype
    axes = []
    for n in reversed(size[2:]):  # x (width) first
        lin = np.linspace(-1.0, 1.0, n) if n > 1 else np.zeros(1)
        if not align_corners:
            lin = lin * (n - 1) / n
        axes.append(lin)
    mesh = np.meshgrid(*reversed(axes), indexing="ij")  # spatial order D, H, W
    coords = [m for m in reversed(mesh)] + [np.ones_like(mesh[0])]
    base = _make(np.stack(coords, axis=-1).reshape(1, -1, nd + 1).astype(dt))
    grid = base.matmul(theta.transpose(1, 2))  # (N, prod(spatial), nd)
    return grid.reshape(size[0], *size[2:], nd)


def _unnormalize(coord, n, align_corners):
    if align_corners:
        return (coord + 1) * ((n - 1) / 2)
    return ((coord + 1) * n - 1) / 2


def _reflect_coords(coord, lo, hi):
    """Reflect coordinates into [lo, hi] (differentiable: a sign flip and a shift per fold)."""
    span = hi - lo
    if span <= 0:
        return coord * 0
    x = (coord - lo).abs()
    flips = (x / span).floor().detach()
    extra = x - flips * span
    even = (flips._data % 2) == 0
    return _where(even, extra + lo, span - extra + lo)


def _where(cond_array, a, b):
    from ..ops.indexing import where
    return where(_make(np.asarray(cond_array)), a, b)


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample input (N, C, H, W) at grid (N, Ho, Wo, 2) locations in [-1, 1] (x, y order).

    Modes 'bilinear' and 'nearest'; padding 'zeros', 'border', 'reflection'. Gradients flow to
    both input and grid.

    Differs from torch: 5-D (volumetric) input and mode='bicubic' are not supported.

    Example:
        >>> import ember
        >>> g = affine_grid(ember.eye(2, 3).unsqueeze(0), (1, 1, 3, 3), align_corners=True)
        >>> x = ember.arange(9.).reshape(1, 1, 3, 3)
        >>> bool((grid_sample(x, g, align_corners=True) - x).abs().max() < 1e-6)
        True
    """
    name = "grid_sample"
    _check_tensor(input, name)
    _check_tensor(grid, name, "grid")
    if mode not in ("bilinear", "nearest"):
        raise NotImplementedError(f"{name}: mode {mode!r} is not supported; expected "
                                  "'bilinear' or 'nearest'.")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"{name}: expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: {padding_mode!r}")
    if input.ndim != 4 or grid.ndim != 4 or grid.shape[-1] != 2 or \
            grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"{name}: expected 4-D input (N, C, H, W) and grid (N, H_out, W_out, "
                           f"2) with the same N; got input {tuple(input.shape)} and grid "
                           f"{tuple(grid.shape)}.")
    if input.dtype != grid.dtype:
        raise RuntimeError(f"{name}: expected input and grid to have the same dtype, but input "
                           f"has {input.dtype} and grid has {grid.dtype}")
    n, c, h, w = input.shape
    ix, iy = _grid_coords(grid, h, w, padding_mode, bool(align_corners))
    tap = _tapper(input, grid.shape[1], grid.shape[2])
    if mode == "nearest":
        # round half to even, like torch's nearbyint
        xs, ys = np.round(ix._data).astype(np.int64), np.round(iy._data).astype(np.int64)
        vals, valid = tap(ys, xs)
        out = vals * _make(valid[:, None].astype(input._data.dtype))
        if grid.requires_grad:  # a zero gradient for grid, as torch reports
            out = out + (ix.sum() + iy.sum()) * 0
        return out
    x0 = np.floor(ix._data).astype(np.int64)
    y0 = np.floor(iy._data).astype(np.int64)
    fx = ix - _make(x0.astype(ix._data.dtype))  # differentiable fractional parts
    fy = iy - _make(y0.astype(iy._data.dtype))
    out = None
    for dy, wy in ((0, 1 - fy), (1, fy)):
        for dx, wx in ((0, 1 - fx), (1, fx)):
            vals, valid = tap(y0 + dy, x0 + dx)
            weight = (wy * wx) * _make(valid.astype(input._data.dtype))
            term = vals * weight.unsqueeze(1)
            out = term if out is None else out + term
    return out


def _grid_coords(grid, h, w, padding_mode, align_corners):
    """Pixel coordinates (ix, iy) of the grid points after the padding mode's folding."""
    ix = _unnormalize(grid[..., 0], w, align_corners)
    iy = _unnormalize(grid[..., 1], h, align_corners)
    if padding_mode == "reflection":
        if align_corners:
            ix, iy = _reflect_coords(ix, 0, w - 1), _reflect_coords(iy, 0, h - 1)
        else:
            ix, iy = _reflect_coords(ix, -0.5, w - 0.5), _reflect_coords(iy, -0.5, h - 0.5)
    if padding_mode in ("border", "reflection"):
        ix, iy = ix.clamp(0, w - 1), iy.clamp(0, h - 1)
    return ix, iy


def _tapper(input, ho, wo):
    """tap(yy, xx): input at integer index arrays (N, Ho, Wo) (zero outside) and validity."""
    n, c, h, w = input.shape
    flat = input.reshape(n, c, h * w)

    def tap(yy, xx):
        valid = (yy >= 0) & (yy < h) & (xx >= 0) & (xx < w)
        at = (np.clip(yy, 0, h - 1) * w + np.clip(xx, 0, w - 1)).reshape(n, 1, ho * wo)
        vals = flat.gather(2, _make(np.ascontiguousarray(np.broadcast_to(at, (n, c, ho * wo)))))
        return vals.reshape(n, c, ho, wo), valid

    return tap


# ---------------------------------------------------------------------------------------------
# attention


def _softmax(x, dim):
    """Numerically stable softmax; rows that are entirely -inf give NaN, as in torch."""
    shift = x.amax(dim=dim, keepdim=True).detach()
    e = (x - shift).exp()
    return e / e.sum(dim=dim, keepdim=True)


def _dropout(x, p, training=True):
    if p == 0.0 or not training:
        return x
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 1.0:
        return x * 0
    from .. import rand
    keep = _make((rand(*x.shape)._data >= p).astype(x._data.dtype) / (1.0 - p))
    return x * keep


def _repeat_heads(x, times):
    """(..., Hkv, S, E) -> (..., Hkv * times, S, E), each head repeated ``times`` in a row."""
    if times == 1:
        return x
    *lead, hk, s, e = x.shape
    return x.unsqueeze(-3).expand(*lead, hk, times, s, e).reshape(*lead, hk * times, s, e)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """softmax(Q K^T * scale + mask) V over (..., L, E) queries and (..., S, E) keys/values.

    attn_mask: bool (True = may attend) or float (added to the scores), broadcastable to
    (..., L, S). is_causal: mask out keys after each query (cannot combine with attn_mask).

    Example:
        >>> import ember
        >>> q = ember.ones(2, 3, 4)
        >>> scaled_dot_product_attention(q, q, q).shape
        ember.Size([2, 3, 4])
    """
    name = "scaled_dot_product_attention"
    for t, arg in ((query, "query"), (key, "key"), (value, "value")):
        _check_tensor(t, name, arg)
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError(f"{name}: query, key and value must be at least 2-D; got "
                           f"{tuple(query.shape)}, {tuple(key.shape)}, {tuple(value.shape)}.")
    if query.dtype != key.dtype or query.dtype != value.dtype:
        raise RuntimeError(f"{name}: Expected query, key, and value to have the same dtype, but "
                           f"got query.dtype: {query.dtype} key.dtype: {key.dtype} and "
                           f"value.dtype: {value.dtype} instead.")
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise RuntimeError(f"{name}: expected query (..., L, E), key (..., S, E) and value "
                           f"(..., S, Ev); got {tuple(query.shape)}, {tuple(key.shape)}, "
                           f"{tuple(value.shape)}.")
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        hq, hk = query.shape[-3], key.shape[-3]
        if hq % hk or value.shape[-3] != hk:
            raise RuntimeError(f"{name}: with enable_gqa the number of query heads ({hq}) must "
                               f"be a multiple of the key/value heads ({hk}, {value.shape[-3]}).")
        key, value = _repeat_heads(key, hq // hk), _repeat_heads(value, hq // hk)
    L, S = query.shape[-2], key.shape[-2]
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    scores = query.matmul(key.transpose(-2, -1)) * scale
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError(f"{name}: _scaled_dot_product_attention: Explicit attn_mask "
                               "should not be set when is_causal=True")
        attn_mask = _make(np.tril(np.ones((L, S), dtype=bool)))
    if attn_mask is not None:
        _check_tensor(attn_mask, name, "attn_mask")
        try:
            np.broadcast_shapes(attn_mask.shape, scores.shape)
        except ValueError:
            raise RuntimeError(f"{name}: attn_mask of shape {tuple(attn_mask.shape)} does not "
                               f"broadcast to the attention scores (..., L, S) = "
                               f"{tuple(scores.shape)}.") from None
        if attn_mask.dtype == D.bool_:
            scores = scores.masked_fill(attn_mask.logical_not(), float("-inf"))
        else:
            scores = scores + attn_mask.to(scores.dtype)
    weights = _dropout(_softmax(scores, -1), dropout_p)
    return weights.matmul(value)


def _canonical_mask(mask, name, arg, dtype):
    """A key padding / attention mask as float (bool True -> -inf: not allowed to attend)."""
    if mask is None:
        return None
    _check_tensor(mask, name, arg)
    if mask.dtype == D.bool_:
        return _make(np.where(mask._data, -np.inf, 0.0).astype(dtype.np))
    if not mask.is_floating_point():
        raise AssertionError(f"{name}: only bool and floating types of {arg} are supported; "
                             f"got {mask.dtype}.")
    return mask.to(dtype)


def _in_projection(query, key, value, w, b, sep, embed_dim):
    from ..ops.linalg import matmul

    def lin(x, weight, bias):
        y = matmul(x, weight.t())
        return y if bias is None else y + bias

    bq = bk = bv = None
    if b is not None:
        bq, bk, bv = b[:embed_dim], b[embed_dim:2 * embed_dim], b[2 * embed_dim:]
    if sep is None:
        wq, wk, wv = w[:embed_dim], w[embed_dim:2 * embed_dim], w[2 * embed_dim:]
    else:
        wq, wk, wv = sep
    return lin(query, wq, bq), lin(key, wk, bk), lin(value, wv, bv)


def _check_mha_masks(attn_mask, key_padding_mask, tgt_len, src_len, bsz, num_heads, name):
    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"{name}: The shape of the 2D attn_mask is "
                                   f"{tuple(attn_mask.shape)}, but should be "
                                   f"{(tgt_len, src_len)} (L, S).")
        elif attn_mask.ndim == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"{name}: The shape of the 3D attn_mask is "
                                   f"{tuple(attn_mask.shape)}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)} (N * num_heads, L, S).")
        else:
            raise RuntimeError(f"{name}: attn_mask's dimension {attn_mask.ndim} is not "
                               "supported; expected a 2-D (L, S) or 3-D (N * num_heads, L, S) "
                               "mask.")
    if key_padding_mask is not None and tuple(key_padding_mask.shape) != (bsz, src_len):
        raise RuntimeError(f"{name}: expected key_padding_mask of shape {(bsz, src_len)} "
                           f"(N, S), got {tuple(key_padding_mask.shape)}.")


def _check_mha_inputs(query, key, value, embed_dim_to_check, num_heads, is_causal, attn_mask,
                      key_padding_mask, name):
    """Shape checks of multi_head_attention_forward on batched (L, N, E) inputs."""
    tgt_len, bsz, embed_dim = query.shape
    if embed_dim != embed_dim_to_check:
        raise RuntimeError(f"{name}: was expecting embedding dimension of {embed_dim_to_check}, "
                           f"but got {embed_dim} (query shape {tuple(query.shape)}).")
    if key.shape[:2] != value.shape[:2] or key.shape[1] != bsz:
        raise RuntimeError(f"{name}: key shape {tuple(key.shape)} does not match value shape "
                           f"{tuple(value.shape)} / batch size {bsz}.")
    if is_causal and attn_mask is None:
        raise RuntimeError(f"{name}: Need attn_mask if specifying the is_causal hint.")
    if (embed_dim // num_heads) * num_heads != embed_dim:
        raise AssertionError(f"{name}: embed_dim {embed_dim} not divisible by num_heads "
                             f"{num_heads}")
    _check_mha_masks(attn_mask, key_padding_mask, tgt_len, key.shape[0], bsz, num_heads, name)


def _append_key(k, v, extra_k, extra_v, masks, dim):
    """Append one key / value position along ``dim``; masks grow by a zero (allowed) column."""
    from ..ops.movement import cat
    for i, m in enumerate(masks):
        masks[i] = None if m is None else pad(m, (0, 1))
    return cat([k, extra_k], dim=dim), cat([v, extra_v], dim=dim)


def _merge_masks(attn_mask, key_padding_mask, bsz, num_heads, src_len):
    """One additive (N * H, L or 1, S) mask from the float attention and key padding masks."""
    if key_padding_mask is None:
        return attn_mask
    kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(bsz, num_heads, 1, src_len)
    kpm = kpm.reshape(bsz * num_heads, 1, src_len)
    return kpm if attn_mask is None else attn_mask + kpm


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """Multi-head attention on sequence-first (L, N, E) inputs (or unbatched (L, E)).

    Masks follow nn.MultiheadAttention: a bool mask marks with True the positions that may NOT
    be attended; a float mask is added to the scores. Returns (output, weights or None).

    Differs from torch: static_k / static_v are not supported.
    """
    name = "MultiheadAttention"
    if static_k is not None or static_v is not None:
        raise NotImplementedError(f"{name}: static_k / static_v are not supported by ember.")
    batched = query.ndim == 3
    if query.ndim not in (2, 3) or key.ndim != query.ndim or value.ndim != query.ndim:
        raise RuntimeError(f"{name}: expected query, key, value all 3-D (L, N, E) (or 2-D "
                           f"unbatched (L, E)); got {tuple(query.shape)}, {tuple(key.shape)}, "
                           f"{tuple(value.shape)}.")
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    _check_mha_inputs(query, key, value, embed_dim_to_check, num_heads, is_causal, attn_mask,
                      key_padding_mask, name)
    head_dim = embed_dim // num_heads
    dt = query.dtype
    attn_mask = _canonical_mask(attn_mask, name, "attn_mask", dt)
    key_padding_mask = _canonical_mask(key_padding_mask, name, "key_padding_mask", dt)
    sep = (q_proj_weight, k_proj_weight, v_proj_weight) if use_separate_proj_weight else None
    q, k, v = _in_projection(query, key, value, in_proj_weight, in_proj_bias, sep, embed_dim)
    masks = [attn_mask, key_padding_mask]
    if bias_k is not None and bias_v is not None:
        k, v = _append_key(k, v, bias_k.reshape(1, 1, embed_dim).expand(1, bsz, embed_dim),
                           bias_v.reshape(1, 1, embed_dim).expand(1, bsz, embed_dim), masks, 0)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    v = v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    if add_zero_attn:
        zero = _make(np.zeros((bsz * num_heads, 1, head_dim), dt.np))
        k, v = _append_key(k, v, zero, zero, masks, 1)
    src_len = k.shape[1]
    attn_mask = _merge_masks(masks[0], masks[1], bsz, num_heads, src_len)
    if not training:
        dropout_p = 0.0
    scores = q.matmul(k.transpose(1, 2)) * (1.0 / math.sqrt(head_dim))
    if attn_mask is not None:
        scores = scores + attn_mask
    # the returned weights are the dropped-out ones, as torch returns them
    weights = _dropout(_softmax(scores, -1), dropout_p)
    out = weights.matmul(v)  # (N * H, L, hd)
    out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    out = out.matmul(out_proj_weight.t())
    if out_proj_bias is not None:
        out = out + out_proj_bias
    out = out.reshape(tgt_len, bsz, embed_dim)
    if not batched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
    if average_attn_weights:
        weights = weights.mean(dim=1)
    if not batched:
        weights = weights.squeeze(0)
    return out, weights
