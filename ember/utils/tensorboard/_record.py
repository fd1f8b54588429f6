"""TFRecord framing and the event file TensorBoard reads.

A record is: uint64 length (little-endian), uint32 masked CRC-32C of those 8 bytes, the data,
uint32 masked CRC-32C of the data. TensorBoard's reader verifies both checksums.
"""
from __future__ import annotations

import os
import socket
import struct
import threading
import time
import weakref

from . import _proto as P


def _crc32c_table():
    # CRC-32C (Castagnoli), reflected polynomial 0x82F63B78
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc32c_table()


def crc32c(data):
    crc = 0xFFFFFFFF
    table = _TABLE
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data):
    """The CRC TFRecord stores: rotated right by 15 bits plus a constant, so that CRCs of
    data that itself contains CRCs stay well distributed."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def tfrecord(data):
    header = struct.pack("<Q", len(data))
    return (header + struct.pack("<I", masked_crc32c(header)) + data
            + struct.pack("<I", masked_crc32c(data)))


_uid_lock = threading.Lock()
_uid = [0]


class EventFileWriter:
    """Appends serialized Event protos to ``<logdir>/events.out.tfevents.<time>.<host>...``.

    Records go into a buffered file at once; they reach the disk after ``max_queue`` events,
    every ``flush_secs`` seconds (a daemon timer thread), on ``flush()`` and on ``close()``.
    """

    def __init__(self, logdir, max_queue=10, flush_secs=120, filename_suffix=""):
        self._logdir = str(logdir)
        os.makedirs(self._logdir, exist_ok=True)
        with _uid_lock:
            uid = _uid[0]
            _uid[0] += 1
        name = (f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}."
                f"{os.getpid()}.{uid:06d}{filename_suffix}")  # padded: name order = open order
        self._path = os.path.join(self._logdir, name)
        self._file = open(self._path, "wb")
        self._flush_secs = flush_secs
        self._suffix = filename_suffix
        # flush and close the file at interpreter exit even if close() is never called
        self._finalizer = weakref.finalize(self, self._file.close)
        self._lock = threading.Lock()
        self._max_queue = max(int(max_queue), 1)
        self._pending = 0
        self._closed = False
        self._stop = threading.Event()
        self.add_event(P.event(time.time(), 0, file_version="brain.Event:2"))
        self.flush()
        self._timer = threading.Thread(target=self._flush_periodically, args=(flush_secs,),
                                       name="ember-tensorboard-flush", daemon=True)
        self._timer.start()

    def _flush_periodically(self, flush_secs):
        while not self._stop.wait(flush_secs):
            self.flush()

    def get_logdir(self):
        return self._logdir

    @property
    def path(self):
        return self._path

    def add_event(self, event_bytes):
        record = tfrecord(event_bytes)
        with self._lock:
            if self._closed:
                raise RuntimeError(f"SummaryWriter: cannot write to {self._path} after close()")
            self._file.write(record)
            self._pending += 1
            if self._pending >= self._max_queue:
                self._file.flush()
                self._pending = 0

    def flush(self):
        with self._lock:
            if not self._closed:
                self._file.flush()
                self._pending = 0

    def close(self):
        self._stop.set()
        with self._lock:
            if self._closed:
                return
            self._file.flush()
            self._file.close()
            self._closed = True
        if self._timer is not threading.current_thread():
            self._timer.join()

    def reopen(self):
        """Open a new event file in the same directory after close() (as PyTorch allows)."""
        if self._closed:
            self.__init__(self._logdir, self._max_queue, self._flush_secs, self._suffix)
