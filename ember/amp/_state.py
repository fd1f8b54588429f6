"""The autocast switch consulted by autocast-eligible ops (matmul, linear, conv, losses, ...).

``maybe_autocast(op_name, *tensors)`` returns the tensors unchanged unless an
``ember.autocast`` region is active on the CPU, in which case ember/amp/autocast_mode.py decides
the compute dtype of that op (its lower-precision and float32 lists) and casts the inputs.
Kept dependency-free so that every op module can import it cheaply.
"""
from __future__ import annotations


class _Autocast:
    enabled = False       # CPU autocast is on (the only device that holds tensors)
    dtype = None          # its lower-precision dtype (ember.bfloat16 or ember.float16)
    cache_enabled = True  # reuse casts of leaf parameters within the outermost region
    nesting = 0           # depth of active autocast regions; the cache empties at 0
    cast = None           # set by ember.amp: fn(op_name, tensors) -> tensors


state = _Autocast()


def maybe_autocast(op_name, *tensors):
    """Inputs of op ``op_name`` in the dtype autocast wants (unchanged outside autocast)."""
    if not state.enabled or state.cast is None:
        return tensors
    return state.cast(op_name, tensors)
