"""The LSTM layer's time loops at GNMT-S's size, with and without their non-GEMM work.

    python benchmarks/lstm_loop.py                  # T=20, B=32, H=256, threads as table1.py
    python benchmarks/lstm_loop.py --reps 50

Times T steps of ember's forward loop (recurrent GEMM, then the step kernel in parts on
OpenBLAS's threads: NOTE [LSTM steps on OpenBLAS's threads] in ember/ops/nn/rnn.py) against the
same T GEMMs alone, the parts alone and the serial kernels, and the backward loop likewise. The
difference between a loop and its GEMMs alone is what the loop spends beyond BLAS: the number
to beat for the layer's serial work. Before each timed loop a big GEMM wakes OpenBLAS's worker,
as the products around a loop do in a step. Wall clock (medians and minimums over --reps):
meaningful only on a quiet machine.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from ember import _blas_parts  # noqa: E402
from ember.ops._kernels import rnn as K  # noqa: E402
from ember.ops.nn import rnn as R  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--reps", type=int, default=30)
    args = ap.parse_args()
    if not _blas_parts.on("lstm"):
        sys.exit("lstm_loop.py: the LSTM's parts are off (EMBER_BLAS_PARTS=0 or no OpenBLAS)")
    steps, batch, hidden = args.steps, args.batch, args.hidden
    dt = np.dtype(np.float32)
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((4 * hidden, hidden)) * 0.06).astype(dt)
    proj = rng.standard_normal((4 * hidden, steps * batch)).astype(dt)
    bias = (rng.standard_normal(4 * hidden) * 0.1).astype(dt)
    acts = np.empty((steps, 4 * hidden, batch), dt)
    cs, tanh_cs, hs = (np.empty((steps, hidden, batch), dt) for _ in range(3))
    z, h0 = np.empty((4 * hidden, batch), dt), np.zeros((hidden, batch), dt)
    c0 = np.zeros(hidden * batch, dt)
    g = rng.standard_normal((steps, 4 * hidden, batch)).astype(dt)
    g_out = rng.standard_normal((steps, hidden * batch)).astype(dt)
    big = rng.standard_normal((1024, 1024)).astype(dt)
    flat = [R._per_step(a) for a in (acts, cs, tanh_cs, hs)]
    order = range(steps)

    def fwd():
        R._fwd_in_parts(w, h0, c0, z, proj, bias, (acts, cs, tanh_cs, hs), order)

    def fwd_gemms():
        h = h0
        for t in order:
            np.matmul(w, h, out=z)
            h = hs[t]

    def fwd_serial():
        h, zf = h0, z.reshape(-1)
        for t in order:
            np.matmul(w, h, out=z)
            np.add(z, proj[:, t * batch:(t + 1) * batch], out=z)
            K._k_lstm_step_fwd_t(zf, flat[0][t], c0, flat[1][t], flat[2][t], flat[3][t])
            h = hs[t]

    def bwd():
        dh, dc = np.zeros((hidden, batch), dt), np.zeros((hidden, batch), dt)
        R._bwd_in_parts(dh, dc, g_out, c0, w, (flat[0], flat[2], flat[1]), list(order), g)

    def bwd_gemms():
        dh = np.empty((hidden, batch), dt)
        for t in order:
            np.matmul(w.T, g[t], out=dh)

    def bwd_serial():
        dh, dc = np.zeros((hidden, batch), dt), np.zeros((hidden, batch), dt)
        gf, one = R._per_step(g), dt.type(1)
        for t in range(steps - 1, -1, -1):
            K._k_lstm_step_bwd_t(dh.reshape(-1), g_out[t], dc.reshape(-1), flat[0][t],
                                 flat[2][t], c0 if t == 0 else flat[1][t - 1], gf[t], one)
            np.matmul(w.T, g[t], out=dh)

    cases = {"forward loop (GEMM + parts)": fwd, "forward GEMMs alone": fwd_gemms,
             "forward loop, serial kernels": fwd_serial, "backward loop (parts + GEMM)": bwd,
             "backward GEMMs alone": bwd_gemms, "backward loop, serial kernels": bwd_serial}
    times = {name: [] for name in cases}
    for f in cases.values():
        f()
    for _ in range(args.reps):
        for name, f in cases.items():
            np.matmul(big, big)
            t0 = time.perf_counter()
            f()
            times[name].append(time.perf_counter() - t0)
    print(f"LSTM loops, T={steps} B={batch} H={hidden}, {args.reps} reps, "
          f"load {os.getloadavg()[0]:.2f}: ms per loop (median, min)")
    for name, ts in times.items():
        print(f"  {name:32s} {statistics.median(ts) * 1e3:7.3f} {min(ts) * 1e3:7.3f}")


if __name__ == "__main__":
    main()
