"""GeneralizedPareto beyond the shared table: negative and zero concentration, the bounded
support, rsample gradients and sample moments, against torch."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.distributions import GeneralizedPareto

torch = pytest.importorskip("torch")


def _both(loc, scale, xi):
    # float32: torch 2.13's log_prob/cdf fail for float64 parameters (a float32 zero inside)
    loc, scale, xi = (np.asarray(a, np.float32) for a in (loc, scale, xi))
    return (GeneralizedPareto(ember.tensor(loc), ember.tensor(scale), ember.tensor(xi)),
            torch.distributions.GeneralizedPareto(torch.tensor(loc), torch.tensor(scale),
                                                  torch.tensor(xi)))


@pytest.mark.parity
def test_negative_and_zero_concentration_match_torch():
    loc, scale, xi = np.array([0.0, 1.0, -0.5]), np.array([1.0, 2.0, 0.5]), np.array(
        [-0.5, -1.0, 0.0])
    ours, ref = _both(loc, scale, xi)
    x = np.array([1.5, 2.5, 0.0], np.float32)
    for method in ("log_prob", "cdf", "log_survival_function", "log_cdf"):
        np.testing.assert_allclose(getattr(ours, method)(ember.tensor(x)).numpy(),
                                   getattr(ref, method)(torch.tensor(x)).numpy(), rtol=1e-5)
    for prop in ("mean", "variance", "mode"):
        np.testing.assert_allclose(getattr(ours, prop).numpy(), getattr(ref, prop).numpy(),
                                   rtol=1e-6)
    np.testing.assert_allclose(ours.entropy().numpy(), ref.entropy().numpy(), rtol=1e-6)
    np.testing.assert_allclose(ours.support.upper_bound.numpy(),
                               ref.support.upper_bound.numpy())
    q = np.array([0.1, 0.5, 0.9], np.float32)
    np.testing.assert_allclose(ours.icdf(ember.tensor(q)).numpy(),
                               ref.icdf(torch.tensor(q)).numpy(), rtol=1e-5)


@pytest.mark.parity
def test_rsample_gradients_match_torch():
    params = [np.array([0.5, -1.0]), np.array([1.5, 0.7]), np.array([0.2, -0.3])]
    ours = [ember.tensor(p, requires_grad=True) for p in params]
    ref = [torch.tensor(p, requires_grad=True) for p in params]
    u = np.array([0.25, 0.8])
    # rsample is icdf(uniform): compare the reparameterised path on the same uniforms
    GeneralizedPareto(*ours).icdf(ember.tensor(u)).sum().backward()
    torch.distributions.GeneralizedPareto(*ref).icdf(torch.tensor(u)).sum().backward()
    for a, b in zip(ours, ref, strict=True):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10)
    assert ember.autograd.gradcheck(
        lambda loc, s, c: GeneralizedPareto(loc, s, c).icdf(ember.tensor(u)),
        [ember.tensor(p, requires_grad=True) for p in params])
    d = GeneralizedPareto(*ours)
    sample = d.rsample((3,))
    assert tuple(sample.shape) == (3, 2) and sample.requires_grad


def test_sample_moments():
    ember.manual_seed(0)
    d = GeneralizedPareto(1.0, 2.0, 0.1)
    x = d.sample((200000,))
    assert d.batch_shape == ember.Size() and tuple(x.shape) == (200000,)
    assert float(x.min()) >= 1.0
    np.testing.assert_allclose(float(x.mean()), d.mean.item(), rtol=0.02)
    np.testing.assert_allclose(float(x.var()), d.variance.item(), rtol=0.08)
    assert np.isnan(GeneralizedPareto(0.0, 1.0, 1.5).mean.item())
    e = d.expand((4,))
    assert tuple(e.batch_shape) == (4,) and tuple(e.sample().shape) == (4,)
