"""ember/ops/_kernels/gelu.py: the vectorised GELU (float32 erf form, tanh form) against a
float64 reference, its fused backward against the recorded one, and torch."""

import numpy as np
import pytest
from scipy.special import erfc

import ember
import ember.nn.functional as F
from ember.ops._kernels import gelu as kgelu


def _gelu_erf_ref(x):
    """x Phi(x) in float64 through erfc (1 + erf(x) cancels for negative x)."""
    x = x.astype(np.float64)
    return 0.5 * x * erfc(-x / np.sqrt(2))


def test_gelu_erf_float32_within_eight_ulp(rng):
    x = np.concatenate([rng.uniform(-20, 20, 50000), rng.standard_normal(50000),
                        rng.uniform(-6, -1, 50000),
                        [0.0, -0.0, 0.8 * np.sqrt(2), -0.8 * np.sqrt(2), -9.0, 14.0]])
    x = x.astype(np.float32)
    y = kgelu.gelu_forward(x, "none", np.empty_like(x))
    with np.errstate(under="ignore"):
        ref = _gelu_erf_ref(x).astype(np.float32)
    # computed in float32 (module docstring): a few ulp, where 1 + erf would lose hundreds
    np.testing.assert_array_max_ulp(y, ref, maxulp=8)
    assert np.signbit(y[x == 0]).tolist() == np.signbit(x[x == 0]).tolist()


def test_gelu_erf_float32_edges_match_the_numpy_path():
    x = np.array([np.inf, -np.inf, np.nan, -200.0, 200.0], np.float32)
    y = kgelu.gelu_forward(x, "none", np.empty_like(x))
    with np.errstate(all="ignore"):
        ref = ember.ops.unary._gelu_np(x).astype(np.float32)
    np.testing.assert_array_equal(y, ref)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_fused_backward_equals_recorded_backward(rng, approximate, dtype):
    a = (rng.standard_normal((5, 7)) * 4).astype(dtype)
    w = ember.tensor(rng.standard_normal((5, 7)).astype(dtype))
    grads = []
    for create_graph in (False, True):
        x = ember.tensor(a, requires_grad=True)
        (gx,) = ember.autograd.grad((F.gelu(x, approximate=approximate) * w).sum(), x,
                                    create_graph=create_graph)
        grads.append(gx.detach().numpy())
    tol = 2e-6 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(grads[0], grads[1], rtol=tol, atol=tol)


def test_gelu_fused_noncontiguous_and_0d(rng):
    a = rng.standard_normal((6, 8)).astype(np.float32)
    x = ember.tensor(a)[:, ::2]
    np.testing.assert_allclose(F.gelu(x).numpy(), _gelu_erf_ref(a[:, ::2]), rtol=1e-6)
    s = ember.tensor(np.float32(1.5), requires_grad=True)
    y = F.gelu(s)
    y.backward()
    assert y.shape == () and s.grad.shape == ()


@pytest.mark.parity
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_matches_torch(rng, approximate, dtype):
    torch = pytest.importorskip("torch")
    a = (rng.standard_normal((64, 33)) * 3).astype(dtype)
    g = rng.standard_normal(a.shape).astype(dtype)
    ours, ref = ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    y = F.gelu(ours, approximate=approximate)
    r = torch.nn.functional.gelu(ref, approximate=approximate)
    y.backward(ember.tensor(g))
    r.backward(torch.tensor(g))
    tol = {"rtol": 2e-6, "atol": 1e-6} if dtype == np.float32 else {"rtol": 1e-12, "atol": 1e-14}
    np.testing.assert_allclose(y.detach().numpy(), r.detach().numpy(), **tol)
    np.testing.assert_allclose(ours.grad.numpy(), ref.grad.numpy(), **tol)
