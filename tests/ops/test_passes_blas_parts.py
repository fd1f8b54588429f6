"""Big elementwise passes in parts on OpenBLAS's worker (NOTE [Big passes in parts] in
ember/ops/_kernels/pointwise.py): additive attention's broadcast adds, tanh and its gradient,
Add's backward sums and the matrix-vector backward give bit for bit what they give in one call,
and match torch."""
import numpy as np
import pytest
import torch

import ember
from ember import _blas_parts
from ember.ops._kernels import pointwise, reduce


def _attention(lib, q0, k0, b0, v0, w0, dtype):
    """GNMT-S's additive attention scores (SPEC section 5) on permuted projections: values and
    the gradients of q, k, b, v."""
    q, k, b, v = (lib.tensor(a, dtype=dtype, requires_grad=True) for a in (q0, k0, b0, v0))
    e = lib.tanh(q.permute(1, 0, 2).unsqueeze(2) + k.permute(1, 0, 2).unsqueeze(1) + b)
    s = e @ v
    (s * lib.tensor(w0, dtype=dtype)).sum().backward()
    return [t.detach().numpy() for t in (s, q.grad, k.grad, b.grad, v.grad)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_additive_attention_in_parts_equals_one_call_and_torch(blas_parts_on, parts_counted, dtype):
    # odd sizes: the parts split 9 rows of (T, S) planes, 9 * 11 * 13 rows and 833 columns
    rng = np.random.default_rng(0)
    t, b, s, h = 11, 9, 13, 833
    args = (rng.standard_normal((t, b, h)), rng.standard_normal((s, b, h)),
            rng.standard_normal(h), rng.standard_normal(h) / 16, rng.standard_normal((b, t, s)))
    assert b * t * s * h >= pointwise.PASS_PARTS_MIN
    ours = _attention(ember, *args, getattr(ember, dtype))
    # tanh, two adds, tanh's gradient, the pair of sums of q + k's backward, the matrix-vector
    # backward (the bias's sum, one block, runs in one call)
    assert len(parts_counted) == 6
    _blas_parts.set_enabled(False)
    one_call = _attention(ember, *args, getattr(ember, dtype))
    assert len(parts_counted) == 6
    for got, want in zip(ours, one_call, strict=True):
        np.testing.assert_array_equal(got, want)
    ref = _attention(torch, *args, getattr(torch, dtype))
    tol = 2e-4 if dtype == "float32" else 1e-10
    for got, want in zip(ours, ref, strict=True):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())


def test_tanh_in_parts_is_numpys_bit_for_bit(blas_parts_on, parts_counted):
    rng = np.random.default_rng(1)
    for n in (pointwise.PASS_PARTS_MIN + 3, 3 * pointwise.PASS_PARTS_MIN // 2 + 17):
        x = (rng.standard_normal(n) * 4).astype(np.float32)
        x[:5] = [0.0, -0.0, np.inf, -np.inf, np.nan]
        got = pointwise.tanh(x)
        np.testing.assert_array_equal(got, np.tanh(x))
        assert np.signbit(got[1])
    assert len(parts_counted) == 2
    small = np.linspace(-3, 3, 1001)
    np.testing.assert_array_equal(pointwise.tanh(small), np.tanh(small))  # one call
    assert len(parts_counted) == 2


def test_sums_over_a_middle_run_in_parts_equal_one_call(blas_parts_on, parts_counted):
    # a bias over the middle axis of several outer blocks: the parts take whole blocks
    rng = np.random.default_rng(2)
    g = rng.standard_normal((5, 301, 701)).astype(np.float32)
    got, none = reduce.sum_to_both(g, (5, 1, 701), g.shape)
    assert none is None and len(parts_counted) == 1
    _blas_parts.set_enabled(False)
    want, _ = reduce.sum_to_both(g, (5, 1, 701), g.shape)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, g.sum(1, keepdims=True))  # NumPy's order


def test_sigmoid_grad_in_parts_on_a_permuted_layout(blas_parts_on, parts_counted):
    rng = np.random.default_rng(3)
    g = rng.standard_normal((7, 331, 457)).astype(np.float32).transpose(2, 0, 1)
    y = rng.random((7, 331, 457)).astype(np.float32).transpose(2, 0, 1)
    got = pointwise.sigmoid_grad(g, y)
    assert len(parts_counted) == 1 and got.strides == g.strides
    _blas_parts.set_enabled(False)
    want = pointwise.sigmoid_grad(g, y)
    assert len(parts_counted) == 1
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got, g * (y * (1 - y)), rtol=1e-6, atol=1e-7)
