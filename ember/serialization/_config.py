"""Process-wide settings of ``torch.serialization`` and its small public helpers."""
from __future__ import annotations

import enum
import mmap as _mmap

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C   # the first pickle of a legacy file
PROTOCOL_VERSION = 1001                 # the second one
STORAGE_KEY_SEPARATOR = ","
MAP_PRIVATE = getattr(_mmap, "MAP_PRIVATE", 2)
MAP_SHARED = getattr(_mmap, "MAP_SHARED", 1)


class SourceChangeWarning(Warning):
    """torch warns with this when a whole module's saved source differs from the current one;
    ember never compares sources (see NOTE [torch's formats]), so it is never raised."""


class LoadEndianness(enum.Enum):
    """Byte order assumed for archives without a ``byteorder`` record."""

    NATIVE = 1
    LITTLE = 2
    BIG = 3


_settings = {"endianness": None, "mmap_flags": MAP_PRIVATE, "crc32": True}


def get_default_load_endianness():
    """The byte order assumed for archives that do not record one (None: native)."""
    return _settings["endianness"]


def set_default_load_endianness(endianness) -> None:
    if endianness is not None and not isinstance(endianness, LoadEndianness):
        raise TypeError("Invalid argument type in function set_default_load_endianness")
    _settings["endianness"] = endianness


def default_byteorder(native: str) -> str:
    setting = _settings["endianness"]
    if setting is LoadEndianness.LITTLE:
        return "little"
    if setting is LoadEndianness.BIG:
        return "big"
    return native


def get_default_mmap_options() -> int:
    """``MAP_PRIVATE`` (writes stay in memory, the default) or ``MAP_SHARED`` (writes reach
    the file) for ``load(mmap=True)``."""
    return _settings["mmap_flags"]


def set_default_mmap_options(flags: int) -> None:
    if flags not in (MAP_PRIVATE, MAP_SHARED):
        raise ValueError("Invalid argument in function set_default_mmap_options, expected "
                         f"mmap.MAP_PRIVATE or mmap.MAP_SHARED, but got {flags}")
    _settings["mmap_flags"] = flags


def get_crc32_options() -> bool:
    return _settings["crc32"]


def set_crc32_options(compute_crc32: bool) -> None:
    """Accepted for compatibility: ember always writes (and checks) CRC-32s."""
    _settings["crc32"] = bool(compute_crc32)


def location_tag(storage) -> str:
    """Where a storage lives, as written into checkpoints: always ``"cpu"`` in ember."""
    return "cpu"


def default_restore_location(storage, location: str):
    """``map_location``'s default: keep CPU storages, refuse other devices."""
    from ._load import _restore_on
    _restore_on(location)
    return storage
