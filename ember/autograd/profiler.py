"""ember.autograd.profiler: the legacy spelling of ember.profiler (torch.autograd.profiler).

Its `profile` takes the legacy arguments (`enabled` first, `use_cuda`, `use_device`...) and prints
as its table, so `print(prof)` shows the recorded ops and ranges as torch's legacy profiler does.
"""
from __future__ import annotations

import contextlib

from ..profiler import profile as _profile
from ..profiler import record_function
from ..profiler.profiler import EventList  # what key_averages() returns, as torch's

__all__ = ["profile", "record_function", "emit_nvtx", "emit_itt", "EventList"]


class profile(_profile):
    """Legacy profiler: `with ember.autograd.profiler.profile() as prof: ...; print(prof)`."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None):
        super().__init__(record_shapes=record_shapes, profile_memory=profile_memory,
                         with_stack=with_stack, with_flops=with_flops, with_modules=with_modules,
                         enabled=enabled)

    @property
    def function_events(self):
        return self.key_averages()

    def __str__(self):
        return self.key_averages().table()


@contextlib.contextmanager
def emit_nvtx(enabled=True, record_shapes=False):
    """No-op: NVTX ranges are for NVIDIA's profilers, and ember has no CUDA."""
    yield


@contextlib.contextmanager
def emit_itt(enabled=True, record_shapes=False):
    """No-op: ember emits no Intel ITT ranges."""
    yield
