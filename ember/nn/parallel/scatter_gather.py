"""``ember.nn.parallel.scatter_gather``: torch's module path for scatter/gather, which split a
batch over CUDA devices and collect the outputs. There are none: see _devices.py."""
from __future__ import annotations

from ._devices import NoCudaError, check_devices

__all__ = ["scatter", "scatter_kwargs", "gather"]


def scatter(inputs, target_gpus, dim=0):
    """Split ``inputs`` along ``dim`` over ``target_gpus``: refused, there are no CUDA devices."""
    check_devices("scatter", target_gpus)


def scatter_kwargs(inputs, kwargs, target_gpus, dim=0):
    """scatter() of the positional and keyword inputs: refused, as scatter()."""
    check_devices("scatter_kwargs", target_gpus)


def gather(outputs, target_device, dim=0):
    """Concatenate per-device ``outputs`` on ``target_device``: ember's tensors are all CPU
    tensors, which torch refuses here with this assertion."""
    raise NoCudaError("Gather function not implemented for CPU tensors")
