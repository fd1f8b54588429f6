"""The replay of a call with graph breaks that split (NOTE [Graph breaks that split] in
segments.py): the function's Python runs, its ops are matched against the recording and
deferred, and each complete segment runs as one compiled graph."""
from __future__ import annotations

import sys
import threading

import numpy as np

from .. import _tensor
from ..autograd import function as _fn
from .capture import Recorder, SideEffect, _count_up, flatten, redraw
from .hooks import _ACTIVE, _HOOKS, _READS, Patches, _hook_into
from .runtime import _blas_enter, _blas_exit

_Tensor = _tensor.Tensor
_new = object.__new__


class SegmentedGraph:
    """A compiled call with graph breaks: its segments' compiled graphs and the recorded op
    sequence the replay matches (see NOTE [Graph breaks that split])."""

    def __init__(self, cap, backend, mode, name):
        from .backends import compile_capture
        self.script = cap.script
        self.kinds = cap.kinds
        self.ext = cap.ext
        self.consts = {s: cap.arrays[s] for s, k in enumerate(cap.kinds) if k[0] == "const"}
        self.in_slots = {k[1]: s for s, k in enumerate(cap.kinds) if k[0] == "in"}
        self.splits = cap.splits
        self.segments = cap.segments
        self.random = any(k[0] == "rand" for k in cap.kinds)
        self.state_calls = _state_calls(cap)
        self.ends = [seg.end for seg in self.segments]
        for i, seg in enumerate(self.segments):
            seg.graph = compile_capture(seg.cap, backend, mode, f"{name}_graph{i}")
            seg.cap = None
            keep = set(seg.outputs)
            seg.unreturned = [s for s in seg.defined if s not in keep]
        for inst in self.script:
            inst.node = None
            # the placeholders an op call gets: (slot, shape, dtype, requires_grad, strides or
            # None where np.empty's own layout is the recorded one)
            inst.plan = [(s, shape, dt, rg, None if _default_layout(shape, dt, st) else st)
                         for s, (shape, dt), rg, st in zip(inst.outs, inst.meta, inst.rg,
                                                           inst.strides, strict=True)]
        self.sources = [getattr(seg.graph, "sources", None) for seg in self.segments]
        # one BLAS thread count for the whole call when every segment asks for the same (NOTE
        # [BLAS threads in a replay] in runtime.py): set once, not around each segment's run,
        # and it covers the segments' backward too
        counts = {getattr(seg.graph, "blas_threads", None) for seg in self.segments}
        self.blas_threads = counts.pop() if len(counts) == 1 else None
        self.variants = [self]    # recordings of other paths (NOTE [Paths of a split call])
        self.want_variant = False
        self._prefix = {}
        self.hook_plan = None     # what install() did on the last call (_hook_into)

    segmented = True
    max_variants = 4

    def guard_ext(self):
        return all(seg.graph.guard_ext() for v in self.variants for seg in v.segments)

    def add_variant(self, other):
        other.variants = self.variants
        self.variants.append(other)

    def same_path(self, other):
        """Whether other recorded the same ops, cut at the same places."""
        return len(self.script) == len(other.script) and self.ends == other.ends and \
            all(_same_instr(x, y) for x, y in zip(self.script, other.script, strict=True))

    def same_prefix(self, other, n):
        """Whether other recorded the same first n ops, cut at the same places."""
        hit = self._prefix.get((id(other), n))
        if hit is None:
            hit = [e for e in self.ends if e <= n] == [e for e in other.ends if e <= n] and \
                len(other.script) > n and all(_same_instr(x, y) for x, y in zip(
                    self.script[:n], other.script[:n], strict=False))
            self._prefix[(id(other), n)] = hit
        return hit

    def call(self, fn, args, kwargs, inputs, stats):
        """Run ``fn`` with its ops deferred into the compiled segments."""
        from . import eval_frame
        rp = _Replay(self, inputs)
        eval_frame._local.depth = getattr(eval_frame._local, "depth", 0) + 1
        with Recorder._lock:  # the hooks are global: one replay or capture at a time
            blas = _blas_enter(self.blas_threads)
            try:
                rp.install()  # (inside: remove() undoes what a failing install did)
                result = fn(*args, **kwargs)
                rp.finish(result)
            finally:
                rp.remove()
                _blas_exit(blas)
                eval_frame._local.depth -= 1
        key = "diverged" if rp.eager else "hits"
        stats[key] = stats.get(key, 0) + 1
        if rp.eager:  # record the path this call took on one of the next calls
            self.want_variant = len(self.variants) < self.max_variants
        return result


# NOTE [Paths of a split call]
# A split call whose Python takes another branch after a break than the recorded one leaves the
# recorded path (the rest of that call runs eagerly). The next call is then recorded again, and
# its recording joins the first as a variant. At a segment start, an op that does not match the
# current recording is looked up in the variants that recorded the same ops up to there (same
# slots, same cuts): the replay switches to such a variant and stays compiled. Values the first
# recording's segments did not return but the variant's later segments read are recomputed from
# their segment's inputs (eagerly, once per call). At most ``max_variants`` recordings are kept.


# NOTE [A segment run ahead]
# Deferring an op costs a placeholder now and a fill later. When a segment's first op matches
# and every input of the segment is at hand (the function's inputs, earlier segments' results),
# the replay runs the compiled segment right there and hands its results out as Python calls
# the ops, each still matched against the recording; values the graph does not return get a
# placeholder that is recomputed if used (as after a deferred run). The ops are pure, so a
# result handed out is the one eager computes even if the call leaves the path later in the
# segment; what Python does mid-segment that could change what the later ops read (a
# backward(), an in-place write, a custom Function, a state update) leaves the path, as it
# does with deferred ops. A recording with random masks (dropout) defers instead: drawing
# the segment's masks up front would change the order of eager's draws if the call left the
# path. CPU time, busy machine, benchmarks/graph_break.py --cpu-time: this and the code-swap
# hooks took the call with one break from 0.76-0.84x eager to 0.96-1.00x.


def _same_instr(x, y):
    return x.cls is y.cls and x.outs == y.outs and x.params.keys() == y.params.keys() and \
        _same_refs(x.args, y.args) and _same_refs(list(x.params.values()),
                                                  list(y.params.values()))


def _same_refs(p, q):
    if len(p) != len(q):
        return False
    for r, t in zip(p, q, strict=True):
        if r[0] != t[0]:
            return False
        if r[0] == "k":  # NOTE [Sequences of values as op arguments] in capture.py
            if r[1] is not t[1] or not _same_refs(r[2], t[2]):
                return False
            continue
        a, b = r[1], t[1]
        if r[0] == "s" or not (isinstance(a, np.ndarray) or isinstance(b, np.ndarray)):
            try:
                if not (type(a) is type(b) and bool(a == b)):
                    return False
            except Exception:
                return False
        elif not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and
                  a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b)):
            return False
    return True


def _default_layout(shape, dtype, strides):
    arr = np.empty(shape, dtype)
    return arr.strides == strides or arr.size == 0


def _placeholder(shape, dtype, strides):
    """An uninitialised array of the recorded layout: Python that looks at strides
    (``contiguous()``, ``is_contiguous()``) then does what it did at capture."""
    arr = np.empty(shape, dtype)
    if arr.strides == strides or arr.size == 0:
        return arr
    lo = sum((n - 1) * st for n, st in zip(shape, strides, strict=True) if st < 0)
    hi = sum((n - 1) * st for n, st in zip(shape, strides, strict=True) if st > 0)
    buf = np.empty(hi - lo + dtype.itemsize, np.uint8)
    return np.ndarray(shape, dtype, buffer=buf, offset=-lo, strides=strides)


def _state_calls(cap):
    """(owner, name) of the calls that updated live state at capture (optimizer.step(),
    zero_grad(), BatchNorm's running statistics): the replay runs the complete segment before
    each, so the ops before it see the state it found at capture."""
    out = []
    for inst in cap.fwd:
        if not isinstance(inst, SideEffect) or inst.fn is _count_up:
            continue
        fn, name = inst.fn, inst.fn.__name__
        this = inst.args[0] if inst.args else None
        owner = next((c for c in type(this).__mro__ if c.__dict__.get(name) is fn), None)
        if owner is None:
            owner = sys.modules.get(fn.__module__)
        if owner is not None and name in owner.__dict__ and (owner, name) not in out:
            out.append((owner, name))
    return out


class _Miss(Exception):
    """The call left the recorded path."""


class _Replay:
    """One call of a SegmentedGraph: the hooks, the placeholders, the deferred ops."""

    def __init__(self, g, inputs):
        self.g = g
        self.k = 0             # current segment
        self.pos = 0           # next op of the script
        self.tensors = {}      # capture slot -> the tensor that stands for it in this call
        self.slot_of = {}      # id(tensor) -> capture slot
        self.pending = []      # (instr, args, params, placeholders) of the current segment
        self.lazy = set()      # ids of the placeholders of pending ops
        self.dead = {}         # id(placeholder never filled) -> its segment
        self.holders = {}      # id(placeholder array) -> its tensor
        self.out_dicts = []    # (this call's dict, the recorded one) of pending ops
        self.eager = False
        self.end = g.ends[0] if g.ends else -1  # script position where segment k ends
        self.ahead = None      # slot -> result of segment k, when it ran at its first op
        self.tid = threading.get_ident()
        self._patches = Patches()
        by_array = {}
        for j, t in enumerate(inputs):
            s = g.in_slots.get(j)
            s = by_array.setdefault(id(t._data), s) if s is not None else by_array.get(
                id(t._data))
            if s is not None:
                self.tensors.setdefault(s, t)
                self.slot_of[id(t)] = s

    # ------------------------------------------------------------------ ops
    def op(self, orig, cls, args, params):
        if self.eager:
            self._revive(args, params)
            return orig(cls, *args, **params)
        try:
            if self.pos == self.end:
                self._flush()
            script = self.g.script
            inst = script[self.pos] if self.pos < len(script) else None
            if inst is None or inst.cls is not cls or not self._match(inst, args, params):
                inst = self._next(cls, args, params)
        except _Miss:
            self.diverge()
            self._revive(args, params)
            return orig(cls, *args, **params)
        if self.ahead is None and not self.pending and not self.g.random:
            self._run_ahead()
        ready = self.ahead
        outs = []
        if ready is not None:  # hand out what the segment computed
            for s, shape, dtype, rg, strides in inst.plan:
                t = ready.get(s)
                if t is None:  # a value the graph does not return: computed again if used
                    t = self._stand_in(s, shape, dtype, rg, strides)
                    self.dead[id(t)] = self.k
                else:
                    self.tensors[s] = t
                    self.slot_of[id(t)] = s
                outs.append(t)
            if self.out_dicts:
                self._copy_out_dicts()
        else:  # defer
            for s, shape, dtype, rg, strides in inst.plan:
                t = self._stand_in(s, shape, dtype, rg, strides)
                self.lazy.add(id(t))
                outs.append(t)
            self.pending.append((inst, args, params, outs))
        self.pos += 1
        return tuple(outs) if inst.tuple_out else outs[0]

    def _stand_in(self, s, shape, dtype, rg, strides):
        """A placeholder tensor for slot s, filled when its segment runs (or recomputed)."""
        arr = np.empty(shape, dtype) if strides is None else _placeholder(shape, dtype, strides)
        t = _new(_Tensor)  # _tensor._make(arr), inlined: once per deferred op
        t._data = arr
        t._vc = [0]
        if rg:
            t._requires_grad = True
        self.holders[id(arr)] = t
        self.tensors[s] = t
        self.slot_of[id(t)] = s
        return t

    def _run_ahead(self):
        """At a segment's first op, when its inputs are at hand: run its compiled graph now and
        hand the results out op by op (NOTE [A segment run ahead])."""
        seg = self.g.segments[self.k]
        ins = []
        for s in seg.inputs:
            t = self.tensors.get(s)
            if t is None or id(t) in self.lazy:
                return
            ins.append(t)
        for t in ins:
            if id(t) in self.dead:
                self._recompute(self.dead[id(t)])
        self.ahead = dict(zip(seg.outputs, seg.graph.run(ins), strict=True))

    def _copy_out_dicts(self):
        for mine, recorded in self.out_dicts:
            mine.clear()
            mine.update(recorded)
        self.out_dicts.clear()

    def _next(self, cls, args, params):
        """The recorded op this call matches when the current recording's next op does not: one
        of another recording of the same path so far, at a segment start (NOTE [Paths of a split
        call]); else raise _Miss."""
        g, pos = self.g, self.pos  # (op() tried g.script[pos] already)
        if self.pending or self.ahead is not None:  # only at a segment's start
            raise _Miss
        for v in g.variants:
            if v is g or not g.same_prefix(v, pos) or v.script[pos].cls is not cls:
                continue
            self._use(v)
            if self._match(v.script[pos], args, params):
                return v.script[pos]
            self._use(g)
        raise _Miss

    def _use(self, g):
        """Follow recording g from here on (its segment ends may differ from the next one)."""
        self.g = g
        self.end = g.ends[self.k] if self.k < len(g.ends) else -1

    def _match(self, inst, args, params):
        refs = inst.args
        if len(args) != len(refs):
            return False
        slot_of = self.slot_of
        for a, r in zip(args, refs, strict=True):
            # the common cases first: a value of this call, the very constant recorded
            if r[0] == "s":
                if slot_of.get(id(a)) != r[1] and not self._same(a, r):
                    return False
            elif a is not r[1] and not self._same(a, r):
                return False
        if params or inst.params:
            if params.keys() != inst.params.keys():
                return False
            for k, r in inst.params.items():
                if not self._same(params[k], r):
                    return False
        return True

    def _same(self, a, r):
        if r[0] == "k":  # a sequence holding values: the call runs eagerly from here
            return False
        if r[0] == "c":
            v = r[1]
            if isinstance(v, np.ndarray):  # a promoted Python scalar, mostly: compare bytes
                return isinstance(a, np.ndarray) and a.shape == v.shape and \
                    a.dtype == v.dtype and (a.tobytes() == v.tobytes() if a.size <= 64 else
                                            np.array_equal(a, v, equal_nan=a.dtype.kind in "fc"))
            if a is v:
                return True
            if type(v) is dict and type(a) is dict:
                # an op's out-parameter (batch norm's batch statistics for the running-stat
                # update): the compiled segment fills the recorded one; copied after the run
                self.out_dicts.append((a, v))
                return True
            try:
                return type(a) is type(v) and bool(a == v)
            except Exception:
                return False
        s = r[1]
        if self.slot_of.get(id(a)) == s:  # the common case: a value of this call
            return True
        if isinstance(a, _tensor.Tensor):  # detach() or .data of one: the same array
            t = self.tensors.get(s)
            if t is not None and a._data is t._data:
                return True
        kind = self.g.kinds[s]
        if kind[0] == "ext":
            return a is self.g.ext[kind[1]]
        if kind[0] == "rand":
            return isinstance(a, np.ndarray)
        if kind[0] == "const":  # made by a factory in the call: the same values again
            v = self.g.consts[s]
            return isinstance(a, _tensor.Tensor) and id(a) not in self.slot_of and \
                a._data.shape == v.shape and a._data.dtype == v.dtype and \
                np.array_equal(a._data, v, equal_nan=v.dtype.kind in "fc")
        if isinstance(a, np.ndarray):  # an op handed a tensor's array (a target's indices)
            t = self.tensors.get(s)
            return t is not None and id(t) not in self.lazy and a is t._data
        return isinstance(a, _tensor.Tensor) and self.slot_of.get(id(a)) == s

    # ------------------------------------------------------------------ segments
    def _flush(self):
        if self.ahead is not None:  # it ran at its first op: only move on
            self.ahead = None
            self.k += 1
            self.end = self.g.ends[self.k] if self.k < len(self.g.ends) else -1
            return
        seg = self.g.segments[self.k]
        if self.pos != seg.end:
            raise _Miss
        try:
            ins = [self.tensors[s] for s in seg.inputs]
        except KeyError:
            raise _Miss from None
        for t in ins:  # read by this recording, not returned by the one that ran before
            if id(t) in self.dead:
                self._recompute(self.dead[id(t)])
        res = seg.graph.run(ins)
        self._copy_out_dicts()
        for s, r in zip(seg.outputs, res, strict=True):
            self._fill(self.tensors[s], r)
        for s in seg.unreturned:
            t = self.tensors.get(s)
            if t is not None:
                self.dead[id(t)] = self.k
        self.pending.clear()
        self.lazy.clear()
        self.k += 1
        self.end = self.g.ends[self.k] if self.k < len(self.g.ends) else -1

    def boundary(self):
        """Python is about to need values: run the complete segment, or leave the path."""
        if self.eager:
            return
        if self.ahead is not None:  # it ran already; state Python changes mid-segment would
            if self.pos != self.end:  # not reach the ops after this point: leave the path
                self.diverge()
            return
        if not self.pending:
            return
        try:
            self._flush()
        except _Miss:
            self.diverge()

    def diverge(self):
        """Run the deferred ops eagerly, in order; the rest of the call runs eagerly."""
        self.eager = True
        self.ahead = None
        self.out_dicts.clear()
        pending, self.pending = self.pending, []
        self.lazy.clear()
        for inst, args, params, outs in pending:
            args = [redraw(self.g.kinds[r[1]][1]) if r[0] == "s" and
                    self.g.kinds[r[1]][0] == "rand" else a for a, r in zip(args, inst.args,
                                                                            strict=True)]
            self._revive(args, params)
            res = self._orig_run(inst.cls, *args, **params)
            for t, r in zip(outs, res if inst.tuple_out else (res,), strict=True):
                self._fill(t, r)

    def _revive(self, args, params):
        """Compute placeholders a segment did not fill before an eager op reads them."""
        if not self.dead:
            return
        for a in (*args, *params.values()):
            if isinstance(a, _tensor.Tensor) and id(a) in self.dead:
                self._recompute(self.dead[id(a)])

    def _recompute(self, k):
        """Run segment k's ops eagerly from its inputs and fill its unfilled placeholders."""
        g = self.g
        seg = g.segments[k]
        env = {}

        def value(r):
            if r[0] == "c":
                return r[1]
            if r[0] == "k":  # the op received arrays there, not tensors
                return r[1](v._data if isinstance(v, _tensor.Tensor) else v
                            for v in map(value, r[2]))
            s = r[1]
            kind = g.kinds[s]
            if s in env:
                return env[s]
            if kind[0] == "ext":
                return g.ext[kind[1]]
            if kind[0] == "const":
                return _tensor._make(np.array(g.consts[s]))
            if kind[0] == "rand":
                return redraw(kind[1])
            return self.tensors[s]

        for inst in g.script[seg.start:seg.end]:
            res = self._orig_run(inst.cls, *[value(r) for r in inst.args],
                                 **{n: value(r) for n, r in inst.params.items()})
            env.update(zip(inst.outs, res if inst.tuple_out else (res,), strict=True))
        for s, r in env.items():
            t = self.tensors.get(s)
            if t is not None and self.dead.pop(id(t), None) is not None:
                self._fill(t, r)

    def _fill(self, t, r):
        """Placeholder t becomes result r (data and autograd history). A tensor Python made
        from the placeholder without an op (``detach()``, ``.data``) shares its array: then
        the values are copied into that array, which t keeps."""
        ph = t._data
        t.__dict__.clear()
        t.__dict__.update(r.__dict__)
        if sys.getrefcount(ph) > 2:  # ph and getrefcount's argument: other holders remain
            np.copyto(ph, r._data)
            t._data = ph
        else:
            self.holders.pop(id(ph), None)

    def read(self, t):
        t = self.holders.get(id(t._data), t)  # an alias of a placeholder reads through it
        if self.eager:
            if id(t) in self.dead:
                self._recompute(self.dead[id(t)])
            return
        if id(t) in self.lazy:
            self.boundary()
        if id(t) in self.dead:
            self._recompute(self.dead[id(t)])

    def finish(self, result):
        if not self.eager:
            if self.pos != len(self.g.script):
                self.diverge()
            else:
                self.boundary()
        if not self.dead:
            return
        flat = [result]
        if type(result) is not _tensor.Tensor:  # (a tensor, mostly)
            flat = []
            flatten(result, flat)
        for t in flat:
            if isinstance(t, _tensor.Tensor) and id(t) in self.dead:
                self._recompute(self.dead[id(t)])

    # ------------------------------------------------------------------ hooks
    def install(self):
        _ACTIVE[0] = self
        _fn._run_hooked[0] = True  # matmul's unrecorded fast path checks it
        p = self._patches = Patches()
        plan = self.g.hook_plan
        if plan:  # as the last call did, while what it hooked is still there
            undo = p.undo
            for d, name, holder, fn, code0, code, owner, attr in plan:
                if d.get(name) is not holder or (code is not None and fn.__code__ is not code0):
                    p.restore()  # something was replaced meanwhile: hook it again
                    break
                if code is not None:
                    undo.append((fn, "__code__", code0, True))
                    fn.__code__ = code
                else:
                    p.set(owner, name, attr)
            else:
                return
        plan = self.g.hook_plan = []
        _hook_into(p, plan, "run", _fn.Op, "_run")
        T = _tensor.Tensor
        for name in _READS:
            _hook_into(p, plan, "read", T, name)
        _hook_into(p, plan, "before", T, "backward")
        from .. import autograd
        from ..nn.functional import _dropout
        from ..ops import registry
        _hook_into(p, plan, "before", autograd, "backward")
        _hook_into(p, plan, "before_cls", _fn.Function, "apply")
        _hook_into(p, plan, "write", registry, "write_into")
        if self.g.random and hasattr(_dropout, "_keep_mask"):
            _hook_into(p, plan, "mask", _dropout, "_keep_mask")
        for owner, name in self.g.state_calls:  # optimizer.step() and the like
            _hook_into(p, plan, "before", owner, name)

    @property
    def _orig_run(self):
        """Op._run as it runs without the replay's hook."""
        return _HOOKS[("run", _fn.Op, "_run")][2]

    def remove(self):
        _ACTIVE[0] = None
        _fn._run_hooked[0] = False
        self._patches.restore()

    def before(self, a, k):
        """Run the complete segment (or leave the path) before a call that needs values."""
        self.boundary()
        for x in (*a, *k.values()):
            if isinstance(x, _tensor.Tensor) and id(x) in self.dead:
                self._recompute(self.dead[id(x)])
