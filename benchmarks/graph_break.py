"""A function with one graph break: eager ember vs ember.compile (two graphs, NOTE [Graph breaks
that split] in ember/_dynamo/segments.py) vs the same function compiled without the break, and
torch eager, measured in one run.

    python benchmarks/graph_break.py [--repeat 7] [--number 200] [--size 64] [--cpu-time]

The function is a chain of cheap elementwise ops (fusible) on both sides of a data-dependent
``if h.mean().item() > ...:``, forward and backward. Prints microseconds per call (median of
``repeat`` runs, frameworks interleaved run by run) and the ratios. ``--cpu-time`` uses the
process CPU clock (steadier on a busy machine).
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import ember

try:
    import torch
except ImportError:
    torch = None


def body(lib, x, w, with_break):
    h = (x @ w).tanh() * 0.5 + 0.25
    h = (h * h + 1).log() * h.sigmoid()
    if with_break and h.mean().item() > 1e9:  # the break: Python reads a value
        h = h * 0
    y = (h.exp() - 1).relu() * 0.3 + h.abs()
    out = (y * y).sum()
    out.backward()
    return out


def _time(fn, number, clock):
    t0 = clock()
    for _ in range(number):
        fn()
    return (clock() - t0) / number * 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--number", type=int, default=200)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--cpu-time", action="store_true")
    a = ap.parse_args()
    clock = time.process_time if a.cpu_time else time.perf_counter
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((a.size, a.size)).astype(np.float32)
    ws = rng.standard_normal((a.size, a.size)).astype(np.float32) / a.size
    x, w = ember.from_numpy(xs), ember.from_numpy(ws).requires_grad_()
    split = ember.compile(lambda x, w: body(ember, x, w, True))
    whole = ember.compile(lambda x, w: body(ember, x, w, False))
    runs = {"ember eager": lambda: body(ember, x, w, True),
            "ember.compile, 1 break": lambda: split(x, w),
            "ember.compile, no break": lambda: whole(x, w)}
    if torch is not None:
        torch.set_num_threads(1)  # as ember's kernels: one thread (CPU time counts all threads)
        tx, tw = torch.from_numpy(xs), torch.from_numpy(ws).requires_grad_()
        runs["torch eager"] = lambda: body(torch, tx, tw, True)
    for fn in runs.values():  # capture / warm up
        for _ in range(3):
            fn()
    times = {k: [] for k in runs}
    for _ in range(a.repeat):
        for k, fn in runs.items():
            times[k].append(_time(fn, a.number, clock))
    med = {k: statistics.median(v) for k, v in times.items()}
    for k, v in med.items():
        print(f"{k:26s} {v:9.1f} us   eager/this {med['ember eager'] / v:5.2f}x")
    s = split.stats
    print(f"compiled with break: captures {s['captures']}, hits {s['hits']}, recompiles "
          f"{s['recompiles']}, diverged {s.get('diverged', 0)}, graphs "
          f"{ember._dynamo.explain(lambda x, w: body(ember, x, w, True))(x, w).graph_count}")


if __name__ == "__main__":
    main()
