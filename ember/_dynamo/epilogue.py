"""A Linear layer's bias and a following ReLU applied in one pass over the GEMM's output.

NOTE [Bias and ReLU after the GEMM]
Eager runs ``relu(linear(x))`` as three passes over the (rows, out) activations: the GEMM
writes them, the bias is added in place, and relu writes a second array. When the Linear's
output is read only by the relu right after it (NCF's MLP tower: (4096, 32) and (4096, 16)),
the replay runs the Linear's GEMM without the bias and then one numba pass doing
``y = max(y + b, 0)`` in place: the same float additions and the same clamp (NaN passes, -0.0
stays, as in pointwise._k_clamp), so the activations are eager's bit for bit, with one pass and
one buffer less. Each op's ctx gets what its own forward saves (the Linear x and W, the relu its
output), so the backward is unchanged. Used where eager's Linear runs the GEMM and then adds the
bias (2-D float input, output at least REUSE_MIN_BYTES, no split GEMMs, the one pool off);
anything else calls the two forwards as they are.
"""
from __future__ import annotations

import numba
import numpy as np

from .capture import Instr

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))

# False: captures made from now on keep the two ops (a switch for paired A/Bs in one process)
ENABLED = [True]


@numba.njit(nogil=True, cache=True)
def _k_bias_relu(y, b, zero):
    """y[r, j] = relu(y[r, j] + b[j]) in place for a C-contiguous 2-D y (``zero``: 0 in y's
    dtype, so the loop stays in it)."""
    rows, cols = y.shape
    flat = y.ravel()
    width = numba.uint64(cols)
    for r in range(numba.uint64(rows)):
        base = r * width
        for j in range(width):
            v = flat[base + j] + b[j]
            if v < zero:
                v = zero
            flat[base + j] = v


def _fusable_now(x, w, b):
    """Whether eager's Linear forward would run the plain GEMM and then add the bias."""
    from .. import _onepool
    from .._backend import REUSE_MIN_BYTES
    from ..ops.nn.linear import _split
    return (b is not None and x.ndim == 2 and x.dtype in _FLOATS and
            x.dtype == w.dtype == b.dtype and b.ndim == 1 and b.shape[0] == w.shape[0] and
            x.flags.c_contiguous and x.shape[0] * w.shape[0] * x.itemsize >= REUSE_MIN_BYTES
            and not _split(x.size * w.shape[0]) and not _onepool.enabled())


def linear_relu(ctx_lin, ctx_relu, x, w, b):
    """``relu(linear(x, w, b))`` with each op's ctx set as its forward sets it (NOTE [Bias and
    ReLU after the GEMM])."""
    from ..ops.nn.linear import Linear
    from ..ops.unary import relu
    if not _fusable_now(x, w, b):
        return relu.forward(ctx_relu, Linear.forward(ctx_lin, x, w, b))
    y = Linear.forward(ctx_lin, x, w, None)
    if not (y.flags.c_contiguous and y.dtype == x.dtype):
        y += b
        return relu.forward(ctx_relu, y)
    _k_bias_relu(y, b, y.dtype.type(0))
    ctx_relu.params = ()
    ctx_relu.save_for_backward(y)
    return y


class LinearRelu:
    """The Linear instruction and the relu right after it, as one call."""

    def __init__(self, lin, act, fwd_index):
        self.lin, self.act, self.fwd_index = lin, act, fwd_index
        self.inputs = list(lin.args)
        self.outputs = list(act.outs)

    @property
    def ctx_indices(self):
        return [self.fwd_index[id(self.lin)], self.fwd_index[id(self.act)]]

    def emit(self, e):
        i, j = self.ctx_indices
        e.lines.append(f"c{i} = _Ctx({self.lin.nig!r})")
        e.lines.append(f"c{j} = _Ctx({self.act.nig!r})")
        fn = e.const(linear_relu, "LR")
        args = ", ".join(e.ref(r) for r in self.lin.args)
        e.lines.append(f"v{self.outputs[0]} = {fn}(c{i}, c{j}, {args})  # Linear + Relu")
        e.defined.update(self.outputs)


def linear_relus(cap, items):
    """``items`` (a fused forward list) with each Linear whose output only the relu right
    after it reads replaced, with that relu, by a LinearRelu."""
    from ..ops.nn.linear import Linear
    from ..ops.unary import relu
    from .fusion import _external_uses
    if not ENABLED[0]:
        return items
    uses = _external_uses(cap)
    fwd_index = {id(x): i for i, x in enumerate(cap.fwd)}
    saved = {kind[1] for kind in cap.kinds if kind[0] in ("saved", "attr")}
    out, k = [], 0
    while k < len(items):
        lin = items[k]
        act = items[k + 1] if k + 1 < len(items) else None
        if (isinstance(lin, Instr) and lin.cls is Linear and isinstance(act, Instr)
                and act.cls is relu and len(lin.args) == 3 and not lin.params
                and all(r[0] == "s" for r in lin.args) and len(act.args) == 1
                and not act.params and act.args[0] == ("s", lin.outs[0])
                and uses.get(lin.outs[0], 0) == 1
                and fwd_index.get(id(lin)) is not None and fwd_index.get(id(act)) is not None
                and not {fwd_index[id(lin)], fwd_index[id(act)]} & saved
                and cap.arrays[lin.outs[0]].dtype in _FLOATS):
            out.append(LinearRelu(lin, act, fwd_index))
            k += 2
            continue
        out.append(lin)
        k += 1
    return out
