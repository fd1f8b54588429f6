"""``ember.nn.parallel.parallel_apply``: run module replicas on their devices in threads. There
are no CUDA devices: see _devices.py."""
from __future__ import annotations

from ._devices import check_devices

__all__ = ["parallel_apply"]


def parallel_apply(modules, inputs, kwargs_tup=None, devices=None):
    """Apply ``modules[i]`` to ``inputs[i]`` on ``devices[i]``: refused, as torch's CPU build
    (without devices it asks for the accelerator; "cpu" devices are ValueError)."""
    if len(modules) != len(inputs):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number "
                             f"of inputs {len(inputs)}")
    if devices is None:
        raise RuntimeError("Cannot access accelerator device when none is available.")
    check_devices("parallel_apply", devices, expected="cuda")
