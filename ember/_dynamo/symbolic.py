"""Dynamic shapes: one capture replayed at other sizes (see NOTE [Size generalisation]).

A capture records concrete sizes wherever a size reaches an op: reshape/view/expand targets,
``sum_to`` shapes in backward, zero-filled gradients, dropout masks, the output shape of a
fused kernel. With dynamic shapes the capture is kept as a *template* in which each recorded
int is either a constant or an expression of the dynamic input sizes; at a new input signature
that differs only in those sizes, the expressions are evaluated, the recorded ints rewritten and
the replay code generated again (no new capture; numba kernels are size-agnostic).
"""
from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np

from .capture import Instr, Misc, SideEffect

# NOTE [Size generalisation]
# Which recorded ints are sizes? Matching values against the input sizes is ambiguous (a batch
# of 4 and 4 attention heads, a dim index equal to a size). So the first dynamic capture is
# followed by a *shadow* capture of the same call on inputs whose dynamic dims are enlarged
# (each symbol by a different amount, data repeated so index values stay valid; the random
# stream is restored afterwards). The two recordings must have the same structure; every int
# that differs between them is a size, and is fitted to c * s_i, c * s_i * s_j, s_i + c,
# s_i // c or ceil(s_i / c) over the symbols s (a dynamic input dim of size >= 2; dims of equal
# size are one symbol, "duck sizing" as in torch); an int that differs but fits none makes the
# capture not generalisable. Two points do not pin a size down: chunk(2) of 3 and of 4 rows
# both start with a part of 2, which is ceil(s / 2) and not a constant, and fftshift's roll by
# 1 and by 2 fits s - 2 as well as s // 2. So a second shadow capture, at enlargements of the
# other parity, checks each fit: the first candidate that also predicts it is kept. Sizes 0
# and 1 are specialised: a new size 0 or 1 records again, as in torch. The first replay at
# each new signature runs once with a shape check after every op (forward and backward,
# without side effects, random stream restored) before it is used. Captures that update live
# state (BatchNorm running statistics) are not generalised.


_NONE = object()


class NotGeneral(Exception):
    """This capture cannot be replayed at the requested sizes."""


# ------------------------------------------------------------------------------ symbols
def symbols(key, dims_of):
    """[(key position, dim, size)] of the dynamic dims of a cache key, and the symbol of each
    distinct size (value -> index)."""
    dyn, syms = [], {}
    for i, a in enumerate(key):
        if not (type(a) is tuple and len(a) == 3 and type(a[0]) is tuple):
            continue
        allowed = dims_of(i)
        for d, v in enumerate(a[0]):
            if v >= 2 and (allowed is None or d in allowed):
                dyn.append((i, d, v))
                syms.setdefault(v, len(syms))
    return dyn, syms


def shadow_sizes(syms, which=1):
    """Enlarged size per symbol value for the first or second shadow capture: distinct steps
    so products do not coincide; the second's steps are even where the first's are odd (NOTE
    [Size generalisation])."""
    if which == 1:
        return {v: v + 1 + 2 * k for v, k in syms.items()}
    return {v: v + 4 + 2 * r for r, v in enumerate(sorted(syms))}  # even steps, increasing


def sizes_at(key, tpl_key, dyn, syms):
    """Each symbol's value at a new key, or None when the key differs from the template's in
    more than the dynamic sizes, breaks duck sizing, or has a dynamic size 0 or 1."""
    if len(key) != len(tpl_key):
        return None
    free = {(i, d) for i, d, _ in dyn}
    for i, (a, b) in enumerate(zip(tpl_key, key, strict=True)):
        if a == b:
            continue
        if not (type(a) is tuple and len(a) == 3 and type(a[0]) is tuple and type(b) is tuple
                and len(b) == 3 and type(b[0]) is tuple):
            return None
        if a[1:] != b[1:] or len(a[0]) != len(b[0]):
            return None
        if any(p != q and (i, d) not in free
               for d, (p, q) in enumerate(zip(a[0], b[0], strict=True))):
            return None
    vals = {}
    for i, d, v in dyn:
        a = key[i]
        if not (type(a) is tuple and len(a) == 3 and type(a[0]) is tuple) or d >= len(a[0]):
            return None
        n = a[0][d]
        if n < 2 or vals.setdefault(syms[v], n) != n:
            return None
    return vals


# ------------------------------------------------------------------------------ int leaves
def _map_ints(v, f):
    """v with every number inside (tuples, lists, dicts of them; 0-d arrays, a promoted scalar
    such as the count a mean divides by) replaced by f(number), in order; f also sees every
    other array (which must then be the same in the shadow capture)."""
    if type(v) is int or type(v) is float:
        return f(v)
    if isinstance(v, (np.integer, np.floating)) and not isinstance(v, np.bool_):
        return type(v)(f(v.item()))
    if isinstance(v, np.ndarray):
        if v.ndim == 0 and v.dtype.kind in "iuf":
            return np.asarray(f(v.item()), v.dtype)
        return f(v)
    if type(v) is tuple:
        return tuple(_map_ints(x, f) for x in v)
    if type(v) is list:
        return [_map_ints(x, f) for x in v]
    if type(v) is dict:
        return {k: _map_ints(x, f) for k, x in v.items()}
    return v


def _walk(cap, f):
    """Rebuild cap's size-carrying parts through f (called on every recorded int in a fixed
    order); returns (fwd, bwd, kinds, arrays, outputs)."""
    def ref(r):
        if r[0] == "k":
            return ("k", r[1], [ref(x) for x in r[2]])
        return r if r[0] == "s" else ("c", _map_ints(r[1], f))

    def instr(x):
        return dataclasses.replace(x, args=[ref(r) for r in x.args],
                                   params={k: ref(r) for k, r in x.params.items()},
                                   meta=[(_map_ints(tuple(s), f), d) for s, d in x.meta])

    def item(x):
        if isinstance(x, Instr):
            return instr(x)
        if isinstance(x, Misc) and x.kind == "zeros":      # args: shape, dtype
            return dataclasses.replace(x, args=[_map_ints(tuple(x.args[0]), f), x.args[1]])
        if isinstance(x, Misc) and x.kind == "reshape":    # args: slot, shape
            return dataclasses.replace(x, args=[x.args[0], _map_ints(tuple(x.args[1]), f)])
        return x

    fwd = [item(x) for x in cap.fwd]
    bwd = None if cap.bwd is None else [item(x) for x in cap.bwd]
    kinds, arrays = list(cap.kinds), list(cap.arrays)
    for s, k in enumerate(kinds):
        if k[0] == "rand":
            (fn, fargs), rest = k[1][0], k[1][1:]
            kinds[s] = ("rand", ((fn, (_map_ints(tuple(fargs[0]), f),) + tuple(fargs[1:])),)
                        + tuple(rest))
        elif k[0] == "const" and isinstance(arrays[s], np.ndarray):
            a = arrays[s]
            shape = _map_ints(tuple(a.shape), f)
            if shape != a.shape:
                arrays[s] = np.full(shape, a.reshape(-1)[0] if a.size else 0, a.dtype)
    outputs = [("py", _map_ints(o[1], f)) if isinstance(o, tuple) and o[0] == "py" else o
               for o in cap.outputs]
    return fwd, bwd, kinds, arrays, outputs


def _leaves(cap):
    out = []

    def f(v):
        out.append(v)
        return v
    _walk(cap, f)
    return out


def _structure(cap):
    """What must agree between the capture and its shadow (besides the ints)."""
    def kind(k):
        return k[0] if k[0] in ("rand", "const") else k
    return ([type(x).__name__ + getattr(getattr(x, "cls", None), "__name__", "")
             for x in list(cap.fwd) + list(cap.bwd or ())],
            [kind(k) for k in cap.kinds], len(cap.outputs))


# ------------------------------------------------------------------------------ fitting
def _fits(a, b, sa, sb):
    """Candidate expressions (callables of the symbol values) taking a -> b as the symbols go
    sa -> sb, most likely first; the caller keeps the first that also predicts the second
    shadow capture (NOTE [Size generalisation])."""
    if _same(a, b):
        yield a
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return  # an array operand that depends on the sizes
    if type(a) is float or type(b) is float:
        if float(a).is_integer() and float(b).is_integer():
            for e in _fits(int(a), int(b), sa, sb):
                yield e if not callable(e) else (lambda s, e=e: float(e(s)))
        else:
            yield from _fits_reciprocal(float(a), float(b), sa, sb)
        return
    n = len(sa)
    for i in range(n):
        if sa[i] and a % sa[i] == 0 and b == (a // sa[i]) * sb[i]:
            yield lambda s, i=i, c=a // sa[i]: c * s[i]
    for i, j in itertools.combinations(range(n), 2):
        m = sa[i] * sa[j]
        if a % m == 0 and b == (a // m) * sb[i] * sb[j]:
            yield lambda s, i=i, j=j, c=a // m: c * s[i] * s[j]
    for i in range(n):
        if b - sb[i] == a - sa[i]:
            yield lambda s, i=i, c=a - sa[i]: s[i] + c
    for i in range(n):  # a size split in parts: s // c and its ceiling (chunk, fftshift)
        for c in range(2, 9):
            if sa[i] // c == a and sb[i] // c == b:
                yield lambda s, i=i, c=c: s[i] // c
            if -(-sa[i] // c) == a and -(-sb[i] // c) == b:
                yield lambda s, i=i, c=c: -(-s[i] // c)


def _fits_reciprocal(a, b, sa, sb):
    """c / s_i or c / (s_i * s_j): a mean's scale factor."""
    for i in range(len(sa)):
        c = a * sa[i]
        if math.isclose(c / sb[i], b, rel_tol=1e-6):
            yield lambda s, i=i, c=c: c / s[i]
    for i, j in itertools.combinations(range(len(sa)), 2):
        c = a * sa[i] * sa[j]
        if math.isclose(c / (sb[i] * sb[j]), b, rel_tol=1e-6):
            yield lambda s, i=i, j=j, c=c: c / (s[i] * s[j])


def _predicts(e, c, sc):
    got = e(sc) if callable(e) else e
    if type(c) is float and type(got) is float:
        return math.isclose(got, c, rel_tol=1e-6)
    return _same(got, c)


def _same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and \
            a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
    return type(a) is type(b) and (a == b or (a != a and b != b))


def make_template(cap, shadows, syms, fused_fwd, fused_bwd):
    """A template from a capture and its two shadow captures, or None when they do not
    generalise."""
    if any(x is None or x.breaks for x in shadows) or \
            any(isinstance(x, SideEffect) for x in cap.fwd):
        return None
    shadow, check = shadows
    if not _structure(cap) == _structure(shadow) == _structure(check):
        return None
    la, lb, lc = _leaves(cap), _leaves(shadow), _leaves(check)
    if not len(la) == len(lb) == len(lc):
        return None
    sa = [v for v, _ in sorted(syms.items(), key=lambda kv: kv[1])]
    sb, sc = ([sizes[v] for v in sa] for sizes in (shadow_sizes(syms), shadow_sizes(syms, 2)))
    exprs = []
    for a, b, c in zip(la, lb, lc, strict=True):
        e = next((e for e in _fits(a, b, sa, sb) if _predicts(e, c, sc)), _NONE)
        if e is _NONE:
            return None
        exprs.append(e)
    for s, k in enumerate(cap.kinds):
        a, b = cap.arrays[s], shadow.arrays[s]
        if k[0] != "const" or not isinstance(a, np.ndarray):
            continue
        if a.shape == b.shape:
            if not _same(a, np.asarray(b)):
                return None  # a constant whose value depends on the sizes
        elif a.size and not (a.reshape(-1) == a.flat[0]).all():
            return None  # resized with the sizes: must be uniform to be rebuilt
    arrays = [a if k[0] == "const" else None for a, k in zip(cap.arrays, cap.kinds,
                                                               strict=True)]
    return {"cap": _replace(cap, arrays=arrays), "exprs": exprs,
            "fused": (fused_fwd, fused_bwd), "nsyms": len(sa)}


def instantiate(tpl, svals):
    """(Capture, fused forward, fused backward) at symbol values ``svals`` (index -> size)."""
    from .fusion import FusedGroup
    s = [svals[k] for k in range(tpl["nsyms"])]
    it = iter([e(s) if callable(e) else e for e in tpl["exprs"]])
    cap = tpl["cap"]
    fwd, bwd, kinds, arrays, outputs = _walk(cap, lambda v: next(it))
    new = {id(a): b for a, b in zip(list(cap.fwd) + list(cap.bwd or ()),
                                    list(fwd) + list(bwd or ()), strict=True)}
    cap2 = _replace(cap, fwd=fwd, bwd=bwd, kinds=kinds, arrays=arrays, outputs=outputs)

    def item(x):
        if isinstance(x, FusedGroup):
            members = [new[id(m)] for m in x.members]
            g = FusedGroup(members, x.inputs, x.outputs, tuple(members[0].meta[0][0]),
                           x.dtype, x.body, x.nscalar)
            g.perms = x.perms
            return g
        return new.get(id(x), x)

    ff, fb = tpl["fused"]
    return cap2, (None if ff is None else [item(x) for x in ff]), \
        (None if fb is None else [item(x) for x in fb])


def _replace(cap, **changes):
    """dataclasses.replace keeping the attributes trace.py sets outside the fields."""
    new = dataclasses.replace(cap, **changes)
    for attr in ("out_spec", "n_inputs"):
        if hasattr(cap, attr):
            setattr(new, attr, getattr(cap, attr))
    return new


def check_shape(arr, shape, what):
    """The validation run's per-op check (see NOTE [Size generalisation])."""
    if np.shape(arr) != tuple(shape):
        raise NotGeneral(f"{what} gave shape {np.shape(arr)}, expected {tuple(shape)}")
    return arr


def resized(t, sizes, dims):
    """A tensor like t with the given dims enlarged (its data repeated to fill them)."""
    from .. import _tensor
    shape = list(t._data.shape)
    for d in dims:
        shape[d] = sizes[shape[d]]
    arr = np.resize(t._data, tuple(shape)) if t._data.size else np.zeros(shape, t._data.dtype)
    out = _tensor._make(np.ascontiguousarray(arr))
    if t._requires_grad:
        out.requires_grad_()
    return out


__all__ = ["NotGeneral", "instantiate", "make_template"]
