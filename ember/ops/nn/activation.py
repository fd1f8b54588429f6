"""Activation ops (the Op classes behind ``ember.nn.functional``'s activations).

Piecewise activations are small ``Op``s: their forward is one NumPy expression and their
backward is written with ember ops next to it (so double backward works). softmax /
log_softmax use the row kernels of ``ember/ops/_kernels/loss.py`` forward and an ember-op
backward.
"""
from __future__ import annotations

import numpy as np

from ..._tensor import _make
from ...autograd.function import Op
from ...autograd.grad_mode import _state
from .._kernels import loss as _kloss
from .._kernels import pointwise as _kpoint
from ..elementwise import _sigmoid_np
from ..indexing import where


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


LeakyRelu = _pointwise(
    "LeakyRelu", lambda x, s: np.where(x > 0, x, x * s),
    # d/dx = 1 for x > 0, negative_slope otherwise
    lambda g, x, s: g * (_mask(x > 0, g) * (1 - s) + s),
    "x for x > 0, negative_slope * x otherwise.",
    lambda g, x, s: np.where(x > 0, g, g * s))


Hardtanh = _pointwise(
    "Hardtanh", lambda x, lo, hi: _kpoint.clamp(x, lo, hi),
    # the gradient passes strictly inside (min_val, max_val), as in torch
    lambda g, x, lo, hi: g * _mask((x > lo) & (x < hi), g),
    "x clipped to [min_val, max_val].",
    lambda g, x, lo, hi: _kpoint.masked_grad(g, x, lo, hi))


def _elu_fwd(x, alpha, scale, input_scale):
    neg = np.expm1(np.minimum(x, 0) * input_scale) * (alpha * scale)
    return np.where(x > 0, x * scale, neg)


def _elu_bwd(g, x, alpha, scale, input_scale):
    # x > 0: scale; else scale * alpha * input_scale * exp(x * input_scale). The exp is taken of
    # min(x, 0): where() differentiates both branches and exp(large x) = inf would give NaN
    neg = (x.clamp(max=0) * input_scale).exp() * (alpha * scale * input_scale)
    return g * where(x > 0, scale, neg)


def _elu_bwd_np(g, x, alpha, scale, input_scale):
    neg = np.exp(np.minimum(x, 0) * input_scale) * (alpha * scale * input_scale)
    return g * np.where(x > 0, scale, neg)


Elu = _pointwise("Elu", _elu_fwd, _elu_bwd, "ELU / SELU / CELU: the shared exponential unit.",
                  _elu_bwd_np)


def _silu_bwd(g, x):
    s = x.sigmoid()
    return g * (s * (1 + x * (1 - s)))  # d/dx x*s(x) = s + x s (1 - s)


def _silu_bwd_np(g, x):
    s = _sigmoid_np(x)
    return g * s * (1 + x * (1 - s))


Silu = _pointwise("Silu", lambda x: x * _sigmoid_np(x), _silu_bwd, "x * sigmoid(x).",
                   _silu_bwd_np)


def _softplus_np(x):
    """log(1 + exp(x)) without overflow: max(x, 0) + log1p(exp(-|x|))."""
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def _mish_bwd_np(g, x):
    t = np.tanh(_softplus_np(x))
    return g * (t + x * _sigmoid_np(x) * (1 - t * t))


def _mish_bwd(g, x):
    # d/dx x tanh(sp(x)) = tanh(sp) + x * sigmoid(x) * (1 - tanh(sp)^2)
    t = Softplus.apply(x, 1.0, 20.0).tanh()
    return g * (t + x * x.sigmoid() * (1 - t * t))


Mish = _pointwise("Mish", lambda x: x * np.tanh(_softplus_np(x)), _mish_bwd,
                   "x * tanh(softplus(x)).", _mish_bwd_np)


Hardsigmoid = _pointwise(
    "Hardsigmoid", lambda x: np.clip(x / 6 + 0.5, 0, 1),
    lambda g, x: g * _mask((x > -3) & (x < 3), g) / 6,
    "relu6(x + 3) / 6.",
    lambda g, x: np.where((x > -3) & (x < 3), g / 6, 0))


def _hardswish_bwd(g, x):
    # torch's convention at the kinks: 0 below -3, x/3 + 1/2 on [-3, 3], 1 above 3
    mid = x / 3 + 0.5
    return g * where(x < -3, 0.0, where(x <= 3, mid, 1.0))


Hardswish = _pointwise("Hardswish", lambda x: x * np.clip(x + 3, 0, 6) / 6, _hardswish_bwd,
                        "x * relu6(x + 3) / 6.",
                        lambda g, x: g * np.where(x < -3, 0, np.where(x <= 3, x / 3 + 0.5, 1)))


def _softplus_fwd(x, beta, threshold):
    z = x * beta
    return np.where(z > threshold, x, _softplus_np(z) / beta)


def _softplus_bwd(g, x, beta, threshold):
    z = x * beta
    return g * where(z > threshold, 1.0, z.sigmoid())  # d/dx log(1 + e^(bx))/b


Softplus = _pointwise("Softplus", _softplus_fwd, _softplus_bwd,
                       "log(1 + exp(beta * x)) / beta, linear above threshold.",
                       lambda g, x, beta, threshold: np.where(
                           x * beta > threshold, g, g * _sigmoid_np(x * beta)))


def _logsigmoid_fwd(x):
    return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))  # log(sigmoid(x)), no overflow


LogSigmoid = _pointwise("LogSigmoid", _logsigmoid_fwd,
                         lambda g, x: g * (-x).sigmoid(),  # d/dx log s(x) = 1 - s(x) = s(-x)
                         "log(sigmoid(x)).", lambda g, x: g * _sigmoid_np(-x))


Softshrink = _pointwise(
    "Softshrink", lambda x, lam: np.where(x > lam, x - lam, np.where(x < -lam, x + lam, 0)),
    lambda g, x, lam: g * _mask(x.abs() > lam, g), "shrink toward 0 by lambd.",
    lambda g, x, lam: np.where(np.abs(x) > lam, g, 0))


Hardshrink = _pointwise(
    "Hardshrink", lambda x, lam: np.where(np.abs(x) > lam, x, 0),
    lambda g, x, lam: g * _mask(x.abs() > lam, g), "x where |x| > lambd, else 0.",
    lambda g, x, lam: np.where(np.abs(x) > lam, g, 0))


Threshold = _pointwise(
    "Threshold", lambda x, th, v: np.where(x > th, x, v),
    lambda g, x, th, v: g * _mask(x > th, g), "x if x > threshold else value.",
    lambda g, x, th, v: np.where(x > th, g, 0))


def _rows(x, dim):
    """x with ``dim`` moved last, as a C-contiguous (M, K) array, and how to undo that."""
    moved = np.moveaxis(x, dim, -1)
    shape = moved.shape
    return np.ascontiguousarray(moved).reshape(-1, shape[-1] if shape else 1), shape


class Softmax(Op):
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


class LogSoftmax(Softmax):
    """log_softmax: the same Op, a separate name for grad_fn (LogSoftmaxBackward0)."""




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
