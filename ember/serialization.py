"""``ember.save`` / ``ember.load``: a documented archive format, safe to load by default.

NOTE [Archive format]
An ember file is a ZIP archive whose entries are all *stored* (no compression):

* ``manifest.json`` -- ``{"format": "ember.save", "version": 1, "byteorder": "little",
  "storages": {"<sid>": {"file": "data/<sid>.bin", "nbytes": n}}, "root": <node>}``, or
  ``"pickle": "data.pkl"`` instead of ``"root"`` (see below).
* ``data/<sid>.bin`` -- the raw little-endian bytes of one storage (the NumPy buffer that one or
  more tensors view); entries start on 64-byte boundaries so ``mmap=True`` maps them aligned.
* ``data.pkl`` -- only for objects outside the safe tree: a pickle whose tensors are
  *persistent ids* pointing into the storages, so tensor data never goes through pickle.

A node of the safe tree is a JSON null, bool, int or string, or an object tagged by ``"t"``:
``float`` (``"v"``: a number or "inf"/"-inf"/"nan"), ``list``/``tuple``/``set``/``frozenset``
(``"v"``: nodes), ``dict``/``odict``/``counter`` (``"v"``: [key node, value node] pairs, order
kept; ``"attrs"``: instance attributes such as a state dict's ``_metadata``), ``bytes``
(base64), ``dtype``, ``size``, ``device``, ``tensor`` (``id``, ``storage``, ``dtype``,
``shape``, ``stride`` and ``offset`` in elements, ``requires_grad``, ``param``) and
``ref`` (another reference to an already-seen tensor ``id``). Tensors that view the same
storage come back as views of one buffer (sharing memory and the version counter); a tensor seen
twice comes back as one object; ``nn.Parameter`` stays a Parameter.

NOTE [Loading safely]
``weights_only=True`` (the default) never executes code from the file: the safe tree is decoded
by hand, and ``data.pkl`` is read by an unpickler whose ``find_class`` only returns allowlisted
globals (containers, ember dtypes / Size / device, tensor rebuilds, and classes registered with
``add_safe_globals`` or ``safe_globals``). Everything read is validated before it is used:
entry names (only the names above: no ``../``, absolute paths or others), compression (stored
only, so no zip bombs), sizes and offsets against the archive size, CRCs, every tensor's dtype,
shape, strides and offset against its storage (Python integers: no overflow), self-overlap
(only stride-0 broadcast dims may overlap; such tensors load read-only), nesting depth. Nothing is
extracted to disk.

Errors: a refused global raises ``UnpicklingError`` (a ``pickle.UnpicklingError``) naming it and
how to allow it. Any malformed, truncated or corrupted file raises ``SerializationError`` (a
``RuntimeError``). ``weights_only=False`` runs the ordinary unpickler (for whole modules or
arbitrary objects, and plain pickle files) and warns with ``UnsafeLoadWarning`` each time, since
that can execute arbitrary code: use it only on files you trust.

Writes to a path are atomic: the archive is written to a temporary file in the same directory,
fsynced, then renamed over the target; on any error the temporary file is removed and the target
is left untouched.

Differs from torch: the container is ember's own (torch's files are not readable, and vice versa;
use ``ember.utils.safetensors`` to exchange weights). Non-tensor objects referenced twice in the
safe tree come back as two equal copies. With ``mmap=True`` storage CRCs are not verified (the
data is mapped, not read).
"""
from __future__ import annotations

import _compat_pickle
import base64
import collections
import contextlib
import io
import json
import math
import os
import pickle
import re
import secrets
import stat
import struct
import sys
import warnings
import zipfile
from typing import Any

import numpy as np

from . import _dtype as D
from ._backend import check_device, data_ptr, device as _device
from ._size import Size
from ._tensor import Tensor, _make, _root_array

__all__ = ["save", "load", "SerializationError", "UnpicklingError", "UnsafeLoadWarning",
           "add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals"]

FORMAT = "ember.save"
VERSION = 1
_MANIFEST = "manifest.json"
_PICKLE = "data.pkl"
_ENTRY_RE = re.compile(r"(manifest\.json|data\.pkl|data/(0|[1-9][0-9]{0,8})\.bin)")
_ALIGN = 64
_MAX_DEPTH = 200        # nesting of the safe tree (well below Python's recursion limit)
_MAX_ENTRIES = 1 << 20
_MAX_NDIM = 64
_MAX_DIM = 1 << 62      # any larger dimension or stride is rejected before arithmetic
_CHUNK = 1 << 24


class SerializationError(RuntimeError):
    """A file ``ember.load`` cannot read: not an ember archive, truncated, corrupted, or lying
    about its contents (sizes, offsets, shapes, strides, dtypes, entry names, compression)."""


class UnpicklingError(pickle.UnpicklingError):
    """``weights_only=True`` refused a global (class or function) named by the file's pickle."""


class UnsafeLoadWarning(UserWarning):
    """``ember.load(weights_only=False)`` ran the full unpickler, which can execute code."""


# ---------------------------------------------------------------------------------------------
# safe globals (the allowlist of the restricted unpickler)

_user_globals: dict[tuple[str, str], Any] = {}


def _global_key(obj) -> tuple[str, str]:
    if isinstance(obj, tuple):  # (obj, "module.name") as in torch
        obj, name = obj
        module, _, qual = name.rpartition(".")
        return module, qual
    return obj.__module__, obj.__qualname__


def add_safe_globals(safe_globals: list) -> None:
    """Allow these classes/functions in ``ember.load(weights_only=True)`` pickles.

    Only add what you trust: an allowed class's ``__setstate__``/``__new__``/``__reduce__``
    targets run during loading. Entries may be objects or ``(object, "module.qualname")``.
    """
    for obj in safe_globals:
        _user_globals[_global_key(obj)] = obj[0] if isinstance(obj, tuple) else obj


def get_safe_globals() -> list:
    """The globals added with ``add_safe_globals`` (not the built-in allowlist)."""
    return list(_user_globals.values())


def clear_safe_globals() -> None:
    """Remove every global added with ``add_safe_globals``."""
    _user_globals.clear()


@contextlib.contextmanager
def safe_globals(safe_globals: list):
    """Context manager: ``add_safe_globals`` for the duration of the block."""
    saved = dict(_user_globals)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _user_globals.clear()
        _user_globals.update(saved)


def _codecs_encode_latin1(obj, encoding="utf-8"):
    # protocol-2 pickles spell bytes as _codecs.encode(str, "latin1"); allow exactly that
    if not isinstance(obj, str) or encoding not in ("latin1", "latin-1"):
        raise UnpicklingError("weights_only=True only allows _codecs.encode(str, 'latin1') "
                              "(how protocol-2 pickles store bytes)")
    return obj.encode("latin1")


class _ClassToken:
    """Stands for Tensor / Parameter in restricted pickles: usable only as the class argument
    of the tensor rebuild function. Handing out the real class would let NEWOBJ call the
    legacy constructor ``Tensor(*sizes)``, an allocation of any size."""

    def __init__(self, cls):
        self.cls = cls


def _rebuild_tensor_checked(cls, arr, requires_grad):
    # ember._tensor._rebuild_tensor, restricted to tensor classes and plain NumPy data
    from ._tensor import _rebuild_tensor
    if isinstance(cls, _ClassToken):
        cls = cls.cls
    if not (isinstance(cls, type) and issubclass(cls, Tensor)) or not isinstance(arr, np.ndarray):
        raise SerializationError("ember.load: malformed tensor in pickle data")
    D.from_numpy_dtype(arr.dtype)
    return _rebuild_tensor(cls, arr, bool(requires_grad))


def _builtin_allowlist() -> dict:
    allowed = {("builtins", t.__name__): t for t in (dict, list, tuple, set, frozenset, int,
                                                      float, bool, str, complex, slice)}
    allowed[("collections", "OrderedDict")] = collections.OrderedDict
    allowed[("collections", "defaultdict")] = collections.defaultdict
    allowed[("collections", "Counter")] = collections.Counter
    allowed[("_codecs", "encode")] = _codecs_encode_latin1
    allowed[("ember._dtype", "_by_name")] = D._by_name
    allowed[("ember._size", "Size")] = Size
    allowed[("ember._backend", "device")] = _device
    allowed[("ember._tensor", "Tensor")] = _ClassToken(Tensor)
    allowed[("ember._tensor", "_rebuild_tensor")] = _rebuild_tensor_checked
    param = _parameter_class()
    if param is not None:
        allowed[(param.__module__, param.__qualname__)] = _ClassToken(param)
    return allowed


def _parameter_class():
    try:
        from .nn.parameter import Parameter
    except ImportError:  # pragma: no cover - nn is part of ember
        return None
    return Parameter


# ---------------------------------------------------------------------------------------------
# saving


class _NotSafe(Exception):
    """Raised while encoding: the object needs the pickle path."""


class _Writer:
    """Collects storages and turns objects into manifest nodes."""

    def __init__(self):
        self.storages: dict[int, np.ndarray] = {}      # sid -> flat uint8 bytes of the buffer
        self._storage_of: dict[int, tuple[int, np.ndarray]] = {}  # id(root) -> (sid, root)
        self._tensor_ids: dict[int, tuple[int, Tensor]] = {}
        self._param = _parameter_class()

    # -- tensors
    def tensor_meta(self, t: Tensor) -> dict:
        """Register t's storage; the tensor part of a node (also a pickle persistent id)."""
        seen = self._tensor_ids.get(id(t))
        if seen is not None:
            return {"id": seen[0]}
        tid = len(self._tensor_ids)
        self._tensor_ids[id(t)] = (tid, t)  # keep t alive so its id is not reused
        arr = t._data
        sid, offset, strides = self._place(arr)
        meta = {"id": tid, "storage": sid, "dtype": t.dtype.name, "shape": list(arr.shape),
                "stride": strides, "offset": offset, "requires_grad": bool(t.requires_grad),
                "param": self._param is not None and isinstance(t, self._param)}
        return meta

    def _place(self, arr: np.ndarray):
        """(storage id, element offset, element strides) of arr, sharing its root buffer."""
        item = arr.itemsize
        root = _root_array(arr)
        shareable = (sys.byteorder == "little" and (root.flags.c_contiguous or
                                                    root.flags.f_contiguous)
                     and arr.size > 0 and not _self_overlaps(arr.shape, arr.strides))
        if shareable:
            start = data_ptr(arr) - data_ptr(root)
            lo, hi = _extent(start, arr.shape, arr.strides, item)
            shareable = (lo >= 0 and hi <= root.nbytes and start % item == 0
                         and all(s % item == 0 for s in arr.strides))
        if not shareable:  # a private contiguous little-endian copy
            own = np.array(arr, dtype=arr.dtype.newbyteorder("<"), order="C")  # keeps 0-d
            sid = self._add_storage(own, key=None)
            return sid, 0, [s // item for s in own.strides]
        sid = self._add_storage(root, key=id(root))
        return sid, start // item, [s // item for s in arr.strides]

    def _add_storage(self, root: np.ndarray, key) -> int:
        if key is not None and key in self._storage_of:
            return self._storage_of[key][0]
        sid = len(self.storages)
        flat = root.reshape(-1, order="A") if root.ndim != 1 else root
        self.storages[sid] = flat.view(np.uint8) if flat.size else np.empty(0, np.uint8)
        if key is not None:
            self._storage_of[key] = (sid, root)
        return sid

    # -- the safe tree
    def encode(self, obj, depth: int = 0):
        if depth > _MAX_DEPTH:
            raise _NotSafe
        t = type(obj)
        if obj is None or t is bool or t is int or t is str:
            return obj
        if t is float:
            return {"t": "float", "v": obj if math.isfinite(obj) else repr(obj)}
        if t in (list, tuple, set, frozenset):
            items = obj if t in (list, tuple) else list(obj)
            return {"t": t.__name__, "v": [self.encode(v, depth + 1) for v in items]}
        if t in (dict, collections.OrderedDict, collections.Counter):
            kind = {dict: "dict", collections.OrderedDict: "odict",
                    collections.Counter: "counter"}[t]
            node = {"t": kind, "v": [[self.encode_key(k, depth + 1), self.encode(v, depth + 1)]
                                     for k, v in obj.items()]}
            attrs = getattr(obj, "__dict__", None)  # e.g. a module state_dict's _metadata
            if attrs:
                node["attrs"] = self.encode(dict(attrs), depth + 1)
            return node
        if t is bytes:
            return {"t": "bytes", "v": base64.b64encode(obj).decode("ascii")}
        if t is D.dtype:
            return {"t": "dtype", "v": obj.name}
        if t is Size:
            return {"t": "size", "v": [int(s) for s in obj]}
        if t is _device:
            return {"t": "device", "v": str(obj)}
        if t is Tensor or (self._param is not None and t is self._param):
            meta = self.tensor_meta(obj)
            return {"t": "ref", **meta} if len(meta) == 1 else {"t": "tensor", **meta}
        raise _NotSafe

    def encode_key(self, key, depth):
        if isinstance(key, Tensor):
            raise _NotSafe  # a tensor key would not keep its identity-based hash meaning
        return self.encode(key, depth)


def _extent(start: int, shape, strides, item: int):
    """[lo, hi) byte range touched by a view at ``start`` (all Python ints: no overflow)."""
    lo = hi = start
    for n, s in zip(shape, strides):
        if n == 0:
            return start, start
        if s < 0:
            lo += s * (n - 1)
        else:
            hi += s * (n - 1)
    return lo, hi + item


def _self_overlaps(shape, strides) -> bool:
    """True if two elements of the view share memory through non-zero strides."""
    dims = sorted((abs(s), n) for n, s in zip(shape, strides) if n > 1 and s != 0)
    reach = 0  # bytes spanned by the smaller dims so far (minus one element)
    for s, n in dims:
        if s <= reach:
            return True
        reach += s * (n - 1)
    return False


def _pickler_class(base, writer: _Writer):
    class _Pickler(base):
        def persistent_id(self, obj):
            if isinstance(obj, Tensor):
                meta = writer.tensor_meta(obj)
                cls = type(obj)
                plain = cls is Tensor or (writer._param is not None and cls is writer._param)
                return ("ember.tensor", meta, None if plain else cls)
            return None

    return _Pickler


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False) -> None:
    """Save ``obj`` to ``f`` (a path or a writable binary file object).

    Tensors, Parameters and nested dicts / OrderedDicts / lists / tuples / sets of them, plus
    numbers, strings, bytes, None, dtypes, ``ember.Size`` and devices, go into a JSON manifest;
    anything else (a whole ``nn.Module``, a user class, a NumPy array) is pickled into the
    archive with its tensors stored beside it. See NOTE [Archive format].

    Example:
        >>> import io, ember
        >>> buf = io.BytesIO()
        >>> ember.save({"w": ember.arange(3.0)}, buf)
        >>> _ = buf.seek(0)
        >>> ember.load(buf)["w"]
        tensor([0., 1., 2.])
    """
    writer = _Writer()
    manifest: dict[str, Any] = {"format": FORMAT, "version": VERSION, "byteorder": "little"}
    pickled = None
    try:
        manifest["root"] = writer.encode(obj)
    except _NotSafe:
        writer = _Writer()
        buf = io.BytesIO()
        base = pickle_module.Pickler if pickle_module is not None else pickle.Pickler
        _pickler_class(base, writer)(buf, protocol=pickle_protocol).dump(obj)
        pickled = buf.getvalue()
        manifest["pickle"] = _PICKLE
    manifest["storages"] = {str(sid): {"file": f"data/{sid}.bin", "nbytes": int(b.nbytes)}
                            for sid, b in writer.storages.items()}
    payload = json.dumps(manifest, allow_nan=False, separators=(",", ":")).encode("utf-8")

    def write(fh):
        with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
            _write_entry(zf, _MANIFEST, payload)
            if pickled is not None:
                _write_entry(zf, _PICKLE, pickled)
            for sid, data in writer.storages.items():
                _write_entry(zf, f"data/{sid}.bin", data)

    if isinstance(f, (str, os.PathLike)):
        _atomic_write(f, write)
    else:
        write(f)


def _write_entry(zf: zipfile.ZipFile, name: str, data) -> None:
    """Write one stored entry whose data starts at a multiple of _ALIGN in the stream."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    nbytes = len(data) if isinstance(data, bytes) else int(data.nbytes)
    info.file_size = nbytes
    zip64 = nbytes * 1.05 > zipfile.ZIP64_LIMIT  # zipfile's own rule for the local header
    base = zf.fp.tell() + 30 + len(name.encode("utf-8")) + (20 if zip64 else 0)
    pad = -base % _ALIGN
    if 0 < pad < 4:  # an extra-field record needs at least its 4-byte header
        pad += _ALIGN
    if pad:
        info.extra = struct.pack("<HH", 0x4D45, pad - 4) + b"\0" * (pad - 4)  # 'EM' padding
    with zf.open(info, "w") as out:
        view = memoryview(data)
        for start in range(0, nbytes, _CHUNK):
            out.write(view[start:start + _CHUNK])


def _atomic_write(path, write) -> None:
    """Write via a temporary file in the target's directory, fsync, then rename over it."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        with contextlib.suppress(OSError):  # keep an existing target's permissions
            os.chmod(tmp, stat.S_IMODE(os.stat(path).st_mode))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError, AttributeError):  # persist the rename (POSIX)
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


# ---------------------------------------------------------------------------------------------
# loading


def _bad(msg: str) -> SerializationError:
    return SerializationError(f"ember.load: {msg}")


class _Reader:
    """Reads one validated archive: storages on demand, tensors from manifest metadata."""

    def __init__(self, zf: zipfile.ZipFile, fp, size: int, path, mmap: bool, map_location):
        self.zf, self.fp, self.size, self.path, self.mmap = zf, fp, size, path, mmap
        self.map_location = map_location
        self.infos = _check_entries(zf, size)
        manifest = self._read_json(_MANIFEST)
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise _bad("not an ember archive (manifest.json has no 'format': 'ember.save')")
        if manifest.get("version") != VERSION:
            raise _bad(f"unsupported archive version {manifest.get('version')!r}; this ember "
                       f"reads version {VERSION}. Upgrade ember to read it.")
        if manifest.get("byteorder", "little") != "little":
            raise _bad("unsupported byte order")
        self.manifest = manifest
        storages = manifest.get("storages")
        if not isinstance(storages, dict) or len(storages) > _MAX_ENTRIES:
            raise _bad("manifest 'storages' must be a mapping of storage ids")
        self.storage_meta = storages
        self._storages: dict[str, tuple[np.ndarray, list]] = {}
        self._tensors: dict[int, Tensor] = {}
        self._param = _parameter_class()

    # -- raw entries
    def read_entry(self, name: str) -> bytes:
        info = self.infos.get(name)
        if info is None:
            raise _bad(f"archive has no entry {name!r}")
        buf = bytearray(info.file_size)
        self._read_into(info, memoryview(buf))
        return bytes(buf)

    def _read_into(self, info: zipfile.ZipInfo, out: memoryview) -> None:
        try:
            with self.zf.open(info) as src:
                pos, n = 0, len(out)
                while pos < n:
                    got = src.readinto(out[pos:pos + _CHUNK])
                    if not got:
                        raise _bad(f"entry {info.filename!r} is truncated")
                    pos += got
                if src.read(1):  # also makes zipfile check the CRC at the end of the entry
                    raise _bad(f"entry {info.filename!r} is longer than declared")
        except SerializationError:
            raise
        except Exception as e:  # bad CRC, local header mismatch, short read, ...
            raise _bad(f"entry {info.filename!r} is corrupted ({type(e).__name__}: {e})") from None

    def _read_json(self, name: str):
        raw = self.read_entry(name)
        try:
            return json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
        except (ValueError, RecursionError) as e:
            raise _bad(f"{name} is not valid JSON ({e})") from None

    # -- storages and tensors
    def storage(self, sid) -> tuple[np.ndarray, list]:
        key = str(sid) if type(sid) is int else sid
        if key in self._storages:
            return self._storages[key]
        meta = self.storage_meta.get(key) if isinstance(key, str) else None
        if not isinstance(meta, dict):
            raise _bad(f"tensor refers to unknown storage {sid!r}")
        name, nbytes = meta.get("file"), meta.get("nbytes")
        info = self.infos.get(name) if isinstance(name, str) else None
        if info is None or not name.startswith("data/"):
            raise _bad(f"storage {key!r} names a missing entry {name!r}")
        if type(nbytes) is not int or nbytes != info.file_size:
            raise _bad(f"storage {key!r} declares {nbytes!r} bytes but its entry holds "
                       f"{info.file_size}")
        if self.mmap and nbytes > 0:
            arr = np.memmap(self.path, dtype=np.uint8, mode="c", offset=self._data_start(info),
                            shape=(nbytes,))
        else:
            arr = np.empty(nbytes, dtype=np.uint8)
            self._read_into(info, memoryview(arr))
        arr = _apply_map_location(arr, self.map_location)
        self._storages[key] = (arr, [0])
        return self._storages[key]

    def _data_start(self, info: zipfile.ZipInfo) -> int:
        self.fp.seek(info.header_offset)
        header = self.fp.read(30)
        if len(header) != 30 or header[:4] != b"PK\x03\x04":
            raise _bad(f"bad local header for {info.filename!r}")
        name_len, extra_len = struct.unpack("<HH", header[26:30])
        start = info.header_offset + 30 + name_len + extra_len
        if start + info.file_size > self.size:
            raise _bad(f"entry {info.filename!r} extends past the end of the file")
        return start

    def tensor(self, meta) -> Tensor:
        if not isinstance(meta, dict):
            raise _bad("malformed tensor record")
        tid = meta.get("id")
        if type(tid) is not int:
            raise _bad("tensor record without an integer id")
        if len(meta) == 1:
            if tid not in self._tensors:
                raise _bad(f"reference to unknown tensor {tid}")
            return self._tensors[tid]
        if tid in self._tensors:
            raise _bad(f"tensor id {tid} defined twice")
        t = self._build(meta)
        self._tensors[tid] = t
        return t

    def _build(self, meta: dict) -> Tensor:
        dt = D._NAMES.get(meta.get("dtype")) if isinstance(meta.get("dtype"), str) else None
        if dt is None or dt.np is None or meta.get("dtype") != dt.name:
            raise _bad(f"unknown tensor dtype {meta.get('dtype')!r}")
        shape, stride, offset = meta.get("shape"), meta.get("stride"), meta.get("offset")
        if not (_int_list(shape, 0) and _int_list(stride, -_MAX_DIM) and len(shape) == len(stride)
                and len(shape) <= _MAX_NDIM and type(offset) is int and 0 <= offset < _MAX_DIM):
            raise _bad(f"malformed tensor geometry: shape={shape!r}, stride={stride!r}, "
                       f"offset={offset!r}")
        item = dt.itemsize
        if math.prod(max(n, 1) for n in shape) * item >= _MAX_DIM:
            raise _bad(f"tensor shape {shape} is too large")
        storage, vc = self.storage(meta.get("storage"))
        byte_strides = [s * item for s in stride]
        lo, hi = _extent(offset * item, shape, byte_strides, item)
        if math.prod(shape) == 0:
            lo, hi = offset * item, offset * item
        if lo < 0 or hi > storage.nbytes:
            raise _bad(f"tensor (shape {shape}, stride {stride}, offset {offset}, {dt.name}) "
                       f"reads bytes [{lo}, {hi}) outside its storage of {storage.nbytes} bytes")
        if _self_overlaps(shape, byte_strides):
            raise _bad(f"tensor strides {stride} make elements of shape {shape} overlap")
        np_dt = dt.np.newbyteorder("<") if sys.byteorder != "little" else dt.np
        if math.prod(shape) == 0:
            arr = np.empty(shape, dtype=np_dt)
        else:
            arr = np.ndarray(shape, dtype=np_dt, buffer=storage, offset=offset * item,
                             strides=byte_strides)
        if sys.byteorder != "little":  # pragma: no cover - big-endian hosts copy
            arr = arr.astype(dt.np)
        if any(s == 0 and n > 1 for n, s in zip(shape, stride)):
            arr.flags.writeable = False  # a broadcast view: writes would alias (as in ember)
        t = _make(arr, vc)
        rg = meta.get("requires_grad", False)
        if type(rg) is not bool or (rg and not dt.is_floating_point):
            raise _bad(f"invalid requires_grad {rg!r} for a {dt.name} tensor")
        if meta.get("param"):
            if self._param is None:  # pragma: no cover
                raise _bad("the archive holds an nn.Parameter but ember.nn is unavailable")
            p = self._param(t, requires_grad=rg)
            p._data, p._vc = arr, vc
            return p
        t._requires_grad = rg
        return t

    # -- the safe tree
    def decode(self, node, depth: int = 0):
        if depth > _MAX_DEPTH:
            raise _bad("the object tree is nested too deeply")
        if node is None or type(node) in (bool, int, str):
            return node
        if type(node) is not dict:
            raise _bad(f"malformed manifest node of type {type(node).__name__}")
        kind, v = node.get("t"), node.get("v")
        try:
            if kind == "float":
                if type(v) in (int, float):
                    return float(v)
                if v in ("inf", "-inf", "nan"):
                    return float(v)
            elif kind in ("list", "tuple", "set", "frozenset") and type(v) is list:
                items = [self.decode(x, depth + 1) for x in v]
                return {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[kind](
                    items)
            elif kind in ("dict", "odict", "counter") and type(v) is list:
                cls = {"dict": dict, "odict": collections.OrderedDict,
                       "counter": collections.Counter}[kind]
                out = cls()
                for pair in v:
                    if type(pair) is not list or len(pair) != 2:
                        raise _bad("malformed dict item")
                    out[self.decode(pair[0], depth + 1)] = self.decode(pair[1], depth + 1)
                if "attrs" in node and cls is not dict:
                    attrs = self.decode(node["attrs"], depth + 1)
                    if type(attrs) is not dict or not all(
                            type(k) is str and not k.startswith("__") for k in attrs):
                        raise _bad("malformed dict attributes")
                    for name, value in attrs.items():
                        setattr(out, name, value)
                return out
            elif kind == "bytes" and type(v) is str:
                return base64.b64decode(v.encode("ascii"), validate=True)
            elif kind == "dtype" and type(v) is str and v in D._NAMES:
                return D._NAMES[v]
            elif kind == "size" and _int_list(v, 0):
                return Size(v)
            elif kind == "device" and type(v) is str:
                return _device(v)
            elif kind in ("tensor", "ref"):
                return self.tensor({k: x for k, x in node.items() if k != "t"})
        except SerializationError:
            raise
        except (TypeError, ValueError, RuntimeError) as e:  # unhashable keys, bad base64, ...
            raise _bad(f"malformed {kind!r} node ({e})") from None
        raise _bad(f"malformed manifest node with tag {kind!r}")


def _reject_constant(name):
    raise ValueError(f"non-standard JSON constant {name}")


def _int_list(v, lowest: int) -> bool:
    return (type(v) is list and len(v) <= _MAX_NDIM
            and all(type(x) is int and lowest <= x < _MAX_DIM for x in v))


def _check_entries(zf: zipfile.ZipFile, size: int) -> dict[str, zipfile.ZipInfo]:
    """Validate every entry before reading any: names, compression, sizes, duplicates."""
    infos = zf.infolist()
    if len(infos) > _MAX_ENTRIES:
        raise _bad(f"archive has too many entries ({len(infos)})")
    out: dict[str, zipfile.ZipInfo] = {}
    for info in infos:
        name = info.filename
        if not _ENTRY_RE.fullmatch(name):
            raise _bad(f"unexpected archive entry {name!r} (an ember archive only holds "
                       "manifest.json, data.pkl and data/<n>.bin)")
        if name in out:
            raise _bad(f"duplicate archive entry {name!r}")
        if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 0x1:
            raise _bad(f"entry {name!r} is compressed or encrypted; ember archives store "
                       "entries uncompressed")
        if (info.file_size != info.compress_size or info.file_size > size
                or not 0 <= info.header_offset <= size - info.file_size):
            raise _bad(f"entry {name!r} declares sizes that do not fit the file "
                       f"({info.file_size} bytes at offset {info.header_offset} in {size})")
        out[name] = info
    # entries of a well-formed archive are disjoint; declared sizes summing past the file size
    # mean entries overlap, which would multiply the memory a small file makes us allocate
    if sum(info.file_size for info in infos) > size:
        raise _bad("archive entries overlap (their sizes add up to more than the file)")
    return out


def _apply_map_location(arr: np.ndarray, map_location) -> np.ndarray:
    if callable(map_location):
        from ._tensor import UntypedStorage
        result = map_location(UntypedStorage(arr), "cpu")
        if isinstance(result, UntypedStorage):
            return result._root
    return arr


def _check_map_location(map_location) -> None:
    if map_location is None or callable(map_location):
        return
    if isinstance(map_location, dict):
        for target in map_location.values():
            check_device(target)
        return
    check_device(map_location)


class _RestrictedUnpickler(pickle.Unpickler):
    """Unpickler that resolves only allowlisted globals; see NOTE [Loading safely]."""

    def __init__(self, file, reader):
        super().__init__(file)
        self._reader = reader
        self._allowed = _builtin_allowlist()
        self._allowed.update(_user_globals)

    def find_class(self, module, name):
        # protocol <= 2 pickles spell builtins as Python 2 names (__builtin__.set, ...)
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
        obj = self._allowed.get((module, name))
        if obj is None:
            raise UnpicklingError(
                f"ember.load: weights_only=True refused to load the global '{module}.{name}' "
                "named by the file's pickle data, since it could run arbitrary code. If you "
                f"trust the file, allow it with ember.serialization.add_safe_globals([{name}]) "
                f"or `with ember.serialization.safe_globals([{name}]): ...`, or load with "
                "weights_only=False (which can execute code from the file).")
        return obj

    def persistent_load(self, pid):
        return _tensor_from_pid(self._reader, pid, restricted=True)


def _tensor_from_pid(reader, pid, restricted: bool):
    if reader is None:
        raise _bad("a plain pickle file refers to external tensor storage")
    if not (type(pid) is tuple and len(pid) == 3 and pid[0] == "ember.tensor"):
        raise _bad(f"unknown persistent id in pickle data: {pid!r:.80}")
    t = reader.tensor(pid[1])
    cls = pid[2]
    if cls is not None and type(t) is not cls:
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise _bad("pickle data rebuilds a tensor as a non-tensor class")
        sub = object.__new__(cls)
        sub._data, sub._vc, sub._requires_grad = t._data, t._vc, t._requires_grad
        t = sub
    return t


def _unrestricted_unpickler(base, reader):
    class _Unpickler(base):
        def persistent_load(self, pid):
            return _tensor_from_pid(reader, pid, restricted=False)

    return _Unpickler


def _unpickle(data: bytes, reader, weights_only: bool, pickle_module, **pickle_load_args):
    if weights_only:
        try:
            return _RestrictedUnpickler(io.BytesIO(data), reader).load()
        except (UnpicklingError, SerializationError):
            raise
        except Exception as e:  # malformed pickle data: any error type the unpickler produced
            raise _bad(f"malformed pickle data ({type(e).__name__}: {e})") from None
    warnings.warn("ember.load(weights_only=False) runs the full pickle unpickler, which can "
                  "execute arbitrary code from the file; only use it on files you trust.",
                  UnsafeLoadWarning, stacklevel=3)
    base = pickle_module.Unpickler if pickle_module is not None else pickle.Unpickler
    return _unrestricted_unpickler(base, reader)(io.BytesIO(data), **pickle_load_args).load()


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None,
         **pickle_load_args):
    """Load an object saved with ``ember.save`` from a path or a readable binary file object.

    Args:
        f: a path (str / PathLike) or a binary file object.
        map_location: ``None``, ``'cpu'``, an ``ember.device``, a dict of location -> 'cpu',
            or ``fn(storage, location)``; every tensor loads on the CPU (other devices raise).
        pickle_module: used only with ``weights_only=False``.
        weights_only (bool): refuse to run code from the file (default True); see
            NOTE [Loading safely]. ``False`` also reads plain pickle files, with a warning.
        mmap (bool): map storages from the file (a path) instead of reading them.

    Raises:
        SerializationError: the file is not a well-formed ember archive (or pickle).
        UnpicklingError: ``weights_only=True`` refused a global named by the file.
    """
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                           "specified; pass weights_only=False to use a custom pickle_module.")
    _check_map_location(map_location)
    path = os.fspath(f) if isinstance(f, (str, os.PathLike)) else None
    if mmap and path is None:
        raise ValueError("f must be a file path in order to use the mmap argument")
    with contextlib.ExitStack() as stack:
        if path is not None:
            fp = stack.enter_context(open(path, "rb"))
        else:
            fp = f if _seekable(f) else io.BytesIO(f.read())
        start = fp.tell()
        magic = fp.read(4)
        fp.seek(start)
        if magic == b"PK\x03\x04":
            return _load_archive(fp, path, bool(mmap), map_location, weights_only, pickle_module,
                                 pickle_load_args)
        if not magic:
            raise _bad("the file is empty")
        if mmap:
            raise _bad("mmap=True needs an archive written by ember.save (this file has no ZIP "
                       "signature)")
        # not an archive: a plain pickle (or garbage), read with the restricted unpickler unless
        # weights_only=False; garbage fails there as malformed pickle data
        return _unpickle(fp.read(), None, weights_only, pickle_module, **pickle_load_args)


def _seekable(f) -> bool:
    try:
        return bool(f.seekable())
    except (AttributeError, OSError, ValueError):
        return False


def _load_archive(fp, path, mmap, map_location, weights_only, pickle_module, pickle_load_args):
    try:
        start = fp.tell()
        size = fp.seek(0, io.SEEK_END) - start
        fp.seek(start)
        # a sub-view so that offsets inside the archive start at 0 even mid-file
        zf = zipfile.ZipFile(fp if start == 0 else io.BytesIO(fp.read()))
    except SerializationError:
        raise
    except Exception as e:  # zipfile raises many types on malformed input
        raise _bad(f"not a valid ember archive ({type(e).__name__}: {e})") from None
    with zf:
        try:
            reader = _Reader(zf, zf.fp, size, path if start == 0 else None, mmap, map_location)
            if "pickle" in reader.manifest:
                if reader.manifest["pickle"] != _PICKLE:
                    raise _bad("manifest names an unexpected pickle entry")
                data = reader.read_entry(_PICKLE)
            elif "root" in reader.manifest:
                return reader.decode(reader.manifest["root"])
            else:
                raise _bad("manifest has neither 'root' nor 'pickle'")
        except (SerializationError, UnpicklingError):
            raise
        except Exception as e:  # zipfile / struct / OS errors on corrupted data
            raise _bad(f"corrupted archive ({type(e).__name__}: {e})") from None
        return _unpickle(data, reader, weights_only, pickle_module, **pickle_load_args)
