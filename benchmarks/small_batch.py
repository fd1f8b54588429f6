"""Small-batch training, where per-op overhead dominates: ember vs PyTorch (issue 21).

    python benchmarks/small_batch.py                    # all three, 3 process pairs each
    python benchmarks/small_batch.py --runs 3           # median of per-run ratios
    python benchmarks/small_batch.py --only mlp --pairs 5 --no-inproc
    python benchmarks/small_batch.py --quick            # smoke run (< 1 min)
    python benchmarks/small_batch.py --shares --verbose # where ember's step time goes

The protocol and the columns are table1.py's (NOTE [One library per process] there): fresh
processes that each import one library alternate, the headline ratio is torch's median step
time over ember's; the in-process paired ratio is the secondary column. The workloads (full
training steps: zero_grad, forward, loss, backward, optimizer step; float32, synthetic data from
a fixed seed, a pool of 4 batches cycled through):

* `digits`: the convnet of examples/train_digits.py (its DigitNet source is read from that file
  and run with either library), batch 32 of 1x8x8 images, cross-entropy, Adam lr 3e-3.
* `mlp`: Linear(64->256), ReLU, 2 x (Linear(256->256), ReLU), Linear(256->10): three hidden
  layers of 256, batch 8, cross-entropy, SGD lr 0.01 momentum 0.9.
* `lstm`: nn.LSTMCell(32->128) looped over 20 time steps at batch 4 (h, c from zeros), then
  Linear(128->10) on the last h, cross-entropy, Adam lr 1e-3.
Timed samples are chunks of consecutive steps (the steps are a few ms or less).
"""
from __future__ import annotations

import ast
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import table1  # noqa: E402


def _digitnet_class(lib):
    """examples/train_digits.py's DigitNet, its source executed with `lib` as torch."""
    path = os.path.join(ROOT, "examples", "train_digits.py")
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "DigitNet"]
    namespace = {"torch": lib, "nn": lib.nn, "__name__": "train_digits_model"}
    exec(compile(ast.Module(body=[cls], type_ignores=[]), path, "exec"), namespace)
    return namespace["DigitNet"]


def _class_batches(lib, shape, seed=0, classes=10):
    rng = np.random.default_rng(seed)
    return [(lib.from_numpy(rng.standard_normal(shape).astype(np.float32)),
             lib.from_numpy(rng.integers(0, classes, shape[0]).astype(np.int64)))
            for _ in range(4)]


def digits(lib):
    model = _digitnet_class(lib)()
    return (model, lib.optim.Adam(model.parameters(), lr=3e-3),
            _class_batches(lib, (32, 1, 8, 8)), lib.nn.CrossEntropyLoss(), 32)


def mlp(lib):
    nn = lib.nn
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                          nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
    return (model, lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9),
            _class_batches(lib, (8, 64)), nn.CrossEntropyLoss(), 8)


def _cell_loop(lib):
    nn = lib.nn

    class CellLoop(nn.Module):
        """LSTMCell unrolled over the time axis of a (T, B, I) input by a Python loop."""

        def __init__(self, inp=32, hidden=128, classes=10):
            super().__init__()
            self.hidden = hidden
            self.cell = nn.LSTMCell(inp, hidden)
            self.head = nn.Linear(hidden, classes)

        def forward(self, x):
            h = lib.zeros(x.shape[1], self.hidden)
            c = lib.zeros(x.shape[1], self.hidden)
            for t in range(x.shape[0]):
                h, c = self.cell(x[t], (h, c))
            return self.head(h)

    return CellLoop


def lstm(lib):
    model = _cell_loop(lib)()
    rng = np.random.default_rng(0)
    batches = [(lib.from_numpy(rng.standard_normal((20, 4, 32)).astype(np.float32)),
                lib.from_numpy(rng.integers(0, 10, 4).astype(np.int64))) for _ in range(4)]
    return (model, lib.optim.Adam(model.parameters(), lr=1e-3), batches,
            lib.nn.CrossEntropyLoss(), 4)


WORKLOADS = {"digits": digits, "mlp": mlp, "lstm": lstm}
ITEM_UNIT = {"digits": "img", "mlp": "sample", "lstm": "seq"}
# warm-up steps, timed samples, steps per sample
PROTOCOL = {"digits": (10, 30, 10), "mlp": (20, 30, 20), "lstm": (10, 30, 5)}
SMALL = table1.Suite(os.path.abspath(__file__), "small_batch", PROTOCOL, title="Small batch")

if __name__ == "__main__":
    np.seterr(all="ignore")
    table1.main(SMALL)
