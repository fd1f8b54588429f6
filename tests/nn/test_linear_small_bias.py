"""Linear's small-batch forward with the bias added in the GEMM's result pass
(_backend.gemm(bias=), NOTE [GEMM orientation]) and its fallbacks."""

import numpy as np
import pytest

import ember
from ember._backend import gemm

F = ember.nn.functional


@pytest.mark.parametrize("rows", [0, 1, 2, 8, 64, 65, 300])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_linear_with_bias_matches_numpy(rows, dtype):
    rng = np.random.default_rng(rows)
    x = rng.standard_normal((rows, 33)).astype(dtype)
    w = rng.standard_normal((17, 33)).astype(dtype)
    b = rng.standard_normal(17).astype(dtype)
    got = F.linear(ember.from_numpy(x), ember.from_numpy(w), ember.from_numpy(b))
    tol = 1e-5 if dtype == np.float32 else 1e-12
    assert got.dtype == ember.from_numpy(x).dtype and got.is_contiguous()
    np.testing.assert_allclose(got.numpy(), x @ w.T + b, rtol=tol, atol=tol)


def test_gemm_bias_turned_and_plain():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((8, 32)).astype(np.float32)
    w = rng.standard_normal((16, 32)).astype(np.float32)
    b = rng.standard_normal(16).astype(np.float32)
    for left in (a, a[:1], np.asfortranarray(a)):
        np.testing.assert_allclose(gemm(left, w.T, bias=b), left @ w.T + b, rtol=1e-5,
                                   atol=1e-5)
        np.testing.assert_allclose(gemm(left, w.T), left @ w.T, rtol=1e-5, atol=1e-5)


def test_non_contiguous_input_and_mixed_layouts_fall_back():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((33, 8)).astype(np.float32)
    w = rng.standard_normal((5, 33)).astype(np.float32)
    b = rng.standard_normal(5).astype(np.float32)
    xt = ember.from_numpy(x).t()  # (8, 33), not contiguous
    got = F.linear(xt, ember.from_numpy(w), ember.from_numpy(b))
    np.testing.assert_allclose(got.numpy(), x.T @ w.T + b, rtol=1e-5, atol=1e-5)
    with pytest.raises(RuntimeError, match="linear: expected input, weight and bias to have "
                                           "the same dtype"):
        F.linear(ember.from_numpy(x.T.copy()), ember.from_numpy(w),
                 ember.from_numpy(b.astype(np.float64)))


def test_small_batch_gradients_gradcheck():
    x = ember.randn(4, 6, dtype=ember.float64, requires_grad=True)
    w = ember.randn(3, 6, dtype=ember.float64, requires_grad=True)
    b = ember.randn(3, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(F.linear, (x, w, b))
    assert ember.autograd.gradgradcheck(F.linear, (x, w, b))


def test_small_batch_under_vmap_matches_loop():
    x = ember.randn(5, 4, 6)
    w = ember.randn(3, 6)
    b = ember.randn(3)
    got = ember.func.vmap(lambda r: F.linear(r, w, b))(x)
    want = ember.stack([F.linear(r, w, b) for r in x])
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(1, 1, 33), (2, 3, 33), (1, 4, 2, 33), (0, 2, 33), (2, 0)])
@pytest.mark.parametrize("with_bias", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_small_rows_any_leading_dims_match_numpy(shape, with_bias, dtype):
    # a decoding step's (1, 1, d) input takes the small-product branch first; an empty last
    # dim does not (nothing to reshape to rows) and gives the bias
    rng = np.random.default_rng(len(shape))
    x = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal((17, shape[-1])).astype(dtype)
    b = rng.standard_normal(17).astype(dtype)
    got = F.linear(ember.from_numpy(x), ember.from_numpy(w),
                   ember.from_numpy(b) if with_bias else None)
    want = x @ w.T + (b if with_bias else 0)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    assert got.shape == want.shape and got.is_contiguous()
    np.testing.assert_allclose(got.numpy(), want, rtol=tol, atol=tol)


def test_small_rows_gradients_gradcheck():
    x = ember.randn(1, 2, 6, dtype=ember.float64, requires_grad=True)
    w = ember.randn(3, 6, dtype=ember.float64, requires_grad=True)
    b = ember.randn(3, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(F.linear, (x, w, b))
    assert ember.autograd.gradcheck(F.linear, (x, w))
