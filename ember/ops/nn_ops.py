"""Differentiable ops around the numba nn kernels: convolution, fold/unfold, pooling, RNN cells.

The forward of each op calls a kernel in ``ember.ops._kernels``. Backwards are written with ember
ops wherever the gradient is itself one of these ops, so double backward works:

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
scatter by the saved indices whose adjoint is a gather). The LSTM and GRU cells use the fused
numba backward and are ``once_differentiable``.

Kernels want C-contiguous float32/float64 arrays; half precision is computed in float32.
These ops are internal: ``ember.nn.functional`` validates arguments and calls them.
"""
from __future__ import annotations

import numpy as np

from .._backend import reusable_empty, turns_round
from .._tensor import _make
from ..autograd.function import Op, once_differentiable
from ..autograd.grad_mode import _state as _grad_state
from ._kernels import conv as _kconv
from ._kernels import pool as _kpool
from ._kernels import rnn as _krnn

__all__ = ["Conv2d", "ConvTranspose2d", "ConvWeight", "Unfold", "Fold", "MaxPool2d",
           "PlaneScatter", "PlaneGather", "MaxUnpool", "AvgPool2d", "AvgPool2dBackward",
           "AdaptiveAvgPool2d", "AdaptiveAvgPool2dBackward", "AdaptiveMaxPool2d",
           "LSTMCell", "LSTMLayer", "GRUCell", "SplitRows", "IndexSelect", "IndexSelectBackward"]

_KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _prep(a):
    """A C-contiguous array in a dtype the kernels compile for (float32 or float64)."""
    if a.dtype not in _KERNEL_DTYPES:
        a = a.astype(np.float32)
    return np.ascontiguousarray(a)


def _back(y, dtype):
    """Cast a kernel result back to the caller's dtype (a no-op for float32/float64)."""
    return y if y.dtype == dtype else y.astype(dtype)


def _transposed_padding(in_hw, out_hw, kernel, stride, padding, dilation):
    """output_padding that makes conv_transpose of spatial size in_hw produce out_hw."""
    return tuple(o - ((i - 1) * s - 2 * p + d * (k - 1) + 1)
                 for i, o, k, s, p, d in zip(in_hw, out_hw, kernel, stride, padding, dilation))


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
        return _back(y, x.dtype)

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        packed, ctx.packed = ctx.packed, None  # used once: a retained graph packs again
        if not _grad_state.enabled:  # no create_graph: the kernels directly, no graph nodes
            return _conv_grads_direct(ctx, grad, x, w, packed)
        gx = gw = gb = None
        if need[0]:
            gx = ConvTranspose2d.apply(grad, w, None, out_hw=tuple(x.shape[2:]), **ctx.geo)
        if need[1]:
            gw = ConvWeight.apply(grad, x, w_shape=tuple(w.shape), packed=packed, **ctx.geo)
        if ctx.has_bias and need[2]:
            gb = grad.sum(dim=(0, 2, 3))
        return gx, gw, gb


def _conv_grads_direct(ctx, grad, x, w, packed):
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
        need[1], ctx.has_bias and need[2], packed)
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
        y = _kconv.unfold(_prep(x), kernel_size, dilation, padding, stride)
        return _back(y, x.dtype)

    @staticmethod
    def backward(ctx, grad):
        return Fold.apply(grad, ctx.hw, *ctx.args)


class Fold(Op):
    """col2im: (N, C*kh*kw, L) -> (N, C, H, W), summing overlaps; its adjoint is Unfold."""

    @staticmethod
    def forward(ctx, cols, output_size, kernel_size, dilation, padding, stride):
        ctx.args = (kernel_size, dilation, padding, stride)
        y = _kconv.fold(_prep(cols), output_size, kernel_size, dilation, padding, stride)
        return _back(y, cols.dtype)

    @staticmethod
    def backward(ctx, grad):
        return Unfold.apply(grad, *ctx.args)


# ---------------------------------------------------------------------------------------------
# pooling. Kernels take (..., H, W); indices are int64 offsets into each H*W plane.


class MaxPool2d(Op):
    """Max pooling; returns (y, indices). The gradient scatters by the indices."""

    @staticmethod
    def forward(ctx, x, kernel_size, stride, padding, dilation, ceil_mode):
        y, indices = _kpool.maxpool2d_forward(_prep(x), kernel_size, stride, padding, dilation,
                                              ceil_mode)
        ctx.in_shape = x.shape
        ctx.save_for_backward(indices)
        return _back(y, x.dtype), indices

    @staticmethod
    def backward(ctx, grad, grad_indices):
        indices = ctx.saved_tensors[0].detach()
        return PlaneScatter.apply(grad, indices, ctx.in_shape)


class PlaneScatter(Op):
    """zeros(shape) with src[..., k] added at plane offset indices[..., k] (max-pool backward)."""

    @staticmethod
    def forward(ctx, src, indices, shape):
        ctx.save_for_backward(indices)
        gx = _kpool.maxpool2d_backward(_prep(src), np.ascontiguousarray(indices), shape)
        return _back(gx, src.dtype)

    @staticmethod
    def backward(ctx, grad):
        (indices,) = ctx.saved_tensors
        return PlaneGather.apply(grad, indices), None, None


class PlaneGather(Op):
    """out[..., k] = x[..., plane offset indices[..., k]]; the adjoint of PlaneScatter."""

    @staticmethod
    def forward(ctx, x, indices):
        ctx.shape = x.shape
        ctx.save_for_backward(indices)
        lead = x.shape[:-2]
        planes = x.reshape(lead + (-1,))
        idx = indices.reshape(lead + (-1,))
        return np.take_along_axis(planes, idx, axis=-1).reshape(indices.shape)

    @staticmethod
    def backward(ctx, grad):
        (indices,) = ctx.saved_tensors
        return PlaneScatter.apply(grad, indices, ctx.shape), None


class MaxUnpool(Op):
    """zeros(shape) with x written (not added) at plane offsets ``indices``, like torch."""

    @staticmethod
    def forward(ctx, x, indices, shape):
        ctx.save_for_backward(indices)
        out = np.zeros(shape, x.dtype)
        lead = shape[:-2]
        np.put_along_axis(out.reshape(lead + (-1,)), indices.reshape(lead + (-1,)),
                          x.reshape(lead + (-1,)), axis=-1)
        return out

    @staticmethod
    def backward(ctx, grad):
        (indices,) = ctx.saved_tensors
        return PlaneGather.apply(grad, indices), None, None


class AvgPool2d(Op):
    """Average pooling on (..., H, W); its adjoint is AvgPool2dBackward."""

    @staticmethod
    def forward(ctx, x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                divisor_override):
        ctx.args = (kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
        ctx.in_shape = x.shape
        y = _kpool.avgpool2d_forward(_prep(x), *ctx.args)
        return _back(y, x.dtype)

    @staticmethod
    def backward(ctx, grad):
        return AvgPool2dBackward.apply(grad, ctx.in_shape, *ctx.args)


class AvgPool2dBackward(Op):
    """Gradient of AvgPool2d (linear in grad, so its own gradient is AvgPool2d)."""

    @staticmethod
    def forward(ctx, grad, in_shape, kernel_size, stride, padding, ceil_mode, count_include_pad,
                divisor_override):
        ctx.args = (kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
        gx = _kpool.avgpool2d_backward(_prep(grad), in_shape, *ctx.args)
        return _back(gx, grad.dtype)

    @staticmethod
    def backward(ctx, gg):
        return AvgPool2d.apply(gg, *ctx.args)


class AdaptiveAvgPool2d(Op):
    """Adaptive average pooling on (..., H, W) to output_size (oh, ow)."""

    @staticmethod
    def forward(ctx, x, output_size):
        ctx.in_shape = x.shape
        y = _kpool.adaptive_avgpool2d_forward(_prep(x), output_size)
        return _back(y, x.dtype)

    @staticmethod
    def backward(ctx, grad):
        return AdaptiveAvgPool2dBackward.apply(grad, ctx.in_shape)


class AdaptiveAvgPool2dBackward(Op):
    """Gradient of AdaptiveAvgPool2d; its own gradient is AdaptiveAvgPool2d."""

    @staticmethod
    def forward(ctx, grad, in_shape):
        ctx.out_hw = grad.shape[-2:]
        gx = _kpool.adaptive_avgpool2d_backward(_prep(grad), in_shape)
        return _back(gx, grad.dtype)

    @staticmethod
    def backward(ctx, gg):
        return AdaptiveAvgPool2d.apply(gg, tuple(ctx.out_hw))


class AdaptiveMaxPool2d(Op):
    """Adaptive max pooling; returns (y, indices) with plane offsets like MaxPool2d."""

    @staticmethod
    def forward(ctx, x, output_size):
        y, indices = _kpool.adaptive_maxpool2d_forward(_prep(x), output_size)
        ctx.in_shape = x.shape
        ctx.save_for_backward(indices)
        return _back(y, x.dtype), indices

    @staticmethod
    def backward(ctx, grad, grad_indices):
        indices = ctx.saved_tensors[0].detach()
        return PlaneScatter.apply(grad, indices, ctx.in_shape)


# ---------------------------------------------------------------------------------------------
# gather along one dim (resizing and padding): a segmented sum, not np.add.at, in the backward


class IndexSelect(Op):
    """x.take(index, axis=dim) for a fixed int64 index; the adjoint is IndexSelectBackward."""

    @staticmethod
    def forward(ctx, x, index, dim):
        ctx.index, ctx.dim, ctx.size = index, dim, x.shape[dim]
        return np.take(x, index, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        return IndexSelectBackward.apply(grad, ctx.index, ctx.dim, ctx.size)


class IndexSelectBackward(Op):
    """Sum the slices of g along dim into position index[k] of a length-``size`` dim.

    np.add.at is slow for this; sorting the index once turns it into np.add.reduceat over the
    runs of equal indices (each output position is a contiguous run after the sort).
    """

    @staticmethod
    def forward(ctx, g, index, dim, size):
        ctx.index, ctx.dim = index, dim
        shape = list(g.shape)
        shape[dim] = size
        out = np.zeros(shape, g.dtype)
        if index.size == 0:
            return out
        order = np.argsort(index, kind="stable")
        ordered = index[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        g_sorted = g if np.all(order == np.arange(order.size)) else np.take(g, order, axis=dim)
        sums = np.add.reduceat(g_sorted, starts, axis=dim)
        key = [slice(None)] * g.ndim
        key[dim] = ordered[starts]
        out[tuple(key)] = sums
        return out

    @staticmethod
    def backward(ctx, grad):
        return IndexSelect.apply(grad, ctx.index, ctx.dim)


# ---------------------------------------------------------------------------------------------
# recurrent cells: the GEMMs stay with the caller, the kernels fuse the pointwise work


class LSTMCell(Op):
    """(h, c) from gate pre-activations (B, 4H) (order i, f, g, o) and c_prev (B, H).

    The backward is the fused numba kernel, so it is once-differentiable.
    """

    @staticmethod
    def forward(ctx, gates, c_prev):
        h, c, (act, tanh_c) = _krnn.lstm_cell_forward(_prep(gates), _prep(c_prev))
        ctx.dtype = gates.dtype
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(c_prev, act, tanh_c)
        return _back(h, gates.dtype), _back(c, gates.dtype)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_h, grad_c):
        c_prev, act, tanh_c = ctx.saved_tensors
        if grad_h is None and grad_c is None:
            return None, None
        dt = act._data.dtype
        gh = None if grad_h is None else _prep(grad_h._data).astype(dt, copy=False)
        gc = None if grad_c is None else _prep(grad_c._data).astype(dt, copy=False)
        grad_gates, grad_c_prev = _krnn.lstm_cell_backward(
            gh, gc, (act._data, tanh_c._data), _prep(c_prev._data))
        return _make(_back(grad_gates, ctx.dtype)), _make(_back(grad_c_prev, ctx.dtype))


class LSTMLayer(Op):
    """A whole LSTM layer over unpacked time steps, one direction: (out (T, B, H), h_T, c_T)
    from the projected inputs xw (T, B, 4H) (both biases included), h0, c0 (B, H) and the
    recurrent weight w_hh (4H, H); ``reverse`` runs from the last step to the first.

    One graph node for the whole sequence instead of four per step (matmul, add, cell, split),
    and backpropagation through time accumulates grad_w_hh as ONE GEMM over all T*B rows
    instead of T separate (4H, H) products summed by the engine. Same arithmetic per step as
    LSTMCell; once-differentiable like it.
    """

    @staticmethod
    def forward(ctx, xw, h0, c0, w_hh, reverse=False):
        x = _prep(xw)
        dt = x.dtype
        w = _prep(w_hh).astype(dt, copy=False)
        steps, batch, hidden = x.shape[0], x.shape[1], w.shape[1]
        # the sequences saved for backward are big and made every step: NOTE [Reused buffers]
        out = reusable_empty((steps, batch, hidden), dt)
        acts = reusable_empty((steps, batch, 4 * hidden), dt)
        tanh_cs = reusable_empty((steps, batch, hidden), dt)
        cs = reusable_empty((steps, batch, hidden), dt)
        h = _prep(h0).astype(dt, copy=False)
        c = _prep(c0).astype(dt, copy=False)
        gates = np.empty((batch, 4 * hidden), dt)
        # the recurrent product as W_hh @ h^T when that is faster: NOTE [GEMM orientation]
        turn = turns_round(h, w.T)
        gates_t = np.empty((4 * hidden, batch), dt) if turn else None
        for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
            if turn:
                np.matmul(w, h.T, out=gates_t)
                np.add(gates_t.T, x[t], out=gates)  # the transpose rides on the input add
            else:
                np.matmul(h, w.T, out=gates)
                gates += x[t]
            # the cell writes straight into this step's slices of the saved sequences
            h, c, _ = _krnn.lstm_cell_forward(gates, c, (out[t], cs[t], acts[t], tanh_cs[t]))
        ctx.reverse, ctx.dtype = reverse, xw.dtype
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(h0, c0, w_hh, out, acts, tanh_cs, cs)
        return _back(out, xw.dtype), _back(h.copy(), xw.dtype), _back(c.copy(), xw.dtype)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out, grad_h, grad_c):
        h0, c0, w_hh, out, acts, tanh_cs, cs = (v._data for v in ctx.saved_tensors)
        dt = acts.dtype
        steps, batch, hidden = out.shape
        w = _prep(w_hh).astype(dt, copy=False)
        order = list(range(steps - 1, -1, -1) if ctx.reverse else range(steps))
        g_out = None if grad_out is None else _prep(grad_out._data).astype(dt, copy=False)
        dh = np.zeros((batch, hidden), dt) if grad_h is None else \
            _prep(grad_h._data).astype(dt, copy=True)
        dc = None if grad_c is None else _prep(grad_c._data).astype(dt, copy=False)
        grad_gates = np.empty_like(acts)
        h_prev = np.empty_like(out)  # the h each step read, in the same (T, B, H) slots
        if steps:
            h_prev[order[0]] = _prep(h0)
            h_prev[order[1:]] = out[order[:-1]]
        c0 = _prep(c0).astype(dt, copy=False)
        for k in range(steps - 1, -1, -1):  # undo the steps in reverse processing order
            t = order[k]
            c_prev = c0 if k == 0 else cs[order[k - 1]]
            if g_out is not None:
                dh += g_out[t]
            _, dc = _krnn.lstm_cell_backward(dh, dc, (acts[t], tanh_cs[t]), c_prev,
                                             grad_gates[t])
            np.matmul(grad_gates[t], w, out=dh)
        rows = steps * batch
        grad_w = reusable_empty((4 * hidden, hidden), dt)  # NOTE [Reused buffers]
        np.matmul(grad_gates.reshape(rows, 4 * hidden).T, h_prev.reshape(rows, hidden),
                  out=grad_w)
        if dc is None:
            dc = np.zeros((batch, hidden), dt)
        return (_make(_back(grad_gates, ctx.dtype)), _make(_back(dh, ctx.dtype)),
                _make(_back(dc, ctx.dtype)), _make(_back(grad_w, ctx.dtype)))


class GRUCell(Op):
    """h from gi = x W_ih^T + b_ih, gh = h_prev W_hh^T + b_hh (B, 3H) (order r, z, n), h_prev.

    The backward is the fused numba kernel, so it is once-differentiable.
    """

    @staticmethod
    def forward(ctx, gi, gh, h_prev):
        h, saved = _krnn.gru_cell_forward(_prep(gi), _prep(gh), _prep(h_prev))
        ctx.dtype = gi.dtype
        ctx.save_for_backward(h_prev, saved)
        return _back(h, gi.dtype)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_h):
        h_prev, saved = ctx.saved_tensors
        g = _prep(grad_h._data).astype(saved._data.dtype, copy=False)
        grad_gi, grad_gh, grad_h_prev = _krnn.gru_cell_backward(g, saved._data,
                                                                _prep(h_prev._data))
        return tuple(_make(_back(a, ctx.dtype)) for a in (grad_gi, grad_gh, grad_h_prev))


class SplitRows(Op):
    """Split along dim 0 into pieces of ``sizes`` rows (squeezed when ``squeeze``).

    One node for all pieces: the backward concatenates every piece's gradient at once, where
    per-piece narrow/select would each build a full-size zero gradient (quadratic over a
    sequence).
    """

    @staticmethod
    def forward(ctx, x, sizes, squeeze=False):
        ctx.sizes, ctx.squeeze = sizes, squeeze
        bounds = np.cumsum((0,) + tuple(sizes))
        if squeeze:
            return tuple(x[i] for i in range(len(sizes)))
        return tuple(x[a:b] for a, b in zip(bounds[:-1], bounds[1:]))

    @staticmethod
    def backward(ctx, *grads):
        from .movement import cat, stack
        if ctx.squeeze:
            return stack(list(grads), 0)
        return cat(list(grads), 0)
