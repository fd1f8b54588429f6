"""Graph breaks that split a compiled call into graphs, and the replay that runs them.

NOTE [Graph breaks that split]
torch compiles the code before a graph break and the code after it as separate graphs: the
break itself (``if loss.item() > 10:``, ``print(h)``) runs in Python between them. ember's
compiler records one eager run and replays it without running the function's Python, so it
cannot resume a function midway. Instead, a call with such breaks runs the function's Python
at every call, but its ops do not run one by one ("lazy segments"):

* Capture. A break the call can continue past -- Python reading a value the graph computes
  (``item()`` used by Python, ``bool``/``float``/``int``, ``tolist``, ``numpy``, printing or
  formatting a tensor), and a ``backward()`` after such a break -- is a *split*: the recorder
  notes where in the op sequence it happened and which values Python read there. After the
  call the recorded ops are cut at the splits (and at the calls that update live state:
  ``optimizer.step()``, ``zero_grad()``, BatchNorm's running statistics, which then run in
  Python) into segments. Each segment becomes an ordinary capture (its inputs: the function's
  inputs and earlier segments' values; its outputs: the values that later segments, a split's
  read or the return value use), gets its own backward walk, and is compiled like any graph.
* Replay. The function runs; every op call is matched against the next recorded op (class,
  arguments by identity or value) and returns a placeholder tensor of the recorded shape and
  dtype instead of computing. When Python needs a value (a read, backward, a state update, the
  return) the segment is complete and runs as one compiled replay; its outputs fill the
  placeholders (data and autograd node), so the backward of a training step runs each
  segment's compiled backward through the engine.
* A call that leaves the recorded path (another branch of an ``if``, a different scalar
  argument, an op the capture did not see) runs the ops deferred so far eagerly, in order, and
  the rest of the call eagerly: results stay eager's; ``stats["diverged"]`` counts such calls,
  and a later call on that path is recorded as a second path (NOTE [Paths of a split call]).
  A placeholder a compiled segment did not fill (a value not used later at capture) is
  recomputed from the segment's inputs if such a call uses it.

What still runs the whole call eagerly (as before): breaks that produce values the recorder
cannot replay (NumPy code, custom autograd.Function, in-place writes outside ops), a split after
a ``backward()`` recorded inline, and clip_grad_norm_ in a split call.
"""
from __future__ import annotations

import dataclasses
import sys
import threading

import numpy as np

from .. import _tensor
from ..autograd import function as _fn
from .capture import Capture, Instr, Recorder, SideEffect, _count_up, flatten, redraw


@dataclasses.dataclass
class Segment:
    """Recorded ops ``script[start:end]`` of a split call, compiled as one graph."""

    start: int
    end: int
    inputs: list      # capture slots passed in (function inputs, earlier segments' values)
    outputs: list     # capture slots it returns
    defined: list     # capture slots its ops make
    cap: object = None
    graph: object = None


def split_backward(rec, loss, gradient, retain_graph, create_graph, inputs):
    """``backward()`` after a split: a split itself; the engine runs it (the graph is kept for
    the segments' backward walks). Returns True: the call is handled."""
    slots = [rec.slots[id(t._data)] for t in (loss, gradient)
             if isinstance(t, _tensor.Tensor) and id(t._data) in rec.slots]
    rec.split("backward() after a graph break runs in the autograd engine, through each "
              "graph's compiled backward", slots)
    rec.depth += 1
    try:
        loss.backward(gradient, True, create_graph, inputs=inputs)
    finally:
        rec.depth -= 1
    return True


def split_capture(rec, outs):
    """Cut ``rec.cap`` at its splits into ``cap.segments`` (or record a break that makes the
    whole call eager)."""
    from .grad_calls import LiveCall
    from .train_step import CallOut, InlineBackward
    cap = rec.cap
    for inst in cap.fwd:
        if isinstance(inst, (CallOut, InlineBackward, LiveCall)):
            cap.breaks.append((f"{inst.cls.__name__}() in a call with a graph break", "<split>"))
            return
    done = {pos for pos, *_ in cap.splits}
    for pos, where, slot in rec.item_reads:  # each item() read is a break once one exists
        if pos not in done:
            cap.splits.append((pos, "data-dependent Python: Tensor.item() in a call with a "
                               "graph break", where, (slot,)))
    cap.splits.sort(key=lambda s: s[0])
    script, at = [], []  # Instr items; script position of each forward position
    cuts = set()
    for inst in cap.fwd:
        at.append(len(script))
        if isinstance(inst, Instr):
            script.append(inst)
        elif not (isinstance(inst, SideEffect) and inst.fn is _count_up):
            cuts.add(len(script))  # a state update runs in Python between graphs
    at.append(len(script))
    cuts.update(at[pos] for pos, *_ in cap.splits)
    bounds = sorted({0, len(script)} | cuts)
    pos_of = {id(inst): j for j, inst in enumerate(script)}
    fwd_pos = [pos_of.get(id(inst)) for inst in cap.fwd]

    def defined_at(s):  # script position of the op that made slot s, or None
        kind = cap.kinds[s]
        return fwd_pos[kind[1]] if kind[0] in ("op", "saved", "attr") and kind[1] >= 0 else None

    uses = {}  # slot -> last script position that reads it (len(script): after the call)
    for j, inst in enumerate(script):
        for r in (*inst.args, *inst.params.values()):
            if r[0] == "s":
                uses[r[1]] = j
    for pos, _, _, slots in cap.splits:
        for s in slots:
            uses[s] = max(uses.get(s, -1), at[pos])
    for o in cap.outputs:
        s = o if isinstance(o, int) else o[1] if o[0] == "item" else None
        if s is not None:
            uses[s] = len(script)
    cap.segments = []
    for a, b in zip(bounds, bounds[1:], strict=False):
        if a == b:
            continue
        defined = [s for s in range(len(cap.kinds))
                   if cap.kinds[s][0] == "op" and defined_at(s) is not None
                   and a <= defined_at(s) < b]
        outputs = [s for s in defined if uses.get(s, -1) >= b]
        seg = Segment(a, b, [], outputs, defined)
        seg.cap = _sub_capture(rec, script, seg, defined_at)
        cap.segments.append(seg)
        if seg.cap.breaks:
            cap.breaks.extend(seg.cap.breaks)
            return
    cap.script = script


def _sub_capture(rec, script, seg, defined_at):
    """The Capture of one segment (slots renumbered), with its backward recorded."""
    cap = rec.cap
    sub = Capture()
    remap = {}

    def add(s, kind):
        remap[s] = len(sub.kinds)
        sub.kinds.append(kind)
        sub.arrays.append(cap.arrays[s])

    refs = [r[1] for inst in script[seg.start:seg.end]
            for r in (*inst.args, *inst.params.values()) if r[0] == "s"]
    refs = list(dict.fromkeys(refs))
    for s in refs:  # inputs first: the generated code reads them as I[k]
        kind = cap.kinds[s]
        if kind[0] == "in" or (defined_at(s) is not None and defined_at(s) < seg.start):
            add(s, ("in", len(seg.inputs)))
            seg.inputs.append(s)
    ext = {}
    for s in refs:
        kind = cap.kinds[s]
        if s in remap:
            continue
        if kind[0] == "ext":
            t = cap.ext[kind[1]]
            if id(t) not in ext:
                ext[id(t)] = len(sub.ext)
                sub.ext.append(t)
            add(s, ("ext", ext[id(t)]))
        elif kind[0] in ("const", "rand"):
            add(s, kind)
    for s, kind in enumerate(cap.kinds):  # what the segment's ops make and keep for backward
        j = defined_at(s)
        if j is not None and seg.start <= j < seg.end:
            add(s, (kind[0], j - seg.start, *kind[2:]))

    def ref(r):
        return ("s", remap[r[1]]) if r[0] == "s" else r

    for inst in script[seg.start:seg.end]:
        sub.fwd.append(dataclasses.replace(
            inst, args=[ref(r) for r in inst.args],
            params={k: ref(v) for k, v in inst.params.items()},
            outs=[remap[s] for s in inst.outs]))
    sub.outputs = [remap[s] for s in seg.outputs]
    sub.out_spec = (tuple, ("T",) * len(sub.outputs))
    sub.n_inputs = len(seg.inputs)
    _walk_segment(rec, sub, seg)
    return sub


def _walk_segment(rec, sub, seg):
    """Record the segment's backward (NOTE [Backward capture] in trace.py) from its nodes."""
    from .trace import _walk_backward
    for inst in sub.fwd:
        node = inst.node
        if node is None:
            continue
        # the walk only records which ops run; a parameter updated later in the call (by
        # optimizer.step()) must not stop it with the version check of eager's backward
        node._guards = ()
        for s in node._saved if isinstance(node._saved, list) else ():
            if s is not None and s.vc is not None:
                s.version, s.checksum = s.vc[0], None
    inputs = [rec.inputs[cap_kind[1]] if cap_kind[0] == "in" else rec.tensors[s]
              for s, cap_kind in ((s, rec.cap.kinds[s]) for s in seg.inputs)]
    outs = [rec.tensors[s] for s in seg.outputs]
    walker = Recorder(False)
    walker.cap = sub
    walker.inputs = inputs
    for s, arr in enumerate(sub.arrays):
        walker.slots.setdefault(id(arr), s)
    with Recorder._lock:
        walker.install()
        try:
            _walk_backward(walker, inputs, outs)
        finally:
            walker.remove()


# ---------------------------------------------------------------------------- replay
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
        for inst in self.script:
            inst.node = None
        self.sources = [getattr(seg.graph, "sources", None) for seg in self.segments]
        self.variants = [self]    # recordings of other paths (NOTE [Paths of a split call])
        self.want_variant = False
        self._prefix = {}

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
        with Recorder._lock:  # the hooks are class attributes: one replay or capture at a time
            rp.install()
            try:
                result = fn(*args, **kwargs)
                rp.finish(result)
            finally:
                rp.remove()
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
        self.tid = threading.get_ident()
        self._restore = []
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
        g = self.g
        try:
            if self.k < len(g.ends) and self.pos == g.ends[self.k]:
                self._flush()
            inst = self._next(cls, args, params)
        except _Miss:
            self.diverge()
            self._revive(args, params)
            return orig(cls, *args, **params)
        outs = []
        for s, (shape, dtype), rg, strides in zip(inst.outs, inst.meta, inst.rg, inst.strides,
                                                  strict=True):
            t = _tensor._make(_placeholder(shape, dtype, strides))
            self.holders[id(t._data)] = t
            if rg:
                t._requires_grad = True
            self.tensors[s] = t
            self.slot_of[id(t)] = s
            self.lazy.add(id(t))
            outs.append(t)
        self.pending.append((inst, args, params, outs))
        self.pos += 1
        return tuple(outs) if inst.tuple_out else outs[0]

    def _next(self, cls, args, params):
        """The recorded op this call matches next (switching to another recording of the same
        path so far at a segment start: NOTE [Paths of a split call]), else raise _Miss."""
        g, pos = self.g, self.pos
        if pos < len(g.script):
            inst = g.script[pos]
            if inst.cls is cls and self._match(inst, args, params):
                return inst
        if self.pending:
            raise _Miss
        for v in g.variants:
            if v is g or not g.same_prefix(v, pos) or v.script[pos].cls is not cls:
                continue
            self.g = v
            if self._match(v.script[pos], args, params):
                return v.script[pos]
            self.g = g
        raise _Miss

    def _match(self, inst, args, params):
        if len(args) != len(inst.args) or params.keys() != inst.params.keys():
            return False
        for a, r in zip(args, inst.args, strict=True):
            if not self._same(a, r):
                return False
        for k, r in inst.params.items():
            if not self._same(params[k], r):
                return False
        return True

    def _same(self, a, r):
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
        for mine, recorded in self.out_dicts:
            mine.clear()
            mine.update(recorded)
        self.out_dicts.clear()
        for s, r in zip(seg.outputs, res, strict=True):
            self._fill(self.tensors[s], r)
        keep = set(seg.outputs)
        for s in seg.defined:
            if s not in keep and s in self.tensors:
                self.dead[id(self.tensors[s])] = self.k
        self.pending.clear()
        self.lazy.clear()
        self.k += 1

    def boundary(self):
        """Python is about to need values: run the complete segment, or leave the path."""
        if self.eager or not self.pending:
            return
        try:
            self._flush()
        except _Miss:
            self.diverge()

    def diverge(self):
        """Run the deferred ops eagerly, in order; the rest of the call runs eagerly."""
        self.eager = True
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
        flat = []
        flatten(result, flat)
        for t in flat:
            if isinstance(t, _tensor.Tensor) and id(t) in self.dead:
                self._recompute(self.dead[id(t)])

    # ------------------------------------------------------------------ hooks
    def _patch(self, obj, name, value):
        self._restore.append((obj, name, obj.__dict__.get(name), name in obj.__dict__))
        setattr(obj, name, value)

    def remove(self):
        _ACTIVE[0] = None
        for obj, name, old, had in reversed(self._restore):
            if had:
                setattr(obj, name, old)
            else:
                delattr(obj, name)
        self._restore = []

    def install(self):
        _ACTIVE[0] = self
        self._orig_run = _fn.Op.__dict__["_run"].__func__
        self._patch(_fn.Op, "_run", _hook("run", _fn.Op, "_run"))
        T = _tensor.Tensor
        for name in _READS:
            self._patch(T, name, _hook("read", T, name))
        self._patch(T, "backward", _hook("before", T, "backward"))
        from .. import autograd
        from ..nn.functional import _dropout
        from ..ops import registry
        self._patch(autograd, "backward", _hook("before", autograd, "backward"))
        self._patch(_fn.Function, "apply", _hook("before_cls", _fn.Function, "apply"))
        self._patch(registry, "write_into", _hook("write", registry, "write_into"))
        if self.g.random and hasattr(_dropout, "_keep_mask"):
            self._patch(_dropout, "_keep_mask", _hook("mask", _dropout, "_keep_mask"))
        for owner, name in self.g.state_calls:  # optimizer.step() and the like
            self._patch(owner, name, _hook("before", owner, name))

    def before(self, a, k):
        """Run the complete segment (or leave the path) before a call that needs values."""
        self.boundary()
        for x in (*a, *k.values()):
            if isinstance(x, _tensor.Tensor) and id(x) in self.dead:
                self._recompute(self.dead[id(x)])


# The hooks a replay installs: built once per patched function (and again if that function was
# replaced meanwhile); they find the running replay in _ACTIVE (one at a time: Recorder._lock).
_ACTIVE = [None]
_HOOKS: dict = {}
_READS = ("item", "tolist", "__bool__", "__float__", "__int__", "__index__", "numpy",
          "__repr__", "__str__", "__format__", "__array__")


def _hook(kind, owner, name):
    orig = getattr(owner, name) if kind == "read" else owner.__dict__[name]
    cached = _HOOKS.get((kind, owner, name))
    if cached is not None and cached[0] is orig:
        return cached[1]
    hook = _make_hook(kind, orig.__func__ if kind in ("run", "before_cls") else orig)
    _HOOKS[(kind, owner, name)] = (orig, hook)
    return hook


def _current():
    rp = _ACTIVE[0]
    return rp if rp is not None and threading.get_ident() == rp.tid else None


def _make_hook(kind, orig):
    if kind == "run":
        def _run(cls, *args, **params):
            rp = _current()
            if rp is None:
                return orig(cls, *args, **params)
            return rp.op(orig, cls, args, params)
        return classmethod(_run)
    if kind == "read":
        def read(t, *a, **k):
            rp = _current()
            if rp is not None:
                rp.read(t)
            return orig(t, *a, **k)
        return read
    if kind == "mask":
        def keep_mask(shape, p, dtype):
            rp = _current()
            if rp is None or rp.eager:
                return orig(shape, p, dtype)
            return np.ones(shape, dtype)  # drawn by the compiled segment
        return keep_mask
    if kind == "write":
        def write_into(t, arr, name):
            rp = _current()
            if rp is not None:
                rp.before((t,), {})
                if id(arr) in rp.holders:  # the result of a deferred op
                    arr = rp.holders[id(arr)]._data
            return orig(t, arr, name)
        return write_into

    def call(*a, **k):
        rp = _current()
        if rp is not None:
            rp.before(a, k)
        return orig(*a, **k)

    call.__name__ = getattr(orig, "__name__", "call")
    return classmethod(call) if kind == "before_cls" else call
