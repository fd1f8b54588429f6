"""Read and write the safetensors format (Hugging Face), implemented from its specification.

NOTE [safetensors layout]
``[8 bytes: N, little-endian u64][N bytes: JSON header][data]``. The header maps each tensor
name to ``{"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}`` (offsets into the data
section, relative to its start) and may hold ``"__metadata__": {str: str}``. Tensor data is
contiguous, row-major, little-endian; the tensors' byte ranges tile the data section exactly
(no gaps, no overlap). The header is padded with spaces to a multiple of 8 bytes.

Loading validates everything before allocating: the header length against the file size and a
100 MB cap, the JSON shape of every entry, dtype names, shapes (non-negative ints), that
``end - begin == numel * itemsize`` (Python ints: no overflow), and that the ranges tile the data.
A malformed file raises ``SafetensorError`` (a ``ValueError``); nothing is ever executed.

Example:
    >>> import ember
    >>> from ember.utils import safetensors
    >>> blob = safetensors.save({"w": ember.ones(2, 3)}, metadata={"note": "demo"})
    >>> safetensors.load(blob)["w"].shape
    ember.Size([2, 3])
"""
from __future__ import annotations

import json
import math
import os
import struct
import sys

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor, _make

__all__ = ["save", "load", "save_file", "load_file", "SafetensorError"]

_MAX_HEADER = 100 * 1024 * 1024  # the reference implementation's limit
_MAX_NDIM = 64

_TO_NAME = {D.float64: "F64", D.float32: "F32", D.float16: "F16", D.bfloat16: "BF16",
            D.int64: "I64", D.int32: "I32", D.int16: "I16", D.int8: "I8", D.uint8: "U8",
            D.bool_: "BOOL"}
_FROM_NAME = {v: k for k, v in _TO_NAME.items()}


class SafetensorError(ValueError):
    """A safetensors file or buffer that is malformed, truncated or lies about its contents."""


def _bad(msg: str) -> SafetensorError:
    return SafetensorError(f"safetensors: {msg}")


# ---------------------------------------------------------------------------------------------
# writing


def _prepare(tensors: dict, metadata) -> tuple[bytes, list]:
    """The padded header and the (name, contiguous little-endian array) list to write."""
    if not isinstance(tensors, dict):
        raise TypeError(f"safetensors.save: expected a dict of name -> Tensor, got "
                        f"{type(tensors).__name__}")
    if metadata is not None:
        if not isinstance(metadata, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
            raise TypeError("safetensors.save: metadata must be a dict of str -> str")
    items = []
    for name, t in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"safetensors.save: tensor names must be str, got {name!r}")
        if name == "__metadata__":
            raise ValueError("safetensors.save: '__metadata__' is reserved and cannot name a "
                             "tensor")
        if not isinstance(t, Tensor):
            raise TypeError(f"safetensors.save: {name!r} is a {type(t).__name__}, expected a "
                            "Tensor")
        if t.dtype not in _TO_NAME:
            raise ValueError(f"safetensors.save: {name!r} has unsupported dtype {t.dtype}")
        arr = np.array(t._data, dtype=t._data.dtype.newbyteorder("<"), order="C")
        items.append((name, t.dtype, arr))
    # largest itemsize first keeps every tensor aligned to its itemsize; then by name
    items.sort(key=lambda x: (-x[1].itemsize, x[0]))
    header: dict = {}
    if metadata is not None:
        header["__metadata__"] = dict(metadata)
    offset = 0
    for name, dt, arr in items:
        header[name] = {"dtype": _TO_NAME[dt], "shape": list(arr.shape),
                        "data_offsets": [offset, offset + arr.nbytes]}
        offset += arr.nbytes
    raw = json.dumps(header, separators=(",", ":")).encode("utf-8")
    raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw, [(n, a) for n, _, a in items]


def save(tensors: dict, metadata: dict | None = None) -> bytes:
    """Serialize a dict of tensors to safetensors bytes."""
    head, items = _prepare(tensors, metadata)
    return head + b"".join(a.tobytes() for _, a in items)


def save_file(tensors: dict, filename, metadata: dict | None = None) -> None:
    """Write a dict of tensors to ``filename`` in safetensors format (atomically)."""
    from ..serialization import _atomic_write
    head, items = _prepare(tensors, metadata)

    def write(fh):
        fh.write(head)
        for _, arr in items:
            fh.write(memoryview(arr.reshape(-1).view(np.uint8)))

    _atomic_write(filename, write)


# ---------------------------------------------------------------------------------------------
# reading


def _parse_header(head: bytes, total: int) -> tuple[dict, list]:
    """Validated (metadata, [(name, dtype, shape, begin, end)]) from the header bytes."""
    try:
        header = json.loads(head.decode("utf-8"), parse_constant=_reject)
    except (ValueError, RecursionError) as e:
        raise _bad(f"the header is not valid JSON ({e})") from None
    if not isinstance(header, dict):
        raise _bad("the header must be a JSON object")
    metadata = header.pop("__metadata__", None)
    if metadata is not None and not (isinstance(metadata, dict) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())):
        raise _bad("__metadata__ must map str to str")
    entries = []
    for name, info in header.items():
        if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
            raise _bad(f"entry {name!r} must have exactly dtype, shape and data_offsets")
        dt = _FROM_NAME.get(info["dtype"]) if isinstance(info["dtype"], str) else None
        if dt is None:
            raise _bad(f"entry {name!r} has unsupported dtype {info['dtype']!r}")
        shape, offsets = info["shape"], info["data_offsets"]
        if not (isinstance(shape, list) and len(shape) <= _MAX_NDIM
                and all(type(n) is int and n >= 0 for n in shape)):
            raise _bad(f"entry {name!r} has an invalid shape {shape!r}")
        if not (isinstance(offsets, list) and len(offsets) == 2
                and all(type(o) is int for o in offsets) and 0 <= offsets[0] <= offsets[1]):
            raise _bad(f"entry {name!r} has invalid data_offsets {offsets!r}")
        if math.prod(shape) * dt.itemsize != offsets[1] - offsets[0]:
            raise _bad(f"entry {name!r}: shape {shape} of {info['dtype']} needs "
                       f"{math.prod(shape) * dt.itemsize} bytes but data_offsets span "
                       f"{offsets[1] - offsets[0]}")
        entries.append((name, dt, shape, offsets[0], offsets[1]))
    # the byte ranges must tile [0, total) exactly: sorted, each starting where the last ended
    pos = 0
    for name, _, _, begin, end in sorted(entries, key=lambda e: (e[3], e[4])):
        if begin != pos:
            raise _bad(f"entry {name!r} starts at {begin}, expected {pos} (ranges must tile "
                       "the data without gaps or overlap)")
        pos = end
    if pos != total:
        raise _bad(f"the tensors cover {pos} bytes of data but the data section holds {total}")
    return metadata, entries


def _reject(name):
    raise ValueError(f"non-standard JSON constant {name}")


def _read_header(read, size: int) -> tuple[dict, list, int]:
    if size < 8:
        raise _bad(f"too short for a safetensors header ({size} bytes)")
    (n,) = struct.unpack("<Q", read(8))
    if n > _MAX_HEADER or n > size - 8:
        raise _bad(f"header length {n} exceeds the {'limit' if n > _MAX_HEADER else 'file'}")
    head = read(n)
    if len(head) != n:
        raise _bad("truncated header")
    metadata, entries = _parse_header(head, size - 8 - n)
    return metadata, entries, 8 + n


def _tensor(dt, shape, buf) -> Tensor:
    arr = np.frombuffer(buf, dtype=dt.np.newbyteorder("<")).reshape(tuple(shape))
    return _make(arr.astype(dt.np, copy=True))


def load(data: bytes) -> dict:
    """Deserialize safetensors bytes into a dict of tensors (in file order of offsets)."""
    view = memoryview(data)
    pos = [0]

    def read(k):
        out = view[pos[0]:pos[0] + k].tobytes()
        pos[0] += k
        return out

    _, entries, start = _read_header(read, len(view))
    return {name: _tensor(dt, shape, view[start + b:start + e])
            for name, dt, shape, b, e in sorted(entries, key=lambda x: x[3])}


def load_file(filename, device: str = "cpu") -> dict:
    """Read a safetensors file into a dict of tensors (each in its own fresh buffer)."""
    if device not in ("cpu", None):
        from .._backend import check_device
        check_device(device)
    with open(os.fspath(filename), "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        _, entries, start = _read_header(fh.read, size)
        out = {}
        for name, dt, shape, b, e in sorted(entries, key=lambda x: x[3]):
            arr = np.empty(tuple(shape), dtype=dt.np)
            fh.seek(start + b)
            got = fh.readinto(memoryview(arr.reshape(-1).view(np.uint8)))
            if got != e - b:
                raise _bad(f"entry {name!r} is truncated")
            if sys.byteorder == "big":  # pragma: no cover - the file is little-endian
                arr.byteswap(inplace=True)
            out[name] = _make(arr)
    return out


def load_metadata(filename) -> dict | None:
    """The ``__metadata__`` dict of a safetensors file (None if it has none)."""
    with open(os.fspath(filename), "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        metadata, _, _ = _read_header(fh.read, size)
    return metadata
