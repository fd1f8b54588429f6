"""Wishart against torch: every parametrisation, log_prob, entropy, moments, sampling moments
and rsample gradients (scale matrix and df)."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.distributions import Wishart

RNG = np.random.default_rng(0)
_A = RNG.standard_normal((3, 3))
SCALE = _A @ _A.T + 3 * np.eye(3)
_B = RNG.standard_normal((2, 3, 3))
VALUES = _B @ _B.transpose(0, 2, 1) + np.eye(3)
DF = np.array([4.5, 6.0])


@pytest.mark.parity
@pytest.mark.parametrize("kind", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_wishart_matches_torch(kind):
    torch = pytest.importorskip("torch")
    m = np.linalg.cholesky(SCALE) if kind == "scale_tril" else SCALE
    ours = Wishart(ember.tensor(DF), **{kind: ember.tensor(m)})
    ref = torch.distributions.Wishart(torch.tensor(DF), **{kind: torch.tensor(m)})
    assert tuple(ours.batch_shape) == (2,) and tuple(ours.event_shape) == (3, 3)
    for name in ("mean", "mode", "variance", "covariance_matrix", "precision_matrix",
                 "scale_tril"):
        np.testing.assert_allclose(getattr(ours, name).numpy(), getattr(ref, name).numpy(),
                                   rtol=1e-10, atol=1e-12, err_msg=name)
    np.testing.assert_allclose(ours.log_prob(ember.tensor(VALUES)).numpy(),
                               ref.log_prob(torch.tensor(VALUES)).numpy(), rtol=1e-10)
    np.testing.assert_allclose(ours.entropy().numpy(), ref.entropy().numpy(), rtol=1e-10)
    assert ours.has_rsample == ref.has_rsample


@pytest.mark.parity
def test_wishart_log_prob_gradients_match_torch():
    torch = pytest.importorskip("torch")
    ours = [ember.tensor(SCALE, requires_grad=True), ember.tensor(DF, requires_grad=True)]
    ref = [torch.tensor(SCALE, requires_grad=True), torch.tensor(DF, requires_grad=True)]
    Wishart(ours[1], covariance_matrix=ours[0]).log_prob(ember.tensor(VALUES)).sum().backward()
    torch.distributions.Wishart(ref[1], covariance_matrix=ref[0]).log_prob(
        torch.tensor(VALUES)).sum().backward()
    for a, b in zip(ours, ref, strict=True):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_wishart_sample_moments_and_rsample_gradient():
    d = Wishart(ember.tensor(6.0), covariance_matrix=ember.tensor(SCALE))
    ember.manual_seed(0)
    x = d.sample((20000,))
    assert tuple(x.shape) == (20000, 3, 3)
    np.testing.assert_allclose(x.numpy().mean(0), d.mean.numpy(), rtol=0.03, atol=0.3)
    np.testing.assert_allclose(x.numpy().var(0), d.variance.numpy(), rtol=0.1)
    assert np.all(np.linalg.eigvalsh(x.numpy()[:100]) > 0)
    assert d.support.check(x[:5]).all()

    tril = ember.tensor(np.linalg.cholesky(SCALE), requires_grad=True)

    def draw(L):
        ember.manual_seed(1)
        return Wishart(ember.tensor(5.0), scale_tril=L.tril(), validate_args=False).rsample((2,))

    assert ember.autograd.gradcheck(draw, [tril])
    df = ember.tensor(5.0, requires_grad=True)
    Wishart(df, scale_tril=tril).rsample().trace().backward()
    assert df.grad is not None and np.isfinite(df.grad.item())


def test_wishart_argument_errors_and_expand():
    eye = ember.eye(3)
    with pytest.raises(AssertionError, match="Exactly one of"):
        Wishart(5.0, covariance_matrix=eye, scale_tril=eye)
    with pytest.raises(ValueError, match="expected to be greater than ndim - 1 = 2"):
        Wishart(2.0, covariance_matrix=eye)
    with pytest.raises(ValueError, match="at least two-dimensional"):
        Wishart(5.0, covariance_matrix=ember.ones(3))
    with pytest.warns(UserWarning, match="Low df values"):
        Wishart(2.5, covariance_matrix=eye)
    e = Wishart(5.0, covariance_matrix=eye).expand((4,))
    assert tuple(e.batch_shape) == (4,) and tuple(e.sample().shape) == (4, 3, 3)
    assert np.isnan(Wishart(3.5, covariance_matrix=eye).mode.numpy()).all()
