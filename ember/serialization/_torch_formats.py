"""Reading torch's two checkpoint formats: the zip layout (torch >= 1.6) and the legacy one.

NOTE [torch's formats]
Zip: every record lives under one root folder, whatever it is called (``archive/`` for file
objects, the file's stem for paths): ``<root>/data.pkl`` is the object's pickle, whose tensors
name storages by persistent ids ``("storage", <storage class>, key, location, numel)``, and
``<root>/data/<key>`` holds each storage's bytes; ``<root>/byteorder`` says ``little`` or
``big`` (absent: as ``set_default_load_endianness`` says, native unless set). ``numel`` counts
elements of the storage class's dtype (bytes for ``UntypedStorage``, whose tensors carry their
dtype in ``_rebuild_tensor_v3``).

Legacy: five things in a row in one stream: a pickle of the magic number
``0x1950a86a20f9469cfc6c``, one of the protocol version 1001, one of a system-info dict
(``little_endian``, ``type_sizes``), the object's pickle (persistent ids with a sixth field,
``view_metadata``: ``None`` or ``(view_key, offset, size)`` for a storage view), a pickle of the
list of storage keys, then per key the storage's element count as a little-endian int64 and its
bytes. Only the object's pickle says which dtype (so how many bytes) each storage has, so the
object's pickle is read twice: a dry run that only collects the storages' records, then the real
one once their bytes are read. Whole modules saved in this format also carry persistent ids
``("module", cls, source_file, source)``; the class is used as is and the source ignored.
"""
from __future__ import annotations

import re
import sys

import numpy as np

from ._allowlist import new_storage
from ._archive import Archive
from ._config import default_byteorder
from ._errors import bad, short
from ._tensors import MAX_DIM, Storage, StorageType

LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
LEGACY_PROTOCOL = 1001
_KEY_RE = re.compile(r"[A-Za-z0-9_.\-]{1,100}")


def _check_pid(pid, length: int):
    if not (type(pid) is tuple and len(pid) == length and pid[0] == "storage"):
        raise bad(f"unknown persistent id in pickle data: {short(pid)}")
    _, stype, key, location, numel = pid[:5]
    if not isinstance(stype, StorageType):
        raise bad(f"a storage record names {short(stype)}, not a torch storage class")
    if type(key) is not str or not _KEY_RE.fullmatch(key):
        raise bad(f"malformed storage key {short(key)}")
    if type(location) is not str:
        raise bad(f"malformed storage location {short(location)}")
    if type(numel) is not int or not 0 <= numel < MAX_DIM:
        raise bad(f"malformed storage size {short(numel)}")
    return stype, key, location, numel


# ---------------------------------------------------------------------------------------------
# zip


def zip_root(archive: Archive) -> str:
    """The archive's root folder; refuses archives that are not torch checkpoints."""
    names = list(archive.infos)
    roots = {n.split("/", 1)[0] for n in names}
    if len(roots) != 1 or any("/" not in n for n in names):
        listed = ", ".join(sorted(names)[:5])
        raise bad(f"a ZIP archive that is not a torch or ember checkpoint (entries: {listed}); "
                  "torch's archives keep every record under one folder holding data.pkl")
    root = roots.pop()
    if f"{root}/data.pkl" not in archive.infos:
        raise bad(f"a ZIP archive without {root}/data.pkl, so not a torch checkpoint")
    return root


def refuse_torchscript(names: list[str]) -> None:
    if any(n.endswith("/constants.pkl") or "/code/" in n for n in names):
        raise bad("a TorchScript archive (written by torch.jit.save), not a torch.save "
                  "checkpoint; it holds code, which ember.load does not run (did you mean "
                  "torch.jit.load?)")


def load_zip(archive: Archive, unpickle, restore):
    root = zip_root(archive)
    order = archive.read(f"{root}/byteorder").decode("ascii", "replace") \
        if f"{root}/byteorder" in archive.infos else default_byteorder(sys.byteorder)
    if order not in ("little", "big"):
        raise bad(f"unknown byte order {short(order)} in {root}/byteorder")
    storages: dict[str, Storage] = {}

    def persistent_load(pid):
        stype, key, location, numel = _check_pid(pid, 5)
        st = new_storage(None, stype, key, order == "big")  # raises for dtypes ember lacks
        item = 1 if st.dtype is None else st.dtype.itemsize
        if key not in storages:
            buf = archive.bytes_of(f"{root}/data/{key}", numel * item)
            storages[key] = Storage(restore(buf, location), st.dtype, key, order == "big")
        elif storages[key].buf.nbytes != numel * item:
            raise bad(f"storage {short(key)} is declared with two different sizes")
        return storages[key].typed(st.dtype)

    data = archive.read(f"{root}/data.pkl")
    obj, end = unpickle(data, 0, persistent_load)
    if end != len(data):
        raise bad(f"{root}/data.pkl has {len(data) - end} bytes after its pickle")
    return obj


# ---------------------------------------------------------------------------------------------
# legacy


def load_legacy(data: bytes, start: int, sys_info, unpickle, dry_run, restore):
    """The object of a legacy file whose header pickles end at ``start``."""
    if not (type(sys_info) is dict and type(sys_info.get("little_endian")) is bool):
        raise bad("a legacy torch file with a malformed system-info record")
    big = not sys_info["little_endian"]
    records: dict[str, tuple] = {}

    def collect(pid):
        if _is_module_record(pid):
            return pid[1]
        stype, key, location, numel = _check_pid(pid, 6)
        st = new_storage(None, stype, key)
        if key in records and records[key][1] != numel:
            raise bad(f"storage {short(key)} is declared with two different sizes")
        records[key] = (st.dtype, numel, location)
        view = pid[5]
        if view is not None:
            _check_view(view, numel)
        return st

    end = dry_run(data, start, collect)
    keys, pos = dry_run(data, end, None, value=True)
    if type(keys) is not list or sorted(keys) != sorted(records) or len(set(keys)) != len(keys):
        raise bad("a legacy torch file whose storage list does not match its object")
    storages: dict[str, Storage] = {}
    for key in keys:
        dtype, numel, location = records[key]
        if pos + 8 > len(data):
            raise bad(f"a legacy torch file truncated before storage {short(key)}")
        count = int.from_bytes(data[pos:pos + 8], "little", signed=True)
        item = 1 if dtype is None else dtype.itemsize
        nbytes = count * item
        if count != numel or pos + 8 + nbytes > len(data):
            raise bad(f"a legacy torch file whose storage {short(key)} declares {count} elements "
                      f"({numel} expected, {len(data) - pos - 8} bytes left)")
        buf = np.frombuffer(data, np.uint8, nbytes, pos + 8).copy()
        storages[key] = Storage(restore(buf, location), dtype, key, big)
        pos += 8 + nbytes
    if pos != len(data):
        raise bad(f"a legacy torch file with {len(data) - pos} unexpected bytes at its end")

    def persistent_load(pid):
        if _is_module_record(pid):
            return pid[1]
        stype, key, location, numel = _check_pid(pid, 6)
        st = new_storage(None, stype, key)
        if key not in storages:
            raise bad(f"unknown storage {short(key)}")
        root = storages[key].typed(st.dtype)
        view = pid[5]
        if view is None:
            return root
        view_key, offset, size = view
        item = 1 if st.dtype is None else st.dtype.itemsize
        part = Storage(root.buf[offset * item:(offset + size) * item], st.dtype, view_key, big)
        part.vc = root.vc
        return part

    obj, _ = unpickle(data, start, persistent_load)
    return obj


def _is_module_record(pid) -> bool:
    # legacy files record each whole nn.Module's class with its source code,
    # ("module", cls, source_file, source); the class was already resolved (or refused) as a
    # global, and the source is only for torch's SourceChangeWarning
    return type(pid) is tuple and len(pid) == 4 and pid[0] == "module"


def _check_view(view, numel: int) -> None:
    if not (type(view) is tuple and len(view) == 3 and type(view[0]) is str
            and all(type(v) is int and v >= 0 for v in view[1:]) and view[1] + view[2] <= numel):
        raise bad(f"malformed storage view record {short(view)}")
