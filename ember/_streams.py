"""``ember.Stream`` and ``ember.Event``: torch's device-generic stream and event, for the CPU.

ember runs every op synchronously on the calling thread, so a CPU stream has no queued work:
``query()`` is always True and ``synchronize()`` returns at once. Events record the time they
were recorded, so ``elapsed_time`` measures host time between two records.
"""
from __future__ import annotations

import itertools
import time

from ._backend import device as _device

_ids = itertools.count(1)


def _cpu(device, what):
    dev = _device("cpu" if device is None else device)
    if dev.type != "cpu":
        raise RuntimeError(f"{what}: ember has only CPU streams and events; got device {dev}")
    return dev


class Stream:
    """An in-order queue of work on a device (for ember's CPU: always empty)."""

    def __init__(self, device=None, *, priority=0):
        self.device = _cpu(device, "Stream")
        self.priority = priority
        self.stream_id = 0

    @property
    def device_type(self):
        return 0  # DeviceType.CPU, as torch reports it

    @property
    def device_index(self):
        return -1

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        pass

    def wait_event(self, event) -> None:
        event.synchronize()

    def wait_stream(self, stream) -> None:
        stream.synchronize()

    def record_event(self, event=None):
        event = Event() if event is None else event
        event.record(self)
        return event

    def is_capturing(self) -> bool:
        return False

    @property
    def native_handle(self):
        return 0

    def __eq__(self, other):
        return isinstance(other, Stream) and other.stream_id == self.stream_id

    def __hash__(self):
        return hash(("cpu-stream", self.stream_id))

    def __repr__(self):
        return f"ember.Stream device_type=cpu, device_index=-1, stream_id={self.stream_id}"


class Event:
    """A marker in a stream's work; ``elapsed_time`` between two recorded events in ms."""

    def __init__(self, device=None, *, enable_timing=False, blocking=False, interprocess=False):
        self.device = _cpu(device, "Event")
        self.enable_timing = enable_timing
        self.event_id = 0
        self._time = None

    def record(self, stream=None) -> None:
        self._time = time.perf_counter()
        self.event_id = next(_ids)

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        pass

    def wait(self, stream=None) -> None:
        pass

    def elapsed_time(self, end_event) -> float:
        if not (self.enable_timing and end_event.enable_timing):
            raise ValueError("Event.elapsed_time: both events must be created with "
                             "enable_timing=True")
        if self._time is None or end_event._time is None:
            raise ValueError("Event.elapsed_time: both events must be recorded first")
        return (end_event._time - self._time) * 1000.0

    def ipc_handle(self):
        raise RuntimeError("Event.ipc_handle: CPU events cannot be shared between processes")

    @classmethod
    def from_ipc_handle(cls, device, handle):
        raise RuntimeError("Event.from_ipc_handle: CPU events cannot be shared between "
                           "processes")

    def __repr__(self):
        return f"ember.Event device_type=cpu, device_index=-1, event_id={self.event_id}"


class OutOfMemoryError(RuntimeError):
    """Raised when an allocation fails (``ember.cuda.OutOfMemoryError`` is the same class)."""
