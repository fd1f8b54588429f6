"""A small batch's Linear products in numba (NOTE [A small Linear in numba] in
ember/ops/_kernels/small_gemm.py): the kernels against float64 NumPy products on every block
remainder, the layer's values and gradients with the path on and off, gradcheck, and the inputs
that step aside to BLAS (the weight gradient's kernel has its own bounds: WEIGHT_GRAD_ROWS and
WEIGHT_GRAD_MIN_IN)."""
from __future__ import annotations

import numpy as np
import pytest
from _spy import count_calls

import ember
from ember.ops._kernels import small_gemm
from ember.ops.nn import linear

F = ember.nn.functional
# rows cover the weight gradient's passes of 8, 4 and 1 rows (4, 12, 13, 17, 32) as well
SHAPES = [(2, 3, 1), (3, 5, 4), (8, 64, 256), (7, 33, 10), (5, 16, 7), (32, 256, 256),
          (1, 8, 8), (9, 1, 6), (4, 100, 9), (12, 96, 5), (13, 97, 6), (17, 20, 3)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m, k, n", SHAPES)
def test_kernels_match_float64_products(m, k, n, dtype):
    # every remainder of the 2-row x 4-output blocks: odd rows, n % 4 in 0..3, n < 4
    rng = np.random.default_rng(m * 1000 + k * 10 + n)
    x = rng.standard_normal((m, k)).astype(dtype)
    w = rng.standard_normal((n, k)).astype(dtype)
    b = rng.standard_normal(n).astype(dtype)
    g = rng.standard_normal((m, n)).astype(dtype)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    out = np.full((m, n), np.nan, dtype)
    small_gemm.linear_forward(x, w, b, True, out)
    ref = x.astype(np.float64) @ w.astype(np.float64).T + b
    np.testing.assert_allclose(out, ref, rtol=tol, atol=tol * np.abs(ref).max())
    small_gemm.linear_forward(x, w, b, False, out)
    np.testing.assert_allclose(out, ref - b, rtol=tol, atol=tol * np.abs(ref).max())
    dx = np.full((m, k), np.nan, dtype)
    small_gemm.input_grad(g, w, dx)
    ref = g.astype(np.float64) @ w.astype(np.float64)
    np.testing.assert_allclose(dx, ref, rtol=tol, atol=tol * np.abs(ref).max())
    dw = np.full((n, k), np.nan, dtype)
    small_gemm.weight_grad(g, x, dw)
    ref = g.astype(np.float64).T @ x.astype(np.float64)
    np.testing.assert_allclose(dw, ref, rtol=tol, atol=tol * np.abs(ref).max())


def _layer_run(x, w, b, g):
    xt, wt = ember.tensor(x, requires_grad=True), ember.tensor(w, requires_grad=True)
    bt = None if b is None else ember.tensor(b, requires_grad=True)
    y = F.linear(xt, wt, bt)
    y.backward(ember.tensor(g))
    return [y.detach().numpy(), xt.grad.numpy(), wt.grad.numpy()] + (
        [] if b is None else [bt.grad.numpy()])


@pytest.mark.parametrize("lead", [(8,), (3, 5), (33,), (1,)])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("k", [48, 128])
def test_layer_on_and_off_agree_with_float64(lead, bias, k, monkeypatch):
    rng = np.random.default_rng(len(lead) + 7 * bias + k)
    monkeypatch.setattr(small_gemm, "_host", [True, False])  # every kernel where it applies
    x = rng.standard_normal(lead + (k,)).astype(np.float32)
    w = rng.standard_normal((13, k)).astype(np.float32)
    b = rng.standard_normal(13).astype(np.float32) if bias else None
    g = rng.standard_normal(lead + (13,)).astype(np.float32)
    x64, w64, g64 = (a.astype(np.float64) for a in (x, w, g))
    refs = [x64 @ w64.T + (0 if b is None else b), g64 @ w64,
            g64.reshape(-1, 13).T @ x64.reshape(-1, k)] + ([] if b is None else
                                                           [g64.reshape(-1, 13).sum(0)])
    for on in (True, False):
        monkeypatch.setattr(small_gemm, "ON", [on])
        for got, ref in zip(_layer_run(x, w, b, g), refs):
            np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())


@pytest.mark.parametrize("k", [5, 100])
def test_gradcheck_float64(k):
    x = ember.randn(6, k, dtype=ember.float64, requires_grad=True)
    w = ember.randn(7, k, dtype=ember.float64, requires_grad=True)
    b = ember.randn(7, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(F.linear, (x, w, b))
    assert ember.autograd.gradgradcheck(F.linear, (x, w, b))


@pytest.fixture
def calls(monkeypatch):
    seen = count_calls(monkeypatch, small_gemm, fwd="linear_forward", dx="input_grad",
                       dw="weight_grad")
    monkeypatch.setattr(small_gemm, "_host", [True, False])  # as on an AVX-512 host, AVX2 BLAS
    monkeypatch.setattr(linear, "_MKL_SMALL", [False])
    return seen


def test_small_batch_takes_the_kernels(calls):
    x = ember.randn(8, 64, requires_grad=True)
    layer = ember.nn.Linear(64, 32)
    layer(x).sum().backward()
    assert calls == {"fwd": 1, "dx": 1, "dw": 0}  # 64 inputs: BLAS's weight gradient
    x = ember.randn(8, 128, requires_grad=True)
    layer = ember.nn.Linear(128, 32)
    layer(x).sum().backward()
    assert calls == {"fwd": 2, "dx": 2, "dw": 1}


@pytest.mark.parametrize("case", ["three rows", "few inputs", "strided input", "avx512 blas",
                                  "one pool"])
def test_weight_gradients_that_step_aside(case, calls, monkeypatch):
    x = ember.randn(8, 128)
    if case == "three rows":
        x = ember.randn(3, 128)
    elif case == "few inputs":
        x = ember.randn(8, small_gemm.WEIGHT_GRAD_MIN_IN - 1)
    elif case == "strided input":
        x = ember.randn(8, 256)[:, ::2]
    elif case == "avx512 blas":
        monkeypatch.setattr(small_gemm, "_host", [True, True])
    else:
        from ember import _onepool
        monkeypatch.setattr(_onepool, "enabled", lambda: True)
    x.requires_grad_()
    layer = ember.nn.Linear(x.shape[1], 10)
    g = ember.randn(x.shape[0], 10)
    layer(x).backward(g)
    assert calls["dw"] == 0
    ref = g.double().numpy().T @ x.detach().double().numpy()
    np.testing.assert_allclose(layer.weight.grad.double().numpy(), ref, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("case", ["one row", "too many rows", "strided input", "float16",
                                  "transposed weight"])
def test_inputs_that_step_aside(case, calls):
    x = ember.randn(8, 64)
    w = ember.randn(32, 64)
    if case == "one row":
        x = ember.randn(1, 64)
    elif case == "too many rows":
        x = ember.randn(small_gemm.SMALL_ROWS + 1, 64)
    elif case == "strided input":
        x = ember.randn(8, 128)[:, ::2]
    elif case == "float16":
        x, w = x.half(), w.half()
    else:
        w = ember.randn(64, 32).t()
    y = F.linear(x, w)
    assert calls["fwd"] == 0
    ref = x.double().numpy() @ w.double().numpy().T
    np.testing.assert_allclose(y.double().numpy(), ref, rtol=1e-2 if case == "float16" else 1e-5,
                               atol=1e-2 if case == "float16" else 1e-4)


def test_host_without_avx512_keeps_blas(calls, monkeypatch):
    monkeypatch.setattr(small_gemm, "_host", [False, False])
    x = ember.randn(8, 64, requires_grad=True)
    ember.nn.Linear(64, 32)(x).sum().backward()
    assert calls == {"fwd": 0, "dx": 0, "dw": 0}


def test_avx512_blas_keeps_its_input_gradient(calls, monkeypatch):
    monkeypatch.setattr(small_gemm, "_host", [True, True])
    x = ember.randn(8, 64, requires_grad=True)
    ember.nn.Linear(64, 32)(x).sum().backward()
    assert calls == {"fwd": 1, "dx": 0, "dw": 0}


def test_host_probe_reads_real_values():
    small_gemm._host.clear()
    avx512, blas512 = small_gemm._host_kinds()
    assert isinstance(avx512, bool) and isinstance(blas512, bool)
    flags = open("/proc/cpuinfo").read() if __import__("os").path.exists("/proc/cpuinfo") else ""
    if flags:
        assert avx512 == (" avx512f" in flags)


@pytest.mark.parametrize("name, features, expect", [("generic", None, False),
                                                    ("generic", "+avx2,+avx512f", True),
                                                    ("host", "+avx2,-avx512f,+avx512fp16", False)])
def test_numba_cpu_settings_decide(name, features, expect, monkeypatch):
    # NUMBA_CPU_NAME / NUMBA_CPU_FEATURES make numba compile for another CPU than the host's
    import numba
    monkeypatch.setattr(numba.config, "CPU_NAME", name)
    monkeypatch.setattr(numba.config, "CPU_FEATURES", features)
    monkeypatch.setattr(small_gemm, "_host", [])
    assert small_gemm._host_kinds()[0] is expect
