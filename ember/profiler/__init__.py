"""ember.profiler: op-level CPU time, shapes, memory; Chrome traces (paper, section 6.1)."""
import enum

from .profiler import (Event, EventList, ProfilerActivity, profile,  # noqa: F401
                       record_function)


class ProfilerAction(enum.Enum):
    """What a profiler schedule says to do at a step (torch's values; Lightning imports it).
    ember's ``schedule`` records every step, so it never returns one of these."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4


def schedule(*, wait=0, warmup=0, active=1, repeat=0, skip_first=0):
    """Accepted for compatibility: ember's profiler records every step it is active for."""
    return lambda step: True


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    import os
    import time

    def handler(prof):
        os.makedirs(dir_name, exist_ok=True)
        prof.export_chrome_trace(os.path.join(
            dir_name, f"{worker_name or os.getpid()}.{int(time.time() * 1000)}.pt.trace.json"))

    return handler


def kineto_available() -> bool:
    """False: ember's profiler is its own, not built on Kineto (Lightning asks at import)."""
    return False
