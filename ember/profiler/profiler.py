"""The profiler: per-op CPU time, input shapes and bytes allocated, forward and backward.

``with ember.profiler.profile() as prof:`` records every op (one flag check per op when not
profiling), ``record_function("name")`` ranges, and with ``profile_memory=True`` the bytes held
by tensors created inside (current and peak: each new buffer is counted until it is freed).
``prof.key_averages().table(sort_by="cpu_time_total", row_limit=10)`` summarises;
``prof.export_chrome_trace(path)`` writes a Chrome/Perfetto trace.
"""
from __future__ import annotations

import json
import os
import threading
import time
import weakref
from collections import defaultdict
from dataclasses import dataclass, field

from .. import _backend


class _Active:
    prof = None  # the profile being recorded, or None


_active = _Active()


@dataclass
class Event:
    name: str
    start_us: float
    dur_us: float
    shapes: list = field(default_factory=list)
    bytes: int = 0
    kind: str = "op"   # "op", "backward", "range"
    tid: int = 0


class ProfilerActivity:
    CPU = "cpu"
    CUDA = "cuda"


class _Memory:
    """Bytes held by buffers created while profiling; freed ones are subtracted."""

    def __init__(self):
        self.current = 0
        self.peak = 0
        self._lock = threading.Lock()
        self._pooled = set()  # ids of reuse-pool buffers already counted

    def track(self, arr):
        # only a buffer that owns its memory is a new allocation; views allocate nothing
        if arr.base is not None or arr.nbytes == 0:
            return 0
        n = arr.nbytes
        with self._lock:
            if _backend.is_reused(arr):
                # a buffer of ember's reuse pool stays held while the pool keeps it (NOTE
                # [Reused buffers] in _backend.py): counted once, when first seen
                if id(arr) in self._pooled:
                    return 0
                self._pooled.add(id(arr))
            self.current += n
            self.peak = max(self.peak, self.current)
        weakref.finalize(arr, self._free, n)
        return n

    def _free(self, n):
        with self._lock:
            self.current -= n


class profile:
    """Context manager recording ops, backward nodes and ranges (torch.profiler.profile)."""

    def __init__(self, activities=None, *, record_shapes=True, profile_memory=False,
                 with_stack=False, with_flops=False, with_modules=False, schedule=None,
                 on_trace_ready=None, use_cuda=None, enabled=True):
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.enabled = enabled
        self.events: list[Event] = []
        self.memory = _Memory()
        self._t0 = 0.0
        self._prev = None
        self.on_trace_ready = on_trace_ready

    def __enter__(self):
        if self.enabled:
            self._prev = _active.prof
            self._t0 = time.perf_counter()
            _active.prof = self
        return self

    def __exit__(self, *exc):
        if self.enabled:
            _active.prof = self._prev
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)
        return False

    def step(self):
        """Accepted for schedule-style loops; every step is recorded."""

    def _now_us(self):
        return (time.perf_counter() - self._t0) * 1e6

    def _add(self, name, start, end, shapes, nbytes, kind):
        self.events.append(Event(name, start, end - start, shapes, nbytes, kind,
                                 threading.get_ident() % 100000))

    def events_list(self):
        return list(self.events)

    def key_averages(self, group_by_input_shape=False):
        return EventList(self.events, group_by_input_shape)

    def export_chrome_trace(self, path):
        """Write the trace in Chrome's JSON trace format (opens in chrome://tracing, Perfetto)."""
        pid = os.getpid()
        trace = [{"name": e.name, "ph": "X", "ts": e.start_us, "dur": max(e.dur_us, 0.001),
                  "pid": pid, "tid": e.tid, "cat": e.kind,
                  "args": {"Input Dims": e.shapes, "bytes": e.bytes}} for e in self.events]
        tmp = f"{path}.tmp{os.getpid()}"
        with open(tmp, "w") as f:
            json.dump({"traceEvents": trace, "displayTimeUnit": "ms"}, f)
        os.replace(tmp, path)

    def peak_memory(self):
        return self.memory.peak

    def current_memory(self):
        return self.memory.current


class FunctionEventAvg:
    def __init__(self, key):
        self.key = key
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = 0
        self.input_shapes = None

    @property
    def cpu_time(self):
        return self.cpu_time_total / max(self.count, 1)


class EventList(list):
    """Per-name aggregates of the recorded events."""

    def __init__(self, events, by_shape=False):
        groups = defaultdict(lambda: None)
        order = []
        own = _self_times(events)
        for e in events:
            key = (e.name, str(e.shapes)) if by_shape else e.name
            if groups[key] is None:
                groups[key] = FunctionEventAvg(e.name)
                groups[key].input_shapes = e.shapes
                order.append(key)
            g = groups[key]
            g.count += 1
            g.cpu_time_total += e.dur_us
            g.self_cpu_time_total += own[id(e)]
            g.cpu_memory_usage += e.bytes
        super().__init__(groups[k] for k in order)

    def table(self, sort_by="cpu_time_total", row_limit=100, header=None, **kw):
        key = {"cpu_time_total": lambda a: a.cpu_time_total, "cpu_time": lambda a: a.cpu_time,
               "count": lambda a: a.count,
               "cpu_memory_usage": lambda a: a.cpu_memory_usage,
               "self_cpu_time_total": lambda a: a.self_cpu_time_total}.get(sort_by)
        if key is None:
            raise ValueError(f"table(): unknown sort_by '{sort_by}'; expected one of "
                             "cpu_time_total, self_cpu_time_total, cpu_time, count, "
                             "cpu_memory_usage")
        rows = sorted(self, key=key, reverse=True)[:row_limit]
        total = sum(a.self_cpu_time_total for a in self) or 1.0
        lines = [f"{'Name':<32}{'Self CPU %':>11}{'Self CPU':>12}{'CPU total':>14}"
                 f"{'CPU avg':>12}{'# Calls':>9}{'CPU Mem':>12}"]
        lines.append("-" * len(lines[0]))
        for a in rows:
            lines.append(f"{a.key[:31]:<32}{100 * a.self_cpu_time_total / total:>10.2f}%"
                         f"{_fmt_us(a.self_cpu_time_total):>12}{_fmt_us(a.cpu_time_total):>14}"
                         f"{_fmt_us(a.cpu_time):>12}{a.count:>9}"
                         f"{_fmt_bytes(a.cpu_memory_usage):>12}")
        lines.append("-" * len(lines[0]))
        lines.append(f"Self CPU time total: {_fmt_us(total)}")
        return "\n".join(lines)


def _self_times(events):
    """Each event's duration minus the time of the events nested directly inside it on the
    same thread (a backward node's time without the ops it ran), keyed by id(event)."""
    own = {id(e): e.dur_us for e in events}
    by_thread = defaultdict(list)
    for e in events:
        by_thread[e.tid].append(e)
    for evs in by_thread.values():
        evs.sort(key=lambda e: (e.start_us, -e.dur_us))  # parents before their children
        open_ = []  # the chain of events enclosing the current one
        for e in evs:
            while open_ and open_[-1].start_us + open_[-1].dur_us <= e.start_us:
                open_.pop()
            if open_:
                own[id(open_[-1])] -= e.dur_us
            open_.append(e)
    return own


def _fmt_us(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _fmt_bytes(n):
    for unit in ("b", "Kb", "Mb", "Gb"):
        if abs(n) < 1024:
            return f"{n:.2f} {unit}" if unit != "b" else f"{n} b"
        n /= 1024
    return f"{n:.2f} Tb"


class record_function:
    """A named range on the profiler timeline (context manager and decorator)."""

    def __init__(self, name, args=None):
        self.name = name
        self._start = None

    def __enter__(self):
        p = _active.prof
        if p is not None:
            self._start = p._now_us()
        return self

    def __exit__(self, *exc):
        p = _active.prof
        if p is not None and self._start is not None:
            p._add(self.name, self._start, p._now_us(), [], 0, "range")
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*a, **k):
            with record_function(self.name):
                return fn(*a, **k)

        return wrapper


def record_op(name, args, outs, start, kind):
    """Called by the op machinery while profiling: one event per op call or backward node."""
    p = _active.prof
    if p is None:
        return
    end = p._now_us()
    shapes = [list(a.shape) for a in args if hasattr(a, "shape")] if p.record_shapes else []
    nbytes = 0
    if p.profile_memory:
        for o in outs:
            d = getattr(o, "_data", None)
            if d is not None:
                nbytes += p.memory.track(d)
    p._add(name, start, end, shapes, nbytes, kind)
