"""One-row products in parts on OpenBLAS's threads (NOTE [One-row products in parts] in
ember/ops/_kernels/gemv.py): values against a float64 product and torch, the same bits whatever
the thread count, and the cases that keep NumPy's gemv."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember import _blas_parts
from ember._kernel_threads import blas_threads_enter, blas_threads_exit
from ember.autograd import gradcheck
from ember.ops._kernels.gemv import gemv_in_parts
from ember.ops.nn import linear

SHAPES = [(768, 256), (256, 1024), (97, 101), (3, 5)]


def _case(n_out, n_in, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n_out, n_in)).astype(dtype),
            rng.standard_normal(n_in).astype(dtype), rng.standard_normal(n_out).astype(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("n_out,n_in", SHAPES)
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
def test_values_and_the_same_bits_on_one_thread(n_out, n_in, dtype, bias):
    if not _blas_parts.on("gemv"):
        pytest.skip("no OpenBLAS worker to hand a part to (one thread, or the parts off)")
    w, x, b = _case(n_out, n_in, dtype)
    b = b if bias else None
    got = gemv_in_parts(x, w, b)
    want = w.astype(np.float64) @ x.astype(np.float64) + (0 if b is None else b)
    tol = 2e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.sqrt(n_in))
    assert got.dtype == dtype and got.shape == (n_out,)
    before = blas_threads_enter(1)  # every output on the caller
    try:
        one = gemv_in_parts(x, w, b)
    finally:
        blas_threads_exit(before)
    np.testing.assert_array_equal(one, got)


@pytest.mark.parametrize("shape", [(1, 1, 256), (1, 256), (256,)])
def test_linear_one_row_in_parts_matches_torch(shape):
    lin = ember.nn.Linear(256, 768)
    w, b = lin.weight.detach().numpy(), lin.bias.detach().numpy()
    row = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    with ember.no_grad():
        got = lin(ember.from_numpy(row))
    want = torch.nn.functional.linear(torch.from_numpy(row), torch.from_numpy(w),
                                      torch.from_numpy(b))
    assert got.shape == tuple(want.shape) and got.dtype is ember.float32
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
    if _blas_parts.on("gemv") and len(shape) > 1:  # 1-D inputs take the general product
        parts = gemv_in_parts(row.reshape(-1), w, b)
        np.testing.assert_array_equal(got.numpy().reshape(-1), parts)


def test_small_and_transposed_weights_keep_numpys_gemv(monkeypatch):
    # below OpenBLAS's two-thread size, or with an F-contiguous weight, the one-row product
    # stays np.dot's: the bits of np.matmul's (1, in) row
    rng = np.random.default_rng(2)
    for w in (rng.standard_normal((48, 16)).astype(np.float32),
              np.asfortranarray(rng.standard_normal((300, 256)).astype(np.float32))):
        row = rng.standard_normal((1, w.shape[1])).astype(np.float32)
        with ember.no_grad():
            got = ember.nn.functional.linear(ember.from_numpy(row), ember.from_numpy(w))
        np.testing.assert_array_equal(got.numpy(), np.matmul(row, w.T))


def test_recorded_one_row_linear_gradients():
    # the forward of a recorded call takes the parts too; the backward is Linear's
    x = ember.randn(1, 100, dtype=ember.float64, requires_grad=True)
    w = ember.randn(120, 100, dtype=ember.float64, requires_grad=True)
    b = ember.randn(120, dtype=ember.float64, requires_grad=True)
    assert gradcheck(ember.nn.functional.linear, (x, w, b))
    y = ember.nn.functional.linear(x, w, b)
    assert y.grad_fn is not None
    np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy() @ w.detach().numpy().T
                               + b.detach().numpy(), rtol=1e-12)


def test_switched_off_gives_numpys_bits(monkeypatch):
    monkeypatch.setattr(linear, "_GEMV_PARTS", [False])
    w, x, b = _case(768, 256, np.float32)
    with ember.no_grad():
        got = ember.nn.functional.linear(ember.from_numpy(x[None]), ember.from_numpy(w),
                                         ember.from_numpy(b))
    np.testing.assert_array_equal(got.numpy(), np.matmul(x[None], w.T) + b)


@pytest.fixture
def solo(monkeypatch):
    """A fresh late-worker state (NOTE [A late worker] in ember/_blas_parts.py)."""
    monkeypatch.setattr(_blas_parts, "_solo", [0.0, _blas_parts.SOLO_MIN_S])
    return _blas_parts._solo


def test_a_late_hand_off_starts_a_solo_period_that_grows_and_shrinks(solo):
    from time import perf_counter
    lo, hi = _blas_parts.SOLO_MIN_S, _blas_parts.SOLO_MAX_S
    _blas_parts.note_hand_off(False)  # on time: nothing changes
    assert solo == [0.0, lo] and not _blas_parts.late_solo(perf_counter())
    _blas_parts.note_hand_off(True)  # late: solo for SOLO_MIN_S from now
    now = perf_counter()
    assert _blas_parts.late_solo(now) and not _blas_parts.late_solo(now + lo * 1.01)
    assert solo[1] == 2 * lo  # the next period is twice as long
    for _ in range(40):  # late again and again: capped
        _blas_parts.note_hand_off(True)
    assert solo[1] == hi
    _blas_parts.note_hand_off(False)  # on time: half as long again
    assert solo[1] == hi / 2
    for _ in range(40):
        _blas_parts.note_hand_off(False)
    assert solo[1] == lo


def test_gemv_runs_on_one_thread_while_solo_with_the_same_bits(solo, monkeypatch):
    if not _blas_parts.on("gemv"):
        pytest.skip("no OpenBLAS worker to hand a part to (one thread, or the parts off)")
    from ember.ops._kernels import gemv as kgemv
    threads = []
    launch = kgemv._launch

    def spy(*args):
        threads.append(args[4])
        return launch(*args)

    monkeypatch.setattr(kgemv, "_launch", spy)
    w, x, b = _case(768, 256, np.float32)
    two = gemv_in_parts(x, w, b)
    assert threads[-1] == _blas_parts.threads() and threads[-1] > 1
    solo[0] = float("inf")  # a solo period that has not ended
    one = gemv_in_parts(x, w, b)
    assert threads[-1] == 1
    np.testing.assert_array_equal(one, two)
    solo[:] = [0.0, 10.0]  # the next solo period outlasts any pause before the check
    monkeypatch.setattr(_blas_parts, "LATE_S", -1.0)  # every hand-off counts as late
    gemv_in_parts(x, w, b)
    assert _blas_parts.late_solo(__import__("time").perf_counter())
