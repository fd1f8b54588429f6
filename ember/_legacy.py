"""Legacy tensor types: ``ember.FloatTensor``, ``LongTensor``, ... as in PyTorch.

Each name is a type (so ``t.type(ember.DoubleTensor)`` works) whose ``isinstance`` check is
true for exactly the dense ember tensors of its dtype, and whose call builds a plain
``ember.Tensor`` of that dtype: ``ember.FloatTensor([1, 2])`` copies data,
``ember.FloatTensor(2, 3)`` or ``FloatTensor(ember.Size([2, 3]))`` makes a tensor of that shape
(zero-filled in ember; PyTorch leaves it uninitialised), ``FloatTensor()`` is empty, and
``FloatTensor(t)`` aliases a tensor ``t`` of the same dtype.
"""
from __future__ import annotations

import numpy as np

from . import _dtype as D
from ._size import Size
from ._tensor import Tensor, _make

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor",
           "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"]


class _LegacyTensorType(type):
    """Metaclass of the legacy types: isinstance by dtype, construction of plain tensors."""

    def __instancecheck__(cls, obj):
        return (isinstance(obj, Tensor) and not getattr(obj, "is_sparse", False)
                and obj.dtype is cls.dtype)

    def __call__(cls, *args, device=None, **kwargs):
        if kwargs:
            raise TypeError(f"{cls.__name__}(): got unexpected keyword argument(s) "
                            f"{', '.join(sorted(kwargs))}; the legacy constructor takes data or "
                            "sizes and an optional device. Use ember.tensor(data, dtype=...) for "
                            "more options.")
        if device is not None:
            from ._backend import check_device
            check_device(device)
        dt = cls.dtype
        if not args:
            return _make(np.zeros((0,), dtype=dt.np))
        if len(args) == 1:
            arg = args[0]
            if isinstance(arg, Tensor):
                if arg.dtype is not dt:
                    raise TypeError(f"{cls.__name__}(): expected a tensor of dtype {dt}, got "
                                    f"dtype {arg.dtype}; convert it with .to({dt}) first")
                return arg.detach()
            if isinstance(arg, Size):
                return _make(np.zeros(tuple(arg), dtype=dt.np))
            if isinstance(arg, (int, np.integer)) and not isinstance(arg, bool):
                return _make(np.zeros((int(arg),), dtype=dt.np))
            if isinstance(arg, (str, bytes)):
                raise TypeError(f"{cls.__name__}(): invalid data type '{type(arg).__name__}'")
            if not isinstance(arg, np.ndarray) and not hasattr(arg, "__len__"):
                raise TypeError(f"{cls.__name__}(): data must be a sequence (got "
                                f"{type(arg).__name__})")
            from .ops.creation import tensor
            return tensor(arg, dtype=dt)
        if all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args):
            return _make(np.zeros(tuple(int(a) for a in args), dtype=dt.np))
        raise TypeError(f"{cls.__name__}(): expected sizes (ints) or a single data argument, got "
                        f"{args!r}")

    def __repr__(cls):
        return f"<class 'ember.{cls.__name__}'>"


def _legacy(name, dt):
    return _LegacyTensorType(name, (), {
        "dtype": dt, "_legacy_dtype": dt, "is_cuda": False, "is_sparse": False,
        "layout": "strided", "__module__": "ember",
        "__doc__": f"Legacy tensor type of dtype {dt}: constructor and isinstance check."})


FloatTensor = _legacy("FloatTensor", D.float32)
DoubleTensor = _legacy("DoubleTensor", D.float64)
HalfTensor = _legacy("HalfTensor", D.float16)
BFloat16Tensor = _legacy("BFloat16Tensor", D.bfloat16)
LongTensor = _legacy("LongTensor", D.int64)
IntTensor = _legacy("IntTensor", D.int32)
ShortTensor = _legacy("ShortTensor", D.int16)
CharTensor = _legacy("CharTensor", D.int8)
ByteTensor = _legacy("ByteTensor", D.uint8)
BoolTensor = _legacy("BoolTensor", D.bool_)
