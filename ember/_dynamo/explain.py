"""explain, reset, disable and the other module-level helpers of torch._dynamo."""
from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field

from . import eval_frame
from .capture import SideEffect
from .exc import Unsupported


@dataclass
class GraphCompileReason:
    """Why a graph was cut: ``reason`` and the user frame it happened in."""

    reason: str
    user_stack: list = field(default_factory=list)
    graph_break: bool = True

    def __str__(self):
        where = self.user_stack[0] if self.user_stack else "<unknown>"
        return f"{self.reason}\n  at {where}"


@dataclass
class ExplainOutput:
    """What ``explain(fn)(*args)`` returns (torch._dynamo.backends.debugging.ExplainOutput)."""

    graphs: list
    graph_count: int
    graph_break_count: int
    break_reasons: list
    op_count: int
    ops_per_graph: list = field(default_factory=list)
    out_guards: list = field(default_factory=list)
    compile_times: str = ""
    replayed_calls: list = field(default_factory=list)  # ember: calls and reads the replay repeats

    def __str__(self):
        lines = [f"Graph Count: {self.graph_count}",
                 f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}", "Break Reasons:"]
        for i, r in enumerate(self.break_reasons, 1):
            lines.append(f"  Break Reason {i}:")
            lines.append(f"    Reason: {r.reason}")
            for s in r.user_stack:
                lines.append(f"    User Stack: {s}")
        lines.append("Ops per Graph:")
        for i, ops in enumerate(self.ops_per_graph, 1):
            lines.append(f"  Ops {i}:")
            lines.extend(f"    {op}" for op in ops)
        if self.replayed_calls:
            lines.append("Replayed calls:")
            lines.extend(f"  {c}" for c in self.replayed_calls)
        if self.compile_times:
            lines.append(f"Compile Times: {self.compile_times}")
        return "\n".join(lines) + "\n"


def explain(f, *extra_args, **extra_kwargs):
    """``explain(fn)(*args, **kwargs)``: capture fn once and report graphs and graph breaks.

    Runs the function (eagerly, once) under the recorder without compiling kernels. Each
    graph break names the construct, why it cannot be captured, and the user line.
    """
    def inner(*args, **kwargs):
        from .trace import capture_call
        eval_frame._local.depth = getattr(eval_frame._local, "depth", 0) + 1
        t0 = time.perf_counter()
        try:
            _, cap = capture_call(f, args, kwargs, fullgraph=False)
        finally:
            eval_frame._local.depth -= 1
        took = time.perf_counter() - t0
        if cap.splits and not cap.breaks:  # NOTE [Graph breaks that split] in segments.py
            return _explain_segments(cap, took)
        reasons = [GraphCompileReason(r, [w]) for r, w in cap.breaks]
        ops = [inst.cls.__name__ for inst in cap.fwd if inst.node is not None or
               hasattr(inst, "tuple_out")]
        # what the replay also does: the calls it repeats (zero_grad, the inline backward,
        # clip_grad_norm_, step) and the item() numbers it reads after the step
        # (an in-place write into an outside tensor says what it writes: writes.py)
        calls = [inst.what() if hasattr(inst, "what") else f"{inst.cls.__name__}()"
                 for inst in cap.fwd if isinstance(inst, SideEffect)]
        calls += ["item() read after the replay" for o in cap.outputs
                  if isinstance(o, tuple) and o[0] == "item"]
        graphs = [] if cap.breaks else [cap]
        return ExplainOutput(graphs, len(graphs), len(reasons), reasons,
                             len(ops) if graphs else 0, [ops] if graphs else [], [],
                             f"capture {took * 1e3:.1f} ms", calls if graphs else [])

    if extra_args or extra_kwargs:
        return inner(*extra_args, **extra_kwargs)
    return inner


def _explain_segments(cap, took):
    """The report of a call split at graph breaks: one graph per segment."""
    reasons = [GraphCompileReason(r, [w]) for _, r, w, _ in cap.splits]
    graphs = [seg.cap for seg in cap.segments]
    ops = [[inst.cls.__name__ for inst in g.fwd] for g in graphs]
    return ExplainOutput(graphs, len(graphs), len(reasons), reasons, sum(map(len, ops)), ops,
                         [], f"capture {took * 1e3:.1f} ms")


def reset():
    """Forget every compiled specialisation and the counters (torch._dynamo.reset)."""
    for c in list(eval_frame._all_compiled):
        c.reset()
    for k in eval_frame.counters:
        eval_frame.counters[k] = 0


def disable(fn=None, recursive=True, *, reason=None):
    """Run ``fn`` eagerly, never captured; inside a compiled region calling it is a graph break."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if eval_frame.is_compiling():
            from .capture import current_recorder
            rec = current_recorder()
            if rec is not None:
                why = f": {reason}" if reason else ""
                rec.graph_break(f"{getattr(fn, '__qualname__', fn)} is marked with "
                                f"ember.compiler.disable{why}")
        eval_frame._Disabled.depth += 1
        try:
            return fn(*args, **kwargs)
        finally:
            eval_frame._Disabled.depth -= 1

    wrapper._ember_compile_disabled = True
    return wrapper


def optimize(backend="inductor", *, nopython=False, dynamic=None, disable=False):
    """Old spelling: ``optimize(backend)(fn)`` is ``compile(fn, backend=backend)``."""
    from .._compile import compile as _compile

    def deco(fn):
        if disable:
            return fn
        return _compile(fn, backend=backend, fullgraph=nopython, dynamic=dynamic)
    return deco


def mark_dynamic(t, index, *, min=None, max=None):
    """Mark dimension(s) ``index`` of tensor ``t`` as dynamic: shape changes there recompile
    without counting against the recompile limit."""
    dims = set(getattr(t, "_dynamo_dynamic_indices", ()))
    dims.update([index] if isinstance(index, int) else index)
    t._dynamo_dynamic_indices = dims


def mark_static(t, index=None):
    """Undo mark_dynamic (all dims when index is None)."""
    if hasattr(t, "_dynamo_dynamic_indices"):
        del t._dynamo_dynamic_indices


def mark_static_address(t, guard=False):
    """Mark a tensor whose memory stays put between calls (transformers' caches call it).
    ember's replays read every tensor where it is at each call, so this only records the mark
    as torch does; a non-tensor is a TypeError."""
    from .._tensor import Tensor
    if not isinstance(t, Tensor):
        raise TypeError(f"mark_static_address expects a tensor but received {type(t)}")
    t._dynamo_static_input_type = "guarded" if guard else "unguarded"


def allow_in_graph(fn):
    """Accepted for compatibility: every ember op is already capturable."""
    return fn


def assume_constant_result(fn):
    """Mark ``fn``'s result as a constant of a compiled graph; returns ``fn`` itself.

    A capture already runs the Python around the ops once and keeps the values it computes, so
    a call to ``fn`` inside a compiled function is not repeated on replays either way. Eagerly
    ``fn`` runs as written."""
    fn._dynamo_marked_constant = True
    return fn


__all__ = ["explain", "reset", "disable", "optimize", "mark_dynamic", "mark_static",
           "mark_static_address",
           "allow_in_graph", "assume_constant_result", "Unsupported", "ExplainOutput",
           "GraphCompileReason"]
