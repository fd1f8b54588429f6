"""Embedding gradients of products, scattered without writing the product.

NOTE [Products scattered into embedding gradients]
NCF's GMF branch multiplies two lookups, ``u_gmf(user) * i_gmf(item)``. Its backward computes
each lookup's gradient as the incoming gradient times the other lookup (a fused kernel writing
two (B, D) arrays, reading a column slice of the head's input gradient), then each Embedding
backward zeroes its table-sized gradient and adds those rows into it. When a product's only
reader is an Embedding backward (no padding_idx, no scale_grad_by_freq), the replay instead
calls ``embedding.dense_grad_of_product``: one pass that adds ``a[k] * b[k]`` into row
``indices[k]`` in order, the product rounded before the add as before, so the gradient is the
same bit for bit and the two (B, D) products are never written or read back. The fused group
(or the single Mul) that made them goes away when nothing else reads them.
"""
from __future__ import annotations

import numpy as np

from .capture import Instr, NodeBackward

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))

# False: captures made from now on keep the products (a switch for paired A/Bs in one process)
ENABLED = [True]


class ScatterProduct:
    """``v<out> = dense_grad_of_product(ctx.num, ctx.indices, v<a>, v<b>)`` for the Embedding
    whose forward instruction is ``fwd_index``."""

    def __init__(self, fwd_index, a, b, out):
        self.fwd_index, self.a, self.b, self.out = fwd_index, a, b, out
        self.inputs = [("s", a), ("s", b)]
        self.outputs = [out]

    @property
    def ctx_reads(self):
        return [self.fwd_index]

    def emit(self, e):
        from ..ops.nn.embedding import dense_grad_of_product
        fn = e.const(dense_grad_of_product, "SP")
        c = f"c{self.fwd_index}"
        e.lines.append(f"v{self.out} = {fn}({c}.num, {c}.indices, {e.val(self.a)}, "
                       f"{e.val(self.b)})  # Embedding backward of a product")
        e.defined.add(self.out)


def _products(cap, item):
    """{out slot: (a, b)} of a plain Mul or of a fused group made only of plain Muls whose
    outputs are exactly its members' (None otherwise): same-shape float operands of the
    output's dtype, so each output is the elementwise product and nothing else."""
    from ..ops.elementwise import Mul
    from .fusion import FusedGroup
    if isinstance(item, Instr):
        members = [item]
    elif isinstance(item, FusedGroup):
        members = list(item.members)
        if sorted(item.outputs) != sorted(m.outs[0] for m in members):
            return None
    else:
        return None
    prods = {}
    for m in members:
        if not (isinstance(m, Instr) and m.cls is Mul and len(m.args) == 2 and not m.params
                and len(m.outs) == 1 and all(r[0] == "s" for r in m.args)):
            return None
        out = cap.arrays[m.outs[0]]
        a, b = (cap.arrays[r[1]] for r in m.args)
        if not (isinstance(out, np.ndarray) and out.dtype in _FLOATS and
                a.shape == b.shape == out.shape and a.dtype == b.dtype == out.dtype):
            return None
        prods[m.outs[0]] = (m.args[0][1], m.args[1][1])
    return prods


def _plain_embedding_backward(cap, item):
    """The gradient slot an Embedding backward (raw path: constant padding_idx None, no
    scale_grad_by_freq) reads and the weight-gradient slot it writes, or None."""
    from ..ops.nn.embedding import Embedding
    if not isinstance(item, NodeBackward) or len(item.grads) != 1 or item.grads[0] is None:
        return None
    inst = cap.fwd[item.fwd_index]
    if not (isinstance(inst, Instr) and inst.cls is Embedding and len(inst.args) == 4):
        return None
    pad, scale = inst.args[2], inst.args[3]
    if pad != ("c", None) or scale[0] != "c" or scale[1]:
        return None
    if not item.outs or item.outs[0] is None or any(s is not None for s in item.outs[1:]):
        return None
    return item.grads[0], item.outs[0]


def scatter_products(cap, items):
    """``items`` (a fused backward list) with each Embedding backward of a product replaced by
    a ScatterProduct, and the product dropped when nothing else reads it (NOTE [Products
    scattered into embedding gradients])."""
    from .fusion import _external_uses
    uses = _external_uses(cap)
    made = {}  # product slot -> (index of its item, operands)
    for k, item in enumerate(items):
        for s, ab in (_products(cap, item) or {}).items():
            made[s] = (k, ab)
    found = {}  # producing item index -> {its index in items: ScatterProduct}
    for k, item in enumerate(items):
        pair = _plain_embedding_backward(cap, item)
        if pair is None or pair[0] not in made or uses.get(pair[0], 0) != 1:
            continue
        j, (a, b) = made[pair[0]]
        if j < k:
            found.setdefault(j, {})[k] = (pair[0], ScatterProduct(item.fwd_index, a, b, pair[1]))
    out, drop = list(items), set()
    for j, scatters in found.items():
        # only when every product the item writes is scattered: the item then goes, and no
        # product is computed twice
        if set(_products(cap, items[j])) == {s for s, _ in scatters.values()}:
            drop.add(j)
            for k, (_, sp) in scatters.items():
                out[k] = sp
    return [x for j, x in enumerate(out) if j not in drop]


def scatter_all(cap, fused_f, fused_b):
    """scatter_products over a separate backward list and over the backward runs inlined in
    the forward (NOTE [Training-step capture] in train_step.py)."""
    from .train_step import InlineBackward
    if not ENABLED[0]:
        return fused_f, fused_b
    fwd = list(fused_f if fused_f is not None else cap.fwd)
    for k, item in enumerate(fwd):
        if isinstance(item, InlineBackward):
            fwd[k] = InlineBackward(scatter_products(cap, item.items), item.accs)
    if fused_b is not None:
        fused_b = scatter_products(cap, fused_b)
    return fwd, fused_b
