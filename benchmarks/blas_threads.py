"""A GEMM followed by a split kernel: OpenBLAS's own threads against ember's (the callback).

    python benchmarks/blas_threads.py                  # both modes, each in fresh processes
    python benchmarks/blas_threads.py --mode ember     # one process, one mode (what the above runs)

The pattern that lost every quiet A/B of ember's second-core schemes (NOTE [Kernel threads]):
a Linear's GEMM on OpenBLAS's two threads, then a GELU split over ember's kernel threads
(EMBER_KERNEL_THREADS=2), whose worker then shares a core with OpenBLAS's worker still
spinning after the GEMM. With EMBER_BLAS_THREADS=ember (NOTE [OpenBLAS threads callback] in
ember/_blas_threads.py) the GEMM's second job runs on ember's worker, which sleeps ~100 us
after it. Per mode this prints the median wall time of one GEMM + GELU, the process's CPU time
for it (both cores; spinning shows here) and the calling thread's CPU time, and the CPU the
process burns during a 20 ms sleep right after a GEMM. On a busy machine the wall times are
noise; the CPU figures are not.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def one_mode(args):
    sys.path.insert(0, ROOT)
    import ember
    import ember.nn.functional as F
    from ember import _blas_threads
    if args.mode == "ember" and not _blas_threads.enabled():
        _blas_threads.enable()
    g = ember.Generator().manual_seed(0)
    x = ember.randn(args.rows, 768, generator=g)
    w = ember.randn(768, 3072, generator=g)
    for _ in range(5):
        F.gelu(x @ w)
    wall, cpu, own = [], [], []
    for _ in range(args.repeat):
        time.sleep(args.gap_us * 1e-6)
        t0, c0, o0 = time.perf_counter(), time.process_time(), time.thread_time()
        F.gelu(x @ w)
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        own.append(time.thread_time() - o0)
    idle = []
    for _ in range(10):
        x @ w
        c0 = time.process_time()
        time.sleep(0.02)
        idle.append(time.process_time() - c0)
    med = statistics.median
    print(f"{args.mode:8s} GEMM+GELU wall {med(wall) * 1e3:7.2f} ms, process CPU "
          f"{med(cpu) * 1e3:7.2f} ms, caller CPU {med(own) * 1e3:7.2f} ms; CPU in a 20 ms sleep "
          f"after a GEMM {med(idle) * 1e3:5.2f} ms")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=["openblas", "ember"])
    ap.add_argument("--rows", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=60)
    ap.add_argument("--gap-us", type=float, default=300.0, help="pause before each GEMM")
    ap.add_argument("--processes", type=int, default=2, help="fresh processes per mode")
    args = ap.parse_args()
    if args.mode:
        one_mode(args)
        return
    print(f"load average {os.getloadavg()[0]:.2f}; EMBER_KERNEL_THREADS="
          f"{os.environ.get('EMBER_KERNEL_THREADS', '(unset)')}")
    for _ in range(args.processes):
        for mode in ("openblas", "ember"):
            env = {k: v for k, v in os.environ.items() if k != "EMBER_BLAS_THREADS"}
            if mode == "ember":
                env["EMBER_BLAS_THREADS"] = "ember"
            subprocess.run([sys.executable, __file__, "--mode", mode, "--rows", str(args.rows),
                            "--repeat", str(args.repeat), "--gap-us", str(args.gap_us)],
                           env=env, check=True)


if __name__ == "__main__":
    main()
