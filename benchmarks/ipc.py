"""Tensor handoff between processes: ember.multiprocessing.Queue vs the standard Queue.

Run: python benchmarks/ipc.py [--sizes-mb 1 16 256] [--repeats 5]

A forked child loops: take an object from a queue, read its first and last element, answer on
a second queue. We time put -> answer (a round trip, so the receiver really has the data):
* ember: a tensor already in shared memory goes through ``ember.multiprocessing.Queue``; only
  a descriptor travels, so the time should not depend on the size;
* stdlib: a NumPy array through ``multiprocessing.Queue`` is pickled, pushed through a pipe
  and unpickled.
The one-off cost of moving a tensor into shared memory (``share_memory_()``, a copy) is shown
separately. Target: constant-time handoff, >= 20x faster than pickling at 256 MB.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def child(requests, answers):
    while True:
        obj = requests.get()
        if obj is None:
            return
        arr = obj.numpy() if hasattr(obj, "numpy") else obj
        answers.put((float(arr[0]), float(arr[-1])))


def roundtrip(requests, answers, obj, repeats):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        requests.put(obj)
        answers.get()
        best = min(best, time.perf_counter() - start)
    return best


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes-mb", type=int, nargs="+", default=[1, 16, 256])
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args()
    import multiprocessing as stdlib_mp

    import ember
    import ember.multiprocessing as mp

    ctx = mp.get_context("fork")
    e_req, e_ans = ctx.Queue(), ctx.Queue()
    s_ctx = stdlib_mp.get_context("fork")
    s_req, s_ans = s_ctx.Queue(), s_ctx.Queue()
    workers = [ctx.Process(target=child, args=(e_req, e_ans)),
               s_ctx.Process(target=child, args=(s_req, s_ans))]
    for w in workers:
        w.start()
    print(f"best of {args.repeats} round trips (put -> receiver answers), ms")
    print(f"{'size MB':>8} {'share_memory_':>14} {'ember Queue':>12} {'stdlib pickle':>14} "
          f"{'speed-up':>9}")
    try:
        for mb in args.sizes_mb:
            n = mb * 2**20 // 4
            data = np.random.default_rng(0).random(n, dtype=np.float32)
            t = ember.from_numpy(data.copy())
            start = time.perf_counter()
            t.share_memory_()
            share = time.perf_counter() - start
            ember_s = roundtrip(e_req, e_ans, t, args.repeats)
            std_s = roundtrip(s_req, s_ans, data, args.repeats)
            print(f"{mb:>8} {share * 1e3:>14.2f} {ember_s * 1e3:>12.3f} {std_s * 1e3:>14.1f} "
                  f"{std_s / ember_s:>8.0f}x")
            del t
    finally:
        e_req.put(None)
        s_req.put(None)
        for w in workers:
            w.join(10)


if __name__ == "__main__":
    main()
