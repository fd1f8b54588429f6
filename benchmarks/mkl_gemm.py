"""MKL's cblas_sgemm against numpy's OpenBLAS (and torch.mm) on Table 1's GEMM shapes (issue 21).

    python benchmarks/mkl_gemm.py --libs mkl --mkl LIBDIR [--layer intel] [--threads 2] [--cold]
    python benchmarks/mkl_gemm.py --libs numpy [--threads 2] [--cold]
    python benchmarks/mkl_gemm.py --libs torch [--threads 2] [--cold]
    python benchmarks/mkl_gemm.py --libs numpy,mklparts --mkl LIBDIR --layer sequential
    python benchmarks/mkl_gemm.py --mkl LIBDIR --spin [--layer intel]

``pip install --prefix DIR mkl`` puts libmkl_rt.so.3 and libiomp5.so in DIR/lib, which ``--mkl
DIR/lib`` names (in a venv with ember's mkl extra: VENV/lib); MKL_THREADING_LAYER is set from
``--layer`` before MKL loads. Rows: the float32 2-D products of one GPT-S, ResNet-50 and GNMT-S
training step as ember issues them (M x N x K; layout of A and B as BLAS reads them: N as
stored, T the transpose of a C-contiguous array) with calls per step, recorded by wrapping
np.matmul/np.dot for one step (SHAPES below is that record, cut where a workload's rows reach
~80 % of its multiply-adds). Each row: the median of ``--reps`` calls into a preallocated output,
the libraries of ``--libs`` interleaved call by call (one library per process compares the
kernels: interleaved, each library's idle threads spin beside the other's calls); with
``--cold`` a 16 MB buffer is written before each call (the operands leave the 2 MB L2).
``mklparts`` is what ember/_mkl.py does: MKL on one thread per half of the result, the halves on
OpenBLAS's threads. Per workload, the sum of calls x median.
``--spin``: what a threaded GEMM leaves behind. After a 1024x1024x256 product by OpenBLAS, by
MKL, or a 0.3 s pause, time what follows: an OpenBLAS GEMM at two threads, a serial numba
elementwise pass, and a pass split over OpenBLAS's threads as ember runs its range kernels.
"""
from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

# (workload, M, N, K, layout, calls per step)
SHAPES = [
    ("gpts", 1024, 1024, 256, "NT", 5), ("gpts", 1024, 256, 1024, "NN", 5),
    ("gpts", 1024, 256, 1024, "TN", 5), ("gpts", 1024, 256, 1024, "NT", 4),
    ("gpts", 1024, 1024, 256, "NN", 4), ("gpts", 256, 1024, 1024, "TN", 4),
    ("gpts", 1024, 768, 256, "NT", 4), ("gpts", 1024, 256, 768, "NN", 4),
    ("gpts", 768, 256, 1024, "TN", 4), ("gpts", 1024, 256, 256, "NT", 4),
    ("gpts", 1024, 256, 256, "NN", 4), ("gpts", 256, 256, 1024, "TN", 4),
    ("resnet50", 256, 128, 2304, "NN", 6), ("resnet50", 2304, 128, 256, "TN", 6),
    ("resnet50", 256, 2304, 128, "NT", 6), ("resnet50", 512, 32, 4608, "NN", 3),
    ("resnet50", 4608, 32, 512, "TN", 3), ("resnet50", 512, 4608, 32, "NT", 3),
    ("resnet50", 1024, 128, 256, "NN", 6), ("resnet50", 256, 128, 1024, "TN", 6),
    ("resnet50", 1024, 256, 128, "NT", 6), ("resnet50", 256, 128, 1024, "NN", 5),
    ("resnet50", 1024, 128, 256, "TN", 5), ("resnet50", 256, 1024, 128, "NT", 5),
    ("resnet50", 512, 128, 512, "NT", 4), ("resnet50", 256, 64, 256, "NT", 32),
    ("resnet50", 2048, 32, 512, "NN", 3), ("resnet50", 512, 32, 2048, "TN", 3),
    ("resnet50", 2048, 512, 32, "NT", 3), ("resnet50", 128, 512, 512, "NT", 3),
    ("resnet50", 64, 8192, 147, "NN", 1), ("resnet50", 147, 64, 8192, "NT", 1),
    ("gnmt", 1024, 32, 256, "NN", 80), ("gnmt", 256, 32, 1024, "TN", 80),
    ("gnmt", 1024, 256, 608, "NN", 4), ("gnmt", 1024, 640, 256, "NT", 3),
    ("gnmt", 640, 256, 1024, "TN", 3), ("gnmt", 1024, 256, 640, "NN", 3),
    ("gnmt", 1024, 640, 512, "NT", 1), ("gnmt", 640, 512, 1024, "TN", 1),
    ("gnmt", 1024, 512, 640, "NN", 1), ("gnmt", 640, 2000, 256, "NT", 1),
    ("gnmt", 640, 256, 2000, "NN", 1), ("gnmt", 2000, 256, 640, "TN", 1),
]

_ROW, _NOTRANS, _TRANS = 101, 111, 112
_LAYERS = {"intel": 0, "sequential": 1, "gnu": 3, "tbb": 4}


class MKL:
    """cblas_sgemm of libmkl_rt through ctypes."""

    def __init__(self, libdir, layer, threads):
        os.environ["MKL_THREADING_LAYER"] = layer.upper()
        if layer == "intel":
            ctypes.CDLL(os.path.join(libdir, "libiomp5.so"), mode=ctypes.RTLD_GLOBAL)
        if layer == "tbb":  # the tbb wheel's library, in the environment's lib/
            ctypes.CDLL(os.path.join(sys.prefix, "lib", "libtbb.so.12"), mode=ctypes.RTLD_GLOBAL)
        self.lib = ctypes.CDLL(os.path.join(libdir, "libmkl_rt.so.3"), mode=ctypes.RTLD_GLOBAL)
        self.lib.MKL_Set_Threading_Layer(_LAYERS[layer])
        self.lib.MKL_Set_Num_Threads(threads)
        f = self.lib.cblas_sgemm
        f.restype = None
        p, i = ctypes.c_void_p, ctypes.c_int
        f.argtypes = [i, i, i, i, i, i, ctypes.c_float, p, i, p, i, ctypes.c_float, p, i]
        self.f = f

    @staticmethod
    def _operand(a):
        if a.strides[1] == 4:
            return _NOTRANS, a.strides[0] // 4
        return _TRANS, a.strides[1] // 4

    def matmul(self, a, b, out):
        ta, lda = self._operand(a)
        tb, ldb = self._operand(b)
        m, k = a.shape
        self.f(_ROW, ta, tb, m, b.shape[1], k, 1.0, a.ctypes.data, lda, b.ctypes.data, ldb,
               0.0, out.ctypes.data, out.strides[0] // 4)
        return out


def mkl_parts(mkl):
    """MKL at one thread per part, the parts on OpenBLAS's threads (ember's range-kernel
    runner): rows of the result when it is taller than wide, else columns, in blocks of 16."""
    from ember import _blas_parts
    assert _blas_parts.on("split"), "OpenBLAS parts unavailable"

    def matmul(a, b, out):
        m, n = out.shape
        if m >= n:
            cut = 16 * (-(-m // 32))

            def part(lo, hi):
                r0, r1 = lo * cut, min(m, hi * cut)
                if r0 < r1:
                    mkl.matmul(a[r0:r1], b, out[r0:r1])
        else:
            cut = 16 * (-(-n // 32))

            def part(lo, hi):
                c0, c1 = lo * cut, min(n, hi * cut)
                if c0 < c1:
                    mkl.matmul(a, b[:, c0:c1], out[:, c0:c1])
        _blas_parts.run_ranges(part, 2)
        return out
    return matmul


def operands(m, n, k, lay, rng):
    a = rng.standard_normal((m, k) if lay[0] == "N" else (k, m)).astype(np.float32)
    b = rng.standard_normal((k, n) if lay[1] == "N" else (n, k)).astype(np.float32)
    return (a if lay[0] == "N" else a.T), (b if lay[1] == "N" else b.T)


def compare(fns, reps, cold):
    """{name: {workload: ms per step}} and the per-shape medians printed."""
    rng = np.random.default_rng(0)
    flush = np.zeros(4 << 20, np.float32)
    names = list(fns)
    print(f"{'work':>8} {'M':>5} {'N':>5} {'K':>5} {'lay':>3} {'calls':>5} "
          + " ".join(f"{n + ' ms':>11}" for n in names)
          + " " + " ".join(f"{names[0]}/{n:>5}" for n in names[1:]))
    totals = {n: {} for n in names}
    for work, m, n, k, lay, calls in SHAPES:
        a, b = operands(m, n, k, lay, rng)
        out = np.empty((m, n), np.float32)
        ref = a.astype(np.float64) @ b.astype(np.float64)
        times = {name: [] for name in names}
        for name in names:
            got = fns[name](a, b, out).copy()
            err = np.abs(got - ref).max() / np.abs(ref).max()
            assert err < 1e-5, (name, m, n, k, lay, err)
            fns[name](a, b, out)
        time.sleep(0.3)  # the reference's OpenBLAS worker stops spinning
        for r in range(reps):
            order = names if r % 2 == 0 else names[::-1]
            for name in order:
                if cold:
                    flush += 1.0
                t0 = time.perf_counter()
                fns[name](a, b, out)
                times[name].append(time.perf_counter() - t0)
        med = {name: statistics.median(times[name]) * 1e3 for name in names}
        for name in names:
            totals[name][work] = totals[name].get(work, 0.0) + med[name] * calls
        print(f"{work:>8} {m:>5} {n:>5} {k:>5} {lay:>3} {calls:>5} "
              + " ".join(f"{med[x]:>11.3f}" for x in names)
              + " " + " ".join(f"{med[names[0]] / med[x]:>{len(names[0]) + 6}.3f}"
                               for x in names[1:]))
    for work in totals[names[0]]:
        print(f"{work}: ms per step in these rows: "
              + ", ".join(f"{name} {totals[name][work]:.2f}" for name in names)
              + "; " + ", ".join(f"{names[0]}/{x} {totals[names[0]][work] / totals[x][work]:.3f}"
                                 for x in names[1:]))
    return totals


def spin(mkl, reps):
    """Time an OpenBLAS GEMM, a serial numba pass and a pass on OpenBLAS's threads right after
    a GEMM by OpenBLAS, by MKL, or a pause."""
    import numba

    from ember import _blas_parts
    from ember._kernel_threads import blas_threads_enter

    @numba.njit(nogil=True, cache=False)
    def scale(x, y, lo, hi):
        for i in range(lo, hi):
            y[i] = x[i] * 0.5 + np.tanh(x[i])

    rng = np.random.default_rng(0)
    a, b = operands(1024, 1024, 256, "NT", rng)
    out = np.empty((1024, 1024), np.float32)
    c, d = operands(1024, 256, 1024, "NN", rng)
    out2 = np.empty((1024, 256), np.float32)
    x = rng.standard_normal(1 << 20).astype(np.float32)
    y = np.empty_like(x)
    scale(x, y, 0, x.size)
    parts_on = _blas_parts.on("split")
    before = {
        "pause": lambda: time.sleep(0.3),
        "openblas": lambda: np.matmul(a, b, out=out),
        "mkl": lambda: mkl.matmul(a, b, out),
    }
    after = {
        "openblas gemm": lambda: np.matmul(c, d, out=out2),
        "numba serial": lambda: scale(x, y, 0, x.size),
    }
    if parts_on:
        after["numba parts"] = lambda: _blas_parts.run_ranges(
            lambda lo, hi: scale(x, y, lo, hi), x.size)
    blas_threads_enter(2)
    times = {(p, q): [] for p in before for q in after}
    keys = list(times)
    for r in range(reps):
        for p, q in (keys if r % 2 == 0 else keys[::-1]):
            time.sleep(0.25)  # every pool asleep before the pair
            before[p]()
            t0 = time.perf_counter()
            after[q]()
            times[(p, q)].append(time.perf_counter() - t0)
    print(f"ms (median of {reps}) of the second call after the first:")
    print(f"{'after':>10} " + " ".join(f"{q:>14}" for q in after))
    for p in before:
        print(f"{p:>10} " + " ".join(f"{statistics.median(times[(p, q)]) * 1e3:>14.3f}"
                                    for q in after))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--libs", default="numpy,mkl",
                    help="comma-separated of numpy, mkl, mklparts (MKL at one thread in two "
                         "parts on OpenBLAS's threads), torch: interleaved call by call")
    ap.add_argument("--mkl", metavar="LIBDIR", help="directory of libmkl_rt.so.3")
    ap.add_argument("--layer", default="intel", choices=sorted(_LAYERS))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--cold", action="store_true")
    ap.add_argument("--spin", action="store_true")
    ap.add_argument("--only", default="", help="workloads, comma-separated")
    args = ap.parse_args()
    if args.only:
        SHAPES[:] = [s for s in SHAPES if s[0] in args.only.split(",")]
    from ember._kernel_threads import blas_threads_enter
    blas_threads_enter(args.threads)
    libs = args.libs.split(",")
    fns = {}
    if "numpy" in libs:
        fns["numpy"] = lambda a, b, out: np.matmul(a, b, out=out)
    if "mkl" in libs or "mklparts" in libs or args.spin:
        mkl = MKL(args.mkl, args.layer, 1 if "mklparts" in libs else args.threads)
        print(f"MKL layer {args.layer}, threads {args.threads}; "
              f"KMP_BLOCKTIME={os.environ.get('KMP_BLOCKTIME', 'unset')}")
        if args.spin:
            spin(mkl, args.reps)
            return
        if "mkl" in libs:
            fns["mkl"] = mkl.matmul
        if "mklparts" in libs:
            fns["mklparts"] = mkl_parts(mkl)
    if "torch" in libs:
        import torch
        torch.set_num_threads(args.threads)
        print(f"torch {torch.__version__}, threads {torch.get_num_threads()}")

        def torch_mm(a, b, out):
            torch.mm(torch.from_numpy(a), torch.from_numpy(b), out=torch.from_numpy(out))
            return out
        fns["torch"] = torch_mm
    print(f"numpy {np.__version__}, OpenBLAS threads {args.threads}, cold={args.cold}, "
          f"libs {','.join(fns)}")
    compare(fns, args.reps, args.cold)


if __name__ == "__main__":
    main()
