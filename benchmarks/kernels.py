"""Time ember's numba/BLAS kernels against torch.nn.functional on the same inputs, same run.

    PYTHONPATH=. python benchmarks/kernels.py [--rounds 15] [--dtype float32] [--only conv]

Each case runs forward + backward. Rounds alternate ember and torch; each side starts its turn
with a 0.15 s pause and one untimed call, so that the other library's worker threads, which keep
spinning after their last parallel region (numpy's OpenBLAS for ~0.1 s after a GEMM), do not
steal its cores (NOTE [Settling between steps] in table1.py; a 5 ms pause, used until
2026-11-24, was too short for OpenBLAS and slowed torch's turns).
Prints the median milliseconds of each side and the ratio torch/ours (> 1: ember is faster).
"""

import argparse
import functools
import os
import statistics
import time

import numpy as np

import ember
from ember import _backend
from ember.ops._kernels import conv, loss, norm, pool, rnn

PAUSE = 0.15  # seconds; longer than OpenBLAS's ~0.1 s spin after a GEMM


def _conv_case(xs, ws, stride=1, padding=0, groups=1):
    s, p = (stride, stride), (padding, padding)

    def make(rng, dtype):
        x = rng.standard_normal(xs).astype(dtype)
        w = rng.standard_normal(ws).astype(dtype) * 0.1
        b = rng.standard_normal(ws[0]).astype(dtype)
        g = np.ones_like(conv.conv2d_forward(x, w, b, s, p, (1, 1), groups))

        def ours():
            conv.conv2d_forward(x, w, b, s, p, (1, 1), groups)
            conv.conv2d_backward(g, x, w, s, p, (1, 1), groups, True, True, True)

        def theirs(torch, functional):
            tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
            functional.conv2d(tx, tw, tb, s, p, 1, groups).backward(torch.tensor(g))
        return ours, theirs
    return make


def _maxpool_case(xs, k, s):
    def make(rng, dtype):
        x = rng.standard_normal(xs).astype(dtype)
        y, _ = pool.maxpool2d_forward(x, (k, k), (s, s), (0, 0), (1, 1), False)
        g = np.ones_like(y)

        def ours():
            _, indices = pool.maxpool2d_forward(x, (k, k), (s, s), (0, 0), (1, 1), False)
            pool.maxpool2d_backward(g, indices, x.shape)

        def theirs(torch, functional):
            tx = torch.tensor(x, requires_grad=True)
            functional.max_pool2d(tx, k, s).backward(torch.tensor(g))
        return ours, theirs
    return make


def _batchnorm_case(xs):
    def make(rng, dtype):
        x = rng.standard_normal(xs).astype(dtype)
        w, b = np.ones(xs[1], dtype), np.zeros(xs[1], dtype)
        g = rng.standard_normal(xs).astype(dtype)

        def ours():
            _, mean, invstd = norm.batchnorm_forward_train(x, w, b, 1e-5)
            norm.batchnorm_backward_train(g, x, w, mean, invstd, True, True)

        def theirs(torch, functional):
            tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
            functional.batch_norm(tx, None, None, tw, tb, training=True).backward(
                torch.tensor(g))
        return ours, theirs
    return make


def _layernorm_case(xs):
    def make(rng, dtype):
        x = rng.standard_normal(xs).astype(dtype)
        w, b = np.ones(xs[1], dtype), np.zeros(xs[1], dtype)
        g = rng.standard_normal(xs).astype(dtype)

        def ours():
            _, mean, invstd = norm.layernorm_forward(x, w, b, 1e-5)
            norm.layernorm_backward(g, x, w, mean, invstd)

        def theirs(torch, functional):
            tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
            functional.layer_norm(tx, (xs[1],), tw, tb).backward(torch.tensor(g))
        return ours, theirs
    return make


def _cross_entropy_case(m, k):
    def make(rng, dtype):
        x = rng.standard_normal((m, k)).astype(dtype)
        t = rng.integers(0, k, m)

        def ours():
            _, saved = loss.cross_entropy_forward(x, t, None, -100, 0.0, "mean")
            loss.cross_entropy_backward(np.asarray(1.0, dtype), x, t, saved, None, -100, 0.0,
                                        "mean")

        def theirs(torch, functional):
            tx = torch.tensor(x, requires_grad=True)
            functional.cross_entropy(tx, torch.tensor(t)).backward()
        return ours, theirs
    return make


def _lstm_case(batch, hidden):
    def make(rng, dtype):
        gates = rng.standard_normal((batch, 4 * hidden)).astype(dtype)
        c0 = rng.standard_normal((batch, hidden)).astype(dtype)
        gh = rng.standard_normal((batch, hidden)).astype(dtype)

        def ours():
            _, _, saved = rnn.lstm_cell_forward(gates, c0)
            rnn.lstm_cell_backward(gh, gh, saved, c0)

        def theirs(torch, functional):
            # the same pointwise work as torch's fused LSTM cell, through autograd
            tg, tc = torch.tensor(gates, requires_grad=True), torch.tensor(c0, requires_grad=True)
            i, f, g, o = tg.chunk(4, 1)
            c = torch.sigmoid(f) * tc + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
            torch.autograd.backward([h, c], [torch.tensor(gh), torch.tensor(gh)])
        return ours, theirs
    return make


def _gemm_case(rows, k, n):
    def make(rng, dtype):
        x = rng.standard_normal((rows, k)).astype(dtype)
        w = rng.standard_normal((n, k)).astype(dtype)

        def ours():  # forward only: x @ W^T as a Linear layer computes it
            _backend.gemm(x, w.T)

        def theirs(torch, functional):
            with torch.no_grad():
                functional.linear(torch.tensor(x), torch.tensor(w))
        return ours, theirs
    return make


def _lstm_layer_case(steps, batch, hidden):
    def make(rng, dtype):
        x = rng.standard_normal((steps, batch, hidden)).astype(dtype)
        g = rng.standard_normal((steps, batch, hidden)).astype(dtype)
        layer = ember.nn.LSTM(hidden, hidden, dtype=ember.float32 if dtype == np.float32
                              else ember.float64)

        def ours():
            out, _ = layer(ember.tensor(x, requires_grad=True))
            out.backward(ember.tensor(g))

        def theirs(torch, functional):
            if not hasattr(theirs, "layer"):
                theirs.layer = torch.nn.LSTM(hidden, hidden).to(getattr(torch, str(dtype)))
            out, _ = theirs.layer(torch.tensor(x, requires_grad=True))
            out.backward(torch.tensor(g))
        return ours, theirs
    return make


def _functional_case(fn, *shapes, **kwargs):
    """ember.nn.functional.<fn> against torch's through the public API, forward + backward of
    every input (so dispatch and graph recording are in both figures)."""
    def make(rng, dtype):
        arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]

        def run(lib, functional):
            xs = [lib.tensor(a, requires_grad=True) for a in arrays]
            getattr(functional, fn)(*xs, **kwargs).sum().backward()

        return (lambda: run(ember, ember.nn.functional)), run
    return make


CASES = {
    "conv alexnet-s 5x5 (16,64,15,15)->192": _conv_case((16, 64, 15, 15), (192, 64, 5, 5), 1, 2),
    "conv vgg 3x3 (8,64,32,32)->64": _conv_case((8, 64, 32, 32), (64, 64, 3, 3), 1, 1),
    "conv vgg 3x3 (8,128,16,16)->128": _conv_case((8, 128, 16, 16), (128, 128, 3, 3), 1, 1),
    "conv vgg 3x3 (8,256,8,8)->256": _conv_case((8, 256, 8, 8), (256, 256, 3, 3), 1, 1),
    "conv vgg 3x3 (8,512,4,4)->512": _conv_case((8, 512, 4, 4), (512, 512, 3, 3), 1, 1),
    "conv vgg 3x3 (8,512,2,2)->512": _conv_case((8, 512, 2, 2), (512, 512, 3, 3), 1, 1),
    "conv depthwise 3x3 (16,144,16,16)": _conv_case((16, 144, 16, 16), (144, 1, 3, 3), 1, 1, 144),
    "conv 1x1 (8,256,16,16)->64": _conv_case((8, 256, 16, 16), (64, 256, 1, 1)),
    "conv stem 11x11/4 (16,3,64,64)->64": _conv_case((16, 3, 64, 64), (64, 3, 11, 11), 4, 2),
    "maxpool 3x3/2 (16,64,31,31)": _maxpool_case((16, 64, 31, 31), 3, 2),
    "batchnorm (16,64,32,32)": _batchnorm_case((16, 64, 32, 32)),
    "batchnorm resnet (8,256,16,16)": _batchnorm_case((8, 256, 16, 16)),
    "batchnorm resnet (8,1024,4,4)": _batchnorm_case((8, 1024, 4, 4)),
    "batchnorm resnet (8,2048,2,2)": _batchnorm_case((8, 2048, 2, 2)),
    "batchnorm mobilenet (16,576,4,4)": _batchnorm_case((16, 576, 4, 4)),
    "layernorm (512,768)": _layernorm_case((512, 768)),
    "cross_entropy (640,2000)": _cross_entropy_case(640, 2000),
    "softmax gpt-s scores (8,4,128,128)": _functional_case("softmax", (8, 4, 128, 128), dim=-1),
    "log_softmax gpt-s logits (1024,1024)": _functional_case("log_softmax", (1024, 1024), dim=-1),
    "sdpa causal gpt-s (8,4,128,64)": _functional_case(
        "scaled_dot_product_attention", *[(8, 4, 128, 64)] * 3, is_causal=True),
    "sdpa gpt-s (8,4,128,64)": _functional_case(
        "scaled_dot_product_attention", *[(8, 4, 128, 64)] * 3),
    "lstm cell pointwise (64,4x512)": _lstm_case(64, 512),
    "lstm layer gnmt (T20,B32,H256)": _lstm_layer_case(20, 32, 256),
    "gemm x@W^T (8,256)x(256,256) (fwd)": _gemm_case(8, 256, 256),
    "gemm x@W^T (32,256)x(256,1024) (fwd)": _gemm_case(32, 256, 1024),
    "gemm x@W^T (8,1024)x(1024,256) (fwd)": _gemm_case(8, 1024, 256),
    "gemm x@W^T (64,1024)x(1024,4096) (fwd)": _gemm_case(64, 1024, 4096),
}


def _time(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    parser.add_argument("--only", default="", help="run cases whose name contains this")
    args = parser.parse_args()

    import torch
    from torch.nn import functional
    torch.set_num_threads(os.cpu_count() or 1)
    dtype = np.dtype(args.dtype)
    print(f"threads: torch {torch.get_num_threads()}, cpus {os.cpu_count()}; dtype {dtype}; "
          f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}")
    print(f"{'case (fwd+bwd)':42s} {'ember ms':>9s} {'torch ms':>9s} {'torch/ember':>11s}")
    for name, make in CASES.items():
        if args.only not in name:
            continue
        ours, theirs = make(np.random.default_rng(0), dtype)
        mine, ref = [], []
        for _ in range(args.rounds):
            time.sleep(PAUSE)   # let the other library's spinning workers park
            ours()
            mine += [_time(ours), _time(ours)]
            time.sleep(PAUSE)
            theirs(torch, functional)
            ref += [_time(functools.partial(theirs, torch, functional)) for _ in range(2)]
        a, b = statistics.median(mine) * 1e3, statistics.median(ref) * 1e3
        print(f"{name:42s} {a:9.2f} {b:9.2f} {b / a:11.2f}")


if __name__ == "__main__":
    main()
