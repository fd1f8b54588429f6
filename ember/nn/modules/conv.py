"""Convolution layers: Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d."""
from __future__ import annotations

import math

from ... import _dtype as D
from ... import empty
from .. import functional as F
from .. import init
from ..functional import _conv as _Fconv
from ..parameter import Parameter
from .module import Module, check_sizes

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _ntuple(value, n):
    """An int as an n-tuple; a sequence as a tuple of its ints, whatever its length. torch keeps
    a layer's sequence as given (`Conv2d(..., stride=[2]).stride == (2,)`, which stands for every
    dim, see _at; EfficientNet-PyTorch builds its convs so) and its kernels check the length at
    forward: `Conv1d(2, 3, 3, padding=(1, 2))` is built and its call raises RuntimeError
    (functional._utils._conv_arg), as does a kernel_size of another rank (the weight's dims)."""
    if isinstance(value, (tuple, list)):
        return tuple(int(v) for v in value)
    return (int(value),) * n


def _at(values: tuple, i: int) -> int:
    """Dim i's entry of a stride/padding/dilation tuple (a one-element tuple covers all dims)."""
    return values[0] if len(values) == 1 else values[i]


class _ConvNd(Module):
    """Shared state and initialisation of the convolution layers."""

    _nd = 2
    _transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 groups, bias, padding_mode, output_padding=0, device=None, dtype=None):
        super().__init__()
        name = type(self).__name__
        nd = self._nd
        check_sizes(name, in_channels=in_channels, out_channels=out_channels,
                    kernel_size=_ntuple(kernel_size, nd))
        if groups <= 0:
            raise ValueError(f"{name}: groups must be a positive integer, got {groups}")
        if in_channels % groups:
            raise ValueError(f"{name}: in_channels must be divisible by groups; got "
                             f"in_channels={in_channels}, groups={groups}")
        if out_channels % groups:
            raise ValueError(f"{name}: out_channels must be divisible by groups; got "
                             f"out_channels={out_channels}, groups={groups}")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"{name}: padding_mode must be one of {_PADDING_MODES}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = _ntuple(kernel_size, nd)
        self.stride = _ntuple(stride, nd)
        self.dilation = _ntuple(dilation, nd)
        self.output_padding = _ntuple(output_padding, nd)
        self.transposed = self._transposed
        self.padding_mode = padding_mode
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"{name}: Invalid padding string {padding!r}, should be one of "
                                 "{'valid', 'same'}")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError(f"{name}: padding='same' is not supported for strided "
                                 "convolutions")
            self.padding = padding
        else:
            self.padding = _ntuple(padding, nd)
        self._reversed_padding_repeated_twice = self._reversed_padding()
        dt = D.get_default_dtype() if dtype is None else D.to_dtype(dtype)
        if self._transposed:
            shape = (in_channels, out_channels // groups) + self.kernel_size
        else:
            shape = (out_channels, in_channels // groups) + self.kernel_size
        self.weight = Parameter(empty(*shape, dtype=dt))
        if bias:
            self.bias = Parameter(empty(out_channels, dtype=dt))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def _reversed_padding(self):
        """F.pad amounts (last dim first) that a non-zeros padding_mode applies explicitly.
        A one-element padding tuple pads only the last dim here, as torch's (its F.pad then
        refuses a batched input: 2 amounts for a 4-D input), though it covers every dim of a
        'zeros' convolution."""
        if not isinstance(self.padding, str):
            return [p for p in reversed(self.padding) for _ in range(2)]
        out = []
        # over the kernel's dims (a layer may hold a kernel_size of another rank until forward
        # refuses it); a dilation of another length covers only the dims both give, as torch's
        dims = len(self.kernel_size)
        if len(self.dilation) != 1:
            dims = min(dims, len(self.dilation))
        for i in reversed(range(dims)):
            if self.padding == "valid":
                lo = hi = 0
            else:  # "same"
                total = _at(self.dilation, i) * (self.kernel_size[i] - 1)
                lo, hi = total // 2, total - total // 2
            out += [lo, hi]
        return out

    def reset_parameters(self):
        """PyTorch's default: kaiming_uniform_(a=sqrt(5)) weight, U(+-1/sqrt(fan_in)) bias."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.weight.shape[1] * math.prod(self.kernel_size)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"


class _Conv(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device=device, dtype=dtype)

    def _conv_forward(self, input, weight, bias):
        name = type(self).__name__
        if self.padding_mode != "zeros":
            # explicit padding of the (possibly unbatched) input, then a 'valid' convolution
            x = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode) \
                if input.ndim in (self._nd + 1, self._nd + 2) else input
            return _Fconv._conv(x, weight, bias, self.stride, 0, self.dilation, self.groups,
                                self._nd, name)
        return _Fconv._conv(input, weight, bias, self.stride, self.padding, self.dilation,
                            self.groups, self._nd, name)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-D convolution over (N, C_in, L) or unbatched (C_in, L) input.

    Args:
        in_channels, out_channels, kernel_size, stride=1, padding=0 (int, tuple, 'valid' or
        'same'), dilation=1, groups=1, bias=True, padding_mode='zeros' ('reflect',
        'replicate', 'circular').

    Shape:
        input (N, C_in, L) -> output (N, C_out, L_out),
        L_out = (L + 2 * padding - dilation * (kernel_size - 1) - 1) // stride + 1.

    Example:
        >>> import ember
        >>> Conv1d(4, 8, 3, padding=1)(ember.randn(2, 4, 10)).shape
        ember.Size([2, 8, 10])
    """

    _nd = 1


class Conv2d(_Conv):
    """2-D convolution over (N, C_in, H, W) or unbatched (C_in, H, W) input.

    Args:
        in_channels, out_channels, kernel_size, stride=1, padding=0 (int, tuple, 'valid' or
        'same'), dilation=1, groups=1 (groups == in_channels: depthwise), bias=True,
        padding_mode='zeros' ('reflect', 'replicate', 'circular').

    Shape:
        input (N, C_in, H, W) -> output (N, C_out, H_out, W_out),
        H_out = (H + 2 * padding[0] - dilation[0] * (kernel_size[0] - 1) - 1) // stride[0] + 1.

    Example:
        >>> import ember
        >>> Conv2d(3, 16, 3, stride=2, padding=1)(ember.randn(1, 3, 32, 32)).shape
        ember.Size([1, 16, 16, 16])
    """

    _nd = 2


class _ConvTranspose(_ConvNd):
    _transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f"{type(self).__name__}")
        if isinstance(padding, str):
            raise ValueError(f"{type(self).__name__}: padding must be an int or a tuple, got "
                             f"{padding!r}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, output_padding=output_padding,
                         device=device, dtype=dtype)

    def _output_padding(self, input, output_size):
        """output_padding that produces ``output_size`` (torch's rule and range check)."""
        if output_size is None:
            return self.output_padding
        nd = self._nd
        sizes = [int(s) for s in output_size]
        if len(sizes) == nd + 2 or (len(sizes) == nd + 1 and input.ndim == nd + 1):
            sizes = sizes[-nd:]
        if len(sizes) != nd:
            raise ValueError(f"{type(self).__name__}: output_size must have {nd} or {nd + 2} "
                             f"elements (got {len(output_size)})")
        spatial = input.shape[-nd:]
        out = []
        for i in range(nd):
            stride = _at(self.stride, i)
            lo = ((spatial[i] - 1) * stride - 2 * _at(self.padding, i)
                  + _at(self.dilation, i) * (self.kernel_size[i] - 1) + 1)
            hi = lo + stride - 1
            if not lo <= sizes[i] <= hi:
                raise ValueError(f"{type(self).__name__}: requested an output size of {sizes}, "
                                 f"but valid sizes range from {lo} to {hi} (for an input of "
                                 f"{list(spatial)}) in dim {i}")
            out.append(sizes[i] - lo)
        return tuple(out)

    def forward(self, input, output_size=None):
        out_pad = self._output_padding(input, output_size)
        return _Fconv._conv_transpose(input, self.weight, self.bias, self.stride, self.padding,
                                      out_pad, self.groups, self.dilation, self._nd,
                                      type(self).__name__)


class ConvTranspose1d(_ConvTranspose):
    """1-D transposed convolution over (N, C_in, L) or (C_in, L) input.

    Shape:
        L_out = (L - 1) * stride - 2 * padding + dilation * (kernel_size - 1)
        + output_padding + 1.

    Example:
        >>> import ember
        >>> ConvTranspose1d(4, 2, 3, stride=2)(ember.randn(1, 4, 5)).shape
        ember.Size([1, 2, 11])
    """

    _nd = 1


class ConvTranspose2d(_ConvTranspose):
    """2-D transposed convolution over (N, C_in, H, W) or (C_in, H, W) input.

    ``forward(input, output_size=None)``: output_size picks among the sizes a strided
    transposed convolution can produce.

    Example:
        >>> import ember
        >>> ConvTranspose2d(4, 2, 3, stride=2, padding=1)(ember.randn(1, 4, 5, 5)).shape
        ember.Size([1, 2, 9, 9])
    """

    _nd = 2


class Conv3d(_Conv):
    """3-D convolution over (N, C_in, D, H, W) or unbatched (C_in, D, H, W) input
    (NOTE [3-D ops from 2-D slices] in nn/functional/_volume.py).

    Example:
        >>> import ember
        >>> Conv3d(2, 4, 3, padding=1)(ember.randn(1, 2, 4, 6, 6)).shape
        ember.Size([1, 4, 4, 6, 6])
    """

    _nd = 3

    def _conv_forward(self, input, weight, bias):
        if self.padding_mode != "zeros":
            x = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return F.conv3d(x, weight, bias, self.stride, 0, self.dilation, self.groups)
        return F.conv3d(input, weight, bias, self.stride, self.padding, self.dilation,
                        self.groups)


class ConvTranspose3d(_ConvTranspose):
    """3-D transposed convolution over (N, C_in, D, H, W) or (C_in, D, H, W) input.

    Example:
        >>> import ember
        >>> ConvTranspose3d(2, 4, 2, stride=2)(ember.randn(1, 2, 3, 3, 3)).shape
        ember.Size([1, 4, 6, 6, 6])
    """

    _nd = 3

    def forward(self, input, output_size=None):
        out_pad = self._output_padding(input, output_size)
        return F.conv_transpose3d(input, self.weight, self.bias, self.stride, self.padding,
                                  out_pad, self.groups, self.dilation)
