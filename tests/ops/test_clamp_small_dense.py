"""relu / hardtanh / relu6 and their gradients on small dense arrays (the direct kernel calls in
ops/_kernels/pointwise.clamp and masked_grad) and their fallbacks."""

import numpy as np
import pytest

import ember
from ember.ops._kernels import pointwise

F = ember.nn.functional
SPECIAL = [-0.0, 0.0, float("nan"), float("inf"), float("-inf"), -2.5, 0.5, 7.0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_small_dense_clamp_keeps_signed_zero_nan_and_dtype(dtype):
    x = np.array(SPECIAL, dtype)
    for lo, hi in ((0.0, np.inf), (-1.0, 1.0), (0.0, 6.0)):
        got = pointwise.clamp(x.reshape(2, 4), lo, hi)
        want = np.array([v if np.isnan(v) else min(max(v, lo), hi) if not (v == 0) else v
                         for v in x], dtype).reshape(2, 4)
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_relu_matches_torch_including_gradient():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal((8, 16)).astype(np.float32)
    x[0, :4] = [-0.0, 0.0, np.nan, np.inf]
    xe = ember.from_numpy(x.copy()).requires_grad_()
    xt = torch.from_numpy(x.copy()).requires_grad_()
    ye, yt = F.relu(xe), torch.nn.functional.relu(xt)
    np.testing.assert_array_equal(ye.detach().numpy(), yt.detach().numpy())
    np.testing.assert_array_equal(np.signbit(ye.detach().numpy()), np.signbit(yt.detach().numpy()))
    g = np.random.default_rng(1).standard_normal((8, 16)).astype(np.float32)
    ye.backward(ember.from_numpy(g))
    yt.backward(torch.from_numpy(g))
    np.testing.assert_array_equal(xe.grad.numpy(), xt.grad.numpy())


def test_non_contiguous_and_big_inputs_take_the_general_path(monkeypatch, pool_off):
    general = []
    run = pointwise.split.run
    monkeypatch.setattr(pointwise.split, "run", lambda *a, **k: general.append(1) or run(*a, **k))
    x = np.random.default_rng(2).standard_normal((6, 5)).astype(np.float32)
    np.testing.assert_array_equal(pointwise.clamp(x, 0, np.inf), np.maximum(x, 0))
    assert not general  # small and dense: the kernel directly
    np.testing.assert_array_equal(pointwise.clamp(x.T, 0, np.inf), np.maximum(x.T, 0))
    big = np.random.default_rng(3).standard_normal(1 << 18).astype(np.float32)
    np.testing.assert_array_equal(pointwise.clamp(big, -1, 1), np.clip(big, -1, 1))
    assert len(general) == 2
    ints = np.array([-1, 2, -3])
    np.testing.assert_array_equal(F.relu(ember.from_numpy(ints)).numpy(), [0, 2, 0])


def test_relu_gradcheck_and_masked_grad_of_views():
    x = ember.randn(4, 5, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(F.relu, (x,))
    g = np.arange(20.0).reshape(4, 5)
    xs = np.linspace(-1, 1, 20).reshape(5, 4).T  # non-contiguous x
    np.testing.assert_array_equal(pointwise.masked_grad(g, xs, 0, None),
                                  np.where(xs > 0, g, 0))


def test_typed_bounds_table_stays_small_and_keeps_the_dtype():
    x = np.linspace(-2, 2, 9).astype(np.float32)
    for _ in range(200):  # NaN bounds never match a key: the table is cleared, not grown
        pointwise.clamp(x, float("nan"), 1.0)
    assert len(pointwise._BOUNDS) <= 65
    lo, hi = pointwise._typed_bounds(np.dtype(np.float32), -1.5, 1.5)
    assert type(lo) is np.float32 and type(hi) is np.float32
    np.testing.assert_array_equal(pointwise.clamp(x, -1.5, 1.5), np.clip(x, -1.5, 1.5))
