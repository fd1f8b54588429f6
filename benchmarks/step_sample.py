"""Where one thread's CPU time goes in an ember Table 1 step, by sampling the Python stack.

    python benchmarks/step_sample.py resnet50 --steps 60 [--rows 40] [--lines]

One thread (``ember.set_num_threads(1)``: OpenBLAS and the kernels on the calling thread), so the
process's CPU clock is the step's work. A SIGPROF timer interrupts the process every --interval
seconds of CPU time and the handler counts the innermost Python frame, by function (and with
--lines by line). No tracing hook: cProfile adds ~1.5 us to every Python call, which is the time
being measured (NOTE [Time shares] in profile_shares.py).

Reading it (NOTE [Sampled attribution]):
- Python runs a signal handler between bytecodes, so a sample that lands inside a C call (a numba
  kernel, a BLAS GEMM, a NumPy function) is taken when the call returns, in the Python frame
  that made it - or, when the call was the frame's last work, in the next frame to run. Kernel
  time therefore shows up on the function that calls the kernel (``_onepool.matmul`` for the
  GEMMs, ``split.run`` and its lambda for the range kernels, ``_sgd_range``), and a little of
  it on the function that runs just after.
- The kernel's timer ticks at the kernel's HZ (250 here: 4 ms), whatever --interval asks, so a
  step of ~250 ms gives ~60 samples: take --steps 60 or more for 0.1-ms rows.
"""
from __future__ import annotations

import argparse
import collections
import os
import signal
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import ember  # noqa: E402
from examples.models.table1 import WORKLOADS, train_step  # noqa: E402


def _where(path):
    return path[len(ROOT) + 1:] if path.startswith(ROOT + os.sep) else path


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workload", choices=sorted(WORKLOADS))
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--warmup", type=int, default=4)
    ap.add_argument("--rows", type=int, default=40)
    ap.add_argument("--interval", type=float, default=0.001)
    ap.add_argument("--lines", action="store_true", help="also print the top lines")
    args = ap.parse_args()
    ember.set_num_threads(1)
    model, opt, batches, loss_fn, _ = WORKLOADS[args.workload](ember)
    for i in range(args.warmup):
        train_step(model, opt, loss_fn, batches[i % len(batches)])
    funcs = collections.Counter()
    lines = collections.Counter()

    def handler(signum, frame):
        code = frame.f_code
        funcs[(_where(code.co_filename), code.co_name)] += 1
        lines[(_where(code.co_filename), frame.f_lineno, code.co_name)] += 1

    signal.signal(signal.SIGPROF, handler)
    signal.setitimer(signal.ITIMER_PROF, args.interval, args.interval)
    t0 = time.process_time()
    for i in range(args.steps):
        train_step(model, opt, loss_fn, batches[i % len(batches)])
    cpu = time.process_time() - t0
    signal.setitimer(signal.ITIMER_PROF, 0, 0)
    total = sum(funcs.values())
    per_sample = cpu / args.steps * 1e3 / max(total, 1)
    print(f"{args.workload}: {cpu / args.steps * 1e3:.1f} ms CPU per step (one thread), "
          f"{total} samples ({per_sample:.2f} ms a sample per step)")
    for (path, name), n in funcs.most_common(args.rows):
        print(f"{n * per_sample:8.2f} ms  {path} {name}")
    if args.lines:
        print("-- lines")
        for (path, line, name), n in lines.most_common(args.rows):
            print(f"{n * per_sample:8.2f} ms  {path}:{line} {name}")


if __name__ == "__main__":
    main()
