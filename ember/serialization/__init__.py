"""``ember.save`` / ``ember.load``: torch's checkpoint formats, safe to load by default.

``ember.save`` writes torch's zip layout (NOTE [Writing torch's format] in ``_save.py``), so
``torch.load(path, weights_only=True)`` reads ember's checkpoints. ``ember.load`` reads torch's
zip and legacy formats (NOTE [torch's formats] in ``_torch_formats.py``), ember's earlier
archives (NOTE [ember archive v1] in ``_ember_v1.py``) and plain pickles (NOTE [Formats
ember.load reads] in ``_load.py``). With ``weights_only=True`` (the default) the file's pickle is
run by ember's own interpreter, which builds only allow-listed data and bounds the work a file
can cause (NOTE [Restricted unpickler] in ``_unpickler.py``, NOTE [Allow-list] in
``_allowlist.py``); archives are validated before anything is read (NOTE [Reading archives
safely] in ``_archive.py``) and tensor records before any view is made (NOTE [Tensor records] in
``_tensors.py``).

Package layout: ``_save`` (writing), ``_load`` (format detection, map_location, weights_only),
``_torch_formats`` / ``_ember_v1`` (readers), ``_unpickler`` (the restricted interpreter),
``_allowlist`` (names, data constructors, ``add_safe_globals``), ``_tensors`` (storages and
tensor records), ``_archive`` (ZIP reading/writing, atomic writes), ``_errors``.
"""
from __future__ import annotations

import pickle as _pickle
import sys
from collections.abc import Callable

from .. import types as _types
from .._backend import device as _device
from .._tensor import UntypedStorage as _UntypedStorage

from ._allowlist import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals
from ._archive import atomic_write as _atomic_write  # noqa: F401 - used by utils.safetensors
from ._config import (
    MAGIC_NUMBER,
    MAP_PRIVATE,
    MAP_SHARED,
    PROTOCOL_VERSION,
    STORAGE_KEY_SEPARATOR,
    LoadEndianness,
    SourceChangeWarning,
    default_restore_location,
    get_crc32_options,
    get_default_load_endianness,
    get_default_mmap_options,
    location_tag,
    set_crc32_options,
    set_default_load_endianness,
    set_default_mmap_options,
)
from ._errors import SerializationError, UnpicklingError, UnsafeLoadWarning
from ._load import load
from ._save import save

DEFAULT_PROTOCOL = 2

# The annotation aliases torch.serialization exports (libraries import them for their own
# signatures, e.g. Pyro's param store takes a ``MAP_LOCATION``), and the sizes of the legacy
# format's integers.
FileLike = _types.FileLike
MAP_LOCATION = (Callable[[_types.Storage, str], _types.Storage] | _device | str | dict[str, str]
                | None)
STORAGE = _types.Storage | _UntypedStorage
SHORT_SIZE, INT_SIZE, LONG_SIZE = 2, 4, 4
IS_WINDOWS = sys.platform == "win32"

__all__ = ["save", "load", "SerializationError", "UnpicklingError", "UnsafeLoadWarning",
           "add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals",
           "DEFAULT_PROTOCOL", "get_unsafe_globals_in_checkpoint", "LoadEndianness",
           "get_default_load_endianness", "set_default_load_endianness",
           "get_default_mmap_options", "set_default_mmap_options", "get_crc32_options",
           "set_crc32_options", "location_tag", "default_restore_location",
           "SourceChangeWarning", "MAGIC_NUMBER", "PROTOCOL_VERSION", "STORAGE_KEY_SEPARATOR",
           "MAP_PRIVATE", "MAP_SHARED", "FileLike", "MAP_LOCATION", "STORAGE"]


def get_unsafe_globals_in_checkpoint(f) -> list[str]:
    """The globals named by the checkpoint ``f`` that ``weights_only=True`` would refuse.

    Reads only the pickle's opcodes (nothing is built). Example: ``["numpy.core.multiarray.
    _reconstruct", "numpy.ndarray", "numpy.dtype"]`` for a checkpoint holding a NumPy array.
    """
    import io
    import os
    import pickletools
    import zipfile

    from ._allowlist import names, user_globals
    path = os.fspath(f) if isinstance(f, (str, os.PathLike)) else None
    data = open(path, "rb").read() if path is not None else f.read()
    if data[:4] == b"PK\x03\x04":
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            pkl = [n for n in zf.namelist() if n.endswith("data.pkl")]
            if not pkl:
                raise SerializationError("ember.load: the archive has no data.pkl")
            data = zf.read(pkl[0])
    allowed = set(names()) | set(user_globals())
    found: list[str] = []
    stream = io.BytesIO(data)
    strings: list[str] = []
    try:
        while stream.tell() < len(data):
            for op, arg, _ in pickletools.genops(stream):
                if op.name == "GLOBAL":
                    module, name = arg.split(" ", 1)
                    _note(module, name, allowed, found)
                elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
                    _note(strings[-2], strings[-1], allowed, found)
                elif isinstance(arg, str):
                    strings.append(arg)
    except (ValueError, _pickle.UnpicklingError):
        pass  # the storage bytes of a legacy file follow its pickles
    return found


def _note(module, name, allowed, found) -> None:
    import _compat_pickle
    if (module, name) in _compat_pickle.NAME_MAPPING:
        module, name = _compat_pickle.NAME_MAPPING[(module, name)]
    elif module in _compat_pickle.IMPORT_MAPPING:
        module = _compat_pickle.IMPORT_MAPPING[module]
    qual = f"{module}.{name}"
    if (module, name) not in allowed and qual not in found:
        found.append(qual)
