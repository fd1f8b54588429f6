"""Per-sample gradients of a 3-layer MLP, batch 64: a Python loop in ember, ember.func.vmap, and
torch.func.vmap, measured side by side in one run (issue 17's vmap target).

    python benchmarks/func.py [--repeats 20]

Prints the median milliseconds per batch of each and the ratios. ember's vmap runs the model
once on batched tensors (NOTE [vmap batching] in ember/func/_batched.py): one forward and one
backward over the whole batch, with per-sample weight gradients from one batched product per
layer. Targets: >= 5x faster than the loop, <= 2x torch.func's time.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def _setup(lib):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(32, 64), lib.nn.ReLU(), lib.nn.Linear(64, 64),
                              lib.nn.ReLU(), lib.nn.Linear(64, 10))
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal((64, 32)).astype(np.float32))
    y = lib.tensor(rng.integers(0, 10, 64))
    params = {k: v.detach() for k, v in model.named_parameters()}
    return model, params, x, y


def _vmapped(lib):
    model, params, x, y = _setup(lib)

    def loss(p, xb, yb):
        out = lib.func.functional_call(model, p, (xb.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(out, yb.unsqueeze(0))

    per_sample = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))
    return lambda: per_sample(params, x, y)


def _loop(lib):
    model, _, x, y = _setup(lib)

    def run():
        grads = []
        for i in range(x.shape[0]):
            model.zero_grad()
            lib.nn.functional.cross_entropy(model(x[i:i + 1]), y[i:i + 1]).backward()
            grads.append([p.grad.clone() for p in model.parameters()])
        return grads
    return run


def _median_time(fn, repeats):
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    import torch

    import ember
    cases = {"ember loop": _loop(ember), "ember vmap": _vmapped(ember),
             "torch.func vmap": _vmapped(torch)}
    times = {name: [] for name in cases}
    for _ in range(3):  # interleaved rounds, so a slow moment hits every case
        for name, fn in cases.items():
            times[name].append(_median_time(fn, max(args.repeats // 3, 1)))
    medians = {name: statistics.median(ts) for name, ts in times.items()}
    for name, t in medians.items():
        print(f"{name:16s} {t * 1e3:8.2f} ms/batch")
    print(f"ember vmap vs ember loop: x{medians['ember loop'] / medians['ember vmap']:.2f} "
          f"(target >= 5)")
    print(f"ember vmap vs torch.func: {medians['ember vmap'] / medians['torch.func vmap']:.2f}x "
          f"the time (target <= 2)")


if __name__ == "__main__":
    main()
