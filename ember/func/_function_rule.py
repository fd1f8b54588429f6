"""A custom autograd.Function's own batching rule: its ``vmap`` staticmethod (torch's API).

Inside vmap, ``Function.apply`` on batched tensors calls ``cls.vmap(info, in_dims, *args)`` with
the physical tensors (the batch dim in front, ``in_dims`` 0 for them and None for the rest) and
wraps what it returns at its ``out_dims``. The rule computes with ember ops on plain tensors, so
gradients flow through whatever it does (often ``cls.apply`` on the whole batch).
"""
from __future__ import annotations

from collections import namedtuple

from .._tensor import Tensor
from . import _vmap
from ._batched import SIZES, is_batched, physical, wrap

VmapInfo = namedtuple("VmapInfo", ["batch_size", "randomness"])


def apply_vmap_rule(cls, args, kwargs):
    """cls.apply(*args) through cls.vmap at the innermost vmap level, or NotImplemented when an
    argument is batched at an outer level too (the slice fallback then handles it)."""
    level = _vmap.ACTIVE[-1]
    phys, in_dims = [], []
    for a in args:
        if isinstance(a, Tensor) and is_batched(a):
            p, levels = physical(a)
            if levels != (level,):
                return NotImplemented
            phys.append(p)
            in_dims.append(0)
        else:
            phys.append(a)
            in_dims.append(None)
    if all(d is None for d in in_dims):
        return NotImplemented
    info = VmapInfo(batch_size=SIZES[level], randomness=_vmap.RANDOMNESS[-1])
    result = cls.vmap(info, tuple(in_dims), *phys, **kwargs)
    if not (isinstance(result, tuple) and len(result) == 2):
        raise RuntimeError(f"{cls.__name__}.vmap must return a tuple (output, out_dims); got "
                           f"{type(result).__name__}")
    out, out_dims = result
    single = not isinstance(out, tuple)
    outs = (out,) if single else out
    dims = (out_dims,) * len(outs) if not isinstance(out_dims, tuple) else out_dims
    if len(dims) != len(outs):
        raise RuntimeError(f"{cls.__name__}.vmap returned {len(outs)} outputs but "
                           f"{len(dims)} out_dims")
    wrapped = []
    for o, d in zip(outs, dims):
        if d is None or not isinstance(o, Tensor):
            wrapped.append(o)
        else:
            wrapped.append(wrap(o.movedim(d, 0) if d else o, (level,)))
    return wrapped[0] if single else tuple(wrapped)
