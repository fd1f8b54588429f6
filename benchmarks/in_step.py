"""Each convolution and ReLU kernel call of a Table 1 step, timed in the step and again at once.

    python benchmarks/in_step.py resnet50 --threads 1      # the thread's CPU clock
    python benchmarks/in_step.py vgg19 --threads 2         # wall clock

After warm-up steps, `--steps` steps run with ember's conv2d_forward / conv2d_backward kernels
(ember/ops/_kernels/conv.py) and relu's forward and backward kernels (pointwise.clamp and
pointwise.masked_grad, which relu6 and hardtanh share) wrapped: each call is timed as the step
makes it, then made a second time at once with the same arrays (its result dropped) and timed
again. The second call finds the weights, the inputs and the kernel's scratch in cache and
OpenBLAS's worker awake, so the ratio in step / again is what the step's surroundings (cold
buffers, evicted weights, a sleeping worker, first-touch faults) cost each call. The repeat
itself perturbs the step (it writes a second output), so use the ratio, not the step's total.
Rows: per kernel and shapes, ms per step.
At one thread the clock is the thread's CPU time (what the work costs, not waits for a core on a
shared machine); at two threads wall time, which only a quiet machine makes meaningful.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def _wrap(acc, clock, recording, label, fn, key):
    """fn timed in the step and again at once while recording[0]; label and key(args) name the
    row."""
    def timed(*args):
        if not recording[0]:
            return fn(*args)
        t0 = clock()
        out = fn(*args)
        t1 = clock()
        again = fn(*_fresh_keep(args))
        t2 = clock()
        del again
        row = acc[(label, key(args))]
        row[0] += t1 - t0
        row[1] += t2 - t1
        row[2] += 1
        return out
    return timed


def _fresh_keep(args):
    # conv2d_forward's last argument collects what the backward reuses: a new list for the repeat
    if len(args) == 8 and isinstance(args[7], list):
        return args[:7] + ([],)
    return args


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workload")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--warmup", type=int, default=4)
    ap.add_argument("--rows", type=int, default=30)
    args = ap.parse_args()
    import ember
    from ember.ops._kernels import conv as kconv
    from ember.ops._kernels import pointwise as kpoint
    from examples.models.table1 import WORKLOADS, train_step

    if args.workload not in WORKLOADS:
        ap.error(f"unknown workload {args.workload!r}; expected one of {sorted(WORKLOADS)}")
    ember.set_num_threads(args.threads)
    clock = time.thread_time if args.threads == 1 else time.perf_counter
    acc = defaultdict(lambda: [0.0, 0.0, 0])
    recording = [False]
    # the module attributes the callers look up at call time (ember/ops/nn/conv.py and
    # ember/ops/unary.py reach these functions through the kernel modules)
    kconv.conv2d_forward = _wrap(acc, clock, recording, "conv fwd", kconv.conv2d_forward,
                                 lambda a: (a[0].shape, a[1].shape))
    kconv.conv2d_backward = _wrap(acc, clock, recording, "conv bwd", kconv.conv2d_backward,
                                  lambda a: (a[1].shape, a[2].shape))
    kpoint.clamp = _wrap(acc, clock, recording, "relu fwd", kpoint.clamp, lambda a: a[0].shape)
    kpoint.masked_grad = _wrap(acc, clock, recording, "relu bwd", kpoint.masked_grad,
                               lambda a: a[0].shape)
    model, opt, batches, loss_fn, _ = WORKLOADS[args.workload](ember)
    for i in range(args.warmup):
        train_step(model, opt, loss_fn, batches[i % len(batches)])
    recording[0] = True
    n = args.steps
    for i in range(n):
        train_step(model, opt, loss_fn, batches[i % len(batches)])
    kind = "thread CPU" if args.threads == 1 else "wall"
    print(f"{args.workload} threads={args.threads} ({kind}), ms per step: in step, again at once")
    rows = sorted(acc.items(), key=lambda kv: -kv[1][0])
    for (label, shapes), (t_step, t_again, count) in rows[:args.rows]:
        print(f"{label:9} {str(shapes)[:44]:44} {t_step / n * 1e3:8.2f} {t_again / n * 1e3:8.2f}"
              f"  {t_step / t_again:5.2f}x {count // n:4d} calls")
    for label in ("conv fwd", "conv bwd", "relu fwd", "relu bwd"):
        t_step = sum(v[0] for k, v in acc.items() if k[0] == label) / n * 1e3
        t_again = sum(v[1] for k, v in acc.items() if k[0] == label) / n * 1e3
        if t_again:
            print(f"all {label}: {t_step:.1f} ms in step, {t_again:.1f} ms again at once "
                  f"({t_step / t_again:.3f}x)")


if __name__ == "__main__":
    main()
