"""ember.compile side by side with eager ember, torch eager and torch.compile, in one run.

    python benchmarks/compile.py [--steps 30] [--only ncf,block,fusion,compile_time,recompiles]
                                 [--no-torch-compile] [--block N] [--pool-ab]
                                 [--without scatter,epilogue,catwrite]
                                 [--profile ncf|block|block_small] [--per-process 5]
                                 [--interop] [--schedule ncf|block|block_small]

Rows:
  ncf           the NCF training step: one function doing zero_grad, forward + loss,
                loss.backward() and the Adam step, the whole function compiled (issue 19
                target: compiled >= 2x eager ember)
  block         a transformer block (LayerNorm, attention, GELU MLP) forward + backward,
                (8, 64, 256) input (target >= 1.3x eager ember); block_small: (4, 32, 64)
  fusion        a cheap elementwise chain (mul, add, relu, mul, clamp) on 1M floats
  compile_time  compile time of SPEC models: the first compiled call minus one eager step
                (capture, codegen) plus the first replay minus a steady one (numba kernels),
                each in a fresh process, with numba's on-disk kernel cache cold, then warm
                (target <= 2 s warm)
  recompiles    recompiles over a fixed-shape training loop (target 0)

--schedule ROW (ncf, block, block_small) prints the two-thread plan of the compiled step
(EMBER_COMPILE_INTEROP, NOTE [Two threads in a replay] in ember/_dynamo/schedule.py): each
function's units at their measured one-thread CPU time, the work on each thread, the longest
dependency chain and the planned step; then times the same compiled step serially and on two
threads in alternating blocks of 10 (wall, process CPU, the caller's and the worker's CPU);
then the two-thread step traced against its plan (per thread: the units' wall and CPU time vs
their planned cost, the time outside units, context switches per step; the units that grew
most).
--interop adds the two-thread configuration to the --per-process rows (the headline A/B).

--profile ROW (ncf, block, block_small) prints where a compiled step's time goes instead: each
call of the replay's generated function timed (wall and main-thread CPU per step), grouped into
the optimizer step, GEMM ops, embedding kernels, fused kernels and other ops; "the rest" is
the step's CPU minus the calls' (the generated function's own lines, the guards, the output
wrapping; for block also the eager loss and backward call around the compiled module). The
timers add ~1-2 us a call.

The ncf and block rows are first timed one configuration per process (--per-process N
rounds, default 5; NOTE [Compiled steps one configuration per process]): the headline, as a
user runs one of them. Then, as a secondary figure, all rows in one process: times per step,
the median over ``--steps`` steps of wall time and of process CPU time, the frameworks
interleaved step by step. Interleaved, each runs beside the others' threads (torch's OpenMP
pool, OpenBLAS's spinning worker): in the quiet window of 2026-11-26 19:42 UTC that slowed
ember eager more than ember.compile, and the interleaved compiled/eager ratios read 1.1-1.4x
above the per-process ones (benchmarks/RESULTS.md). On a shared machine the CPU time is the
steadier number (it does not count time spent waiting for a core); both are printed.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import ember  # noqa: E402
from ember import _onepool  # noqa: E402
from examples.models.table1 import WORKLOADS  # noqa: E402

torch = None
if os.environ.get("EMBER_COMPILE_BENCH_CHILD") != "ember":  # an ember-only child: no torch
    try:
        import torch
    except ImportError:  # the torch columns stay empty
        pass


def _order(fns, steps, block):
    """The (name, fn) sequence to time: step by step interleaved, or with ``block`` steps of one
    framework in a row (its first two untimed: None marks them)."""
    if not block:
        return [(k, f) for _ in range(steps) for k, f in fns.items()]
    seq = []
    for _ in range(-(-steps // block)):
        for k, f in fns.items():
            seq += [(None, f)] * 2 + [(k, f)] * block
    return seq


def _timed(fns, steps, block=0):
    """{name: (median wall ms, median cpu ms, median main-thread cpu ms)} running the fns
    interleaved step by step (or in blocks: see --block). The process CPU time counts BLAS
    worker threads, including their spin-waits; the main thread's CPU time is the work on the
    step's critical path."""
    wall = {k: [] for k in fns}
    cpu = {k: [] for k in fns}
    main = {k: [] for k in fns}
    for k, f in _order(fns, steps, block):
        if isinstance(f, tuple):  # (prep, step): prep runs untimed before each step
            f[0]()
            f = f[1]
        if k is None:
            f()
            continue
        w, c, t = time.perf_counter(), time.process_time(), time.thread_time()
        f()
        main[k].append((time.thread_time() - t) * 1e3)
        cpu[k].append((time.process_time() - c) * 1e3)
        wall[k].append((time.perf_counter() - w) * 1e3)
    return {k: (statistics.median(wall[k]), statistics.median(cpu[k]),
                statistics.median(main[k])) for k in fns}


def _ncf_step(lib, compile_fn):
    lib.manual_seed(0)
    model, opt, batches, loss_fn, _ = WORKLOADS["ncf"](lib)

    def train_step(u, i, y):
        opt.zero_grad()
        loss = loss_fn(model(u, i), y)
        loss.backward()
        opt.step()
        return loss

    # the whole step is compiled, as torch.compile users write it (NOTE [Training-step
    # capture] in ember/_dynamo/train_step.py)
    f = compile_fn(train_step) if compile_fn is not None else train_step
    it = iter(range(10 ** 9))

    def step():
        (u, i), y = batches[next(it) % len(batches)]
        f(u, i, y)
    return step, f


def _block(lib, d=256, heads=4):
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
            q, k, v = (z.reshape(b, t, heads, d // heads).transpose(1, 2) for z in (q, k, v))
            att = ((q @ k.transpose(-2, -1)) * (1.0 / (d // heads) ** 0.5)).softmax(dim=-1)
            y = (att @ v).transpose(1, 2).reshape(b, t, d)
            x = x + self.proj(y)
            return x + self.fc2(nn.functional.gelu(self.fc1(self.ln2(x))))

    return Block()


def _block_step(lib, compile_fn, b=8, t=64, d=256):
    lib.manual_seed(0)
    block = _block(lib, d)
    f = compile_fn(block) if compile_fn is not None else block
    x = lib.from_numpy(np.random.default_rng(0).standard_normal((b, t, d)).astype(np.float32))

    def step():
        for p in block.parameters():
            p.grad = None
        f(x).square().mean().backward()
    return step, f


def _chain(x):
    return ((x * 1.5 + 0.25).relu() * x).clamp(-1.0, 1.0)


def _fusion_step(lib, compile_fn):
    x = lib.from_numpy(np.random.default_rng(0).standard_normal(1 << 20).astype(np.float32))
    f = compile_fn(_chain) if compile_fn is not None else _chain
    return (lambda: f(x)), f


_WHAT = {
    "ncf": "the whole training step compiled: one function doing opt.zero_grad(), forward, "
           "BCE-with-logits loss, loss.backward(), Adam opt.step()",
    "block": "the block module compiled; .square().mean().backward() called on its output",
    "block_small": "as block",
    "fusion": "the elementwise chain function compiled",
}


def _pool(flag):
    return lambda: _onepool.set_enabled(flag)


# --without name -> ember._dynamo module with the ENABLED switch
_REWRITES = {"scatter": "scatter", "epilogue": "epilogue", "catwrite": "catwrite"}


def _row(name, make, steps, use_torch_compile, block=0, pool_ab=False, without=()):
    fns = {}
    step, _ = make(ember, None)
    fns["ember eager"] = (_pool(False), step) if pool_ab else step
    if pool_ab:  # an eager step of the same kind on ember's one pool (NOTE [One pool])
        fns["eager pool"] = (_pool(True), make(ember, None)[0])
    if pool_ab:
        _onepool.set_enabled(False)  # captured with the pool off
    step, compiled = make(ember, ember.compile)
    for _ in range(3):  # capture, then warm-up replays
        step()
    fns["ember.compile"] = (_pool(False), step) if pool_ab else step
    for rw in without:  # the same capture without one of the replay's rewrites (paired A/B)
        mod = importlib.import_module(f"ember._dynamo.{_REWRITES[rw]}")
        mod.ENABLED[0] = False
        try:
            wstep, _ = make(ember, ember.compile)
            for _ in range(3):
                wstep()
        finally:
            mod.ENABLED[0] = True
        fns[f"compile -{rw[:4]}"] = wstep
    if pool_ab:  # its own capture with the pool on (what fuses depends on it)
        _onepool.set_enabled(True)
        pstep, _ = make(ember, ember.compile)
        for _ in range(3):  # capture, then the parallel kernels' first use
            pstep()
        _onepool.set_enabled(False)
        fns["compile pool"] = (_pool(True), pstep)
    if torch is not None:
        torch.set_num_threads(max(1, ember.get_num_threads()))
        fns["torch eager"] = (_pool(False), make(torch, None)[0]) if pool_ab else \
            make(torch, None)[0]
        if use_torch_compile:
            t0 = time.perf_counter()
            tstep = make(torch, torch.compile)[0]
            for _ in range(3):
                tstep()
            print(f"  (torch.compile warm-up of {name}: {time.perf_counter() - t0:.1f} s)")
            fns["torch.compile"] = tstep
    res = _timed(fns, steps, block)
    if pool_ab:
        _onepool.set_enabled(None)
    base = res["ember eager"]
    print(f"{name}: {_WHAT.get(name, '')}")
    for k, (w, c, m) in res.items():
        print(f"  {k:14s} wall {w:8.2f} ms  cpu {c:8.2f} ms  main-thread cpu {m:8.2f} ms   "
              f"speed-up vs ember eager: wall {base[0] / w:4.2f}x  cpu {base[1] / c:4.2f}x  "
              f"main {base[2] / m:4.2f}x")
    stats = getattr(compiled, "stats", None) or getattr(
        getattr(compiled, "dynamo_ctx", None), "stats", None)
    if stats is not None:
        print(f"  ember.compile stats: {stats}")
    return res


_CHILD = r"""
import sys, time, json
sys.path.insert(0, {root!r})
import numpy as np, ember
from examples.models.table1 import WORKLOADS
ember.manual_seed(0)
model, opt, batches, loss_fn, _ = WORKLOADS[{name!r}](ember)
x, y = batches[0]
args = x if isinstance(x, tuple) else (x,)
def fl(*a):
    return loss_fn(model(*a), y)
fl(*args).backward()  # imports and first-touch costs are not compile time
t = time.perf_counter(); fl(*args).backward(); eager = time.perf_counter() - t
f = ember.compile(fl)
t = time.perf_counter(); f(*args).backward(); first = time.perf_counter() - t
t = time.perf_counter(); f(*args).backward(); second = time.perf_counter() - t
t = time.perf_counter(); f(*args).backward(); replay = time.perf_counter() - t
print(json.dumps(dict(eager=eager, first=first, second=second, replay=replay, stats=f.stats)))
"""


def _compile_time(names):
    root = os.path.dirname(HERE)
    cache = tempfile.mkdtemp(prefix="ember-compile-cache-")
    env = dict(os.environ, EMBER_COMPILE_CACHE=cache,
               PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    print(f"compile time (fresh process each; kernel cache {cache}):")
    for name in names:
        for state in ("cold", "warm"):
            out = subprocess.run([sys.executable, "-c", _CHILD.format(root=root, name=name)],
                                 env=env, capture_output=True, text=True, timeout=1800)
            if out.returncode:
                print(f"  {name} {state}: failed\n{out.stderr[-2000:]}")
                break
            r = json.loads(out.stdout.strip().splitlines()[-1])
            # capture (first call minus an eager step) + numba's kernel compile or cache load
            # (the first replay minus a steady one)
            over = (r["first"] - r["eager"]) + (r["second"] - r["replay"])
            print(f"  {name:13s} {state}: compile time {over:6.2f} s (first call {r['first']:.2f}"
                  f" s, first replay {r['second']:.2f} s, eager step {r['eager']:.2f} s, "
                  f"replay step {r['replay']:.2f} s)")


def _recompiles(steps):
    ember.manual_seed(0)
    model, opt, batches, loss_fn, _ = WORKLOADS["ncf"](ember)
    c = ember.compile(model)
    for s in range(steps):
        (u, i), y = batches[s % len(batches)]
        opt.zero_grad()
        loss_fn(c(u, i), y).backward()
        opt.step()
    st = c.dynamo_ctx.stats
    print(f"recompiles over a fixed-shape NCF training loop of {steps} steps: "
          f"{st['recompiles']} (captures {st['captures']}, replays {st['hits']})")


def _label(line):
    """(callee global, label) of one generated line ``... = _F12(c3, ...)  # Mul``."""
    m = re.search(r"(_[A-Z]+\d+)\(", line)
    if m is None:
        return None
    note = line.split("#", 1)[1].strip() if "#" in line else ""
    return m.group(1), note or line.strip().split("=")[0].strip() + " fused kernel"


def _part(label):
    if label in ("step", "zero_grad") or label.startswith("zero_grad"):
        return "optimizer step / zero_grad"
    if label.startswith(("Linear", "Matmul", "Bmm", "Mm")):
        return "GEMM ops (Linear/matmul, fwd + bwd incl. bias)"
    if label.startswith("Embedding"):
        return "embedding lookups / gradients"
    if label.endswith("fused kernel"):
        return "fused elementwise kernels"
    if label.startswith(("BinaryCrossEntropy", "Sigmoid")):
        return "BCE loss"
    return "other ops"


def _profile(name, steps):
    """Per-call CPU of a compiled step: see --profile in the module docstring."""
    rows = {"ncf": _ncf_step, "block": _block_step,
            "block_small": lambda lib, c: _block_step(lib, c, 4, 32, 64)}
    step, compiled = rows[name](ember, ember.compile)
    for _ in range(3):
        step()
    entry = list(compiled._cache.values())[-1] if hasattr(compiled, "_cache") else \
        list(compiled.dynamo_ctx._cache.values())[-1]
    graph = entry.graph
    acc = {}
    for fn, src in ((graph.fwd, graph.sources[0]), (graph.bwd, graph.sources[1])):
        if fn is None or not src:
            continue
        glob = fn.__globals__
        for line in src.splitlines():
            hit = _label(line)
            if hit is None or hit[0] not in glob or not callable(glob[hit[0]]):
                continue
            key = f"{hit[0]} {hit[1]}"
            if key in acc:
                continue
            acc[key] = [0.0, 0.0]
            glob[hit[0]] = _timer(glob[hit[0]], acc[key])
    cpu = []
    for _ in range(steps):
        c = time.thread_time()
        step()
        cpu.append(time.thread_time() - c)
    total = statistics.mean(cpu) * 1e3
    parts = {}
    print(f"{name}: compiled step, main-thread cpu {total:.3f} ms a step (mean of {steps}, "
          f"median {statistics.median(cpu) * 1e3:.3f}; timers on)")
    for key, (w, c) in sorted(acc.items(), key=lambda kv: -kv[1][1]):
        print(f"  {c / steps * 1e3:7.3f} ms cpu {w / steps * 1e3:7.3f} ms wall  {key}")
        part = _part(key.split(" ", 1)[1])
        parts[part] = parts.get(part, 0.0) + c / steps * 1e3
    parts["the rest (replay glue; eager code around the compiled call)"] = \
        total - sum(parts.values())
    print("  by part (main-thread cpu per step):")
    for part, ms in sorted(parts.items(), key=lambda kv: -kv[1]):
        print(f"    {ms:7.3f} ms  {100 * ms / total:5.1f} %  {part}")


def _schedule(name, steps, variants=None):
    """The two-thread plan of a compiled step and a paired in-process A/B: see --schedule in
    the module docstring."""
    from ember._dynamo import schedule
    schedule.ENABLED[0] = True
    rows = {"ncf": _ncf_step, "block": _block_step,
            "block_small": lambda lib, c: _block_step(lib, c, 4, 32, 64)}
    step, compiled = rows[name](ember, ember.compile)
    for _ in range(3 + schedule.MEASURED_CALLS):  # capture, warm-up, the measured calls
        step()
    ctx = compiled if hasattr(compiled, "_cache") else compiled.dynamo_ctx
    funcs = [f for e in ctx._cache.values() for f in (e.graph.fwd, e.graph.bwd)
             if isinstance(f, schedule.TwoThreads)]
    print(f"{name}: the two-thread plan (NOTE [Two threads in a replay]) at each unit's "
          f"measured one-thread CPU time (the fastest of {schedule.MEASURED_CALLS} calls)")
    for f in funcs:
        r = f.plan.report()
        print(f"  {f.plan.name}: {len(f.plan.units)} units, work {r['total'] * 1e3:.3f} ms "
              f"(caller {r['caller'] * 1e3:.3f}, worker {r['worker'] * 1e3:.3f}), longest "
              f"chain {r['critical_path'] * 1e3:.3f} ms, planned {r['planned_step'] * 1e3:.3f} "
              f"ms ({r['total'] / max(r['planned_step'], 1e-12):.2f}x)")
        costly = sorted(range(len(f.plan.units)), key=lambda k: -f.plan.units[k].cost)[:12]
        for k in costly:
            u = f.plan.units[k]
            print(f"    {u.cost * 1e3:7.3f} ms  {'caller' if f.plan.thread[k] == 0 else 'worker'}"
                  f"  {u.label}")
    res = {False: [], True: []}
    for _ in range(max(1, steps // 10)):  # blocks of 10 timed steps, serial and two threads
        for on in (False, True):
            schedule.ENABLED[0] = on
            for _ in range(2):
                step()
            for _ in range(10):
                w0, c0, m0 = time.perf_counter(), time.process_time(), time.thread_time()
                k0 = schedule._worker[0].cpu
                step()
                res[on].append((time.perf_counter() - w0, time.process_time() - c0,
                                time.thread_time() - m0, schedule._worker[0].cpu - k0))
    print("  in one process, blocks of 10 steps alternating (median per step; the serial "
          "replay's two-thread OpenBLAS GEMMs leave its worker spinning into the next block):")
    for on in (False, True):
        cols = [statistics.median(x[j] for x in res[on]) * 1e3 for j in range(4)]
        print(f"    {'two threads' if on else 'serial':12s} wall {cols[0]:7.3f} ms  process "
              f"cpu {cols[1]:7.3f}  caller cpu {cols[2]:7.3f}  worker cpu {cols[3]:7.3f}")
    ratio = statistics.median(x[0] for x in res[False]) / statistics.median(
        x[0] for x in res[True])
    print(f"    two threads vs serial: {ratio:.2f}x (wall)")
    schedule.ENABLED[0] = True
    for f in funcs:
        _trace(f, step, max(10, steps))
    if variants:
        _variants(funcs, step, variants, steps)


def _variants(funcs, step, spec, steps):
    """Plans made at other SYNC_COST / CALLER_BELOW settings (``spec``: "sync_us:below_us,...")
    timed against each other and the serial replay in one process, blocks of 10 steps in turn
    (wall, process CPU)."""
    from ember._dynamo import schedule
    saved = schedule.SYNC_COST, schedule.CALLER_BELOW
    made = {}
    for item in spec.split(","):
        sync, below = (float(x) * 1e-6 for x in item.split(":"))
        schedule.SYNC_COST, schedule.CALLER_BELOW = sync, below
        made[item] = []
        for f in funcs:
            f.plan.schedule([u.cost for u in f.plan.units])
            p = f.plan
            made[item].append((p.main, p.worker, p.flags, p.n_values, p.thread, p.finish))
            r = p.report()
            waits = sum(line.count("_wait(") for body in p.sources for line in body)
            print(f"  variant {item} (SYNC_COST:CALLER_BELOW us) {p.name}: planned "
                  f"{r['planned_step'] * 1e3:.3f} ms (caller {r['caller'] * 1e3:.3f}, worker "
                  f"{r['worker'] * 1e3:.3f}), {waits} waits, "
                  f"{sum(1 for t in p.thread if t == 1)} units on the worker")
    schedule.SYNC_COST, schedule.CALLER_BELOW = saved
    res = {k: [] for k in [*made, "serial"]}
    for _ in range(max(1, steps // 10)):
        for k in res:
            schedule.ENABLED[0] = k != "serial"
            for f, state in zip(funcs, made.get(k, ()), strict=False):
                p = f.plan
                p.main, p.worker, p.flags, p.n_values, p.thread, p.finish = state
            for _ in range(2):
                step()
            for _ in range(10):
                w0, c0 = time.perf_counter(), time.process_time()
                step()
                res[k].append((time.perf_counter() - w0, time.process_time() - c0))
    schedule.ENABLED[0] = True
    base = statistics.median(x[0] for x in res["serial"])
    for k, v in res.items():
        wall = statistics.median(x[0] for x in v)
        cpu = statistics.median(x[1] for x in v)
        print(f"    {k:14s} wall {wall * 1e3:7.3f} ms  process cpu {cpu * 1e3:7.3f} ms  "
              f"serial / this {base / wall:.2f}")


def _switches(tid):
    """(voluntary, involuntary) context switches of thread ``tid`` so far (Linux)."""
    out = {}
    with open(f"/proc/self/task/{tid}/status") as fh:
        for line in fh:
            if "ctxt_switches" in line:
                key, value = line.split(":")
                out[key.strip()] = int(value)
    return out["voluntary_ctxt_switches"], out["nonvoluntary_ctxt_switches"]


def _trace(f, step, steps):
    """The real two-thread step against its plan: the same plan regenerated with timestamps
    around each unit (Plan.schedule(trace=...)), ``steps`` steps; per thread the units' wall
    and CPU time against their planned (one-thread) cost, the time between units (waits for
    the other thread, GIL hand-offs outside units) and the context switches per step."""
    import threading

    from ember._dynamo import schedule
    p = f.plan
    log = []
    p.schedule([u.cost for u in p.units], trace=log)
    for _ in range(3):
        step()
    tids = (threading.get_native_id(), schedule._worker[0].thread.native_id)
    linux = os.path.exists(f"/proc/self/task/{tids[0]}/status")
    sw0 = [_switches(t) for t in tids] if linux else None
    walls, per = [], []
    for _ in range(steps):
        del log[:]
        w0 = time.perf_counter()
        step()
        walls.append(time.perf_counter() - w0)
        per.append(list(log))
    sw1 = [_switches(t) for t in tids] if linux else None
    p.schedule([u.cost for u in p.units])  # the untimed code again
    r = p.report()
    print(f"  {p.name}, traced ({steps} steps): step {statistics.median(walls) * 1e3:.3f} ms "
          f"wall (median), planned {r['planned_step'] * 1e3:.3f} ms")
    for t in (0, 1):
        wall = statistics.median(sum(e[4] - e[2] for e in tr if e[0] == t) for tr in per)
        cpu = statistics.median(sum(e[5] - e[3] for e in tr if e[0] == t) for tr in per)
        planned = sum(u.cost for k, u in enumerate(p.units) if p.thread[k] == t)
        n = sum(1 for k in range(len(p.units)) if p.thread[k] == t)
        sw = "" if sw1 is None else (
            f", context switches per step {(sw1[t][0] - sw0[t][0]) / steps:.1f} voluntary "
            f"{(sw1[t][1] - sw0[t][1]) / steps:.1f} involuntary")
        print(f"    {('caller', 'worker')[t]}: {n} units, planned {planned * 1e3:.3f} ms, in units "
              f"{wall * 1e3:.3f} ms wall {cpu * 1e3:.3f} ms CPU, outside units "
              f"{(statistics.median(walls) - wall) * 1e3:.3f} ms{sw}")
    worst = sorted(range(len(p.units)), key=lambda k: -(statistics.median(
        [e[4] - e[2] for tr in per for e in tr if e[1] == k] or [0.0]) - p.units[k].cost))[:6]
    for k in worst:
        d = statistics.median([e[4] - e[2] for tr in per for e in tr if e[1] == k] or [0.0])
        c = statistics.median([e[5] - e[3] for tr in per for e in tr if e[1] == k] or [0.0])
        print(f"      {('caller', 'worker')[p.thread[k]]} {p.units[k].label:24s} planned "
              f"{p.units[k].cost * 1e6:6.1f} us, real {d * 1e6:6.1f} us wall {c * 1e6:6.1f} us CPU")


def _timer(fn, slot):
    def timed(*args, **kwargs):
        w, c = time.perf_counter(), time.thread_time()
        try:
            return fn(*args, **kwargs)
        finally:
            slot[0] += time.perf_counter() - w
            slot[1] += time.thread_time() - c
    return timed


# NOTE [Compiled steps one configuration per process]
# The rows above interleave ember eager, ember.compile and torch step by step in one process.
# That is a paired comparison, but each configuration then runs beside the others' threads:
# eager's two-thread GEMMs leave OpenBLAS's worker spinning on the second core for ~0.1 s, into
# the compiled step that follows (and torch's OpenMP pool sits in the same process). A user
# runs one of them in a loop. --per-process N times each configuration as that: a fresh process
# per configuration (an ember child never imports torch), three untimed steps (the capture and
# first replays for ember.compile), then --steps consecutive steps; the median step of each
# process is one sample, the configurations' processes alternate (the first of each round
# rotates), N rounds. Reported: the median of the samples per configuration, the ratio of
# medians and the median of the rounds' paired ratios. Like table1.py's one-library-per-process
# column (NOTE [One library per process] there), this is the headline; the interleaved rows
# are the secondary, in-process figure.
_CONFIGS = ("ember eager", "ember.compile", "torch eager")
# --interop adds this one: ember.compile with EMBER_COMPILE_INTEROP=1 (NOTE [Two threads in a
# replay] in ember/_dynamo/schedule.py), in its own processes like the others
_INTEROP = "compile 2 threads"


def _child(row, config, steps):
    """One configuration of one row alone in this process: JSON {"step_ms": [...]} on stdout."""
    make = {"ncf": _ncf_step, "block": _block_step}[row]
    lib, compile_fn = (torch, None) if config == "torch eager" else (
        ember, ember.compile if config in ("ember.compile", _INTEROP) else None)
    if lib is torch:
        torch.set_num_threads(max(1, ember.get_num_threads()))
    step, _ = make(lib, compile_fn)
    for _ in range(3):
        step()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        times.append((time.perf_counter() - t0) * 1e3)
    print(json.dumps({"step_ms": times}))


def _per_process(row, rounds, steps, with_torch, interop=False):
    configs = (_CONFIGS if with_torch else _CONFIGS[:2]) + ((_INTEROP,) if interop else ())
    samples = {c: [] for c in configs}
    for r in range(rounds):
        for c in configs[r % len(configs):] + configs[:r % len(configs)]:
            env = dict(os.environ)
            if c != "torch eager":
                env["EMBER_COMPILE_BENCH_CHILD"] = "ember"
            if c == _INTEROP:
                env["EMBER_COMPILE_INTEROP"] = "1"
            out = subprocess.run([sys.executable, __file__, "--child", row, c, "--steps",
                                  str(steps)], env=env, capture_output=True, text=True,
                                 check=True).stdout
            samples[c].append(statistics.median(json.loads(out.splitlines()[-1])["step_ms"]))
    eager, comp = samples["ember eager"], samples["ember.compile"]
    paired = [e / k for e, k in zip(eager, comp, strict=True)]
    print(f"{row} (one configuration per process, {rounds} rounds x {steps} steps; NOTE "
          f"[Compiled steps one configuration per process]): {_WHAT.get(row, '')}")
    for c in configs:
        print(f"  {c:14s} median {statistics.median(samples[c]):8.2f} ms   per process: "
              + ", ".join(f"{v:.2f}" for v in samples[c]))
    ratio = statistics.median(eager) / statistics.median(comp)
    print(f"  ember.compile vs ember eager: {ratio:.2f}x (ratio of medians); paired per round "
          f"{statistics.median(paired):.2f}x: "
          + ", ".join(f"{v:.2f}" for v in paired))
    if interop:
        two = samples[_INTEROP]
        pairs = [e / k for e, k in zip(eager, two, strict=True)]
        ratio = statistics.median(eager) / statistics.median(two)
        print(f"  {_INTEROP} vs ember eager: {ratio:.2f}x (ratio of medians); paired per round "
              f"{statistics.median(pairs):.2f}x: "
              + ", ".join(f"{v:.2f}" for v in pairs))
        pairs = [k / t for k, t in zip(comp, two, strict=True)]
        print(f"  {_INTEROP} vs ember.compile: paired per round {statistics.median(pairs):.2f}x: "
              + ", ".join(f"{v:.2f}" for v in pairs))
    if with_torch:
        print(f"  torch eager vs ember.compile: "
              f"{statistics.median(samples['torch eager']) / statistics.median(comp):.2f}x")
    return samples


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--only", default="ncf,block,block_small,fusion,compile_time,recompiles")
    ap.add_argument("--models", default="ncf,mobilenet_v2")
    ap.add_argument("--no-torch-compile", action="store_true")
    # time each framework `--block` steps in a row (after two untimed ones) instead of step by
    # step: OpenBLAS's worker spins ~0.1 s after a multi-threaded GEMM (eager ember's, torch's),
    # so step-by-step interleaving hands that spinning thread to the next framework's step,
    # which matters when a compiled replay runs its own kernel threads
    # (EMBER_COMPILE_KERNEL_THREADS: NOTE [Kernel threads in a replay] in _dynamo/runtime.py)
    ap.add_argument("--block", type=int, default=0)
    # ember's one pool (NOTE [One pool] in ember/_onepool.py) on and off in one run: rows
    # "eager pool" and "compile pool" beside ember eager / ember.compile with the pool off
    # (use with --block: switching the pool changes OpenBLAS's thread count)
    ap.add_argument("--pool-ab", action="store_true")
    # rows "compile -scat" / "-epil" / "-catw": ember.compile without the embedding-gradient
    # scatter of products (NOTE [Products scattered into embedding gradients] in
    # ember/_dynamo/scatter.py), the bias+ReLU epilogue (NOTE [Bias and ReLU after the GEMM]
    # in epilogue.py) or the products written into a cat (NOTE [Products written into a cat]
    # in catwrite.py), timed beside the others in the same run
    ap.add_argument("--without", default="", help="comma list of: scatter, epilogue, catwrite")
    ap.add_argument("--profile", default=None, help="ncf, block or block_small: per-call "
                    "CPU of the compiled step instead of the side-by-side rows")
    ap.add_argument("--per-process", type=int, default=5, metavar="N",
                    help="ncf and block rows timed one configuration per process, N rounds "
                    "(NOTE [Compiled steps one configuration per process]; the headline), "
                    "before the interleaved rows; 0: interleaved rows only")
    ap.add_argument("--schedule", default=None, help="ncf, block or block_small: the "
                    "two-thread plan and an in-process A/B instead of the side-by-side rows")
    ap.add_argument("--variants", default=None, help="with --schedule: plans at other "
                    "SYNC_COST:CALLER_BELOW settings in us, comma-separated (e.g. 10:0,10:20), "
                    "timed against each other and the serial replay")
    ap.add_argument("--no-interleaved", action="store_true", help="the ncf and block rows "
                    "per process only (skip their interleaved secondary rows)")
    ap.add_argument("--interop", action="store_true", help="--per-process rows also time "
                    f"'{_INTEROP}': ember.compile with EMBER_COMPILE_INTEROP=1")
    ap.add_argument("--child", nargs=2, metavar=("ROW", "CONFIG"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        _child(a.child[0], a.child[1], a.steps)
        return
    if a.profile:
        _profile(a.profile, a.steps)
        return
    if a.schedule:
        _schedule(a.schedule, a.steps, a.variants)
        return
    only = a.only.split(",")
    print(f"load average at start: {os.getloadavg()}")
    print(f"one pool (EMBER_ONE_POOL): {'on' if _onepool.enabled() else 'off'}"
          f"{' (rows with and without it: --pool-ab)' if a.pool_ab else ''}")
    for name in ("ncf", "block"):
        if a.per_process and name in only:
            _per_process(name, a.per_process, a.steps, torch is not None, a.interop)
    rows = {"ncf": _ncf_step, "block": _block_step, "fusion": _fusion_step,
            "block_small": lambda lib, c: _block_step(lib, c, 4, 32, 64)}
    for name in ("ncf", "block", "block_small", "fusion"):
        if name in only and not (a.no_interleaved and name in ("ncf", "block")):
            _row(name, rows[name], a.steps, not a.no_torch_compile, a.block, a.pool_ab,
                 [w for w in a.without.split(",") if w])
    if "recompiles" in only:
        _recompiles(a.steps)
    if "compile_time" in only:
        _compile_time(a.models.split(","))
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
