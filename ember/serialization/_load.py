"""``ember.load``: find the file's format, then read it with the restricted unpickler.

NOTE [Formats ember.load reads]
* a ZIP archive with ``manifest.json``: ember's earlier format (see NOTE [ember archive v1]);
* any other ZIP archive: torch's zip format (see NOTE [torch's formats]);
* a pickle of torch's magic number followed by more data: torch's legacy format;
* a plain pickle that is the whole file (not a torch format; read for convenience).
Anything else raises ``SerializationError`` naming what the file looks like (NumPy ``.npy``,
safetensors, a tar archive from torch < 0.4, gzip, HDF5...) -- never a value.
"""
from __future__ import annotations

import contextlib
import importlib
import io
import os
import pickle
import struct
import warnings

from .._backend import check_device
from .._backend import device as _device
from . import _allowlist, _ember_v1, _torch_formats
from ._archive import Archive, open_zip
from ._errors import SerializationError, UnsafeLoadWarning, bad, short
from ._unpickler import Unpickler

_TRUE = ("1", "y", "yes", "true")


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "0").strip().lower() in _TRUE


def resolve_weights_only(weights_only, pickle_module=None):
    """torch's rules: TORCH_FORCE_WEIGHTS_ONLY_LOAD wins; TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD
    applies only when ``weights_only`` was not passed; otherwise the default is True, unless a
    ``pickle_module`` was passed (then False, as in torch)."""
    force, force_no = _env_flag("TORCH_FORCE_WEIGHTS_ONLY_LOAD"), \
        _env_flag("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD")
    if force and force_no:
        raise RuntimeError("Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or "
                           "`TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` should be set, but both were set.")
    if force:
        return True
    if weights_only is None:
        if force_no:
            warnings.warn("Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, "
                          "since the `weights_only` argument was not explicitly passed to "
                          "`ember.load`, forcing weights_only=False.", stacklevel=3)
            return False
        return pickle_module is None
    return bool(weights_only)


# ---------------------------------------------------------------------------------------------
# map_location


def check_map_location(map_location) -> None:
    if map_location is None or callable(map_location):
        return
    if isinstance(map_location, dict):
        for target in map_location.values():
            check_device(target)
        return
    check_device(map_location)


def make_restore(map_location):
    """``restore(bytes, location) -> bytes`` placing one storage as torch's map_location does."""
    from .._tensor import UntypedStorage

    def restore(buf, location: str):
        if callable(map_location) and not isinstance(map_location, dict):
            result = map_location(UntypedStorage(buf), location)
            if isinstance(result, UntypedStorage):
                return result._root.reshape(-1).view("uint8")
            if result is not None:
                raise bad(f"map_location returned {type(result).__name__}, not a storage")
        target = location
        if isinstance(map_location, dict):
            target = map_location.get(location, location)
        elif map_location is not None and not callable(map_location):
            target = map_location
        _restore_on(target)
        return buf

    return restore


def _restore_on(target) -> None:
    try:
        dev = target if isinstance(target, _device) else _device(target)
    except (TypeError, RuntimeError) as e:
        raise bad(f"a storage is saved on an unknown device {short(target)} ({e})") from None
    if dev.type != "cpu":
        raise bad(f"Attempting to deserialize object on a {dev.type.upper()} device but ember "
                  f"has no {dev.type} backend on this machine. If you are running on a "
                  "CPU-only machine, please use ember.load with map_location="
                  "torch.device('cpu') to map your storages to the CPU.")


# ---------------------------------------------------------------------------------------------
# unpicklers


class _Strategy:
    """How the file's object pickles are run: restricted (weights_only) or full pickle."""

    def __init__(self, weights_only: bool, pickle_module, pickle_load_args: dict):
        self.weights_only, self.pickle_module = weights_only, pickle_module
        self.encoding = pickle_load_args.get("encoding", "ASCII")
        self.errors = pickle_load_args.get("errors", "strict")
        self.pickle_load_args = pickle_load_args

    def run(self, data: bytes, pos: int, persistent_load):
        if self.weights_only:
            return Unpickler(data, names=_allowlist.names(), trusted=_allowlist.user_globals(),
                             persistent_load=persistent_load, encoding=self.encoding,
                             errors=self.errors).load(pos)
        return _full_unpickle(data, pos, persistent_load, self.pickle_module,
                              self.pickle_load_args)

    def dry_run(self, data: bytes, pos: int, persistent_load, value: bool = False):
        u = Unpickler(data, names=_allowlist.names(), persistent_load=persistent_load,
                      encoding=self.encoding, errors=self.errors, dry=not value)
        obj, end = u.load(pos)
        return (obj, end) if value else end


def _unrestricted_unpickler(base, persistent_load):
    """A full unpickler (``weights_only=False``) that maps torch's names to ember's."""
    table = _allowlist.names()

    class _Unpickler(base):
        def find_class(self, module, name):
            obj = table.get((module, name))
            if obj is not None:
                obj = _allowlist.resolve_missing(obj)
                return getattr(obj, "fn", getattr(obj, "cls", obj))
            if module == "torch" or module.startswith("torch."):
                return _ember_counterpart(module, name)
            return super().find_class(module, name)

        def persistent_load(self, pid):
            if persistent_load is None:
                raise bad("the pickle refers to tensor storage, but this file holds none")
            return persistent_load(pid)

    return _Unpickler


def _ember_counterpart(module: str, name: str):
    target = "ember" + module[len("torch"):]
    try:
        obj = importlib.import_module(target)
        for part in name.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        raise bad(f"the file names torch's {module}.{name}, which ember does not have") from None
    return obj


def _full_unpickle(data, pos, persistent_load, pickle_module, load_args):
    base = pickle_module.Unpickler if pickle_module is not None else pickle.Unpickler
    stream = io.BytesIO(data)
    stream.seek(pos)
    unpickler = _unrestricted_unpickler(base, persistent_load)(stream, **load_args)
    try:
        return unpickler.load(), stream.tell()
    except SerializationError:
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, KeyError, IndexError,
            AttributeError, struct.error) as e:
        raise bad(f"malformed pickle data ({type(e).__name__}: {e})") from None


# ---------------------------------------------------------------------------------------------
# the entry point


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Load an object saved with ``ember.save`` or ``torch.save`` from a path or a file object.

    Args:
        f: a path (str / PathLike) or a readable binary file object.
        map_location: ``None``, ``'cpu'``, an ``ember.device``, a dict of location -> location,
            or ``fn(storage, location)``; every tensor loads on the CPU (other devices raise).
        pickle_module: for ``weights_only=False`` (passing one makes that the default, as in torch).
        weights_only (bool): refuse to run code from the file (the default, as in torch 2.6+;
            the environment variables TORCH_FORCE_WEIGHTS_ONLY_LOAD and
            TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD act as in torch). ``False`` runs the full
            unpickler, with an ``UnsafeLoadWarning``.
        mmap (bool): map storages from the file (a path to a zip archive) instead of reading.

    Raises:
        SerializationError: the file is in no known format, damaged, or refused.
        UnpicklingError: (a SerializationError) ``weights_only=True`` refused a global or an
            operation the file's pickle asked for.
    """
    weights_only = resolve_weights_only(weights_only, pickle_module)
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                           "specified; pass weights_only=False to use a custom pickle_module.")
    check_map_location(map_location)
    path = os.fspath(f) if isinstance(f, (str, os.PathLike)) else None
    if mmap and path is None:
        raise ValueError("f must be a file path in order to use the mmap argument")
    if not weights_only:
        warnings.warn("ember.load(weights_only=False) runs the full pickle unpickler, which can "
                      "execute arbitrary code from the file; only use it on files you trust.",
                      UnsafeLoadWarning, stacklevel=2)
    strategy = _Strategy(weights_only, pickle_module, pickle_load_args)
    restore = make_restore(map_location)
    with contextlib.ExitStack() as stack:
        if path is not None:
            fp = stack.enter_context(open(path, "rb"))
        else:
            fp = f if _seekable(f) else io.BytesIO(f.read())
        start = fp.tell()
        magic = fp.read(4)
        fp.seek(start)
        if magic == b"PK\x03\x04":
            return _load_zip(fp, start, path, bool(mmap), strategy, restore)
        if mmap:
            raise bad("mmap=True needs a zip archive (torch.save's default format or "
                      "ember.save's); this file is not one")
        return _load_stream(fp.read(), strategy, restore)


def _seekable(f) -> bool:
    try:
        return bool(f.seekable())
    except (AttributeError, OSError, ValueError):
        return False


def _load_zip(fp, start, path, mmap, strategy, restore):
    size = fp.seek(0, io.SEEK_END) - start
    fp.seek(start)
    # a sub-view so that offsets inside the archive start at 0 even mid-file
    zf = open_zip(fp if start == 0 else io.BytesIO(fp.read()), size)
    with zf:
        try:
            _torch_formats.refuse_torchscript(zf.namelist())
            archive = Archive(zf, zf.fp, size, path if start == 0 else None, mmap)
            if _ember_v1.MANIFEST in archive.infos:
                reader = _ember_v1.Reader(archive, restore)
                data = reader.pickle_bytes()
                if data is None:
                    return reader.decode(reader.manifest["root"])
                obj, end = strategy.run(data, 0, reader.persistent_load)
                if end != len(data):
                    raise bad(f"data.pkl has {len(data) - end} bytes after its pickle")
                return obj
            return _torch_formats.load_zip(archive, strategy.run, restore)
        except SerializationError:
            raise
        except (OSError, EOFError, ValueError) as e:  # zipfile / OS errors on corrupted data
            raise bad(f"corrupted archive ({type(e).__name__}: {e})") from None


def _load_stream(data: bytes, strategy, restore):
    if not data:
        raise bad("the file is empty")
    _refuse_known_formats(data)
    # every torch format and ember's plain pickles start with a pickle; read it restricted
    first, end = strategy.run(data, 0, None)
    if end == len(data):
        if type(first) is int and first == _torch_formats.LEGACY_MAGIC:
            raise bad("a legacy torch file truncated after its magic number")
        return first  # a plain pickle
    if type(first) is not int or first != _torch_formats.LEGACY_MAGIC:
        raise bad(f"a pickle followed by {len(data) - end} more bytes, which is no known "
                  "format (a legacy torch file starts with a pickle of the magic number "
                  f"{_torch_formats.LEGACY_MAGIC:#x}; this one starts with a "
                  f"{type(first).__name__})")
    protocol, end = strategy.dry_run(data, end, None, value=True)
    if protocol != _torch_formats.LEGACY_PROTOCOL:
        raise bad(f"a legacy torch file with protocol version {short(protocol)}; ember reads "
                  f"version {_torch_formats.LEGACY_PROTOCOL}")
    sys_info, end = strategy.dry_run(data, end, None, value=True)
    return _torch_formats.load_legacy(data, end, sys_info, strategy.run, strategy.dry_run,
                                      restore)


_SIGNATURES = (
    (b"\x93NUMPY", "a NumPy .npy file; read it with numpy.load"),
    (b"\x89HDF\r\n\x1a\n", "an HDF5 file"),
    (b"\x1f\x8b", "a gzip-compressed file; decompress it first"),
    (b"BZh", "a bzip2-compressed file; decompress it first"),
    (b"\xfd7zXZ\x00", "an xz-compressed file; decompress it first"),
    (b"\x28\xb5\x2f\xfd", "a zstd-compressed file; decompress it first"),
    (b"PK\x05\x06", "an empty ZIP archive"),
)


def _refuse_known_formats(data: bytes) -> None:
    for sig, what in _SIGNATURES:
        if data.startswith(sig):
            raise bad(f"the file is {what}, not a checkpoint")
    if len(data) > 262 and data[257:262] == b"ustar":
        raise bad("the file is a tar archive (torch's format before 0.4), which ember does "
                  "not read; load and re-save it with torch")
    if len(data) >= 10 and data[8:10] in (b'{"', b"{'"):
        n = int.from_bytes(data[:8], "little")
        if 0 < n <= len(data) - 8:
            raise bad("the file is a safetensors file; read it with "
                      "ember.utils.safetensors.load_file")
    if data[0] != 0x80 and data[:1] not in b"(]}cl)NIFSVJKX":
        raise bad(f"the file is in no known format: it is neither a ZIP archive nor a pickle "
                  f"(it starts with {data[:16]!r})")
