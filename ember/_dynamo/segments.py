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

This file cuts a recording into segments; replay.py runs them.
"""
from __future__ import annotations

import dataclasses

from .. import _tensor
from .capture import Capture, Instr, Recorder, SideEffect, _count_up, map_ref, ref_slots


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
    unreturned: list = dataclasses.field(default_factory=list)  # defined, not in outputs


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
            for s in ref_slots(r):
                uses[s] = j
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
        # integer and boolean values are handed out too: op wrappers read index tensors in
        # Python (gather's bounds check), so the replay's stand-in must hold the real values
        outputs = [s for s in defined if uses.get(s, -1) >= b or
                   cap.arrays[s].dtype.kind in "iub"]
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

    refs = [s for inst in script[seg.start:seg.end]
            for r in (*inst.args, *inst.params.values()) for s in ref_slots(r)]
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
        return map_ref(r, remap.__getitem__)

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
