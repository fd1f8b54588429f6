"""Two threads in a compiled replay: a static schedule of the generated code's ops over the
caller and one worker thread (EMBER_COMPILE_INTEROP=1; off by default).

NOTE [Two threads in a replay]
A compiled graph is straight-line code whose ops (NumPy's GEMMs, ember's nogil numba kernels)
release the GIL while they compute, so two ops that do not depend on each other can run at once,
one per core, each whole: a Linear's weight gradient (read by nothing but the optimizer) beside
its input gradient and the backward that follows it, NCF's product-embedding scatters beside
its MLP backward, a lookup beside another. Every op computes what it computes in the serial
replay, on the same arrays, so the results are the same bits.

* Units. The generated function is cut at the items the code generator emitted (an op, a
  fused group, a node's backward, a gradient's write into ``.grad``); a unit's inputs and
  outputs are the ``v<slot>``/``c<ctx>`` names its lines read and assign. A Linear backward
  with an input and a weight gradient becomes two units (raw_backward.linear_part: the same
  GEMM call for each half as the whole makes), big GEMMs are cut further into row halves (NOTE
  [GEMM halves in a two-thread replay] in row_parts.py) and an Adam step into parts (NOTE
  [Optimizer steps in a two-thread replay]). Other calls made for their effect on live objects
  (``zero_grad()``, BatchNorm's running statistics, ...) are barriers: on the caller, after
  every unit before them and before every unit after. Units that draw random numbers keep
  their order (a chain of edges); an unknown kind of item makes the graph serial.
* Costs. Measured: the first MEASURED_CALLS calls run a serial copy of the code with each
  unit's CPU time taken (OpenBLAS at one thread), and the fastest of them is the unit's cost.
  A static model (multiply-adds at the core's GEMM rate, bytes at a memory rate) was 2-4x off
  for NCF's gathers and scatters (an embedding lookup reads a few rows of a big table, a view
  costs nothing), and the plan follows the costs.
* Schedule. Computed once per function (plan()): two kinds of list schedule over two threads
  (by time; with insertion into idle gaps), the ready unit with the longest remaining path
  first (its cost plus the costliest chain of units that need it), each at those priorities
  and at randomly perturbed ones, the shortest kept (a value crossing threads costs
  SYNC_COST). Each thread runs its units in the order the simulation started them, and a unit
  waits only for units that ended before it started there, so neither thread can wait on the
  other in a cycle, whatever the real durations are.
* Code. Two functions over the same globals: the caller's and the worker's, each the units
  of its thread in order. A value one thread makes and the other reads goes through a list
  (``X[j] = v12`` after the unit, then the unit's flag ``F[k] = g``, g this call's number); the
  reader waits for the flag (wait(): a bounded poll without the GIL, yielding the core between
  polls as ember/_spin.py does, then short sleeps) and then reads the list.
* Running. One worker thread per process, started on first use; after a call it polls for the
  next one for IDLE_SPIN seconds, then sleeps on a lock (waking a sleeping thread on an idle
  core costs 0.1-0.3 ms on this VM, so a training loop's next step finds it awake); the two
  threads keep to two different cores (NOTE [Two threads on two cores]). OpenBLAS is
  held at one thread for the call: both threads call it, and its own workers, never woken,
  never spin on the core the other thread runs on. An exception on either thread sets the abort
  flag, which every wait also watches; the caller waits until the worker has stopped and raises
  the first exception. The two-thread code runs only when it can run safely; otherwise the serial
  function does: the worker busy with another call (a second compiled function on another Python
  thread), ``ember.set_num_threads(1)``, ember's one pool on, a split call's replay hooks
  active, the worker itself calling in (nested replays). After ``fork`` the child starts a
  fresh worker on first use.
"""
from __future__ import annotations

import _thread
import ast
import itertools
import os
import re
import threading
import time

import numba
import numpy as np

from .. import _spin, _threads
from ..autograd.grad_mode import _state
from .capture import Instr, Misc, NodeBackward, SideEffect

MEASURED_CALLS = 3       # serial calls timed per unit before the plan is made
SYNC_COST = 10e-6        # seconds: a value handed to the other thread
CALLER_BELOW = 0.0       # seconds: units cheaper than this stay on the caller (0: none)
PLAN_TRIES = 100         # perturbed priorities tried by plan()
IDLE_SPIN = 0.005        # seconds the worker polls for the next call before it sleeps
WAIT_SPIN = 0.002        # seconds a wait polls before it sleeps between polls

ENABLED = [os.environ.get("EMBER_COMPILE_INTEROP", "").strip() == "1"]

_NAME = re.compile(r"^[vc]\d+$")


class Unit:
    """Lines of the generated code that run together on one thread."""

    __slots__ = ("lines", "defs", "uses", "writes", "cost", "barrier", "random", "label",
                 "preds")

    def __init__(self, lines, label, barrier=False, writes=()):
        self.lines = lines
        self.writes = list(writes)  # arrays an earlier unit made that this one fills
        self.label = label
        self.barrier = barrier
        self.random = any("_redraw(" in ln for ln in lines)
        self.defs, self.uses = _names(lines)
        self.cost = 0.0
        self.preds = set()


def _names(lines):
    """(names assigned, names read before being assigned) of v<slot>/c<ctx> variables."""
    defs, uses = [], []
    for ln in lines:
        tree = ast.parse(ln.strip())
        loads, stores = [], []
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and _NAME.match(node.id):
                (stores if isinstance(node.ctx, ast.Store) else loads).append(node.id)
        uses.extend(n for n in loads if n not in defs)
        defs.extend(stores)
    return list(dict.fromkeys(defs)), list(dict.fromkeys(uses))


# ------------------------------------------------------------------------------- units, costs
def _units(e, cap):
    """The prelude lines and the units of one generated function (None: not schedulable)."""
    from .catwrite import CatProducts
    from .epilogue import LinearRelu
    from .fusion import FusedGroup, GatherCat
    from .scatter import ScatterProduct
    from .train_step import CallOut, InlineBackward
    pure = (Instr, NodeBackward, Misc, FusedGroup, GatherCat, LinearRelu, CatProducts,
            ScatterProduct)
    marks = e.marks + [(len(e.lines), None)]
    prelude = e.lines[:marks[0][0]]
    units, guards = [], []
    for (a, item), (b, _) in zip(marks, marks[1:], strict=False):
        lines = e.lines[a:b]
        if not lines or isinstance(item, InlineBackward):  # its items carry their own marks
            continue
        if item == "acc":
            units.append(Unit(lines, ".grad"))
        elif isinstance(item, pure):
            units.extend(_split_linear(e, cap, item, lines) or [Unit(lines, _label(cap, item))])
        elif isinstance(item, (SideEffect, CallOut)):
            parts = _optimizer_parts(e, cap, item, prelude, units)
            if parts is not None:
                units.extend(parts)
                guards.append(_step_guard(item.args[0]))
                continue
            units.append(Unit(lines, getattr(item.fn, "__name__", "call"), barrier=True))
        else:
            return None, None, None
    return prelude, units, guards


# NOTE [Optimizer steps in a two-thread replay]
# A training step's ``optimizer.step()`` (Adam, AdamW) runs in parts: one per parameter of
# 2^15 elements or more, one for the rest (Adam._update(only=...): the same kernels on the same
# elements, so the same numbers). A part follows the write of its parameters' gradients and
# every unit that reads those parameters (their arrays, views of them, and the ctx of an op
# that took one, which its backward reads), not the whole backward: NCF's product-embedding
# tables update on one thread while the other finishes the MLP's backward. A barrier after the
# parts keeps everything later in order. Only when nothing else runs around the step: no step
# hooks and the step Adam defines (checked at each call; otherwise the call runs serially).
BIG_PARAM = 1 << 15


def _optimizer_parts(e, cap, item, prelude, units):
    """The units of an Adam/AdamW step over parts of its parameters, or None."""
    from ..optim.adam import Adam
    opt = item.args[0] if item.args else None
    if not isinstance(opt, Adam) or len(item.args) != 1 or item.kwargs or \
            item.fn is not Adam.__dict__["step"] or type(opt).step is not item.fn or \
            not _step_guard(opt)() or cap.arrays is None:
        return None
    params = [p for g in opt.param_groups for p in g["params"]]
    names = {}  # id(param) -> the name of its array in the generated code
    for line in prelude:
        m = re.match(r"^(v\d+) = E\[(\d+)\]\._data$", line)
        if m:
            names[id(cap.ext[int(m.group(2))])] = m.group(1)
    big = [[p] for p in params if p._data.size >= BIG_PARAM]
    rest = [p for p in params if p._data.size < BIG_PARAM]
    groups = big + ([rest] if rest else [])
    if len(groups) < 2:
        return None
    e.glob["_OPT"] = _optimizer_part
    e.glob["_OPT_DONE"] = _optimizer_done
    opt_name = e.const(opt, "O")
    parts = []
    for group in groups:
        ids = e.const(frozenset(id(p) for p in group), "P")
        u = Unit([f"_OPT({opt_name}, {ids})  # {type(opt).__name__} step, "
                  f"{sum(p._data.size for p in group)} elements"], "step part")
        for p in group:
            u.preds.update(_readers(cap, units, names.get(id(p)), p, len(parts)))
        parts.append(u)
    done = Unit([f"_OPT_DONE({opt_name})"], "step done", barrier=True)
    return parts + [done]


def _readers(cap, units, name, param, offset):
    """Indices of the units that read ``param`` (through ``name``, a view of it or the ctx of
    an op that took it) or write its gradient, among ``units`` (the units before the step)."""
    out, alias = set(), {name} if name is not None else set()
    base = cap.arrays[int(name[1:])] if name is not None else None
    for k, u in enumerate(units):
        if any(f"E[{i}]" in ln for ln in u.lines for i in _ext_indices(cap, param)) and \
                u.label == ".grad":
            out.add(k)
            continue
        if not alias.intersection(u.uses):
            continue
        out.add(k)
        for d in u.defs:
            if d[0] == "c":  # a ctx keeps what its op saved
                alias.add(d)
            else:
                a = cap.arrays[int(d[1:])]
                if isinstance(a, np.ndarray) and base is not None and \
                        np.may_share_memory(a, base):
                    alias.add(d)
    return out


def _ext_indices(cap, param):
    return [i for i, t in enumerate(cap.ext) if t is param]


def _optimizer_part(opt, only):
    """Adam._update of the parameters whose id() is in ``only``, with grad mode off as in
    step()."""
    from ..autograd.grad_mode import no_grad
    with no_grad():
        opt._update(only)


def _optimizer_done(opt):
    opt._opt_called = True  # as step() sets it (the lr schedulers' call-order warning)


def _step_guard(opt):
    """A check that the step still runs as planned: no step hooks, the same parameters."""
    from ..optim import optimizer as _optim
    params = [id(p) for g in opt.param_groups for p in g["params"]]

    def ok():
        return (not opt._optimizer_step_pre_hooks and not opt._optimizer_step_post_hooks and
                not _optim._global_step_pre_hooks and not _optim._global_step_post_hooks and
                [id(p) for g in opt.param_groups for p in g["params"]] == params)
    return ok


def _label(cap, item):
    if isinstance(item, Instr):
        return item.cls.__name__
    if isinstance(item, NodeBackward):
        return cap.fwd[item.fwd_index].cls.__name__ + " backward"
    return type(item).__name__


def _split_linear(e, cap, item, lines):
    """A Linear's units: the forward in row halves, the backward as input and weight gradients
    (raw_backward.linear_part), each in halves when big (NOTE [GEMM halves in a two-thread
    replay]); None when the item stays one unit."""
    from ..ops.nn.linear import Linear
    from . import row_parts
    from .epilogue import LinearRelu
    from .raw_backward import linear_part, raw_backward
    arr = cap.arrays
    if isinstance(item, LinearRelu) and len(lines) == 3 and arr is not None:
        x, w = (arr[r[1]] if r[0] == "s" else r[1] for r in item.lin.args[:2])
        if not row_parts.splits(np.shape(x), np.shape(w)[0], np.asarray(x).dtype):
            return None
        e.glob.update(_LRS=row_parts.linear_relu_start, _LRR=row_parts.linear_relu_rows)
        y = f"v{item.outputs[0]}"
        args = ", ".join(e.ref(r) for r in item.lin.args)
        i, j = item.ctx_indices
        halves = [Unit([f"_LRR(c{i}, {y}, {args}, {k})  # Linear + Relu rows {k}"],
                       "Linear rows", writes=[y]) for k in (0, 1)]
        return [Unit(lines[:2] + [f"{y} = _LRS(c{i}, c{j}, {args})  # Linear + Relu start"],
                     "LinearRelu"), *halves]
    if isinstance(item, Instr) and item.cls is Linear and len(lines) == 2 and arr is not None:
        x, w = (arr[r[1]] if r[0] == "s" else r[1] for r in item.args[:2])
        if not row_parts.splits(np.shape(x), np.shape(w)[0], np.asarray(x).dtype):
            return None
        e.glob.update(_RS=row_parts.forward_start, _RR=row_parts.forward_rows)
        y = f"v{item.outs[0]}"
        args = ", ".join(e.ref(r) for r in item.args) + (", None" if len(item.args) < 3 else "")
        ctx = lines[1].split("(", 1)[1].split(",", 1)[0]
        halves = [Unit([f"_RR({ctx}, {y}, {args}, {k})  # Linear rows {k}"], "Linear rows",
                       writes=[y]) for k in (0, 1)]
        return [Unit([lines[0], f"{y} = _RS({ctx}, {args})  # Linear start"], "Linear"), *halves]
    if not isinstance(item, NodeBackward) or len(lines) != 1:
        return None
    op = cap.fwd[item.fwd_index].cls
    if op is not Linear or raw_backward(op) is None or item.outs[0] is None or \
            all(s is None for s in item.outs[1:]):
        return None
    e.glob.update(_LP=linear_part, _DXS=row_parts.dx_start, _DXR=row_parts.dx_rows,
                  _DWS=row_parts.dw_start, _DWR=row_parts.dw_rows)
    cls, ctx = e.const(op, "C"), f"c{item.fwd_index}"
    g = item.grads[0]
    n = len(item.outs)
    dx = f"v{item.outs[0]}"
    dw = ["_" if s is None else f"v{s}" for s in item.outs[1:]]
    g_arr = arr[g] if arr is not None and g is not None else None
    x_arr = arr[item.outs[0]] if arr is not None else None
    if g_arr is None or x_arr is None or not row_parts.splits(
            np.shape(x_arr), np.shape(g_arr)[-1], np.asarray(g_arr).dtype):
        call = f"_LP({cls}, {ctx}, (v{g},), {n}, "
        return [Unit([f"{dx}, {', '.join(['_'] * (n - 1))} = {call}0)  # Linear backward: input"],
                     "Linear dX"),
                Unit([f"_, {', '.join(dw)} = {call}1)  # Linear backward: weight"], "Linear dW")]
    units = [Unit([f"{dx} = _DXS({cls}, {ctx}, v{g})  # Linear backward: input"], "Linear dX")]
    units += [Unit([f"_DXR({ctx}, {dx}, v{g}, {k})"], "Linear dX rows", writes=[dx])
              for k in (0, 1)]
    units.append(Unit([f"{', '.join(dw)}, = _DWS({cls}, {ctx}, v{g}, {n})  # Linear backward: "
                       "weight"], "Linear dW"))
    if dw[0] != "_":
        units += [Unit([f"_DWR({ctx}, {dw[0]}, v{g}, {k})"], "Linear dW rows", writes=[dw[0]])
                  for k in (0, 1)]
    return units


# -------------------------------------------------------------------------------- the schedule
def _edges(units):
    """Each unit's predecessors (data, barriers, the order of random draws); False when a name
    is assigned by two units (the code would need renaming: not scheduled)."""
    maker, writers = {}, {}
    last_barrier, last_random = None, None
    since_barrier = []
    for k, u in enumerate(units):
        for n in u.uses:
            if n in maker:
                u.preds.add(maker[n])
            if n not in u.writes:  # a reader of a filled array follows every filler
                u.preds.update(writers.get(n, ()))
        for n in u.writes:
            writers.setdefault(n, []).append(k)
        for n in u.defs:
            if n in maker:
                return False
            maker[n] = k
        if u.barrier:
            u.preds.update(since_barrier)
            since_barrier = []
            last_barrier = k
        elif last_barrier is not None:
            u.preds.add(last_barrier)
        if u.random:
            if last_random is not None:
                u.preds.add(last_random)
            last_random = k
        since_barrier.append(k)
    return True


def plan(units):
    """(thread of each unit, units of each thread in their order, simulated finish times): the
    shortest of two kinds of list schedule (by time; with insertion into idle gaps) at the
    units' longest-remaining-path priorities and at PLAN_TRIES randomly perturbed ones (a
    weight gradient, free to go anywhere, is ranked by its own cost, which can put it ahead of
    the chain it should fill the gaps of)."""
    n = len(units)
    succ = [[] for _ in range(n)]
    for k, u in enumerate(units):
        for p in u.preds:
            succ[p].append(k)
    rank = np.zeros(n)  # the longest chain from a unit to the end, its own cost included
    for k in range(n - 1, -1, -1):
        rank[k] = units[k].cost + max((rank[s] for s in succ[k]), default=0.0)
    rng = np.random.default_rng(0)
    best = None
    for k in range(PLAN_TRIES + 1):
        priority = rank if k == 0 else rank * rng.uniform(0.5, 1.5, n)
        for how in (_timed_schedule, _list_schedule):
            tried = how(units, succ, priority)
            if best is None or max(tried[2]) < max(best[2]) - 1e-9:
                best = tried
    return best


def _caller_only(u):
    """Barriers, and units cheaper than CALLER_BELOW (a few us of Python that would hold the
    GIL on the worker while the caller's Python waits for it), go on the caller."""
    return u.barrier or u.cost < CALLER_BELOW


def _timed_schedule(units, succ, priority):
    """A list schedule driven by time: the thread that is free first takes, of the units whose
    inputs are ready by then, the one of highest priority, or else waits for the unit that can
    start soonest. Barriers (and units below CALLER_BELOW) go on the caller (thread 0)."""
    n = len(units)
    waiting = [len(u.preds) for u in units]
    ready = {k for k in range(n) if waiting[k] == 0}
    free = [0.0, 0.0]
    thread, start, finish = [0] * n, [0.0] * n, [0.0] * n
    order = [[], []]
    while ready:
        t = 0 if free[0] <= free[1] else 1
        pick = [k for k in ready if t == 0 or not _caller_only(units[k])]
        if not pick:  # only barriers left to start: the caller takes them
            t, pick = 0, list(ready)
        at = {k: max([free[t]] + [finish[p] + (SYNC_COST if thread[p] != t else 0.0)
                                  for p in units[k].preds]) for k in pick}
        now = [k for k in pick if at[k] <= free[t] + 1e-12]
        k = max(now, key=lambda k: (priority[k], -k)) if now else \
            min(pick, key=lambda k: (at[k], -priority[k], k))
        ready.discard(k)
        thread[k], start[k], finish[k] = t, at[k], at[k] + units[k].cost
        free[t] = finish[k]
        order[t].append(k)
        for s in succ[k]:
            waiting[s] -= 1
            if waiting[s] == 0:
                ready.add(s)
    return thread, order, finish


def _list_schedule(units, succ, priority):
    """A list schedule with insertion: the ready unit of highest priority goes where it ends
    first, in the earliest idle gap of a thread that it fits (after its inputs are ready) or
    after the thread's last unit. Barriers (and units below CALLER_BELOW) go on the caller
    (thread 0)."""
    n = len(units)
    waiting = [len(u.preds) for u in units]
    ready = [k for k in range(n) if waiting[k] == 0]
    busy = [[], []]  # per thread: (start, end) of its units, in time order
    thread, start, finish = [0] * n, [0.0] * n, [0.0] * n
    while ready:
        k = max(ready, key=lambda k: (priority[k], -k))
        ready.remove(k)
        u = units[k]
        best = None
        for t in ((0,) if _caller_only(u) else (0, 1)):
            at = max([0.0] + [finish[p] + (SYNC_COST if thread[p] != t else 0.0)
                              for p in u.preds])
            prev_end = 0.0
            for s0, s1 in busy[t]:  # the first gap it fits in
                if max(at, prev_end) + u.cost <= s0:
                    break
                prev_end = max(prev_end, s1)
            at = max(at, prev_end)
            if best is None or at + u.cost < best[1] + units[k].cost - 1e-12:
                best = (t, at)
        t, at = best
        thread[k], start[k], finish[k] = t, at, at + u.cost
        busy[t].append((at, at + u.cost))
        busy[t].sort()
        for s in succ[k]:
            waiting[s] -= 1
            if waiting[s] == 0:
                ready.append(s)
    order = [sorted((k for k in range(n) if thread[k] == t), key=lambda k: (start[k], k))
             for t in (0, 1)]
    return thread, order, finish


class Plan:
    """The units of one generated function; once their costs are measured, its schedule."""

    def __init__(self, e, prelude, units, signature, ret, name):
        self.glob, self.prelude, self.units = e.glob, prelude, units
        self.signature, self.ret, self.name = signature.replace("=None", ""), ret, name
        self.n_args = signature.count(",") + 1
        self.glob["_wait"], self.glob["_tick"] = wait, _tick
        timed = list(prelude) + ["_t = _tick(None, -1, 0)"]
        for k, u in enumerate(units):
            timed.extend(u.lines)
            timed.append(f"_t = _tick(_T, {k}, _t)")
        self.timed = self._function("timed", "_T", timed + [f"return {ret}"])
        self.thread = self.order = self.finish = None
        self.main = self.worker = None

    def _function(self, fname, extra, lines):
        ns = {}
        src = f"def {fname}({self.signature}, {extra}):\n    " + "\n    ".join(lines) + "\n"
        exec(compile(src, f"<ember.compile {self.name} {fname}>", "exec"), self.glob, ns)
        return ns[fname]

    def schedule(self, costs, trace=None):
        """Plan the units at ``costs`` (seconds each) and generate the two threads' code;
        False when the plan leaves the worker nothing to do. With a list ``trace`` the code
        also appends (thread, unit, perf_counter() and thread_time() after its waits, both
        after the unit) for each unit it runs (benchmarks/compile.py --schedule: the real step
        against the plan)."""
        units = self.units
        if trace is not None:
            self.glob.update(_TRACE=trace, _pc=time.perf_counter, _tt=time.thread_time)
        for u, c in zip(units, costs, strict=True):
            u.cost = c
        self.thread, order, self.finish = plan(units)
        if not order[1]:
            return False
        thread = self.thread
        maker = {n: k for k, u in enumerate(units) for n in u.defs}
        ret_names = _names([f"_r = {self.ret}"])[1]
        ret_preds = {maker[n] for n in ret_names if n in maker}
        flag = {}      # unit -> its flag index, when a unit of the other thread follows it
        slot = {}      # name -> its index in X, when the other thread reads it
        for k, u in [*enumerate(units), (None, None)]:
            t = 0 if k is None else thread[k]
            for p in sorted(u.preds if u is not None else ret_preds):
                if thread[p] != t:
                    flag.setdefault(p, 2 + len(flag))
            for n in u.uses if u is not None else ret_names:
                if n in maker and thread[maker[n]] != t:
                    slot.setdefault(n, len(slot))
        bodies = []
        for t in (0, 1):
            lines, waited, have = list(self.prelude), set(), set()
            for k in order[t] + ([None] if t == 0 else []):
                u = units[k] if k is not None else None
                for p in sorted(u.preds if u is not None else ret_preds):
                    if thread[p] != t and p not in waited:  # every edge, values or order
                        lines.append(f"if F[{flag[p]}] != g: _wait(F, {flag[p]}, g)")
                        waited.add(p)
                for n in u.uses if u is not None else ret_names:
                    if n in slot and thread[maker[n]] != t and n not in have:
                        lines.append(f"{n} = X[{slot[n]}]")
                        have.add(n)
                if u is None:
                    break
                if trace is not None:
                    lines.append("_t0, _c0 = _pc(), _tt()")
                lines.extend(u.lines)
                if trace is not None:
                    lines.append(f"_TRACE.append(({t}, {k}, _t0, _c0, _pc(), _tt()))")
                if k in flag:
                    lines.extend(f"X[{slot[n]}] = {n}" for n in u.defs if n in slot)
                    lines.append(f"F[{flag[k]}] = g")
            bodies.append(lines)
        bodies[0].append(f"return {self.ret}")
        self.main = self._function("main", "X, F, g", bodies[0])
        self.worker = self._function("worker", "X, F, g", bodies[1])
        self.sources = bodies
        self.flags = np.zeros(2 + len(flag), np.int64)  # [0] abort, [1] worker done, units
        self.n_values = len(slot)
        return True

    def report(self, costs=None):
        """Seconds of work in all, on each thread, along the longest dependency chain, and
        the step the plan predicts, at the planned costs or at ``costs`` (one per unit)."""
        units = self.units
        costs = [u.cost for u in units] if costs is None else costs
        longest, end = [0.0] * len(units), [0.0] * len(units)
        free = [0.0, 0.0]
        for k in sorted(range(len(units)), key=lambda k: (self.finish[k] - units[k].cost, k)):
            t = self.thread[k]
            start = max([free[t]] + [end[p] for p in units[k].preds])
            end[k] = free[t] = start + costs[k]
        for k, u in enumerate(units):
            longest[k] = costs[k] + max((longest[p] for p in u.preds), default=0.0)
        work = [sum(c for c, t in zip(costs, self.thread, strict=True) if t == w) for w in (0, 1)]
        return {"total": sum(costs), "caller": work[0], "worker": work[1],
                "critical_path": max(longest, default=0.0), "planned_step": max(end)}


def build(e, cap, signature, ret, name):
    """A Plan for the function that emitter ``e`` generated, or None (nothing to overlap, or
    code the scheduler does not handle)."""
    prelude, units, guards = _units(e, cap)
    if not units or len(units) < 2 or not _edges(units):
        return None
    if CHAINS[0]:
        units = _join_chains(units)
    p = Plan(e, prelude, units, signature, ret, name)
    p.guards = guards
    return p


# NOTE [Chains of units]
# A unit whose only successor (barriers aside) is one other unit, which needs nothing that the
# first's own ancestors do not already provide (NCF: a scatter into an embedding gradient, its
# write into ``.grad`` and that table's Adam part; the loss gradient's fused kernel and the view
# after it), runs as one unit with it: the second starts when the first ends either way, so
# splitting them gains the plan nothing and costs a hand-off whenever it puts them on two
# threads. Running the second right after the first is an order the scheduler could already
# choose (its inputs are all ready by then), so the values are the same. Opt-in
# (EMBER_COMPILE_INTEROP_CHAINS=1) until a quiet-window A/B: NCF goes from 50 units and ~32
# cross-thread waits to 44 units and ~27 waits; its wall-time effect is not measured (2026-11-27,
# load 1.5-2.9). One hang of tests/compile/test_compile_two_threads.py (the caller polling a
# flag, the worker idle) was seen in six runs of the file with this on, cause not found.
CHAINS = [os.environ.get("EMBER_COMPILE_INTEROP_CHAINS", "").strip() == "1"]


def _join_chains(units):
    """``units`` with each such chain link joined (NOTE [Chains of units]); preds remapped."""
    while True:
        n = len(units)
        succ = [[] for _ in range(n)]
        anc = [0] * n  # bit set of each unit's ancestors; preds always come earlier
        for k, u in enumerate(units):
            for p in u.preds:
                anc[k] |= anc[p] | (1 << p)
                if not u.barrier:
                    succ[p].append(k)
        into = {}  # b -> a: b joins a
        for a, u in enumerate(units):
            if u.barrier or len(succ[a]) != 1 or a in into:
                continue
            b = succ[a][0]
            if b in into or any(x == b for x in into.values()):
                continue
            others = sum(1 << p for p in units[b].preds if p != a)
            if not others & ~anc[a]:
                into[b] = a
        if not into:
            return units
        joined, new_index = [], {}
        for k, u in enumerate(units):
            if k in into:
                new_index[k] = new_index[into[k]]
                continue
            new_index[k] = len(joined)
            joined.append(u)
        for b, a in into.items():
            ua, ub = units[a], units[b]
            j = Unit(ua.lines + ub.lines, f"{ua.label} + {ub.label}", writes=ua.writes + ub.writes)
            j.preds = ua.preds | ub.preds
            joined[new_index[a]] = j
        for k, u in enumerate(joined):
            u.preds = {new_index[p] for p in u.preds} - {k}
        units = joined


def _tick(acc, k, t0):
    """The serial accounting run's clock: adds this thread's CPU time since t0 to acc[k]."""
    now = time.thread_time()
    if acc is not None:
        acc[k] += now - t0
    return time.thread_time()


# ----------------------------------------------------------------------------------- running
@numba.njit(nogil=True, cache=True)
def _k_wait(flags, k, gen, iterations):
    """1 once flags[k] == gen, 2 once flags[0] == gen (abort), 0 after ``iterations`` polls;
    without the GIL, yielding the core between polls."""
    mine, abort = flags[k:k + 1], flags[0:1]
    for _ in range(iterations):
        if _spin._load_acquire(mine) == gen:
            return 1
        if _spin._load_acquire(abort) == gen:
            return 2
        _spin._yield_core()
    return 0


class Aborted(Exception):
    """The other thread of a two-thread replay raised; its exception is re-raised."""


_polls = [0]  # polls per WAIT_SPIN


def wait(flags, k, gen):
    """Wait until flags[k] == gen: poll, then sleep between polls; raise Aborted on abort."""
    while True:
        got = _k_wait(flags, k, gen, _polls[0])
        if got == 1:
            return
        if got == 2:
            raise Aborted
        time.sleep(50e-6)


class _Worker:
    """The thread that runs the worker halves of two-thread replays, one at a time."""

    def __init__(self):
        self.posts = np.zeros(1, np.int64)
        self.go = _thread.allocate_lock()
        self.go.acquire()
        self.job = None
        self.error = None
        self.ident = None
        self.cpu = 0.0  # this thread's CPU seconds in jobs (benchmarks/compile.py --schedule)
        self.thread = threading.Thread(target=self._loop, name="ember-compile-worker",
                                       daemon=True)
        self.thread.start()

    def _loop(self):
        self.ident = threading.get_ident()
        if _cpus[0]:
            os.sched_setaffinity(0, {_cpus[0][1]})  # NOTE [Two threads on two cores]
        # not read from posts: the caller may have posted before this thread got to run
        # (the first call after _start(); reading posts here lost that post: a hang)
        seen = 0
        while True:
            if not _spin._k_poll(self.posts, seen, _idle_polls[0]):
                self.go.acquire()
            else:
                self.go.acquire(blocking=False)  # the wake-up that came with the post
            if self.posts[0] == seen:
                continue
            seen = self.posts[0]
            fn, args, flags, gen, grad = self.job
            self.job = None
            _state.enabled = grad
            cpu = time.thread_time()
            try:
                fn(*args, flags, gen)
            except Aborted:
                pass
            except BaseException as exc:  # re-raised by the caller
                self.error = exc
                flags[0] = gen
            finally:
                self.cpu += time.thread_time() - cpu
                flags[1] = gen

    def post(self, fn, args, flags, gen):
        self.error = None
        self.job = (fn, args, flags, gen, _state.enabled)
        self.posts[0] += 1
        try:
            self.go.release()
        except RuntimeError:  # a wake-up is pending already
            pass


_worker: list = [None]
_busy = [_thread.allocate_lock()]
_gen = itertools.count(1)
_idle_polls = [0]


def _reset_after_fork():
    _worker[0] = None
    _cpus[0] = None
    _busy[0] = _thread.allocate_lock()


os.register_at_fork(after_in_child=_reset_after_fork)


# NOTE [Two threads on two cores]
# The two threads hand the GIL to each other at every kernel call, and Linux tends to wake a
# thread on the core of the thread that woke it: left alone, both threads of a replay often
# ended up sharing one core (NCF's step on two threads, 2 vCPUs at load ~1, 2026-11-26 22:44
# UTC, 300 steps per process: 3.85, 2.22, 3.68, 2.47, 2.07, 2.28 ms; with the caller and the
# worker each held on its own core 2.27, 2.22, 2.34, 2.34, 2.24, 2.19 ms; serial 2.76 ms). So
# the worker keeps to one core of the process's CPU set and, for the duration of a two-thread
# call, the caller to another (its own set restored after). Not when the set has one CPU;
# EMBER_COMPILE_INTEROP_PIN=0 turns it off.
_cpus: list = [None]  # (caller's CPU, worker's CPU, the process's CPU set), or () for none


def _pick_cpus():
    if os.environ.get("EMBER_COMPILE_INTEROP_PIN", "").strip() == "0" or \
            not hasattr(os, "sched_setaffinity"):
        return ()
    mask = os.sched_getaffinity(0)
    if len(mask) < 2:
        return ()
    cpus = sorted(mask)
    return (cpus[0], cpus[1], mask)


def _start():
    _spin.calibrate()
    _cpus[0] = _pick_cpus()
    per_spin = max(1, _spin._iterations[0]) / _spin.SPIN_SECONDS
    _polls[0] = max(1, int(per_spin * WAIT_SPIN))
    _idle_polls[0] = max(1, int(per_spin * IDLE_SPIN))
    _worker[0] = _Worker()


def usable():
    """Whether a two-thread replay may run now (see the NOTE's list)."""
    from .. import _onepool
    from .hooks import _ACTIVE
    requested = _threads._requested[0]
    w = _worker[0]
    return (ENABLED[0] and (requested is None or requested > 1) and not _onepool.enabled()
            and _ACTIVE[0] is None and (w is None or w.ident != threading.get_ident()))


class TwoThreads:
    """A generated function with its two-thread plan: the first MEASURED_CALLS calls that could
    run on two threads run serially with each unit timed (CPU time, OpenBLAS at one thread),
    then the plan is made from the fastest time of each unit, and later calls run on two
    threads when `usable()` and the worker is free, else serially."""

    def __init__(self, serial, plan_):
        self.serial, self.plan = serial, plan_
        self.times = []    # per measured call: seconds per unit
        self.ready = None  # None: still measuring; then whether the plan uses the worker
        self.calls = 0     # calls that ran on two threads (tests, benchmarks)

    def measure(self, *args):
        """Run the call serially with each unit timed; the times go to ``self.times``."""
        from .runtime import _blas_enter, _blas_exit
        p = self.plan
        if len(args) < p.n_args:  # forward(I, E) without T
            args = (*args, None)
        acc = [0.0] * len(p.units)
        blas = _blas_enter(1)
        try:
            out = p.timed(*args, acc)
        finally:
            _blas_exit(blas)
        self.times.append(acc)
        return out

    def __call__(self, *args):
        if not usable() or not all(ok() for ok in self.plan.guards):
            return self.serial(*args)
        if self.ready is None:
            if len(self.times) < MEASURED_CALLS:
                return self.measure(*args)
            self.ready = self.plan.schedule([min(c) for c in zip(*self.times, strict=True)])
        if not self.ready:
            return self.serial(*args)
        busy = _busy[0]
        if not busy.acquire(blocking=False):  # the worker serves another call
            return self.serial(*args)
        try:
            return self._run(args)
        finally:
            busy.release()

    def _run(self, args):
        from .runtime import _blas_enter, _blas_exit
        if _worker[0] is None:
            _start()
        w = _worker[0]
        p = self.plan
        if len(args) < p.n_args:
            args = (*args, None)
        gen = next(_gen)
        flags = p.flags
        xs = [None] * p.n_values
        blas = _blas_enter(1)
        pin = _cpus[0]
        if pin:  # NOTE [Two threads on two cores]
            os.sched_setaffinity(0, {pin[0]})
        try:
            w.post(p.worker, (*args, xs), flags, gen)
            try:
                out = p.main(*args, xs, flags, gen)
            except BaseException as exc:
                flags[0] = gen
                _wait_done(flags, gen)
                if isinstance(exc, Aborted) and w.error is not None:
                    raise w.error from None
                raise
            _wait_done(flags, gen)
            if w.error is not None:
                raise w.error
        finally:
            if pin:
                os.sched_setaffinity(0, pin[2])
            _blas_exit(blas)
        self.calls += 1
        return out


def _wait_done(flags, gen):
    """Wait until the worker has finished this call (flags[1] == gen), whatever happened."""
    done = flags[1:2]
    while done[0] != gen:
        if not _spin._k_poll(done, done[0], _polls[0]):
            time.sleep(50e-6)


def wrap(plans, cap, fwd, bwd, name):
    """fwd and bwd as TwoThreads where a two-thread schedule exists (plans: from
    codegen.generate)."""
    out = [fwd, bwd]
    for k, (e, signature, ret) in enumerate(plans):
        p = build(e, cap, signature, ret, f"{name} {('forward', 'backward')[k]}")
        if p is not None and out[k] is not None:
            out[k] = TwoThreads(out[k], p)
    return out[0], out[1]
