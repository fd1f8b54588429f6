"""GPT-S's forward products (MKL's two halves) timed call by call inside real training steps.

    python benchmarks/fwd_in_step.py [--steps 20]

For every `_mkl.matmul` call of a step: the call's wall time, when each half started and ended
(caller's and OpenBLAS worker's: its sgemm, then its bias), all from perf_counter on the thread
that ran it; layer norm's kernel calls too. Modes: the plain step; the step with both cores'
caches flushed (each thread writes 8 MB of its own) right before each forward product; with
each product's operands read and its output written, before the call, on the threads that then
use them (touch); with each product and layer-norm kernel run a second time right after the
first (repeat: the "again" rows, operands in cache); one step's own operands replayed warm; the
same shapes on fresh arrays, warm (repeated), after the same flush, and rotating through 400 MB
of operand sets (out of cache) with 4 KB and with huge pages. Prints medians per shape.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from collections import defaultdict

import numba
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import ember  # noqa: E402
from ember import _blas_parts, _mkl  # noqa: E402
from examples.models.table1 import WORKLOADS, train_step  # noqa: E402

_now = time.perf_counter
_FLUSH = [np.ones(2 << 20, np.float32) for _ in range(2)]  # 8 MB each


@numba.njit(nogil=True, cache=True)
def _touch(a):
    for i in range(a.size):
        a[i] += 1.0


def huge(shape):
    """A float32 array of huge pages (mmap, MADV_HUGEPAGE; THP in madvise mode)."""
    import mmap
    n = int(np.prod(shape)) * 4
    m = mmap.mmap(-1, -(-n // (2 << 20)) * (2 << 20), flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    m.madvise(mmap.MADV_HUGEPAGE)
    a = np.frombuffer(m, np.float32, count=n // 4).reshape(shape)
    a[...] = 1
    return a


def flush():
    _blas_parts.run_ranges(lambda lo, hi: [_touch(_FLUSH[i]) for i in range(lo, hi)], 2)


@numba.njit(nogil=True, cache=True)
def _read(a):
    total = 0.0
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            total += a[i, j]
    return total


@numba.njit(nogil=True, cache=True)
def _zero(a):
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            a[i, j] = 0.0


def touch(a, b, out):
    """Each thread reads its half of a's rows and all of b, and writes its half of out."""
    bt = b if b.flags.c_contiguous else b.T
    half = 16 * -(-a.shape[0] // 32)

    def part(lo, hi):
        rows = slice(lo * half, min(a.shape[0], hi * half))
        _read(a[rows])
        _read(bt)
        _zero(out[rows])

    _blas_parts.run_ranges(part, 2)


rec = {"on": False, "flush": False, "calls": [], "mode": ""}
_orig_matmul, _orig_call, _orig_bias = _mkl.matmul, _mkl._call, _mkl.add_bias
_main = threading.get_ident()


def matmul(a, b, out=None, bias=None):
    if not rec["on"]:
        return _orig_matmul(a, b, out, bias)
    mode = rec["mode"]
    key = (a.shape[0], a.shape[1], b.shape[1], bias is not None)
    if mode.endswith("flush"):
        flush()
    if mode.endswith("touch") and out is not None:
        touch(a, b, out)
    if mode.endswith("capture") and out is not None:
        rec["captured"].append((a, b, out, bias))
    ev = []
    rec["cur"] = ev
    t0 = _now()
    r = _orig_matmul(a, b, out, bias)
    t1 = _now()
    rec["calls"].append((key, t0, t1, ev))
    if mode.endswith("repeat"):
        ev = []
        rec["cur"] = ev
        t0 = _now()
        _orig_matmul(a, b, r, None)
        rec["calls"].append((key[:3] + ("again",), t0, _now(), ev))
    rec["cur"] = None
    return r


def _call(a, b, out):
    t0 = _now()
    _orig_call(a, b, out)
    ev = rec.get("cur")
    if ev is not None:
        ev.append(("gemm", threading.get_ident() == _main, t0, _now()))


def add_bias(y, bias):
    t0 = _now()
    r = _orig_bias(y, bias)
    ev = rec.get("cur")
    if ev is not None:
        ev.append(("bias", threading.get_ident() == _main, t0, _now()))
    return r


_mkl.matmul, _mkl._call, _mkl.add_bias = matmul, _call, add_bias

# layer norm's kernels (forward and backward), timed the same way: the call, and in the
# "repeat" mode the same call again right after it (operands now in cache)
from ember.ops._kernels import norm as _knorm  # noqa: E402

_ln = defaultdict(list)


def _timed_twice(name, fn):
    def wrapper(*args):
        if not rec["on"]:
            return fn(*args)
        t0 = _now()
        r = fn(*args)
        _ln[(name, "call")].append(_now() - t0)
        if rec["mode"].endswith("repeat"):
            t0 = _now()
            fn(*args)
            _ln[(name, "again")].append(_now() - t0)
        return r
    return wrapper


_knorm.layernorm_forward = _timed_twice("layer norm fwd", _knorm.layernorm_forward)
_knorm.layernorm_backward = _timed_twice("layer norm bwd", _knorm.layernorm_backward)
ember._backend._mkl.matmul = matmul  # (gemm reads _mkl.matmul at each call: same module)


def summarize(label, calls):
    by = defaultdict(list)
    for key, t0, t1, ev in calls:
        by[key].append((t0, t1, ev))
    print(f"-- {label}")
    print("   shape (m,k,n,bias)     n  call_ms  GF/s | main: start gemm bias | worker: start "
          "gemm bias | tail_ms")
    for key, rows in sorted(by.items(), key=lambda kv: str(kv[0])):
        m, k, n, _ = key
        call, cols = [], defaultdict(list)
        for t0, t1, ev in rows:
            call.append(t1 - t0)
            ends = []
            for who in (True, False):
                g = [e for e in ev if e[0] == "gemm" and e[1] == who]
                bb = [e for e in ev if e[0] == "bias" and e[1] == who]
                if g:
                    cols[(who, "start")].append(g[0][2] - t0)
                    cols[(who, "gemm")].append(g[0][3] - g[0][2])
                    ends.append(g[0][3])
                if bb:
                    cols[(who, "bias")].append(bb[0][3] - bb[0][2])
                    ends.append(bb[0][3])
            if ends:
                cols["tail"].append(t1 - max(ends))
        med = lambda v: statistics.median(v) * 1e3 if v else float("nan")  # noqa: E731
        c = med(call)
        print(f"   {str(key):22} {len(rows):4d} {c:7.3f} {2 * m * k * n / c / 1e6:5.0f} | "
              f"{med(cols[(True, 'start')]):.3f} {med(cols[(True, 'gemm')]):.3f} "
              f"{med(cols[(True, 'bias')]):.3f} | {med(cols[(False, 'start')]):.3f} "
              f"{med(cols[(False, 'gemm')]):.3f} {med(cols[(False, 'bias')]):.3f} | "
              f"{med(cols['tail']):.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    model, opt, batches, loss_fn, _ = WORKLOADS["gpts"](ember)

    def step(i):
        train_step(model, opt, loss_fn, batches[i % len(batches)])

    for i in range(4):
        step(i)
    flush()
    rec["captured"] = []
    for mode in ("step", "step+flush", "step+touch", "step+repeat", "step+capture"):
        rec["calls"], rec["mode"], rec["on"] = [], mode, True
        times = []
        for i in range(args.steps):
            time.sleep(0.05)
            t0 = _now()
            step(i)
            times.append(_now() - t0)
        rec["on"] = False
        if mode == "step+capture":
            rec["captured"] = rec["captured"][-18:]  # the last step's
            break
        calls = rec["calls"]
        print(f"{mode}: step median {statistics.median(times) * 1e3:.1f} ms")
        summarize(mode, calls)
        for (name, kind), v in sorted(_ln.items()):
            print(f"   {name} ({kind}): {len(v)} calls, median {statistics.median(v) * 1e3:.3f} ms")
        _ln.clear()
    # the last step's own calls again, each repeated (warm)
    rec["calls"], rec["mode"], rec["on"] = [], "replay", True
    for a, b, out, bias in rec.pop("captured"):
        for _ in range(args.reps // 4):
            ember._backend.gemm(a, b, out=out, bias=bias)
    rec["on"] = False
    summarize("replay of a step's operands, warm", rec["calls"])
    # the same products isolated on arrays shaped as the step's
    rng = np.random.default_rng(0)
    shapes = sorted({c[0] for c in calls}, key=str)
    for mode in ("isolated warm", "isolated+flush", "isolated rotating 400 MB",
                 "isolated rotating 400 MB huge pages"):
        rec["calls"], rec["mode"], rec["on"] = [], mode, True
        for m, k, n, has_bias in shapes:
            if has_bias == "again":
                continue
            sets = max(1, (400 << 20) // (4 * (m * k + k * n + m * n))) if "rot" in mode else 1
            new = huge if "huge" in mode else (lambda shape: np.ones(shape, np.float32))
            a = [new((m, k)) for _ in range(sets)]
            w = [new((n, k)) for _ in range(sets)]
            for x in a + w:
                x[...] = rng.standard_normal(x.shape, np.float32)
            for x in w:
                x *= 0.02
            bias = rng.standard_normal(n, np.float32) if has_bias else None
            out = [new((m, n)) for _ in range(sets)]
            for i in range(max(args.reps, sets if sets > 1 else 0)):
                j = i % sets
                ember._backend.gemm(a[j], w[j].T, out=out[j], bias=bias)
            del a, w, out
        rec["on"] = False
        summarize(mode, rec["calls"])


if __name__ == "__main__":
    main()
