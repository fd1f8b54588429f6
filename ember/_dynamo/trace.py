"""Drive one capture: run the function eagerly under the recorder, then record its backward."""
from __future__ import annotations

import numpy as np

from .. import _tensor
from ..autograd import function as _fn
from ..autograd.function import AccumulateGrad
from ..autograd.grad_mode import _state
from . import item
from .capture import Misc, NodeBackward, Recorder, flatten, unflatten
from .writes import finish as finish_writes

# replays hold dense arrays only; a sparse COO input or output makes the call run eagerly
SPARSE_INPUT = "a sparse COO tensor is an input (ember.compile captures dense tensors only)"
SPARSE_OUTPUT = "a sparse COO tensor is an output (ember.compile captures dense tensors only)"


def capture_call(fn, args, kwargs, fullgraph, stores=None):
    """Run ``fn(*args, **kwargs)`` eagerly while recording; returns (result, Capture).
    ``stores(cap)``: the tensors the call stored into Python state that the replay should
    store too, or None (NOTE [Tensors a call stores] in eval_frame.py); they become outputs
    after the result's."""
    flat = []
    flatten((args, kwargs), flat)
    inputs = [x for x in flat if isinstance(x, _tensor.Tensor)]
    rec = Recorder(fullgraph)
    rec.inputs = inputs
    for k, t in enumerate(inputs):
        if t.is_sparse:
            rec.graph_break(SPARSE_INPUT, "<inputs>")
        elif id(t._data) not in rec.slots:
            rec.new_slot(t._data, ("in", k))
    with Recorder._lock:
        rec.install()
        try:
            result = fn(*args, **kwargs)
            rec.check_versions()
            finish_writes(rec, fn, flat)
            outs = []
            stored = None
            if stores is not None and not rec.cap.breaks and not rec.cap.splits:
                stored = stores(rec.cap)
            rec.cap.stored = bool(stored)
            rec.cap.out_spec = flatten((result, tuple(stored)) if stored else result, outs)
            _record_outputs(rec, outs)
            if getattr(rec, "inline_done", False):
                # backward() ran inside the call: the outputs' graph is spent, as in eager
                rec.cap.spent_outputs = [i for i, o in enumerate(outs)
                                         if isinstance(o, _tensor.Tensor) and o._requires_grad
                                         and isinstance(rec.cap.outputs[i], int)
                                         and rec.cap.kinds[rec.cap.outputs[i]][0] == "op"]
            elif not rec.cap.breaks and not rec.cap.splits:
                _walk_backward(rec, inputs, outs)
        finally:
            rec.remove()
    if rec.cap.splits and not rec.cap.breaks:
        from .segments import split_capture
        split_capture(rec, outs)
    cap = rec.cap
    cap.n_inputs = len(inputs)
    result = _plain_result(result, rec)
    item.release(rec)
    return result, cap


def _record_outputs(rec, outs):
    for o in outs:
        if isinstance(o, _tensor.Tensor) and o.is_sparse:
            rec.graph_break(SPARSE_OUTPUT, "<outputs>")
            rec.cap.outputs.append(("py", None))  # (never replayed: the call runs eagerly)
        elif isinstance(o, _tensor.Tensor):
            rec.cap.outputs.append(rec.resolve_tensor(o))
        elif item.slot_of(o, rec) is not None:  # read again after each replay
            rec.cap.outputs.append(("item", item.slot_of(o, rec)))
        else:
            rec.cap.outputs.append(("py", o))


def _plain_result(result, rec):
    """The call's result with item values turned into plain numbers (what the caller sees)."""
    flat = []
    spec = flatten(result, flat)
    if not any(item.slot_of(v, rec) is not None for v in flat):
        return result
    return unflatten(spec, iter([item.plain(v) for v in flat]))


# NOTE [Backward capture]
# The recorded forward instructions that made an autograd node are visited in reverse order of
# creation (every value is made before it is used, so this is a valid order for backward), and
# each node's own ``backward`` runs with recording on and grad mode off, as the engine runs it,
# so each op takes its fast first-order path. Where a backward computes with NumPy directly (a
# once-differentiable kernel, a NumPy shortcut for first-order gradients), the ops it recorded
# are dropped and the node's backward is replayed as one opaque call with the replayed forward's
# ctx. Gradients of values used several times are summed as the engine does.


def _walk_backward(rec, inputs, outs):
    cap = rec.cap
    if not _state.enabled:
        return
    targets = []
    for s, kind in enumerate(cap.kinds):
        t = inputs[kind[1]] if kind[0] == "in" else cap.ext[kind[1]] if kind[0] == "ext" else None
        if t is not None and t._requires_grad:
            targets.append(s)
    diff = [i for i, o in enumerate(outs) if isinstance(o, _tensor.Tensor) and o._requires_grad]
    if not targets or not diff:
        return
    if not _check_edges(rec, inputs):
        return
    grads = {}
    for i in diff:
        o = outs[i]
        gs = rec.new_slot(np.ones(o._data.shape, o._data.dtype), ("gout", len(cap.grad_slots)))
        cap.grad_slots.append(gs)
        _accumulate(rec, grads, cap.outputs[i], gs)
    cap.diff_outputs = diff
    prev = _state.enabled
    _state.enabled = False  # as the engine runs backward without create_graph
    rec.phase = "bwd"
    try:
        for idx in range(len(cap.fwd) - 1, -1, -1):
            try:
                _visit(rec, grads, idx)
            except Exception as e:
                # a backward that raises (a derivative not implemented): the calls stay eager,
                # so the error surfaces from .backward() exactly as without compile
                cap.breaks.append((f"the backward of {cap.fwd[idx].cls.__name__} raised "
                                   f"{type(e).__name__}: {e}", "<backward>"))
                return
    finally:
        _state.enabled = prev
        rec.phase = "fwd"
    cap.targets = [cap.kinds[s] for s in targets]
    cap.target_grads = [grads.get(s) for s in targets]


def _check_edges(rec, inputs):
    """Every gradient edge must lead to a recorded node or to an input/external tensor."""
    cap = rec.cap
    for inst in cap.fwd:
        node = inst.node
        if node is None:
            continue
        for i, (nxt, _) in enumerate(node.next_functions):
            if nxt is None:
                continue
            ref = inst.args[i] if i < len(inst.args) else ("c", None)
            kind = cap.kinds[ref[1]] if ref[0] == "s" else ("c",)
            ok = kind[0] in ("in", "ext") or (
                kind[0] == "op" and kind[1] >= 0 and cap.fwd[kind[1]].node is nxt)
            if not ok or (type(nxt) is AccumulateGrad and kind[0] not in ("in", "ext")):
                rec.graph_break(f"the gradient of {inst.cls.__name__} flows through "
                                f"{nxt.name()}, which the recorder did not see", "<backward>")
                return False
    return True


def _accumulate(rec, grads, slot, gs):
    cap = rec.cap
    old = grads.get(slot)
    if old is None:
        grads[slot] = gs
        return
    total = np.add(cap.arrays[old], cap.arrays[gs])
    out = rec.new_slot(total, ("bwd",))
    cap.bwd.append(Misc("add", [old, gs], out))
    grads[slot] = out


def _visit(rec, grads, idx):
    cap = rec.cap
    inst = cap.fwd[idx]
    node = inst.node
    if node is None:
        return
    gin = [grads.get(s) for s in inst.outs]
    if all(g is None for g in gin):
        return
    for j, g in enumerate(gin):
        if g is None:
            shape, dt = inst.meta[j]
            gin[j] = rec.new_slot(np.zeros(shape, dt), ("bwd",))
            cap.bwd.append(Misc("zeros", [shape, dt], gin[j]))
    start, nslots = len(cap.bwd), len(cap.kinds)
    rec.seg_bad = None
    gin_t = [_tensor._make(cap.arrays[g]) for g in gin]
    if getattr(node._op, "holomorphic", False) and _fn._any_complex(gin_t):
        # as the engine's OpNode.apply: conj(backward(conj(grad))) for a complex gradient
        # (NOTE [Complex gradients]); the conj ops are recorded with the rest
        res = _fn._conjugate_backward(node._op, node, gin_t)
    else:
        res = node._op.backward(node, *gin_t)
    res = res if isinstance(res, tuple) else (res,)
    needs = [nxt is not None for nxt, _ in node.next_functions]
    res = tuple(res) + (None,) * (len(needs) - len(res))
    out_gs = []
    for i, g in enumerate(res[:len(needs)]):
        if g is None or not needs[i]:
            out_gs.append(None)
            continue
        s = rec.slots.get(id(g._data)) if isinstance(g, _tensor.Tensor) else None
        if s is None and rec.seg_bad is None:
            rec.seg_bad = "a gradient is computed outside ops"
        out_gs.append(s)
    if rec.seg_bad is not None:
        del cap.bwd[start:]
        for s in range(nslots, len(cap.kinds)):
            if rec.slots.get(id(cap.arrays[s])) == s:
                del rec.slots[id(cap.arrays[s])]
        del cap.kinds[nslots:], cap.arrays[nslots:]
        out_gs = [None if g is None or not needs[i] else
                  rec.new_slot(np.asarray(g._data if isinstance(g, _tensor.Tensor) else g),
                               ("bwd",)) for i, g in enumerate(res[:len(needs)])]
        cap.bwd.append(NodeBackward(idx, gin, out_gs))
        cap.ctx_needed.add(idx)
    for i, gs in enumerate(out_gs):
        if gs is None:
            continue
        slot = inst.args[i][1]
        gs = _fix(rec, gs, cap.arrays[slot])
        _accumulate(rec, grads, slot, gs)


def _fix(rec, gs, like):
    """The engine's checks on a returned gradient: size-1 reshape and dtype cast."""
    cap = rec.cap
    g = cap.arrays[gs]
    if g.shape != like.shape:
        if g.size != 1 or like.size != 1:
            raise RuntimeError(f"compile: a backward returned a gradient of shape {g.shape} for "
                               f"a value of shape {like.shape}")
        out = rec.new_slot(g.reshape(like.shape), ("bwd",))
        cap.bwd.append(Misc("reshape", [gs, like.shape], out))
        gs, g = out, cap.arrays[out]
    if g.dtype != like.dtype:
        out = rec.new_slot(g.astype(like.dtype), ("bwd",))
        cap.bwd.append(Misc("astype", [gs, like.dtype], out))
        gs = out
    return gs
