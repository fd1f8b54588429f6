"""Fold an eval-mode BatchNorm into the preceding convolution or linear layer."""
from __future__ import annotations

import copy

import ember

from ...autograd.grad_mode import no_grad
from ..parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]


def _check_eval(a, b):
    if a.training or b.training:
        raise AssertionError("Fusion only for eval!")
    if b.running_mean is None or b.running_var is None:
        raise AssertionError("fusion needs a BatchNorm with running statistics "
                             "(track_running_stats=True)")


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """A copy of ``conv`` computing bn(conv(x)) (both in eval mode) in one convolution.

    Only ``conv.weight`` and ``conv.bias`` are read and replaced, so any convolution-like
    module with those attributes works.
    """
    _check_eval(conv, bn)
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias,
        transpose)
    return fused


def _bn_scale(bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    w = ember.ones_like(bn_rm) if bn_w is None else bn_w
    b = ember.zeros_like(bn_rm) if bn_b is None else bn_b
    return w * (bn_rv + bn_eps).rsqrt(), w, b


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """(fused weight, fused bias) Parameters: w * s per output channel, (b - mean) * s + beta
    with s = gamma / sqrt(var + eps)."""
    w_dtype = conv_w.dtype
    b_dtype = conv_b.dtype if conv_b is not None else w_dtype
    b_requires_grad = conv_b.requires_grad if conv_b is not None else False
    with no_grad():
        if conv_b is None:
            conv_b = ember.zeros_like(bn_rm)
        scale, _, beta = _bn_scale(bn_rm, bn_rv, bn_eps, bn_w, bn_b)
        shape = [1] * conv_w.ndim
        shape[1 if transpose else 0] = -1
        fused_w = (conv_w * scale.reshape(shape)).to(w_dtype)
        fused_b = ((conv_b - bn_rm) * scale + beta).to(b_dtype)
    return Parameter(fused_w, conv_w.requires_grad), Parameter(fused_b, b_requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """A copy of ``linear`` computing bn(linear(x)) (both in eval mode)."""
    _check_eval(linear, bn)
    if not (linear.out_features == bn.num_features or bn.num_features == 1):
        raise AssertionError("To fuse, linear.out_features == bn.num_features or "
                             "bn.num_features == 1")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    b_requires_grad = linear_b.requires_grad if linear_b is not None else False
    with no_grad():
        if linear_b is None:
            linear_b = ember.zeros_like(bn_rm)
        scale, _, beta = _bn_scale(bn_rm, bn_rv, bn_eps, bn_w, bn_b)
        fused_w = linear_w * scale.unsqueeze(-1)
        fused_b = (linear_b - bn_rm) * scale + beta
    return Parameter(fused_w, linear_w.requires_grad), Parameter(fused_b, b_requires_grad)
