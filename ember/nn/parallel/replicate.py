"""``ember.nn.parallel.replicate``: copies of a module on several CUDA devices. There are none:
see _devices.py."""
from __future__ import annotations

from ._devices import NoCudaError, check_devices

__all__ = ["replicate"]


def replicate(network, devices, detach=False):
    """Replicas of ``network`` on ``devices``: refused (a "cpu" device with ValueError, device
    ids with torch's assertion about broadcasting CPU tensors)."""
    if any(str(d).split(":")[0] == "cpu" for d in devices):
        check_devices("replicate", devices)
    raise NoCudaError("Broadcast function not implemented for CPU tensors")
