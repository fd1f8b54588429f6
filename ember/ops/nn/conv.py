"""Convolution ops around the numba kernels: conv2d, its transpose and weight gradient, fold
and unfold. ``ember.nn.functional`` validates arguments and calls them; 1-D convolution runs
through the 2-D ops with a height of one.

The forward of each op calls a kernel in ``ember.ops._kernels.conv``. Backwards are written with
these ops wherever the gradient is itself one of them, so double backward works:

NOTE [Convolution adjoint triangle]
Three bilinear maps share one geometry (stride, padding, dilation, groups) and a weight w:
    conv        y  = C_w x                      (Conv2d)
    conv^T      x' = C_w^T y                    (ConvTranspose2d: the input gradient of conv)
    weight      gw = W(gy, x), <W(gy, x), G> = <gy, C_G x>    (ConvWeight)
Each one's partial derivatives are the other two:
    d conv     : gx = C_w^T gy,              gw = W(gy, x)
    d conv^T   : gy = C_w gx',               gw = W(x', gy)      (the roles of the operands swap)
    d weight   : g_gy = C_G x,               g_x = C_G^T gy
so gradients of any order stay inside the triangle and never fall back to NumPy.
Pooling ops pair up the same way with their adjoints (avg <-> avg backward, max backward is a
"""
from __future__ import annotations

from ..._tensor import _make
from ...autograd.function import Op
from ...autograd.grad_mode import _state as _grad_state
from .._kernels import conv as _kconv
from .._kernels import im2col as _kim2col
from ._common import _back, _prep


def _transposed_padding(in_hw, out_hw, kernel, stride, padding, dilation):
    """output_padding that makes conv_transpose of spatial size in_hw produce out_hw."""
    return tuple(o - ((i - 1) * s - 2 * p + d * (k - 1) + 1)
                 for i, o, k, s, p, d in zip(in_hw, out_hw, kernel, stride, padding, dilation,
                                                 strict=True))


# ---------------------------------------------------------------------------------------------
# convolution; see NOTE [Convolution adjoint triangle]


class Conv2d(Op):
    """2-D cross-correlation y = conv(x, w) + b on NCHW arrays."""

    @staticmethod
    def forward(ctx, x, w, b, stride, padding, dilation, groups):
        ctx.geo = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
        ctx.has_bias = b is not None
        ctx.save_for_backward(x, w)
        bias = None if b is None else _prep(b)
        # keep the im2col matrix for the weight gradient: NOTE [Keeping the forward's im2col]
        keep = [] if len(ctx.needs_input_grad) > 1 and ctx.needs_input_grad[1] else None
        y = _kconv.conv2d_forward(_prep(x), _prep(w), bias, stride, padding, dilation, groups,
                                  keep)
        ctx.packed = keep[0] if keep else None
        # Winograd's transformed weight, for the input gradient (NOTE [Keeping the transformed
        # weight] in _kernels/winograd.py)
        ctx.packed_weight = keep[1] if keep and len(keep) > 1 else None
        return _back(y, x.dtype)

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        packed, ctx.packed = ctx.packed, None  # used once: a retained graph packs again
        packed_weight, ctx.packed_weight = ctx.packed_weight, None
        if not _grad_state.enabled:  # no create_graph: the kernels directly, no graph nodes
            return _conv_grads_direct(ctx, grad, x, w, packed, packed_weight)
        gx = gw = gb = None
        if need[0]:
            gx = ConvTranspose2d.apply(grad, w, None, out_hw=tuple(x.shape[2:]), **ctx.geo)
        if need[1]:
            gw = ConvWeight.apply(grad, x, w_shape=tuple(w.shape), packed=packed, **ctx.geo)
        if ctx.has_bias and need[2]:
            gb = grad.sum(dim=(0, 2, 3))
        return gx, gw, gb


def _conv_grads_direct(ctx, grad, x, w, packed, packed_weight=None):
    """Conv2d's three gradients straight from the kernels (what ConvTranspose2d and ConvWeight
    compute, without their nodes): the backward of a step that builds no graph of its own."""
    need = ctx.needs_input_grad
    xp = _prep(x._data)
    wp = _prep(w._data).astype(xp.dtype, copy=False)
    gy = _prep(grad._data).astype(xp.dtype, copy=False)
    if packed is not None and packed.dtype != xp.dtype:
        packed = None
    geo = ctx.geo
    gx, gw, gb = _kconv.conv2d_backward(
        gy, xp, wp, geo["stride"], geo["padding"], geo["dilation"], geo["groups"], need[0],
        need[1], ctx.has_bias and need[2], packed, packed_weight)
    dt = x._data.dtype
    return tuple(None if g is None else _make(_back(g, dt)) for g in (gx, gw, gb))


class ConvTranspose2d(Op):
    """Transposed convolution (the adjoint of Conv2d in its input) to spatial size ``out_hw``."""

    @staticmethod
    def forward(ctx, x, w, b, out_hw, stride, padding, dilation, groups):
        ctx.geo = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
        ctx.has_bias = b is not None
        ctx.save_for_backward(x, w)
        out_pad = _transposed_padding(x.shape[2:], out_hw, w.shape[2:], stride, padding, dilation)
        bias = None if b is None else _prep(b)
        y = _kconv.conv_transpose2d_forward(_prep(x), _prep(w), bias, stride, padding, dilation,
                                            groups, out_pad)
        return _back(y, x.dtype)

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        gx = gw = gb = None
        if need[0]:
            gx = Conv2d.apply(grad, w, None, **ctx.geo)
        if need[1]:  # x plays the output gradient of the underlying conv, grad its input
            gw = ConvWeight.apply(x, grad, w_shape=tuple(w.shape), **ctx.geo)
        if ctx.has_bias and need[2]:
            gb = grad.sum(dim=(0, 2, 3))
        return gx, gw, gb


class ConvWeight(Op):
    """Weight gradient of Conv2d: W(gy, x) with <W(gy, x), G> = <gy, conv(x, G)>."""

    @staticmethod
    def forward(ctx, gy, x, w_shape, stride, padding, dilation, groups, packed=None):
        ctx.geo = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
        ctx.save_for_backward(gy, x)
        xp = _prep(x)
        if packed is not None and packed.dtype != xp.dtype:
            packed = None
        gw = _kconv.conv2d_weight_grad(_prep(gy).astype(xp.dtype, copy=False), xp, w_shape,
                                       stride, padding, dilation, groups, packed)
        return _back(gw, x.dtype)

    @staticmethod
    def backward(ctx, grad):
        gy, x = ctx.saved_tensors
        need = ctx.needs_input_grad
        g_gy = Conv2d.apply(x, grad, None, **ctx.geo) if need[0] else None
        g_x = None
        if need[1]:
            g_x = ConvTranspose2d.apply(gy, grad, None, out_hw=tuple(x.shape[2:]), **ctx.geo)
        return g_gy, g_x


class Unfold(Op):
    """im2col: (N, C, H, W) -> (N, C*kh*kw, L); its adjoint is Fold."""

    @staticmethod
    def forward(ctx, x, kernel_size, dilation, padding, stride):
        ctx.args = (kernel_size, dilation, padding, stride)
        ctx.hw = x.shape[2:]
        y = _kim2col.unfold(_prep(x), kernel_size, dilation, padding, stride)
        return _back(y, x.dtype)

    @staticmethod
    def backward(ctx, grad):
        return Fold.apply(grad, ctx.hw, *ctx.args)


class Fold(Op):
    """col2im: (N, C*kh*kw, L) -> (N, C, H, W), summing overlaps; its adjoint is Unfold."""

    @staticmethod
    def forward(ctx, cols, output_size, kernel_size, dilation, padding, stride):
        ctx.args = (kernel_size, dilation, padding, stride)
        y = _kim2col.fold(_prep(cols), output_size, kernel_size, dilation, padding, stride)
        return _back(y, cols.dtype)

    @staticmethod
    def backward(ctx, grad):
        return Unfold.apply(grad, *ctx.args)
