"""GPT-S's GEMMs shape by shape, for one library per process (issue 21's arithmetic bound).

    python benchmarks/gemm_shapes.py --lib ember [--steps 4] [--micro 20]
    python benchmarks/gemm_shapes.py --lib torch [--steps 4] [--micro 20]
    python benchmarks/gemm_shapes.py --lib ember --steps 0 --micro 0 --pair 30

Two views per library, both at the process's default threads (2 on this machine):
  step  : the GEMMs a real training step issues, grouped by (M, N, K, layout), with calls per
          step and wall ms per call. ember: NumPy's matmul/dot entry points wrapped by timers
          (as profile_shares.py; ``a @ b`` operators are not seen). torch: torch.profiler's
          aten::mm/addmm/bmm events (attention is one fused CPU kernel in torch, listed
          whole) plus the step's non-GEMM total.
  micro : each (M, N, K, layout) alone, best of ``--micro`` calls into a preallocated output
          (np.matmul for ember, torch.mm/addmm's out= for torch): the library's GEMM rate for
          that shape without the step around it.
Layout NN/NT/TN/TT names whether A and B are read as stored (N) or as the transpose of a
C-contiguous array (T), the way BLAS sees them. On a shared machine every figure is a smoke
number: minima are reported for the micro view because they are the least disturbed. With
``--cpu`` every time is the process's CPU time instead of wall time: meaningful at ONE thread
(OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1), where it does not count the time the process waits
for a core - the robust way to compare kernels on a busy machine.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict

CLOCK = [time.perf_counter]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

# The GEMMs of one GPT-S step (B*T = 1024 rows, d = 256, vocab 1024), per Linear:
# forward y = x W^T (NT), input gradient G W (NN), weight gradient G^T X (TN).
LINEARS = {"qkv": (768, 256, 4), "proj": (256, 256, 4), "fc1": (1024, 256, 4),
           "fc2": (256, 1024, 4), "head": (1024, 256, 1)}
ROWS = 1024


def linear_shapes():
    """[(name, M, N, K, layout, calls per step)] for every Linear GEMM of the step."""
    out = []
    for name, (n_out, n_in, count) in LINEARS.items():
        out.append((f"{name} fwd", ROWS, n_out, n_in, "NT", count))
        out.append((f"{name} dX", ROWS, n_in, n_out, "NN", count))
        out.append((f"{name} dW", n_out, n_in, ROWS, "TN", count))
    return out


def _layout(a):
    import numpy as np
    if a.ndim < 2:
        return "V"
    if a.flags.c_contiguous or a.strides[-1] == a.itemsize:
        return "N"
    if np.swapaxes(a, -1, -2).flags.c_contiguous or a.strides[-2] == a.itemsize:
        return "T"
    return "S"  # strided: NumPy copies it first


def ember_step(steps):
    import numpy as np

    import ember
    from examples.models.table1 import WORKLOADS, gpt_s, train_step
    assert WORKLOADS["gpts"] is gpt_s
    model, opt, batches, loss_fn, _ = gpt_s(ember)
    rec = defaultdict(lambda: [0, 0.0])
    real = {"matmul": np.matmul, "dot": np.dot}
    active = [False]

    def wrap(name):
        fn = real[name]

        def timed(a, b, *args, **kwargs):
            if not active[0]:
                return fn(a, b, *args, **kwargs)
            t0 = CLOCK[0]()
            r = fn(a, b, *args, **kwargs)
            dt = CLOCK[0]() - t0
            a_, b_ = np.asarray(a), np.asarray(b)
            batch = int(np.prod(a_.shape[:-2])) if a_.ndim > 2 else 1
            m = a_.shape[-2] if a_.ndim >= 2 else 1
            k = a_.shape[-1]
            n = b_.shape[-1] if b_.ndim >= 2 else 1
            key = (batch, m, n, k, _layout(a_) + _layout(b_))
            rec[key][0] += 1
            rec[key][1] += dt
            return r
        return timed

    def step(i):
        train_step(model, opt, loss_fn, batches[i % len(batches)])

    for i in range(3):
        step(i)
    np.matmul, np.dot = wrap("matmul"), wrap("dot")
    total = 0.0
    try:
        for i in range(steps):
            active[0] = True
            t0 = CLOCK[0]()
            step(i)
            total += CLOCK[0]() - t0
            active[0] = False
    finally:
        np.matmul, np.dot = real["matmul"], real["dot"]
    gemm_ms = sum(v[1] for v in rec.values()) / steps * 1e3
    print(f"ember step {total / steps * 1e3:.1f} ms (timers on), GEMM {gemm_ms:.1f} ms, "
          f"rest {total / steps * 1e3 - gemm_ms:.1f} ms")
    _print_rows(rec, steps)


def _print_rows(rec, steps):
    print(f"{'batch':>5} {'M':>5} {'N':>5} {'K':>5} {'lay':>4} {'calls/step':>10} "
          f"{'ms/call':>8} {'GFLOP/s':>8} {'ms/step':>8}")
    for (batch, m, n, k, lay), (calls, secs) in sorted(rec.items(), key=lambda kv: -kv[1][1]):
        per = secs / calls
        gf = 2 * batch * m * n * k / per / 1e9
        print(f"{batch:>5} {m:>5} {n:>5} {k:>5} {lay:>4} {calls / steps:>10.1f} "
              f"{per * 1e3:>8.3f} {gf:>8.1f} {secs / steps * 1e3:>8.2f}")


def _torch_category(name):
    if name in ("aten::mm", "aten::addmm", "aten::bmm"):
        return "GEMM (mm/addmm/bmm)"
    if "flash_attention" in name or "scaled_dot" in name:
        return "attention (fused kernel)"
    for key, cat in (("gelu", "gelu"), ("layer_norm", "layer_norm"), ("softmax", "cross-entropy"),
                     ("nll", "cross-entropy"), ("_foreach", "AdamW"), ("addcdiv", "AdamW"),
                     ("lerp", "AdamW"), ("Adam", "AdamW")):
        if key in name:
            return cat
    return "other"


def torch_step(steps):
    """torch's step: its time (CLOCK), then torch.profiler's self time per GEMM shape and per
    category. The profiler's times are wall times: under load they are inflated, so the
    categories are also given as shares of the step's CLOCK time (an estimate)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    from examples.models.table1 import gpt_s, train_step
    model, opt, batches, loss_fn, _ = gpt_s(torch)

    def step(i):
        train_step(model, opt, loss_fn, batches[i % len(batches)])

    for i in range(3):
        step(i)
    t0 = CLOCK[0]()
    for i in range(steps):
        step(i)
    plain = (CLOCK[0]() - t0) / steps * 1e3
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        for i in range(steps):
            step(i)
    rec = defaultdict(lambda: [0, 0.0])
    cats = defaultdict(float)
    for ev in prof.events():
        cats[_torch_category(ev.name)] += ev.self_cpu_time_total / 1e3 / steps
        if ev.name in ("aten::mm", "aten::addmm", "aten::bmm"):
            shapes = [s for s in ev.input_shapes if s]
            a, b = (shapes[1], shapes[2]) if ev.name == "aten::addmm" else (shapes[0], shapes[1])
            batch = a[0] if len(a) == 3 else 1
            key = (batch, a[-2], b[-1], a[-1], ev.name.split("::")[1])
            rec[key][0] += 1
            rec[key][1] += ev.self_cpu_time_total / 1e6
    total = sum(cats.values())
    print(f"torch step {plain:.1f} ms (no profiler); profiler self time {total:.1f} ms a step")
    for cat, ms in sorted(cats.items(), key=lambda kv: -kv[1]):
        print(f"  {cat:26s} {ms:8.1f} ms  {100 * ms / total:5.1f} %  ~{plain * ms / total:7.1f} ms"
              " of the step")
    _print_rows(rec, steps)


def micro(lib, reps):
    import numpy as np
    rng = np.random.default_rng(0)
    shapes = linear_shapes()
    print(f"{'gemm':>10} {'M':>5} {'N':>5} {'K':>5} {'lay':>4} {'best ms':>8} {'GFLOP/s':>8}")
    total = 0.0
    for name, m, n, k, lay, count in shapes:
        a = rng.standard_normal((m, k) if lay[0] == "N" else (k, m)).astype(np.float32)
        b = rng.standard_normal((k, n) if lay[1] == "N" else (n, k)).astype(np.float32)
        a_, b_ = (a if lay[0] == "N" else a.T), (b if lay[1] == "N" else b.T)
        if lib == "torch":
            import torch
            ta, tb = torch.from_numpy(a), torch.from_numpy(b)
            ta, tb = (ta if lay[0] == "N" else ta.t()), (tb if lay[1] == "N" else tb.t())
            out = torch.empty(m, n)

            def call():
                torch.mm(ta, tb, out=out)  # noqa: B023
        else:
            out = np.empty((m, n), np.float32)

            def call():
                np.matmul(a_, b_, out=out)  # noqa: B023
        for _ in range(3):
            call()
        best = float("inf")
        for _ in range(reps):
            t0 = CLOCK[0]()
            call()
            best = min(best, CLOCK[0]() - t0)
        total += best * count
        print(f"{name:>10} {m:>5} {n:>5} {k:>5} {lay:>4} {best * 1e3:>8.3f} "
              f"{2 * m * n * k / best / 1e9:>8.1f}")
    print(f"Linear GEMMs of one step at these best times: {total * 1e3:.1f} ms")


def pair_micro(reps):
    """Each Linear's dX = G W and dW = G^T X one after the other at OpenBLAS's threads, against
    the two at once on one thread each (ember's Linear backward, NOTE [Linear's two gradients
    at once]); median of ``reps`` interleaved calls (wall time)."""
    import statistics

    import numpy as np

    from ember import _blas_parts
    from ember.ops.nn import linear
    if not _blas_parts.on("linear_pair"):
        print("the parts are off here (EMBER_BLAS_PARTS=0, one BLAS thread, or not OpenBLAS)")
        return
    rng = np.random.default_rng(0)
    total = {"one after the other": 0.0, "at once": 0.0}
    print(f"{'linear':>6} {'out':>5} {'in':>5} {'seq ms':>8} {'at once':>8} {'seq/at once':>11}")
    for name, (n_out, n_in, count) in LINEARS.items():
        g = rng.standard_normal((ROWS, n_out)).astype(np.float32)
        w = rng.standard_normal((n_out, n_in)).astype(np.float32)
        x = rng.standard_normal((ROWS, n_in)).astype(np.float32)
        gx, gw = np.empty((ROWS, n_in), np.float32), np.empty((n_out, n_in), np.float32)

        def seq():
            np.matmul(g, w, out=gx)  # noqa: B023
            np.matmul(g.T, x, out=gw)  # noqa: B023

        def at_once():
            linear._backward_pair(g, x, w, (True, True))  # noqa: B023

        times = {"one after the other": [], "at once": []}
        for r in range(reps):
            calls = [("one after the other", seq), ("at once", at_once)]
            for label, fn in calls if r % 2 == 0 else calls[::-1]:
                t0 = CLOCK[0]()
                fn()
                times[label].append(CLOCK[0]() - t0)
        med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
        for k in total:
            total[k] += med[k] * count
        a, b = med["one after the other"], med["at once"]
        print(f"{name:>6} {n_out:>5} {n_in:>5} {a:>8.3f} {b:>8.3f} {a / b:>11.3f}")
    print("backward GEMMs of one step: " + ", ".join(f"{k} {v:.1f} ms" for k, v in total.items()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", choices=("ember", "torch"), required=True)
    ap.add_argument("--steps", type=int, default=4, help="0: the micro view only")
    ap.add_argument("--micro", type=int, default=20)
    ap.add_argument("--cpu", action="store_true", help="CPU time instead of wall time")
    ap.add_argument("--pair", type=int, default=0, metavar="REPS",
                    help="ember: also time each Linear's two backward GEMMs one after the "
                         "other vs at once (median of REPS)")
    args = ap.parse_args()
    if args.cpu:
        CLOCK[0] = time.process_time
    if args.lib == "torch":
        import torch
        print(f"torch {torch.__version__}, threads {torch.get_num_threads()}")
        if args.steps:
            torch_step(args.steps)
    elif args.steps:
        ember_step(args.steps)
    if args.micro:
        micro(args.lib, args.micro)
    if args.pair and args.lib == "ember":
        pair_micro(args.pair)


if __name__ == "__main__":
    main()
