"""ember.ops._kernels.norm against NumPy formulas and torch."""

import numpy as np
import pytest

from ember import _threads
from ember.ops._kernels import norm, split

TOL = {np.float64: {"rtol": 1e-10, "atol": 1e-10}, np.float32: {"rtol": 1e-4, "atol": 1e-4}}


def batchnorm_ref(x, w, b, eps):
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    mean = x.mean(axis=axes)
    invstd = 1 / np.sqrt(x.var(axis=axes) + eps)
    xhat = (x - mean.reshape(shape)) * invstd.reshape(shape)
    return xhat * w.reshape(shape) + b.reshape(shape), mean, invstd


def norm_grad_ref(g, xhat, invstd, w, axes):
    """dL/dx of y = xhat * w + b, with xhat normalised over `axes` (broadcast shapes)."""
    gw = g * w
    return invstd * (gw - gw.mean(axis=axes, keepdims=True)
                     - xhat * (gw * xhat).mean(axis=axes, keepdims=True))


BN_SHAPES = [(4, 3, 5, 7), (2, 5), (1, 3, 10), (3, 2, 1, 1, 4)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", BN_SHAPES)
def test_batchnorm_train_matches_reference(rng, shape, dtype):
    x = (rng.standard_normal(shape) * 3 + 5).astype(dtype)
    w, b = rng.standard_normal(shape[1]).astype(dtype), rng.standard_normal(shape[1]).astype(dtype)
    y, mean, invstd = norm.batchnorm_forward_train(x, w, b, 1e-5)
    x64 = x.astype(np.float64)
    y_ref, mean_ref, invstd_ref = batchnorm_ref(x64, w.astype(np.float64), b, 1e-5)
    assert y.dtype == mean.dtype == invstd.dtype == dtype
    np.testing.assert_allclose(y, y_ref, **TOL[dtype])
    np.testing.assert_allclose(mean, mean_ref, **TOL[dtype])
    np.testing.assert_allclose(invstd, invstd_ref, **TOL[dtype])

    g = rng.standard_normal(shape).astype(dtype)
    gx, gw, gb = norm.batchnorm_backward_train(g, x, w, mean, invstd, True, True)
    axes = (0,) + tuple(range(2, x.ndim))
    bshape = (1, -1) + (1,) * (x.ndim - 2)
    xhat = (x64 - mean_ref.reshape(bshape)) * invstd_ref.reshape(bshape)
    gx_ref = norm_grad_ref(g, xhat, invstd_ref.reshape(bshape), w.reshape(bshape), axes)
    np.testing.assert_allclose(gx, gx_ref, **TOL[dtype])
    np.testing.assert_allclose(gw, (g * xhat).sum(axis=axes), **TOL[dtype])
    np.testing.assert_allclose(gb, g.sum(axis=axes), **TOL[dtype])


def test_batchnorm_float32_large_mean_is_stable(rng):
    # E[x^2] - E[x]^2 would lose every digit of the variance here in float32
    x = (1e4 + rng.standard_normal((64, 2, 32))).astype(np.float32)
    _, _, invstd = norm.batchnorm_forward_train(x, None, None, 1e-5)
    var = x.astype(np.float64).var(axis=(0, 2))
    np.testing.assert_allclose(1 / invstd.astype(np.float64) ** 2 - 1e-5, var, rtol=1e-4)


def test_batchnorm_statistics_with_an_outlying_first_value(rng):
    """NOTE [Shifted sums for batch norm]: the shift is each channel's first value; one far
    from the rest (channel 0), a constant channel (variance exactly 0) and float64 agreeing
    with the two-pass reference to ~1e-12."""
    x = rng.standard_normal((16, 3, 9))
    x[0, 0, 0] = 1e3
    x[:, 1] = 7.25
    _, mean, invstd = norm.batchnorm_forward_train(x, None, None, 1e-5)
    _, mean_ref, invstd_ref = batchnorm_ref(x, np.ones(3), np.zeros(3), 1e-5)
    np.testing.assert_allclose(mean, mean_ref, rtol=1e-12)
    np.testing.assert_allclose(invstd, invstd_ref, rtol=1e-12)
    assert mean[1] == 7.25 and invstd[1] == 1 / np.sqrt(1e-5)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("which", ["both", "mean", "var"])
def test_update_running_stats_matches_the_formula(rng, dtype, which):
    mean = rng.standard_normal(5).astype(dtype)
    invstd = rng.uniform(0.5, 2.0, 5).astype(dtype)
    invstd[0] = 1 / np.sqrt(dtype(1e-5))  # variance 0 after removing eps: clamped at 0
    run_mean = rng.standard_normal(5).astype(dtype)
    run_var = rng.uniform(0.5, 2.0, 5).astype(dtype)
    count, momentum, eps = 12, 0.1, 1e-5
    var = np.maximum(1 / invstd.astype(np.float64) ** 2 - eps, 0.0) * count / (count - 1)
    want_mean = 0.9 * run_mean.astype(np.float64) + 0.1 * mean
    want_var = 0.9 * run_var.astype(np.float64) + 0.1 * var
    empty = np.empty(0, dtype)
    got_mean, got_var = run_mean.copy(), run_var.copy()
    norm.update_running_stats(mean, invstd, eps, count, momentum,
                              got_mean if which != "var" else empty,
                              got_var if which != "mean" else empty)
    tol = TOL[dtype]["rtol"] if dtype == np.float32 else 1e-15
    np.testing.assert_allclose(got_mean, want_mean if which != "var" else run_mean, rtol=tol)
    np.testing.assert_allclose(got_var, want_var if which != "mean" else run_var, rtol=tol)


def test_batchnorm_optional_weight_bias_and_flags(rng):
    x = rng.standard_normal((3, 2, 4))
    y, mean, invstd = norm.batchnorm_forward_train(x, None, None, 1e-5)
    np.testing.assert_allclose(y, batchnorm_ref(x, np.ones(2), np.zeros(2), 1e-5)[0], rtol=1e-10)
    gx, gw, gb = norm.batchnorm_backward_train(x, x, None, mean, invstd, False, False)
    assert gx is None and gw is None and gb.shape == (2,)
    with pytest.raises(ValueError, match="more than 0 values"):
        norm.batchnorm_forward_train(np.zeros((0, 2, 3)), None, None, 1e-5)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(6, 17), (1, 5), (33, 8)])
def test_layernorm_matches_reference(rng, shape, dtype):
    x = (rng.standard_normal(shape) * 2 + 3).astype(dtype)
    w, b = rng.standard_normal(shape[1]).astype(dtype), rng.standard_normal(shape[1]).astype(dtype)
    y, mean, invstd = norm.layernorm_forward(x, w, b, 1e-5)
    x64 = x.astype(np.float64)
    mean_ref = x64.mean(axis=1)
    invstd_ref = 1 / np.sqrt(x64.var(axis=1) + 1e-5)
    xhat = (x64 - mean_ref[:, None]) * invstd_ref[:, None]
    np.testing.assert_allclose(y, xhat * w + b, **TOL[dtype])
    np.testing.assert_allclose(mean, mean_ref, **TOL[dtype])
    np.testing.assert_allclose(invstd, invstd_ref, **TOL[dtype])

    g = rng.standard_normal(shape).astype(dtype)
    gx, gw, gb = norm.layernorm_backward(g, x, w, mean, invstd)
    gx_ref = norm_grad_ref(g, xhat, invstd_ref[:, None], w, 1)
    np.testing.assert_allclose(gx, gx_ref, **TOL[dtype])
    np.testing.assert_allclose(gw, (g * xhat).sum(axis=0), **TOL[dtype])
    np.testing.assert_allclose(gb, g.sum(axis=0), **TOL[dtype])


def test_layernorm_without_affine_and_empty_rows(rng):
    x = rng.standard_normal((4, 6))
    y, mean, invstd = norm.layernorm_forward(x, None, None, 1e-5)
    np.testing.assert_allclose(y.mean(axis=1), 0, atol=1e-12)
    gx, gw, gb = norm.layernorm_backward(np.ones_like(x), x, None, mean, invstd)
    np.testing.assert_allclose(gx, 0, atol=1e-10)   # a shift of every input changes nothing
    y, mean, _ = norm.layernorm_forward(np.zeros((0, 6)), None, None, 1e-5)
    gx, gw, gb = norm.layernorm_backward(y, y, None, mean, mean)
    assert gx.shape == (0, 6) and np.all(gw == 0) and np.all(gb == 0)


# ---------------------------------------------------------------------------------------------
# torch parity


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", BN_SHAPES)
@pytest.mark.parity
def test_batchnorm_train_matches_torch(rng, shape, dtype):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    x = (rng.standard_normal(shape) * 2 - 1).astype(dtype)
    w, b = rng.standard_normal(shape[1]).astype(dtype), rng.standard_normal(shape[1]).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    ty = torch.nn.functional.batch_norm(tx, None, None, tw, tb, training=True, eps=1e-5)
    ty.backward(torch.tensor(g))
    y, mean, invstd = norm.batchnorm_forward_train(x, w, b, 1e-5)
    gx, gw, gb = norm.batchnorm_backward_train(g, x, w, mean, invstd, True, True)
    for got, want in [(y, ty), (gx, tx.grad), (gw, tw.grad), (gb, tb.grad)]:
        np.testing.assert_allclose(got, want.detach().numpy(), **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(6, 17), (1, 5), (33, 8)])
@pytest.mark.parity
def test_layernorm_matches_torch(rng, shape, dtype):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    x = rng.standard_normal(shape).astype(dtype)
    w, b = rng.standard_normal(shape[1]).astype(dtype), rng.standard_normal(shape[1]).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    ty = torch.nn.functional.layer_norm(tx, (shape[1],), tw, tb, eps=1e-5)
    ty.backward(torch.tensor(g))
    y, mean, invstd = norm.layernorm_forward(x, w, b, 1e-5)
    gx, gw, gb = norm.layernorm_backward(g, x, w, mean, invstd)
    for got, want in [(y, ty), (gx, tx.grad), (gw, tw.grad), (gb, tb.grad)]:
        np.testing.assert_allclose(got, want.detach().numpy(), **TOL[dtype])


@pytest.mark.usefixtures("pool_off")
@pytest.mark.parametrize("need_x", [True, False])
def test_batchnorm_two_thread_halves_give_the_one_thread_numbers(rng, monkeypatch, need_x):
    """NOTE [Two halves on two threads]: channels split over two threads, bit for bit the
    numbers of one call (each channel's sums are taken in the same order)."""
    x = rng.standard_normal((3, 7, 5, 4)).astype(np.float32)
    w = rng.standard_normal(7).astype(np.float32)
    b = rng.standard_normal(7).astype(np.float32)
    g = rng.standard_normal(x.shape).astype(np.float32)

    def run():
        y, mean, invstd = norm.batchnorm_forward_train(x, w, b, 1e-5)
        y = y.copy()
        grads = norm.batchnorm_backward_train(g, x, w, mean, invstd, need_x, True)
        return [y, mean, invstd] + [a for a in grads if a is not None]

    calls = []
    original = split._parallel_range
    monkeypatch.setattr(split, "_parallel_range", lambda *a: calls.append(1) or original(*a))
    monkeypatch.setattr(_threads, "_requested", [2])  # the kernel threads' count
    monkeypatch.setattr(split, "_MIN_WORK", 0)
    halves = run()
    assert len(calls) == 2
    monkeypatch.setattr(split, "_MIN_WORK", 1 << 62)
    whole = run()
    assert len(calls) == 2
    for a, r in zip(halves, whole, strict=True):
        np.testing.assert_array_equal(a, r)
    ref_y = batchnorm_ref(x.astype(np.float64), w, b, 1e-5)[0]
    np.testing.assert_allclose(halves[0], ref_y, **TOL[np.float32])
