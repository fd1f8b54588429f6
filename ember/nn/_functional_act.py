"""Activation functions of ``ember.nn.functional`` (re-exported there; import from there).

Piecewise activations are small ``Op``s: their forward is one NumPy expression and their
backward is written with ember ops next to it (so double backward works). Smooth ones that are
a product of existing ops are composites. softmax / log_softmax use the row kernels of
``ember/ops/_kernels/loss.py`` forward and an ember-op backward.
"""
from __future__ import annotations

import warnings

import numpy as np

import ember

from .._tensor import Tensor, _make
from ..autograd.function import Op
from ..autograd.grad_mode import _state, no_grad
from ..ops._kernels import loss as _kloss
from ..ops._kernels import pointwise as _kpoint

__all__ = [
    "relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "elu", "elu_", "selu", "selu_",
    "celu", "celu_", "gelu", "silu", "mish", "hardtanh", "hardtanh_", "hardswish",
    "hardsigmoid", "softplus", "softsign", "sigmoid", "tanh", "softmax", "log_softmax",
    "softmin", "glu", "threshold", "threshold_", "prelu", "logsigmoid", "tanhshrink",
    "softshrink", "hardshrink", "rrelu", "rrelu_",
]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _check_float(name, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    if not input.is_floating_point():
        raise RuntimeError(f"{name}: expected a floating-point input, got dtype {input.dtype}; "
                           "convert it with .float() first.")


def _inplace(input, fn):
    """Run an activation in place: the result of ``fn(input)`` is written into input.

    With autograd recording, ``fn`` runs on a clone: the op saves its input for backward, and
    writing into that very tensor would invalidate it.
    """
    if _state.enabled and input.requires_grad:
        return input.copy_(fn(input.clone()))
    with no_grad():
        out = fn(input)
        input.copy_(out)
    return input


def _pointwise(name, fwd, bwd, doc, bwd_np=None):
    """An elementwise Op y = fwd(x, *params) with dL/dx = bwd(grad, x, *params).

    ``bwd`` uses ember ops (so double backward works). ``bwd_np(g, x, *params)``, the same
    derivative in NumPy, is used instead when backward is not itself recorded (no
    create_graph): one fused expression instead of a chain of graph nodes.
    """

    class Pointwise(Op):
        @staticmethod
        def forward(ctx, x, *params):
            ctx.params = params
            ctx.save_for_backward(x)
            with np.errstate(over="ignore", invalid="ignore"):
                y = fwd(x, *params)
            return np.asarray(y).astype(x.dtype, copy=False)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            if bwd_np is not None and not _state.enabled:
                with np.errstate(over="ignore", invalid="ignore"):
                    gx = bwd_np(grad._data, x._data, *ctx.params)
                gx = _make(np.asarray(gx).astype(x._data.dtype, copy=False))
            else:
                gx = bwd(grad, x, *ctx.params)
            return (gx,) + (None,) * len(ctx.params)

    Pointwise.__name__ = name
    Pointwise.__doc__ = doc
    return Pointwise


def _mask(cond, like):
    return cond.to(like.dtype)


# ----------------------------------------------------------------------------- ReLU family
def relu(input, inplace=False):
    """max(0, x) elementwise."""
    if inplace:
        return relu_(input)
    return ember.relu(input)


def relu_(input):
    return input.relu_()


_LeakyRelu = _pointwise(
    "LeakyRelu", lambda x, s: np.where(x > 0, x, x * s),
    # d/dx = 1 for x > 0, negative_slope otherwise
    lambda g, x, s: g * (_mask(x > 0, g) * (1 - s) + s),
    "x for x > 0, negative_slope * x otherwise.",
    lambda g, x, s: np.where(x > 0, g, g * s))


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x if x > 0 else negative_slope * x."""
    _check_float("leaky_relu", input)
    if inplace:
        return leaky_relu_(input, negative_slope)
    return _LeakyRelu.apply(input, float(negative_slope))


def leaky_relu_(input, negative_slope=0.01):
    return _inplace(input, lambda t: _LeakyRelu.apply(t, float(negative_slope)))


_Hardtanh = _pointwise(
    "Hardtanh", lambda x, lo, hi: _kpoint.clamp(x, lo, hi),
    # the gradient passes strictly inside (min_val, max_val), as in torch
    lambda g, x, lo, hi: g * _mask((x > lo) & (x < hi), g),
    "x clipped to [min_val, max_val].",
    lambda g, x, lo, hi: _kpoint.masked_grad(g, x, lo, hi))


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """Clamp to [min_val, max_val] (gradient 0 outside)."""
    _check_float("hardtanh", input)
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val ({min_val}) cannot be greater than max_val "
                         f"({max_val})")
    if inplace:
        return hardtanh_(input, min_val, max_val)
    return _Hardtanh.apply(input, float(min_val), float(max_val))


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return _inplace(input, lambda t: _Hardtanh.apply(t, float(min_val), float(max_val)))


def relu6(input, inplace=False):
    """min(max(0, x), 6)."""
    return hardtanh(input, 0.0, 6.0, inplace)


def _elu_fwd(x, alpha, scale, input_scale):
    neg = np.expm1(np.minimum(x, 0) * input_scale) * (alpha * scale)
    return np.where(x > 0, x * scale, neg)


def _elu_bwd(g, x, alpha, scale, input_scale):
    # x > 0: scale; else scale * alpha * input_scale * exp(x * input_scale). The exp is taken of
    # min(x, 0): where() differentiates both branches and exp(large x) = inf would give NaN
    neg = (x.clamp(max=0) * input_scale).exp() * (alpha * scale * input_scale)
    return g * ember.where(x > 0, scale, neg)


def _elu_bwd_np(g, x, alpha, scale, input_scale):
    neg = np.exp(np.minimum(x, 0) * input_scale) * (alpha * scale * input_scale)
    return g * np.where(x > 0, scale, neg)


_Elu = _pointwise("Elu", _elu_fwd, _elu_bwd, "ELU / SELU / CELU: the shared exponential unit.",
                  _elu_bwd_np)


def elu(input, alpha=1.0, inplace=False):
    """x if x > 0 else alpha * (exp(x) - 1)."""
    _check_float("elu", input)
    if inplace:
        return elu_(input, alpha)
    return _Elu.apply(input, float(alpha), 1.0, 1.0)


def elu_(input, alpha=1.0):
    return _inplace(input, lambda t: _Elu.apply(t, float(alpha), 1.0, 1.0))


def selu(input, inplace=False):
    """scale * (max(0, x) + min(0, alpha * (exp(x) - 1))) with the self-normalizing
    constants."""
    _check_float("selu", input)
    if inplace:
        return selu_(input)
    return _Elu.apply(input, _SELU_ALPHA, _SELU_SCALE, 1.0)


def selu_(input):
    return _inplace(input, lambda t: _Elu.apply(t, _SELU_ALPHA, _SELU_SCALE, 1.0))


def celu(input, alpha=1.0, inplace=False):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    _check_float("celu", input)
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: celu: alpha must not be 0")
    if inplace:
        return celu_(input, alpha)
    return _Elu.apply(input, float(alpha), 1.0, 1.0 / alpha)


def celu_(input, alpha=1.0):
    return _inplace(input, lambda t: _Elu.apply(t, float(alpha), 1.0, 1.0 / alpha))


def gelu(input, approximate="none"):
    """Gaussian error linear unit x * Phi(x); approximate='tanh' uses the tanh formula."""
    _check_float("gelu", input)
    return ember.gelu(input, approximate=approximate)


def _silu_bwd(g, x):
    s = x.sigmoid()
    return g * (s * (1 + x * (1 - s)))  # d/dx x*s(x) = s + x s (1 - s)


def _sigmoid_np(x):
    # exp(-x) may overflow to inf for very negative x: 1 / inf = 0 is the right limit
    with np.errstate(over="ignore"):
        return 1 / (1 + np.exp(-x))


def _silu_bwd_np(g, x):
    s = _sigmoid_np(x)
    return g * s * (1 + x * (1 - s))


_Silu = _pointwise("Silu", lambda x: x * _sigmoid_np(x), _silu_bwd, "x * sigmoid(x).",
                   _silu_bwd_np)


def silu(input, inplace=False):
    """x * sigmoid(x) (a.k.a. swish)."""
    _check_float("silu", input)
    if inplace:
        return _inplace(input, _Silu.apply)
    return _Silu.apply(input)


def _softplus_np(x):
    """log(1 + exp(x)) without overflow: max(x, 0) + log1p(exp(-|x|))."""
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def _mish_bwd_np(g, x):
    t = np.tanh(_softplus_np(x))
    return g * (t + x * _sigmoid_np(x) * (1 - t * t))


def _mish_bwd(g, x):
    # d/dx x tanh(sp(x)) = tanh(sp) + x * sigmoid(x) * (1 - tanh(sp)^2)
    t = softplus(x).tanh()
    return g * (t + x * x.sigmoid() * (1 - t * t))


_Mish = _pointwise("Mish", lambda x: x * np.tanh(_softplus_np(x)), _mish_bwd,
                   "x * tanh(softplus(x)).", _mish_bwd_np)


def mish(input, inplace=False):
    """x * tanh(softplus(x))."""
    _check_float("mish", input)
    if inplace:
        return _inplace(input, _Mish.apply)
    return _Mish.apply(input)


_Hardsigmoid = _pointwise(
    "Hardsigmoid", lambda x: np.clip(x / 6 + 0.5, 0, 1),
    lambda g, x: g * _mask((x > -3) & (x < 3), g) / 6,
    "relu6(x + 3) / 6.",
    lambda g, x: np.where((x > -3) & (x < 3), g / 6, 0))


def hardsigmoid(input, inplace=False):
    """0 for x <= -3, 1 for x >= 3, x / 6 + 1/2 in between."""
    _check_float("hardsigmoid", input)
    if inplace:
        return _inplace(input, _Hardsigmoid.apply)
    return _Hardsigmoid.apply(input)


def _hardswish_bwd(g, x):
    # torch's convention at the kinks: 0 below -3, x/3 + 1/2 on [-3, 3], 1 above 3
    mid = x / 3 + 0.5
    return g * ember.where(x < -3, 0.0, ember.where(x <= 3, mid, 1.0))


_Hardswish = _pointwise("Hardswish", lambda x: x * np.clip(x + 3, 0, 6) / 6, _hardswish_bwd,
                        "x * relu6(x + 3) / 6.",
                        lambda g, x: g * np.where(x < -3, 0, np.where(x <= 3, x / 3 + 0.5, 1)))


def hardswish(input, inplace=False):
    """x * relu6(x + 3) / 6."""
    _check_float("hardswish", input)
    if inplace:
        return _inplace(input, _Hardswish.apply)
    return _Hardswish.apply(input)


def _softplus_fwd(x, beta, threshold):
    z = x * beta
    return np.where(z > threshold, x, _softplus_np(z) / beta)


def _softplus_bwd(g, x, beta, threshold):
    z = x * beta
    return g * ember.where(z > threshold, 1.0, z.sigmoid())  # d/dx log(1 + e^(bx))/b


_Softplus = _pointwise("Softplus", _softplus_fwd, _softplus_bwd,
                       "log(1 + exp(beta * x)) / beta, linear above threshold.",
                       lambda g, x, beta, threshold: np.where(
                           x * beta > threshold, g, g * _sigmoid_np(x * beta)))


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta * x)) / beta; x itself where beta * x > threshold."""
    _check_float("softplus", input)
    return _Softplus.apply(input, float(beta), float(threshold))


def softsign(input):
    """x / (1 + |x|)."""
    _check_float("softsign", input)
    return input / (input.abs() + 1)


def sigmoid(input):
    return ember.sigmoid(input)


def tanh(input):
    return ember.tanh(input)


def _logsigmoid_fwd(x):
    return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))  # log(sigmoid(x)), no overflow


_LogSigmoid = _pointwise("LogSigmoid", _logsigmoid_fwd,
                         lambda g, x: g * (-x).sigmoid(),  # d/dx log s(x) = 1 - s(x) = s(-x)
                         "log(sigmoid(x)).", lambda g, x: g * _sigmoid_np(-x))


def logsigmoid(input):
    """log(1 / (1 + exp(-x))), computed without overflow."""
    _check_float("logsigmoid", input)
    return _LogSigmoid.apply(input)


def tanhshrink(input):
    """x - tanh(x)."""
    return input - input.tanh()


_Softshrink = _pointwise(
    "Softshrink", lambda x, lam: np.where(x > lam, x - lam, np.where(x < -lam, x + lam, 0)),
    lambda g, x, lam: g * _mask(x.abs() > lam, g), "shrink toward 0 by lambd.",
    lambda g, x, lam: np.where(np.abs(x) > lam, g, 0))
_Hardshrink = _pointwise(
    "Hardshrink", lambda x, lam: np.where(np.abs(x) > lam, x, 0),
    lambda g, x, lam: g * _mask(x.abs() > lam, g), "x where |x| > lambd, else 0.",
    lambda g, x, lam: np.where(np.abs(x) > lam, g, 0))


def softshrink(input, lambd=0.5):
    """x - lambd if x > lambd, x + lambd if x < -lambd, else 0."""
    _check_float("softshrink", input)
    if lambd < 0:
        raise RuntimeError(f"softshrink: lambda must be greater or equal to 0, but found to be "
                           f"{lambd}.")
    return _Softshrink.apply(input, float(lambd))


def hardshrink(input, lambd=0.5):
    """x if |x| > lambd else 0."""
    _check_float("hardshrink", input)
    return _Hardshrink.apply(input, float(lambd))


_Threshold = _pointwise(
    "Threshold", lambda x, th, v: np.where(x > th, x, v),
    lambda g, x, th, v: g * _mask(x > th, g), "x if x > threshold else value.",
    lambda g, x, th, v: np.where(x > th, g, 0))


def threshold(input, threshold, value, inplace=False):
    """x if x > threshold else value."""
    _check_float("threshold", input)
    if inplace:
        return threshold_(input, threshold, value)
    return _Threshold.apply(input, float(threshold), float(value))


def threshold_(input, threshold, value):
    return _inplace(input, lambda t: _Threshold.apply(t, float(threshold), float(value)))


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
    return input.relu() - w * (-input).relu()


def glu(input, dim=-1):
    """a * sigmoid(b) where a, b are the two halves of input along ``dim``."""
    _check_float("glu", input)
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    size = input.shape[dim]
    if size % 2:
        raise RuntimeError(f"glu: Halving dimension must be even, but dimension "
                           f"{dim % input.ndim} is size {size}")
    a, b = input.chunk(2, dim)
    return a * b.sigmoid()


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: slope ~ U(lower, upper) per element when training, else the
    fixed slope (lower + upper) / 2."""
    _check_float("rrelu", input)
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    from ..ops.random import _gen
    slopes = _gen(None).uniform(lower, upper, size=input._data.shape).astype(input._data.dtype)
    factor = _make(np.where(input._data >= 0, np.ones((), input._data.dtype), slopes))
    if inplace:
        return _inplace(input, lambda t: t * factor)
    return input * factor


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, inplace=True)


# ----------------------------------------------------------------------------- softmax
def _softmax_dim(name, ndim, stacklevel):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", UserWarning, stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def _rows(x, dim):
    """x with ``dim`` moved last, as a C-contiguous (M, K) array, and how to undo that."""
    moved = np.moveaxis(x, dim, -1)
    shape = moved.shape
    return np.ascontiguousarray(moved).reshape(-1, shape[-1] if shape else 1), shape


class _Softmax(Op):
    """softmax / log_softmax along one dim: fused row kernel forward, ember-op backward.

    The kernel subtracts the row max before exponentiating, so large inputs do not overflow.
    """

    @staticmethod
    def forward(ctx, x, dim, log):
        ctx.dim, ctx.log = dim, log
        if x.ndim == 0:
            y = np.zeros((), x.dtype) if log else np.ones((), x.dtype)
            ctx.save_for_backward(y)
            return y
        rows, shape = _rows(x, dim)
        out = _log_softmax_rows(rows) if log else _kloss.softmax_forward(rows)
        y = np.moveaxis(out.reshape(shape), -1, dim)
        y = np.ascontiguousarray(y)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        if y.ndim == 0:
            return grad * 0, None, None
        dim = ctx.dim
        if ctx.log:  # d log_softmax: g - softmax * sum(g)
            return grad - y.exp() * grad.sum(dim, keepdim=True), None, None
        # d softmax: y * (g - sum(g * y))
        return y * (grad - (grad * y).sum(dim, keepdim=True)), None, None


class _LogSoftmax(_Softmax):
    """log_softmax: the same Op, a separate name for grad_fn (LogSoftmaxBackward0)."""


_Softmax.__name__, _LogSoftmax.__name__ = "Softmax", "LogSoftmax"


def _log_softmax_rows(rows):
    """(x - max) - log(sum(exp(x - max))) per row.

    Subtracting the log-sum-exp of the *shifted* values keeps the result exact for large x:
    x - logsumexp(x) would cancel (1000.6931 - 1000 keeps only ~4 digits in float32).
    """
    if rows.size == 0:
        return np.empty_like(rows)
    row_max = rows.max(axis=1, keepdims=True)
    # an all -inf row would give -inf - -inf = NaN; shift it by 0 instead (result -inf)
    shifted = rows - np.where(np.isfinite(row_max), row_max, 0).astype(rows.dtype)
    with np.errstate(divide="ignore"):
        return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def _softmax_impl(name, input, dim, dtype, log, stacklevel=4):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    if dim is None:
        dim = _softmax_dim(name, input.ndim, stacklevel)
    if dtype is not None:
        input = input.to(dtype)
    if not input.is_floating_point():
        raise RuntimeError(f"{name}: expected a floating-point input, got dtype {input.dtype}; "
                           "pass dtype=ember.float32 or convert the input.")
    n = max(input.ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"{name}: Dimension out of range (expected to be in range of "
                         f"[{-n}, {n - 1}], but got {dim})")
    dim = dim % n if input.ndim else 0
    op = _LogSoftmax if log else _Softmax
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
    return _softmax_impl("softmin", -input, dim, None, False, _stacklevel + 1)

