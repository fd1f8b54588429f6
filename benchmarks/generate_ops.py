"""GPT-S generation's decode step op by op (generate.py's workload), one library per process.

    python benchmarks/generate_ops.py [--cache 48] [--reps 300] [--rounds 9]

Runs ember and torch in alternating fresh processes (ember, torch, torch, ember); each builds
GPT-S, fills a key/value cache of ``--cache`` positions, then times every operation of one
decoding step on the same shapes as the model's own step (the first block's modules and arrays
stand for all four): ``--reps`` calls back to back, the median over ``--rounds`` rounds, in us
per call. "step" is one whole ``model(nxt, cache)`` call, "token" the step plus the argmax and
the cat onto the generated tokens; "sum x4" adds the per-block ops four times plus the rest, so
that step - sum is what the modules' calls and the model's Python cost beyond the ops;
"prefill (16)" is the first call of a generation (a 16-token prompt, empty cache); "17 products,
cycled" runs the step's weight products alone in the step's order (each weight read from beyond
L2, as in the step), "one thread" the same at one BLAS / torch thread.
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
sys.path.insert(1, os.path.dirname(os.path.abspath(__file__)))

from generate import build  # noqa: E402  (generate.py's model: the same GPT-S)


def _time(fn, reps, rounds):
    per = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        per.append((time.perf_counter() - t0) / reps)
    return 1e6 * statistics.median(per)


def _ops(lib, model, cache, nxt):
    """name -> (closure, times per step)."""
    F = lib.nn.functional
    blk = model.blocks[0]
    x = model.tok(nxt) + model.pos.weight[cache[0][0].shape[2]:cache[0][0].shape[2] + 1]
    h = blk.ln1(x)
    qkv = blk.qkv(h)
    q, k, v = qkv.view(1, 1, 3, 4, 64).permute(2, 0, 3, 1, 4).unbind(0)
    pk, pv = cache[0]
    kk, vv = lib.cat([pk, k], dim=2), lib.cat([pv, v], dim=2)
    y = F.scaled_dot_product_attention(q, kk, vv)
    yr = y.transpose(1, 2).reshape(1, 1, 256)
    a = blk.proj(yr)
    f1 = blk.fc1(h)
    g = F.gelu(f1)
    logits = model.head(h)
    idx = lib.zeros(1, 40, dtype=lib.long)
    nt = logits[:, -1].argmax(dim=-1, keepdim=True)
    return {
        "embed+pos": (lambda: model.tok(nxt) + model.pos.weight[48:49], 1),
        "layer_norm": (lambda: blk.ln1(x), 9),
        "qkv 256->768": (lambda: blk.qkv(h), 4),
        "view/permute/unbind": (
            lambda: qkv.view(1, 1, 3, 4, 64).permute(2, 0, 3, 1, 4).unbind(0), 4),
        "cat k/v": (lambda: lib.cat([pk, k], dim=2), 8),
        "sdpa": (lambda: F.scaled_dot_product_attention(q, kk, vv), 4),
        "transpose/reshape": (lambda: y.transpose(1, 2).reshape(1, 1, 256), 4),
        "proj 256->256": (lambda: blk.proj(yr), 4),
        "add": (lambda: x + a, 8),
        "fc1 256->1024": (lambda: blk.fc1(h), 4),
        "gelu 1024": (lambda: F.gelu(f1), 4),
        "fc2 1024->256": (lambda: blk.fc2(g), 4),
        "head 256->1024": (lambda: model.head(h), 1),
        "logits[:,-1].argmax": (lambda: logits[:, -1].argmax(dim=-1, keepdim=True), 1),
        "cat idx": (lambda: lib.cat([idx, nt], dim=1), 1),
    }


def _child(name, n_cache, reps, rounds):
    if name == "torch":
        import torch as lib
        lib.set_num_threads(2)
    else:
        import ember as lib
    model = build(lib)
    rng = np.random.default_rng(0)
    prompt = lib.from_numpy(rng.integers(0, 1024, (1, n_cache)).astype(np.int64))
    out = {}
    with lib.no_grad():
        logits, cache = model(prompt, [])
        nxt = logits[:, -1].argmax(dim=-1, keepdim=True)
        ops = _ops(lib, model, cache, nxt)
        for _ in range(3):  # warm up (numba compiles, caches fill)
            for fn, _n in ops.values():
                fn()
        out["step"] = _time(lambda: model(nxt, cache), max(1, reps // 4), rounds)
        prompt16 = lib.from_numpy(rng.integers(0, 1024, (1, 16)).astype(np.int64))
        out["prefill (16)"] = _time(lambda: model(prompt16, []), max(1, reps // 30), rounds)
        idx = lib.zeros(1, 40, dtype=lib.long)

        def token():
            lg, _c = model(nxt, cache)
            return lib.cat([idx, lg[:, -1].argmax(dim=-1, keepdim=True)], dim=1)

        out["token"] = _time(token, max(1, reps // 4), rounds)
        total = 0.0
        for op, (fn, n) in ops.items():
            out[op] = _time(fn, reps, rounds)
            if op not in ("logits[:,-1].argmax", "cat idx"):
                total += n * out[op]
        out["sum x4"] = total
        # the step's 17 weight products in its order: each weight read from beyond L2 as in
        # the step (the per-op rows above keep one weight hot)
        lins = [m for b in model.blocks for m in (b.qkv, b.proj, b.fc1, b.fc2)] + [model.head]
        rows = {256: lib.zeros(1, 1, 256), 1024: lib.zeros(1, 1, 1024)}

        def products():
            for m in lins:
                m(rows[m.in_features])

        out["17 products, cycled"] = _time(products, max(1, reps // 4), rounds)
        if name == "torch":
            lib.set_num_threads(1)
            out["  ... one thread"] = _time(products, max(1, reps // 4), rounds)
            lib.set_num_threads(2)
        else:
            from ember._kernel_threads import blas_threads_enter, blas_threads_exit
            before = blas_threads_enter(1)
            out["  ... one thread"] = _time(products, max(1, reps // 4), rounds)
            blas_threads_exit(before)
            ws = [m.weight.detach().numpy() for m in lins]
            vs = {256: np.zeros(256, np.float32), 1024: np.zeros(1024, np.float32)}

            def raw():
                for w in ws:
                    np.dot(vs[w.shape[1]], w.T)

            out["  ... np.dot alone"] = _time(raw, max(1, reps // 4), rounds)
    print(json.dumps(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", type=int, default=48)
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--pairs", type=int, default=1)
    ap.add_argument("--_lib", choices=("ember", "torch"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args._lib:
        return _child(args._lib, args.cache, args.reps, args.rounds)
    res = {"ember": [], "torch": []}
    for p in range(args.pairs):
        for name in (("ember", "torch") if p % 2 == 0 else ("torch", "ember")):
            cmd = [sys.executable, os.path.abspath(__file__), "--_lib", name, "--cache",
                   str(args.cache), "--reps", str(args.reps), "--rounds", str(args.rounds)]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=ROOT)
            res[name].append(json.loads(out.stdout.strip().splitlines()[-1]))
    keys = list(res["ember"][0])
    print(f"decode step op by op, cache {args.cache}, us per call (median of the "
          f"{args.pairs} processes' medians)")
    print(f"  {'op':22s} {'ember':>8s} {'torch':>8s} {'e - t':>8s}")
    for k in keys:
        e = statistics.median(r.get(k, float("nan")) for r in res["ember"])
        t = statistics.median(r.get(k, float("nan")) for r in res["torch"])
        print(f"  {k:22s} {e:8.1f} {t:8.1f} {e - t:8.1f}")


if __name__ == "__main__":
    main()
