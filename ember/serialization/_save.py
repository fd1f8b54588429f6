"""``ember.save``: torch's checkpoint layout, so ``torch.load(path, weights_only=True)`` reads it.

NOTE [Writing torch's format]
The zip layout (torch's default since 1.6): records ``archive/data.pkl`` (the object, pickled at
protocol 2), ``archive/data/<key>`` (the raw little-endian bytes of each storage),
``archive/byteorder``, ``archive/.format_version``, ``archive/.storage_alignment``,
``archive/version`` and ``archive/.data/serialization_id``, all stored, each record starting on a
64-byte boundary so ``mmap=True`` maps it aligned. In the pickle a tensor is
``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, OrderedDict())``
where ``storage`` is the persistent id ``("storage", torch.<T>Storage, key, "cpu", numel)``; a
Parameter wraps that in ``torch._utils._rebuild_parameter``; dtypes, ``Size``, devices and
layouts are written under torch's names. So the file names torch's globals although ember never
imports torch: ``_Pickler.save_global`` writes those names itself.

Tensors viewing one NumPy buffer become views of one storage (sharing survives a round trip
through either library); a view that torch cannot express (negative or self-overlapping strides,
a buffer that is not contiguous, another dtype than the storage's) is saved as its own copy.

With ``_use_new_zipfile_serialization=False`` the legacy (pre-1.6) layout is written instead:
pickles of torch's magic number, protocol version 1001 and a system-info dict, the object pickle
(persistent ids ``("storage", type, key, "cpu", numel, None)``), the list of storage keys, then
per storage its element count (int64, little-endian) and its bytes.
"""
from __future__ import annotations

import collections
import io
import os
import pickle
import secrets
import sys
import zipfile

import numpy as np

from .. import _dtype as D
from .._backend import data_ptr
from .._backend import device as _device
from .._size import Size
from .._tensor import Tensor, _make, _root_array
from . import _archive
from ._tensors import STORAGE_DTYPES, _overlaps, parameter_class

ROOT = "archive"
LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
LEGACY_PROTOCOL = 1001
_STORAGE_CLASS = {dtype_name: cls for cls, dtype_name in STORAGE_DTYPES.items()}


class _TorchName:
    """A global written under torch's name (``torch._utils._rebuild_tensor_v2``...)."""

    _cache: dict[tuple[str, str], _TorchName] = {}

    def __init__(self, module: str, name: str):
        self.module, self.name = module, name

    def __call__(self, *args, **kwargs):  # pickle's save_reduce asks for a callable
        raise TypeError(f"{self.module}.{self.name} is a name written into checkpoints only")

    @classmethod
    def of(cls, module: str, name: str) -> _TorchName:
        key = (module, name)
        if key not in cls._cache:
            cls._cache[key] = cls(module, name)
        return cls._cache[key]


class _StorageRef:
    """One storage being written: its bytes and the persistent id naming it."""

    def __init__(self, key: str, data: np.ndarray, dtype: D.dtype):
        self.key, self.data, self.dtype = key, data, dtype

    def pid(self, legacy: bool) -> tuple:
        numel = self.data.nbytes // self.dtype.itemsize
        if self.dtype.name not in _STORAGE_CLASS:  # no typed storage class: uint16/32/64, float8
            raise RuntimeError(f"ember.save: tensors of dtype {self.dtype} cannot be saved yet "
                               f"(ember writes typed storages, and torch has none for "
                               f"{self.dtype.name}); convert first, e.g. t.to(ember.int64).")
        kind = _TorchName.of("torch", _STORAGE_CLASS[self.dtype.name])
        return ("storage", kind, self.key, "cpu", numel) + ((None,) if legacy else ())


class _Storages:
    """Assigns storages to tensors, sharing a NumPy buffer between the tensors that view it."""

    def __init__(self):
        self.refs: dict[tuple[int, str], tuple[_StorageRef, np.ndarray]] = {}
        self.order: list[_StorageRef] = []

    def place(self, t: Tensor):
        """(storage, element offset, element strides) for tensor ``t``."""
        arr, dt = t._data, t.dtype
        item = dt.itemsize
        root = _root_array(arr)
        shareable = (sys.byteorder == "little" and arr.size > 0 and root.dtype.kind != "O"
                     and (root.flags.c_contiguous or root.flags.f_contiguous)
                     and root.nbytes % item == 0 and all(s >= 0 for s in arr.strides)
                     and all(s % item == 0 for s in arr.strides))
        if shareable:
            start = data_ptr(arr) - data_ptr(root)
            strides = [s // item for s in arr.strides]
            span = sum((n - 1) * s for n, s in zip(arr.shape, arr.strides, strict=True))
            moving = [(n, s) for n, s in zip(arr.shape, strides, strict=True) if s]
            shareable = (start >= 0 and start % item == 0 and start + span + item <= root.nbytes
                         and not _overlaps([n for n, _ in moving], [s for _, s in moving]))
        if not shareable:  # a private contiguous little-endian copy
            own = np.array(arr, dtype=arr.dtype.newbyteorder("<"), order="C")  # keeps 0-d
            ref = self._add(own, dt, key=None)
            return ref, 0, [s // item for s in own.strides]
        ref = self._add(root, dt, key=(id(root), dt.name))
        return ref, start // item, strides

    def _add(self, root: np.ndarray, dt: D.dtype, key) -> _StorageRef:
        if key is not None and key in self.refs:
            return self.refs[key][0]
        flat = root.reshape(-1, order="A") if root.ndim != 1 else root
        data = flat.view(np.uint8) if flat.size else np.empty(0, np.uint8)
        ref = _StorageRef(str(len(self.order)), data, dt)
        self.order.append(ref)
        if key is not None:
            self.refs[key] = (ref, root)  # keep root alive so its id is not reused
        return ref


class _Pickler(pickle._Pickler):
    """The pure-Python pickler, writing ember objects under torch's global names."""

    def __init__(self, file, protocol, storages: _Storages, legacy: bool):
        super().__init__(file, protocol)
        self.storages, self.legacy = storages, legacy
        self._param = parameter_class()

    def persistent_id(self, obj):
        if type(obj) is _StorageRef:
            return obj.pid(self.legacy)
        return None

    def reducer_override(self, obj):
        t = type(obj)
        if t is _TorchName or t is D.dtype:
            return "torch-name"  # a global: see save_global
        if t is Size:
            return (_TorchName.of("torch", "Size"), (tuple(obj),))
        if t is _device:
            args = (obj.type,) if obj.index is None else (obj.type, obj.index)
            return (_TorchName.of("torch", "device"), args)
        if t.__name__ == "layout" and t.__module__ == "ember.sparse._coo":
            return (_TorchName.of("torch.serialization", "_get_layout"), (f"torch.{obj.name}",))
        if isinstance(obj, Tensor) and obj._meta:
            raise RuntimeError(f"save: cannot save a meta tensor of shape {tuple(obj.shape)} "
                               "(ember writes tensor data only; torch records meta tensors "
                               "without it). Save the module after to_empty() and init.")
        if t is Tensor:
            return self._tensor(obj)
        if t is self._param:
            data = _make(obj._data, obj._vc)
            return (_TorchName.of("torch._utils", "_rebuild_parameter"),
                    (data, obj.requires_grad, collections.OrderedDict()))
        if isinstance(obj, Tensor) and "SparseTensor" not in t.__name__:
            plain = _make(obj._data, obj._vc)
            plain._requires_grad = obj._requires_grad
            state = {k: v for k, v in vars(obj).items()
                     if not k.startswith("_") and k != "grad"}
            return (_TorchName.of("torch._tensor", "_rebuild_from_type_v2"),
                    (_TorchName.of("torch._utils", "_rebuild_tensor_v2"), t,
                     self._tensor(plain)[1], state))
        return NotImplemented

    def _tensor(self, t: Tensor):
        ref, offset, strides = self.storages.place(t)
        return (_TorchName.of("torch._utils", "_rebuild_tensor_v2"),
                (ref, offset, tuple(t._data.shape), tuple(strides), bool(t.requires_grad),
                 collections.OrderedDict()))

    def save_global(self, obj, name=None):
        if type(obj) is D.dtype:
            obj = _TorchName.of("torch", obj.name)
        if type(obj) is _TorchName:
            self.write(pickle.GLOBAL + obj.module.encode() + b"\n" + obj.name.encode() + b"\n")
            self.memoize(obj)
            return
        super().save_global(obj, name)


def _pickled(obj, protocol: int, storages: _Storages, legacy: bool) -> bytes:
    buf = io.BytesIO()
    _Pickler(buf, protocol, storages, legacy).dump(obj)
    return buf.getvalue()


def save(obj, f, pickle_module=pickle, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False) -> None:
    """Save ``obj`` to ``f`` (a path or a writable binary file object) in torch's format.

    ``torch.load(f, weights_only=True)`` reads the result; see NOTE [Writing torch's format].
    Writes to a path are atomic (a temporary file renamed over the target).

    Differs from torch: ``pickle_module`` is ignored (ember's pickler writes torch's names).

    Example:
        >>> import io, ember
        >>> buf = io.BytesIO()
        >>> ember.save({"w": ember.arange(3.0)}, buf)
        >>> _ = buf.seek(0)
        >>> ember.load(buf)["w"]
        tensor([0., 1., 2.])
    """
    storages = _Storages()
    legacy = not _use_new_zipfile_serialization
    payload = _pickled(obj, pickle_protocol, storages, legacy)

    def write(fh):
        if legacy:
            _write_legacy(fh, payload, storages, pickle_protocol)
        else:
            _write_zip(fh, payload, storages, not _disable_byteorder_record)

    if isinstance(f, (str, os.PathLike)):
        parent = os.path.dirname(os.fspath(f))
        if parent and not os.path.isdir(parent):   # torch's error type and message
            raise RuntimeError(f"Parent directory {parent} does not exist.")
        _archive.atomic_write(f, write)
    else:
        write(f)


def _write_zip(fh, payload: bytes, storages: _Storages, byteorder: bool) -> None:
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        _archive.write_entry(zf, f"{ROOT}/data.pkl", payload)
        _archive.write_entry(zf, f"{ROOT}/.format_version", b"1")
        _archive.write_entry(zf, f"{ROOT}/.storage_alignment", str(_archive.ALIGN).encode())
        if byteorder:
            _archive.write_entry(zf, f"{ROOT}/byteorder", sys.byteorder.encode())
        for ref in storages.order:
            _archive.write_entry(zf, f"{ROOT}/data/{ref.key}", ref.data)
        _archive.write_entry(zf, f"{ROOT}/version", b"3\n")
        serial_id = str(secrets.randbits(128)).zfill(40).encode()
        _archive.write_entry(zf, f"{ROOT}/.data/serialization_id", serial_id)


def _write_legacy(fh, payload: bytes, storages: _Storages, protocol: int) -> None:
    sys_info = {"protocol_version": LEGACY_PROTOCOL, "little_endian": sys.byteorder == "little",
                "type_sizes": {"short": 2, "int": 4, "long": 4}}
    for header in (LEGACY_MAGIC, LEGACY_PROTOCOL, sys_info):
        fh.write(pickle.dumps(header, protocol=protocol))
    fh.write(payload)
    fh.write(pickle.dumps([ref.key for ref in storages.order], protocol=protocol))
    for ref in storages.order:
        numel = ref.data.nbytes // ref.dtype.itemsize
        fh.write(numel.to_bytes(8, "little"))
        fh.write(memoryview(ref.data).cast("B") if ref.data.nbytes else b"")
