"""Distributed training, ember (MPI) vs torch.distributed (gloo), in one run on one machine.

    python benchmarks/ddp.py [--quick] [--only allreduce,resnet50,gnmt] [--json FILE]

Parts, each run first by ember (``python -m ember.distributed.run --nproc-per-node 2``), then
by torch (``python -m torch.distributed.run --nproc-per-node 2``), both with 1 thread per
process:
  * allreduce: float32 all_reduce of 1 KB .. 256 MB, median seconds and bandwidth (bytes
    per second of the buffer, the "algorithm bandwidth");
  * resnet50, gnmt: one DistributedDataParallel training step of the SPEC workloads
    (examples/models/table1.py, SPEC batch on each process), median step time; for ember also
    the share of the bucket all-reduce time hidden behind backward (1 - the time backward
    waited for communication at its end / the time the all-reduces took).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZES = [2**k for k in range(10, 29, 2)]  # 1 KB .. 256 MB
PARTS = ("allreduce", "resnet50", "gnmt")


# ---------------------------------------------------------------------------- workers
def _lib(name):
    if name == "ember":
        sys.path.insert(0, ROOT)
        import ember as lib
        from ember.nn.parallel import DistributedDataParallel
    else:
        import torch as lib
        from torch.nn.parallel import DistributedDataParallel
    lib.set_num_threads(1)
    return lib, DistributedDataParallel


def _allreduce(lib, dist, quick):
    out = {}
    for size in SIZES[:7] if quick else SIZES:
        t = lib.ones(size // 4, dtype=lib.float32)
        reps = max(3, min(100, (2**26) // size)) if not quick else 3
        dist.all_reduce(t)
        times = []
        for _ in range(reps):
            dist.barrier()
            start = time.perf_counter()
            dist.all_reduce(t)
            times.append(time.perf_counter() - start)
        out[size] = statistics.median(times)
    return out


def _model_step(lib, ddp_cls, dist, name, quick):
    sys.path.insert(0, ROOT)
    from examples.models.table1 import WORKLOADS
    lib.manual_seed(0)
    model, opt, batches, loss_fn, _items = WORKLOADS[name](lib)
    ddp = ddp_cls(model)
    warmup, steps = (1, 3) if quick else (3, 12)
    times = []
    for i in range(warmup + steps):
        x, y = batches[i % len(batches)]
        dist.barrier()
        start = time.perf_counter()
        opt.zero_grad()
        out = ddp(*x) if isinstance(x, tuple) else ddp(x)
        loss_fn(out, y).backward()
        opt.step()
        if i == warmup - 1 and hasattr(ddp, "comm_seconds"):
            ddp.comm_seconds = ddp.exposed_seconds = 0.0
        if i >= warmup:
            times.append(time.perf_counter() - start)
    result = {"step_s": statistics.median(times), "min_s": min(times), "max_s": max(times)}
    if hasattr(ddp, "comm_seconds") and ddp.comm_seconds > 0:
        result["comm_s"] = ddp.comm_seconds / steps
        result["exposed_s"] = ddp.exposed_seconds / steps
        result["hidden"] = 1.0 - ddp.exposed_seconds / ddp.comm_seconds
    return result


def worker(args):
    lib, ddp_cls = _lib(args.worker)
    dist = lib.distributed
    dist.init_process_group("gloo")
    if args.part == "allreduce":
        result = _allreduce(lib, dist, args.quick)
    else:
        result = _model_step(lib, ddp_cls, dist, args.part, args.quick)
    if dist.get_rank() == 0:
        with open(args.out, "w") as f:
            json.dump(result, f)
    dist.barrier()
    dist.destroy_process_group()


# ---------------------------------------------------------------------------- driver
def _launch(framework, part, quick):
    out = tempfile.mktemp(suffix=".json")
    runner = "ember.distributed.run" if framework == "ember" else "torch.distributed.run"
    cmd = [sys.executable, "-m", runner, "--nproc-per-node", "2", os.path.abspath(__file__),
           "--worker", framework, "--part", part, "--out", out] + (["--quick"] if quick else [])
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=ROOT)
    subprocess.run(cmd, check=True, env=env, cwd=ROOT, timeout=3600)
    with open(out) as f:
        result = json.load(f)
    os.remove(out)
    return result


def _mb_s(size, seconds):
    return size / seconds / 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smoke run: few sizes and steps")
    ap.add_argument("--only", default=",".join(PARTS))
    ap.add_argument("--json", default=None, help="write all results here")
    ap.add_argument("--worker", choices=("ember", "torch"), help=argparse.SUPPRESS)
    ap.add_argument("--part", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    results = {}
    for part in args.only.split(","):
        results[part] = {fw: _launch(fw, part, args.quick) for fw in ("ember", "torch")}
    if "allreduce" in results:
        print("\nall_reduce float32, 2 processes (median)")
        print(f"{'size':>10} {'ember ms':>10} {'torch ms':>10} {'ember MB/s':>11} "
              f"{'torch MB/s':>11} {'ratio':>6}")
        ours, ref = results["allreduce"]["ember"], results["allreduce"]["torch"]
        for size in ours:
            a, b = ours[size], ref[size]
            print(f"{_human(int(size)):>10} {a * 1e3:10.3f} {b * 1e3:10.3f} "
                  f"{_mb_s(int(size), a):11.1f} {_mb_s(int(size), b):11.1f} {b / a:6.2f}")
    for part in (p for p in results if p != "allreduce"):
        ours, ref = results[part]["ember"], results[part]["torch"]
        hidden = f", {ours['hidden'] * 100:.0f}% of all-reduce time hidden behind backward " \
                 f"({ours['comm_s'] * 1e3:.1f} ms all-reduce, {ours['exposed_s'] * 1e3:.1f} " \
                 f"ms exposed)" if "hidden" in ours else ""
        print(f"\nDDP step {part}, 2 processes x 1 thread: ember {ours['step_s'] * 1e3:.1f} ms, "
              f"torch {ref['step_s'] * 1e3:.1f} ms, time ratio ember/torch "
              f"{ours['step_s'] / ref['step_s']:.2f}{hidden}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return None


def _human(n):
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024:
            return f"{n} {unit}"
        n //= 1024
    return f"{n} TB"


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
