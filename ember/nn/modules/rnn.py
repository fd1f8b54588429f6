"""Recurrent layers: RNN, LSTM, GRU (multi-layer, bidirectional, packed input) and their cells.

NOTE [RNN time loop]
Per layer and direction the input projection of every time step is one GEMM
(x W_ih^T + b for all T*B rows at once); the loop over time then does one (B, H) x (H, G)
GEMM for the recurrent projection and one fused numba cell op (ember.ops.nn.rnn.LSTMCell /
GRUCell) per step. The projected input is split into its steps by one SplitRows node, so the
backward is one concatenation instead of T full-size scatters. Packed sequences are sorted by
decreasing length: the batch shrinks at each step (forward direction) or grows (reverse
direction); finished rows are set aside for h_n.
An unpacked LSTM without projection (the common case) runs the whole layer, input projection
included, inside one node, ember.ops.nn.rnn.LSTMLayer: same per-step arithmetic, no per-step
graph nodes, gate-major arrays (NOTE [Gate-major LSTM layer]), and its backward forms each
weight gradient and grad x with one GEMM over all T*B rows.
nn.LSTMCell, which user code loops over in Python, runs each call as one node as well
(ember.ops.nn.rnn.LSTMCellStep: both GEMMs, the bias adds and the cell), for float32/float64
inputs of one dtype; other dtypes compose matmuls with the LSTMCell op.
"""
from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from ... import _dtype as D
from ... import empty
from ..._tensor import Tensor, _make
from ...ops.join import cat, stack
from ...ops.nn import rnn as _ops
from .. import init
from ..functional import _attention as _Fattn
from ..functional import linear as _linear
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _init_uniform(module, hidden_size):
    """PyTorch's RNN default: every weight and bias ~ U(-1/sqrt(hidden), 1/sqrt(hidden))."""
    bound = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0
    for p in module.parameters():
        init.uniform_(p, -bound, bound)


class RNNBase(Module):
    """Shared parameters, checks and time loop of RNN, LSTM and GRU."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0, device=None,
                 dtype=None):
        super().__init__()
        name = type(self).__name__
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or \
                isinstance(dropout, bool):
            raise ValueError(f"{name}: dropout should be a number in range [0, 1] representing "
                             f"the probability of an element being zeroed; got {dropout!r}")
        for arg, size in (("input_size", input_size), ("hidden_size", hidden_size)):
            if not isinstance(size, int) or size <= 0:
                raise ValueError(f"{name}: {arg} must be a positive integer, got {size!r}")
        if not isinstance(num_layers, int) or num_layers <= 0:
            raise ValueError(f"{name}: num_layers must be a positive integer, got "
                             f"{num_layers!r}")
        if proj_size < 0:
            raise ValueError(f"{name}: proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size and proj_size:
            raise ValueError(f"{name}: proj_size has to be smaller than hidden_size; got "
                             f"proj_size={proj_size}, hidden_size={hidden_size}")
        if proj_size and mode != "LSTM":
            raise ValueError(f"{name}: proj_size argument is only supported for LSTM, not RNN or "
                             "GRU")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, proj_size
        dt = D.get_default_dtype() if dtype is None else D.to_dtype(dtype)
        gate = _GATES[mode] * hidden_size
        real_hidden = proj_size or hidden_size
        dirs = 2 if bidirectional else 1
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for d in range(dirs):
                layer_in = input_size if layer == 0 else real_hidden * dirs
                suffix = "_reverse" if d == 1 else ""
                shapes = [("weight_ih", (gate, layer_in)), ("weight_hh", (gate, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate,)), ("bias_hh", (gate,))]
                if proj_size:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                names = []
                for base, shape in shapes:
                    pname = f"{base}_l{layer}{suffix}"
                    setattr(self, pname, Parameter(empty(*shape, dtype=dt)))
                    names.append(pname)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self):
        _init_uniform(self, self.hidden_size)

    @property
    def _flat_weights(self):
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self):
        """No-op (kept for API compatibility: ember's weights are always usable as they are)."""

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # ------------------------------------------------------------------ input handling
    def _prepare(self, input, hx):
        """(x time-major, batch_sizes or None, hx tuple or None, batched, sorted, unsorted)."""
        name = type(self).__name__
        if isinstance(input, PackedSequence):
            x, batch_sizes = input.data, [int(b) for b in input.batch_sizes._data]
            sorted_idx, unsorted_idx = input.sorted_indices, input.unsorted_indices
            batch = batch_sizes[0] if batch_sizes else 0
            batched = True
            if x.ndim != 2:
                raise RuntimeError(f"{name}: packed input data must be 2-D (sum(lengths), "
                                   f"input_size), got {tuple(x.shape)}")
        else:
            if not isinstance(input, Tensor):
                raise TypeError(f"{name}: input must be a Tensor or PackedSequence, got "
                                f"{type(input).__name__}")
            if input.ndim not in (2, 3):
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.ndim}D "
                                 f"tensor of shape {tuple(input.shape)}")
            batched = input.ndim == 3
            x = input if batched else input.unsqueeze(1)
            if self.batch_first and batched:
                x = x.transpose(0, 1)
            batch_sizes, sorted_idx, unsorted_idx = None, None, None
            batch = x.shape[1]
        if not isinstance(input, PackedSequence) and x.shape[0] == 0:
            raise RuntimeError(f"{name}: Expected sequence length to be larger than 0 in RNN; "
                               f"got input of shape {tuple(input.shape)}")
        # the dtype first: an input wrong in both gets torch's ValueError
        w = self.weight_ih_l0
        if x.dtype != w.dtype:
            raise ValueError(f"{name}: input must have the type {w.dtype}, got type {x.dtype} "
                             "(convert the input or the module with .to(dtype))")
        if x.shape[-1] != self.input_size:
            raise RuntimeError(f"{name}: input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {x.shape[-1]}")
        hx = self._check_hx(hx, batch, batched, sorted_idx)
        return x, batch_sizes, hx, batched, unsorted_idx, batch

    def _check_hx(self, hx, batch, batched, sorted_idx):
        name = type(self).__name__
        if hx is None:
            return None
        # torch takes any sequence of (h_0, c_0) for an LSTM, e.g. a list of detached states
        states = tuple(hx) if isinstance(hx, (tuple, list)) else (hx,)
        if self.mode == "LSTM" and len(states) != 2:
            raise RuntimeError(f"{name}: expected hx to be a tuple (h_0, c_0)")
        dirs = 2 if self.bidirectional else 1
        real_hidden = self.proj_size or self.hidden_size
        out = []
        for i, h in enumerate(states):
            size = real_hidden if i == 0 else self.hidden_size
            if not batched:
                if h.ndim != 2:
                    raise RuntimeError(f"{name}: For unbatched 2-D input, hx should also be 2-D "
                                       f"but got {h.ndim}-D tensor")
                h = h.unsqueeze(1)
            elif h.ndim != 3:
                raise RuntimeError(f"{name}: For batched 3-D input, hx should also be 3-D but "
                                   f"got {h.ndim}-D tensor")
            expected = (self.num_layers * dirs, batch, size)
            if tuple(h.shape) != expected:
                what = "hidden" if i == 0 else "cell"
                raise RuntimeError(f"{name}: Expected {what} size {expected}, got "
                                   f"{list(h.shape)}")
            if sorted_idx is not None:
                h = h.index_select(1, sorted_idx)
            out.append(h)
        return tuple(out)

    # ------------------------------------------------------------------ the time loop
    def forward(self, input, hx=None):
        x, batch_sizes, hx, batched, unsorted_idx, batch = self._prepare(input, hx)
        packed = batch_sizes is not None
        steps = len(batch_sizes) if packed else x.shape[0]
        if not packed:
            batch_sizes = [batch] * steps
        dirs = 2 if self.bidirectional else 1
        real_hidden = self.proj_size or self.hidden_size
        dt = x._data.dtype
        h_n, c_n = [], []
        layer_input = x
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                k = layer * dirs + d
                if hx is None:
                    h0 = _make(np.zeros((batch, real_hidden), dt))
                    c0 = _make(np.zeros((batch, self.hidden_size), dt))
                else:
                    h0 = hx[0][k]
                    c0 = hx[1][k] if self.mode == "LSTM" else None
                out, h_last, c_last = self._direction(layer_input, layer, d, h0, c0,
                                                      batch_sizes, packed)
                outs.append(out)
                h_n.append(h_last)
                c_n.append(c_last)
            layer_input = outs[0] if dirs == 1 else cat(outs, dim=-1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_input = _Fattn._dropout(layer_input, self.dropout)
        h_n = stack(h_n, 0)
        c_n = stack(c_n, 0) if self.mode == "LSTM" else None
        if unsorted_idx is not None:
            h_n = h_n.index_select(1, unsorted_idx)
            c_n = c_n.index_select(1, unsorted_idx) if c_n is not None else None
        if packed:
            output = PackedSequence(layer_input, input.batch_sizes, input.sorted_indices,
                                    input.unsorted_indices)
        else:
            output = layer_input
            if self.batch_first and batched:
                output = output.transpose(0, 1)
            if not batched:
                output = output.squeeze(1)
                h_n = h_n.squeeze(1)
                c_n = c_n.squeeze(1) if c_n is not None else None
        hidden = (h_n, c_n) if self.mode == "LSTM" else h_n
        return output, hidden

    def _direction(self, x, layer, d, h0, c0, batch_sizes, packed):
        """Run one layer in one direction; returns (output, h_last, c_last)."""
        suffix = "_reverse" if d == 1 else ""
        w_ih = getattr(self, f"weight_ih_l{layer}{suffix}")
        w_hh_t = getattr(self, f"weight_hh_l{layer}{suffix}").t()
        b_ih = getattr(self, f"bias_ih_l{layer}{suffix}") if self.bias else None
        b_hh = getattr(self, f"bias_hh_l{layer}{suffix}") if self.bias else None
        w_hr_t = getattr(self, f"weight_hr_l{layer}{suffix}").t() if self.proj_size else None
        if self.mode == "LSTM" and not packed and not self.proj_size and batch_sizes:
            # every step has the full batch: the fused layer op runs the whole time loop,
            # input projection included (NOTE [Gate-major LSTM layer] in ops/nn/rnn.py)
            w_hh = getattr(self, f"weight_hh_l{layer}{suffix}")
            return _ops.LSTMLayer.apply(x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse=(d == 1))
        # see NOTE [RNN time loop]: one GEMM projects every time step
        flat = x if packed else x.reshape(-1, x.shape[-1])
        step_bias = None
        if self.bias and self.mode == "GRU":  # b_hh sits inside r * (h W_hh^T + b_hh): per step
            xw, step_bias = _linear(flat, w_ih, b_ih), b_hh
        else:  # both biases ride on the projection (added in place, no separate add node)
            xw = _linear(flat, w_ih, b_ih + b_hh if self.bias else None)
        if packed:
            pieces = _ops.SplitRows.apply(xw, sizes=tuple(batch_sizes))
        else:
            pieces = _ops.SplitRows.apply(xw.reshape(len(batch_sizes), -1, xw.shape[-1]),
                                          sizes=(1,) * len(batch_sizes), squeeze=True)
        if not isinstance(pieces, tuple):
            pieces = (pieces,)
        order = range(len(batch_sizes) - 1, -1, -1) if d == 1 else range(len(batch_sizes))
        outputs = [None] * len(batch_sizes)
        h, c = h0, c0
        finished_h, finished_c = [], []
        rows = batch_sizes[0] if d == 0 else (batch_sizes[-1] if batch_sizes else 0)
        if d == 1 and packed and rows < h0.shape[0]:
            h = h0[:rows]
            c = c0[:rows] if c0 is not None else None
        for t in order:
            bt = batch_sizes[t]
            if bt < rows:  # forward direction: sequences that ended keep their final state
                finished_h.append(h[bt:])
                h = h[:bt]
                if c is not None:
                    finished_c.append(c[bt:])
                    c = c[:bt]
            elif bt > rows:  # reverse direction: sequences that start now join the batch
                h = cat([h, h0[rows:bt]])
                if c is not None:
                    c = cat([c, c0[rows:bt]])
            rows = bt
            h, c = self._cell(pieces[t], h, c, w_hh_t, step_bias, w_hr_t)
            outputs[t] = h
        if finished_h:
            h = cat([h] + finished_h[::-1])
            c = cat([c] + finished_c[::-1]) if c is not None else None
        out = cat(outputs, 0) if packed else stack(outputs, 0)
        return out, h, c

    def _cell(self, xw_t, h, c, w_hh_t, step_bias, w_hr_t):
        hw = h.matmul(w_hh_t)
        if self.mode == "LSTM":
            h, c = _ops.LSTMCell.apply(xw_t + hw, c)
            if w_hr_t is not None:
                h = h.matmul(w_hr_t)
            return h, c
        if self.mode == "GRU":
            if step_bias is not None:
                hw = hw + step_bias
            return _ops.GRUCell.apply(xw_t, hw, h), None
        pre = xw_t + hw
        return (pre.tanh() if self.mode == "RNN_TANH" else pre.relu()), None


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu).

    Args:
        input_size, hidden_size, num_layers=1, nonlinearity='tanh' ('relu'), bias=True,
        batch_first=False, dropout=0.0 (between layers), bidirectional=False.

    Shape:
        input (L, N, H_in) (or (N, L, H_in) with batch_first, (L, H_in) unbatched, or a
        PackedSequence); h_0 (D * num_layers, N, H_out). Returns (output (L, N, D * H_out),
        h_n (D * num_layers, N, H_out)).

    Example:
        >>> import ember
        >>> out, h = RNN(4, 8, num_layers=2)(ember.randn(5, 3, 4))
        >>> out.shape, h.shape
        (ember.Size([5, 3, 8]), ember.Size([2, 3, 8]))
    """

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None):
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"RNN: Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' "
                             "or 'relu'.")
        super().__init__(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """Long short-term memory, gate order (input, forget, cell, output) as in torch.

    Args:
        input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
        bidirectional=False, proj_size=0 (project h to this size with weight_hr).

    Shape:
        forward(input, (h_0, c_0)=None) -> (output, (h_n, c_n)); h has size proj_size (or
        hidden_size), c has hidden_size. input may be a PackedSequence.

    Example:
        >>> import ember
        >>> lstm = LSTM(4, 8, batch_first=True, bidirectional=True)
        >>> out, (h, c) = lstm(ember.randn(3, 5, 4))
        >>> out.shape, h.shape
        (ember.Size([3, 5, 16]), ember.Size([2, 3, 8]))
    """

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, proj_size, device=device, dtype=dtype)


class GRU(RNNBase):
    """Gated recurrent unit, gate order (reset, update, new) as in torch.

    Args:
        input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
        bidirectional=False.

    Example:
        >>> import ember
        >>> out, h = GRU(4, 8)(ember.randn(5, 3, 4))
        >>> out.shape, h.shape
        (ember.Size([5, 3, 8]), ember.Size([1, 3, 8]))
    """

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None):
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, device=device, dtype=dtype)


# ---------------------------------------------------------------------------------------------
# cells


class RNNCellBase(Module):
    """Parameters and checks shared by RNNCell, LSTMCell and GRUCell."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        dt = D.get_default_dtype() if dtype is None else D.to_dtype(dtype)
        self.weight_ih = Parameter(empty(num_chunks * hidden_size, input_size, dtype=dt))
        self.weight_hh = Parameter(empty(num_chunks * hidden_size, hidden_size, dtype=dt))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, dtype=dt))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, dtype=dt))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        _init_uniform(self, self.hidden_size)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _check(self, input, hx_list):
        """Validate shapes; returns (input 2-D, states 2-D, batched)."""
        name = type(self).__name__
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}: input must be a Tensor, got {type(input).__name__}")
        if input.ndim not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.ndim}D instead")
        batched = input.ndim == 2
        x = input if batched else input.unsqueeze(0)
        if x.shape[1] != self.input_size:
            raise RuntimeError(f"{name}: input has inconsistent input_size: got {x.shape[1]} "
                               f"expected {self.input_size}")
        if x.dtype != self.weight_ih.dtype:
            raise RuntimeError(f"{name}: input must have the type {self.weight_ih.dtype}, got "
                               f"type {x.dtype}")
        states = []
        for h in hx_list:
            if h is None:
                h = _make(np.zeros((x.shape[0], self.hidden_size), x._data.dtype))
            else:
                if h.ndim != input.ndim:
                    raise RuntimeError(f"{name}: Expected hidden state to be {input.ndim}D for "
                                       f"{input.ndim}D input, got {h.ndim}D instead")
                h = h if batched else h.unsqueeze(0)
                if tuple(h.shape) != (x.shape[0], self.hidden_size):
                    raise RuntimeError(f"{name}: Expected hidden size "
                                       f"{(x.shape[0], self.hidden_size)}, got {list(h.shape)}")
            states.append(h)
        return x, states, batched

    def _proj(self, x, w, b):
        y = x.matmul(w.t())
        return y if b is None else y + b


class RNNCell(RNNCellBase):
    """One Elman RNN step: h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu).

    Example:
        >>> import ember
        >>> RNNCell(4, 8)(ember.randn(3, 4)).shape
        ember.Size([3, 8])
    """

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNNCell: Unknown nonlinearity: {nonlinearity}")
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        x, (h,), batched = self._check(input, [hx])
        pre = self._proj(x, self.weight_ih, self.bias_ih) + self._proj(h, self.weight_hh,
                                                                       self.bias_hh)
        out = pre.tanh() if self.nonlinearity == "tanh" else pre.relu()
        return out if batched else out.squeeze(0)


def _one_kernel_dtype(*tensors):
    """Whether the tensors share one dtype that the fused numba kernels compile for."""
    dt = tensors[0]._data.dtype
    return dt in _KERNEL_DTYPES and all(t._data.dtype == dt for t in tensors)


class LSTMCell(RNNCellBase):
    """One LSTM step: forward(input, (h, c)=None) -> (h', c').

    Example:
        >>> import ember
        >>> h, c = LSTMCell(4, 8)(ember.randn(3, 4))
        >>> h.shape, c.shape
        (ember.Size([3, 8]), ember.Size([3, 8]))
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        if hx is not None and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise RuntimeError("LSTMCell: expected hx to be a tuple (h_0, c_0)")
        x, (h, c), batched = self._check(input, [None, None] if hx is None else list(hx))
        if _one_kernel_dtype(x, h, c, self.weight_hh):
            # the whole step as one node: see ember.ops.nn.rnn.LSTMCellStep
            h, c = _ops.LSTMCellStep.apply(x, h, c, self.weight_ih, self.weight_hh,
                                           self.bias_ih, self.bias_hh)
        else:
            gates = self._proj(x, self.weight_ih, self.bias_ih) + self._proj(
                h, self.weight_hh, self.bias_hh)
            h, c = _ops.LSTMCell.apply(gates, c)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step: forward(input, h=None) -> h'.

    Example:
        >>> import ember
        >>> GRUCell(4, 8)(ember.randn(3, 4)).shape
        ember.Size([3, 8])
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        x, (h,), batched = self._check(input, [hx])
        gi = self._proj(x, self.weight_ih, self.bias_ih)
        gh = self._proj(h, self.weight_hh, self.bias_hh)
        out = _ops.GRUCell.apply(gi, gh, h)
        return out if batched else out.squeeze(0)
