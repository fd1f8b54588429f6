"""Sample generators for movement, indexing and product ops: one small generator each.

Same conventions as _generators.py (at most 6 elements per tensor, 0-d, empty and
non-contiguous cases); the table using them is OP_TABLE in ember/testing/_op_table.py.
"""
from __future__ import annotations

import functools

import numpy as np

from .. import _dtype as D
from .._tensor import _make
from ._generators import S, _index, _mask, _scalar, _t, _tt


def _shape_samples(rng, dtype, calls, noncontig=None):
    """Samples from (shape, args, kwargs, name) tuples; noncontig adds a transposed input."""
    out = [S(_t(rng, shape, dtype), args, kw, name) for shape, args, kw, name in calls]
    if noncontig is not None:
        shape, args, kw = noncontig
        out.append(S(_tt(rng, shape, dtype), args, kw, "transposed"))
    return out


_SHAPE_CALLS = {
    "view": [((2, 3), ((3, 2),), {}, "2-d"), ((2, 3), ((-1,),), {}, "infer"),
             ((), ((1,),), {}, "0-d"), ((0, 3), ((3, 0),), {}, "empty")],
    "reshape": [((2, 3), ((3, 2),), {}, "2-d"), ((2, 3), ((-1, 1),), {}, "infer"),
                ((), ((1, 1),), {}, "0-d"), ((0, 3), ((3, -1),), {}, "empty")],
    "permute": [((1, 2, 3), ((2, 0, 1),), {}, "3-d"), ((2, 3), ((-1, 0),), {}, "negative"),
                ((), ((),), {}, "0-d"), ((0, 3), ((1, 0),), {}, "empty")],
    "transpose": [((1, 2, 3), (0, 2), {}, "3-d"), ((2, 3), (-1, -2), {}, "negative"),
                  ((), (0, -1), {}, "0-d"), ((0, 3), (0, 1), {}, "empty")],
    "t": [((2, 3), (), {}, "2-d"), ((3,), (), {}, "1-d"), ((), (), {}, "0-d"),
          ((0, 3), (), {}, "empty")],
    "adjoint": [((2, 3), (), {}, "2-d"), ((2, 1, 3), (), {}, "3-d"), ((0, 3), (), {}, "empty")],
    "expand": [((3,), (2, 3), {}, "new dim"), ((2, 1), (2, 3), {}, "size 1"),
               ((2, 1), (-1, 3), {}, "keep -1"), ((), (2, 3), {}, "0-d"),
               ((0, 1), (0, 3), {}, "empty")],
    "broadcast_to": [((3,), ((2, 3),), {}, "new dim"), ((2, 1), ((2, 3),), {}, "size 1"),
                     ((), ((2, 3),), {}, "0-d"), ((0, 1), ((0, 3),), {}, "empty")],
    "squeeze": [((1, 3, 1), (), {}, "all"), ((1, 3, 1), (0,), {}, "dim 0"),
                ((1, 3, 1), (-1,), {}, "dim -1"), ((1, 3, 1), ((0, 2),), {}, "dims"),
                ((2, 3), (0,), {}, "not size 1"), ((), (), {}, "0-d"),
                ((0, 1), (), {}, "empty")],
    "unsqueeze": [((2, 3), (0,), {}, "front"), ((2, 3), (-1,), {}, "back"),
                  ((2, 3), (1,), {}, "middle"), ((), (0,), {}, "0-d"),
                  ((0, 3), (1,), {}, "empty")],
    "flatten": [((1, 2, 3), (), {}, "all"), ((1, 2, 3), (1,), {}, "start 1"),
                ((2, 3), (0, 0), {}, "single dim"), ((), (), {}, "0-d"),
                ((0, 3), (), {}, "empty")],
    "unflatten": [((6,), (0, (2, 3)), {}, "1-d"), ((2, 3), (-1, (3, 1)), {}, "last"),
                  ((2, 3), (0, (-1, 1)), {}, "infer"), ((0, 3), (1, (3, 1)), {}, "empty")],
    "ravel": [((2, 3), (), {}, "2-d"), ((), (), {}, "0-d"), ((0, 3), (), {}, "empty")],
    "clone": [((2, 3), (), {}, "2-d"), ((), (), {}, "0-d"), ((0, 3), (), {}, "empty")],
    "as_strided": [((6,), ((2, 2), (1, 2)), {}, "overlapping"),
                   ((2, 3), ((2, 2), (3, 1), 1), {}, "offset"),
                   ((6,), ((0,), (1,)), {}, "empty"), ((6,), ((), ()), {}, "0-d view"),
                   ((), ((), ()), {}, "0-d"), ((0,), ((0,), (1,)), {}, "empty input")],
    "narrow": [((2, 3), (1, 1, 2), {}, "dim 1"), ((2, 3), (0, -1, 1), {}, "negative start"),
               ((2, 3), (1, 3, 0), {}, "empty"), ((0, 3), (1, 0, 2), {}, "empty input")],
    # (no negative start: torch 2.13's narrow_copy gradient is zeros there, ember's narrow's)
    "narrow_copy": [((2, 3), (1, 1, 2), {}, "dim 1"), ((3, 2), (0, 1, 2), {}, "dim 0")],
    "select": [((2, 3), (0, 1), {}, "dim 0"), ((2, 3), (-1, -1), {}, "negative"),
               ((3,), (0, 2), {}, "to 0-d"), ((0, 3), (1, 0), {}, "empty")],
    "unbind": [((2, 3), (), {}, "dim 0"), ((2, 3), (1,), {}, "dim 1"),
               ((3,), (), {}, "to 0-d"), ((0, 3), (1,), {}, "empty")],
    "split": [((2, 3), (2, 1), {}, "size"), ((2, 3), ([1, 2], -1), {}, "sizes"),
              ((5,), (2,), {}, "uneven"), ((0, 3), (1, 1), {}, "empty")],
    "chunk": [((5,), (2,), {}, "uneven"), ((2, 3), (3, 1), {}, "dim 1"),
              ((0, 3), (2, 1), {}, "empty")],
    "tensor_split": [((5,), (2,), {}, "sections"), ((5,), ([1, 3],), {}, "indices"),
                     ((2, 3), (2, 1), {}, "dim 1"), ((0, 3), (2, 1), {}, "empty")],
    "movedim": [((1, 2, 3), (0, 2), {}, "3-d"), ((2, 3), (-1, 0), {}, "negative"),
                ((1, 2, 3), ((0, 1), (2, 0)), {}, "tuples"), ((0, 3), (0, 1), {}, "empty")],
    # ember/ops/shape.py
    "flip": [((2, 3), ((0, 1),), {}, "all"), ((2, 3), ((-1,),), {}, "last"),
             ((), ((),), {}, "0-d"), ((0, 3), ((1,),), {}, "empty")],
    "fliplr": [((2, 3), (), {}, "2-d"), ((0, 3), (), {}, "empty")],
    "flipud": [((2, 3), (), {}, "2-d"), ((3,), (), {}, "1-d"), ((0, 3), (), {}, "empty")],
    "roll": [((2, 3), (1,), {}, "flat"), ((2, 3), (-1, 1), {}, "dim 1"),
             ((2, 3), ((1, 2), (0, 1)), {}, "two dims"), ((0, 3), (1, 1), {}, "empty")],
    "rot90": [((2, 3), (), {}, "once"), ((2, 3), (2,), {}, "twice"),
              ((1, 2, 3), (-1, (1, 2)), {}, "backwards"), ((0, 3), (), {}, "empty")],
    "tile": [((3,), ((2,),), {}, "1-d"), ((1, 3), ((2, 1),), {}, "2-d"),
             ((), ((2,),), {}, "0-d"), ((0, 3), ((2, 1),), {}, "empty")],
    "repeat_interleave": [((3,), (2,), {}, "int"), ((2, 1), (2,), {"dim": 1}, "dim"),
                          ((), (3,), {}, "0-d"), ((0, 3), (2,), {"dim": 0}, "empty")],
    "tril": [((2, 3), (), {}, "main"), ((2, 3), (1,), {}, "above"), ((0, 3), (), {}, "empty")],
    "triu": [((2, 3), (), {}, "main"), ((2, 3), (-1,), {}, "below"), ((0, 3), (), {}, "empty")],
    "diagonal": [((2, 3), (), {}, "main"), ((2, 3), (1,), {}, "offset"),
                 ((1, 2, 3), (0, 1, 2), {}, "dims"), ((0, 3), (), {}, "empty")],
    "diag_embed": [((3,), (), {}, "1-d"), ((2, 2), (1,), {}, "offset"), ((0,), (), {}, "empty")],
    "diag": [((3,), (), {}, "vector"), ((2, 3), (), {}, "matrix"), ((2, 3), (-1,), {}, "below"),
             ((0,), (), {}, "empty")],
    "diagflat": [((2, 3), (), {}, "2-d"), ((3,), (1,), {}, "offset"), ((0,), (), {}, "empty")],
    "trace": [((2, 3), (), {}, "rect"), ((0, 3), (), {}, "empty")],
}

_NONCONTIG_CALL = {
    "reshape": ((2, 3), ((6,),), {}), "permute": ((2, 3), ((1, 0),), {}),
    "transpose": ((2, 3), (0, 1), {}), "t": ((2, 3), (), {}), "adjoint": ((2, 3), (), {}),
    "expand": ((2, 1, 3), (2, 2, 3), {}), "broadcast_to": ((2, 1, 3), ((2, 2, 3),), {}),
    "squeeze": ((2, 1, 3), (), {}), "unsqueeze": ((2, 3), (1,), {}),
    "flatten": ((2, 3), (), {}), "unflatten": ((2, 3), (1, (3, 1)), {}),
    "ravel": ((2, 3), (), {}), "clone": ((2, 3), (), {}), "narrow": ((2, 3), (1, 1, 2), {}),
    "select": ((2, 3), (1, 2), {}), "unbind": ((2, 3), (1,), {}),
    "split": ((2, 3), (2, 1), {}), "chunk": ((2, 3), (2, 1), {}),
    "tensor_split": ((2, 3), (2, 1), {}), "movedim": ((2, 3), (0, 1), {}),
    "flip": ((2, 3), ((0,),), {}), "fliplr": ((2, 3), (), {}), "flipud": ((2, 3), (), {}),
    "roll": ((2, 3), (1, 0), {}), "rot90": ((2, 3), (), {}), "tile": ((2, 3), ((2, 1),), {}),
    "repeat_interleave": ((2, 3), (2,), {"dim": 1}), "tril": ((2, 3), (), {}),
    "triu": ((2, 3), (), {}), "diagonal": ((2, 3), (), {}), "diag_embed": ((2, 3), (), {}),
    "diag": ((2, 3), (), {}), "diagflat": ((2, 3), (), {}), "trace": ((2, 3), (), {}),
}


def shape_samples(name):
    return lambda rng, dtype: _shape_samples(rng, dtype, _SHAPE_CALLS[name],
                                             _NONCONTIG_CALL.get(name))


def cat_samples(rng, dtype):
    x = functools.partial(_t, rng, dtype=dtype)
    return [S([x((2, 3)), x((1, 3))], (), {}, "dim 0"),
            S([x((2, 1)), x((2, 2))], (-1,), {}, "dim -1"),
            S([x((3,)), x((0,))], (), {}, "legacy empty 1-d"),
            S([x((0, 3)), x((0, 3))], (1,), {}, "empty"),
            S([_tt(rng, (2, 3), dtype), x((1, 3))], (0,), {}, "transposed")]


def stack_samples(rng, dtype):
    x = functools.partial(_t, rng, dtype=dtype)
    return [S([x((3,)), x((3,))], (), {}, "dim 0"), S([x((3,)), x((3,))], (-1,), {}, "dim -1"),
            S([x(()), x(())], (), {}, "0-d"), S([x((0, 3)), x((0, 3))], (1,), {}, "empty"),
            S([_tt(rng, (2, 3), dtype), x((2, 3))], (0,), {}, "transposed")]


def where_samples(rng, dtype):
    x = functools.partial(_t, rng, dtype=dtype)
    c = functools.partial(_t, rng, dtype=D.bool_)
    return [S(c((2, 3)), (x((2, 3)), x((2, 3))), {}, "same shape"),
            S(c((2, 1)), (x((3,)), x((2, 3))), {}, "broadcast"),
            S(c(()), (x(()), x(())), {}, "0-d"),
            S(c((2, 3)), (x((2, 3)), _scalar(rng, dtype)), {}, "scalar other"),
            S(c((0, 3)), (x((0, 3)), x((3,))), {}, "empty"),
            S(c((2, 3)), (_tt(rng, (2, 3), dtype), x((2, 3))), {}, "transposed")]


def _perm_rows(rng, rows, n, k):
    return _index(np.stack([rng.permutation(n)[:k] for _ in range(rows)]))


def gather_samples(rng, dtype):
    x = functools.partial(_t, rng, dtype=dtype)
    return [S(x((2, 3)), (1, _index(rng.integers(0, 3, (2, 2)))), {}, "dim 1"),
            S(x((2, 3)), (0, _index(rng.integers(0, 2, (1, 3)))), {}, "dim 0"),
            S(x((2, 3)), (-1, _index(np.zeros((2, 0), np.int64))), {}, "empty index"),
            S(x(()), (0, _index(0)), {}, "0-d"),
            S(_tt(rng, (2, 3), dtype), (1, _index([[2], [0]])), {}, "transposed")]


def scatter_samples(rng, dtype):
    x = functools.partial(_t, rng, dtype=dtype)
    return [S(x((2, 3)), (1, _perm_rows(rng, 2, 3, 2), x((2, 2))), {}, "src"),
            S(x((2, 3)), (0, _index([[1, 0, 1]]), x((2, 3))), {}, "src larger than index"),
            S(x((2, 3)), (1, _perm_rows(rng, 2, 3, 2), _scalar(rng, dtype)), {}, "value"),
            S(x((2, 3)), (1, _index([[0, 0], [2, 2]]), x((2, 2))), {"reduce": "add"}, "add"),
            S(x(()), (0, _index(0), x(())), {}, "0-d"),
            S(_tt(rng, (2, 3), dtype), (0, _index([[1, 0, 1]]), x((1, 3))), {}, "transposed")]


def scatter_add_samples(rng, dtype):
    x = functools.partial(_t, rng, dtype=dtype)
    return [S(x((2, 3)), (1, _index([[0, 0], [2, 1]]), x((2, 2))), {}, "duplicates"),
            S(x((2, 3)), (0, _index([[1, 1, 0]]), x((2, 3))), {}, "dim 0"),
            S(x(()), (0, _index(0), x(())), {}, "0-d"),
            S(x((2, 3)), (1, _index(np.zeros((2, 0), np.int64)), x((2, 0))), {}, "empty"),
            S(_tt(rng, (2, 3), dtype), (1, _index([[0, 0], [2, 1]]), x((2, 2))), {},
              "transposed")]


def scatter_reduce_samples(rng, dtype):
    x = functools.partial(_t, rng, dtype=dtype)
    i = _index([[0, 0], [2, 1]])
    extra = [] if "bool" in str(dtype) else [      # torch has no bool amax / amin / mean here
        S(x((2, 3)), (1, i, x((2, 2)), "mean"), {"include_self": False}, "mean, no self"),
        S(x((2, 3)), (1, i, x((2, 2)), "amax"), {"include_self": False}, "amax, no self"),
        S(x((2, 3)), (1, i, x((2, 2)), "amin"), {}, "amin")]
    if "bool" not in str(dtype):
        extra.append(S(x((2, 3)), (1, i, x((2, 2)), "mean"), {}, "mean"))
    return [S(x((2, 3)), (1, i, x((2, 2)), "sum"), {}, "sum"),
            S(x(()), (0, _index(0), x(()), "sum"), {}, "0-d"),
            S(x((2, 3)), (1, _index(np.zeros((2, 0), np.int64)), x((2, 0)), "sum"), {},
              "empty"),
            S(_tt(rng, (2, 3), dtype), (1, i, _tt(rng, (2, 2), dtype), "sum"), {},
              "transposed")] + extra


def index_select_samples(rng, dtype):
    x = functools.partial(_t, rng, dtype=dtype)
    return [S(x((2, 3)), (1, _index([2, 0])), {}, "dim 1"),
            S(x((2, 3)), (0, _index([1, 1, 0])), {}, "repeated"),
            S(x((2, 3)), (-1, _index(np.zeros(0, np.int64))), {}, "empty index"),
            S(x(()), (0, _index([0])), {}, "0-d"),
            S(_tt(rng, (2, 3), dtype), (1, _index([2, 1])), {}, "transposed")]


def index_add_samples(rng, dtype):
    x = functools.partial(_t, rng, dtype=dtype)
    return [S(x((2, 3)), (1, _index([0, 2]), x((2, 2))), {}, "dim 1"),
            S(x((2, 3)), (0, _index([1, 1]), x((2, 3))), {"alpha": 2}, "repeated alpha"),
            S(x((2, 3)), (1, _index(np.zeros(0, np.int64)), x((2, 0))), {}, "empty"),
            S(_tt(rng, (2, 3), dtype), (1, _index([1]), x((2, 1))), {}, "transposed")]


def index_copy_samples(rng, dtype):
    x = functools.partial(_t, rng, dtype=dtype)
    return [S(x((2, 3)), (1, _index([2, 0]), x((2, 2))), {}, "dim 1"),
            S(x((2, 3)), (0, _index([1]), x((1, 3))), {}, "dim 0"),
            S(x((2, 3)), (1, _index(np.zeros(0, np.int64)), x((2, 0))), {}, "empty"),
            S(_tt(rng, (2, 3), dtype), (1, _index([1]), x((2, 1))), {}, "transposed")]


def index_fill_samples(rng, dtype):
    x = functools.partial(_t, rng, dtype=dtype)
    return [S(x((2, 3)), (1, _index([2, 0]), _scalar(rng, dtype)), {}, "dim 1"),
            S(x((2, 3)), (0, _index([1]), _scalar(rng, dtype)), {}, "dim 0"),
            S(x((2, 3)), (1, _index(np.zeros(0, np.int64)), _scalar(rng, dtype)), {}, "empty"),
            S(_tt(rng, (2, 3), dtype), (1, _index([1]), _scalar(rng, dtype)), {},
              "transposed")]


def take_samples(rng, dtype):
    x = functools.partial(_t, rng, dtype=dtype)
    return [S(x((2, 3)), (_index([[0, 5], [3, 3]]),), {}, "2-d index"),
            S(x((2, 3)), (_index([-1]),), {}, "negative"),
            S(x(()), (_index(0),), {}, "0-d"),
            S(x((2, 3)), (_index(np.zeros(0, np.int64)),), {}, "empty"),
            S(_tt(rng, (2, 3), dtype), (_index([1, 4]),), {}, "transposed")]


def take_along_dim_samples(rng, dtype):
    x = functools.partial(_t, rng, dtype=dtype)
    return [S(x((2, 3)), (_index([[2], [0]]),), {"dim": 1}, "dim 1"),
            S(x((2, 3)), (_index([[1, 0, 1]]),), {"dim": 0}, "dim 0"),
            S(x((2, 3)), (_index([5, 0]),), {}, "flat"),
            S(x((2, 3)), (_index(np.zeros((2, 0), np.int64)), 1), {}, "empty"),
            S(_tt(rng, (2, 3), dtype), (_index([[2], [1]]), 1), {}, "transposed")]


def masked_fill_samples(rng, dtype):
    x = functools.partial(_t, rng, dtype=dtype)
    m = functools.partial(_t, rng, dtype=D.bool_)
    return [S(x((2, 3)), (m((2, 3)), _scalar(rng, dtype)), {}, "same shape"),
            S(x((2, 3)), (m((3,)), _scalar(rng, dtype)), {}, "broadcast mask"),
            S(x((2, 3)), (m((2, 3)), x(())), {}, "0-d value tensor"),
            S(x(()), (m(()), _scalar(rng, dtype)), {}, "0-d"),
            S(x((0, 3)), (m((0, 3)), _scalar(rng, dtype)), {}, "empty"),
            S(_tt(rng, (2, 3), dtype), (m((2, 3)), _scalar(rng, dtype)), {}, "transposed")]


def masked_select_samples(rng, dtype):
    x = functools.partial(_t, rng, dtype=dtype)
    m = functools.partial(_t, rng, dtype=D.bool_)
    return [S(x((2, 3)), (m((2, 3)),), {}, "same shape"),
            S(x((2, 3)), (m((3,)),), {}, "broadcast mask"),
            S(x((3,)), (m((2, 3)),), {}, "broadcast input"),
            S(x(()), (_mask(True),), {}, "0-d"), S(x((0, 3)), (m((0, 3)),), {}, "empty"),
            S(_tt(rng, (2, 3), dtype), (m((2, 3)),), {}, "transposed")]


def masked_scatter_samples(rng, dtype):
    x = functools.partial(_t, rng, dtype=dtype)
    m = functools.partial(_t, rng, dtype=D.bool_)
    return [S(x((2, 3)), (m((2, 3)), x((6,))), {}, "same shape"),
            S(x((2, 3)), (m((3,)), x((2, 3))), {}, "broadcast mask"),
            S(x(()), (_mask(True), x((2,))), {}, "0-d"),
            S(x((0, 3)), (m((0, 3)), x((3,))), {}, "empty"),
            S(_tt(rng, (2, 3), dtype), (m((2, 3)), x((6,))), {}, "transposed")]


def index_put_samples(rng, dtype):
    x = functools.partial(_t, rng, dtype=dtype)
    return [S(x((2, 3)), ((_index([0, 1]), _index([2, 0])), x((2,))), {}, "pairs"),
            S(x((2, 3)), ((_index([1, 1]),), x((3,))), {"accumulate": True}, "accumulate"),
            S(x((2, 3)), ((_t(rng, (2, 3), D.bool_),), x(())), {}, "mask"),
            S(x((2, 3)), ((_index(np.zeros(0, np.int64)),), x((3,))), {}, "empty"),
            S(_tt(rng, (2, 3), dtype), ((_index([1]), _index([2])), x((1,))), {}, "transposed")]


def nonzero_samples(rng, dtype):
    x = functools.partial(_t, rng, dtype=dtype)
    z = np.array([[0, 1, 0], [2, 0, 3]]).astype(dtype.np)
    return [S(_make(z), (), {}, "2-d with zeros"), S(x((2, 3)), (), {}, "2-d"),
            S(x(()), (), {}, "0-d"), S(x((0, 3)), (), {}, "empty"),
            S(_make(z.T.copy().T), (), {}, "transposed")]


def product_samples(name):
    """Samples for the fixed-rank products (mm, bmm, mv, dot, outer, addmm, ...)."""
    shapes = {
        "mm": [((2, 3), (3, 2)), ((0, 3), (3, 2)), ((2, 0), (0, 2))],
        "bmm": [((2, 1, 3), (2, 3, 1)), ((0, 1, 3), (0, 3, 2)), ((2, 1, 0), (2, 0, 3))],
        "mv": [((2, 3), (3,)), ((0, 3), (3,)), ((2, 0), (0,))],
        "dot": [((3,), (3,)), ((0,), (0,))],
        "outer": [((3,), (2,)), ((0,), (2,))],
        "addmm": [((2, 2), (2, 3), (3, 2)), ((2,), (2, 3), (3, 2)), ((), (2, 3), (3, 2)),
                  ((0, 2), (0, 3), (3, 2))],
        "baddbmm": [((2, 1, 1), (2, 1, 3), (2, 3, 1)), ((1,), (2, 1, 3), (2, 3, 1))],
        "addbmm": [((1, 2), (2, 1, 3), (2, 3, 2)), ((2,), (2, 1, 3), (2, 3, 2))],
        "addmv": [((2,), (2, 3), (3,)), ((), (2, 3), (3,)), ((0,), (0, 3), (3,))],
        "addr": [((3, 2), (3,), (2,)), ((2,), (3,), (2,)), ((0, 2), (0,), (2,))],
    }[name]

    def samples(rng, dtype):
        out = []
        for shp in shapes:
            ts = [_t(rng, s, dtype) for s in shp]
            out.append(S(ts[0], tuple(ts[1:]), {}, " x ".join(map(str, shp))))
        if name.startswith("add") or name == "baddbmm":
            ts = [_t(rng, s, dtype) for s in shapes[0]]
            scale = {"beta": 0.5, "alpha": 2} if dtype.is_floating_point else {"beta": 2,
                                                                                  "alpha": 3}
            out.append(S(ts[0], tuple(ts[1:]), scale, "beta alpha"))
        first = shapes[0]
        k = next((i for i, s in enumerate(first) if len(s) >= 2), None)
        if k is not None:  # the first operand of >= 2 dims transposed
            ts = [_tt(rng, s, dtype) if i == k else _t(rng, s, dtype) for i, s in enumerate(first)]
            out.append(S(ts[0], tuple(ts[1:]), {}, "transposed"))
        return out

    return samples


def einsum_samples(rng, dtype):
    x = functools.partial(_t, rng, dtype=dtype)
    return [S("ij,jk->ik", (x((2, 3)), x((3, 2))), {}, "matmul"),
            S("bij->bji", (x((1, 2, 3)),), {}, "transpose"),
            S("i,i", (x((3,)), x((3,))), {}, "dot implicit"),
            S("...j,j->...", (x((2, 3)), x((3,))), {}, "ellipsis"),
            S("ij->", (x((0, 3)),), {}, "empty")]


def binary_shape_samples(rng, dtype, shapes, **kwargs):
    out = [S(_t(rng, a, dtype), (_t(rng, b, dtype),), dict(kwargs), f"{a} x {b}")
           for a, b in shapes]
    a, b = shapes[0]
    if len(a) >= 2:
        out.append(S(_tt(rng, a, dtype), (_t(rng, b, dtype),), dict(kwargs), "transposed"))
    return out


def cross_samples(rng, dtype):
    return binary_shape_samples(rng, dtype, [((2, 3), (2, 3)), ((3,), (3,)), ((1, 3), (2, 3)),
                                             ((0, 3), (0, 3))], dim=-1)


def kron_samples(rng, dtype):
    return binary_shape_samples(rng, dtype, [((2, 1), (1, 3)), ((2,), (3,)), ((), (3,)),
                                             ((0, 2), (2, 1))])


def tensordot_samples(rng, dtype):
    x = functools.partial(_t, rng, dtype=dtype)
    return [S(x((2, 3)), (x((3, 2)),), {"dims": 1}, "dims 1"),
            S(x((1, 2, 3)), (x((2, 3)),), {"dims": 2}, "dims 2"),
            S(x((2, 3)), (x((2, 3)),), {"dims": ([0, 1], [0, 1])}, "lists")]
