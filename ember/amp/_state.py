"""The autocast switch consulted by autocast-eligible ops (matmul, linear, conv, losses, ...).

``maybe_autocast(op_name, *tensors)`` returns the tensors unchanged unless an
``ember.autocast`` region is active on the CPU in the calling thread, in which case
ember/amp/autocast_mode.py decides the compute dtype of that op (its lower-precision and float32
lists) and casts the inputs. The state is per thread, as torch's (see NOTE [Per-thread autograd
state] in ember/autograd/grad_mode.py). Kept dependency-free so that every op module can import
it cheaply.
"""
from __future__ import annotations

import threading


class _Autocast(threading.local):
    enabled = False       # CPU autocast is on (the only device that holds tensors)
    dtype = None          # its lower-precision dtype (ember.bfloat16 or ember.float16)
    cache_enabled = True  # reuse casts of leaf parameters within the outermost region
    nesting = 0           # depth of active autocast regions; the cache empties at 0

    def __init__(self):
        # runs once in every thread that touches the state: each thread caches its own casts
        self.cache = {}


state = _Autocast()
# the cast policy, set by ember.amp: fn(op_name, tensors) -> tensors (one per process)
_policy = {"cast": None}


def maybe_autocast(op_name, *tensors):
    """Inputs of op ``op_name`` in the dtype autocast wants (unchanged outside autocast)."""
    if not state.enabled or _policy["cast"] is None:
        return tensors
    return _policy["cast"](op_name, tensors)
