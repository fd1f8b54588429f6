"""The autocast switch consulted by autocast-eligible ops (matmul, linear, conv, bmm).

``maybe_autocast(op_name, *tensors)`` returns the tensors unchanged unless an
``ember.autocast`` region is active, in which case ember/amp decides the compute dtype.
"""
from __future__ import annotations


class _Autocast:
    enabled = False
    dtype = None
    cast = None  # set by ember.amp: fn(op_name, tensors) -> tensors


state = _Autocast()


def maybe_autocast(op_name, *tensors):
    if not state.enabled or state.cast is None:
        return tensors
    return state.cast(op_name, tensors)
