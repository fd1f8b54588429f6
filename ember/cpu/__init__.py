"""``ember.cpu``: torch.cpu's device module for ember's one device, the CPU.

Device-generic code (`getattr(torch, device_type).synchronize()`, `torch.cpu.device_count()`)
runs against it: one device, always available, every op finished when it returns.
"""
from __future__ import annotations

import contextlib
import functools
import types

from .._streams import Event, Stream
from . import amp  # noqa: F401

__all__ = ["is_available", "is_initialized", "synchronize", "current_device", "current_stream",
           "stream", "set_device", "device_count", "Stream", "StreamContext", "Event",
           "get_capabilities"]

_current = Stream()


def is_available() -> bool:
    return True


def is_initialized() -> bool:
    return True


def device_count() -> int:
    return 1


def current_device() -> str:
    return "cpu"


def set_device(device) -> None:
    """Accepted for symmetry with the accelerator modules: the CPU is the only device."""


def synchronize(device=None) -> None:
    """Returns at once: ember runs every op synchronously."""


def current_stream(device=None) -> Stream:
    return _current


class StreamContext(contextlib.AbstractContextManager):
    """Makes `stream` current for the block (ember's CPU streams have no queued work)."""

    def __init__(self, stream):
        self.stream = stream
        self._prev = None

    def __enter__(self):
        global _current
        self._prev, _current = _current, (self.stream or _current)
        return self

    def __exit__(self, *exc):
        global _current
        _current = self._prev
        return False


def stream(stream) -> StreamContext:
    return StreamContext(stream)


@functools.cache
def get_capabilities() -> types.MappingProxyType:
    """The instruction-set flags of this CPU (from /proc/cpuinfo where it exists), as a mapping
    from flag name to True."""
    flags: list[str] = []
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = line.split(":", 1)[1].split()
                    break
    except OSError:
        pass
    return types.MappingProxyType({flag: True for flag in flags})
