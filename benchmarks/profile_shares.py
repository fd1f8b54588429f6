"""Where ember's training step time goes (`table1.py --shares`, `small_batch.py --shares`).

Per workload, in a fresh process that imports only ember: warm-up steps, then steps timed plainly
(the step time), then the same number of steps with NumPy's and numba's entry points wrapped by
timers (NOTE [Time shares]). Reported: the share of the instrumented step in BLAS/GEMM, numba
kernels, NumPy and Python, and the % of the machine's GEMM peak the plain step reaches: the
reference GFLOP per step (SPEC.md's table, beside the models as GFLOP) over the step time, over
the best float32 GEMM rate of NumPy on all cores measured in the same run (NOTE [GEMM peak]).
"""
from __future__ import annotations

import json
import math
import statistics
import sys
import threading
import time

import numpy as np

# NOTE [Time shares]
# No profiler hook: a tracing profiler (cProfile, sys.setprofile) does not see NumPy ufuncs or
# numba dispatchers as calls, and its per-call cost lands in the Python share it is meant to
# measure. Instead, for the instrumented steps only, the entry points are replaced by wrappers
# that add the wall time of the call to a bucket:
#   BLAS/GEMM : np.matmul, np.dot, np.einsum, np.tensordot, np.inner, np.vdot (ember's GEMM
#               helpers, conv and linear all go through these);
#   numba     : every numba dispatcher that is an attribute of an ember module or a value of
#               a module-level dict (the kernels and tables of them, e.g. pointwise's
#               _ROW_KERNELS; called from Python, so the wrapper sees each launch);
#   NumPy     : every other ufunc (and its .reduce/.at/... methods) and function of the numpy
#               namespace (np.exp, np.add(..., out=), np.sum, np.copyto, np.empty, ...);
#   Python    : the rest of the step: the interpreter running ember's and the model's code
#               (dispatch, autograd bookkeeping, modules), PLUS NumPy work reached without a
#               call through the numpy namespace: array operators (a + b, a @ b), array methods
#               (a.sum(), a.reshape()), and functions bound to another name before wrapping.
#   ... and ember's own GEMM entry points that do not go through NumPy (MKL_ENTRIES): MKL's
#               sgemm is a ctypes call (NOTE [MKL's sgemm] in ember/_mkl.py), and Linear's two
#               gradients at once put one product on OpenBLAS's worker, which the main thread
#               waits for (NOTE [Linear's two gradients at once]): both were Python time
#               before (the twenty-third session's GPT-S "rest" of 116.9 of 119.0 ms).
# Only the outermost wrapped call counts (np.tensordot -> np.dot is BLAS once; a NumPy function
# calling a ufunc is NumPy once), and only calls made on the main thread. So the NumPy share is
# a lower bound and the Python share an upper bound. The wrappers cost ~0.5 us a call: the
# instrumented step time is printed beside the plain one so that their cost can be judged.
# Besides its time, each product whose shape is known (np.matmul, np.dot, the MKL entries and
# the Linear pair) adds its 2 m n k floating-point operations: GFLOP/s over those calls' time is
# the GEMMs' rate inside the step (einsum and tensordot count as time only).
BLAS = ("matmul", "dot", "einsum", "tensordot", "inner", "vdot")
UFUNC_METHODS = ("reduce", "accumulate", "reduceat", "outer", "at")


class _Clock:
    def __init__(self):
        self.buckets = {"blas": 0.0, "numba": 0.0, "numpy": 0.0}
        self.inside = False
        self.main = threading.get_ident()
        self.calls = 0
        self.by_name = {}
        self.gemm_flop = 0.0  # of the products whose shape is known, and their seconds
        self.gemm_s = 0.0


def _matmul_flop(a, b, *args, **kwargs):
    """2 m n k times the batch of np.matmul(a, b) (np.dot's 1-D and 2-D cases too); None when
    the operands are not arrays that multiply."""
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)) or 0 in (a.ndim, b.ndim):
        return None
    m = a.shape[-2] if a.ndim > 1 else 1
    n = b.shape[-1] if b.ndim > 1 else 1
    try:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        return None
    return 2.0 * math.prod(batch) * m * n * a.shape[-1]


def _pair_flop(g2, x, w, need, *args, **kwargs):
    """Linear's backward pair: G W and G^T X, each 2 rows n_out n_in."""
    return 4.0 * g2.shape[0] * w.shape[0] * w.shape[1]


def _small_linear_flop(f, x, w, *args):
    """A small Linear's forward on MKL (NOTE [A small Linear on MKL]): 2 rows n_out n_in."""
    return 2.0 * x.shape[0] * w.shape[0] * w.shape[1]


def _small_linear_backward_flop(f, g, x, w, dx, dw, db, need_x, need_w, need_b):
    """... and its backward: the same per gradient product asked for."""
    return 2.0 * g.shape[0] * w.shape[0] * w.shape[1] * (bool(need_x) + bool(need_w))


# (module, function, its operation count) of ember's GEMMs that NumPy does not see; each is
# called through its module's attribute, so replacing the attribute times every call (the
# small Linear's kernels are numba functions that call MKL's sgemm: BLAS time, not numba's)
MKL_ENTRIES = (("ember._mkl", "matmul", _matmul_flop),
               ("ember._mkl", "matmul_one_thread", _matmul_flop),
               ("ember.ops.nn.linear", "_backward_pair", _pair_flop),
               ("ember.ops._kernels.small_linear", "linear_forward", _small_linear_flop),
               ("ember.ops._kernels.small_linear", "linear_backward",
                _small_linear_backward_flop))
_ENTRY_NAMES = {(modname, name) for modname, name, _ in MKL_ENTRIES}


def _timer(clock, bucket, fn, name=None, flop=None):
    key = f"{bucket}:{name or getattr(fn, '__name__', '?')}"

    def timed(*args, **kwargs):
        if clock.inside or threading.get_ident() != clock.main:
            return fn(*args, **kwargs)
        clock.inside = True
        clock.calls += 1
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            dt = time.perf_counter() - t0
            clock.buckets[bucket] += dt
            clock.by_name[key] = clock.by_name.get(key, 0.0) + dt
            clock.inside = False
            count = flop(*args, **kwargs) if flop is not None else None
            if count:
                clock.gemm_flop += count
                clock.gemm_s += dt

    timed.__wrapped_for_shares__ = fn
    return timed


class _TimedUfunc:
    """A ufunc whose calls and reduce/at/... methods are timed into one bucket."""

    def __init__(self, clock, bucket, ufunc):
        self._ufunc = ufunc
        self._call = _timer(clock, bucket, ufunc)
        self._methods = {m: _timer(clock, bucket, getattr(ufunc, m), f"{ufunc.__name__}.{m}")
                         for m in UFUNC_METHODS}

    def __call__(self, *args, **kwargs):
        return self._call(*args, **kwargs)

    def __getattr__(self, name):
        if name in self._methods:
            return self._methods[name]
        return getattr(self._ufunc, name)


def _patches(clock):
    """[(namespace, name, replacement)] for every wrapped entry point."""
    import inspect

    from numba.core.registry import CPUDispatcher
    out = []
    for name, obj in list(vars(np).items()):
        if name.startswith("_") or inspect.isclass(obj) or inspect.ismodule(obj):
            continue
        bucket = "blas" if name in BLAS else "numpy"
        if isinstance(obj, np.ufunc):
            out.append((np, name, _TimedUfunc(clock, bucket, obj)))
        elif inspect.isfunction(obj) or inspect.isbuiltin(obj) or callable(obj):
            flop = _matmul_flop if name in ("matmul", "dot") else None
            out.append((np, name, _timer(clock, bucket, obj, flop=flop)))
    for modname, name, flop in MKL_ENTRIES:
        mod = sys.modules.get(modname)
        if mod is not None and hasattr(mod, name):
            out.append((mod, name, _timer(clock, "blas", getattr(mod, name),
                                          f"{modname.rsplit('.', 1)[-1]}.{name}", flop)))
    from ember._onepool import Twin
    wrapped = {}

    def wrap(ns, name, obj, bucket):
        if id(obj) not in wrapped:
            wrapped[id(obj)] = _timer(clock, bucket, obj, getattr(obj, "__name__", name))
        out.append((ns, name, wrapped[id(obj)]))

    for modname, mod in list(sys.modules.items()):
        if not (modname == "ember" or modname.startswith("ember.")) or mod is None:
            continue
        for name, obj in list(vars(mod).items()):
            if isinstance(obj, dict):  # a table of kernels looked up per call
                for key, value in list(obj.items()):
                    if isinstance(value, CPUDispatcher):
                        wrap(obj, key, value, "numba")
            elif isinstance(obj, CPUDispatcher) and (modname, name) not in _ENTRY_NAMES:
                # the one pool's GEMM loop is BLAS work (NOTE [One pool])
                wrap(mod, name, obj, "blas" if name == "_k_gemm_blocks" else "numba")
            elif isinstance(obj, Twin):  # both compiled versions of a twin kernel
                wrap(obj, "serial", obj.serial, "numba")
                wrap(obj, "parallel", obj.parallel, "numba")
    return out


def _get(ns, name):
    return ns[name] if isinstance(ns, dict) else getattr(ns, name)


def _set(ns, name, value):
    """A patch's place: a module's or twin's attribute, or an entry of a module-level table."""
    if isinstance(ns, dict):
        ns[name] = value
    else:
        setattr(ns, name, value)


def instrumented(step, n):
    """Run `step` n times with the entry points wrapped; (seconds per step, {bucket: seconds
    per step} including 'python', wrapped calls per step, {name: seconds per step} of the
    costliest wrapped functions, {'flop', 's'} per step of the products of known shape)."""
    clock = _Clock()
    patches = _patches(clock)
    saved = [(ns, name, _get(ns, name)) for ns, name, _ in patches]
    for ns, name, new in patches:
        _set(ns, name, new)
    try:
        t0 = time.perf_counter()
        for _ in range(n):
            step()
        total = (time.perf_counter() - t0) / n
    finally:
        for ns, name, old in saved:
            _set(ns, name, old)
    per = {k: v / n for k, v in clock.buckets.items()}
    per["python"] = max(total - sum(per.values()), 0.0)
    top = sorted(clock.by_name.items(), key=lambda kv: -kv[1])[:12]
    gemm = {"flop": clock.gemm_flop / n, "s": clock.gemm_s / n}
    return total, per, clock.calls / n, {k: v / n for k, v in top}, gemm


def shares_from(per_step):
    """{bucket: fraction of the instrumented step} from {bucket: seconds per step}."""
    total = sum(per_step.values())
    return {k: (v / total if total else float("nan")) for k, v in per_step.items()}


def percent_of_peak(gflop_per_step, step_s, peak_gflops):
    """% of the GEMM peak: reference GFLOP per step / step seconds / peak GFLOP/s * 100."""
    if gflop_per_step is None or not step_s or not peak_gflops:
        return float("nan")
    return 100.0 * gflop_per_step / step_s / peak_gflops


# NOTE [GEMM peak]
# The machine's GEMM peak is what NumPy's BLAS reaches on all cores for a large square float32
# product (2048^3, 17.2 GFLOP), the best of several, measured in the same run as the steps (the
# shared vCPUs' speed moves over minutes: NOTE [Quiet cores] in table1.py). It is a practical
# peak, not the chip's theoretical FMA rate: a step's GEMMs are smaller and cannot do better.
def gemm_peak(n=2048, reps=5):
    """Best float32 GEMM GFLOP/s of NumPy on all cores (NOTE [GEMM peak])."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    out = np.empty((n, n), np.float32)
    np.matmul(a, b, out=out)
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        np.matmul(a, b, out=out)
        best = min(best, time.perf_counter() - t0)
    return 2 * n ** 3 / best / 1e9


def shares_child(suite, name, args, make, step_fn, import_lib):
    """In a child that imports only ember: plain and instrumented steps of one workload."""
    ember = import_lib("ember")
    warmup, _, chunk = suite.counts(name, None, args.warmup, args.quick)
    n = max(args.steps or 5, 1) * chunk
    model, opt, batches, loss_fn, items = make(suite, ember, name)
    step = step_fn(model, opt, batches, loss_fn)
    for _ in range(max(warmup, 2)):  # numba compiles before any wrapper is in place
        step()
    plain = []
    for _ in range(n):
        t0 = time.perf_counter()
        step()
        plain.append(time.perf_counter() - t0)
    total, per, calls, top, gemm = instrumented(step, n)
    return {"workload": name, "step_s": statistics.median(plain), "instrumented_s": total,
            "per_step_s": per, "calls_per_step": calls, "items": items, "top_s": top,
            "gemm": gemm, "has_torch": "torch" in sys.modules}


def run_shares(suite, names, args, run_child):
    """Print the markdown table of time shares and % of GEMM peak for `names`."""
    gflop = getattr(__import__(suite.module, fromlist=["GFLOP"]), "GFLOP", {})
    peak = gemm_peak()
    print(f"{suite.title}: where ember's step time goes (NOTE [Time shares] in "
          f"benchmarks/profile_shares.py); GEMM peak {peak:.0f} GFLOP/s (NumPy float32 "
          f"2048^3, all cores, NOTE [GEMM peak])\n")
    print("| workload | step ms | instrumented ms | BLAS/GEMM | numba | NumPy | Python "
          "| GFLOP/step | GFLOP/s | % of GEMM peak | GEMMs' GFLOP/s in the step |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    results = {}
    for name in names:
        cmd = ["--_shares", name]
        cmd += ["--steps", str(args.steps)] if args.steps is not None else []
        cmd += ["--warmup", str(args.warmup)] if args.warmup is not None else []
        cmd += ["--quick"] if args.quick else []
        r = run_child(suite, cmd, f"{name} (shares)")
        sh = shares_from(r["per_step_s"])
        g = gflop.get(name)
        rate = g / r["step_s"] if g is not None else float("nan")
        r.update(shares=sh, gflop=g, percent_of_peak=percent_of_peak(g, r["step_s"], peak))
        results[name] = r
        gtxt = "n/a" if g is None else f"{g:.3f}"
        gemm = r["gemm"]
        in_step = gemm["flop"] / gemm["s"] / 1e9 if gemm["s"] else float("nan")
        print(f"| {name} | {r['step_s'] * 1e3:.1f} | {r['instrumented_s'] * 1e3:.1f} "
              f"| {sh['blas']:.0%} | {sh['numba']:.0%} | {sh['numpy']:.0%} "
              f"| {sh['python']:.0%} | {gtxt} | {rate:.1f} "
              f"| {r['percent_of_peak']:.1f}% | {in_step:.0f} |", flush=True)
    peak_after = gemm_peak()
    print(f"\nGEMM peak before/after the workloads: {peak:.0f}/{peak_after:.0f} GFLOP/s (% of "
          f"peak uses the one before; a big difference means the machine was busy)")
    if getattr(args, "against", None):
        print_bounds(results, peak, torch_medians(args.against))
    if getattr(args, "verbose", False):
        for name, r in results.items():
            top = ", ".join(f"{k} {v * 1e3:.2f}" for k, v in r["top_s"].items())
            print(f"{name}: {r['calls_per_step']:.0f} wrapped calls/step; top ms/step: {top}")
    return {"peak_gflops": peak, "peak_after_gflops": peak_after, "workloads": results}


def torch_medians(path):
    """{workload: torch's median step seconds} over every run of a `table1.py --json` file."""
    with open(path) as f:
        runs = json.load(f)["runs"]
    out = {}
    for name in runs[0]:
        steps = [r[name]["per_process"]["torch"]["median_s"] for r in runs if name in r]
        out[name] = statistics.median(steps)
    return out


# NOTE [How far the GEMMs allow]
# A workload whose step is mostly GEMM can only beat torch by as much as its GEMMs and the rest
# allow. With G the step's reference GFLOP (SPEC's count) and P the GEMM peak of the same run
# (NOTE [GEMM peak]), G / P is the least time its GEMMs can take. Keeping the rest of ember's
# step as measured (the step less its BLAS share) and running the GEMMs at P gives the best
# ratio reachable by faster GEMMs alone; torch's step / 1.2 - G / P is what the rest may take
# for 1.2x if the GEMMs ran at P. Algorithms that do fewer multiplications than the reference
# count (Winograd) can go below G / P, so for convolutions this is a bound on GEMM-bound
# algorithms, not on every algorithm. torch's step comes from a separate `table1.py --json`
# run (one library per process), ember's from this run: the two are minutes apart.
def print_bounds(results, peak, torch_s):
    """The table of NOTE [How far the GEMMs allow] for the workloads with a torch figure."""
    print("\n| workload | torch step ms | ember step ms | ember rest ms | GEMMs at peak ms "
          "| ratio now | ratio with GEMMs at peak | rest allowed for 1.2x ms |")
    print("|---|---|---|---|---|---|---|---|")
    for name, r in results.items():
        if name not in torch_s or r["gflop"] is None:
            continue
        t, e = torch_s[name] * 1e3, r["step_s"] * 1e3
        rest = e * (1.0 - r["shares"]["blas"])
        at_peak = r["gflop"] / peak * 1e3
        print(f"| {name} | {t:.1f} | {e:.1f} | {rest:.1f} | {at_peak:.1f} | {t / e:.2f} "
              f"| {t / (rest + at_peak):.2f} | {t / 1.2 - at_peak:.1f} |")
