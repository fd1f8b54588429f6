"""Time ``optimizer.step()`` of ember against torch on a 150-tensor model, in the same run.

    PYTHONPATH=. python benchmarks/optim_step.py [--rounds 30] [--width 256] [--dtype float32]
                                                 [--torch-threads N]

The "model" is 50 blocks of (Linear weight width x width, bias width, LayerNorm-like weight
width): 150 parameter tensors of mixed sizes, ~3.3 M parameters at width 256. Both libraries get
the same initial parameters and the same gradients. Rounds alternate ember and torch; each turn
starts with a short pause and one untimed step (see benchmarks/kernels.py for why). Prints the
median milliseconds per step of each side and the ratio torch/ember (> 1: ember is faster).
"""

import argparse
import statistics
import time

import numpy as np


def _arrays(width, blocks, dtype, seed=0):
    rng = np.random.default_rng(seed)
    shapes = [(width, width), (width,), (width,)] * blocks
    params = [rng.standard_normal(s).astype(dtype) * 0.1 for s in shapes]
    grads = [rng.standard_normal(s).astype(dtype) for s in shapes]
    return params, grads


def _ember_opt(name, params, grads, kwargs):
    import ember
    ps = [ember.tensor(p, requires_grad=True) for p in params]
    for p, g in zip(ps, grads):
        p.grad = ember.tensor(g)
    return getattr(ember.optim, name)(ps, **kwargs)


def _torch_opt(torch, name, params, grads, kwargs):
    ps = [torch.tensor(p, requires_grad=True) for p in params]
    for p, g in zip(ps, grads):
        p.grad = torch.tensor(g)
    return getattr(torch.optim, name)(ps, **kwargs)


def _median_ms(step, rounds_out, pause=0.15):  # > OpenBLAS's ~0.1 s spin after a GEMM
    time.sleep(pause)
    step()  # untimed: warm caches, let the other library's threads go idle
    start = time.perf_counter()
    step()
    rounds_out.append((time.perf_counter() - start) * 1e3)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--blocks", type=int, default=50)
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--torch-threads", type=int, default=None,
                        help="torch.set_num_threads (default: torch's own choice)")
    args = parser.parse_args()

    import torch
    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    params, grads = _arrays(args.width, args.blocks, args.dtype)
    cases = [("SGD (momentum=0.9)", "SGD", dict(lr=0.01, momentum=0.9)),
             ("SGD (nesterov, wd)", "SGD", dict(lr=0.01, momentum=0.9, nesterov=True,
                                                 weight_decay=1e-4)),
             ("Adam", "Adam", dict(lr=1e-3)),
             ("AdamW (amsgrad)", "AdamW", dict(lr=1e-3, amsgrad=True))]
    n_params = sum(p.size for p in params)
    print(f"{len(params)} parameter tensors, {n_params / 1e6:.2f} M {args.dtype} parameters, "
          f"{args.rounds} rounds, torch {torch.__version__} "
          f"({torch.get_num_threads()} threads)")
    print(f"{'optimizer':24s} {'ember ms':>10s} {'torch ms':>10s} {'torch/ember':>12s}")
    for label, name, kwargs in cases:
        ours = _ember_opt(name, params, grads, kwargs)
        theirs = _torch_opt(torch, name, params, grads, kwargs)
        ours.step()  # compile the numba kernels before timing
        t_ours, t_theirs = [], []
        for _ in range(args.rounds):
            _median_ms(ours.step, t_ours)
            _median_ms(theirs.step, t_theirs)
        m_ours, m_theirs = statistics.median(t_ours), statistics.median(t_theirs)
        print(f"{label:24s} {m_ours:10.2f} {m_theirs:10.2f} {m_theirs / m_ours:12.2f}")


if __name__ == "__main__":
    main()
