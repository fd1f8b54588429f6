"""Turn a Capture into two straight-line Python functions over NumPy arrays.

``forward(I, E)`` takes the input arrays and the external tensors and returns the output arrays
and the values the backward needs; ``backward(S, G)`` takes those values and the gradients of the
differentiable outputs and returns one gradient per target. Each op call is a direct call of the
op's NumPy ``forward`` (no tensors, no graph nodes, no dispatch); fused groups call generated
numba kernels (fusion.py).
"""
from __future__ import annotations

import re

import numpy as np

from .. import _tensor
from ..autograd import function as _fn
from ..autograd.grad_mode import _state
from .capture import Instr, Misc, NodeBackward, SideEffect, redraw, ref_slots


class Ctx:
    """The ctx an op's forward sees at replay: stores what it saves and sets."""

    _to_save = ()

    def __init__(self, needs_input_grad):
        self.needs_input_grad = needs_input_grad

    def save_for_backward(self, *values):
        self._to_save = values

    def mark_dirty(self, *tensors):
        pass

    def mark_non_differentiable(self, *tensors):
        pass

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)

    @property
    def saved_tensors(self):
        return tuple(None if v is None else _tensor._make(np.asarray(v))
                     for v in self._to_save)


def node_backward(cls, ctx, grads, n):
    """Replay one op's own backward (with grad mode off, as the engine runs it)."""
    prev = _state.enabled
    _state.enabled = False
    try:
        grads_t = [None if g is None else _tensor._make(g) for g in grads]
        if getattr(cls, "holomorphic", False) and _fn._any_complex(grads_t):
            res = _fn._conjugate_backward(cls, ctx, grads_t)  # as the engine (OpNode.apply)
        else:
            res = cls.backward(ctx, *grads_t)
    finally:
        _state.enabled = prev
    res = res if isinstance(res, tuple) else (res,)
    res = tuple(res) + (None,) * (n - len(res))
    return tuple(None if r is None else r._data if isinstance(r, _tensor.Tensor) else
                 np.asarray(r) for r in res[:n])


class _Emitter:
    def __init__(self, cap, check=False):
        from .symbolic import check_shape
        self.cap = cap
        self.check = check
        self.lines = []
        from .fusion import add
        self.glob = {"_np": np, "_Ctx": Ctx, "_nb": node_backward, "_redraw": redraw,
                     "_A": np.asarray, "_chk": check_shape, "_add": add}
        self.defined = set()
        # (line index, item) where each item's lines start: the units of a two-thread
        # schedule (NOTE [Two threads in a replay] in schedule.py)
        self.marks = []

    def const(self, value, prefix="K"):
        name = f"_{prefix}{len(self.glob)}"
        self.glob[name] = value
        return name

    def ref(self, r):
        if r[0] == "c":
            v = r[1]
            if v is None or isinstance(v, (bool, int, float, str)):
                return repr(v) if not (isinstance(v, float) and not np.isfinite(v)) \
                    else self.const(v)
            return self.const(v)
        if r[0] == "k":  # NOTE [Sequences of values as op arguments] in capture.py
            items = "".join(f"{self.ref(x)}, " for x in r[2])
            return f"({items})" if r[1] is tuple else f"[{items}]"
        return self.val(r[1])

    def val(self, s):
        if s not in self.defined:
            kind = self.cap.kinds[s]
            if kind[0] == "const":
                self.glob[f"v{s}"] = self.cap.arrays[s]
            elif kind[0] == "rand":  # drawn where it is first used, as eager draws it
                self.lines.append(f"v{s} = _redraw({self.const(kind[1])})")
                self.defined.add(s)
            else:
                raise KeyError(f"compile: value v{s} ({kind}) used before it is defined")
        return f"v{s}"

    def call(self, inst, ctx):
        args = ", ".join(self.ref(a) for a in inst.args)
        kw = "".join(f", {k}={self.ref(v)}" for k, v in inst.params.items())
        fn = self.const(inst.cls.forward, "F")
        outs = [f"v{s}" for s in inst.outs]
        lhs = ", ".join(outs) + ("," if inst.tuple_out and len(outs) == 1 else "")
        sep = ", " if args else ""
        self.lines.append(f"{lhs} = {fn}({ctx}{sep}{args}{kw})  # {inst.cls.__name__}")
        for s, (shape, _) in zip(inst.outs, inst.meta, strict=False):
            if shape == ():  # a ufunc on 0-d arrays returns a NumPy scalar
                self.lines.append(f"v{s} = _A(v{s})")
            if self.check:  # a validation run (see NOTE [Size generalisation])
                self.lines.append(f"_chk(v{s}, {tuple(shape)!r}, {inst.cls.__name__!r})")
        self.defined.update(inst.outs)


def generate(cap, fused_fwd=None, fused_bwd=None, check=False, plans=None):
    """Python source and globals for the forward and backward of a capture (``check``: the
    validation variant, with shape checks and without side effects). ``plans``: a list that
    gets one (emitter, signature, return expression) per function, for schedule.py."""
    fwd_items = fused_fwd if fused_fwd is not None else cap.fwd
    bwd_items = fused_bwd if fused_bwd is not None else cap.bwd
    need_bwd = bool(cap.grad_slots)
    # values and ctxs the backward reads from the forward
    bwd_made = set(cap.grad_slots)
    for item in bwd_items:
        bwd_made.update(_outs(item))
    needed = []
    for item in bwd_items:
        for s in _ins(item):
            if s not in bwd_made and cap.kinds[s][0] not in ("const",) and s not in needed:
                needed.append(s)
    fwd_exports = []
    e = _Emitter(cap, check)
    ctx_needed = {item.fwd_index for item in bwd_items if isinstance(item, NodeBackward)}
    ctx_needed.update(i for item in bwd_items for i in getattr(item, "ctx_reads", ()))
    ctx_of = {}
    for s, kind in enumerate(cap.kinds):
        if kind[0] == "in":
            e.lines.append(f"v{s} = I[{kind[1]}]")
            e.defined.add(s)
        elif kind[0] == "ext":
            e.lines.append(f"v{s} = E[{kind[1]}]._data")
            e.defined.add(s)
    fwd_index = {id(inst): i for i, inst in enumerate(cap.fwd)}
    after = {}  # forward instr index -> slots of its ctx (saved values / attributes)
    for s, kind in enumerate(cap.kinds):
        if kind[0] in ("saved", "attr"):
            after.setdefault(kind[1], []).append(s)
    for item in fwd_items:
        e.marks.append((len(e.lines), item))
        if isinstance(item, Instr):
            i = fwd_index.get(id(item))
            ctx = f"c{i}" if i is not None else "_c"
            e.lines.append(f"{ctx} = _Ctx({item.nig!r})")
            e.call(item, ctx)
            if i is not None:
                ctx_of[i] = ctx
                for s in after.get(i, ()):
                    kind = cap.kinds[s]
                    if kind[0] == "saved":
                        e.lines.append(f"v{s} = _A({ctx}._to_save[{kind[2]}])")
                    else:
                        e.lines.append(f"v{s} = {ctx}.{kind[2]}")
                    e.defined.add(s)
        elif not (check and isinstance(item, SideEffect)):
            item.emit(e)
            for i in getattr(item, "ctx_indices", ()):  # ctxs an item sets (GatherCat)
                ctx_of[i] = f"c{i}"
    outs = []
    for o in cap.outputs:
        if isinstance(o, tuple):  # a Python value, or a number item() reads after the replay
            outs.append(e.val(o[1]) if o[0] == "item" else "None")
        else:
            outs.append(e.val(o))
    if need_bwd:
        fwd_exports = [e.val(s) for s in needed] + [ctx_of[i] for i in sorted(ctx_needed)]
    fwd_ret = (f"({', '.join(outs)}{',' if len(outs) == 1 else ''}), "
               f"({', '.join(fwd_exports)}{',' if len(fwd_exports) == 1 else ''})")
    fwd_src = ("def forward(I, E, T=None):\n    " +
               "\n    ".join(free_at_last_use(e.lines, fwd_ret) or ["pass"]) +
               f"\n    return {fwd_ret}\n")
    fwd_glob = e.glob
    if plans is not None:
        plans.append((e, "I, E, T=None", fwd_ret))
    if not need_bwd:
        return fwd_src, fwd_glob, None, None
    b = _Emitter(cap, check)
    names = [f"v{s}" for s in needed] + [f"c{i}" for i in sorted(ctx_needed)]
    if names:
        b.lines.append(f"{', '.join(names)}{',' if len(names) == 1 else ''} = S")
    b.defined.update(needed)
    for j, s in enumerate(cap.grad_slots):
        b.lines.append(f"v{s} = G[{j}]")
        b.defined.add(s)
    emit_backward_items(b, bwd_items)
    rets = ["None" if s is None else b.val(s) for s in cap.target_grads]
    bwd_ret = f"({', '.join(rets)}{',' if len(rets) == 1 else ''})"
    bwd_src = ("def backward(S, G):\n    " +
               "\n    ".join(free_at_last_use(b.lines, bwd_ret) or ["pass"]) +
               f"\n    return {bwd_ret}\n")
    if plans is not None:
        plans.append((b, "S, G", bwd_ret))
    return fwd_src, fwd_glob, bwd_src, b.glob


# NOTE [Values freed at their last use]
# Eager frees an intermediate as soon as nothing refers to it; a generated function keeps every
# local it assigned until it returns, so a compiled call held all of its intermediates at once
# (vector-quantize-pytorch's LFQ over a video batch: > 18 GB compiled against 13.4 GB eager).
# The straight-line code therefore deletes each value and ctx name it assigns right after the
# last line that mentions it, unless the return expression does (constants are globals of the
# same form). Each emitted line is one unconditional statement, so the name is bound when its
# ``del`` runs. The two-thread schedule builds its functions from the same lines without this
# pass (its units hand values between threads).
_LOCAL = re.compile(r"\b[vc]\d+\b")
_ASSIGNED = re.compile(r"^\s*([vc]\d+(?:\s*,\s*[vc]\d+)*\s*,?)\s*=(?!=)")


def free_at_last_use(lines, ret):
    """``lines`` with ``del`` after the last use of each local value or ctx not in ``ret``
    (names the lines assign: a constant is a global of the same form, ``v3``)."""
    kept = set(_LOCAL.findall(ret))
    local, last = set(), {}
    for i, line in enumerate(lines):
        m = _ASSIGNED.match(line)
        if m:
            local.update(_LOCAL.findall(m.group(1)))
        for name in _LOCAL.findall(line):
            last[name] = i
    dead = {}
    for name, i in last.items():
        if name in local and name not in kept:
            dead.setdefault(i, []).append(name)
    out = []
    for i, line in enumerate(lines):
        out.append(line)
        if i in dead:
            out.append("del " + ", ".join(sorted(dead[i], key=lambda n: (n[0], int(n[1:])))))
    return out


def emit_backward_items(b, items):
    from .raw_backward import raw_backward
    """Lines for backward items (recorded op calls, opaque node backwards, NumPy steps); a
    node backward uses the forward's ctx ``c<index>``, defined in the same function when the
    backward is inline (NOTE [Training-step capture] in train_step.py)."""
    for item in items:
        b.marks.append((len(b.lines), item))
        if isinstance(item, Instr):
            b.lines.append(f"_c = _Ctx({item.nig!r})")
            b.call(item, "_c")
        elif isinstance(item, NodeBackward):
            grads = ", ".join("None" if g is None else b.val(g) for g in item.grads)
            op = b.cap.fwd[item.fwd_index].cls
            cls = b.const(op, "C")
            res = ", ".join("_" if s is None else f"v{s}" for s in item.outs)
            raw = raw_backward(op)  # the kernels directly, where an array-level form exists
            fn = "_nb" if raw is None else b.const(raw, "B")
            b.lines.append(f"{res}{',' if len(item.outs) == 1 else ''} = "
                           f"{fn}({cls}, c{item.fwd_index}, ({grads},), {len(item.outs)})"
                           f"  # {op.__name__} backward")
            b.defined.update(s for s in item.outs if s is not None)
        elif isinstance(item, Misc):
            _emit_misc(b, item)
        else:
            item.emit(b)


def _emit_misc(b, item):
    a = item.args
    if item.kind == "zeros":
        b.lines.append(f"v{item.out} = _np.zeros({a[0]!r}, {b.const(a[1])})")
    elif item.kind == "add":
        b.lines.append(f"v{item.out} = _add({b.val(a[0])}, {b.val(a[1])})")
    elif item.kind == "reshape":
        b.lines.append(f"v{item.out} = {b.val(a[0])}.reshape({a[1]!r})")
    elif item.kind == "astype":
        b.lines.append(f"v{item.out} = {b.val(a[0])}.astype({b.const(a[1])})")
    b.defined.add(item.out)


def _ins(item):
    if isinstance(item, Instr):
        return [s for r in list(item.args) + list(item.params.values()) for s in ref_slots(r)]
    if isinstance(item, NodeBackward):
        return [g for g in item.grads if g is not None]
    if isinstance(item, Misc):
        return [a for a in item.args[:1] if isinstance(a, int)] + (
            [item.args[1]] if item.kind == "add" else [])
    return [r[1] for r in item.inputs if r[0] == "s"]


def _outs(item):
    if isinstance(item, Instr):
        return list(item.outs)
    if isinstance(item, NodeBackward):
        return [s for s in item.outs if s is not None]
    if isinstance(item, Misc):
        return [item.out]
    return list(item.outputs)


def build(cap, fused_fwd=None, fused_bwd=None, name="compiled", check=False, plans=None):
    """Compile the generated source into (forward, backward or None, sources)."""
    fwd_src, fg, bwd_src, bg = generate(cap, fused_fwd, fused_bwd, check, plans)
    ns = {}
    exec(compile(fwd_src, f"<ember.compile {name} forward>", "exec"), fg, ns)
    fwd = ns["forward"]
    bwd = None
    if bwd_src is not None:
        exec(compile(bwd_src, f"<ember.compile {name} backward>", "exec"), bg, ns)
        bwd = ns["backward"]
    return fwd, bwd, (fwd_src, bwd_src)
