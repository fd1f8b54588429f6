"""DataLoader throughput: batches/s with 5 ms of Python work per item, ember vs PyTorch.

Run: python benchmarks/dataloader.py [--items 512] [--batch-size 16] [--repeats 2]

Each item busy-waits 5 ms in Python (holding the GIL, like decoding or augmenting in Python)
and returns a (3, 32, 32) float32 image and an int label. Both libraries run the same dataset
code at num_workers 0, 1 and 2 with the fork start method; the best of ``--repeats`` epochs
is reported (each epoch includes starting the workers; the libraries take turns, so that other
load on the machine hits both). The target is ember/torch >= 0.9 at 2 workers.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

WORK_S = 0.005


def busy(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def make_dataset(lib, n):
    images = np.random.default_rng(0).standard_normal((n, 3, 32, 32)).astype(np.float32)

    class Items(lib.utils.data.Dataset):
        def __len__(self):
            return n

        def __getitem__(self, i):
            busy(WORK_S)
            return lib.from_numpy(images[i].copy()), i % 10

    return Items()


def epoch_seconds(lib, ds, workers, batch_size):
    loader = lib.utils.data.DataLoader(ds, batch_size=batch_size, num_workers=workers,
                                       shuffle=True)
    start = time.perf_counter()
    batches = sum(1 for _ in loader)
    return batches, time.perf_counter() - start


def rates(libs, datasets, workers, batch_size, repeats):
    """Best batches/s per library; the libraries take turns so that load affects both."""
    best = {name: 0.0 for name in libs}
    for _ in range(repeats):
        for name, lib in libs.items():
            batches, seconds = epoch_seconds(lib, datasets[name], workers, batch_size)
            best[name] = max(best[name], batches / seconds)
    return best


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--items", type=int, default=512)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--repeats", type=int, default=2)
    args = p.parse_args()
    import ember
    libs = {"ember": ember}
    try:
        import torch
        torch.set_num_threads(1)
        libs["torch"] = torch
    except ImportError:
        print("torch not installed: ember only")
    print(f"{args.items} items x {WORK_S * 1e3:.0f} ms, batch_size {args.batch_size}, "
          f"{os.cpu_count()} CPUs; batches/s (best of {args.repeats})")
    print(f"{'workers':>8} " + " ".join(f"{name:>10}" for name in libs) + "   ember/torch")
    datasets = {name: make_dataset(lib, args.items) for name, lib in libs.items()}
    for workers in (0, 1, 2):
        best = rates(libs, datasets, workers, args.batch_size, args.repeats)
        ratio = f"{best['ember'] / best['torch']:>13.2f}" if "torch" in best else ""
        print(f"{workers:>8} " + " ".join(f"{r:>10.2f}" for r in best.values()) + ratio)


if __name__ == "__main__":
    main()
