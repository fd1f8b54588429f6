"""Per-op overhead on tiny tensors: ember vs NumPy vs PyTorch, measured in the same run.

    python benchmarks/overhead.py [--repeat 7] [--number 2000] [--grad-mode-read] [--cpu-time]

Prints microseconds per call (median of ``repeat`` runs of ``number`` calls, the frameworks
interleaved run by run so that machine drift hits all of them) and the ratio ember / PyTorch.
Targets (issue 21): within 1.5x of PyTorch with and without grad.
``--cpu-time`` times with the thread's CPU clock instead of the wall clock: on a busy machine
the time other processes hold the core is then not counted (the ratio is far steadier; cache
and frequency effects of the other load still are).
``--grad-mode-read`` also times one read of the per-thread grad mode against a read of a plain
object's attribute (NOTE [Per-thread autograd state] in ember/autograd/grad_mode.py).
"""
from __future__ import annotations

import argparse
import statistics
import time
import timeit

import numpy as np

import ember

try:
    import torch
except ImportError:  # the comparison column is left empty
    torch = None


def cases():
    a_np, b_np = np.random.rand(4, 4).astype(np.float32), np.random.rand(4, 4).astype(np.float32)
    e_a, e_b = ember.from_numpy(a_np.copy()), ember.from_numpy(b_np.copy())
    e_ga = ember.from_numpy(a_np.copy()).requires_grad_()
    e_gb = ember.from_numpy(b_np.copy()).requires_grad_()
    out = {}
    out["add"] = (lambda: e_a + e_b, lambda: a_np + b_np)
    out["mul"] = (lambda: e_a * e_b, lambda: a_np * b_np)
    out["matmul 4x4"] = (lambda: e_a @ e_b, lambda: a_np @ b_np)
    out["sum"] = (lambda: e_a.sum(), lambda: a_np.sum())

    def e_fb(op):
        def f():
            op(e_ga, e_gb).sum().backward()
        return f

    out["add fwd+bwd"] = (e_fb(lambda x, y: x + y), None)
    out["mul fwd+bwd"] = (e_fb(lambda x, y: x * y), None)
    out["matmul fwd+bwd"] = (e_fb(lambda x, y: x @ y), None)
    out["sum fwd+bwd"] = (lambda: e_ga.sum().backward(), None)
    if torch is not None:
        t_a, t_b = torch.from_numpy(a_np.copy()), torch.from_numpy(b_np.copy())
        t_ga, t_gb = t_a.clone().requires_grad_(), t_b.clone().requires_grad_()
        tor = {
            "add": lambda: t_a + t_b, "mul": lambda: t_a * t_b,
            "matmul 4x4": lambda: t_a @ t_b, "sum": lambda: t_a.sum(),
            "add fwd+bwd": lambda: (t_ga + t_gb).sum().backward(),
            "mul fwd+bwd": lambda: (t_ga * t_gb).sum().backward(),
            "matmul fwd+bwd": lambda: (t_ga @ t_gb).sum().backward(),
            "sum fwd+bwd": lambda: t_ga.sum().backward(),
        }
    else:
        tor = {}
    return {k: (e, n, tor.get(k)) for k, (e, n) in out.items()}


def grad_mode_read(repeat):
    """ns per read: the per-thread grad mode vs a plain object's attribute, interleaved."""
    from ember.autograd.grad_mode import _state

    class Plain:
        enabled = True

    plain = Plain()
    number = 200_000
    res = {"per-thread": [], "plain": []}
    for _ in range(repeat):
        res["per-thread"].append(timeit.timeit(lambda: _state.enabled, number=number))
        res["plain"].append(timeit.timeit(lambda: plain.enabled, number=number))
    for k, v in res.items():
        print(f"grad-mode read, {k:<11}{statistics.median(v) / number * 1e9:>8.1f} ns "
              "(a lambda call included)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--number", type=int, default=2000)
    ap.add_argument("--grad-mode-read", action="store_true")
    ap.add_argument("--cpu-time", action="store_true")
    args = ap.parse_args()
    timer = time.thread_time if args.cpu_time else time.perf_counter
    if args.grad_mode_read:
        grad_mode_read(args.repeat)
    if torch is not None:
        torch.set_num_threads(2)
    print(f"{'op':<16}{'ember us':>10}{'numpy us':>10}{'torch us':>10}{'ember/torch':>13}")
    for name, (e, n, t) in cases().items():
        res = {"e": [], "n": [], "t": []}
        for _ in range(args.repeat):  # interleave the frameworks run by run
            for key, fn in (("e", e), ("n", n), ("t", t)):
                if fn is not None:
                    secs = timeit.Timer(fn, timer=timer).timeit(number=args.number)
                    res[key].append(secs / args.number * 1e6)
        med = {k: statistics.median(v) if v else float("nan") for k, v in res.items()}
        ratio = med["e"] / med["t"] if res["t"] else float("nan")
        print(f"{name:<16}{med['e']:>10.2f}{med['n']:>10.2f}{med['t']:>10.2f}{ratio:>13.2f}")


if __name__ == "__main__":
    main()
