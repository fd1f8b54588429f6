"""``ember.accelerator``: the device-generic accelerator API; ember has no accelerator.

``is_available()`` is False and ``current_accelerator()`` None, so device-agnostic code picks
the CPU (``device = ember.accelerator.current_accelerator() or "cpu"``). Functions that need an
accelerator raise PyTorch's RuntimeError.
"""
from __future__ import annotations

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index",
           "set_device_index", "synchronize", "empty_cache", "memory_allocated",
           "max_memory_allocated", "memory_reserved", "max_memory_reserved"]

_NONE = ("Cannot access accelerator device when none is available: ember runs on the CPU only "
         "(ember.accelerator.is_available() is False).")


def is_available():
    """False: ember has no accelerator backend."""
    return False


def current_accelerator(check_available=False):
    """None: no accelerator is present."""
    return None


def device_count():
    return 0


def current_device_index():
    raise RuntimeError(_NONE)


current_device_idx = current_device_index


def set_device_index(device):
    raise RuntimeError(_NONE)


set_device_idx = set_device_index


def synchronize(device=None):
    raise RuntimeError(_NONE)


def empty_cache():
    """No-op: there is no accelerator memory to release."""


def memory_allocated(device_index=None):
    return 0


def max_memory_allocated(device_index=None):
    return 0


def memory_reserved(device_index=None):
    return 0


def max_memory_reserved(device_index=None):
    return 0
