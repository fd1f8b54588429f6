"""A small float32 Linear by MKL's sgemm called from numba (NOTE [A small Linear on MKL] in
ember/ops/nn/linear.py): values and gradients against float64 NumPy products, the cases that
step aside to the general path, and the same results with the path off."""
from __future__ import annotations

import numpy as np
import pytest
from _spy import count_calls

import ember
from ember import _mkl
from ember.ops._kernels import small_linear
from ember.ops.nn import linear

F = ember.nn.functional

needs_mkl = pytest.mark.skipif(not _mkl.available(),
                               reason="MKL's libmkl_rt is not installed (the mkl extra) or the "
                                      "CPU is not Intel's")


@pytest.fixture
def calls(monkeypatch):
    """Counts of the kernel's forward and backward calls."""
    return count_calls(monkeypatch, small_linear, fwd="linear_forward", bwd="linear_backward")


def _run(x, w, b, g):
    xt, wt = ember.tensor(x, requires_grad=True), ember.tensor(w, requires_grad=True)
    bt = None if b is None else ember.tensor(b, requires_grad=True)
    y = F.linear(xt, wt, bt)
    y.backward(ember.tensor(g))
    return y.detach(), xt.grad, wt.grad, None if b is None else bt.grad


def _close(got, ref):
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5 * max(1.0, np.abs(ref).max()))


@needs_mkl
@pytest.mark.parametrize("shape", [(2, 3, 5), (8, 64, 256), (8, 256, 256), (8, 256, 10),
                                   (64, 128, 128), (3, 4, 33, 7)])
@pytest.mark.parametrize("with_bias", [True, False])
def test_values_and_gradients_match_numpy(calls, shape, with_bias):
    *lead, k, n = shape
    rng = np.random.default_rng(len(shape) + k)
    x = rng.standard_normal((*lead, k)).astype(np.float32)
    w = rng.standard_normal((n, k)).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32) if with_bias else None
    g = rng.standard_normal((*lead, n)).astype(np.float32)
    y, gx, gw, gb = _run(x, w, b, g)
    assert calls == {"fwd": 1, "bwd": 1}
    x64, w64, g64 = (a.astype(np.float64) for a in (x, w, g))
    _close(y.numpy(), x64 @ w64.T + (0 if b is None else b))
    _close(gx.numpy(), g64 @ w64)
    _close(gw.numpy(), g64.reshape(-1, n).T @ x64.reshape(-1, k))
    if with_bias:  # NumPy's own row-by-row sum: the same bits
        np.testing.assert_array_equal(gb.numpy(), np.add.reduce(g.reshape(-1, n), axis=0))
    assert y.shape == (*lead, n) and y.dtype == ember.float32


@needs_mkl
def test_the_same_results_as_the_general_path_to_rounding(monkeypatch):
    rng = np.random.default_rng(1)
    x, w, g = (rng.standard_normal(s).astype(np.float32) for s in ((8, 96), (40, 96), (8, 40)))
    b = rng.standard_normal(40).astype(np.float32)
    on = _run(x, w, b, g)
    monkeypatch.setattr(linear, "_MKL_SMALL", [False])
    off = _run(x, w, b, g)
    for a, c in zip(on, off):
        _close(a.numpy(), c.numpy().astype(np.float64))


@needs_mkl
def test_other_cases_take_the_general_path(calls):
    rng = np.random.default_rng(2)
    w = rng.standard_normal((16, 32)).astype(np.float32)
    cases = [
        rng.standard_normal((1, 32)).astype(np.float32),          # one row: the gemv paths
        rng.standard_normal((65, 32)).astype(np.float32),         # more rows than the bound
        rng.standard_normal((8, 32)),                             # float64
        rng.standard_normal((32, 8)).astype(np.float32).T,        # not C-contiguous
    ]
    for x in cases:
        y = F.linear(ember.from_numpy(x), ember.from_numpy(w.astype(x.dtype)))
        np.testing.assert_allclose(y.numpy(), x @ w.T.astype(x.dtype), rtol=1e-5, atol=1e-5)
    # a weight that is a strided view steps aside too
    x = np.ascontiguousarray(cases[1][:8, :16])
    y = F.linear(ember.from_numpy(x), ember.from_numpy(w[:, ::2]))
    np.testing.assert_allclose(y.numpy(), x @ w[:, ::2].T, rtol=1e-5, atol=1e-5)
    assert calls["fwd"] == 0
    F.linear(ember.from_numpy(np.ascontiguousarray(cases[1][:8])), ember.from_numpy(w))
    assert calls["fwd"] == 1  # a plain small product does not


@needs_mkl
def test_one_output_gradient_steps_aside(calls):
    # n_out == 1: the backward keeps its outer-product kernel
    rng = np.random.default_rng(3)
    x, w, g = (rng.standard_normal(s).astype(np.float32) for s in ((8, 16), (1, 16), (8, 1)))
    _, gx, gw, _ = _run(x, w, None, g)
    assert calls == {"fwd": 1, "bwd": 0}
    _close(gx.numpy(), g.astype(np.float64) @ w)
    _close(gw.numpy(), g.astype(np.float64).T @ x)


def test_off_without_mkl(monkeypatch, calls):
    monkeypatch.setattr(_mkl, "_on", [False])
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((8, 16)).astype(np.float32), rng.standard_normal((4, 16))
    y = F.linear(ember.tensor(x), ember.tensor(w.astype(np.float32)))
    assert calls["fwd"] == 0
    _close(y.numpy(), x.astype(np.float64) @ w.T.astype(np.float32))


def test_gradcheck_float64_unchanged():
    # double precision never takes the float32 kernel; gradients as gradcheck finds them
    rng = np.random.default_rng(5)
    x = ember.tensor(rng.standard_normal((4, 6)), requires_grad=True)
    w = ember.tensor(rng.standard_normal((3, 6)), requires_grad=True)
    b = ember.tensor(rng.standard_normal(3), requires_grad=True)
    assert ember.autograd.gradcheck(F.linear, (x, w, b))
