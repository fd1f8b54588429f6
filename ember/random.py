"""``ember.random``: the global generator's seeding and state (torch.random's names).

The same functions as ``ember.manual_seed`` and friends, plus ``fork_rng``: a context manager
that restores the CPU generator's state on exit, so code inside may draw random numbers without
moving the stream seen outside.
"""
from __future__ import annotations

import contextlib
import warnings

from .ops.random import (  # noqa: F401
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)

__all__ = ["set_rng_state", "get_rng_state", "manual_seed", "seed", "initial_seed", "fork_rng",
           "thread_safe_generator"]


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type=None):
    """Save the CPU generator's state, run the block, restore the state.

    ember has only the CPU generator: `devices` must be empty or None and `device_type` None or
    "cpu" (anything else names a device ember does not have)."""
    if device_type not in (None, "cpu", "cuda"):
        raise RuntimeError(f"{_caller}: ember has only the CPU generator; got "
                           f"device_type={device_type!r}, expected None or 'cpu'.")
    if devices:
        warnings.warn(f"{_caller}: ember has no accelerator generators; {_devices_kw}="
                      f"{list(devices)!r} is ignored and only the CPU state is forked.",
                      UserWarning, stacklevel=3)
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)


def thread_safe_generator(gen):
    """The generator itself: ember's generators are used under the GIL, one draw at a time."""
    return gen
