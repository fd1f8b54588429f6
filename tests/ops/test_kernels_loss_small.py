"""The one-kernel small cross-entropy (NOTE [Small cross-entropy in one kernel]) against the
NumPy path it stands in for, its fallbacks and its errors."""

import numpy as np
import pytest

import ember
from ember.ops._kernels import loss

F = ember.nn.functional


def _both_paths(monkeypatch, fn):
    """fn() on the small path and with the small path off (the NumPy passes)."""
    calls = []
    kernel = loss._k_cross_entropy_small

    def counting(*args):
        calls.append(1)
        return kernel(*args)

    monkeypatch.setattr(loss, "_k_cross_entropy_small", counting)
    small = fn()
    assert calls, "the small path was not taken"
    monkeypatch.setattr(loss, "_SMALL_CE", 0)
    n = len(calls)
    big = fn()
    assert len(calls) == n, "the small path was taken with _SMALL_CE = 0"
    return small, big


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
@pytest.mark.parametrize("weighted", [False, True])
def test_small_matches_numpy_path(monkeypatch, dtype, reduction, smoothing, weighted):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 10)).astype(dtype)
    t = rng.integers(0, 10, 8)
    t[3] = -100  # an ignored row
    w = rng.random(10).astype(dtype) if weighted else None

    def run():
        xe = ember.from_numpy(x.copy()).requires_grad_()
        out = F.cross_entropy(xe, ember.from_numpy(t), None if w is None else ember.from_numpy(w),
                              reduction=reduction, label_smoothing=smoothing)
        out.sum().backward()
        return out.detach().numpy(), xe.grad.numpy()

    (l1, g1), (l2, g2) = _both_paths(monkeypatch, run)
    tol = {"rtol": 1e-5, "atol": 1e-6} if dtype == np.float32 else {"rtol": 1e-12, "atol": 1e-14}
    assert l1.dtype == l2.dtype == dtype
    np.testing.assert_allclose(l1, l2, **tol)
    np.testing.assert_allclose(g1, g2, **tol)


def test_small_non_finite_rows_match_numpy_path(monkeypatch):
    inf, nan = float("inf"), float("nan")
    x = np.array([[0.0, nan, 1.0], [-inf, -inf, -inf], [inf, 1.0, 0.0], [1.0, 2.0, 3.0]],
                 np.float32)
    t = np.array([0, 1, 1, 2])
    small, big = _both_paths(monkeypatch, lambda: loss.cross_entropy_forward(
        x, t, None, -100, 0.0, "none")[0])
    np.testing.assert_array_equal(np.isnan(small), np.isnan(big))
    np.testing.assert_allclose(small[~np.isnan(small)], big[~np.isnan(big)], rtol=1e-6)


def test_small_all_ignored_mean_is_nan():
    out = loss.cross_entropy_forward(np.zeros((2, 3), np.float32), np.array([-1, -1]), None, -1,
                                     0.0, "mean")[0]
    assert out.dtype == np.float32 and np.isnan(out)


def test_small_bad_target_raises_in_forward_and_backward():
    with pytest.raises(IndexError, match=r"cross_entropy: Target 5 is out of bounds; expected "
                                         r"class indices in \[0, 4\)"):
        F.cross_entropy(ember.randn(3, 4), ember.tensor([0, 5, 1]))
    with pytest.raises(IndexError, match="Target -2 is out of bounds"):
        F.cross_entropy(ember.randn(3, 4), ember.tensor([0, -2, 1]))
    # a target changed behind the version counter (through a NumPy alias) after the forward
    x = ember.randn(3, 4, requires_grad=True)
    t = ember.tensor([0, 1, 2])
    out = F.cross_entropy(x, t)
    t.numpy()[1] = 7
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        out.backward()


def test_other_layouts_and_target_dtypes_fall_back(monkeypatch):
    calls = []
    kernel = loss._k_cross_entropy_small
    monkeypatch.setattr(loss, "_k_cross_entropy_small", lambda *a: calls.append(1) or kernel(*a))
    rng = np.random.default_rng(1)
    x = rng.standard_normal((10, 6)).astype(np.float32)
    t = rng.integers(0, 6, 6).astype(np.uint8)
    # a transposed (non-contiguous) view and a uint8 target: same values as the copies
    got = F.cross_entropy(ember.from_numpy(x).t(), ember.from_numpy(t))
    want = F.cross_entropy(ember.from_numpy(np.ascontiguousarray(x.T)),
                           ember.from_numpy(t.astype(np.int64)))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    # a large batch goes through the NumPy passes
    n = len(calls)
    F.cross_entropy(ember.randn(1000, 10), ember.zeros(1000, dtype=ember.int64))
    assert len(calls) == n


def test_small_path_double_backward_matches_gradcheck():
    x = ember.randn(4, 5, dtype=ember.float64, requires_grad=True)
    t = ember.tensor([0, 4, 2, 1])
    assert ember.autograd.gradcheck(lambda a: F.cross_entropy(a, t, label_smoothing=0.1), (x,))
    assert ember.autograd.gradgradcheck(lambda a: F.cross_entropy(a, t), (x,))
