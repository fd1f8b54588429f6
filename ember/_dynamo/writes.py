"""In-place writes in a compiled call: recorded, replayed in order, guarded.

NOTE [In-place writes in a compiled call]
A compiled function may write into tensors that live outside it -- a module's buffers (a KV
cache: ``k_cache[:, :, input_pos] = k``), its arguments, closure or global tensors -- with
setitem or an in-place op (``copy_``, ``index_put_``, ``fill_``, ``add_``, ...) while nothing
records autograd (no_grad, or no operand requires grad). The recorder sees each such write at
the two places eager makes it: ``ops/indexing.store`` (setitem without autograd: the key and the
value) and ``ops/registry.write_into`` (an in-place op's result copied into the tensor; its
code is swapped, as ``_make``'s, since creation.py and random.py import it by name). Each
becomes a ``Write`` item at its point in the forward; the replay makes the same write into the
live memory (``E[k]._data`` of an external tensor, ``I[k]`` of an argument, or the replayed
view of one of them: views made by ops share the outside tensor's version counter, which is how
a target is told from a value the call computes) and bumps that tensor's version counter, as
eager does. Later ops of the replay read the same arrays, so they see the written values; the
next call reads the memory as it is then, never a copy from the capture.

A write into a value the call computes (an op's output: ``out += identity``, ``x.relu_()``,
``y[mask_idx] = 0``) is made functional when no other value of the graph shares its memory (no
view of it, not a view of another): the tensor's slot is bound to a new value from then on.
apply_inplace's result is a fresh value no one else holds, so with the same shape and dtype the
slot is simply rebound to it (autograd included: its snapshot is the old value, and the replay
never overwrites that); any other write copies the old value into a fresh array (an Overwrite,
below) and writes into that. Either new array belongs to that tensor alone (unless a backward
saved a rebound result), so later writes into it or into views made after the first write go
into it as into an Overwrite's: views made after a write see the later ones, as in eager.
A write into anything else stays a graph break: into a value that shares memory with another,
into a tensor made by NumPy outside ops, a write that records autograd other than an in-place
op's rebinding (a view written with autograd, setitem through a basic key), or a write in a call
that also splits at a graph break (its Python re-runs each call, which the writes here do not
expect). One case of a tensor made in the call is kept: a factory tensor no op has read yet.
Written whole (``empty_like(p).exponential_()``, ``zeros(n).fill_(v)``) it becomes an
``Overwrite`` op, a fresh array holding the value in each replay; written in part (``mask =
zeros(n); mask[idx] = 1``) its contents are overwritten into a fresh array first, and that
array (and views of it) then takes writes as an outside tensor does, without a version bump. Random
samplers draw through a ``RandArray`` recipe, so each replay draws again from the same
generator, in eager's order.

Guards: the replay writes into the tensor objects seen at capture, so each written external
tensor must still be what the program reaches. The state guard (NOTE [Guards on Python state]
in guards.py) checks every outside tensor it reaches from the function and the non-tensor
arguments by identity (``model.layers[0].attention.kv_cache._buffers['k_cache'] is <tensor>``):
a tensor replaced (``module.k_cache = new``, or a whole ``KVCache`` module replaced) fails it
and the call is captured again. A written tensor that walk does not reach is a graph break
here (``finish``). A buffer whose memory is reallocated in place (``t.data = ...``) is read live
(``E[k]._data``), and a new shape or dtype fails the shape guard. Index tensors are values of
the graph; their dtype is in the input key.
"""
from __future__ import annotations

import threading

import numpy as np

from .. import _tensor
from ..autograd import function as _fn
from .capture import RandArray, SideEffect, ref_slots
from .hooks import forwarder, original

_SAMPLERS = ("uniform_", "normal_", "bernoulli_", "random_", "exponential_", "geometric_",
             "log_normal_", "cauchy_")
# factories whose tensor may share memory with the caller's array
_SHARING = {"as_tensor", "from_numpy", "asarray", "_wrap"}


class Overwrite(_fn.Op):
    """A tensor made in the call by a factory and written whole before any read: a fresh array
    holding the value (see NOTE [In-place writes in a compiled call])."""

    @staticmethod
    def forward(ctx, value, shape, dtype):
        out = np.empty(shape, dtype)
        np.copyto(out, value, casting="unsafe")
        return out


class _NoBump:
    """The owner of a tensor made in the call (its version counter is not kept)."""

    _vc = [0]


def _copy_into(dst, value, owner):
    np.copyto(dst, value, casting="unsafe")
    owner._vc[0] += 1


def _store_into(dst, key, value, owner):
    from ..ops.indexing import write_at
    write_at(dst, key, value)
    owner._vc[0] += 1


class Write(SideEffect):
    """One write into an outside tensor: ``target[key] = value`` (setitem) or the whole target
    set to ``value`` (an in-place op). ``holder``: ("ext"|"in", k), the outside tensor whose
    version counter the write bumps, or ("own", None) for a tensor an Overwrite made; refs as
    in capture.Instr."""

    fn = None

    def __init__(self, name, target, key, value, holder, shape):
        self.name, self.target, self.key, self.value = name, target, key, value
        self.holder, self.shape = holder, shape
        self.cls = type(name, (), {})
        self.args, self.kwargs = (), {}

    @property
    def inputs(self):
        refs = [("s", self.target), self.value] + ([self.key] if self.key else [])
        return [("s", s) for r in refs for s in ref_slots(r)]

    def what(self):
        kind = {"in": "an argument", "ext": "an outside tensor",
                "own": "a tensor made in the call"}[self.holder[0]]
        return f"{self.name} into {kind} of shape {list(self.shape)}"

    def emit(self, e):
        kind, k = self.holder
        # a tensor made in the call is a new one at each replay: no version to bump
        owner = f"E[{k}]" if kind == "ext" else f"T[{k}]" if kind == "in" else "_NOBUMP"
        e.glob["_NOBUMP"] = _NoBump
        dst, value = e.val(self.target), e.ref(self.value)
        if self.key is None:
            e.lines.append(f"{e.const(_copy_into, 'W')}({dst}, {value}, {owner})  # {self.name}")
        else:
            e.lines.append(f"{e.const(_store_into, 'W')}({dst}, {e.ref(self.key)}, {value}, "
                           f"{owner})  # {self.name}")

    def graph_node(self, g, ref):
        """The write as a node of an ember.fx graph (graph.py), on tensors."""
        key = None if self.key is None else ref(self.key)
        g.call_function(write_tensor, (ref(("s", self.target)), key, ref(self.value),
                                       self.name))


def write_tensor(t, key, value, name):
    """A graph module's write (a node target): eager's own write into tensor t."""
    from ..ops import indexing, registry
    v = value._data if isinstance(value, _tensor.Tensor) else value
    if key is None:
        registry.write_into(t, np.asarray(v), name)
        return
    k = tuple(x._data if isinstance(x, _tensor.Tensor) else x for x in key)
    indexing.store(t, k, v, ())


# ------------------------------------------------------------------------------- recording
def _holder(rec, s, t):
    """("ext"|"in", k) of the outside tensor a write into slot s (tensor t) goes to,
    ("own", None) for a tensor an Overwrite made, or None."""
    kind = rec.cap.kinds[s]
    if kind[0] in ("ext", "in"):
        return kind[:2]
    if kind[0] != "op":
        return None
    if id(t._vc) in rec.own_vcs:  # an Overwrite's fresh array, or a view of one
        return ("own", None)
    # a view an op made of an outside tensor shares its version counter
    for k, x in enumerate(rec.cap.ext):
        if x._vc is t._vc:
            return ("ext", k)
    for k, x in enumerate(rec.inputs):
        if x._vc is t._vc:
            return ("in", k)
    return None


def _fresh(rec, t):
    """t was made in the call by a factory that allocates (not one wrapping the caller's
    memory, as from_numpy) and no op has read it yet."""
    from .capture import _CONST_FACTORIES
    made = rec.made.get(id(t._data))
    return made is not None and made[0] in _CONST_FACTORIES and made[0] not in _SHARING and \
        id(t._data) not in rec.slots


def _computed(rec, t):
    """The slot of t when t is a value the call computes (an op's output, rebound by earlier
    functional writes) that shares memory with no other value of the graph; else None."""
    s = rec.slots.get(id(t._data))
    if s is None or rec.cap.kinds[s][0] != "op" or t._meta:
        return None
    arr = t._data
    for s2 in rec.owner_slots.get(id(arr if arr.base is None else arr.base), ()):
        other = rec.cap.arrays[s2]
        if other is not arr and np.may_share_memory(other, arr):
            return None  # a view of it, or it a view of another value
    if any(x._vc is t._vc for x in rec.cap.ext) or any(x._vc is t._vc for x in rec.inputs):
        return None  # a view of an outside tensor: a Write into that tensor (_holder)
    return s


def record_write(rec, t, name, value, key=None, torch_key=()):
    """Record a write into tensor t (value: an array or tensor; key: NumPy's key for setitem,
    None for a whole write). A write the replay cannot make is a graph break."""
    if t._meta:
        rec.graph_break(f"in-place op {name} on a meta tensor")
        return
    if _fresh(rec, t):
        if key is None:
            _overwrite(rec, t, value)
            return
        # a partial write: the factory's contents become a fresh array of each replay first
        _overwrite(rec, t, np.array(t._data, copy=True))
    elif not t._requires_grad and id(t._vc) not in rec.own_vcs and \
            _computed(rec, t) is not None:
        # a value the call computes: a fresh copy of it from here on (NOTE above)
        rec.resolve_tensor(t)  # (its version is noted before the write)
        if key is None:
            _overwrite(rec, t, value)
            rec.bumps[id(t._vc)] = rec.bumps.get(id(t._vc), 0) + 1
            return
        _overwrite(rec, t, t)
    s = None
    if id(t._data) in rec.slots or id(t._data) not in rec.made:
        # (an outside tensor may be first seen here; its version is noted before the write)
        s = rec.resolve_tensor(t)
    holder = None if s is None else _holder(rec, s, t)
    if holder is None:
        rec.graph_break(f"in-place write ({name}): a tensor the call computes is modified in "
                        "place; only writes into arguments, buffers, closure or global tensors "
                        "are replayed")
        return
    for x in torch_key:  # index tensors: values of the graph
        rec.resolve_tensor(x)
    vref = rec.resolve(value)
    kref = None if key is None else rec.resolve(key)
    if kref is not None and kref[0] == "c" and any(isinstance(x, np.ndarray) and x.ndim
                                                   for x in key):
        return  # resolve broke the graph: an index array that is not a value of the graph
    rec.cap.fwd.append(Write(name, s, kref, vref, holder, t._data.shape))
    rec.bumps[id(t._vc)] = rec.bumps.get(id(t._vc), 0) + 1


def _overwrite(rec, t, value):
    vref = rec.resolve(value)
    arr = t._data
    inst = _instr(Overwrite, [vref], {"shape": ("c", arr.shape), "dtype": ("c", arr.dtype)},
                  arr)
    idx = len(rec.cap.fwd)
    inst.outs = [rec.new_slot(arr, ("op", idx))]
    rec.tensors[inst.outs[0]] = t
    rec.cap.fwd.append(inst)
    rec.own_vcs.add(id(t._vc))


def _instr(cls, args, params, arr):
    from .capture import Instr
    inst = Instr(cls, args, params, [], (), False, [(arr.shape, arr.dtype)])
    inst.rg = (False,)
    inst.strides = (arr.strides,)
    return inst


def _draw(shape, dtype, draw, generator, args, kwargs):
    """A sampler's values (a RandArray recipe's first step: the shape first, as a dropout
    mask's, so that symbolic.py rewrites it at other sizes)."""
    from ..ops.random import _gen
    return draw(_gen(generator), shape, dtype, *args, **kwargs).astype(dtype)


def install(rec):
    """The recorder's hooks for writes (see NOTE [In-place writes in a compiled call])."""
    from ..ops import indexing, random, registry
    wi = registry.write_into
    orig_write = original(wi)

    def write_into(a, k):
        t, arr, name = _args3(*a, **k)
        if rec.depth or threading.get_ident() != rec.tid or rec.phase != "fwd":
            return orig_write(t, arr, name)  # (in a backward: its version bump breaks)
        record_write(rec, t, name, arr)
        rec.depth += 1  # its version bump is recorded with the write
        try:
            return orig_write(t, arr, name)
        finally:
            rec.depth -= 1

    rec._patches.swap(wi, forwarder(wi, write_into, "capture_write_into"))
    orig_store = indexing.store

    def store(t, k, value, key):
        if rec.depth or threading.get_ident() != rec.tid:
            return orig_store(t, k, value, key)
        if rec.phase == "fwd":
            record_write(rec, t, "__setitem__", value, k, indexing._tensors_in(key))
        else:
            rec.graph_break("__setitem__ in a backward")
        rec.depth += 1  # its version bump is recorded with the write
        try:
            return orig_store(t, k, value, key)
        finally:
            rec.depth -= 1

    rec._patch(indexing, "store", store)
    _hook_rebinding(rec, registry)
    T = _tensor.Tensor
    for name in _SAMPLERS:
        _hook_sampler(rec, T, name, getattr(random, name))


def _hook_rebinding(rec, registry):
    """apply_inplace on a value the call computes: its snapshot stands for the old value and
    its result becomes the tensor's value (NOTE [In-place writes in a compiled call])."""
    orig_snapshot, orig_store = registry._snapshot, registry._store_result

    def active():
        return not rec.depth and threading.get_ident() == rec.tid and rec.phase == "fwd"

    def snapshot(t):
        snap = orig_snapshot(t)
        s = _computed(rec, t) if active() else None
        if s is not None:
            rec.slots[id(snap._data)] = s
        return snap

    def store_result(t, res, name):
        s = _computed(rec, t) if active() else None
        r = rec.slots.get(id(res._data))
        if s is None or r is None or rec.cap.kinds[r][0] != "op" or \
                res._data.shape != t._data.shape or res._data.dtype != t._data.dtype or \
                np.may_share_memory(res._data, t._data):
            return orig_store(t, res, name)  # (write_into's hook records or breaks)
        rec.resolve_tensor(t)  # (its version is noted before the write)
        rec.slots[id(t._data)] = r
        rec.bumps[id(t._vc)] = rec.bumps.get(id(t._vc), 0) + 1
        rec.rebound = True
        if not res._requires_grad:
            # the result's array is the tensor's own (nothing saved it for a backward): later
            # writes into it and its views go there, as into an Overwrite's
            rec.own_vcs.add(id(t._vc))
        rec.depth += 1  # eager's copy and version bump, unrecorded
        try:
            return orig_store(t, res, name)
        finally:
            rec.depth -= 1

    rec._patch(registry, "_snapshot", snapshot)
    rec._patch(registry, "_store_result", store_result)


def _args3(t, arr, name):
    return t, arr, name


def _hook_sampler(rec, T, name, draw):
    orig = T.__dict__[name]

    def sampler(self, *args, generator=None, **kwargs):
        if rec.depth or threading.get_ident() != rec.tid or rec.phase != "fwd":
            return orig(self, *args, generator=generator, **kwargs)
        from ..ops import registry
        if any(isinstance(v, _tensor.Tensor) for v in list(args) + list(kwargs.values())):
            rec.graph_break(f"{name}() with a tensor argument (a replay would draw with the "
                            "captured tensor)")
            return orig(self, *args, generator=generator, **kwargs)
        registry.check_inplace(self, name)
        recipe = ((_draw, (self._data.shape, self._data.dtype, draw, generator, args,
                           kwargs)),)
        values = _draw(*recipe[0][1]).view(RandArray)
        values.recipe = recipe
        registry.write_into(self, values, name)
        return self

    sampler.__name__ = name
    rec._patch(T, name, sampler)


def finish(rec, fn, flat):
    """After the call: writes in a call that splits are a break, and so is a write into an
    outside tensor the state guard cannot reach."""
    writes = [x for x in rec.cap.fwd if isinstance(x, Write)]
    if rec.cap.splits and (writes or rec.rebound or any(
            getattr(x, "cls", None) is Overwrite for x in rec.cap.fwd)):
        # a split call's Python runs again at each call, writes included
        rec.graph_break("an in-place write in a call that also has a graph break (writes "
                        "are replayed only in a whole graph)", "<in-place write>")
        return
    if not writes:
        return
    targets = {id(rec.cap.ext[k]): k for kind, k in (w.holder for w in writes)
               if kind == "ext"}
    if not targets:
        return
    # the state guard (guards.py) checks each outside tensor it reaches by identity; a
    # written one it cannot reach could be replaced unseen, and written in its old memory
    from .guards import walk
    roots = [fn] + [v for v in flat if not isinstance(v, _tensor.Tensor)]
    found = {id(v[1]) for v in walk(roots, [rec.cap.ext[k] for k in targets.values()]).values()
             if v[0] == "is"}
    missing = [k for i, k in targets.items() if i not in found]
    if missing:
        shape = list(rec.cap.ext[missing[0]]._data.shape)
        rec.graph_break(f"an in-place write into a tensor of shape {shape} that ember cannot "
                        "find from the function's arguments, closure or globals, so it cannot "
                        "guard against its replacement", "<in-place write>")
