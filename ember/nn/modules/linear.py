"""Identity, Linear and Bilinear layers."""
from __future__ import annotations

import math

import ember

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module, check_sizes, registered_pair

__all__ = ["Identity", "Linear", "Bilinear"]


def _factory(device, dtype):
    ember._backend.check_device(device)
    return ember.get_default_dtype() if dtype is None else dtype


class Identity(Module):
    """Returns its input unchanged; accepts (and ignores) any constructor arguments."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """y = x W^T + b.

    Args:
        in_features: size of each input sample's last dim.
        out_features: size of each output sample's last dim.
        bias: learn an additive bias (default True).

    Shape: input (*, in_features) -> output (*, out_features).

    The weight is initialized with kaiming_uniform_(a=sqrt(5)) and the bias from
    U(-1/sqrt(in_features), 1/sqrt(in_features)), as in torch.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.Linear(3, 2)(ember.ones(4, 3)).shape
        ember.Size([4, 2])
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        check_sizes("Linear", in_features=in_features, out_features=out_features)
        dt = _factory(device, dtype)
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(ember.empty(out_features, in_features, dtype=dt))
        if bias:
            self.bias = Parameter(ember.empty(out_features, dtype=dt))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.weight.shape[1]
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        weight, bias = registered_pair(self, Linear, "weight", "bias")
        try:
            return F.linear(input, weight, bias)
        except RuntimeError:
            self._mismatch(input)
            raise

    def _mismatch(self, input):
        """Raise the module's message when the input's last dim is not in_features."""
        if isinstance(input, ember.Tensor) and input._data.ndim and \
                input._data.shape[-1] != self.in_features:
            rows = input.numel() // input.shape[-1] if input.shape[-1] else 0
            raise RuntimeError(
                f"{self!r}: mat1 and mat2 shapes cannot be multiplied ({rows}x{input.shape[-1]} "
                f"and {self.in_features}x{self.out_features}); expected an input whose last "
                f"dim is in_features={self.in_features}, got input of shape "
                f"{tuple(input.shape)}.") from None

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Bilinear(Module):
    """y = x1^T A x2 + b.

    Shape: input1 (*, in1_features), input2 (*, in2_features) -> (*, out_features).
    Weight and bias are initialized from U(-1/sqrt(in1_features), 1/sqrt(in1_features)).
    """

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None,
                 dtype=None):
        super().__init__()
        check_sizes("Bilinear", in1_features=in1_features, in2_features=in2_features,
                    out_features=out_features)
        dt = _factory(device, dtype)
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(ember.empty(out_features, in1_features, in2_features, dtype=dt))
        if bias:
            self.bias = Parameter(ember.empty(out_features, dtype=dt))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class NonDynamicallyQuantizableLinear(Linear):
    """The Linear that torch's MultiheadAttention uses for its output projection (a marker
    class for torch's quantization tooling); here it is just a Linear."""
