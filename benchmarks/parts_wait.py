"""How long a Table 1 step waits at its hand-offs to OpenBLAS's worker, user by user.

    python benchmarks/parts_wait.py gpts [--steps 3] [--by-kernel]

Every `_blas_parts.run_ranges` call of a step (NOTE [Python parts on OpenBLAS's threads] in
ember/_blas_parts.py: MKL's halves, Linear's two gradients at once, attention's planes, Adam's
update, ...) is wrapped: its wall time, and the start and end of each of its parts on the
calling thread and on the worker. Per calling function, ms a step: the calls' total, how late
the worker's part starts after the caller's, and the sums of both parts' own durations. The
caller waits for about (total - caller's parts): the worker's late start plus any difference
between the two parts. Each step follows a 0.2 s pause, as table1.py's samples do. Wall clock:
run it in a quiet slot.
"""
from __future__ import annotations

import argparse
import collections
import os
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import ember  # noqa: E402
from ember import _blas_parts  # noqa: E402
from examples.models.table1 import WORKLOADS, train_step  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workload", choices=sorted(WORKLOADS))
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--by-kernel", action="store_true",
                    help="split.run's calls one row per range kernel")
    args = ap.parse_args()
    calls = []
    original = _blas_parts.run_ranges

    def timed(fn, n, threads=None):
        caller = threading.get_ident()
        parts = []

        def part(lo, hi):
            t0 = time.perf_counter()
            fn(lo, hi)
            parts.append((threading.get_ident() == caller, t0, time.perf_counter()))

        frame = sys._getframe(1)
        who = f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_code.co_name}"
        if args.by_kernel and "kernel" in getattr(fn.__code__, "co_freevars", ()):
            kernel = fn.__closure__[fn.__code__.co_freevars.index("kernel")].cell_contents
            who += f" {getattr(kernel, '__name__', '?')}"  # split.run's range kernel
        t0 = time.perf_counter()
        original(part, n, threads)
        calls.append((who, time.perf_counter() - t0, parts))

    _blas_parts.run_ranges = timed
    model, opt, batches, loss_fn, _ = WORKLOADS[args.workload](ember)
    for i in range(3):
        train_step(model, opt, loss_fn, batches[i % len(batches)])
    rows = collections.defaultdict(lambda: [0, 0.0, 0.0, 0.0, 0.0])
    steps = []
    for k in range(args.steps):
        time.sleep(0.2)
        calls.clear()
        t0 = time.perf_counter()
        train_step(model, opt, loss_fn, batches[k % len(batches)])
        steps.append(time.perf_counter() - t0)
        for who, total, parts in calls:
            row = rows[who]
            row[0] += 1
            row[1] += total
            mine = [p for p in parts if p[0]]
            theirs = [p for p in parts if not p[0]]
            if mine and theirs:
                row[2] += theirs[0][1] - mine[0][1]
                row[3] += mine[0][2] - mine[0][1]
                row[4] += theirs[0][2] - theirs[0][1]
    n = args.steps
    print(f"{args.workload}: step {sum(steps) / n * 1e3:.1f} ms (mean of {n}); "
          f"ms a step per caller of run_ranges")
    print(f"{'caller':<56} {'calls':>5} {'total':>8} {'worker late':>11} {'caller parts':>12} "
          f"{'worker parts':>12}")
    for who, (count, total, late, mine, theirs) in sorted(rows.items(), key=lambda kv: -kv[1][1]):
        print(f"{who:<56} {count / n:5.0f} {total / n * 1e3:8.2f} {late / n * 1e3:11.2f} "
              f"{mine / n * 1e3:12.2f} {theirs / n * 1e3:12.2f}")


if __name__ == "__main__":
    main()
