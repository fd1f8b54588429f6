"""``get_total_norm`` and ``clip_grads_with_norm_`` inside a compiled training step.

NOTE [Gradient-norm calls in a captured step]
``clip_grad_norm_(model.parameters(), ...)`` is replayed as an opaque call with the parameters
it was given (NOTE [Training-step capture] in train_step.py). Its two halves, used directly::

    norm = get_total_norm([p.grad for p in model.parameters()])
    clip_grads_with_norm_(model.parameters(), 1.0, norm)

receive gradient tensors and a norm the call itself computes, which an opaque call with fixed
arguments cannot repeat: ``zero_grad()`` drops the ``.grad`` tensors and the backward makes new
ones every step. So while a capture runs, these calls are recorded as a ``LiveCall``: each
tensor argument that is the ``.grad`` of a parameter or input is replaced by "that tensor's
current ``.grad``", one that is a value of the capture by that value at replay, and the call is
made again at the same point of each replay (its result, the norm, is a value of the replay).
An argument the replay cannot rebuild this way is a graph break, as before.
"""
from __future__ import annotations

import sys
import threading
import types

from .. import _tensor
from .capture import SideEffect


class LiveCall(SideEffect):
    """A call replayed with arguments rebuilt at each replay: ``args`` holds ("grad", tensor),
    ("slot", s) or ("value", v) per argument; ``out`` the slot of its Tensor result, if any."""

    def __init__(self, fn, args, kwargs, out):
        super().__init__(fn, args, kwargs)
        self.out = out

    @property
    def inputs(self):
        return [("s", s) for s in _slots(self._all())]

    def _all(self):
        return list(self.args) + list(self.kwargs.values())

    @property
    def outputs(self):
        return [] if self.out is None else [self.out]

    def emit(self, e):
        values = ", ".join(e.val(s) for s in _slots(self._all()))
        call = f"{e.const(self.run, 'S')}(({values}{',' if values else ''}))"
        if self.out is None:
            e.lines.append(f"{call}  # {self.fn.__name__}")
            return
        e.lines.append(f"v{self.out} = _A({call}._data)  # {self.fn.__name__}")
        e.defined.add(self.out)

    def run(self, arrays):
        it = iter(arrays)
        args = [_rebuild(a, it) for a in self.args]
        kwargs = {k: _rebuild(a, it) for k, a in self.kwargs.items()}
        return self.fn(*args, **kwargs)


def _slots(args):
    out = []
    for a in args:
        if isinstance(a, list):
            out.extend(_slots(a))
        elif a[0] == "slot":
            out.append(a[1])
    return out


def _rebuild(a, it):
    if isinstance(a, list):
        return [_rebuild(x, it) for x in a]
    if a[0] == "grad":
        return a[1].grad
    if a[0] == "slot":
        return _tensor._make(next(it))
    return a[1]


def _describe(rec, x, owners):
    """How the replay finds argument x again, or None."""
    if isinstance(x, _tensor.Tensor):
        owner = owners.get(id(x))
        if owner is not None:
            return ("grad", owner)
        s = rec.slots.get(id(x._data))
        if s is not None and rec.cap.kinds[s][0] != "ext":  # an input or a computed value
            return ("slot", s)
        if s is not None or rec.made.get(id(x._data)) is None:
            return ("value", x)  # a parameter or input: read live
        return None
    if isinstance(x, (list, tuple)) and not isinstance(x, _tensor.Tensor):
        items = [_describe(rec, v, owners) for v in x]
        return None if any(i is None for i in items) else items
    if isinstance(x, (bool, int, float, str, type(None))):
        return ("value", x)
    return None


def _grad_owners(rec):
    """id(p.grad) -> p for the parameters and inputs the capture has seen."""
    seen = list(rec.cap.ext) + list(getattr(rec, "inputs", ()))
    return {id(p.grad): p for p in seen if isinstance(p, _tensor.Tensor) and p.grad is not None}


def _hook(rec, f):
    """Route calls of f to a recorder while the capture runs (its code object is swapped for a
    forwarder, since programs import it by name; see NOTE [Tensor creation hook])."""
    orig = types.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__,
                              f.__closure__)
    orig.__kwdefaults__ = f.__kwdefaults__

    def call(*args, **kwargs):
        if rec.depth or threading.get_ident() != rec.tid or rec.phase != "fwd":
            return orig(*args, **kwargs)
        args = [list(a) if isinstance(a, types.GeneratorType) or type(a).__name__ in (
            "generator", "filter", "map") else a for a in args]
        owners = _grad_owners(rec)
        described = [_describe(rec, a, owners) for a in args]
        described_kw = {k: _describe(rec, v, owners) for k, v in kwargs.items()}
        if any(d is None for d in described + list(described_kw.values())):
            rec.graph_break(f"{f.__name__}() with arguments the replay cannot rebuild (a tensor "
                            "that is neither a parameter's .grad nor a value of the call)")
            return orig(*args, **kwargs)
        rec.depth += 1
        try:
            out = orig(*args, **kwargs)
        finally:
            rec.depth -= 1
        slot = None
        if isinstance(out, _tensor.Tensor):
            slot = rec.new_slot(out._data, ("call", len(rec.cap.fwd)))
        rec.cap.fwd.append(LiveCall(orig, described, described_kw, slot))
        return out

    name = f"_compile_live_{f.__name__}"
    src = f"def {f.__name__}(*args, **kwargs):\n    return {name}(*args, **kwargs)\n"
    ns = {}
    exec(compile(src, f.__code__.co_filename, "exec"), f.__globals__, ns)
    rec._patch(sys.modules[f.__module__], name, call)
    rec._restore.append((f, "__defaults__", f.__defaults__, True))
    rec._restore.append((f, "__kwdefaults__", f.__kwdefaults__, True))
    rec._restore.append((f, "__code__", f.__code__, True))
    f.__code__ = ns[f.__name__].__code__
    f.__defaults__ = f.__kwdefaults__ = None


def install(rec):
    from ..nn.utils import clip_grad
    for f in (clip_grad.get_total_norm, clip_grad.clip_grads_with_norm_):
        _hook(rec, f)
