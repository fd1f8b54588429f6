"""The float32 GEMM in numba (NOTE [A GEMM in numba] in ember/ops/_kernels/gemm.py): the kernel
against float64 NumPy products over every tile remainder and k block, the bias, results that do
not depend on how the rows are cut, which products `takes`, and whole Linear layers routed
through it against torch."""
from __future__ import annotations

import numpy as np
import pytest
from _spy import count_calls

import ember
from ember import _blas_parts, _mkl
from ember.ops._kernels import gemm

torch = pytest.importorskip("torch")

# m % 4 and n % 6 in every remainder, k across a KC block boundary, empty axes
SHAPES = [(1, 1, 1), (4, 6, 3), (7, 13, 5), (9, 17, 200), (33, 11, gemm.KC + 7), (0, 5, 4),
          (5, 0, 3), (6, 4, 0), (70, 31, 2 * gemm.KC + 1), (129, 64, 130)]


def _ref(a, b):
    return a.astype(np.float64) @ b.astype(np.float64).T


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m, n, k", SHAPES)
def test_kernel_matches_float64_products(m, n, k, dtype):
    rng = np.random.default_rng(m * 10000 + n * 100 + k)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((n, k)).astype(dtype)
    bias = rng.standard_normal(n).astype(dtype)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for has_bias in (False, True):
        c = np.full((m, n), np.nan, dtype)
        gemm.nt_rows(a, b, c, bias if has_bias else bias[:1], has_bias, 0, m)
        ref = _ref(a, b) + (bias if has_bias else 0)
        scale = max(1.0, np.abs(ref).max()) if ref.size else 1.0
        np.testing.assert_allclose(c, ref, rtol=tol, atol=tol * scale)


def test_rows_in_parts_give_the_same_bits():
    # each output is one dot product whichever part computes it: cuts at multiples of the
    # tile's 4 rows (as `matmul` makes them) give equal bits
    rng = np.random.default_rng(3)
    a = rng.standard_normal((37, 300)).astype(np.float32)
    b = rng.standard_normal((23, 300)).astype(np.float32)
    whole = np.empty((37, 23), np.float32)
    gemm.nt_rows(a, b, whole, b[0], False, 0, 37)
    for cut in (4, 8, 20, 36):
        parts = np.full_like(whole, np.nan)
        gemm.nt_rows(a, b, parts, b[0], False, 0, cut)
        gemm.nt_rows(a, b, parts, b[0], False, cut, 37)
        np.testing.assert_array_equal(parts, whole)


@pytest.fixture
def numba_host(monkeypatch):
    """Route products to the kernel on any host (the kernel itself runs on every CPU)."""
    monkeypatch.setattr(gemm, "_host_ok", lambda: True)
    monkeypatch.setattr(gemm, "ON", [True])


def test_takes_only_what_it_can_compute(numba_host):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((512, 256)).astype(np.float32)
    w = rng.standard_normal((384, 256)).astype(np.float32)
    assert gemm.takes(a, w.T, None)                       # x @ W^T, as a Linear's forward
    assert gemm.takes(a, np.ascontiguousarray(w.T), None)  # a C-contiguous b: copied
    assert not gemm.takes(a.astype(np.float64), w.T.astype(np.float64), None)
    assert not gemm.takes(a[:, :100], w[:, :100].T, None)  # k < MIN_K (and a strided a)
    assert not gemm.takes(np.asfortranarray(a), w.T, None)  # a not C-contiguous
    assert not gemm.takes(a[:8], w.T, None)                # too few multiply-adds
    out = np.empty((512, 384), np.float32)
    assert gemm.takes(a, w.T, out)
    assert not gemm.takes(a, w.T, out.T.copy().T)          # an F-contiguous out
    assert not gemm.takes(a, w.T, np.empty((512, 384), np.float64))
    gemm.ON[0] = False
    assert not gemm.takes(a, w.T, None)


@pytest.mark.parametrize("parts", [False, True])
def test_matmul_routes_through_the_kernel(numba_host, parts, monkeypatch):
    _blas_parts.set_enabled(True if parts else False)
    try:
        rng = np.random.default_rng(5)
        a = rng.standard_normal((1030, 260)).astype(np.float32)
        w = rng.standard_normal((203, 260)).astype(np.float32)
        bias = rng.standard_normal(203).astype(np.float32)
        seen = count_calls(monkeypatch, gemm, kernel="nt_rows")
        y = _mkl.matmul(a, w.T, bias=bias)
        assert seen["kernel"] == (2 if parts and _blas_parts.threads() >= 2 else 1)
        ref = _ref(a, w) + bias
        np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())
        # one thread (a Linear's input gradient beside its weight gradient), C-contiguous b
        out = np.empty((1030, 203), np.float32)
        _mkl.matmul_one_thread(a, np.ascontiguousarray(w.T), out)
        np.testing.assert_allclose(out, ref - bias, rtol=1e-5, atol=1e-5 * np.abs(ref).max())
    finally:
        _blas_parts.set_enabled(None)


@pytest.mark.parametrize("lead", [(300,), (3, 100)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_layer_against_torch(numba_host, lead, bias):
    rng = np.random.default_rng(6)
    x = rng.standard_normal(lead + (256,)).astype(np.float32)
    w = (rng.standard_normal((384, 256)) / 16).astype(np.float32)
    b = rng.standard_normal(384).astype(np.float32) if bias else None
    g = rng.standard_normal(lead + (384,)).astype(np.float32)
    grads = []
    for lib in (ember, torch):
        xt = lib.tensor(x, requires_grad=True)
        wt = lib.tensor(w, requires_grad=True)
        bt = lib.tensor(b, requires_grad=True) if bias else None
        y = lib.nn.functional.linear(xt, wt, bt)
        y.backward(lib.tensor(g))
        grads.append([y.detach().numpy(), xt.grad.numpy(), wt.grad.numpy()]
                     + ([bt.grad.numpy()] if bias else []))
    for mine, theirs in zip(*grads):
        np.testing.assert_allclose(mine, theirs, rtol=1e-4, atol=1e-4 * np.abs(theirs).max())


def test_gradcheck_through_the_kernel_in_float32_paths(numba_host):
    # float64 never takes this path; the float32 layer's gradient agrees with the float64 one
    rng = np.random.default_rng(7)
    x = rng.standard_normal((260, 200))
    w = rng.standard_normal((130, 200)) / 14
    outs = []
    for dt in (np.float32, np.float64):
        xt = ember.tensor(x.astype(dt), requires_grad=True)
        wt = ember.tensor(w.astype(dt), requires_grad=True)
        (ember.nn.functional.linear(xt, wt) ** 2).sum().backward()
        outs.append((xt.grad.numpy().astype(np.float64), wt.grad.numpy().astype(np.float64)))
    for lo, hi in zip(*outs):
        np.testing.assert_allclose(lo, hi, rtol=1e-3, atol=1e-3 * np.abs(hi).max())
