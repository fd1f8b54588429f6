"""The device modules of accelerators ember does not have (``ember.mps``, ``ember.xpu``,
``ember.mtia``): availability answers truthfully (not available, 0 devices), seeding is a no-op
(as in torch without the backend), and anything that needs the device raises the error torch's
CPU build raises, so device-selection code written for PyTorch takes its CPU branch unchanged.
"""
from __future__ import annotations


def functions(kind: str, exc: type, message: str, *, quiet: tuple = ()) -> dict:
    """The module-level functions of device module `kind`; names in `quiet` return None/0
    instead of raising (torch's builds differ per backend in which calls need the device)."""

    def unavailable(*args, **kwargs):
        raise exc(f"{message} (ember.{kind}.is_available() is False: ember computes on the CPU "
                  f"only; use device='cpu').")

    def none(*args, **kwargs):
        return None

    def zero(*args, **kwargs):
        return 0

    def false(*args, **kwargs):
        return False

    def seed_noop(seed=None, *args, **kwargs):
        if seed is not None:
            int(seed)  # the same argument check as a real seed call

    fns = {"is_available": false, "is_initialized": false, "device_count": zero,
           "is_bf16_supported": false, "manual_seed": seed_noop, "manual_seed_all": seed_noop,
           "seed": none, "seed_all": none}
    for name in ("synchronize", "current_device", "set_device", "get_device_name",
                 "get_device_properties", "get_device_capability", "init", "get_rng_state",
                 "set_rng_state", "empty_cache", "memory_allocated", "max_memory_allocated",
                 "current_allocated_memory", "driver_allocated_memory", "current_stream",
                 "initial_seed", "reset_peak_memory_stats"):
        fns[name] = unavailable
    for name in quiet:
        fns[name] = zero if "memory" in name else none
    return {name: _named(fn, kind, name) for name, fn in fns.items()}


def _named(fn, kind, name):
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    wrapper.__name__ = wrapper.__qualname__ = name
    wrapper.__module__ = f"ember.{kind}"
    return wrapper
