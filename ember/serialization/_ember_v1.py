"""Reading ember's earlier archive format (``manifest.json``), which ember no longer writes.

NOTE [ember archive v1]
A ZIP whose entries are ``manifest.json`` (``{"format": "ember.save", "version": 1, "byteorder":
"little", "storages": {"<sid>": {"file": "data/<sid>.bin", "nbytes": n}}, "root": <node>}`` or
``"pickle": "data.pkl"`` instead of ``"root"``), ``data/<sid>.bin`` (raw little-endian bytes of
one storage) and optionally ``data.pkl`` (a pickle whose tensors are persistent ids
``("ember.tensor", <tensor node>, cls)``). A node is a JSON null, bool, int or string, or an
object tagged by ``"t"``: ``float``, ``list``/``tuple``/``set``/``frozenset``,
``dict``/``odict``/``counter`` (``"attrs"``: instance attributes), ``bytes`` (base64),
``dtype``, ``size``, ``device``, ``tensor`` (``id``, ``storage``, ``dtype``, ``shape``,
``stride``, ``offset``, ``requires_grad``, ``param``) and ``ref`` (another use of a tensor id).
"""
from __future__ import annotations

import base64
import collections
import json
import math
import re
import sys

import numpy as np

from .. import _dtype as D
from .._backend import device as _device
from .._size import Size
from .._tensor import Tensor, _make
from ._archive import Archive
from ._errors import SerializationError, bad
from ._tensors import MAX_DIM, MAX_NDIM, _overlaps, parameter_class, retype

FORMAT = "ember.save"
VERSION = 1
MANIFEST = "manifest.json"
PICKLE = "data.pkl"
_ENTRY_RE = re.compile(r"(manifest\.json|data\.pkl|data/(0|[1-9][0-9]{0,8})\.bin)")
_MAX_DEPTH = 200


class Reader:
    """Reads one validated v1 archive: storages on demand, tensors from manifest records."""

    def __init__(self, archive: Archive, restore):
        self.archive, self.restore = archive, restore
        for name in archive.infos:
            if not _ENTRY_RE.fullmatch(name):
                raise bad(f"unexpected archive entry {name!r} (an ember archive only holds "
                          "manifest.json, data.pkl and data/<n>.bin)")
        try:
            manifest = json.loads(archive.read(MANIFEST).decode("utf-8"),
                                  parse_constant=_reject_constant)
        except (ValueError, RecursionError) as e:
            raise bad(f"{MANIFEST} is not valid JSON ({e})") from None
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise bad("not an ember archive (manifest.json has no 'format': 'ember.save')")
        if manifest.get("version") != VERSION:
            raise bad(f"unsupported archive version {manifest.get('version')!r}; this ember "
                      f"reads version {VERSION}. Upgrade ember to read it.")
        if manifest.get("byteorder", "little") != "little":
            raise bad("unsupported byte order")
        self.manifest = manifest
        storages = manifest.get("storages")
        if not isinstance(storages, dict):
            raise bad("manifest 'storages' must be a mapping of storage ids")
        self.storage_meta = storages
        self._storages: dict[str, tuple[np.ndarray, list]] = {}
        self._tensors: dict[int, Tensor] = {}

    def pickle_bytes(self) -> bytes | None:
        """data.pkl's bytes when the archive stores a pickle, else None (a manifest tree)."""
        if "pickle" in self.manifest:
            if self.manifest["pickle"] != PICKLE:
                raise bad("manifest names an unexpected pickle entry")
            return self.archive.read(PICKLE)
        if "root" not in self.manifest:
            raise bad("manifest has neither 'root' nor 'pickle'")
        return None

    def persistent_load(self, pid):
        if not (type(pid) is tuple and len(pid) == 3 and pid[0] == "ember.tensor"):
            raise bad(f"unknown persistent id in pickle data: {pid!r:.80}")
        from ._allowlist import ClassToken
        t = self.tensor(pid[1])
        cls = pid[2].cls if isinstance(pid[2], ClassToken) else pid[2]
        return t if cls is None else retype(t, cls)

    # -- storages and tensors
    def storage(self, sid) -> tuple[np.ndarray, list]:
        key = str(sid) if type(sid) is int else sid
        if key in self._storages:
            return self._storages[key]
        meta = self.storage_meta.get(key) if isinstance(key, str) else None
        if not isinstance(meta, dict):
            raise bad(f"tensor refers to unknown storage {sid!r}")
        name, nbytes = meta.get("file"), meta.get("nbytes")
        if not isinstance(name, str) or name not in self.archive.infos \
                or not name.startswith("data/"):
            raise bad(f"storage {key!r} names a missing entry {name!r}")
        if type(nbytes) is not int:
            raise bad(f"storage {key!r} declares {nbytes!r} bytes")
        arr = self.restore(self.archive.bytes_of(name, nbytes), "cpu")
        self._storages[key] = (arr, [0])
        return self._storages[key]

    def tensor(self, meta) -> Tensor:
        if not isinstance(meta, dict):
            raise bad("malformed tensor record")
        tid = meta.get("id")
        if type(tid) is not int:
            raise bad("tensor record without an integer id")
        if len(meta) == 1:
            if tid not in self._tensors:
                raise bad(f"reference to unknown tensor {tid}")
            return self._tensors[tid]
        if tid in self._tensors:
            raise bad(f"tensor id {tid} defined twice")
        t = self._build(meta)
        self._tensors[tid] = t
        return t

    def _build(self, meta: dict) -> Tensor:
        dt = D._NAMES.get(meta.get("dtype")) if isinstance(meta.get("dtype"), str) else None
        if dt is None or dt.np is None or meta.get("dtype") != dt.name:
            raise bad(f"unknown tensor dtype {meta.get('dtype')!r}")
        shape, stride, offset = meta.get("shape"), meta.get("stride"), meta.get("offset")
        if not (_int_list(shape, 0) and _int_list(stride, 0) and len(shape) == len(stride)
                and type(offset) is int and 0 <= offset < MAX_DIM):
            raise bad(f"malformed tensor geometry: shape={shape!r}, stride={stride!r}, "
                      f"offset={offset!r} (negative strides are refused)")
        item = dt.itemsize
        if math.prod(max(n, 1) for n in shape) * item >= MAX_DIM:
            raise bad(f"tensor shape {shape} is too large")
        storage, vc = self.storage(meta.get("storage"))
        numel = math.prod(shape)
        end = (offset + sum((n - 1) * s for n, s in zip(shape, stride, strict=True)) + 1) * item \
            if numel else offset * item
        if end > storage.nbytes:
            raise bad(f"tensor (shape {shape}, stride {stride}, offset {offset}, {dt.name}) "
                      f"reads bytes up to {end}, outside its storage of {storage.nbytes} bytes")
        moving = [(n, s) for n, s in zip(shape, stride, strict=True) if s != 0]
        if _overlaps([n for n, _ in moving], [s for _, s in moving]):
            raise bad(f"tensor strides {stride} make elements of shape {shape} overlap")
        np_dt = dt.np.newbyteorder("<") if sys.byteorder != "little" else dt.np
        if numel == 0:
            arr = np.empty(shape, dtype=np_dt)
        else:
            arr = np.ndarray(shape, dtype=np_dt, buffer=storage, offset=offset * item,
                             strides=[s * item for s in stride])
        if sys.byteorder != "little":  # pragma: no cover - big-endian hosts copy
            arr = arr.astype(dt.np)
        if any(s == 0 and n > 1 for n, s in zip(shape, stride, strict=True)):
            arr.flags.writeable = False  # a broadcast view: writes would alias (as in ember)
        t = _make(arr, vc)
        rg = meta.get("requires_grad", False)
        if type(rg) is not bool or (rg and not dt.is_floating_point):
            raise bad(f"invalid requires_grad {rg!r} for a {dt.name} tensor")
        if meta.get("param"):
            return parameter_class()(t, requires_grad=rg)
        t._requires_grad = rg
        return t

    # -- the manifest tree
    def decode(self, node, depth: int = 0):
        if depth > _MAX_DEPTH:
            raise bad("the object tree is nested too deeply")
        if node is None or type(node) in (bool, int, str):
            return node
        if type(node) is not dict:
            raise bad(f"malformed manifest node of type {type(node).__name__}")
        kind, v = node.get("t"), node.get("v")
        try:
            return self._decode_tagged(node, kind, v, depth)
        except SerializationError:
            raise
        except (TypeError, ValueError, RuntimeError) as e:  # unhashable keys, bad base64, ...
            raise bad(f"malformed {kind!r} node ({e})") from None

    def _decode_tagged(self, node, kind, v, depth):
        if kind == "float" and (type(v) in (int, float) or v in ("inf", "-inf", "nan")):
            return float(v)
        if kind in ("list", "tuple", "set", "frozenset") and type(v) is list:
            items = [self.decode(x, depth + 1) for x in v]
            return {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[kind](items)
        if kind in ("dict", "odict", "counter") and type(v) is list:
            cls = {"dict": dict, "odict": collections.OrderedDict,
                   "counter": collections.Counter}[kind]
            out = cls()
            for pair in v:
                if type(pair) is not list or len(pair) != 2:
                    raise bad("malformed dict item")
                out[self.decode(pair[0], depth + 1)] = self.decode(pair[1], depth + 1)
            if "attrs" in node and cls is not dict:
                attrs = self.decode(node["attrs"], depth + 1)
                if type(attrs) is not dict or not all(
                        type(k) is str and not k.startswith("__") for k in attrs):
                    raise bad("malformed dict attributes")
                for name, value in attrs.items():
                    setattr(out, name, value)
            return out
        if kind == "bytes" and type(v) is str:
            return base64.b64decode(v.encode("ascii"), validate=True)
        if kind == "dtype" and type(v) is str and v in D._NAMES:
            return D._NAMES[v]
        if kind == "size" and _int_list(v, 0):
            return Size(v)
        if kind == "device" and type(v) is str:
            return _device(v)
        if kind in ("tensor", "ref"):
            return self.tensor({k: x for k, x in node.items() if k != "t"})
        raise bad(f"malformed manifest node with tag {kind!r}")


def _reject_constant(name):
    raise ValueError(f"non-standard JSON constant {name}")


def _int_list(v, lowest: int) -> bool:
    return (type(v) is list and len(v) <= MAX_NDIM
            and all(type(x) is int and lowest <= x < MAX_DIM for x in v))
