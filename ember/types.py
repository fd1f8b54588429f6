"""``ember.types``: the type aliases PyTorch code uses in annotations (torch.types' names)."""
from __future__ import annotations

import os
from typing import IO

from ._backend import device as _device
from ._dtype import dtype as _dtype
from ._size import Size as _Size

Number = int | float | bool
Device = _device | str | int | None
FileLike = str | os.PathLike | IO[bytes]
Storage = object  # ember has no storage class of its own: a tensor's data is a NumPy array

_int = int
_float = float
_bool = bool
_complex = complex
_dtype = _dtype
_device = _device
_size = _Size | list | tuple

__all__ = ["Number", "Device", "FileLike", "Storage"]
