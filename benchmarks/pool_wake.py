"""Cost of handing work to the second thread after a pause, one pool against OpenBLAS's own.

    python benchmarks/pool_wake.py                # both, gaps 0/10/30/100/300 us
    python benchmarks/pool_wake.py --repeat 400

GNMT-S's LSTM layers run ~320 small parallel regions per training step (one recurrent product
and one cell kernel per time step, forward and backward, 4 layers x 20 steps), each separated
from the last by 10-50 us of single-threaded Python and kernels. With the one pool on
(EMBER_ONE_POOL=1) each region is a numba parallel loop; pool off, each product is one
np.matmul on OpenBLAS's two threads. A thread pool whose worker has gone to sleep in the gap
pays a wake-up (a futex wake and, in a VM, an inter-processor interrupt) on every region;
OpenBLAS's worker spins ~0.1 s after each GEMM and pays none. This prints, for each gap
between regions, the mean wall time of one region:
  pool/GEMM   the recurrent product (1024, 256) @ (256, 32) through _onepool.matmul (pool on)
  pool/cell   a cell-sized (32k float32) parallel twin kernel (pool on)
  blas/GEMM   the same product through np.matmul, OpenBLAS at two threads (pool off)
Figures taken on a busy machine are smoke numbers (a descheduled worker dominates them).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numba
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from ember import _onepool  # noqa: E402


@_onepool.twin(min_work=1)
def _k_scale(x, out):
    for i in numba.prange(x.size):
        out[i] = x[i] * 0.5


def _spin(us):
    """Busy-wait `us` microseconds on this thread (the single-threaded work between regions)."""
    end = time.perf_counter() + us * 1e-6
    while time.perf_counter() < end:
        pass


def _per_region(fn, gap_us, repeat):
    times = []
    for _ in range(repeat):
        _spin(gap_us)
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6, statistics.mean(times) * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=200)
    ap.add_argument("--gaps", default="0,10,30,100,300", help="microseconds, comma-separated")
    args = ap.parse_args()
    gaps = [float(g) for g in args.gaps.split(",")]
    rng = np.random.default_rng(0)
    w = rng.standard_normal((1024, 256)).astype(np.float32)
    h = rng.standard_normal((256, 32)).astype(np.float32)
    z = np.empty((1024, 32), np.float32)
    x = rng.standard_normal(1 << 15).astype(np.float32)
    y = np.empty_like(x)
    rows = []
    _onepool.set_enabled(True)
    if not _onepool.enabled():
        print("the one pool cannot run here (threading layer or thread count); pool rows skipped")
    else:
        kernel = _k_scale.pick(x.size)
        for gap in gaps:
            rows.append(("pool/GEMM", gap, *_per_region(lambda: _onepool.matmul(w, h, out=z),
                                                          gap, args.repeat)))
            rows.append(("pool/cell", gap, *_per_region(lambda: kernel(x, y), gap, args.repeat)))
    _onepool.set_enabled(False)
    _onepool.set_enabled(None)
    for gap in gaps:
        rows.append(("blas/GEMM", gap, *_per_region(lambda: np.matmul(w, h, out=z), gap,
                                                      args.repeat)))
    print(f"{'region':<10} {'gap us':>7} {'median us':>10} {'mean us':>9}")
    for name, gap, med, mean in rows:
        print(f"{name:<10} {gap:7.0f} {med:10.1f} {mean:9.1f}")


if __name__ == "__main__":
    main()
