"""Activation ops (the Op classes behind ``ember.nn.functional``'s activations).

The elementwise activations are ``unary_op``s, the factory of every unary op (ops/unary.py):
the NumPy forward named after the activation, its derivative with ember ops in the decorator
(so double backward works), the same derivative in NumPy for a backward that is not recorded.
They are not public ``ember.<name>`` functions; ``ember.nn.functional`` checks arguments and
calls them (in place through the registry's ``apply_inplace``). softmax / log_softmax use the
row kernels of ``ember/ops/_kernels/loss.py`` forward and an ember-op backward.
"""
from __future__ import annotations

import numpy as np

from ..._backend import reusable_empty
from ..._tensor import _make
from ...autograd.function import Op
from ...autograd.grad_mode import _state as _grad_state
from .._kernels import loss as _kloss
from .._kernels import pointwise as _kpoint
from .._kernels import softmax as _ksoftmax
from ..indexing import where
from ..unary import _sigmoid_np, unary_op


def _mask(cond, like):
    return cond.to(like.dtype)


# d/dx = 1 for x > 0, negative_slope otherwise
@unary_op(lambda g, x, s: g * (_mask(x > 0, g) * (1 - s) + s),
          df_np=lambda g, x, s: np.where(x > 0, g, g * s), public=False)
def leaky_relu(x, negative_slope):
    """x for x > 0, negative_slope * x otherwise."""
    return np.where(x > 0, x, x * negative_slope)


# the gradient passes strictly inside (min_val, max_val), 0 at NaN, as torch's vector loop
# (NOTE [Gradients at NaN] in ops/_kernels/pointwise.py); a select, so an inf/NaN g outside gives 0
@unary_op(lambda g, x, lo, hi: where((x > lo) & (x < hi), g, 0.0),
          df_np=lambda g, x, lo, hi: _kpoint.masked_grad(g, x, lo, hi), public=False)
def hardtanh(x, min_val, max_val):
    """x clipped to [min_val, max_val]."""
    return _kpoint.clamp(x, min_val, max_val)


def _elu_bwd(g, x, alpha, scale, input_scale):
    # x > 0: scale; else (NaN too: NaN, as torch's vector loop) scale * alpha * input_scale *
    # exp(x * input_scale). The exp is taken of min(x, 0): where() differentiates both branches
    # and exp(large x) = inf would give NaN
    neg = (x.clamp(max=0) * input_scale).exp() * (alpha * scale * input_scale)
    return g * where(x > 0, scale, neg)


def _elu_bwd_np(g, x, alpha, scale, input_scale):
    neg = np.exp(np.minimum(x, 0) * input_scale) * (alpha * scale * input_scale)
    return g * np.where(x > 0, scale, neg)


@unary_op(_elu_bwd, df_np=_elu_bwd_np, public=False)
def elu(x, alpha, scale, input_scale):
    """ELU / SELU / CELU: the shared exponential unit."""
    # minimum(0, x) returns x at a tie, so -0.0 stays -0.0 (expm1(-0.0) = -0.0), as torch
    neg = np.expm1(np.minimum(0, x) * input_scale) * (alpha * scale)
    return np.where(x > 0, x * scale, neg)


def _silu_bwd(g, x):
    s = x.sigmoid()
    return g * (s * (1 + x * (1 - s)))  # d/dx x*s(x) = s + x s (1 - s)


def _silu_bwd_np(g, x):
    s = _sigmoid_np(x)
    return g * s * (1 + x * (1 - s))


@unary_op(_silu_bwd, df_np=_silu_bwd_np, public=False)
def silu(x):
    """x * sigmoid(x)."""
    return x * _sigmoid_np(x)


def _softplus_np(x):
    """log(1 + exp(x)) without overflow: max(x, 0) + log1p(exp(-|x|))."""
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def _mish_bwd(g, x):
    # d/dx x tanh(sp(x)) = tanh(sp) + x * sigmoid(x) * (1 - tanh(sp)^2)
    t = softplus.apply(x, 1.0, 20.0).tanh()
    return g * (t + x * x.sigmoid() * (1 - t * t))


def _mish_bwd_np(g, x):
    t = np.tanh(_softplus_np(x))
    return g * (t + x * _sigmoid_np(x) * (1 - t * t))


@unary_op(_mish_bwd, df_np=_mish_bwd_np, public=False)
def mish(x):
    """x * tanh(softplus(x))."""
    return x * np.tanh(_softplus_np(x))


@unary_op(lambda g, x: g * _mask((x > -3) & (x < 3), g) / 6,
          df_np=lambda g, x: np.where((x > -3) & (x < 3), g / 6, 0), public=False)
def hardsigmoid(x):
    """relu6(x + 3) / 6."""
    return np.clip(x / 6 + 0.5, 0, 1)


def _hardswish_bwd(g, x):
    # torch's convention at the kinks: 0 up to -3, x/3 + 1/2 strictly between, 1 from 3 on;
    # NaN falls in the middle branch (NaN, as torch's vector loop)
    mid = x / 3 + 0.5
    return g * where(x <= -3, 0.0, where(x >= 3, 1.0, mid))


@unary_op(_hardswish_bwd, public=False,
          df_np=lambda g, x: g * np.where(x <= -3, 0, np.where(x >= 3, 1, x / 3 + 0.5)))
def hardswish(x):
    """x * relu6(x + 3) / 6."""
    return x * np.clip(x + 3, 0, 6) / 6


def _softplus_bwd(g, x, beta, threshold):
    z = x * beta
    return g * where(z > threshold, 1.0, z.sigmoid())  # d/dx log(1 + e^(bx))/b


def _softplus_bwd_np(g, x, beta, threshold):
    return np.where(x * beta > threshold, g, g * _sigmoid_np(x * beta))


@unary_op(_softplus_bwd, df_np=_softplus_bwd_np, public=False)
def softplus(x, beta, threshold):
    """log(1 + exp(beta * x)) / beta, linear above threshold."""
    z = x * beta
    return np.where(z > threshold, x, _softplus_np(z) / beta)


# d/dx log s(x) = 1 - s(x) = s(-x)
@unary_op(lambda g, x: g * (-x).sigmoid(), df_np=lambda g, x: g * _sigmoid_np(-x), public=False)
def log_sigmoid(x):
    """log(sigmoid(x)), without overflow."""
    return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))


# The shrinks keep NaN (the value tests for the flat region |x| <= lambd) but their gradient
# passes only where |x| > lambd, 0 at NaN; threshold's value and gradient both pass NaN. All
# as torch's vector loops (NOTE [Gradients at NaN] in ops/_kernels/pointwise.py).
@unary_op(lambda g, x, lam: where(x.abs() > lam, g, 0.0),
          df_np=lambda g, x, lam: np.where(np.abs(x) > lam, g, 0), public=False)
def softshrink(x, lambd):
    """Shrink toward 0 by lambd."""
    return np.where(np.abs(x) <= lambd, 0, x - np.copysign(lambd, x))


@unary_op(lambda g, x, lam: where(x.abs() > lam, g, 0.0),
          df_np=lambda g, x, lam: np.where(np.abs(x) > lam, g, 0), public=False)
def hardshrink(x, lambd):
    """x where |x| > lambd, else 0."""
    return np.where(np.abs(x) <= lambd, 0, x)


@unary_op(lambda g, x, th, v: where(x <= th, 0.0, g),
          df_np=lambda g, x, th, v: np.where(x <= th, 0, g), public=False)
def threshold(x, threshold, value):
    """x if x > threshold else value (NaN stays NaN)."""
    return np.where(x <= threshold, value, x)


def _rows(x, dim):
    """x with ``dim`` moved last, as a C-contiguous (M, K) array, and how to undo that."""
    moved = np.moveaxis(x, dim, -1)
    shape = moved.shape
    cols = shape[-1] if shape else 1
    rows = int(np.prod(shape[:-1])) if shape else 1  # not -1: ambiguous when cols == 0
    return np.ascontiguousarray(moved).reshape(rows, cols), shape


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
        if _fused(rows):
            out = _ksoftmax.softmax_rows(rows, reusable_empty(rows.shape, rows.dtype), log)
        else:
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
        if not _grad_state.enabled:  # not recorded (no create_graph): one fused numba pass
            g_rows, shape = _rows(grad._data, dim)
            y_rows, _ = _rows(y._data, dim)
            if _fused(y_rows) and g_rows.dtype == y_rows.dtype:
                gx = _ksoftmax.softmax_rows_backward(
                    g_rows, y_rows, reusable_empty(y_rows.shape, y_rows.dtype), ctx.log)
                gx = np.ascontiguousarray(np.moveaxis(gx.reshape(shape), -1, dim))
                return _make(gx), None, None
        if ctx.log:  # d log_softmax: g - softmax * sum(g)
            return grad - y.exp() * grad.sum(dim, keepdim=True), None, None
        # d softmax: y * (g - sum(g * y))
        return y * (grad - (grad * y).sum(dim, keepdim=True)), None, None


class LogSoftmax(Softmax):
    """log_softmax: the same Op, a separate name for grad_fn (LogSoftmaxBackward0)."""


def _fused(rows):
    """Whether the numba row kernels take these (M, K) rows: float32/float64, non-empty."""
    return rows.dtype in (np.float32, np.float64) and rows.size > 0


def _log_softmax_rows(rows):
    """(x - max) - log(sum(exp(x - max))) per row.

    Subtracting the log-sum-exp of the *shifted* values keeps the result exact for large x:
    x - logsumexp(x) would cancel (1000.6931 - 1000 keeps only ~4 digits in float32).
    """
    if rows.size == 0:
        return np.empty_like(rows)
    row_max = rows.max(axis=1, keepdims=True)
    # an all -inf row would give -inf - -inf = NaN; shift it by 0 instead (result NaN, as the
    # fused kernel's: see ember/ops/_kernels/softmax.py)
    shifted = rows - np.where(row_max == -np.inf, 0, row_max).astype(rows.dtype)
    with np.errstate(divide="ignore"):
        return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
