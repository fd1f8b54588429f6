"""Why GPT-S generation's time differs from one fresh process to the next (issue 21): per-token
times and the scheduler's view of every thread, one library per process.

    python benchmarks/generate_spread.py [--procs 10] [--samples 4] [--env NAME=VALUE ...]
        [--libs ember,torch,ember:NAME=VALUE,torch:NAME=VALUE]

Runs ``--procs`` pairs of fresh processes (ember, torch, torch, ember, ...), each importing ONE
library and timing ``--samples`` generations of generate.py's workload (a 0.25 s pause before
each, as generate.py's; no quiet-core probe, so the figures include whatever the machine does).
Per process it prints the median generation, the first 8 tokens' and the rest's median token
time, and per generation (medians): the main thread's CPU time and its wait on a run queue
(/proc/thread-self/schedstat), its migrations and involuntary switches (/proc/thread-self/sched),
the other threads' CPU time (the BLAS / OpenMP / numba workers), the vCPUs' steal time
(/proc/stat: the hypervisor running someone else), the CPU the main thread ended on, and how many
threads the process has; then "gemv": the same 64 tokens' weight products alone, NumPy on
the process's own weight arrays (one BLAS call for both libraries: the memory, not the library),
and the min/max generation in the process. ``--env`` sets variables in both libraries'
children (e.g. OPENBLAS_NUM_THREADS=1); a ``--libs`` entry ``lib:NAME=VALUE`` sets one only for
that entry's processes, so that a setting and its absence alternate process by process in one
run (the machine's state drifts over minutes: two runs one after the other do not compare).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from examples.models.table1 import _gpt_module  # noqa: E402

SETTLE = 0.25


def _sched():
    """(run ns, run-queue wait ns) of this thread, and (migrations, involuntary switches)."""
    with open("/proc/thread-self/schedstat") as f:
        run, wait, _ = (int(v) for v in f.read().split())
    fields = {}
    with open("/proc/thread-self/sched") as f:
        for line in f:
            if ":" in line:
                key, _, val = line.partition(":")
                fields[key.strip()] = val.strip()
    return run, wait, int(fields["se.nr_migrations"]), int(fields["nr_involuntary_switches"])


def _steal():
    """Steal jiffies summed over the vCPUs (/proc/stat's 8th value of the cpu line)."""
    with open("/proc/stat") as f:
        return int(f.readline().split()[8])


def _cpu_now():
    with open("/proc/thread-self/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[36])  # field 39 of the whole line


def _child(lib_name, samples, new, prompt_len):
    if lib_name == "torch":
        import torch as lib
        lib.set_num_threads(2)
    else:
        import ember as lib
    lib.manual_seed(0)
    model = _gpt_module(lib)()
    model.eval()
    prompt = lib.from_numpy(
        np.random.default_rng(0).integers(0, 1024, (1, prompt_len)).astype(np.int64))

    def generate(stamps):
        with lib.no_grad():
            logits, cache = model(prompt, [])
            stamps.append(time.perf_counter())
            for i in range(new):
                nxt = logits[:, -1].argmax(dim=-1, keepdim=True)
                if i + 1 < new:
                    logits, cache = model(nxt, cache)
                stamps.append(time.perf_counter())

    # the process's own weight memory, multiplied by NumPy alone (the same BLAS call for both
    # libraries): a generation's 17 weight-vector products per token, 64 tokens
    weights = [p.detach().numpy() for name, p in model.named_parameters()
               if p.dim() == 2 and not name.startswith("pos")]
    rows_in = {w.shape[1]: np.ones((1, w.shape[1]), np.float32) for w in weights}

    def gemvs():
        for _ in range(new):
            for w in weights:
                np.matmul(rows_in[w.shape[1]], w.T)

    for _ in range(3):
        generate([])
    rows = []
    for _ in range(samples):
        time.sleep(SETTLE)
        s0, st0, p0 = _sched(), _steal(), time.process_time()
        stamps = [time.perf_counter()]
        generate(stamps)
        s1, st1, p1 = _sched(), _steal(), time.process_time()
        time.sleep(SETTLE)
        g0 = time.perf_counter()
        gemvs()
        gemv_ms = (time.perf_counter() - g0) * 1e3
        tok = np.diff(stamps[1:]) * 1e3
        main_cpu = (s1[0] - s0[0]) / 1e6
        rows.append({"ms": (stamps[-1] - stamps[0]) * 1e3, "first8": float(np.median(tok[:8])),
                     "rest": float(np.median(tok[8:])), "main_cpu": main_cpu,
                     "wait": (s1[1] - s0[1]) / 1e6, "migr": s1[2] - s0[2],
                     "invol": s1[3] - s0[3], "others_cpu": (p1 - p0) * 1e3 - main_cpu,
                     "steal": (st1 - st0) * 1e3 / os.sysconf("SC_CLK_TCK"), "cpu": _cpu_now(),
                     "gemv": gemv_ms})
    out = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    out["min"] = min(r["ms"] for r in rows)
    out["max"] = max(r["ms"] for r in rows)
    out["threads"] = len(os.listdir("/proc/self/task"))
    out["lib"] = lib_name
    print(json.dumps(out))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--procs", type=int, default=10)
    ap.add_argument("--samples", type=int, default=4)
    ap.add_argument("--new", type=int, default=64)
    ap.add_argument("--prompt", type=int, default=16)
    ap.add_argument("--libs", default="ember,torch")
    ap.add_argument("--env", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--_lib", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args._lib:
        return _child(args._lib, args.samples, args.new, args.prompt)
    env = dict(os.environ, **dict(e.split("=", 1) for e in args.env))
    libs = args.libs.split(",")
    width = max(6, *(len(lib) for lib in libs))
    cmd = [sys.executable, os.path.abspath(__file__), "--samples", str(args.samples), "--new",
           str(args.new), "--prompt", str(args.prompt)]
    print(f"env {' '.join(args.env) or '(none)'}; load {open('/proc/loadavg').read().split()[:3]}")
    print(f"{'lib':{width}s} {'gen ms':>7s} {'first8':>7s} {'rest':>6s} {'mainCPU':>8s} "
          f"{'wait':>6s} {'migr':>5s} {'invol':>5s} {'others':>7s} {'steal':>6s} "
          f"{'cpu':>3s} {'thr':>3s} {'gemv':>6s} {'min':>6s} {'max':>6s}")
    for p in range(args.procs):
        for lib in (libs if p % 2 == 0 else libs[::-1]):
            name, _, var = lib.partition(":")
            env_one = dict(env, **dict([var.split("=", 1)])) if var else env
            res = subprocess.run(cmd + ["--_lib", name], capture_output=True, text=True,
                                 env=env_one, cwd=ROOT, timeout=600)
            if res.returncode:
                raise RuntimeError(res.stderr[-2000:])
            r = json.loads(res.stdout.strip().splitlines()[-1])
            print(f"{lib:{width}s} {r['ms']:7.1f} {r['first8']:7.2f} {r['rest']:6.2f} "
                  f"{r['main_cpu']:8.1f} {r['wait']:6.1f} {r['migr']:5.0f} {r['invol']:5.0f} "
                  f"{r['others_cpu']:7.1f} {r['steal']:6.1f} {r['cpu']:3.0f} {r['threads']:3d} "
                  f"{r['gemv']:6.1f} {r['min']:6.1f} {r['max']:6.1f}",
                  flush=True)


if __name__ == "__main__":
    main()
