"""Sample generators for the op database: small tensors (at most 6 elements, so gradcheck
stays cheap) covering 2-D, 0-d, empty, broadcast and non-contiguous inputs per op family.

A generator is ``samples(rng, dtype) -> list[SampleInput]``; the table mapping op names to
generators and references is ``OP_TABLE`` in ember/testing/_op_table.py.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import _dtype as D
from .._tensor import _make

# input domains: (low, high), or (low, high, "signed") for magnitudes in [low, high] with a
# random sign (keeps divisors away from zero)
REAL = (-2.0, 2.0)
POSITIVE = (0.5, 2.0)
UNIT = (-0.9, 0.9)
OPEN_UNIT = (0.1, 0.9)
GE1 = (1.2, 3.0)
NONZERO = (0.5, 2.0, "signed")
SHIFT = (0.0, 3.0)


@dataclass
class SampleInput:
    """One call ``op(input, *args, **kwargs)``; ``input`` may be a list of tensors (cat)."""

    input: Any
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    name: str = ""

    def __repr__(self):
        return f"SampleInput({self.name!r})"


@dataclass
class ErrorInput:
    """A call that must raise ``error_type`` with a message matching ``match``."""

    sample: SampleInput
    error_type: type
    match: str


# ---------------------------------------------------------------------------------------------
# tensors


def _array(rng, shape, dtype, domain=REAL):
    if dtype is D.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    signed = len(domain) > 2
    if dtype.is_floating_point:
        v = np.asarray(rng.uniform(domain[0], domain[1], shape))
        if signed:
            v = v * rng.choice([-1.0, 1.0], shape)
        return v.astype(dtype.np)
    lo = 1 if domain[0] >= 0 or signed else -5
    if domain == SHIFT:
        lo = 0
    hi = 3 if domain == SHIFT else 5
    v = np.asarray(rng.integers(lo, hi + 1, shape))
    if signed and dtype.is_signed:
        v = v * rng.choice([-1, 1], shape)
    if not dtype.is_signed:
        v = np.abs(v)
    return v.astype(dtype.np)


def _t(rng, shape, dtype, domain=REAL):
    """A contiguous tensor."""
    return _make(np.array(_array(rng, shape, dtype, domain), order="C"))


def _tt(rng, shape, dtype, domain=REAL):
    """A non-contiguous tensor of ``shape``: the transpose of a contiguous one."""
    return _make(_array(rng, tuple(reversed(shape)), dtype, domain).T)


def _stepped(rng, n, dtype, domain=REAL):
    """A non-contiguous 1-D tensor: every other element of a buffer."""
    return _make(_array(rng, (2 * n,), dtype, domain)[::2])


def _scalar(rng, dtype, domain=REAL):
    """A Python number of the dtype's kind."""
    v = _array(rng, (), dtype, domain).item()
    return round(float(v), 3) if dtype.is_floating_point else v


def _index(values):
    return _make(np.asarray(values, np.int64))


def _mask(values):
    return _make(np.asarray(values, np.bool_))


S = SampleInput


# ---------------------------------------------------------------------------------------------
# generators by family


def unary_samples(rng, dtype, domain=REAL, **kwargs):
    """2-D, 0-d, empty, transposed and stepped-slice inputs."""
    x = functools.partial(_t, rng, dtype=dtype, domain=domain)
    return [S(x((2, 3)), (), dict(kwargs), "2-d"),
            S(x(()), (), dict(kwargs), "0-d"),
            S(x((0,)), (), dict(kwargs), "empty"),
            S(_tt(rng, (2, 3), dtype, domain), (), dict(kwargs), "transposed"),
            S(_stepped(rng, 3, dtype, domain), (), dict(kwargs), "stepped slice")]


def binary_samples(rng, dtype, domain=REAL, other_domain=NONZERO, scalar=True, **kwargs):
    """Same shape, broadcasting (either side, both), 0-d, empty, transposed, Python scalar."""
    a = functools.partial(_t, rng, dtype=dtype, domain=domain)
    b = functools.partial(_t, rng, dtype=dtype, domain=other_domain)
    out = [S(a((2, 3)), (b((2, 3)),), dict(kwargs), "same shape"),
           S(a((2, 3)), (b((3,)),), dict(kwargs), "broadcast other"),
           S(a((2, 1)), (b((1, 3)),), dict(kwargs), "broadcast both"),
           S(a((3,)), (b((2, 3)),), dict(kwargs), "broadcast input"),
           S(a(()), (b((2, 3)),), dict(kwargs), "0-d input"),
           S(a((2, 3)), (b(()),), dict(kwargs), "0-d other"),
           S(a(()), (b(()),), dict(kwargs), "both 0-d"),
           S(a((0, 3)), (b((3,)),), dict(kwargs), "empty"),
           S(_tt(rng, (2, 3), dtype, domain), (b((2, 3)),), dict(kwargs), "transposed input")]
    if scalar:
        out.append(S(a((2, 3)), (_scalar(rng, dtype, other_domain),), dict(kwargs),
                     "python scalar other"))
    return out


def binary_errors(name):
    """Shapes that do not broadcast: RuntimeError naming the op and both shapes."""
    def errors(rng, dtype):
        s = S(_t(rng, (2, 3), dtype), (_t(rng, (4,), dtype, NONZERO),), {}, "no broadcast")
        return [ErrorInput(s, RuntimeError, rf"{name}.*\[2, 3\].*\[4\]")]
    return errors


def reduction_samples(rng, dtype, domain=REAL, full=True, empty_full=True, multi_dim=True,
                      dim_arg=True, **kwargs):
    """Full reductions and reductions over dim 0 / -1 (keepdim) / several dims."""
    x = functools.partial(_t, rng, dtype=dtype, domain=domain)
    out = []
    if full:
        out += [S(x((2, 3)), (), dict(kwargs), "all"), S(x(()), (), dict(kwargs), "0-d all")]
        if empty_full:
            out.append(S(x((0, 3)), (), dict(kwargs), "empty all"))
    if dim_arg:
        out += [S(x((2, 3)), (0,), dict(kwargs), "dim 0"),
                S(x((2, 3)), (-1,), dict(kwargs, keepdim=True), "dim -1 keepdim"),
                S(x(()), (0,), dict(kwargs), "0-d dim 0"),
                S(x((0, 3)), (1,), dict(kwargs), "empty dim 1"),
                S(_tt(rng, (2, 3), dtype, domain), (1,), dict(kwargs), "transposed dim 1")]
        if multi_dim:
            out.append(S(x((1, 2, 3)), ((0, 2),), dict(kwargs), "dims (0, 2)"))
    return out


def cumulative_samples(rng, dtype, domain=REAL):
    x = functools.partial(_t, rng, dtype=dtype, domain=domain)
    return [S(x((2, 3)), (0,), {}, "dim 0"), S(x((2, 3)), (-1,), {}, "dim -1"),
            S(x(()), (0,), {}, "0-d"), S(x((0, 3)), (1,), {}, "empty"),
            S(_tt(rng, (2, 3), dtype, domain), (1,), {}, "transposed")]


def max_min_samples(rng, dtype):
    x = functools.partial(_t, rng, dtype=dtype)
    return [S(x((2, 3)), (), {}, "all"), S(x(()), (), {}, "0-d all"),
            S(x((2, 3)), (1,), {}, "dim 1"), S(x((2, 3)), (0,), {"keepdim": True}, "keepdim"),
            S(x(()), (0,), {}, "0-d dim 0"), S(x((0, 3)), (1,), {}, "empty dim 1"),
            S(_tt(rng, (2, 3), dtype), (-1,), {}, "transposed"),
            S(x((2, 3)), (x((3,)),), {}, "elementwise other")]


def var_samples(rng, dtype):
    x = functools.partial(_t, rng, dtype=dtype)
    return [S(x((2, 3)), (), {}, "all"), S(x((2, 3)), (1,), {}, "dim 1"),
            S(x((2, 3)), (0,), {"correction": 0, "keepdim": True}, "correction 0"),
            S(x((1, 2, 3)), ((0, 2),), {"unbiased": False}, "dims unbiased=False"),
            S(x(()), (), {"correction": 0}, "0-d"), S(x((0, 3)), (1,), {}, "empty"),
            S(_tt(rng, (2, 3), dtype), (-1,), {}, "transposed")]


def matmul_samples(rng, dtype):
    x = functools.partial(_t, rng, dtype=dtype)
    return [S(x((2, 3)), (x((3, 2)),), {}, "2-d @ 2-d"),
            S(x((3,)), (x((3, 2)),), {}, "1-d @ 2-d"),
            S(x((2, 3)), (x((3,)),), {}, "2-d @ 1-d"),
            S(x((3,)), (x((3,)),), {}, "1-d @ 1-d"),
            S(x((2, 1, 3)), (x((3, 2)),), {}, "batched @ 2-d"),
            S(x((2, 1, 3)), (x((1, 3, 1)),), {}, "broadcast batches"),
            S(x((0, 3)), (x((3, 2)),), {}, "empty rows"),
            S(x((2, 0)), (x((0, 2)),), {}, "empty inner"),
            S(_tt(rng, (2, 3), dtype), (_tt(rng, (3, 2), dtype),), {}, "transposed")]


def matmul_errors(name):
    def errors(rng, dtype):
        f32, f64 = D.float32, D.float64
        out = [ErrorInput(S(_t(rng, (2, 3), dtype), (_t(rng, (4, 2), dtype),)), RuntimeError,
                          rf"{name}.*2x3.*4x2|{name}.*\(2, 3\).*\(4, 2\)")]
        if name == "matmul":
            out.append(ErrorInput(S(_t(rng, (2, 3), f32), (_t(rng, (3, 2), f64),)),
                                  RuntimeError, "matmul.*float32.*float64"))
            out.append(ErrorInput(S(_t(rng, (), dtype), (_t(rng, (3,), dtype),)),
                                  RuntimeError, "matmul.*0D"))
        return out
    return errors


def mm_errors(rng, dtype):
    return [ErrorInput(S(_t(rng, (2, 3), dtype), (_t(rng, (4, 2), dtype),)), RuntimeError,
                       r"mm.*2x3.*4x2"),
            ErrorInput(S(_t(rng, (3,), dtype), (_t(rng, (3, 2), dtype),)), RuntimeError,
                       r"mm.*2-D.*\[3\]")]


def bmm_errors(rng, dtype):
    return [ErrorInput(S(_t(rng, (2, 1, 3), dtype), (_t(rng, (3, 3, 1), dtype),)),
                       RuntimeError, r"bmm.*batches.*2.*3"),
            ErrorInput(S(_t(rng, (2, 3), dtype), (_t(rng, (3, 2), dtype),)), RuntimeError,
                       r"bmm.*3D.*\[2, 3\]")]


def cat_errors(rng, dtype):
    x = functools.partial(_t, rng, dtype=dtype)
    return [ErrorInput(S([x((2, 3)), x((2, 2))], (0,)), RuntimeError,
                       r"cat.*Sizes of tensors must match.*\[2, 3\].*\[2, 2\]"),
            ErrorInput(S([x((2, 3)), x((3,))], ()), RuntimeError,
                       r"cat.*same number of dimensions.*\[2, 3\].*\[3\]"),
            ErrorInput(S([x((2, 3))], (2,)), IndexError, r"cat.*Dimension out of range")]


# ---------------------------------------------------------------------------------------------
# movement, indexing, products: one small generator each


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
    return [S(x((2, 3)), (1, i, x((2, 2)), "sum"), {}, "sum"),
            S(x((2, 3)), (1, i, x((2, 2)), "mean"), {}, "mean"),
            S(x(()), (0, _index(0), x(()), "sum"), {}, "0-d"),
            S(x((2, 3)), (1, _index(np.zeros((2, 0), np.int64)), x((2, 0)), "sum"), {},
              "empty"),
            S(_tt(rng, (2, 3), dtype), (1, i, _tt(rng, (2, 2), dtype), "sum"), {},
              "transposed")]


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


# ---------------------------------------------------------------------------------------------
# op-specific samples


def nan_inf_samples(rng, dtype):
    """Inputs holding NaN, +-inf, zeros and ordinary values."""
    if not dtype.is_floating_point:
        special = np.array([[0, 1, 0], [1, 1, 0]]).astype(dtype.np)
    else:
        special = np.array([[np.nan, np.inf, -np.inf], [0.0, -1.5, 2.0]]).astype(dtype.np)
    return [S(_make(special), (), {}, "nan and inf"), S(_t(rng, (), dtype), (), {}, "0-d"),
            S(_t(rng, (0,), dtype), (), {}, "empty"),
            S(_make(special.T.copy().T), (), {}, "transposed")]


def signbit_samples(rng, dtype):
    signed = np.array([[-0.0, np.inf, -np.inf], [0.0, -1.5, 2.0]]).astype(dtype.np)
    return [S(_make(signed), (), {}, "signed zeros and inf"),
            S(_t(rng, (), dtype), (), {}, "0-d"), S(_t(rng, (0,), dtype), (), {}, "empty"),
            S(_make(signed.T.copy().T), (), {}, "transposed")]


def nan_to_num_samples(rng, dtype):
    out = nan_inf_samples(rng, dtype)
    out.append(S(out[0].input, (), {"nan": 1.0, "posinf": 3.0, "neginf": -3.0}, "replacements"))
    return out


def nan_samples(fn):
    """Reduction samples with one NaN planted (nansum, nanmean)."""
    def samples(rng, dtype):
        out = reduction_samples(rng, dtype)
        for s in out:
            if s.input.numel() > 1:
                s.input._data.reshape(-1)[1] = np.nan
        return out
    return samples


def clamp_samples(rng, dtype):
    x = functools.partial(_t, rng, dtype=dtype)
    lo, hi = (-0.5, 0.5) if dtype.is_floating_point else (1, 3) if dtype is D.uint8 else (-1, 2)
    out = unary_samples(rng, dtype, min=lo, max=hi)
    out += [S(x((2, 3)), (), {"min": lo}, "min only"), S(x((2, 3)), (), {"max": hi}, "max only")]
    if dtype.is_floating_point:
        out.append(S(x((2, 3)), (), {"min": x((3,)) - 1, "max": x((2, 1)) + 1},
                     "tensor bounds"))
        lo_t = _make(np.array([0.5, -1.0, 1.5]).astype(dtype.np))
        out.append(S(x((2, 3)), (), {"min": lo_t, "max": _make(np.array([[1.0], [0.0]]).astype(
            dtype.np))}, "tensor bounds, min > max somewhere"))
    return out


def clamp_errors(rng, dtype):
    return [ErrorInput(S(_t(rng, (2,), dtype)), RuntimeError, "clamp.*min.*max")]


def lerp_samples(rng, dtype):
    x = functools.partial(_t, rng, dtype=dtype)
    return [S(x((2, 3)), (x((2, 3)), 0.3), {}, "scalar weight"),
            S(x((2, 3)), (x((3,)), x((2, 1))), {}, "tensor weight"),
            S(x(()), (x(()), 0.7), {}, "0-d"), S(x((0, 3)), (x((3,)), 0.5), {}, "empty"),
            S(_tt(rng, (2, 3), dtype), (x((2, 3)), 0.5), {}, "transposed")]


def addc_samples(rng, dtype):
    x = functools.partial(_t, rng, dtype=dtype)
    nz = functools.partial(_t, rng, dtype=dtype, domain=NONZERO)
    return [S(x((2, 3)), (x((2, 3)), nz((2, 3))), {}, "same shape"),
            S(x((2, 3)), (x((3,)), nz((2, 1))), {"value": 0.5}, "broadcast value"),
            S(x(()), (x(()), nz(())), {}, "0-d"), S(x((0, 3)), (x((3,)), nz((3,))), {}, "empty"),
            S(_tt(rng, (2, 3), dtype), (x((2, 3)), nz((2, 3))), {}, "transposed")]


def round_samples(rng, dtype):
    return unary_samples(rng, dtype) + [S(_t(rng, (2, 3), dtype), (), {"decimals": 1},
                                          "decimals")]


def pow_samples(rng, dtype):
    out = binary_samples(rng, dtype, POSITIVE, REAL)
    out.append(S(_t(rng, (2, 3), dtype, REAL), (2,), {}, "integer exponent"))
    return out


def div_samples(rng, dtype):
    out = binary_samples(rng, dtype)
    a, b = _t(rng, (2, 3), dtype), _t(rng, (2, 3), dtype, NONZERO)
    out += [S(a, (b,), {"rounding_mode": "floor"}, "floor"),
            S(a, (b,), {"rounding_mode": "trunc"}, "trunc")]
    return out


def gelu_samples(rng, dtype):
    return unary_samples(rng, dtype) + [S(_t(rng, (2, 3), dtype), (), {"approximate": "tanh"},
                                          "tanh")]


def logit_samples(rng, dtype):
    return unary_samples(rng, dtype, OPEN_UNIT) + [
        S(_t(rng, (2, 3), dtype, OPEN_UNIT), (0.2,), {}, "eps")]


def prod_samples(rng, dtype):
    out = reduction_samples(rng, dtype, multi_dim=False)
    if dtype is not D.bool_:
        z = _t(rng, (2, 3), dtype)
        z._data[0, 1] = 0
        out += [S(z, (), {}, "with zero"), S(z, (1,), {}, "with zero dim 1")]
    return out


def logsumexp_samples(rng, dtype):
    return [s for s in reduction_samples(rng, dtype, full=False)]


def amax_samples(rng, dtype):
    return [s for s in reduction_samples(rng, dtype, empty_full=False)]


def arg_samples(rng, dtype):
    return [s for s in reduction_samples(rng, dtype, empty_full=False, multi_dim=False)
            if s.name != "empty dim 1"] + [S(_t(rng, (2, 3), dtype), (), {"keepdim": True},
                                             "all keepdim")]


def count_nonzero_samples(rng, dtype):
    z = _t(rng, (2, 3), dtype)
    z._data[1, 1] = 0
    return [S(z, (), {}, "all"), S(z, (1,), {}, "dim 1"), S(z, ((0, 1),), {}, "dims"),
            S(_t(rng, (), dtype), (), {}, "0-d"), S(_t(rng, (0, 3), dtype), (), {}, "empty"),
            S(_make(z._data.T.copy().T), (1,), {}, "transposed")]


def all_any_samples(rng, dtype):
    return [s for s in reduction_samples(rng, dtype) if s.name != "dims (0, 2)"]


def float_power_samples(rng, dtype):
    return binary_samples(rng, dtype, POSITIVE, REAL)
