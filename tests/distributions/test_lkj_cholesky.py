"""LKJCholesky: log_prob against torch, samples are valid correlation Cholesky factors with the
LKJ marginals (where torch 2.13's sampler is off), batching, expand and errors."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.distributions import LKJCholesky


@pytest.mark.parity
@pytest.mark.parametrize("dim,eta", [(2, 0.5), (3, 1.0), (4, 2.5)])
def test_lkj_log_prob_matches_torch(dim, eta):
    torch = pytest.importorskip("torch")
    ember.manual_seed(0)
    conc = ember.tensor(eta, dtype=ember.float64)
    L = LKJCholesky(dim, conc).sample((6,))
    ours = LKJCholesky(dim, conc).log_prob(L)
    ref = torch.distributions.LKJCholesky(dim, torch.tensor(eta, dtype=torch.float64)).log_prob(
        torch.tensor(L.numpy()))
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-10)
    g = ember.tensor(eta, dtype=ember.float64, requires_grad=True)
    tg = torch.tensor(eta, dtype=torch.float64, requires_grad=True)
    LKJCholesky(dim, g).log_prob(L).sum().backward()
    torch.distributions.LKJCholesky(dim, tg).log_prob(torch.tensor(L.numpy())).sum().backward()
    np.testing.assert_allclose(g.grad.item(), tg.grad.item(), rtol=1e-9)


@pytest.mark.parametrize("dim,eta", [(3, 1.0), (4, 2.0)])
def test_lkj_samples_have_lkj_marginals(dim, eta):
    ember.manual_seed(1)
    L = LKJCholesky(dim, eta).sample((40000,))
    assert LKJCholesky(dim, eta).support.check(L).all()
    C = (L @ L.mT).numpy()
    np.testing.assert_allclose(np.diagonal(C, axis1=1, axis2=2), 1.0, rtol=1e-5)
    off = np.array([C[:, i, j] for i in range(dim) for j in range(i)])
    # each correlation is 2 * Beta(eta + (d-2)/2, same) - 1: mean 0, variance 1/(2 eta + d - 1)
    np.testing.assert_allclose(off.mean(1), 0.0, atol=0.02)
    np.testing.assert_allclose(off.var(1), 1 / (2 * eta + dim - 1), rtol=0.05)


def test_lkj_batches_expand_and_errors():
    d = LKJCholesky(3, ember.tensor([0.5, 2.0]))
    assert tuple(d.batch_shape) == (2,) and tuple(d.event_shape) == (3, 3)
    assert tuple(d.sample((4,)).shape) == (4, 2, 3, 3)
    e = d.expand((5, 2))
    assert tuple(e.sample().shape) == (5, 2, 3, 3) and tuple(e.log_prob(e.sample()).shape) == (5, 2)
    assert not d.has_rsample
    with pytest.raises(ValueError, match="greater than or equal to 2. Found dim=1"):
        LKJCholesky(1)
