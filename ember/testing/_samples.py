"""The op database: ``op_db()`` joins each public op (``ember.ops.registry.OPS``, plus the
public functions the registry does not record: cat, stack, where, einsum, tensordot) with its
line in ``OP_TABLE`` (ember/testing/_op_table.py), so one generic test file
(tests/ops/test_op_db.py) can run forward-vs-reference, gradcheck, gradgradcheck,
method/in-place/out= agreement, non-contiguous inputs and torch parity for every op. Reading
the database changes nothing: the registry and the table stay as they were.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .._tensor import Tensor
from ._generators import ErrorInput, SampleInput, binary_samples, unary_samples
from ._op_table import OP_TABLE, OpSpec

__all__ = [
    "OP_TABLE",
    "ErrorInput",
    "OpEntry",
    "OpSpec",
    "SampleInput",
    "binary_samples",
    "call",
    "map_tensors",
    "op_db",
    "tensors_of",
    "unary_samples",
]

# Public functions outside the registry that the table covers too (they take tensor lists or
# an equation string, so the registry's method / in-place wiring does not apply).
UNREGISTERED = ("cat", "stack", "where", "einsum", "tensordot")


@dataclass(frozen=True)
class OpEntry:
    """One public op as the generic suite sees it: how to call it, and its table line."""

    name: str
    fn: Callable
    spec: OpSpec
    method: bool
    inplace: bool

    @property
    def samples(self):
        return self.spec.samples

    @property
    def ref(self):
        return self.spec.ref

    @property
    def dtypes(self):
        return self.spec.dtypes

    @property
    def differentiable(self):
        return self.spec.grad

    @property
    def gradgrad(self):
        return self.spec.grad and not self.spec.once_differentiable


def op_db() -> list[OpEntry]:
    """Every public op that has a line in OP_TABLE, in registration order.

    A registered op without a line is left out here and reported by the completeness test
    (tests/ops/test_op_db.py::test_every_registered_op_has_a_table_line).
    """
    from ..ops.registry import FUNCTIONS, OPS
    out = [OpEntry(name, info.fn, OP_TABLE[name], info.method, info.inplace)
           for name, info in OPS.items() if name in OP_TABLE]
    out += [OpEntry(name, FUNCTIONS[name], OP_TABLE[name], False, False)
            for name in UNREGISTERED if name not in OPS]
    return out


# ---------------------------------------------------------------------------------------------
# sample plumbing shared by the generic tests


def map_tensors(obj, f):
    """obj with every Tensor inside (tuples, lists, dict values) replaced by f(tensor)."""
    if isinstance(obj, Tensor):
        return f(obj)
    if isinstance(obj, SampleInput):
        return SampleInput(map_tensors(obj.input, f), map_tensors(obj.args, f),
                           map_tensors(obj.kwargs, f), obj.name)
    if isinstance(obj, tuple):
        return tuple(map_tensors(o, f) for o in obj)
    if isinstance(obj, list):
        return [map_tensors(o, f) for o in obj]
    if isinstance(obj, dict):
        return {k: map_tensors(v, f) for k, v in obj.items()}
    return obj


def tensors_of(obj) -> list[Tensor]:
    """The tensors inside obj, in the order map_tensors visits them."""
    found = []
    map_tensors(obj, lambda t: found.append(t) or t)
    return found


def call(fn, sample, **extra):
    return fn(sample.input, *sample.args, **sample.kwargs, **extra)
