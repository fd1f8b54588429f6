"""Activation functions of ``ember.nn.functional``.

The piecewise activations and softmax / log_softmax are ops in ``ember/ops/nn/activation.py``;
smooth ones that are a product of existing ops are composites here.
"""
from __future__ import annotations

import warnings

import numpy as np

import ember

from ..._tensor import Tensor, _make, _wrap_dim
from ...ops.nn import activation as _ops
from ...ops.random import _gen
from ...ops.registry import FUNCTIONS, apply_inplace
from ._utils import _check_float

__all__ = [
    "relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "elu", "elu_", "selu", "selu_",
    "celu", "celu_", "gelu", "silu", "mish", "hardtanh", "hardtanh_", "hardswish",
    "hardsigmoid", "softplus", "softsign", "sigmoid", "tanh", "softmax", "log_softmax",
    "softmin", "glu", "threshold", "threshold_", "prelu", "logsigmoid", "tanhshrink",
    "softshrink", "hardshrink", "rrelu", "rrelu_", "gumbel_softmax",
]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


# ----------------------------------------------------------------------------- ReLU family
def relu(input, inplace=False):
    """max(0, x) elementwise."""
    if inplace:
        return relu_(input)
    return ember.relu(input)


def relu_(input):
    return input.relu_()


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x if x > 0 else negative_slope * x."""
    _check_float("leaky_relu", input)
    if inplace:
        return leaky_relu_(input, negative_slope)
    return _ops.leaky_relu.apply(input, float(negative_slope))


def leaky_relu_(input, negative_slope=0.01):
    return apply_inplace(input, _ops.leaky_relu.apply, "leaky_relu_", float(negative_slope))


def _integer(input):
    """input is an integer (not bool) Tensor: hardtanh, relu6, threshold and softsign take
    those in torch, the other activations raise."""
    return isinstance(input, Tensor) and not input.is_floating_point() \
        and not input.is_complex() and input.dtype != ember.bool


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """Clamp to [min_val, max_val] (gradient 0 outside)."""
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val ({min_val}) cannot be greater than max_val "
                         f"({max_val})")
    if _integer(input):  # torch clamps integers in their own dtype
        out = input.clamp(min_val, max_val).to(input.dtype)
        return input.copy_(out) if inplace else out
    if isinstance(input, Tensor) and input.dtype == ember.bool:
        raise RuntimeError("hardtanh: Bool inputs not supported for hardtanh")
    _check_float("hardtanh", input)
    if inplace:
        return hardtanh_(input, min_val, max_val)
    return _ops.hardtanh.apply(input, float(min_val), float(max_val))


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return apply_inplace(input, _ops.hardtanh.apply, "hardtanh_", float(min_val), float(max_val))


def relu6(input, inplace=False):
    """min(max(0, x), 6)."""
    if isinstance(input, Tensor) and input.dtype == ember.bool:
        raise RuntimeError("relu6: Bool inputs not supported for hardtanh")
    return hardtanh(input, 0.0, 6.0, inplace)


def elu(input, alpha=1.0, inplace=False):
    """x if x > 0 else alpha * (exp(x) - 1)."""
    _check_float("elu", input)
    if inplace:
        return elu_(input, alpha)
    return _ops.elu.apply(input, float(alpha), 1.0, 1.0)


def elu_(input, alpha=1.0):
    return apply_inplace(input, _ops.elu.apply, "elu_", float(alpha), 1.0, 1.0)


def selu(input, inplace=False):
    """scale * (max(0, x) + min(0, alpha * (exp(x) - 1))) with the self-normalizing
    constants."""
    _check_float("selu", input)
    if inplace:
        return selu_(input)
    return _ops.elu.apply(input, _SELU_ALPHA, _SELU_SCALE, 1.0)


def selu_(input):
    return apply_inplace(input, _ops.elu.apply, "selu_", _SELU_ALPHA, _SELU_SCALE, 1.0)


def celu(input, alpha=1.0, inplace=False):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    _check_float("celu", input)
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: celu: alpha must not be 0")
    if inplace:
        return celu_(input, alpha)
    return _ops.elu.apply(input, float(alpha), 1.0, 1.0 / alpha)


def celu_(input, alpha=1.0):
    return apply_inplace(input, _ops.elu.apply, "celu_", float(alpha), 1.0, 1.0 / alpha)


def gelu(input, approximate="none"):
    """Gaussian error linear unit x * Phi(x); approximate='tanh' uses the tanh formula."""
    _check_float("gelu", input)
    return ember.gelu(input, approximate=approximate)


def silu(input, inplace=False):
    """x * sigmoid(x) (a.k.a. swish)."""
    _check_float("silu", input)
    if inplace:
        return apply_inplace(input, _ops.silu.apply, "silu_")
    return _ops.silu.apply(input)


def mish(input, inplace=False):
    """x * tanh(softplus(x))."""
    _check_float("mish", input)
    if inplace:
        return apply_inplace(input, _ops.mish.apply, "mish_")
    return _ops.mish.apply(input)


def hardsigmoid(input, inplace=False):
    """0 for x <= -3, 1 for x >= 3, x / 6 + 1/2 in between."""
    _check_float("hardsigmoid", input)
    if inplace:
        return apply_inplace(input, _ops.hardsigmoid.apply, "hardsigmoid_")
    return _ops.hardsigmoid.apply(input)


def hardswish(input, inplace=False):
    """x * relu6(x + 3) / 6."""
    _check_float("hardswish", input)
    if inplace:
        return apply_inplace(input, _ops.hardswish.apply, "hardswish_")
    return _ops.hardswish.apply(input)


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta * x)) / beta; x itself where beta * x > threshold."""
    _check_float("softplus", input)
    return _ops.softplus.apply(input, float(beta), float(threshold))


def softsign(input):
    """x / (1 + |x|)."""
    if not _integer(input):
        _check_float("softsign", input)
    return input / (input.abs() + 1)


# the ops themselves (ops/unary.py), as torch's nn.functional.sigmoid / tanh are
sigmoid = FUNCTIONS["sigmoid"]
tanh = FUNCTIONS["tanh"]


def logsigmoid(input):
    """log(1 / (1 + exp(-x))), computed without overflow."""
    _check_float("logsigmoid", input)
    return _ops.log_sigmoid.apply(input)


def tanhshrink(input):
    """x - tanh(x)."""
    if isinstance(input, Tensor) and input.dtype == ember.bool:
        raise RuntimeError("tanhshrink: Subtraction, the `-` operator, with a bool tensor is not "
                           "supported; convert the input with .float() first.")
    return input - input.tanh()


def softshrink(input, lambd=0.5):
    """x - lambd if x > lambd, x + lambd if x < -lambd, else 0."""
    _check_float("softshrink", input)
    if lambd < 0:
        raise RuntimeError(f"softshrink: lambda must be greater or equal to 0, but found to be "
                           f"{lambd}.")
    return _ops.softshrink.apply(input, float(lambd))


def hardshrink(input, lambd=0.5):
    """x if |x| > lambd else 0."""
    _check_float("hardshrink", input)
    return _ops.hardshrink.apply(input, float(lambd))


def threshold(input, threshold, value, inplace=False):
    """x if x > threshold else value."""
    if isinstance(input, Tensor) and not input.is_complex():  # NOTE [Numbers that do not fit
        # the dtype] in ember/_dtype.py
        for number in (threshold, value):
            ember._dtype.check_fits("threshold", number, input.dtype)
        threshold, value = (v.real if type(v) is complex else v for v in (threshold, value))
    if _integer(input):  # torch keeps integers in their own dtype
        out = input.masked_fill(input <= threshold, value)
        return input.copy_(out) if inplace else out
    _check_float("threshold", input)
    if inplace:
        return threshold_(input, threshold, value)
    return _ops.threshold.apply(input, float(threshold), float(value))


def threshold_(input, threshold, value):
    return apply_inplace(input, _ops.threshold.apply, "threshold_", float(threshold), float(value))


def prelu(input, weight):
    """max(0, x) + weight * min(0, x); weight has 1 or C (= input.size(1)) entries."""
    _check_float("prelu", input)
    n = weight.numel()
    if n != 1:
        if input.ndim < 2 and not (input.ndim == 1 and input.shape[0] == n):
            raise RuntimeError(f"prelu: Not allow zero-dim input tensor; weight of {n} elements "
                               f"needs an input with a channel dim, got shape "
                               f"{tuple(input.shape)}")
        channels = input.shape[1] if input.ndim >= 2 else input.shape[0]
        if channels != n:
            raise RuntimeError(f"prelu: Mismatch of parameter numbers and input channel size. "
                               f"Found parameter numbers = {n} and channel size = {channels}.")
        shape = [1] * max(input.ndim, 1)
        shape[1 if input.ndim >= 2 else 0] = n
        w = weight.reshape(shape)
    else:
        w = weight.reshape(())
    # torch's rule: x where x > 0, else w * x, with the gradients of that select (x = 0, -inf
    # and NaN take w). The inner where keeps an x = +inf out of w's gradient (0 * inf = NaN)
    positive = input > 0
    return ember.where(positive, input, w * ember.where(positive, 0.0, input))


def glu(input, dim=-1):
    """a * sigmoid(b) where a, b are the two halves of input along ``dim``."""
    _check_float("glu", input)
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    dim = _wrap_dim(dim, input.ndim, "glu")
    size = input.shape[dim]
    if size % 2:
        raise RuntimeError(f"glu: Halving dimension must be even, but dimension "
                           f"{dim % input.ndim} is size {size}")
    a, b = input.chunk(2, dim)
    return a * b.sigmoid()


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: slope ~ U(lower, upper) per element when training, else the
    fixed slope (lower + upper) / 2."""
    return _rrelu(input, lower, upper, training, inplace)


def _rrelu(input, lower, upper, training, inplace, generator=None):
    """rrelu drawing its slopes from ``generator`` (torch.rrelu's keyword; F.rrelu has none)."""
    _check_float("rrelu", input)
    if lower > upper:
        raise RuntimeError(f"rrelu: Lower bound should be less than or equal to the upper "
                           f"bound; got lower={lower}, upper={upper}")
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    slopes = _gen(generator).uniform(lower, upper, size=input._data.shape).astype(input._data.dtype)
    factor = _make(np.where(input._data >= 0, np.ones((), input._data.dtype), slopes))
    if inplace:
        return apply_inplace(input, lambda t: t * factor, "rrelu_")
    return input * factor


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, inplace=True)


# ----------------------------------------------------------------------------- softmax
def _softmax_dim(name, ndim, stacklevel):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", UserWarning, stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def _softmax_impl(name, input, dim, dtype, log, stacklevel=4):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    if dim is None:
        dim = _softmax_dim(name, input.ndim, stacklevel)
    if dtype is not None:
        input = input.to(dtype)
    if not input.is_floating_point():  # torch: its kernels have no integer or bool version
        raise NotImplementedError(f"{name}: expected a floating-point input, got dtype "
                                  f"{input.dtype}; pass dtype=ember.float32 or convert the input.")
    n = max(input.ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"{name}: Dimension out of range (expected to be in range of "
                         f"[{-n}, {n - 1}], but got {dim})")
    dim = dim % n if input.ndim else 0
    op = _ops.LogSoftmax if log else _ops.Softmax
    if input.dtype in (ember.float16, ember.bfloat16):
        # compute in float32: the row sums and exp lose too much in half precision
        return op.apply(input.float(), dim, log).to(input.dtype)
    return op.apply(input, dim, log)


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """exp(x) / sum(exp(x)) along ``dim``, computed stably (the row max is subtracted).

    Example:
        >>> import ember
        >>> ember.nn.functional.softmax(ember.tensor([1000.0, 1000.0]), dim=0)
        tensor([0.5000, 0.5000])
    """
    return _softmax_impl("softmax", input, dim, dtype, False, _stacklevel + 1)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """log(softmax(x)) along ``dim``: x - logsumexp(x), finite for large inputs."""
    return _softmax_impl("log_softmax", input, dim, dtype, True, _stacklevel + 1)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-x) along ``dim``."""
    if dtype is not None:
        input = input.to(dtype)
    if isinstance(input, Tensor) and input.dtype == ember.bool:
        raise RuntimeError("softmin: negation of a bool tensor is not supported; convert the "
                           "input with .float() first")
    return _softmax_impl("softmin", -input, dim, None, False, _stacklevel + 1)



# ----------------------------------------------------------------------------- Gumbel-softmax
def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """A differentiable sample from the categorical distribution softmax(logits) (Jang et al.,
    2016; Maddison et al., 2016): softmax((logits + g) / tau) along ``dim`` with g standard
    Gumbel noise, drawn from ember's generator.

    ``hard=True`` returns the one-hot of that sample's argmax in the forward pass while the
    gradient is the soft sample's (straight-through estimator). ``eps`` is deprecated and unused.

    Example:
        >>> import ember
        >>> _ = ember.manual_seed(0)
        >>> y = ember.nn.functional.gumbel_softmax(ember.zeros(2, 3), hard=True)
        >>> y.sum(-1).tolist()
        [1.0, 1.0]
    """
    if eps != 1e-10:
        warnings.warn("gumbel_softmax: `eps` is deprecated and has no effect.", UserWarning,
                      stacklevel=2)
    _check_float("gumbel_softmax", logits)
    # -log(E) with E ~ Exp(1) is a standard Gumbel sample; drawn without a graph
    with ember.no_grad():
        gumbels = -ember.empty_like(logits).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    if y_soft.ndim == 0:
        y_hard = ember.ones_like(y_soft)      # a single category is always the one chosen
    else:
        index = y_soft.argmax(dim, keepdim=True)
        y_hard = ember.zeros_like(y_soft).scatter(dim, index, 1.0)
    # forward value y_hard, gradient that of y_soft
    return y_hard - y_soft.detach() + y_soft
