"""Storages and tensors rebuilt from a file: every geometry checked before a view is made.

NOTE [Tensor records]
Both of torch's formats describe a tensor as a view of a storage: ``(storage, offset, size,
stride)`` in elements of the storage's dtype, and a storage as raw bytes (a zip record or a run
of bytes after the legacy pickles). ``Storage`` holds those bytes as a flat ``uint8`` array (read,
memory-mapped or handed to ``map_location``) with one version counter, so every tensor viewing
it shares memory and version as in torch. ``make_tensor`` refuses negative strides (torch never
writes them), offsets or extents outside the storage and sizes that overflow, all in Python
integers; views whose elements overlap (``expand``, ``unfold``) load read-only, as ember's own
broadcast views are.
"""
from __future__ import annotations

import math
import sys

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor, _make
from ._errors import bad, short

MAX_NDIM = 64
MAX_DIM = 1 << 62      # any larger dimension, stride or offset is refused before arithmetic

# storage class names in torch's pickles -> dtype names (facts of torch's file format)
STORAGE_DTYPES = {
    "FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32",
    "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8", "BoolStorage": "bool",
    "ComplexFloatStorage": "complex64", "ComplexDoubleStorage": "complex128",
    "QInt8Storage": "qint8", "QUInt8Storage": "quint8", "QInt32Storage": "qint32",
    "QUInt4x2Storage": "quint4x2", "QUInt2x4Storage": "quint2x4",
}
# dtypes torch can write that ember has no counterpart for (named in the error)
FOREIGN_DTYPES = ("complex32", "float4_e2m1fn_x2", "qint8", "quint8", "qint32", "quint4x2",
                  "quint2x4", "bits8", "bits16", "bits1x8", "bits2x4", "bits4x2", "int1", "int2",
                  "int3", "int4", "int5", "int6", "int7", "uint1", "uint2", "uint3", "uint4",
                  "uint5", "uint6", "uint7")


def ember_dtype(name: str) -> D.dtype:
    """The ember dtype called ``name`` in torch; a clear error for dtypes ember lacks."""
    dt = D._NAMES.get(name)
    if dt is not None and name == dt.name:
        return dt
    if name in FOREIGN_DTYPES:
        known = ", ".join(d.name for d in D.ALL + D.COMPLEX)
        raise bad(f"the file holds a tensor or dtype torch.{name}, which ember does not have "
                  f"(ember's dtypes: {known}). Convert it in torch before saving, e.g. "
                  "t.to(torch.float32).")
    raise bad(f"unknown dtype name {name!r}")


class StorageType:
    """A storage class named in a persistent id (``torch.FloatStorage``...): only a dtype tag."""

    def __init__(self, name: str, dtype_name: str | None):
        self.name, self.dtype_name = name, dtype_name

    def __repr__(self):
        return f"<storage type {self.name}>"


class Storage:
    """The bytes of one saved storage; ``dtype`` is None for an untyped storage."""

    __slots__ = ("buf", "dtype", "vc", "key", "big_endian")

    def __init__(self, buf, dtype, key, big_endian=False):
        self.buf, self.dtype, self.key, self.big_endian = buf, dtype, key, big_endian
        self.vc = [0]

    def typed(self, dtype) -> Storage:
        """The same bytes and version counter under another dtype tag."""
        other = Storage(self.buf, dtype, self.key, self.big_endian)
        other.vc = self.vc
        return other


class Pending:
    """What a rebuild returns while a legacy file's storages are still unread (first pass)."""


PENDING = Pending()


def _int_seq(v, lowest: int) -> bool:
    return (type(v) in (tuple, list) and len(v) <= MAX_NDIM
            and all(type(x) is int and lowest <= x < MAX_DIM for x in v))


def make_tensor(storage, offset, size, stride, requires_grad, dtype=None):
    """A tensor viewing ``storage``; every field checked (see NOTE [Tensor records])."""
    if not isinstance(storage, Storage):
        raise bad(f"a tensor record names {type(storage).__name__!s}, not a storage")
    dt = dtype if dtype is not None else storage.dtype
    if not isinstance(dt, D.dtype):
        raise bad("a tensor record has no dtype (an untyped storage without one)")
    if not (_int_seq(size, 0) and type(offset) is int and 0 <= offset < MAX_DIM):
        raise bad(f"malformed tensor geometry: size={short(size)}, offset={short(offset)}")
    if type(stride) in (tuple, list) and any(type(s) is int and s < 0 for s in stride):
        raise bad(f"tensor strides {short(tuple(stride))} are negative; torch never writes "
                  "negative strides, so the file is corrupted or crafted")
    if not (_int_seq(stride, 0) and len(stride) == len(size)):
        raise bad(f"malformed tensor strides {short(stride)} for size {short(size)}")
    if type(requires_grad) is not bool:
        raise bad(f"requires_grad must be a bool; got {type(requires_grad).__name__}")
    if requires_grad and not dt.is_floating_point:
        raise bad(f"a {dt.name} tensor cannot require gradients")
    if storage.buf is None:  # legacy first pass: geometry checked, data not read yet
        return PENDING
    item = dt.itemsize
    shape, strides = tuple(size), tuple(stride)
    numel = math.prod(shape)
    if numel * item >= MAX_DIM:
        raise bad(f"tensor size {shape} is too large")
    have = storage.buf.nbytes // item
    span = sum((n - 1) * s for n, s in zip(shape, strides, strict=True))
    end = offset + span + 1 if numel else offset
    if end > have:
        raise bad(f"tensor (size {shape}, stride {strides}, offset {offset}, {dt.name}) reads "
                  f"elements up to {end} of a storage holding {have}")
    np_dt = dt.np
    if np_dt is None:  # pragma: no cover - bfloat16 without ml_dtypes
        raise bad("bfloat16 tensors need the ml_dtypes package")
    if numel == 0:
        arr = np.empty(shape, dtype=np_dt)
    else:
        byte_strides = tuple(s * item for s in strides)
        swap = storage.big_endian != (sys.byteorder == "big")
        arr = np.ndarray(shape, dtype=np_dt.newbyteorder() if swap else np_dt,
                         buffer=storage.buf, offset=offset * item, strides=byte_strides)
        if swap:  # pragma: no cover - big-endian data: a native copy
            arr = arr.astype(np_dt)
        elif _overlaps(shape, strides):
            arr.flags.writeable = False  # as ember's own broadcast views: writes would alias
    t = _make(arr, storage.vc)
    if requires_grad:
        t._requires_grad = True
    return t


def _overlaps(shape, strides) -> bool:
    """True if two elements of the view share memory."""
    dims = sorted((s, n) for n, s in zip(shape, strides, strict=True) if n > 1)
    reach = 0  # elements spanned by the smaller dims so far (minus one)
    for s, n in dims:
        if s <= reach:
            return True
        reach += s * (n - 1)
    return False


def parameter_class():
    from ..nn.parameter import Parameter
    return Parameter


def as_parameter(data, requires_grad):
    if data is PENDING:
        return PENDING
    if not isinstance(data, Tensor) or type(requires_grad) is not bool:
        raise bad("malformed parameter record")
    if requires_grad and not data.dtype.is_floating_point:
        raise bad(f"a {data.dtype.name} parameter cannot require gradients")
    return parameter_class()(data, requires_grad=requires_grad)


def retype(t, cls):
    """``t`` as an instance of the Tensor subclass ``cls`` (same memory and version)."""
    if t is PENDING or type(t) is cls:
        return t
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise bad(f"a tensor record rebuilds a tensor as {short(cls)}, not a Tensor class")
    if cls is parameter_class():
        return as_parameter(t, t.requires_grad)
    sub = object.__new__(cls)
    sub._data, sub._vc, sub._requires_grad = t._data, t._vc, t._requires_grad
    return sub
