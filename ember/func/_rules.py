"""Batching rules: how each op family runs once over a whole batch (NOTE [vmap batching]).

A rule receives the op class and the call's arguments, some of them batched, and returns the
result as batched tensors. It computes by calling ops on the physical tensors (whose leading
dims are the batch, one per vmap level), so the autograd graph it leaves is that of the
batched computation. ``per_slice`` is the rule of every op without one: it runs the op once per
sample, on slices of the physical tensors, and stacks the results (still one graph).
"""

from __future__ import annotations

import inspect

import numpy as np

import ember

from .._tensor import Tensor
from . import _batched as B
from ._batched import Unbatchable, is_batched, physical, sizes_of, wrap, wrap_all

# ----------------------------------------------------------------------------- helpers


def _union(*level_sets):
    out = set()
    for lv in level_sets:
        out.update(lv)
    return tuple(sorted(out))


def _align(phys, levels, union, lpad=0, expand=False):
    """``phys`` with one leading dim per level of ``union`` (size 1 where it has none, or the
    level's size with expand=True) and ``lpad`` extra size-1 logical dims in front."""
    k = len(levels)
    shape = tuple(phys.shape)
    if levels == union and not lpad and not expand:
        return phys
    have = dict(zip(levels, shape[:k]))
    lead = tuple(have.get(lv, 1) for lv in union)
    target = lead + (1,) * lpad + shape[k:]
    if isinstance(phys, Tensor):
        if target != shape:
            phys = phys.reshape(target)
        if expand and lead != sizes_of(union):
            phys = phys.expand(sizes_of(union) + target[len(union):])
        return phys
    phys = np.reshape(phys, target)
    if expand:
        phys = np.broadcast_to(phys, sizes_of(union) + target[len(union):])
    return phys


def _lift_all(args):
    """[(phys, levels) or None per argument], and the union of the levels."""
    lifted = [physical(a) if is_batched(a) else None for a in args]
    union = _union(*(lv for p in lifted if p is not None for lv in (p[1],)))
    return lifted, union


def _lrank(phys, levels):
    return phys.ndim - len(levels)


_SIGS: dict = {}


def _names(cls):
    """Positional parameter names of ``cls.forward`` after ctx."""
    names = _SIGS.get(cls)
    if names is None:
        params = list(inspect.signature(cls.forward).parameters.values())
        names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                        p.POSITIONAL_OR_KEYWORD)]
        names = names[names.index("ctx") + 1:] if "ctx" in names else names[1:]
        _SIGS[cls] = names
    return names


def _get(cls, args, params, name, default=None):
    names = _names(cls)
    if name in params:
        return params[name]
    i = names.index(name)
    return args[i] if i < len(args) else default


def _set(cls, args, params, name, value):
    names = _names(cls)
    if name in params or names.index(name) >= len(args):
        params = dict(params)
        params[name] = value
        return args, params
    args = list(args)
    args[names.index(name)] = value
    return tuple(args), params


# ----------------------------------------------------------------------------- fallback


# op name -> how many calls ran slice by slice (tests check that the batched paths stay batched)
SLICED: dict[str, int] = {}


def per_slice(cls, args, params):
    """Run the op once per sample and stack: correct for every op, one call per sample."""
    SLICED[cls.__name__] = SLICED.get(cls.__name__, 0) + 1
    found = [a for a in list(args) + list(params.values()) for a in
             (a if type(a) in (tuple, list) else (a,)) if is_batched(a)]
    union = _union(*(physical(a)[1] for a in found))
    sizes = sizes_of(union)
    n = int(np.prod(sizes, dtype=np.int64))
    if n == 0:
        raise Unbatchable(f"vmap: {cls.__name__} has no batching rule and the batch is empty")

    def flat(a):
        phys, levels = physical(a)
        phys = _align(phys, levels, union, expand=True)
        return phys.reshape((n,) + tuple(phys.shape[len(union):]))

    cache = {}

    def sliced(a, i):
        if type(a) in (tuple, list):
            return type(a)(sliced(v, i) for v in a)
        if not is_batched(a):
            return a
        key = id(a)
        if key not in cache:
            cache[key] = flat(a)
        return cache[key][i]

    outs = []
    single = True
    for i in range(n):
        res = cls._run(*[sliced(a, i) for a in args],
                       **{k: sliced(v, i) for k, v in params.items()})
        single = type(res) is not tuple
        outs.append((res,) if single else res)
    stacked = []
    for j in range(len(outs[0])):
        col = ember.stack([o[j] for o in outs])
        stacked.append(wrap(col.reshape(sizes + tuple(col.shape[1:])), union))
    return stacked[0] if single else tuple(stacked)


# ----------------------------------------------------------------------------- elementwise


def pointwise(cls, args, params):
    """Elementwise and broadcasting ops: line up the logical dims and broadcast the batch."""
    for v in params.values():
        if B._scan(v):
            return per_slice(cls, args, params)
    lifted, union = _lift_all(args)
    rank = 0
    for a, p in zip(args, lifted):
        if p is not None:
            rank = max(rank, _lrank(*p))
        elif isinstance(a, (Tensor, np.ndarray)):
            rank = max(rank, a.ndim)
    new = [a if p is None else _align(p[0], p[1], union, rank - _lrank(*p))
           for a, p in zip(args, lifted)]
    return wrap_all(cls._run(*new, **params), union)


def trailing(min_rank):
    """Ops that act on the last ``min_rank`` dims only (tril, layer norm over trailing dims):
    the physical call is the logical one when the single batched input comes first."""

    def rule(cls, args, params):
        lifted, union = _lift_all(args)
        if any(p is not None for p in lifted[1:]) or lifted[0] is None or \
                _lrank(*lifted[0]) < min_rank:
            return per_slice(cls, args, params)
        return wrap_all(cls._run(lifted[0][0], *args[1:], **params), union)

    return rule


# ----------------------------------------------------------------------------- dims


def _shift(d, k, r):
    """Logical dim d of a rank-r tensor as a physical dim (None when out of range)."""
    if not -r <= d < r:
        return None
    return d if d < 0 else d + k


def dim_op(name, empty_means_all=False, none_means_all=True):
    """Ops whose ``name`` argument is a dim or a tuple of dims of their first input."""

    def rule(cls, args, params):
        lifted, union = _lift_all(args)
        if lifted[0] is None or any(p is not None for p in lifted[1:]) or B._scan(
                tuple(params.values())):
            return per_slice(cls, args, params)
        phys, levels = lifted[0]
        k, r = len(levels), _lrank(*lifted[0])
        dim = _get(cls, args, params, name)
        if r == 0:
            return per_slice(cls, args, params)
        if dim is None and none_means_all or (empty_means_all and dim == ()):
            new = tuple(range(k, k + r))
        elif isinstance(dim, (int, np.integer)):
            new = _shift(int(dim), k, r)
            if new is None:
                return per_slice(cls, args, params)
        elif dim is None:
            new = None
        else:
            new = tuple(_shift(int(d), k, r) for d in dim)
            if None in new:
                return per_slice(cls, args, params)
            if isinstance(dim, list):
                new = list(new)
        args2, params2 = _set(cls, args, params, name, new)
        args2 = (phys,) + tuple(args2[1:])
        return wrap_all(cls._run(*args2, **params2), levels)

    return rule


def two_dims(n1, n2):
    def rule(cls, args, params):
        lifted, union = _lift_all(args)
        if lifted[0] is None or any(p is not None for p in lifted[1:]):
            return per_slice(cls, args, params)
        phys, levels = lifted[0]
        k, r = len(levels), _lrank(*lifted[0])
        d1 = _shift(_get(cls, args, params, n1), k, r)
        d2 = _shift(_get(cls, args, params, n2), k, r)
        if d1 is None or d2 is None:
            return per_slice(cls, args, params)
        args2, params2 = _set(cls, args, params, n1, d1)
        args2, params2 = _set(cls, args2, params2, n2, d2)
        return wrap_all(cls._run(phys, *args2[1:], **params2), levels)

    return rule


# ----------------------------------------------------------------------------- views


def view_rule(cls, args, params):
    phys, levels = physical(args[0])
    if any(is_batched(a) for a in args[1:]):
        return per_slice(cls, args, params)
    shape = tuple(sizes_of(levels)) + tuple(_get(cls, args, params, "shape"))
    view_cls = _classes()["View"]
    try:
        out = view_cls._run(phys, shape)
    except RuntimeError:
        out = _classes()["Reshape"]._run(phys, shape)
    return wrap(out, levels)


def permute_rule(cls, args, params):
    phys, levels = physical(args[0])
    k, r = len(levels), _lrank(phys, levels)
    dims = _get(cls, args, params, "dims")
    order = tuple(range(k)) + tuple(int(d) % max(r, 1) + k for d in dims)
    return wrap(cls._run(phys, order), levels)


def expand_rule(cls, args, params):
    phys, levels = physical(args[0])
    shape = tuple(_get(cls, args, params, "shape"))
    r = _lrank(phys, levels)
    phys = _align(phys, levels, levels, len(shape) - r)
    return wrap(cls._run(phys, sizes_of(levels) + shape), levels)


def repeat_rule(cls, args, params):
    phys, levels = physical(args[0])
    sizes = tuple(_get(cls, args, params, "sizes"))
    r = _lrank(phys, levels)
    if len(sizes) < r:
        return per_slice(cls, args, params)
    phys = _align(phys, levels, levels, len(sizes) - r)
    return wrap(cls._run(phys, (1,) * len(levels) + sizes), levels)


def basic_index_rule(cls, args, params):
    if not is_batched(args[0]) or B._scan(args[1]):
        return per_slice(cls, args, params)
    phys, levels = physical(args[0])
    key = (slice(None),) * len(levels) + tuple(args[1])
    return wrap(cls._run(phys, key), levels)


def _adjacent_arrays(key):
    pos = [i for i, k in enumerate(key) if not (k is None or k is Ellipsis or isinstance(
        k, (slice, int, np.integer)))]
    return not pos or pos == list(range(pos[0], pos[-1] + 1))


def advanced_index_rule(cls, args, params):
    key = args[1]
    if not is_batched(args[0]) or B._scan(key) or any(k is Ellipsis for k in key) or \
            not _adjacent_arrays(key):
        return per_slice(cls, args, params)
    phys, levels = physical(args[0])
    if not any(isinstance(k, np.ndarray) and k.ndim for k in key):
        return per_slice(cls, args, params)
    new = (slice(None),) * len(levels) + tuple(key)
    # arrays first in the key would move the result's index dims in front of the batch
    return wrap(cls._run(phys, new), levels)


def pad_rule(cls, args, params):
    phys, levels = physical(args[0])
    widths = list(_get(cls, args, params, "widths"))
    r = _lrank(phys, levels)
    if len(widths) != r:
        return per_slice(cls, args, params)
    args2, params2 = _set(cls, args, params, "widths", type(widths)([(0, 0)] * len(levels)
                                                                   + widths))
    return wrap(cls._run(phys, *args2[1:], **params2), levels)


def cat_rule(cls, args, params):
    dim, xs = args[0], args[1:]
    lifted, union = _lift_all(xs)
    r = max((_lrank(*p) if p is not None else x.ndim) for x, p in zip(xs, lifted))
    d = _shift(int(dim), len(union), r)
    if d is None:
        return per_slice(cls, args, params)
    full = sizes_of(union)
    new = []
    for x, p in zip(xs, lifted):
        if p is None:
            new.append(x.expand(full + tuple(x.shape)))
        else:
            new.append(_align(p[0], p[1], union, expand=True))
    return wrap(cls._run(d, *new, **params), union)


# ----------------------------------------------------------------------------- gathers


def gather_rule(cls, args, params):
    x, dim, index = args[0], _get(cls, args, params, "dim"), _get(cls, args, params, "index")
    lifted, union = _lift_all([x, index])
    k = len(union)
    rx = _lrank(*lifted[0]) if lifted[0] else x.ndim
    d = _shift(int(dim), k, rx)
    if d is None or rx == 0:
        return per_slice(cls, args, params)
    xp = _align(*lifted[0], union, expand=True) if lifted[0] else x.expand(
        sizes_of(union) + tuple(x.shape))
    ip = _align(*lifted[1], union, expand=True) if lifted[1] else np.broadcast_to(
        index, sizes_of(union) + index.shape)
    return wrap(cls._run(xp, d, ip), union)


def index_select_rule(cls, args, params):
    if not is_batched(args[0]) or B._scan(args[1]):
        return per_slice(cls, args, params)
    return dim_op("dim", none_means_all=False)(cls, args, params)


def embedding_rule(cls, args, params):
    weight, indices = args[0], args[1]
    if is_batched(weight) or not is_batched(indices):
        return per_slice(cls, args, params)
    idx, levels = physical(indices)
    return wrap(cls._run(weight, idx, *args[2:], **params), levels)


# ----------------------------------------------------------------------------- the table

_CLASSES: dict = {}


def _classes():
    if not _CLASSES:
        import importlib
        for path in ("elementwise", "gather", "indexing", "join", "products", "rearrange",
                     "reduce", "special", "unary", "views", "nn.activation", "nn.conv",
                     "nn.distance", "nn.dropout", "nn.embedding", "nn.linear", "nn.loss",
                     "nn.norm", "nn.padding", "nn.pool", "linalg._decomp", "linalg._solve",
                     "linalg._norms"):
            mod = importlib.import_module(f"ember.ops.{path}")
            for name, obj in vars(mod).items():
                if isinstance(obj, type) and hasattr(obj, "forward") and hasattr(obj, "_run"):
                    _CLASSES.setdefault(name, obj)
    return _CLASSES


_POINTWISE = ("Add", "Sub", "Mul", "Div", "Remainder", "Fmod", "Pow", "Atan2", "Hypot",
              "Copysign", "Xlogy", "Round", "NanToNum", "Clamp", "Gelu", "Where", "Cast",
              "Clone", "Contiguous", "Igamma", "Xlog1py", "Zeta", "Polygamma", "NativeDropout",
              "_DelayedError", "Copy", "_Unary", "BinaryCrossEntropy", "Lerp", "Logit")
_FACTORIES = ("unary_op.", "_compare.", "_bitwise.", "_minmax", "_MaxMin")


def _table():
    from ._rules_nn import (
        conv_rule,
        cross_entropy_rule,
        einsum_rule,
        fold_n,
        linear_rule,
        matmul_rule,
    )
    c = _classes()
    table = {name: pointwise for name in _POINTWISE}
    for name in ("Sum", "Mean", "Prod"):
        table[name] = dim_op("dim")
    for name in ("Cumsum", "Cumprod", "Logcumsumexp", "Softmax"):
        table[name] = dim_op("dim", none_means_all=False)
    table.update({
        "LinalgVectorNorm": dim_op("dims"), "PNorm": dim_op("dims"), "Flip": dim_op("dims"),
        "MaxNorm": dim_op("dims"), "Var": dim_op("dims"), "Std": dim_op("dims"),
        "Roll": dim_op("dims", none_means_all=False), "Diagonal": two_dims("dim1", "dim2"),
        "View": view_rule, "Reshape": view_rule, "Permute": permute_rule,
        "Expand": expand_rule, "Repeat": repeat_rule, "BasicIndex": basic_index_rule,
        "AdvancedIndex": advanced_index_rule, "ConstantPadNd": pad_rule, "Cat": cat_rule,
        "Gather": gather_rule, "IndexSelect": index_select_rule, "Embedding": embedding_rule,
        "Matmul": matmul_rule, "Dot": matmul_rule, "Einsum": einsum_rule,
        "Linear": linear_rule, "Conv2d": conv_rule,
        "ConvTranspose2d": fold_n, "MaxPool2d": fold_n, "AvgPool2d": fold_n,
        "AdaptiveAvgPool2d": fold_n, "AdaptiveMaxPool2d": fold_n,
        "NativeLayerNorm": trailing(1), "_Triangle": trailing(2),
        "CrossEntropyLoss": cross_entropy_rule,
    })
    out = {}
    for name, rule in table.items():
        if name in c:
            out[c[name]] = rule
    return out


def classify(cls):
    """The rule for an op class not in the table (subclasses and generated classes)."""
    if not RULES_BUILT:
        RULES_BUILT.append(True)
        B.RULES.update(_table())
        if cls in B.RULES:
            return B.RULES[cls]
    for base in cls.__mro__[1:]:
        if base in B.RULES:
            return B.RULES[base]
    qual = getattr(cls.forward, "__qualname__", "")
    if qual.startswith(_FACTORIES):
        return pointwise
    c = _classes()
    if "_Extreme" in c and issubclass(cls, c["_Extreme"]):
        return dim_op("dim", none_means_all=False)
    if "_AmaxAmin" in c and issubclass(cls, c["_AmaxAmin"]):
        return dim_op("dim", empty_means_all=True)
    if "_MaxMin" in c and issubclass(cls, c["_MaxMin"]):
        return pointwise
    return per_slice


RULES_BUILT: list = []
B._classify[0] = classify
