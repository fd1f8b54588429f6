"""Per-layer convolution times of a Table 1 workload, ember against torch, one library per process.

    python benchmarks/conv_layers.py WORKLOAD [--threads N] [--reps R] [--cpu]

Every distinct Conv2d of the workload's model (input shape, channels, kernel, stride, padding,
groups) is timed alone at the benchmark's shapes: forward under no_grad, and forward + backward
(input and weight gradients, none for the stem whose input needs none). Each library runs in
its own fresh process (NOTE [One library per process] in table1.py). The table lists the layers
by n * (ember - torch) for forward + backward, n being the layer's count in the model, so the
rows at the top are where ember loses most per training step.

Timing: the minimum over R repetitions of wall-clock time at N threads (default: the
benchmark's 2), or with --cpu the process's CPU time (meaningful at --threads 1 only, where it
counts the work regardless of what else runs on the machine; at two threads it counts the
spinning of idle pool threads too). On a busy machine wall-clock figures at two threads are
dominated by descheduled threads: use --threads 1 --cpu there and keep the two-thread table
for a quiet machine.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402


def _configs(workload):
    """{(input shape, out channels, kernel, stride, padding, groups, bias): count} of the
    model's Conv2d layers, found by running one forward of ember's model."""
    import ember
    from examples.models.table1 import WORKLOADS
    model, _, batches, _, _ = WORKLOADS[workload](ember)
    found = collections.Counter()

    def hook(module, inputs, output):
        found[(tuple(inputs[0].shape), module.out_channels, tuple(module.kernel_size),
               tuple(module.stride), tuple(module.padding), module.groups,
               module.bias is not None)] += 1

    for m in model.modules():
        if isinstance(m, ember.nn.Conv2d):
            m.register_forward_hook(hook)
    x, _ = batches[0]
    with ember.no_grad():
        model(*x) if isinstance(x, tuple) else model(x)
    return found


def _time_layer(lib, conv, x, gy, stem, reps, clock):
    """(min forward seconds, min forward + backward seconds) of one layer."""

    def train_step():
        conv.weight.grad = None
        if not stem:
            x.grad = None
        conv(x).backward(gy)

    def forward():
        with lib.no_grad():
            conv(x)

    for _ in range(3):
        train_step()
    fwd, both = [], []
    for _ in range(reps):
        t0 = clock()
        forward()
        t1 = clock()
        train_step()
        t2 = clock()
        fwd.append(t1 - t0)
        both.append(t2 - t1)
    return min(fwd), min(both)


def _time_layers(lib, configs, reps, cpu):
    clock = time.process_time if cpu else time.perf_counter
    rng = np.random.default_rng(0)
    rows = []
    for (x_shape, out_c, k, s, p, g, bias), count in configs:
        conv = lib.nn.Conv2d(x_shape[1], out_c, k, s, p, groups=g, bias=bias)
        x = lib.from_numpy(rng.standard_normal(x_shape).astype(np.float32))
        stem = x_shape[1] == 3  # the image: no input gradient, as in training
        if not stem:
            x.requires_grad_(True)
        with lib.no_grad():
            y_shape = tuple(conv(x).shape)
        gy = lib.from_numpy(rng.standard_normal(y_shape).astype(np.float32))
        fwd, both = _time_layer(lib, conv, x, gy, stem, reps, clock)
        key = f"{x_shape} -> {out_c}, k{k[0]}x{k[1]} s{s[0]} p{p[0]}" + (f" g{g}" if g > 1 else "")
        rows.append((key, count, fwd * 1e3, both * 1e3))
    return rows


def _child_configs(args):
    """(library, [(config, count)]) of a child process: its library imported at args.threads
    threads, the configs read from stdin (also used by benchmarks/conv_algos.py)."""
    if args.child == "torch":
        import torch as lib
    else:
        import ember as lib
    lib.set_num_threads(args.threads)
    configs = [(tuple(tuple(v) if isinstance(v, list) else v for v in c), n)
               for c, n in json.loads(sys.stdin.read())]
    return lib, configs


def _child(args):
    lib, configs = _child_configs(args)
    print(json.dumps(_time_layers(lib, configs, args.reps, args.cpu)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workload")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--cpu", action="store_true", help="process CPU time instead of wall time")
    ap.add_argument("--child", choices=("ember", "torch"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(args)
        return
    configs = json.dumps(list(_configs(args.workload).items()))
    results = {}
    for lib in ("ember", "torch"):  # one library per fresh process
        cmd = [sys.executable, os.path.abspath(__file__), args.workload, "--child", lib,
               "--threads", str(args.threads), "--reps", str(args.reps)]
        cmd += ["--cpu"] if args.cpu else []
        out = subprocess.run(cmd, input=configs, capture_output=True, text=True, check=True)
        results[lib] = {r[0]: r for r in json.loads(out.stdout.strip().splitlines()[-1])}
    rows = []
    for key, (_, n, e_fwd, e_both) in results["ember"].items():
        _, _, t_fwd, t_both = results["torch"][key]
        rows.append((n * (e_both - t_both), key, n, e_fwd, t_fwd, e_both, t_both))
    rows.sort(reverse=True)
    unit = "CPU ms" if args.cpu else "ms"
    print(f"{args.workload}, {args.threads} thread(s), min of {args.reps}, {unit}; "
          "n = layers of that shape in the model")
    print("| layer | n | fwd ember | fwd torch | fwd+bwd ember | fwd+bwd torch | n*(e-t) |")
    print("|---|---|---|---|---|---|---|")
    for diff, key, n, e_fwd, t_fwd, e_both, t_both in rows:
        print(f"| {key} | {n} | {e_fwd:.2f} | {t_fwd:.2f} | {e_both:.2f} | {t_both:.2f} "
              f"| {diff:+.2f} |")
    e_total = sum(r[2] * r[5] for r in rows)
    t_total = sum(r[2] * r[6] for r in rows)
    print(f"all conv layers, fwd+bwd per step: ember {e_total:.1f}, torch {t_total:.1f} {unit}")


if __name__ == "__main__":
    main()
