"""Each convolution and ReLU kernel call of a Table 1 step, timed in the step and again at once.

    python benchmarks/in_step.py resnet50 --threads 1      # the thread's CPU clock
    python benchmarks/in_step.py vgg19                     # wall clock, threads as table1.py

After warm-up steps, `--steps` steps run with ember's conv2d_forward / conv2d_backward kernels
(ember/ops/_kernels/conv.py) and relu's forward and backward kernels (pointwise.clamp and
pointwise.masked_grad, which relu6 and hardtanh share) wrapped: each call is timed as the step
makes it, then twice more at once with the same arrays (results dropped) and timed again. The
second call finds the weights, the inputs and the kernel's scratch in cache and OpenBLAS's worker
awake, but writes its outputs into other buffers than the step's (the step's are still held);
the third call gets the second's buffers back from the reuse pool, warm, as a benchmark that
repeats one layer does (benchmarks/conv_algos.py). So in step / third is what the step's
surroundings (cold buffers, evicted weights, a sleeping worker) cost each call, and second /
third the part of it that is the output buffers. The repeats perturb the step (they write
outputs of their own), so use the ratios, not the step's total.
Rows: per kernel and shapes, ms per step.
At one thread the clock is the thread's CPU time (what the work costs, not waits for a core on a
shared machine); otherwise wall time, which only a quiet machine makes meaningful. Without
--threads the process keeps ember's default threads, as table1.py and ab.py do: calling
ember.set_num_threads(2) is not the default, because it also puts the range kernels of 2^18 to
2^20 elements on ember's kernel threads (ember/_kernel_threads.num_workers).
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
        del again  # its buffers go back to the reuse pool, warm, for the third call
        again = fn(*_fresh_keep(args))
        t3 = clock()
        del again
        row = acc[(label, key(args))]
        row[0] += t1 - t0
        row[1] += t2 - t1
        row[2] += t3 - t2
        row[3] += 1
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
    ap.add_argument("--threads", type=int, default=None)
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
    if args.threads is not None:
        ember.set_num_threads(args.threads)
    clock = time.thread_time if args.threads == 1 else time.perf_counter
    acc = defaultdict(lambda: [0.0, 0.0, 0.0, 0])
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
    threads = "default" if args.threads is None else args.threads
    print(f"{args.workload} threads={threads} ({kind}), ms per step: in step, again at once,"
          f" a third time (in step / third)")
    rows = sorted(acc.items(), key=lambda kv: -kv[1][0])
    for (label, shapes), (t_step, t_again, t_warm, count) in rows[:args.rows]:
        print(f"{label:9} {str(shapes)[:44]:44} {t_step / n * 1e3:7.2f} {t_again / n * 1e3:7.2f}"
              f" {t_warm / n * 1e3:7.2f}  {t_step / t_warm:5.2f}x {count // n:4d} calls")
    for label in ("conv fwd", "conv bwd", "relu fwd", "relu bwd"):
        t_step, t_again, t_warm = (sum(v[i] for k, v in acc.items() if k[0] == label) / n * 1e3
                                   for i in range(3))
        if t_warm:
            print(f"all {label}: {t_step:.1f} ms in step, {t_again:.1f} again at once, "
                  f"{t_warm:.1f} a third time ({t_step / t_warm:.3f}x)")

if __name__ == "__main__":
    main()
