"""Per-layer forward, input-gradient and weight-gradient times of each of ember's convolution
algorithms against torch, for the distinct Conv2d layers of Table 1 workloads.

    python benchmarks/conv_algos.py WORKLOAD [WORKLOAD ...] [--threads N] [--reps R]

For every distinct layer (found as benchmarks/conv_layers.py finds them) ember's kernels are
called directly (ember/ops/_kernels/conv.py's conv2d_forward / conv2d_backward, as Conv2d's
autograd function calls them) with each algorithm that can run the layer forced in turn:
"im2col" (the one-GEMM path, which for 1x1 layers is the pointwise GEMM), "F2" / "F4"
(Winograd F(2x2, 3x3) / F(4x4, 3x3), 3x3 stride-1 layers only). The column "pick" is the
algorithm `winograd.applies` chooses. torch runs F.conv2d and aten's convolution_backward with
the same output masks. Each library runs in its own fresh process (NOTE [One library per
process] in table1.py). Times are the median of R repetitions, wall clock at N threads (default
the benchmark's 2): keep the two-thread table for a quiet machine.

Columns: fwd, dx (input gradient alone), dw (weight gradient alone), step = fwd + the backward
computing both gradients in one call (ember transforms grad_y once for both), which is what a
training step pays. The stem (3 input channels) needs no dx, as in training.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

import numpy as np  # noqa: E402


def _median_ms(fn, reps):
    for _ in range(2):
        fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def _algorithms(x_shape, k, s):
    if tuple(k) == (3, 3) and tuple(s) == (1, 1):
        return ["im2col", "F2", "F4"]
    return ["im2col"]


def _time_ember(cfg, reps, rng):
    from ember.ops._kernels import conv as kconv
    from ember.ops._kernels import winograd
    x_shape, out_c, k, s, p, g, bias = cfg
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = (rng.standard_normal((out_c, x_shape[1] // g, *k)) * 0.05).astype(np.float32)
    b = np.zeros(out_c, np.float32) if bias else None
    stem = x_shape[1] == 3
    geo = (tuple(s), tuple(p), (1, 1), g)
    pick_m = winograd._tile_size(x_shape, w.shape, *p) if winograd.applies(
        x_shape, w.shape, (*k, *s, *p, 1, 1), g) else 0
    pick = {0: "im2col", 2: "F2", 4: "F4"}[pick_m]
    original = winograd._tile_size
    out = {"pick": pick}
    try:
        for algo in _algorithms(x_shape, k, s):
            m = {"im2col": 0, "F2": 2, "F4": 4}[algo]
            winograd._tile_size = lambda *a, m=m: m
            keep = []

            def fwd(keep=keep):
                keep.clear()
                return kconv.conv2d_forward(x, w, b, *geo[:3], g, keep)

            y = fwd()
            gy = rng.standard_normal(y.shape).astype(np.float32)
            packed = keep[0] if keep else None
            packed_w = keep[1] if len(keep) > 1 else None

            def bwd(need_x, need_w, gy=gy, packed=packed, packed_w=packed_w):
                return kconv.conv2d_backward(gy, x, w, *geo[:3], g, need_x, need_w, bias,
                                             packed, packed_w)

            row = {"fwd": _median_ms(fwd, reps)}
            row["dx"] = None if stem else _median_ms(lambda: bwd(True, False), reps)
            row["dw"] = _median_ms(lambda: bwd(False, True), reps)
            row["step"] = row["fwd"] + _median_ms(lambda: bwd(not stem, True), reps)
            out[algo] = row
    finally:
        winograd._tile_size = original
    return out


def _time_torch(cfg, reps, rng):
    import torch
    x_shape, out_c, k, s, p, g, bias = cfg
    x = torch.from_numpy(rng.standard_normal(x_shape).astype(np.float32))
    w = torch.from_numpy((rng.standard_normal((out_c, x_shape[1] // g, *k)) * 0.05)
                         .astype(np.float32))
    b = torch.zeros(out_c) if bias else None
    stem = x_shape[1] == 3

    def fwd():
        with torch.no_grad():
            return torch.nn.functional.conv2d(x, w, b, s, p, 1, g)

    y = fwd()
    gy = torch.from_numpy(rng.standard_normal(tuple(y.shape)).astype(np.float32))

    def bwd(need_x, need_w):
        with torch.no_grad():
            return torch.ops.aten.convolution_backward(
                gy, x, w, [out_c] if bias else None, list(s), list(p), [1, 1], False, [0, 0],
                g, [need_x, need_w, bool(bias)])

    row = {"fwd": _median_ms(fwd, reps)}
    row["dx"] = None if stem else _median_ms(lambda: bwd(True, False), reps)
    row["dw"] = _median_ms(lambda: bwd(False, True), reps)
    row["step"] = row["fwd"] + _median_ms(lambda: bwd(not stem, True), reps)
    return {"torch": row}


def _child(args):
    from conv_layers import _child_configs
    _, configs = _child_configs(args)
    timer = _time_torch if args.child == "torch" else _time_ember
    rng = np.random.default_rng(0)
    print(json.dumps([timer(c, args.reps, rng) for c, _ in configs]))


def _fmt(v):
    return "-" if v is None else f"{v:.2f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workloads", nargs="+")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--child", choices=("ember", "torch"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(args)
        return
    from conv_layers import _configs
    for workload in args.workloads:
        configs = list(_configs(workload).items())
        payload = json.dumps(configs)
        results = {}
        for lib in ("ember", "torch"):  # one library per fresh process
            cmd = [sys.executable, os.path.abspath(__file__), workload, "--child", lib,
                   "--threads", str(args.threads), "--reps", str(args.reps)]
            out = subprocess.run(cmd, input=payload, capture_output=True, text=True,
                                 check=True)
            results[lib] = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"\n{workload}, {args.threads} thread(s), median of {args.reps}, ms "
              f"(fwd / dx / dw / step = fwd + one backward for both); n = layers of that shape")
        print("| layer | n | algo | fwd | dx | dw | step | vs torch step |")
        print("|---|---|---|---|---|---|---|---|")
        total = {"pick": 0.0, "best": 0.0, "torch": 0.0}
        for (cfg, n), e, t in zip(configs, results["ember"], results["torch"], strict=True):
            x_shape, out_c, k, s, p, g, _ = cfg
            key = f"{tuple(x_shape)} -> {out_c}, k{k[0]} s{s[0]} p{p[0]}"
            tt = t["torch"]
            algos = [a for a in ("im2col", "F2", "F4") if a in e]
            best = min(algos, key=lambda a: e[a]["step"])
            for a in algos:
                r = e[a]
                mark = (" (pick)" if a == e["pick"] else "") + (" *best*" if a == best else "")
                print(f"| {key} | {n} | {a}{mark} | {_fmt(r['fwd'])} | {_fmt(r['dx'])} | "
                      f"{_fmt(r['dw'])} | {_fmt(r['step'])} | {r['step'] / tt['step']:.2f} |")
            print(f"| {key} | {n} | torch | {_fmt(tt['fwd'])} | {_fmt(tt['dx'])} | "
                  f"{_fmt(tt['dw'])} | {_fmt(tt['step'])} | 1 |")
            total["pick"] += n * e[e["pick"]]["step"]
            total["best"] += n * e[best]["step"]
            total["torch"] += n * tt["step"]
        print(f"{workload} all conv layers per step (sum of n * step): ember as picked "
              f"{total['pick']:.1f}, ember best per layer {total['best']:.1f}, "
              f"torch {total['torch']:.1f} ms")


if __name__ == "__main__":
    main()
