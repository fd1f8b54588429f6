"""Hogwild: several processes train one shared model without locks.

Run: python examples/hogwild.py [--procs 2] [--steps 300] [--start-method fork]

The model's parameters are moved to shared memory (``model.share_memory()``); every process
gets the same model (through ``ember.multiprocessing.Process`` arguments, so the parameters
travel as shared-memory handles) and runs plain SGD on its own minibatches. Updates from all
processes land in the same memory, unsynchronised (Recht et al., 2011). Gradients stay per
process. The final loss is compared with one process doing the same total number of updates.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import ember
import ember.multiprocessing as mp
from ember import nn
from ember.nn import functional as F

IN_FEATURES, HIDDEN = 8, 32


def make_data(n=2048, seed=0):
    """A smooth synthetic regression task: y = sin(x @ a) + 0.5 * (x @ b) + small noise."""
    g = ember.Generator().manual_seed(seed)
    x = ember.randn(n, IN_FEATURES, generator=g)
    a = ember.randn(IN_FEATURES, 1, generator=g) / IN_FEATURES ** 0.5
    b = ember.randn(IN_FEATURES, 1, generator=g) / IN_FEATURES ** 0.5
    y = ember.sin(x @ a) + 0.5 * (x @ b) + 0.01 * ember.randn(n, 1, generator=g)
    return x, y


def make_model(seed=0):
    ember.manual_seed(seed)
    return nn.Sequential(nn.Linear(IN_FEATURES, HIDDEN), nn.Tanh(), nn.Linear(HIDDEN, 1))


def train(rank, model, x, y, steps, lr=0.05, batch_size=32):
    """SGD on random minibatches; ``model``'s parameters may be shared with other processes."""
    g = ember.Generator().manual_seed(1000 + rank)
    opt = ember.optim.SGD(model.parameters(), lr=lr)
    for _ in range(steps):
        idx = ember.randint(0, x.shape[0], (batch_size,), generator=g)
        loss = F.mse_loss(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()  # in place on the shared parameters: no lock (Hogwild)


def evaluate(model, x, y):
    with ember.no_grad():
        return F.mse_loss(model(x), y).item()


def hogwild(procs, steps, start_method="fork", seed=0):
    """Train with ``procs`` processes x ``steps`` steps each; returns (initial, final) loss."""
    x, y = make_data(seed=seed)
    model = make_model(seed)
    initial = evaluate(model, x, y)
    model.share_memory()
    ctx = mp.get_context(start_method)
    workers = [ctx.Process(target=train, args=(rank, model, x, y, steps))
               for rank in range(procs)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    failed = [w.exitcode for w in workers if w.exitcode != 0]
    if failed:
        raise RuntimeError(f"hogwild: training processes failed with exit codes {failed}")
    return initial, evaluate(model, x, y)


def single_process(total_steps, seed=0):
    x, y = make_data(seed=seed)
    model = make_model(seed)
    train(0, model, x, y, total_steps)
    return evaluate(model, x, y)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--procs", type=int, default=2)
    p.add_argument("--steps", type=int, default=300, help="SGD steps per process")
    p.add_argument("--start-method", default="fork", choices=["fork", "spawn", "forkserver"])
    args = p.parse_args()
    start = time.perf_counter()
    initial, final = hogwild(args.procs, args.steps, args.start_method)
    elapsed = time.perf_counter() - start
    start = time.perf_counter()
    single = single_process(args.procs * args.steps)
    single_elapsed = time.perf_counter() - start
    print(f"initial MSE {initial:.4f}")
    print(f"hogwild, {args.procs} processes x {args.steps} steps: MSE {final:.4f} "
          f"({elapsed:.1f} s)")
    print(f"1 process x {args.procs * args.steps} steps:        MSE {single:.4f} "
          f"({single_elapsed:.1f} s)")


if __name__ == "__main__":
    main()
