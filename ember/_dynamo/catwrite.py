"""Products written straight into the columns of the cat that joins them.

NOTE [Products written into a cat]
NCF's head reads ``cat([u_gmf(user) * i_gmf(item), mlp], dim=1)``: eager writes the (B, 32)
product, then reads it again to copy it into the (B, 48) cat. When a part of a cat along its
last dim is a same-shape Mul read nowhere else, the replay multiplies straight into the cat's
columns and copies the other parts as np.concatenate does. Rows of a few dozen elements are
where NumPy's strided loops are slow (4096 x 32 float32, hot, one thread, smoke: np.multiply
into a column view 40 us against 18 us contiguous, np.concatenate of (4096, 32) and (4096, 16)
56 us), so contiguous parts go through two small numba row loops; the product is one float
multiply either way, the same bits. The Mul's and the Cat's ctx get what their
forwards set, so anything reading them later sees eager's values.
"""
from __future__ import annotations

import numba
import numpy as np

from .capture import Instr, SideEffect

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))

# False: captures made from now on keep the ops as they are (a switch for paired A/Bs)
ENABLED = [True]


@numba.njit(nogil=True, cache=True)
def _k_mul_cols(out, a, b, col):
    """out[r, col:col + w] = a[r] * b[r] for C-contiguous 2-D a, b of w columns."""
    rows, w = a.shape
    fo, fa, fb = out.ravel(), a.ravel(), b.ravel()
    width, wide, c0 = numba.uint64(w), numba.uint64(out.shape[1]), numba.uint64(col)
    for r in range(numba.uint64(rows)):
        src, dst = r * width, r * wide + c0
        for t in range(width):
            fo[dst + t] = fa[src + t] * fb[src + t]


@numba.njit(nogil=True, cache=True)
def _k_copy_cols(out, x, col):
    """out[r, col:col + w] = x[r] for a C-contiguous 2-D x of w columns."""
    rows, w = x.shape
    fo, fx = out.ravel(), x.ravel()
    width, wide, c0 = numba.uint64(w), numba.uint64(out.shape[1]), numba.uint64(col)
    for r in range(numba.uint64(rows)):
        src, dst = r * width, r * wide + c0
        for t in range(width):
            fo[dst + t] = fx[src + t]


def _rows(x, w):
    """x as C-contiguous (rows, w) without a copy, or None."""
    return x.reshape(-1, w) if x.flags.c_contiguous and w else None


def cat_with_products(ctx_cat, ctx_muls, dim, shape, dtype, parts):
    """``np.concatenate`` along the last ``dim`` of ``parts``: arrays, or (a, b) pairs whose
    product is written in place; falls back to the ops' own forwards for anything unexpected
    (a shape or dtype the capture did not see)."""
    from ..ops.elementwise import Mul
    from ..ops.join import Cat
    widths = [(p[0] if isinstance(p, tuple) else p).shape[dim] for p in parts]
    ok = all((p[0] if isinstance(p, tuple) else p).dtype == dtype for p in parts) and all(
        p[0].shape == p[1].shape and p[1].dtype == dtype for p in parts if isinstance(p, tuple))
    if not ok or sum(widths) != shape[dim]:
        arrays, k = [], 0
        for p in parts:
            if isinstance(p, tuple):
                arrays.append(Mul.forward(ctx_muls[k], p[0], p[1]))
                k += 1
            else:
                arrays.append(p)
        return Cat.forward(ctx_cat, dim, *arrays)
    out = np.empty(shape, dtype)
    flat = out.reshape(-1, shape[dim]) if shape[dim] else None
    col, k = 0, 0
    for p, w in zip(parts, widths, strict=True):
        view = out[..., col:col + w]
        if isinstance(p, tuple):
            ctx_muls[k].save_for_backward(p[0], p[1])
            ra, rb = _rows(p[0], w), _rows(p[1], w)
            if flat is not None and ra is not None and rb is not None:
                _k_mul_cols(flat, ra, rb, col)
            else:
                np.multiply(p[0], p[1], out=view)
            k += 1
        else:
            rx = _rows(p, w)
            if flat is not None and rx is not None:
                _k_copy_cols(flat, rx, col)
            else:
                view[...] = p
        col += w
    ctx_cat.sizes, ctx_cat.dim = widths, dim
    return out


class CatProducts:
    """A Cat with some parts Mul instructions, written as one call."""

    def __init__(self, cat, parts, fwd_index):
        self.cat, self.parts, self.fwd_index = cat, parts, fwd_index
        self.muls = [p for p in parts if isinstance(p, Instr)]
        self.inputs = [r for p in parts for r in (p.args if isinstance(p, Instr) else [p])]
        self.outputs = list(cat.outs)

    @property
    def ctx_indices(self):
        return [self.fwd_index[id(m)] for m in self.muls] + [self.fwd_index[id(self.cat)]]

    def emit(self, e):
        idx = self.ctx_indices
        for i, inst in zip(idx, self.muls + [self.cat], strict=True):
            e.lines.append(f"c{i} = _Ctx({inst.nig!r})")
        fn = e.const(cat_with_products, "CP")
        parts = ", ".join(f"({e.ref(p.args[0])}, {e.ref(p.args[1])})" if isinstance(p, Instr)
                          else e.ref(p) for p in self.parts)
        shape, dt = self.cat.meta[0]
        muls = ", ".join(f"c{i}" for i in idx[:-1])
        e.lines.append(f"v{self.outputs[0]} = {fn}(c{idx[-1]}, ({muls},), {self.cat.args[0][1]}, "
                       f"{tuple(shape)!r}, {e.const(np.dtype(dt))}, ({parts},))  # Mul + Cat")
        e.defined.update(self.outputs)


def _untouched(cap, between, args):
    """Whether the items between a Mul and its cat leave the Mul's operands as they are: no
    side effect or inlined backward, no output sharing memory with an operand (in place)."""
    from .codegen import _outs
    from .train_step import InlineBackward
    operands = [cap.arrays[a[1]] for a in args]
    for x in between:
        if isinstance(x, (SideEffect, InlineBackward)):
            return False
        for s in _outs(x):
            v = cap.arrays[s] if s < len(cap.arrays) else None
            if isinstance(v, np.ndarray) and any(np.shares_memory(v, o) for o in operands):
                return False
    return True


def cat_products(cap, items):
    """``items`` (a fused forward list) with each cat along the last dim that has same-shape
    Mul parts read nowhere else replaced by a CatProducts (NOTE [Products written into a
    cat]). Only for a capture of fixed sizes (the cat's shape is written into the call)."""
    from ..ops.elementwise import Mul
    from ..ops.join import Cat
    from .fusion import _external_uses
    if not ENABLED[0]:
        return items
    uses = _external_uses(cap)
    fwd_index = {id(x): i for i, x in enumerate(cap.fwd)}
    saved = {kind[1] for kind in cap.kinds if kind[0] in ("saved", "attr")}
    made_by = {}
    for k, item in enumerate(items):
        if isinstance(item, Instr) and item.cls is Mul:
            made_by[item.outs[0]] = k
    out, drop = list(items), set()
    for k, item in enumerate(items):
        if not (isinstance(item, Instr) and item.cls is Cat and len(item.args) > 2
                and not item.params and fwd_index.get(id(item)) is not None
                and fwd_index[id(item)] not in saved):
            continue
        dim, refs = item.args[0], item.args[1:]
        shape, dt = item.meta[0]
        if dim[0] != "c" or dim[1] != len(shape) - 1 or np.dtype(dt) not in _FLOATS:
            continue
        parts, muls = [], []
        for r in refs:
            j = made_by.get(r[1]) if r[0] == "s" else None
            m = items[j] if j is not None else None
            if (m is not None and uses.get(r[1], 0) == 1 and len(m.args) == 2 and not m.params
                    and all(a[0] == "s" for a in m.args) and fwd_index.get(id(m)) is not None
                    and fwd_index[id(m)] not in saved and refs.count(r) == 1
                    and cap.arrays[m.args[0][1]].shape == cap.arrays[m.args[1][1]].shape
                    == cap.arrays[r[1]].shape
                    and _untouched(cap, items[j + 1:k], m.args)):
                parts.append(m)
                muls.append(j)
            else:
                parts.append(r)
        if not muls:
            continue
        out[k] = CatProducts(item, parts, fwd_index)
        drop.update(muls)
    return [x for j, x in enumerate(out) if j not in drop]
