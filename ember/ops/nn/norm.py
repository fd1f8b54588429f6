"""Normalization ops: training-mode batch norm and row-wise (layer / group / instance) norm.

NOTE [Fused norm kernels, composite double backward]: training-mode batch norm and row-wise
(layer / group / instance) normalization run the numba kernels of
``ember/ops/_kernels/norm.py`` forward and backward: one pass for the statistics, one for the
output, and a fused gradient. The kernels' backward is NumPy, so when backward itself is being
recorded (``create_graph=True``, seen as grad mode being on inside ``backward``) the Ops switch
to the same gradient written with ember ops, recomputing the statistics from the saved input so
that second derivatives account for their dependence on it.
"""
from __future__ import annotations

import numpy as np

from ..._tensor import Tensor, _make
from ...autograd.function import Op
from ...autograd.grad_mode import _state
from .._kernels import norm as _knorm

_KERNEL_DTYPES = (np.float32, np.float64)


def _arr(t):
    return None if t is None else np.ascontiguousarray(t._data if isinstance(t, Tensor) else t)


# ----------------------------------------------------------------------------- batch norm
def _bn_grads_composite(grad, x, weight, eps, dims, need):
    """Training batch-norm gradients with ember ops.

    See NOTE [Fused norm kernels, composite double backward].
    """
    shape = [1] * x.ndim
    shape[1] = x.shape[1]
    mean = x.mean(dims, keepdim=True)
    xc = x - mean
    invstd = ((xc * xc).mean(dims, keepdim=True) + eps).rsqrt()
    xhat = xc * invstd
    gx = gw = gb = None
    if need[0]:
        scale = invstd if weight is None else invstd * weight.reshape(shape)
        # dL/dx = w * invstd * (g - mean(g) - xhat * mean(g * xhat))
        gx = scale * (grad - grad.mean(dims, keepdim=True) -
                      xhat * (grad * xhat).mean(dims, keepdim=True))
    if len(need) > 1 and need[1]:
        gw = (grad * xhat).sum(dims)
    if len(need) > 2 and need[2]:
        gb = grad.sum(dims)
    return gx, gw, gb


class NativeBatchNorm(Op):
    """Batch norm with batch statistics over every dim but 1 (fused kernel)."""

    @staticmethod
    def forward(ctx, x, weight, bias, eps, stats):
        y, mean, invstd = _knorm.batchnorm_forward_train(_arr(x), _arr(weight), _arr(bias), eps)
        stats["mean"], stats["invstd"] = mean, invstd
        ctx.eps = eps
        ctx.save_for_backward(x, weight, mean, invstd)
        return y

    @staticmethod
    def backward(ctx, grad):
        x, weight, mean, invstd = ctx.saved_tensors
        need = ctx.needs_input_grad[:3]
        if _state.enabled:
            dims = (0,) + tuple(range(2, x.ndim))
            return _bn_grads_composite(grad, x, weight, ctx.eps, dims, need) + (None, None)
        gx, gw, gb = _knorm.batchnorm_backward_train(
            _arr(grad), _arr(x), _arr(weight), mean._data, invstd._data, need[0], need[1])
        return (_make(gx) if need[0] else None, _make(gw) if need[1] else None,
                _make(gb) if need[2] else None, None, None)


# ----------------------------------------------------------------------------- row norm
def _row_grads_composite(grad, x, weight, eps, need):
    """Layer-norm gradients over the last dim of 2-D x, with ember ops."""
    mean = x.mean(-1, keepdim=True)
    xc = x - mean
    invstd = ((xc * xc).mean(-1, keepdim=True) + eps).rsqrt()
    xhat = xc * invstd
    gx = gw = gb = None
    gxhat = grad if weight is None else grad * weight
    if need[0]:
        gx = invstd * (gxhat - gxhat.mean(-1, keepdim=True) -
                       xhat * (gxhat * xhat).mean(-1, keepdim=True))
    if need[1]:
        gw = (grad * xhat).sum(0)
    if need[2]:
        gb = grad.sum(0)
    return gx, gw, gb


def layer_norm_arrays(x, weight, bias, eps, dim):
    """LayerNorm's kernel on arrays: (y as (M, D), mean, invstd) for the rows of x viewed as
    (M, D = dim) and optional weight / bias of D elements."""
    x2 = np.ascontiguousarray(x).reshape(-1, dim)
    w = None if weight is None else _arr(weight).reshape(dim)
    b = None if bias is None else _arr(bias).reshape(dim)
    return _knorm.layernorm_forward(x2, w, b, eps)


class NativeLayerNorm(Op):
    """Normalize each row of x viewed as (M, D) (D = the trailing ``dim`` elements), then
    optionally scale and shift by weight / bias of D elements (fused kernel)."""

    @staticmethod
    def forward(ctx, x, weight, bias, eps, dim):
        y, mean, invstd = layer_norm_arrays(x, weight, bias, eps, dim)
        ctx.eps, ctx.dim = eps, dim
        ctx.bias_shape = None if bias is None else bias.shape
        ctx.save_for_backward(x, weight, mean, invstd)
        return y.reshape(x.shape)

    @staticmethod
    def backward(ctx, grad):
        x, weight, mean, invstd = ctx.saved_tensors
        need = ctx.needs_input_grad[:3]
        dim = ctx.dim
        if _state.enabled:
            w = None if weight is None else weight.reshape(dim)
            gx, gw, gb = _row_grads_composite(grad.reshape(-1, dim), x.reshape(-1, dim), w,
                                              ctx.eps, need)
        else:
            w = None if weight is None else _arr(weight).reshape(dim)
            gx, gw, gb = (_make(a) for a in _knorm.layernorm_backward(
                _arr(grad).reshape(-1, dim), _arr(x).reshape(-1, dim), w, mean._data,
                invstd._data))
        gx = gx.reshape(x.shape) if need[0] else None
        gw = gw.reshape(weight.shape) if need[1] else None
        gb = gb.reshape(ctx.bias_shape) if need[2] else None
        return gx, gw, gb, None, None
