"""Per-op time of one Table 1 workload's training step, ember or torch, one library per process.

    python benchmarks/op_profile.py gnmt ember --threads 2          # wall clock per op
    python benchmarks/op_profile.py gnmt torch --threads 2
    python benchmarks/op_profile.py gnmt ember --threads 1 --cpu    # CPU time of the thread

Warm-up steps, then `--steps` profiled steps. ember's ops come from ember.profiler (self time:
a backward node without the ops it ran); torch's from a dispatch mode around every aten call
(forward and backward, the optimizer's foreach/elementwise calls included). Rows are grouped by
op name and input shapes, per step, largest first; a last line gives the step's time outside
the recorded ops (Python, and for ember the optimizer, which runs no registered ops).

`--cpu` times with the calling thread's CPU clock instead of the wall clock: on a busy machine
the only usable figure, and exact at `--threads 1` (work done), but it misses the time of other
threads (OpenBLAS's workers at 2 threads). Wall-clock figures on a shared machine are smoke
numbers. Compare the two libraries by running both, in separate processes, the same hour.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def _torch_profile(lib, step, steps, clock):
    from torch.utils._python_dispatch import TorchDispatchMode

    acc = defaultdict(lambda: [0.0, 0])

    class _Timed(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            shapes = tuple(tuple(a.shape) for a in args if isinstance(a, lib.Tensor))
            t0 = clock()
            out = func(*args, **(kwargs or {}))
            row = acc[(func.overloadpacket.__name__, shapes)]
            row[0] += clock() - t0
            row[1] += 1
            return out

    t0 = clock()
    with _Timed():
        for i in range(steps):
            step(i)
    return clock() - t0, acc


def _ember_profile(lib, step, steps, clock):
    from ember.profiler import profiler as prof_mod

    acc = defaultdict(lambda: [0.0, 0])
    saved = prof_mod.profile._now_us
    prof_mod.profile._now_us = lambda self: clock() * 1e6
    try:
        t0 = clock()
        with lib.profiler.profile() as prof:
            for i in range(steps):
                step(i)
        total = clock() - t0
    finally:
        prof_mod.profile._now_us = saved
    for a in prof.key_averages(group_by_input_shape=True):
        row = acc[(a.key, tuple(tuple(s) for s in (a.input_shapes or [])))]
        row[0] += a.self_cpu_time_total / 1e6
        row[1] += a.count
    return total, acc


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workload")
    ap.add_argument("library", choices=("ember", "torch"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--rows", type=int, default=40)
    ap.add_argument("--cpu", action="store_true", help="the thread's CPU clock, not wall time")
    args = ap.parse_args()
    if args.library == "torch":
        import torch as lib
    else:
        import ember as lib
    lib.set_num_threads(args.threads)
    from examples.models.table1 import WORKLOADS, train_step

    if args.workload not in WORKLOADS:
        ap.error(f"unknown workload {args.workload!r}; expected one of {sorted(WORKLOADS)}")
    model, opt, batches, loss_fn, _ = WORKLOADS[args.workload](lib)

    def step(i):
        train_step(model, opt, loss_fn, batches[i % len(batches)])

    for i in range(args.warmup):
        step(i)
    clock = time.thread_time if args.cpu else time.perf_counter
    run = _torch_profile if args.library == "torch" else _ember_profile
    total, acc = run(lib, step, args.steps, clock)
    n = args.steps
    in_ops = sum(v[0] for v in acc.values())
    kind = "thread CPU" if args.cpu else "wall"
    print(f"{args.workload} {args.library} threads={args.threads}: {kind} {total / n * 1e3:.1f} "
          f"ms per profiled step, {in_ops / n * 1e3:.1f} ms in ops")
    for (name, shapes), (t, count) in sorted(acc.items(), key=lambda kv: -kv[1][0])[:args.rows]:
        print(f"{name[:30]:<30} {t / n * 1e3:8.3f} ms {count // n:5d}x  {str(shapes)[:80]}")
    print(f"{'(outside ops)':<30} {(total - in_ops) / n * 1e3:8.3f} ms")


if __name__ == "__main__":
    main()
