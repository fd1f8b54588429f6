"""LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm and CrossMapLRN2d."""
from __future__ import annotations

import numbers

import ember

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module, check_sizes, registered_pair

__all__ = ["LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm", "CrossMapLRN2d"]


def _affine(module, affine, bias, shape, dtype):
    """Register weight (ones) and bias (zeros) of ``shape``, or None for those switched off."""
    if affine:
        check_sizes(type(module).__name__, normalized_shape=shape)
    module.register_parameter(
        "weight", Parameter(ember.ones(*shape, dtype=dtype)) if affine else None)
    module.register_parameter(
        "bias", Parameter(ember.zeros(*shape, dtype=dtype)) if affine and bias else None)


def _shape(normalized_shape):
    if isinstance(normalized_shape, numbers.Integral):
        return (int(normalized_shape),)
    return tuple(int(s) for s in normalized_shape)


class LayerNorm(Module):
    """Normalize over the trailing ``normalized_shape`` dims (Ba et al., 2016).

    Shape: input (*, *normalized_shape), same-shape output. weight = 1, bias = 0 initially.

    Example:
        >>> import ember
        >>> ember.nn.LayerNorm(4)(ember.randn(2, 4)).shape
        ember.Size([2, 4])
    """

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 device=None, dtype=None):
        super().__init__()
        ember._backend.check_device(device)
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine(self, elementwise_affine, bias, self.normalized_shape, dtype)

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        weight, bias = registered_pair(self, LayerNorm, "weight", "bias")
        try:
            return F.layer_norm(input, self.normalized_shape, weight, bias, self.eps)
        except RuntimeError:
            self._mismatch(input)
            raise

    def _mismatch(self, input):
        """Raise the module's message when the input does not end in normalized_shape."""
        ns = self.normalized_shape
        shape = input._data.shape if isinstance(input, ember.Tensor) else input.shape
        if tuple(shape[max(len(shape) - len(ns), 0):]) != ns:
            raise RuntimeError(f"{self!r}: Given normalized_shape={list(ns)}, expected input "
                               f"with shape [*, {', '.join(map(str, ns))}], but got input of "
                               f"size {list(input.shape)}") from None

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class GroupNorm(Module):
    """Normalize over groups of channels per sample (Wu & He, 2018).

    Shape: input (N, C, *) with C = num_channels divisible by num_groups.
    """

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        ember._backend.check_device(device)
        if num_channels % num_groups != 0:
            raise ValueError(f"GroupNorm: num_channels must be divisible by num_groups; got "
                             f"num_channels={num_channels}, num_groups={num_groups}")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine(self, affine, bias, (num_channels,), dtype)

    def reset_parameters(self):
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        if input.ndim < 2 or input.shape[1] != self.num_channels:
            raise RuntimeError(f"{self!r}: expected input of shape (N, {self.num_channels}, *), "
                               f"got {tuple(input.shape)}.")
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.affine}, bias={self.bias is not None}")


class RMSNorm(Module):
    """x / sqrt(mean(x^2) + eps) * weight over the trailing ``normalized_shape`` dims
    (Zhang & Sennrich, 2019). eps=None uses the input dtype's machine epsilon."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        ember._backend.check_device(device)
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ember.empty(*self.normalized_shape, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class LocalResponseNorm(Module):
    """Normalize each value by the activity of ``size`` neighbouring channels (AlexNet)."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(Module):
    """Response normalization across channels of (N, C, H, W) input, Torch7's original form:
    x / (k + alpha / size * S)^beta with S a sum of x^2 over neighbouring channels.

    With h = int((size - 1) / 2 + 1), S for channel c covers channels c - h + 1 .. c + h - 1
    (clipped to the input) and, for every c >= h, also channel 0: torch's sliding-window
    update never removes channel 0, and this layer reproduces that forward exactly.

    Differs from torch: the gradient is the exact derivative of this forward (autograd through
    ember ops, double backward included); torch's hand-written backward is not (its gradcheck
    fails, and it errors for size=1). See docs/DEVIATIONS.md.

    Example:
        >>> import ember
        >>> CrossMapLRN2d(3)(ember.ones(1, 4, 2, 2)).shape
        ember.Size([1, 4, 2, 2])
    """

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        if input.ndim != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.ndim}D "
                             "instead.")
        c = input.shape[1]
        half = int((self.size - 1) / 2 + 1)
        sq = input * input
        if half > 1:
            pad = list(sq.shape)
            pad[1] = half - 1
            zeros = sq.new_zeros(pad)
            sq_padded = ember.cat([zeros, sq, zeros], 1)
        else:
            sq_padded = sq
        window = sq_padded.narrow(1, 0, c)
        for offset in range(1, 2 * half - 1):   # shifted slices: exact, no cumsum cancellation
            window = window + sq_padded.narrow(1, offset, c)
        if c > half:
            # the channel-0 term Torch7's window keeps for c >= h
            keeps_first = (ember.arange(c) >= half).to(sq.dtype).reshape(1, c, 1, 1)
            window = window + sq.narrow(1, 0, 1) * keeps_first
        scale = window * (self.alpha / self.size) + self.k
        return input * scale.pow(-self.beta)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
