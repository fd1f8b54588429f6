"""`run.py --compile`: every program's models run through ember.compile, unmodified.

The outermost module call of a program (``model(x)``, ``criterion(out, y)``: a Module called
while no other module is running on this thread) goes through ``ember.compile(module)``, one
compiled wrapper per module object; the modules it calls run as the capture records them.
A program passes as in the eager corpus run: exit 0 and its metric meets the torch-set bar.
Graph breaks and recompiles are allowed (they are counted, not failures); COMPAT_COMPILE_REPORT
names a file that gets one line per compiled module at exit: calls, captures, breaks.
"""
from __future__ import annotations

import atexit
import os
import threading
import weakref


def install(ember):
    Module = ember.nn.Module
    plain_call = Module.__call__
    state = threading.local()
    compiled = weakref.WeakKeyDictionary()
    counts = weakref.WeakKeyDictionary()  # module -> outermost calls

    def call(self, *args, **kwargs):
        if getattr(state, "inside", False) or any(
                isinstance(a, ember.fx.Proxy) for a in (*args, *kwargs.values())):
            return plain_call(self, *args, **kwargs)  # (fx's tracer records module calls)
        fn = compiled.get(self)
        if fn is None:
            fn = compiled[self] = ember.compile(self)
        state.inside = True
        try:
            out = fn(*args, **kwargs)
        finally:
            state.inside = False
        counts[self] = counts.get(self, 0) + 1
        return out

    Module.__call__ = call

    report = os.environ.get("COMPAT_COMPILE_REPORT")
    if report:
        def write():
            with open(report, "a") as fh:
                for m, fn in list(compiled.items()):
                    # a compiled module keeps its breaks on its dynamo_ctx (looked up on the
                    # module itself, last_breaks is the wrapped module's missing attribute)
                    breaks = getattr(getattr(fn, "dynamo_ctx", fn), "last_breaks", None) or []
                    fh.write(f"{type(m).__name__}\tcalls={counts.get(m, 0)}\t"
                             f"breaks={[b[0][:120] for b in breaks]}\n")
        atexit.register(write)
