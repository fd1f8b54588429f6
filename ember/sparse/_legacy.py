"""Legacy sparse tensor types: ``ember.sparse.FloatTensor``, ``LongTensor``, ... as in PyTorch.

Old programs (Kipf's pygcn among them) build their adjacency with
``torch.sparse.FloatTensor(indices, values, shape)``. Each name here is a type whose
``isinstance`` check is true for the sparse COO tensors of its dtype and whose call builds one:
``(indices, values[, size])`` keeps the values' own dtype, as torch does, and warns that the
form is deprecated; sizes alone (``FloatTensor(2, 3)``, ``FloatTensor(Size)``) give an empty
sparse tensor of the type's dtype.
"""
from __future__ import annotations

import warnings

import numpy as np

from .. import _dtype as D
from .._size import Size
from .._tensor import Tensor
from ._coo import sparse_coo_tensor

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor",
           "IntTensor", "ShortTensor", "CharTensor", "ByteTensor"]


def _empty(shape, dt):
    from ..ops.creation import zeros
    return sparse_coo_tensor(np.zeros((len(shape), 0), dtype=np.int64), zeros(0, dtype=dt),
                             shape)


class _SparseTensorType(type):
    """Metaclass of the legacy sparse types: isinstance by layout and dtype, construction."""

    def __instancecheck__(cls, obj):
        return getattr(obj, "is_sparse", False) and obj.dtype is cls.dtype

    def __call__(cls, *args, device=None):
        if device is not None:
            from .._backend import check_device
            check_device(device)
        if len(args) in (2, 3) and isinstance(args[1], Tensor):
            size = tuple(args[2]) if len(args) == 3 else None
            form = "indices, values, shape" if size is not None else "indices, values"
            warnings.warn(f"ember.sparse.{cls.__name__}({form}) is deprecated. Please use "
                          f"ember.sparse_coo_tensor({form}, dtype=).", UserWarning,
                          stacklevel=2)
            return sparse_coo_tensor(args[0], args[1], size)
        if len(args) == 1 and isinstance(args[0], Size):
            args = tuple(args[0])
        if all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args):
            return _empty(tuple(int(a) for a in args) or (0,), cls.dtype)
        raise TypeError(f"ember.sparse.{cls.__name__}(): expected (indices, values[, size]) "
                        f"with tensors or sizes (ints); got "
                        f"({', '.join(type(a).__name__ for a in args)})")

    def __repr__(cls):
        return f"<class 'ember.sparse.{cls.__name__}'>"


def _legacy(name, dt):
    return _SparseTensorType(name, (), {
        "dtype": dt, "_legacy_dtype": dt, "is_cuda": False, "is_sparse": True,
        "__module__": "ember.sparse",
        "__doc__": f"Legacy sparse tensor type of dtype {dt}: constructor and isinstance."})


FloatTensor = _legacy("FloatTensor", D.float32)
DoubleTensor = _legacy("DoubleTensor", D.float64)
HalfTensor = _legacy("HalfTensor", D.float16)
BFloat16Tensor = _legacy("BFloat16Tensor", D.bfloat16)
LongTensor = _legacy("LongTensor", D.int64)
IntTensor = _legacy("IntTensor", D.int32)
ShortTensor = _legacy("ShortTensor", D.int16)
CharTensor = _legacy("CharTensor", D.int8)
ByteTensor = _legacy("ByteTensor", D.uint8)
