"""Images for TensorBoard: layout conversion to HWC uint8 and a small PNG encoder (zlib only,
so no imaging library is required)."""
from __future__ import annotations

import math
import struct
import zlib

import numpy as np


def to_numpy(x):
    """A Tensor (detached), NumPy array or Python number/list as a NumPy array."""
    from ..._tensor import Tensor
    if isinstance(x, Tensor):
        return np.asarray(x.detach()._data)
    return np.asarray(x)


def _grid(nchw, ncols=8):
    """Tile N images (N, C, H, W) into one (C, H*rows, W*cols) image, row-major."""
    n, c, h, w = nchw.shape
    if c == 1:
        nchw = np.concatenate([nchw] * 3, axis=1)
        c = 3
    cols = min(n, ncols)
    rows = math.ceil(n / cols)
    canvas = np.zeros((c, h * rows, w * cols), dtype=nchw.dtype)
    for i in range(n):
        r, q = divmod(i, cols)
        canvas[:, r * h:(r + 1) * h, q * w:(q + 1) * w] = nchw[i]
    return canvas


def to_hwc(arr, dataformats):
    """Rearrange an image array given in ``dataformats`` (e.g. "CHW", "HWC", "HW", "NCHW")
    into HWC with 3 or 4 channels (grey images are repeated to RGB, as PyTorch does)."""
    fmt = dataformats.upper()
    if len(set(fmt)) != len(fmt) or not set(fmt) <= set("NCHW"):
        raise ValueError(f"add_image: dataformats must be letters from 'NCHW' without repeats; "
                         f"got {dataformats!r}")
    if arr.ndim != len(fmt):
        raise ValueError(f"add_image: the image has {arr.ndim} dims (shape {list(arr.shape)}) "
                         f"but dataformats {dataformats!r} names {len(fmt)}")
    if len(fmt) == 4:
        arr = _grid(arr.transpose([fmt.index(c) for c in "NCHW"]))
        fmt = "CHW"
    if len(fmt) == 3:
        if "C" not in fmt or "H" not in fmt or "W" not in fmt:
            raise ValueError(f"add_image: 3-d dataformats must contain C, H and W; got "
                             f"{dataformats!r}")
        hwc = arr.transpose([fmt.index(c) for c in "HWC"])
        if hwc.shape[2] == 1:
            hwc = np.concatenate([hwc] * 3, axis=2)
        elif hwc.shape[2] not in (3, 4):
            raise ValueError(f"add_image: an image needs 1, 3 or 4 channels; got "
                             f"{hwc.shape[2]} (shape {list(arr.shape)}, dataformats "
                             f"{dataformats!r})")
        return hwc
    if len(fmt) == 2 and set(fmt) == {"H", "W"}:
        hw = arr.transpose([fmt.index(c) for c in "HW"])
        return np.stack([hw] * 3, axis=2)
    raise ValueError(f"add_image: unsupported dataformats {dataformats!r}; use CHW, HWC, HW, "
                     "WH or NCHW-like orders")


def to_uint8(arr):
    """uint8 images are kept; other images are taken to hold values in [0, 1] and scaled by
    255 (then clipped), as PyTorch does."""
    if arr.dtype == np.uint8:
        return arr
    scaled = arr.astype(np.float32) * 255.0
    return np.clip(scaled, 0, 255).astype(np.uint8)


def encode_png(hwc):
    """PNG bytes of an (H, W, 3|4) uint8 image (8-bit RGB or RGBA, no filtering)."""
    h, w, c = hwc.shape
    color_type = {3: 2, 4: 6}[c]

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    # every scanline starts with its filter type; 0 = None
    raw = np.concatenate([np.zeros((h, 1), np.uint8),
                          np.ascontiguousarray(hwc, dtype=np.uint8).reshape(h, w * c)], axis=1)
    ihdr = struct.pack(">IIBBBBB", w, h, 8, color_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
            + chunk(b"IDAT", zlib.compress(raw.tobytes(), 6)) + chunk(b"IEND", b""))
