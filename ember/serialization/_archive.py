"""ZIP archives, read with every entry validated and written atomically with aligned records.

NOTE [Reading archives safely]
Before any entry is read, every entry is checked: stored (never compressed, so no zip bombs;
neither ember nor torch compresses), not encrypted, sizes and offsets inside the file, no
duplicate names, and declared sizes adding up to at most the file size (entries of a real
archive are disjoint; overlapping ones would multiply what a small file makes us allocate).
Nothing is ever extracted to disk, so entry names cannot escape anywhere. Reads check the CRC
(``mmap=True`` maps the bytes instead, so their CRC is not checked).
"""
from __future__ import annotations

import contextlib
import os
import secrets
import stat
import struct
import zipfile

import numpy as np

from ._errors import SerializationError, bad

ALIGN = 64             # records start on 64-byte boundaries (torch's .storage_alignment)
MAX_ENTRIES = 1 << 20
_CHUNK = 1 << 24


class Archive:
    """One open, validated archive: ``infos`` maps entry names to their ZipInfo."""

    def __init__(self, zf: zipfile.ZipFile, fp, size: int, path, mmap: bool):
        self.zf, self.fp, self.size, self.path, self.mmap = zf, fp, size, path, mmap
        self.infos = check_entries(zf, size)

    def read(self, name: str) -> bytes:
        info = self.infos.get(name)
        if info is None:
            raise bad(f"archive has no entry {name!r}")
        buf = bytearray(info.file_size)
        self.read_into(info, memoryview(buf))
        return bytes(buf)

    def read_into(self, info: zipfile.ZipInfo, out: memoryview) -> None:
        try:
            with self.zf.open(info) as src:
                pos, n = 0, len(out)
                while pos < n:
                    got = src.readinto(out[pos:pos + _CHUNK])
                    if not got:
                        raise bad(f"entry {info.filename!r} is truncated")
                    pos += got
                if src.read(1):  # also makes zipfile check the CRC at the end of the entry
                    raise bad(f"entry {info.filename!r} is longer than declared")
        except SerializationError:
            raise
        except Exception as e:  # bad CRC, local header mismatch, short read, ...
            raise bad(f"entry {info.filename!r} is corrupted ({type(e).__name__}: {e})") from None

    def bytes_of(self, name: str, nbytes: int) -> np.ndarray:
        """Entry ``name`` as a flat uint8 array of exactly ``nbytes`` (mapped with mmap)."""
        info = self.infos.get(name)
        if info is None:
            raise bad(f"archive has no entry {name!r} (a storage the pickle refers to)")
        if info.file_size != nbytes:
            raise bad(f"entry {name!r} holds {info.file_size} bytes but the pickle declares "
                      f"{nbytes}")
        if self.mmap and nbytes > 0:
            from ._config import MAP_SHARED, get_default_mmap_options
            mode = "r+" if get_default_mmap_options() == MAP_SHARED else "c"
            return np.memmap(self.path, dtype=np.uint8, mode=mode, offset=self.data_start(info),
                             shape=(nbytes,))
        arr = np.empty(nbytes, dtype=np.uint8)
        self.read_into(info, memoryview(arr))
        return arr

    def data_start(self, info: zipfile.ZipInfo) -> int:
        self.fp.seek(info.header_offset)
        header = self.fp.read(30)
        if len(header) != 30 or header[:4] != b"PK\x03\x04":
            raise bad(f"bad local header for {info.filename!r}")
        name_len, extra_len = struct.unpack("<HH", header[26:30])
        start = info.header_offset + 30 + name_len + extra_len
        if start + info.file_size > self.size:
            raise bad(f"entry {info.filename!r} extends past the end of the file")
        return start


def open_zip(fp, size: int):
    try:
        return zipfile.ZipFile(fp)
    except Exception as e:  # zipfile raises many types on malformed input
        raise bad(f"a damaged ZIP archive ({type(e).__name__}: {e})") from None


def check_entries(zf: zipfile.ZipFile, size: int) -> dict[str, zipfile.ZipInfo]:
    """Validate every entry before reading any; see NOTE [Reading archives safely]."""
    infos = zf.infolist()
    if len(infos) > MAX_ENTRIES:
        raise bad(f"archive has too many entries ({len(infos)})")
    out: dict[str, zipfile.ZipInfo] = {}
    for info in infos:
        name = info.filename
        if name in out:
            raise bad(f"duplicate archive entry {name!r}")
        if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 0x1:
            raise bad(f"entry {name!r} is compressed or encrypted; checkpoint archives store "
                      "entries uncompressed")
        if (info.file_size != info.compress_size or info.file_size > size
                or not 0 <= info.header_offset <= size - info.file_size):
            raise bad(f"entry {name!r} declares sizes that do not fit the file "
                      f"({info.file_size} bytes at offset {info.header_offset} in {size})")
        out[name] = info
    if sum(info.file_size for info in infos) > size:
        raise bad("archive entries overlap (their sizes add up to more than the file)")
    return out


# ---------------------------------------------------------------------------------------------
# writing


def write_entry(zf: zipfile.ZipFile, name: str, data) -> None:
    """Write one stored entry whose data starts at a multiple of ALIGN in the stream."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    nbytes = len(data) if isinstance(data, bytes) else int(data.nbytes)
    info.file_size = nbytes
    zip64 = nbytes * 1.05 > zipfile.ZIP64_LIMIT  # zipfile's own rule for the local header
    base = zf.fp.tell() + 30 + len(name.encode("utf-8")) + (20 if zip64 else 0)
    pad = -base % ALIGN
    if 0 < pad < 4:  # an extra-field record needs at least its 4-byte header
        pad += ALIGN
    if pad:
        info.extra = struct.pack("<HH", 0x4D45, pad - 4) + b"\0" * (pad - 4)  # 'EM' padding
    with zf.open(info, "w") as out:
        view = memoryview(data).cast("B") if not isinstance(data, bytes) else memoryview(data)
        for start in range(0, nbytes, _CHUNK):
            out.write(view[start:start + _CHUNK])


def atomic_write(path, write) -> None:
    """Write via a temporary file in the target's directory, fsync, then rename over it, so a
    crash or an error never leaves a half-written file at ``path``."""
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
