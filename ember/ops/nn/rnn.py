"""Recurrent cell ops: the GEMMs stay with the caller, the numba kernels fuse the pointwise
work. The LSTM and GRU cells use the fused numba backward and are ``once_differentiable``.
"""
from __future__ import annotations

import numpy as np

from ..._backend import gemm, reusable_empty, turns_round
from ..._tensor import _make
from ...autograd.function import Op, once_differentiable
from .._kernels import rnn as _krnn
from ..join import cat, stack
from ._common import _back, _prep


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


class LSTMCellStep(Op):
    """One whole LSTMCell step as one graph node: (h', c') from x (B, I), h (B, H), c (B, H),
    w_ih (4H, I), w_hh (4H, H) and the biases b_ih, b_hh (4H,) (both None without bias).

    A Python loop over nn.LSTMCell at small batch is bound by per-op overhead: composed, a step
    is two transposes, two matmuls, three adds and the cell (eight nodes, each a dispatch and an
    engine visit). Here the forward is two GEMMs, the bias adds and the fused cell kernel; the
    backward is the cell kernel and the GEMMs for each gradient that is needed. Arrays are
    float32 or float64, all of one dtype (the module falls back to the composed ops otherwise).
    The backward is NumPy/numba, so it is once-differentiable (as the composed form, whose cell
    op already was).
    """

    @staticmethod
    def forward(ctx, x, h, c, w_ih, w_hh, b_ih, b_hh):
        gates = gemm(x, w_ih.T)
        gates += gemm(h, w_hh.T)
        if b_ih is not None:
            gates += b_ih
            gates += b_hh
        h_new, c_new, (act, tanh_c) = _krnn.lstm_cell_forward(gates, np.ascontiguousarray(c))
        ctx.set_materialize_grads(False)
        # inputs are saved as themselves (version-checked); act and tanh_c are private, saved
        # through save_for_backward too so that backward frees them (retain_graph=False)
        ctx.save_for_backward(x, h, c, w_ih, w_hh, act, tanh_c)
        return h_new, c_new

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_h, grad_c):
        need = ctx.needs_input_grad
        if grad_h is None and grad_c is None:
            return (None,) * len(need)
        x, h, c, w_ih, w_hh, act, tanh_c = (t._data for t in ctx.saved_tensors)
        dt = act.dtype
        gh = None if grad_h is None else np.ascontiguousarray(grad_h._data, dt)
        gc = None if grad_c is None else np.ascontiguousarray(grad_c._data, dt)
        grad_gates, grad_c_prev = _krnn.lstm_cell_backward(gh, gc, (act, tanh_c),
                                                           np.ascontiguousarray(c))
        # gates = x W_ih^T + h W_hh^T + b_ih + b_hh: each input's gradient is one product
        gx = _make(grad_gates @ w_ih) if need[0] else None
        gh_prev = _make(grad_gates @ w_hh) if need[1] else None
        gc_prev = _make(grad_c_prev) if need[2] else None
        gw_ih = _make(grad_gates.T @ x) if need[3] else None
        gw_hh = _make(grad_gates.T @ h) if need[4] else None
        gb = grad_gates.sum(0) if need[5] or need[6] else None
        # two arrays for the two biases: a tensor handed to two leaves would alias their .grad
        gb_ih = _make(gb) if need[5] else None
        gb_hh = _make(gb.copy()) if need[6] else None
        return gx, gh_prev, gc_prev, gw_ih, gw_hh, gb_ih, gb_hh


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
        return tuple(x[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True))

    @staticmethod
    def backward(ctx, *grads):
        if ctx.squeeze:
            return stack(list(grads), 0)
        return cat(list(grads), 0)
