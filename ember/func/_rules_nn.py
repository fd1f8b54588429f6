"""Batching rules of the products, convolutions, pooling and losses (see _rules.py)."""

from __future__ import annotations

import numpy as np

from . import _batched as B
from ._batched import is_batched, physical, sizes_of, wrap
from ._rules import _align, _classes, _get, _lift_all, _lrank, _names, _set, per_slice

# ----------------------------------------------------------------------------- products


def matmul_rule(cls, args, params):
    a, b = args[0], args[1]
    lifted, union = _lift_all([a, b])
    ra = _lrank(*lifted[0]) if lifted[0] else a.ndim
    rb = _lrank(*lifted[1]) if lifted[1] else b.ndim
    if ra == 0 or rb == 0:
        return per_slice(cls, args, params)
    if cls is _classes()["Dot"]:
        if ra != 1 or rb != 1:
            return per_slice(cls, args, params)
        cls = _classes()["Matmul"]
    # vectors become matrices (a row on the left, a column on the right), dropped at the end
    rank = max(ra, rb, 2)
    ops = []
    for x, p, r, col in ((a, lifted[0], ra, False), (b, lifted[1], rb, True)):
        if p is None:
            if r == 1:
                x = x.unsqueeze(-1) if col else x.unsqueeze(0)
            ops.append(x)
            continue
        phys, levels = p
        if r == 1:
            lead = tuple(phys.shape[:len(levels)])
            phys = phys.reshape(lead + ((phys.shape[-1], 1) if col else (1, phys.shape[-1])))
            r = 2
        ops.append(_align(phys, levels, union, rank - r))
    out = cls._run(*ops)
    k = len(union)
    shape = tuple(out.shape)
    if ra == 1 or rb == 1:
        logical = list(shape[k:])
        if rb == 1:
            logical.pop(-1)
        if ra == 1:
            logical.pop(-1 if rb == 1 else -2)
        if rank > max(ra, rb):  # padding added leading logical dims: drop them again
            logical = logical[len(logical) - (max(ra, rb) - 1):] if max(ra, rb) > 1 else []
        out = out.reshape(shape[:k] + tuple(logical))
    return wrap(out, union)


def einsum_rule(cls, args, params):
    """Each vmap level gets a fresh subscript letter, put in front of the batched operands'
    subscripts and of the output's."""
    eq, xs = args[0], args[1:]
    if "..." in eq or "->" not in eq or B._scan(tuple(params.values())):
        return per_slice(cls, args, params)
    lifted, union = _lift_all(xs)
    free = [c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in eq]
    letter = dict(zip(union, free))
    ins, out = eq.split("->")
    specs = ins.split(",")
    new = []
    for i, p in enumerate(lifted):
        if p is None:
            new.append(xs[i])
            continue
        specs[i] = "".join(letter[lv] for lv in p[1]) + specs[i]
        new.append(p[0])
    out = "".join(letter[lv] for lv in union) + out
    return wrap(cls._run(",".join(specs) + "->" + out, *new), union)


def linear_rule(cls, args, params):
    x = args[0]
    weight = args[1] if len(args) > 1 else params.get("weight")
    bias = args[2] if len(args) > 2 else params.get("bias")
    if not is_batched(weight) and not is_batched(bias):
        phys, levels = physical(x)
        if _lrank(phys, levels) == 0:
            return per_slice(cls, args, params)
        return wrap(cls._run(phys, weight, bias), levels)
    return _batched_linear(x, weight, bias)


def _batched_linear(x, weight, bias):
    from ._linear import batched_linear
    return batched_linear(x, weight, bias)


def conv_rule(cls, args, params):
    """Conv2d: a batch of inputs folds into N; a batch of weights into groups."""
    x, w = args[0], args[1]
    b = args[2] if len(args) > 2 else params.get("b")
    if is_batched(b) and not is_batched(w):
        return per_slice(cls, args, params)
    if not is_batched(w):
        return fold_n(cls, args, params)
    lifted, union = _lift_all([x, w, b])
    n = int(np.prod(sizes_of(union), dtype=np.int64))
    k = len(union)
    groups = int(_get(cls, args, params, "groups"))
    xp = _align(*lifted[0], union, expand=True) if lifted[0] else x.expand(
        sizes_of(union) + tuple(x.shape))
    wp = _align(*lifted[1], union, expand=True)
    xs = tuple(xp.shape[k:])  # (N, C, H, W)
    xp = xp.reshape((n,) + xs).movedim(0, 1).reshape((xs[0], n * xs[1]) + xs[2:])
    ws = tuple(wp.shape[k:])
    wp = wp.reshape((n * ws[0],) + ws[1:])
    bp = None
    if b is not None:
        bp = (_align(*lifted[2], union, expand=True) if lifted[2] else b.expand(
            sizes_of(union) + tuple(b.shape))).reshape(n * ws[0])
    rest = {kk: v for kk, v in params.items() if kk not in ("b", "groups")}
    args2, params2 = _set(cls, (xp, wp, bp) + tuple(args[3:]), rest, "groups", groups * n)
    y = cls._run(*args2, **params2)
    ys = tuple(y.shape)
    y = y.reshape((ys[0], n, ws[0]) + ys[2:]).movedim(1, 0)
    return wrap(y.reshape(sizes_of(union) + (ys[0], ws[0]) + ys[2:]), union)


def fold_n(cls, args, params):
    """Ops on an (N, ...) input whose samples are independent: the batch folds into N."""
    lifted, union = _lift_all(args)
    if lifted[0] is None or any(p is not None for p in lifted[1:]) or B._scan(
            tuple(params.values())):
        return per_slice(cls, args, params)
    phys, levels = lifted[0]
    k = len(levels)
    shape = tuple(phys.shape)
    n = int(np.prod(shape[:k + 1], dtype=np.int64))
    out = cls._run(phys.reshape((n,) + shape[k + 1:]), *args[1:], **params)
    lead = shape[:k + 1]

    def unfold(o):
        return o.reshape(lead + tuple(o.shape[1:]))

    if type(out) is tuple:
        return tuple(wrap(unfold(o), levels) for o in out)
    return wrap(unfold(out), levels)


# ----------------------------------------------------------------------------- losses


def cross_entropy_rule(cls, args, params):
    names = _names(cls)
    bound = dict(zip(names, args))
    bound.update(params)
    x, target = bound["x"], bound["target"]
    if is_batched(bound.get("weight")):
        return per_slice(cls, args, params)
    lifted, union = _lift_all([x, target])
    k = len(union)
    full = sizes_of(union)
    n = int(np.prod(full, dtype=np.int64))
    xp = _align(*lifted[0], union, expand=True) if lifted[0] else x.expand(
        full + tuple(x.shape))
    tp = _align(*lifted[1], union, expand=True) if lifted[1] else np.broadcast_to(
        target, full + target.shape)
    lx, lt = tuple(xp.shape[k:]), tuple(tp.shape[k:])
    if len(lx) == 1:
        xf, tf, cdim = xp.reshape((n,) + lx), np.reshape(tp, (n,)), 1
    else:
        xf = xp.reshape((n * lx[0],) + lx[1:])
        tf = np.reshape(tp, (n * lt[0],) + lt[1:])
        cdim = bound["cdim"]
    loss = cls._run(xf, tf, bound["weight"], bound["ignore_index"], bound["smoothing"], "none",
                    cdim)
    loss = loss.reshape(full + lt)
    reduction = bound["reduction"]
    if reduction == "none":
        return wrap(loss, union)
    dims = tuple(range(k, k + len(lt)))
    total = loss.sum(dim=dims) if dims else loss
    if reduction == "sum":
        return wrap(total, union)
    w = bound["weight"]
    t = np.asarray(tp)
    keep = t != bound["ignore_index"]
    safe = np.where(keep, t, 0)
    weights = (w[safe] if w is not None else np.ones(t.shape)) * keep
    denom = weights.sum(axis=dims) if dims else weights
    denom = np.asarray(denom, dtype=xp._data.dtype)
    return wrap(_classes()["Div"]._run(total, denom), union)
