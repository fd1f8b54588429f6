"""Memory for parameters: 64-byte aligned, on transparent huge pages (NOTE [Parameters on huge
pages])."""
from __future__ import annotations

import mmap
import os
import sys
import threading

import numpy as np

# NOTE [Parameters on huge pages]
# A decoding step reads every weight once (GPT-S: 13.6 MB in 17 one-row products) and the
# step's Python between the products evicts the weights' page translations: on 4 KiB pages each
# 1 MB weight is 256 TLB misses a token. NumPy's arrays are also only 16-byte aligned (malloc's
# mmap'd blocks start 16 bytes into a page), so a 64-byte vector load of a weight row straddles
# two cache lines. The step's 17 products on one thread, interleaved rounds of the same weights
# in three layouts (/work/s33/align.py, thread time, median of 40): as allocated 318 us,
# copied 64-byte aligned 267, aligned and on 2 MiB pages 230.
# So a Parameter made from a fresh array of at least MIN_BYTES (one nothing else refers to: see
# nn/parameter.py) gets a copy here, and the tensor it was made from is pointed at the copy too
# (the two still share memory, as torch's do). The copies are cut one after another, each
# 64-byte aligned, from chunks of private anonymous memory whose 2 MiB-aligned span is advised
# MADV_HUGEPAGE (the kernel backs it with huge pages where it has them; "madvise" is the usual
# THP setting). Each copy is its own array over the chunk (np.frombuffer: its base is the mmap,
# not an ndarray), so storage, storage_offset and serialization see one array per parameter. A
# chunk is unmapped when the last array cut from it dies; space freed inside a live chunk is not
# reused (at most CHUNK_BYTES a chunk stays mapped for a parameter that outlives its
# neighbours). Only on Linux; EMBER_PARAMETER_ARENA=0 (or ON[0] = False) turns it off.
MIN_BYTES = 1 << 17
CHUNK_BYTES = 8 << 20
_HUGE = 2 << 20
_ALIGN = 64
ON = [sys.platform.startswith("linux") and os.environ.get("EMBER_PARAMETER_ARENA", "1") != "0"]
_chunk = [None, 0, 0]  # the chunk being cut: its mmap, next free offset, end offset
_lock = threading.Lock()


def _new_chunk(nbytes):
    """A fresh chunk with room for nbytes: [mmap, first offset, end offset], or None."""
    size = max(CHUNK_BYTES, -(-nbytes // _HUGE) * _HUGE)
    try:
        mm = mmap.mmap(-1, size + _HUGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    except (OSError, ValueError, AttributeError):
        return None
    start = -np.frombuffer(mm, np.uint8, 1).ctypes.data % _HUGE
    try:
        mm.madvise(mmap.MADV_HUGEPAGE, start, size)
    except (AttributeError, OSError, ValueError):  # no THP here: still aligned
        pass
    return [mm, start, start + size]


def copy_in(a):
    """A copy of C-contiguous array `a` in the arena, or None when the arena is off or cannot
    map memory (the caller keeps `a`)."""
    if not ON[0]:
        return None
    n = a.nbytes
    with _lock:
        chunk = _chunk
        if chunk[0] is None or chunk[1] + n > chunk[2]:
            fresh = _new_chunk(n)
            if fresh is None:
                return None
            chunk[:] = fresh
        mm, offset = chunk[0], chunk[1]
        chunk[1] = -(-(offset + n) // _ALIGN) * _ALIGN
    out = np.frombuffer(mm, a.dtype, a.size, offset).reshape(a.shape)
    np.copyto(out, a)
    return out


def _after_fork_in_child():
    global _lock
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)
