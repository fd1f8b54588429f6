"""ember.ops._kernels.loss against NumPy formulas and torch."""

import numpy as np
import pytest

from ember.ops._kernels import loss

TOL = {np.float64: {"rtol": 1e-10, "atol": 1e-12}, np.float32: {"rtol": 1e-5, "atol": 1e-6}}


def log_softmax_ref(x):
    x = x.astype(np.float64)
    shifted = x - x.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def cross_entropy_ref(x, t, w, ignore_index, smoothing, reduction):
    """Loss and dloss/dx straight from the definition, in float64."""
    k = x.shape[1]
    w = np.ones(k) if w is None else w.astype(np.float64)
    logp = log_softmax_ref(x)
    keep = t != ignore_index
    tt = np.where(keep, t, 0)
    # per-row target distribution q (one-hot mixed with uniform), weighted per class
    q = (1 - smoothing) * np.eye(k)[tt] * w[tt][:, None] + smoothing / k * w[None, :]
    q[~keep] = 0
    rows = -(q * logp).sum(axis=1)
    denom = (w[tt] * keep).sum()
    # d/dx of -sum_j q_j logp_j = p * sum_j q_j - q
    grad_rows = np.exp(logp) * q.sum(axis=1, keepdims=True) - q
    if reduction == "none":
        return rows, grad_rows
    if reduction == "sum":
        return rows.sum(), grad_rows
    return rows.sum() / denom, grad_rows / denom


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(7, 5), (1, 1), (3, 1000), (0, 4)])
def test_softmax_and_log_softmax_match_reference(rng, shape, dtype):
    x = (rng.standard_normal(shape) * 5).astype(dtype)
    y = loss.log_softmax_forward(x)
    assert y.dtype == dtype and y.shape == shape
    np.testing.assert_allclose(y, log_softmax_ref(x), **TOL[dtype])
    np.testing.assert_allclose(loss.softmax_forward(x), np.exp(log_softmax_ref(x)), **TOL[dtype])


def test_log_softmax_is_stable_for_huge_logits():
    x = np.array([[1e4, 0.0, -1e4], [-np.inf, 0.0, 1.0]], np.float32)
    y = loss.log_softmax_forward(x)
    np.testing.assert_allclose(y[0], [0.0, -1e4, -2e4])
    assert y[1, 0] == -np.inf and np.all(np.isfinite(y[1, 1:]))


CE_CASES = [
    # (M, K, weighted, label_smoothing)
    (7, 5, False, 0.0),
    (7, 5, True, 0.0),
    (9, 4, False, 0.3),
    (9, 4, True, 0.25),
    (1, 3, True, 0.1),
    (64, 300, True, 0.1),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("case", CE_CASES)
def test_cross_entropy_matches_reference(rng, case, reduction, dtype):
    m, k, weighted, smoothing = case
    x = (rng.standard_normal((m, k)) * 3).astype(dtype)
    t = rng.integers(0, k, m)
    t[0] = k - 1                        # the last class is reachable
    t[2::3] = -100                      # some ignored rows
    w = rng.random(k).astype(dtype) + 0.1 if weighted else None
    out, saved = loss.cross_entropy_forward(x, t, w, -100, smoothing, reduction)
    want, want_grad = cross_entropy_ref(x, t, w, -100, smoothing, reduction)
    assert out.dtype == dtype
    np.testing.assert_allclose(out, want, **TOL[dtype])
    g = rng.standard_normal(m) if reduction == "none" else np.asarray(1.7)
    gx = loss.cross_entropy_backward(g.astype(dtype), x, t, saved, w, -100, smoothing, reduction)
    scale = g[:, None] if reduction == "none" else g
    assert gx.dtype == dtype
    np.testing.assert_allclose(gx, want_grad * scale, **TOL[dtype])


def test_cross_entropy_all_ignored_mean_is_nan_with_zero_grad():
    x = np.zeros((3, 4))
    t = np.full(3, 2, np.int64)
    out, saved = loss.cross_entropy_forward(x, t, None, 2, 0.0, "mean")
    assert np.isnan(out)
    gx = loss.cross_entropy_backward(np.asarray(1.0), x, t, saved, None, 2, 0.0, "mean")
    np.testing.assert_array_equal(gx, 0)


def test_cross_entropy_empty_batch_and_bad_target():
    out, saved = loss.cross_entropy_forward(np.zeros((0, 4)), np.zeros(0, np.int64), None,
                                            -100, 0.0, "sum")
    assert out == 0
    gx = loss.cross_entropy_backward(np.asarray(1.0), np.zeros((0, 4)), np.zeros(0, np.int64),
                                     saved, None, -100, 0.0, "sum")
    assert gx.shape == (0, 4)
    with pytest.raises(IndexError, match="out of bounds"):
        loss.cross_entropy_forward(np.zeros((2, 4)), np.array([1, 4]), None, -100, 0.0, "mean")
    with pytest.raises(ValueError, match="reduction"):
        loss.cross_entropy_forward(np.zeros((2, 4)), np.array([1, 3]), None, -100, 0.0, "avg")


# ---------------------------------------------------------------------------------------------
# torch parity


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parity
def test_log_softmax_matches_torch(rng, dtype):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    x = (rng.standard_normal((11, 37)) * 4).astype(dtype)
    np.testing.assert_allclose(loss.log_softmax_forward(x),
                               torch.log_softmax(torch.tensor(x), 1).numpy(), **TOL[dtype])
    np.testing.assert_allclose(loss.softmax_forward(x),
                               torch.softmax(torch.tensor(x), 1).numpy(), **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("case", CE_CASES)
@pytest.mark.parity
def test_cross_entropy_matches_torch(rng, case, reduction, dtype):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    m, k, weighted, smoothing = case
    x = (rng.standard_normal((m, k)) * 3).astype(dtype)
    t = rng.integers(0, k, m)
    t[::4] = 1 % k                      # ignore_index is a real class here
    w = rng.random(k).astype(dtype) + 0.1 if weighted else None
    tx = torch.tensor(x, requires_grad=True)
    ty = torch.nn.functional.cross_entropy(
        tx, torch.tensor(t), weight=None if w is None else torch.tensor(w),
        ignore_index=1 % k, reduction=reduction, label_smoothing=smoothing)
    g = (rng.standard_normal(m) if reduction == "none" else np.asarray(0.8)).astype(dtype)
    ty.backward(torch.tensor(g))
    out, saved = loss.cross_entropy_forward(x, t, w, 1 % k, smoothing, reduction)
    gx = loss.cross_entropy_backward(g, x, t, saved, w, 1 % k, smoothing, reduction)
    np.testing.assert_allclose(out, ty.detach().numpy(), **TOL[dtype])
    np.testing.assert_allclose(gx, tx.grad.numpy(), **TOL[dtype])
