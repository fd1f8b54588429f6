"""Pooling layers: max, average, adaptive, unpooling and power-average (LP) pooling."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d",
           "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "MaxUnpool1d",
           "MaxUnpool2d", "LPPool1d", "LPPool2d", "MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d",
           "AdaptiveMaxPool3d", "MaxUnpool3d", "LPPool3d", "FractionalMaxPool2d",
           "FractionalMaxPool3d"]


class _MaxPoolNd(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """1-D max pooling over (N, C, L) or (C, L).

    Args:
        kernel_size, stride=kernel_size, padding=0 (acts as -inf), dilation=1,
        return_indices=False (also return argmax positions for MaxUnpool1d), ceil_mode=False.

    Example:
        >>> import ember
        >>> MaxPool1d(2)(ember.arange(6.).reshape(1, 1, 6))
        tensor([[[1., 3., 5.]]])
    """

    def forward(self, input):
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool2d(_MaxPoolNd):
    """2-D max pooling over (N, C, H, W) or (C, H, W).

    Args:
        kernel_size, stride=kernel_size, padding=0 (acts as -inf), dilation=1,
        return_indices=False (also return flat H*W argmax offsets for MaxUnpool2d),
        ceil_mode=False (round the output size up).

    Shape:
        H_out = (H + 2 * padding - dilation * (kernel_size - 1) - 1) / stride + 1, floored
        (ceiled with ceil_mode).

    Example:
        >>> import ember
        >>> MaxPool2d(2)(ember.randn(1, 3, 8, 8)).shape
        ember.Size([1, 3, 4, 4])
    """

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class _AvgPoolNd(Module):
    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """1-D average pooling over (N, C, L) or (C, L).

    Args:
        kernel_size, stride=kernel_size, padding=0, ceil_mode=False,
        count_include_pad=True (the zero padding counts in the divisor).

    Example:
        >>> import ember
        >>> AvgPool1d(2)(ember.arange(4.).reshape(1, 1, 4))
        tensor([[[0.5000, 2.5000]]])
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class AvgPool2d(_AvgPoolNd):
    """2-D average pooling over (N, C, H, W) or (C, H, W).

    Args:
        kernel_size, stride=kernel_size, padding=0, ceil_mode=False, count_include_pad=True,
        divisor_override=None (divide every window sum by this instead).

    Example:
        >>> import ember
        >>> AvgPool2d(2)(ember.ones(1, 1, 4, 4))
        tensor([[[[1., 1.],
                  [1., 1.]]]])
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


def _single(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,)


def _ntuple(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


class _AdaptiveNd(Module):
    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveNd):
    """Average pooling of (N, C, L) to a fixed length L_out = output_size.

    Example:
        >>> import ember
        >>> AdaptiveAvgPool1d(2)(ember.arange(4.).reshape(1, 1, 4))
        tensor([[[0.5000, 2.5000]]])
    """

    def __init__(self, output_size):
        super().__init__(output_size)

    def forward(self, input):
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(_AdaptiveNd):
    """Average pooling of (N, C, H, W) to a fixed (H_out, W_out); None keeps the input size.

    Example:
        >>> import ember
        >>> AdaptiveAvgPool2d((1, 1))(ember.randn(2, 8, 7, 7)).shape
        ember.Size([2, 8, 1, 1])
    """

    def __init__(self, output_size):
        super().__init__(output_size)

    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)


class AdaptiveMaxPool1d(_AdaptiveNd):
    """Max pooling of (N, C, L) to a fixed length; return_indices also gives the argmax.

    Example:
        >>> import ember
        >>> AdaptiveMaxPool1d(2)(ember.arange(4.).reshape(1, 1, 4))
        tensor([[[1., 3.]]])
    """

    def forward(self, input):
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveNd):
    """Max pooling of (N, C, H, W) to a fixed (H_out, W_out).

    Example:
        >>> import ember
        >>> AdaptiveMaxPool2d(1)(ember.randn(2, 8, 7, 7)).shape
        ember.Size([2, 8, 1, 1])
    """

    def forward(self, input):
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class _MaxUnpoolNd(Module):
    _dims = 1

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        # stored as tuples of _dims entries, as torch does (its repr shows kernel_size=(2,))
        self.kernel_size = _ntuple(kernel_size, self._dims)
        self.stride = _ntuple(stride if stride is not None else kernel_size, self._dims)
        self.padding = _ntuple(padding, self._dims)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """Inverse of MaxPool1d: maxima put back at their indices, zeros elsewhere.

    ``forward(input, indices, output_size=None)``.

    Example:
        >>> import ember
        >>> y, i = MaxPool1d(2, return_indices=True)(ember.arange(4.).reshape(1, 1, 4))
        >>> MaxUnpool1d(2)(y, i)
        tensor([[[0., 1., 0., 3.]]])
    """

    def forward(self, input, indices, output_size=None):
        return F.max_unpool1d(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)


class MaxUnpool2d(_MaxUnpoolNd):
    """Inverse of MaxPool2d: maxima put back at their indices, zeros elsewhere.

    ``forward(input, indices, output_size=None)``; output_size resolves the ambiguity of
    strided pooling (e.g. 7 and 8 both pool to 3 with stride 2).

    Example:
        >>> import ember
        >>> pool, unpool = MaxPool2d(2, return_indices=True), MaxUnpool2d(2)
        >>> y, i = pool(ember.randn(1, 1, 4, 4))
        >>> unpool(y, i).shape
        ember.Size([1, 1, 4, 4])
    """

    _dims = 2

    def forward(self, input, indices, output_size=None):
        return F.max_unpool2d(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)


class _LPPoolNd(Module):
    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """Power-average pooling (sum of x^p over each window)^(1/p) over (N, C, L).

    Example:
        >>> import ember
        >>> LPPool1d(2, 2)(ember.tensor([[[3., 4.]]]))
        tensor([[[5.]]])
    """

    def forward(self, input):
        return F.lp_pool1d(input, float(self.norm_type), self.kernel_size, self.stride,
                           self.ceil_mode)


class LPPool2d(_LPPoolNd):
    """Power-average pooling over 2-D windows of (N, C, H, W).

    Example:
        >>> import ember
        >>> LPPool2d(1, 2)(ember.ones(1, 1, 2, 2))
        tensor([[[[4.]]]])
    """

    def forward(self, input):
        return F.lp_pool2d(input, float(self.norm_type), self.kernel_size, self.stride,
                           self.ceil_mode)


class MaxPool3d(_MaxPoolNd):
    """3-D max pooling over (N, C, D, H, W) or (C, D, H, W).

    Example:
        >>> import ember
        >>> MaxPool3d(2)(ember.randn(1, 2, 4, 4, 4)).shape
        ember.Size([1, 2, 2, 2, 2])
    """

    def forward(self, input):
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AvgPool3d(AvgPool2d):
    """3-D average pooling over (N, C, D, H, W) or (C, D, H, W).

    Example:
        >>> import ember
        >>> AvgPool3d(2)(ember.ones(1, 1, 2, 2, 2))
        tensor([[[[[1.]]]]])
    """

    def forward(self, input):
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AdaptiveAvgPool3d(_AdaptiveNd):
    """Average pooling of (N, C, D, H, W) to a fixed (D_out, H_out, W_out) size."""

    def __init__(self, output_size):
        super().__init__(output_size)

    def forward(self, input):
        return F.adaptive_avg_pool3d(input, self.output_size)


class AdaptiveMaxPool3d(_AdaptiveNd):
    """Max pooling of (N, C, D, H, W) to a fixed (D_out, H_out, W_out) size."""

    def forward(self, input):
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)


class MaxUnpool3d(_MaxUnpoolNd):
    """Inverse of MaxPool3d: maxima put back at their indices, zeros elsewhere."""

    def __init__(self, kernel_size, stride=None, padding=0):
        def triple(v):
            return tuple(v) if isinstance(v, (tuple, list)) else (v,) * 3
        super().__init__(triple(kernel_size), triple(stride if stride is not None
                                                     else kernel_size), triple(padding))

    def forward(self, input, indices, output_size=None):
        return F.max_unpool3d(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)


class LPPool3d(_LPPoolNd):
    """Power-average pooling over 3-D windows of (N, C, D, H, W)."""

    def forward(self, input):
        return F.lp_pool3d(input, float(self.norm_type), self.kernel_size, self.stride,
                           self.ceil_mode)


class _FractionalMaxPoolNd(Module):
    _dims = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        name, n = type(self).__name__, self._dims
        self.kernel_size = _ntuple(kernel_size, n)
        self.return_indices = return_indices
        # fixed samples make every forward use the same windows; they are saved with the module
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _ntuple(output_size, n) if output_size is not None else None
        self.output_ratio = _ntuple(output_ratio, n) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling "
                             "ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"{name}: output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        pool = F.fractional_max_pool2d if self._dims == 2 else F.fractional_max_pool3d
        return pool(input, self.kernel_size, self.output_size, self.output_ratio,
                    self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Fractional max pooling of (N, C, H, W) or (C, H, W) (Graham, 2014): windows of
    ``kernel_size`` at pseudo-random steps so the output has ``output_size`` or
    ``output_ratio`` times the input's size; ``_random_samples`` (N, C, 2) fixes the windows.

    Example:
        >>> import ember
        >>> FractionalMaxPool2d(3, output_ratio=0.5)(ember.randn(1, 2, 10, 8)).shape
        ember.Size([1, 2, 5, 4])
    """

    _dims = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Fractional max pooling of (N, C, T, H, W) or (C, T, H, W); see FractionalMaxPool2d
    (``_random_samples`` is (N, C, 3))."""

    _dims = 3
