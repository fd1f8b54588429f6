"""The ``meta`` device: tensors with a shape, dtype and requires_grad but no data.

NOTE [Meta tensors]
A meta tensor is an ordinary Tensor with ``_meta = True`` whose ``_data`` is a stand-in: a
zero-strided NumPy view of one element (``np.broadcast_to``), so it has the right shape and dtype
and costs no memory. Ops find out the shape and dtype of their result by running on the
stand-ins: while any meta tensor is alive, ``dispatch`` sits in the per-op hook slot that vmap
also uses (``_batch_hook`` in autograd/function.py, checked by every op anyway), so the ordinary
path pays nothing extra when no meta tensor exists. ``dispatch`` lets an op without meta
arguments through untouched, refuses a meta/CPU mix (0-d CPU tensors are scalars, allowed as in
torch), runs the op and turns its results into meta tensors. The result is computed once in
full on the stand-ins (transient memory of the output's size; the values are thrown away).
Code that reads ``_data`` outside an Op (NumPy fast paths) would see the stand-in, so those
entry points check ``_meta`` and raise (``refuse``) rather than return made-up values.
Live meta tensors are counted with weakref.finalize; the hook leaves the slot with the last one.
While one lives, CPU ops pay the hook's way out (a tiny add: 1.67 -> 1.92 us, load 1.1 on 2 cores)
and the NumPy fast paths vmap also turns off (small-batch Linear, fused attention) are off.
"""
from __future__ import annotations

import functools
import inspect
import weakref

import numpy as np

from ._backend import device

META = device("meta")
_live = [0]


def stand_in(shape, dtype):
    """A read-only zero-strided array of the given shape and NumPy dtype, one element big."""
    return np.broadcast_to(np.zeros((), dtype), tuple(shape))


def _release():
    from .autograd import function as F
    _live[0] -= 1
    if _live[0] == 0 and F._batch_hook[0] is dispatch:
        F._batch_hook[0] = None


def mark(t):
    """Make tensor t a meta tensor in place (its data becomes a stand-in); returns t."""
    from .autograd import function as F
    t._data = stand_in(t._data.shape, t._data.dtype)
    if not t.__dict__.get("_meta"):
        t._meta = True
        _live[0] += 1
        t._meta_fin = weakref.finalize(t, _release)
    if F._batch_hook[0] is None:
        F._batch_hook[0] = dispatch
    return t


def unmark(t):
    """Tensor t (whose data was just replaced by real storage) is no longer meta."""
    if t.__dict__.get("_meta"):
        t._meta = False
        t.__dict__.pop("_meta_fin")()


def current_hook():
    """What the op hook slot holds outside vmap: dispatch while meta tensors live."""
    return dispatch if _live[0] else None


def new(shape, dtype, requires_grad=False):
    """A fresh meta tensor of this shape and NumPy dtype."""
    from ._tensor import _make
    t = mark(_make(stand_in(shape, dtype)))
    if requires_grad:
        t.requires_grad_(True)
    return t


def to_meta(t):
    """t moved to the meta device (t itself if it is there already), as Tensor.to("meta")."""
    if t._meta:
        return t
    return new(t._data.shape, t._data.dtype, t._requires_grad and t._grad_fn is None)


def check_not_meta(t):
    """t itself, for a move to the CPU; a meta tensor has nothing to copy there."""
    if t._meta:
        raise NotImplementedError("Cannot copy out of meta tensor; no data! Please use "
                                  "to_empty() (Module) or empty_like(t, device='cpu') to get "
                                  "new storage on the CPU.")
    return t


def refuse(what):
    raise RuntimeError(f"{what}: not implemented for meta tensors in ember (a meta tensor holds "
                       "no data; this op has no meta implementation). Build the tensor on the "
                       "CPU, or move the module with to_empty(device='cpu') first.")


def refuses_meta(fn, name):
    """fn, raising for a meta first argument: ops whose result's shape depends on the data
    (nonzero, unique, ...), which the stand-in's values would make up."""
    @functools.wraps(fn)
    def op(input, *args, **kwargs):
        if getattr(input, "_meta", False):
            refuse(f"{name} (the size of its result depends on the data)")
        return fn(input, *args, **kwargs)
    op.__name__ = op.__qualname__ = name
    return op


def marks_meta(fn):
    """fn, whose tensor results are meta when its first argument is: for functions that
    compute on ``_data`` outside an Op, where the stand-in gives the right shape and dtype."""
    first = next(iter(inspect.signature(fn).parameters))  # may come by keyword: normal(mean=)

    @functools.wraps(fn)
    def op(*args, **kwargs):
        res = fn(*args, **kwargs)
        if getattr(args[0] if args else kwargs.get(first), "_meta", False):
            for r in (res if isinstance(res, tuple) else (res,)):
                if getattr(r, "_meta", True) is False:
                    mark(r)
        return res
    return op


def _tensors(args):
    from ._tensor import Tensor
    for a in args:
        if isinstance(a, Tensor):
            yield a
        elif isinstance(a, (list, tuple)):
            yield from (x for x in a if isinstance(x, Tensor))


def dispatch(cls, args, params):
    """The op hook while meta tensors live; see NOTE [Meta tensors]."""
    # the way out for ops without meta arguments comes first and stays cheap (~0.3 us): CPU
    # work done while a meta model is alive passes here for every op
    for a in args:
        if a.__class__ is tuple or a.__class__ is list:
            if any(getattr(x, "_meta", False) for x in a):
                break
        elif getattr(a, "_meta", False):
            break
    else:
        return NotImplemented
    from .autograd import function as F
    ts = list(_tensors(args))
    if any(isinstance(i, np.ndarray) and i.dtype == np.bool_
           for a in args if isinstance(a, tuple) for i in a):
        refuse(f"{cls.__name__} with a boolean mask (the result's size depends on the data)")
    for t in ts:
        if not t._meta and t._data.ndim:
            raise RuntimeError(f"{cls.__name__}: Tensor on device cpu is not on the expected "
                               f"device meta! (a CPU tensor of shape {tuple(t._data.shape)} "
                               "was mixed with meta tensors in one op)")
    F._batch_hook[0] = None
    try:
        res = cls._run(*args, **params)
    finally:
        F._batch_hook[0] = current_hook()
    for r in (res if isinstance(res, tuple) else (res,)):
        mark(r)
    return res
