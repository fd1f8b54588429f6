"""Python operators on Tensor (+, -, *, /, //, %, **, @, comparisons, &, |, ^, ~, <<, >>)."""
from __future__ import annotations

import inspect

import numpy as np

from .._tensor import Tensor
from .registry import FUNCTIONS as F
from .registry import IMPLS


def _binary(name, reflected=False):
    fn = IMPLS.get(name, F[name])  # the implementation: an operator never passes out=
    if reflected:
        def op(self, other):
            return fn(other, self)
        return op
    # the operator form also takes a NumPy array operand (NOTE [NumPy array operands])
    fn = getattr(fn, "as_operator", fn)
    if inspect.isfunction(fn):
        return fn  # fn(input, other) is already the method: one call less per operator
    def op(self, other):
        return fn(self, other)
    return op


_div = IMPLS.get("div", F["div"])


def _rtruediv(self, other):
    if isinstance(other, np.ndarray):
        return self.reciprocal() * other  # as torch: array / tensor goes through tensor * array
    return _div(other, self)


def _inplace(name):
    def op(self, other):
        if isinstance(other, np.ndarray):
            return NotImplemented  # Python then rebinds to `self <op> other`, as torch does
        return getattr(self, name + "_")(other)
    return op


for dunder, name in (("add", "add"), ("sub", "sub"), ("mul", "mul"), ("truediv", "div"),
                     ("floordiv", "floor_divide"), ("mod", "remainder"), ("pow", "pow"),
                     ("and", "bitwise_and"), ("or", "bitwise_or"), ("xor", "bitwise_xor"),
                     ("lshift", "bitwise_left_shift"), ("rshift", "bitwise_right_shift")):
    setattr(Tensor, f"__{dunder}__", _binary(name))
    setattr(Tensor, f"__r{dunder}__", _binary(name, reflected=True))
    setattr(Tensor, f"__i{dunder}__", _inplace(name))
Tensor.__rtruediv__ = _rtruediv

for dunder, name in (("eq", "eq"), ("ne", "ne"), ("lt", "lt"), ("le", "le"), ("gt", "gt"),
                     ("ge", "ge")):
    setattr(Tensor, f"__{dunder}__", _binary(name))

Tensor.__neg__ = lambda self: F["neg"](self)
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = lambda self: F["abs"](self)


def _invert(self):
    kind = self._data.dtype.kind
    if kind == "b":
        return F["logical_not"](self)
    if kind not in "iu":  # floating, complex (and ml_dtypes' 'V') tensors: torch's TypeError
        raise TypeError(f"~ (operator.invert): only implemented on integer and bool tensors; "
                        f"got {self.dtype}")
    return F["bitwise_not"](self)


Tensor.__invert__ = _invert
Tensor.__hash__ = object.__hash__
