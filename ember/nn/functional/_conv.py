"""Convolution of ``ember.nn.functional``: conv, conv_transpose, unfold and fold.

The ops are ``Op`` classes in ``ember/ops/nn/conv.py`` that call numba kernels; 1-D convolution
runs through the 2-D ops with a height of one.
"""
from __future__ import annotations

import numpy as np

from ...amp import _state as _amp
from ...ops.nn import conv as _ops
from ._resize import pad
from ._utils import (
    _check_float,
    _check_tensor,
    _conv_arg,
    _finish_unbatched,
    _spatial_input,
    _tuple,
)

__all__ = [
    "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "unfold", "fold",
]


# ---------------------------------------------------------------------------------------------
# convolution


def _same_padding(kernel, dilation, stride, name):
    """'same' padding per dim as (left, right); torch puts an odd extra element on the right."""
    if any(s != 1 for s in stride):
        raise RuntimeError(f"{name}: padding='same' is not supported for strided convolutions; "
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
    pads = _conv_arg(padding, nd, name, "padding")
    if any(p < 0 for p in pads):
        raise RuntimeError(f"{name}: negative padding is not supported; got padding={pads}.")
    return pads, None


def _conv_checks(x, weight, bias, groups, nd, name, transposed=False, batched=True):
    _check_tensor(name, weight, "weight")
    if weight.ndim != nd + 2:
        raise RuntimeError(f"{name}: expected a {nd + 2}-D weight, got weight of shape "
                           f"{tuple(weight.shape)}.")
    if not isinstance(groups, (int, np.integer)) or groups <= 0:
        raise RuntimeError(f"{name}: non-positive groups is not supported; got groups={groups}.")
    if x.dtype != weight.dtype or (bias is not None and bias.dtype != x.dtype):
        bt = "" if bias is None else f", bias {bias.dtype}"
        raise RuntimeError(f"{name}: Input type ({x.dtype}) and weight type ({weight.dtype}"
                           f"{bt}) should be the same; cast them with .to(dtype).")
    _check_float(name, x)
    if 0 in weight._data.shape[2:]:
        raise RuntimeError(f"{name}: kernel size should be greater than zero, but got "
                           f"{tuple(weight.shape[2:])} (the weight's trailing dims)")
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
    stride = _conv_arg(stride, nd, name, "stride")
    dilation = _conv_arg(dilation, nd, name, "dilation")
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
    stride = _conv_arg(stride, nd, name, "stride")
    padding = _conv_arg(padding, nd, name, "padding")
    dilation = _conv_arg(dilation, nd, name, "dilation")
    out_pad = _conv_arg(output_padding, nd, name, "output_padding")
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
    _check_float(name, x)
    return _finish_unbatched(_ops.Unfold.apply(x, k, d, p, s), batched)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Combine sliding blocks (N, C * kh * kw, L) into (N, C, H, W), summing overlaps (col2im).

    Example:
        >>> import ember
        >>> fold(ember.ones(1, 8, 9), (4, 4), 2).shape
        ember.Size([1, 2, 4, 4])
    """
    name = "fold"
    _check_tensor(name, input)
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
    _check_float(name, x)
    return _finish_unbatched(_ops.Fold.apply(x, out, k, d, p, s), batched)
