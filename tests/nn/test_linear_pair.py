"""Linear's input and weight gradients at once on two threads (NOTE [Linear's two gradients at
once] in ember/ops/nn/linear.py): the path is taken where it should be, and its gradients are
torch's, the serial path's, and behave as any gradient (accumulation, hooks, retain_graph)."""
from __future__ import annotations

import numpy as np
import pytest
from _blas_bits import blas_bits_agree

import ember
from ember import _blas_parts, nn
from ember.autograd import gradcheck
from ember.ops.nn import linear as L


@pytest.fixture
def pairs(blas_parts_on, monkeypatch):
    """The parts on (blas_parts_on) and a count of the backward calls that took the pair."""
    calls = []
    inner = L._backward_pair
    monkeypatch.setattr(L, "_backward_pair", lambda *a: calls.append(1) or inner(*a))
    return calls


def _grads(x, shape_out, lin, seed=1):
    """(dx, dW, db) of sum(y * G) for a fixed G."""
    g = np.random.default_rng(seed).standard_normal(shape_out).astype(x.dtype)
    xt = ember.tensor(x, requires_grad=True)
    lin(xt).backward(ember.tensor(g))
    db = None if lin.bias is None else lin.bias.grad.numpy().copy()
    return xt.grad.numpy().copy(), lin.weight.grad.numpy().copy(), db, g


def _fresh(lin):
    for p in lin.parameters():
        p.grad = None


@pytest.mark.parametrize("shape", [(2, 256, 96), (512, 96)])
@pytest.mark.parametrize("bias", [True, False])
def test_pair_matches_the_serial_backward_and_numpy(pairs, rng, shape, bias):
    lin = nn.Linear(96, 160, bias=bias)
    x = rng.standard_normal(shape).astype(np.float32)
    out_shape = shape[:-1] + (160,)
    on = _grads(x, out_shape, lin)
    assert len(pairs) == 1  # 512 x 96 x 160 multiply-adds: above the one-thread range
    _fresh(lin)
    _blas_parts.set_enabled(False)
    off = _grads(x, out_shape, lin)
    assert len(pairs) == 1
    for a, b in zip(on[:3], off[:3]):
        if a is not None:
            # one GEMM call per product either way; only OpenBLAS's thread count differs
            # (a cancelling sum of 512 terms: 3e-5 apart where OpenBLAS's bits move with its
            # thread count, _blas_bits.py)
            np.testing.assert_allclose(a, b, rtol=1e-5 if blas_bits_agree() else 1e-4, atol=1e-5)
    g2, x2, w = on[3].reshape(-1, 160), x.reshape(-1, 96), lin.weight.detach().numpy()
    # float32 sums over 160 (dx) or 512 (dW) products: a few ulps of the largest partial sums
    np.testing.assert_allclose(on[0].reshape(-1, 96), g2.astype(np.float64) @ w, rtol=1e-4,
                               atol=1e-4)
    np.testing.assert_allclose(on[1], g2.T.astype(np.float64) @ x2, rtol=1e-4, atol=1e-4)
    if bias:
        np.testing.assert_allclose(on[2], g2.astype(np.float64).sum(0), rtol=1e-4, atol=1e-4)


@pytest.mark.parity
def test_pair_matches_torch(pairs, rng):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    lin = nn.Linear(128, 256)
    ref = torch.nn.Linear(128, 256)
    ref.load_state_dict({k: torch.from_numpy(v.numpy().copy())
                         for k, v in lin.state_dict().items()})
    x = rng.standard_normal((4, 64, 128)).astype(np.float32)
    dx, dw, db, g = _grads(x, (4, 64, 256), lin)
    assert len(pairs) == 1
    xt = torch.tensor(x, requires_grad=True)
    ref(xt).backward(torch.tensor(g))
    # float32 against MKL: different summation orders over 256 (dx) or 256 rows (dW)
    np.testing.assert_allclose(dx, xt.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(dw, ref.weight.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(db, ref.bias.grad.numpy(), rtol=1e-4, atol=1e-4)


def test_pair_non_contiguous_input_and_float64(pairs, rng):
    lin = nn.Linear(96, 160).double()
    x = rng.standard_normal((96, 2, 300)).transpose(2, 1, 0)  # (300, 2, 96), permuted
    dx, dw, db, g = _grads(x, (300, 2, 160), lin)
    assert len(pairs) == 1
    g2, x2, w = g.reshape(-1, 160), np.ascontiguousarray(x).reshape(-1, 96), \
        lin.weight.detach().numpy()
    np.testing.assert_allclose(dx.reshape(-1, 96), g2 @ w, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dw, g2.T @ x2, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(db, g2.sum(0), rtol=1e-12, atol=1e-12)


def test_pair_gradcheck(pairs, rng, monkeypatch):
    monkeypatch.setattr(L, "_PAIR_MIN_MACS", 0)  # the pair on a product small enough to check
    lin = nn.Linear(4, 3).double()
    x = ember.tensor(rng.standard_normal((2, 5, 4)), requires_grad=True)
    assert gradcheck(lambda x, w, b: nn.functional.linear(x, w, b), (x, lin.weight, lin.bias))
    assert pairs


def test_pair_accumulates_runs_hooks_and_retains_the_graph(pairs, rng):
    lin = nn.Linear(96, 160)
    x = ember.tensor(rng.standard_normal((512, 96)).astype(np.float32), requires_grad=True)
    seen = []
    lin.weight.register_hook(lambda g: seen.append(g.shape) or g * 2)
    y = lin(x).sum()
    y.backward(retain_graph=True)
    first = (x.grad.numpy().copy(), lin.weight.grad.numpy().copy(), lin.bias.grad.numpy().copy())
    y.backward()  # the same graph again: each .grad doubles
    assert len(pairs) == 2 and seen == [(160, 96), (160, 96)]
    np.testing.assert_allclose(x.grad.numpy(), 2 * first[0], rtol=1e-6)
    np.testing.assert_allclose(lin.weight.grad.numpy(), 2 * first[1], rtol=1e-6)
    np.testing.assert_allclose(lin.bias.grad.numpy(), 2 * first[2], rtol=1e-6)
    # the hook doubled the weight's gradient: the column sums of x, times 2
    np.testing.assert_allclose(first[1], 2 * np.broadcast_to(x.detach().numpy().sum(0),
                                                             (160, 96)), rtol=1e-4)


def test_pair_tied_weight_sums_both_uses(pairs, rng):
    w = nn.Parameter(ember.tensor(rng.standard_normal((160, 96)).astype(np.float32)))
    a = rng.standard_normal((512, 96)).astype(np.float32)
    b = rng.standard_normal((512, 160)).astype(np.float32)
    y = nn.functional.linear(ember.tensor(a, requires_grad=True), w).sum() \
        + nn.functional.linear(ember.tensor(b, requires_grad=True), w.t()).sum()
    y.backward()
    assert len(pairs) == 2
    expect = np.ones((512, 160)).T @ a + (np.ones((512, 96)).T @ b).T
    # float32 sums of 512 terms of size ~1: absolute errors of a few 1e-5
    np.testing.assert_allclose(w.grad.numpy(), expect, rtol=1e-4, atol=1e-4)


def test_pair_not_taken_for_small_empty_or_one_output(pairs, rng):
    for shape, n_out in (((8, 96), 160), ((0, 96), 160), ((512, 96), 1), ((96,), 160)):
        lin = nn.Linear(96, n_out)
        x = ember.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True)
        lin(x).sum().backward()
        assert x.grad.shape == shape and lin.weight.grad.shape == (n_out, 96)
    assert pairs == []


def test_pair_error_in_a_part_is_raised_and_the_threads_restored(pairs, rng, monkeypatch):
    from ember._kernel_threads import blas_threads_enter, blas_threads_exit
    lin = nn.Linear(96, 160)
    x = ember.tensor(rng.standard_normal((512, 96)).astype(np.float32), requires_grad=True)
    y = lin(x).sum()
    monkeypatch.setattr(L, "_column_sums", lambda g2: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        y.backward()
    before = blas_threads_enter(2)  # 0: OpenBLAS was back at two threads already
    blas_threads_exit(before)
    assert before == 0
