"""``Variable``: the pre-0.4 wrapper type, kept so old programs still run.

Since torch 0.4 a Variable *is* a Tensor: ``Variable(t)`` returns a tensor that shares ``t``'s
memory (outside ``t``'s graph) and ``isinstance(t, Variable)`` holds for every tensor.
"""
from __future__ import annotations

import warnings


class _VariableMeta(type):
    def __instancecheck__(cls, obj):
        from .._tensor import Tensor
        return isinstance(obj, Tensor)

    def __call__(cls, data=None, requires_grad=False, volatile=False):
        from .._tensor import Tensor, _make
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with "
                          "ember.no_grad():` instead.", UserWarning, stacklevel=2)
        if data is None:
            import numpy as np

            from .. import _dtype as D
            return _make(np.zeros((0,), dtype=D.get_default_dtype().np))
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        if requires_grad:
            if not out.is_floating_point():
                raise RuntimeError(f"Variable: only Tensors of floating point dtype can require "
                                   f"gradients; got dtype {out.dtype}")
            out._requires_grad = True
        return out


class Variable(metaclass=_VariableMeta):
    """``Variable(tensor, requires_grad=False)``: a new leaf tensor sharing ``tensor``'s memory.

    Example:
        >>> import ember
        >>> v = Variable(ember.ones(2), requires_grad=True)
        >>> type(v).__name__, v.requires_grad, isinstance(v, Variable)
        ('Tensor', True, True)
    """
