"""The array backend and the device layer: the one place that knows tensors live in NumPy arrays.

Everything that allocates or inspects raw storage goes through here, so that an accelerator
backend later replaces this module rather than code spread across the package.
"""
from __future__ import annotations

import numpy as np

xp = np  # the array module tensors are stored in


class device:
    """``ember.device("cpu")``: where a tensor lives. Only the CPU holds data today.

    ``ember.device("cuda")`` can be constructed (code that names it keeps working), but moving a
    tensor there raises, since ember has no CUDA backend on this machine.
    """

    __slots__ = ("type", "index")
    _KNOWN = ("cpu", "cuda", "mps", "meta", "xpu")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if not isinstance(type, str):
            raise TypeError(f"device(): expected a string or device, got {type!r}")
        if ":" in type:
            type, _, idx = type.partition(":")
            if index is not None or not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}:{idx}'")
            index = int(idx)
        if type not in self._KNOWN:
            raise RuntimeError(f"Expected one of {', '.join(self._KNOWN)} device type at start "
                               f"of device string: {type}")
        self.type, self.index = type, index

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"


CPU = device("cpu")


def check_device(d) -> device:
    """Validate a requested device; anything but the CPU raises a clear error."""
    if d is None:
        return CPU
    d = d if isinstance(d, device) else device(d) if isinstance(d, str) else None
    if d is None:
        raise TypeError("expected a device (ember.device or string such as 'cpu')")
    if d.type != "cpu":
        if d.type == "cuda":
            raise RuntimeError("Torch not compiled with CUDA enabled: no CUDA device is available "
                               "to ember on this machine (ember.cuda.is_available() is False). "
                               "Use device='cpu'.")
        raise RuntimeError(f"device '{d}' is not available to ember on this machine; "
                           "only 'cpu' is supported.")
    return CPU


def data_ptr(a) -> int:
    """Address of the first element of an array."""
    return a.__array_interface__["data"][0]
