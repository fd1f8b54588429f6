"""Sampling (moments and KS tests at a fixed seed), rsample gradients, validation, expand, and
transforms (inverse round trips, log-Jacobians against autograd)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import ember
import ember.distributions as D
from ember.autograd import gradcheck
from ember.distributions import constraints
from ember.distributions import transforms as T

N = 20000


def _f64(*values):
    return [ember.tensor(v, dtype=ember.float64) for v in values]


CONTINUOUS = {  # distribution, the matching scipy frozen distribution
    "Normal": (lambda: D.Normal(*_f64(0.5, 2.0)), stats.norm(0.5, 2.0)),
    "Uniform": (lambda: D.Uniform(*_f64(-1.0, 3.0)), stats.uniform(-1.0, 4.0)),
    "Laplace": (lambda: D.Laplace(*_f64(0.5, 1.5)), stats.laplace(0.5, 1.5)),
    "Exponential": (lambda: D.Exponential(*_f64(1.7)), stats.expon(scale=1 / 1.7)),
    "Gamma": (lambda: D.Gamma(*_f64(0.6, 2.0)), stats.gamma(0.6, scale=0.5)),
    "Beta": (lambda: D.Beta(*_f64(2.0, 0.7)), stats.beta(2.0, 0.7)),
    "StudentT": (lambda: D.StudentT(*_f64(4.0, 1.0, 2.0)), stats.t(4.0, 1.0, 2.0)),
    "Gumbel": (lambda: D.Gumbel(*_f64(1.0, 2.0)), stats.gumbel_r(1.0, 2.0)),
    "LogNormal": (lambda: D.LogNormal(*_f64(0.2, 0.5)), stats.lognorm(0.5, scale=np.exp(0.2))),
    "Weibull": (lambda: D.Weibull(*_f64(1.5, 2.5)), stats.weibull_min(2.5, scale=1.5)),
    "Pareto": (lambda: D.Pareto(*_f64(1.0, 3.0)), stats.pareto(3.0)),
    "HalfNormal": (lambda: D.HalfNormal(*_f64(1.3)), stats.halfnorm(scale=1.3)),
    "Chi2": (lambda: D.Chi2(*_f64(3.0)), stats.chi2(3.0)),
    "FisherSnedecor": (lambda: D.FisherSnedecor(*_f64(5.0, 7.0)), stats.f(5.0, 7.0)),
    "Cauchy": (lambda: D.Cauchy(*_f64(0.0, 1.0)), stats.cauchy()),
    "VonMises": (lambda: D.VonMises(*_f64(0.5, 2.0)), stats.vonmises(2.0, loc=0.5)),
    "Kumaraswamy": (lambda: D.Kumaraswamy(*_f64(2.0, 3.0)), None),
    "InverseGamma": (lambda: D.InverseGamma(*_f64(3.0, 2.0)), stats.invgamma(3.0, scale=2.0)),
}


@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_samples_pass_a_ks_test_against_scipy(name):
    make, ref = CONTINUOUS[name]
    ember.manual_seed(1)
    d = make()
    x = d.sample((N,)).numpy()
    assert x.shape == (N,)
    if ref is None:  # check against the distribution's own CDF
        cdf = lambda v: d.cdf(ember.tensor(v)).numpy()  # noqa: E731
    else:
        cdf = ref.cdf
    assert stats.kstest(x, cdf).pvalue > 1e-3


@pytest.mark.parametrize("d, mean, var", [
    (lambda: D.Poisson(ember.tensor(3.5)), 3.5, 3.5),
    (lambda: D.Binomial(10, ember.tensor(0.3)), 3.0, 2.1),
    (lambda: D.Geometric(ember.tensor(0.25)), 3.0, 12.0),
    (lambda: D.NegativeBinomial(ember.tensor(4.0), ember.tensor(0.4)), 4 * 0.4 / 0.6,
     4 * 0.4 / 0.36),
    (lambda: D.Bernoulli(ember.tensor(0.3)), 0.3, 0.21),
])
def test_discrete_sample_moments(d, mean, var):
    ember.manual_seed(2)
    x = d().sample((N,)).numpy().astype(np.float64)
    assert abs(x.mean() - mean) < 5 * np.sqrt(var / N)
    assert abs(x.var() - var) < 0.1 * var


def test_categorical_and_multinomial_frequencies_chi_square():
    ember.manual_seed(3)
    probs = np.array([0.1, 0.2, 0.3, 0.4])
    counts = np.bincount(D.Categorical(ember.tensor(probs)).sample((N,)).numpy(), minlength=4)
    assert stats.chisquare(counts, probs * N).pvalue > 1e-3
    draws = D.Multinomial(10, ember.tensor(probs)).sample((2000,)).numpy()
    assert (draws.sum(-1) == 10).all()
    assert stats.chisquare(draws.sum(0), probs * 20000).pvalue > 1e-3


def test_dirichlet_and_mvn_sample_moments():
    ember.manual_seed(4)
    alpha = np.array([0.5, 2.0, 3.5])
    x = D.Dirichlet(ember.tensor(alpha, dtype=ember.float64)).sample((N,)).numpy()
    np.testing.assert_allclose(x.mean(0), alpha / alpha.sum(), atol=0.01)
    cov = np.array([[2.0, 0.6], [0.6, 1.0]])
    y = D.MultivariateNormal(ember.zeros(2, dtype=ember.float64),
                             ember.tensor(cov)).sample((N,)).numpy()
    np.testing.assert_allclose(np.cov(y.T), cov, atol=0.08)


def _reseeded(make, param_index):
    def f(*params):
        ember.manual_seed(5)
        return make(*params).rsample((4,))
    return f


@pytest.mark.parametrize("make, params", [
    (D.Normal, (0.3, 1.2)), (D.Laplace, (0.3, 1.2)), (D.Uniform, (-0.5, 1.5)),
    (D.Exponential, (1.3,)), (D.Gamma, (0.8, 1.7)), (D.Beta, (1.5, 2.5)), (D.Chi2, (2.5,)),
    (D.StudentT, (4.0, 0.1, 1.1)), (D.Cauchy, (0.2, 0.9)), (D.Gumbel, (0.2, 0.9)),
    (D.LogNormal, (0.1, 0.6)), (D.Weibull, (1.1, 1.8)), (D.Kumaraswamy, (1.5, 2.5)),
    (D.FisherSnedecor, (4.0, 6.0)), (D.InverseGamma, (3.0, 2.0)), (D.HalfCauchy, (1.1,)),
    (lambda c: D.Dirichlet(c), (np.array([0.7, 1.5, 2.5]),)),
    (lambda p: D.RelaxedBernoulli(ember.tensor(0.5, dtype=ember.float64), p), (0.3,)),
])
def test_rsample_gradients_by_gradcheck(make, params):
    tensors = [ember.tensor(p, dtype=ember.float64, requires_grad=True) for p in params]
    assert gradcheck(_reseeded(make, 0), tuple(tensors), atol=1e-5, rtol=1e-4)


def test_mvn_rsample_gradient_through_scale_tril():
    loc = ember.tensor([0.2, -0.1], dtype=ember.float64, requires_grad=True)
    tril = ember.tensor([[1.2, 0.0], [0.4, 0.8]], dtype=ember.float64, requires_grad=True)

    def f(m, lt):
        ember.manual_seed(6)
        return D.MultivariateNormal(m, scale_tril=lt.tril()).rsample((3,))
    assert gradcheck(f, (loc, tril))


def test_validation_errors_name_the_parameter_and_constraint():
    with pytest.raises(ValueError, match=r"Expected parameter scale .* GreaterThan"):
        D.Normal(ember.tensor([0.0]), ember.tensor([-1.0]), validate_args=True)
    with pytest.raises(ValueError, match="within the support"):
        D.Exponential(ember.tensor(1.0), validate_args=True).log_prob(ember.tensor(-1.0))
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        D.Bernoulli()
    D.Normal(ember.tensor([0.0]), ember.tensor([-1.0]), validate_args=False)  # no check


def test_set_default_validate_args_turns_checks_off_and_on():
    D.Distribution.set_default_validate_args(False)
    try:
        D.Normal(0.0, -1.0)
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(0.0, -1.0)
    with pytest.raises(ValueError, match="expected True or False"):
        D.Distribution.set_default_validate_args(3)


def test_expand_and_sample_shapes():
    d = D.Normal(ember.zeros(3), ember.ones(3)).expand((2, 3))
    assert d.batch_shape == (2, 3)
    assert d.sample((4,)).shape == (4, 2, 3)
    g = D.Gamma(ember.ones(1), ember.ones(1)).expand((5,))
    assert g.rsample().shape == (5,)
    ind = D.Independent(D.Normal(ember.zeros(4, 3), ember.ones(4, 3)), 1)
    assert ind.log_prob(ember.zeros(4, 3)).shape == (4,)
    assert ind.expand((2, 4)).batch_shape == (2, 4)


def test_enumerate_support_and_perplexity():
    b = D.Bernoulli(ember.tensor([0.2, 0.7]))
    assert b.enumerate_support().shape == (2, 2)
    c = D.Categorical(logits=ember.zeros(4))
    np.testing.assert_allclose(c.perplexity().numpy(), 4.0, rtol=1e-6)
    assert c.enumerate_support(expand=False).tolist() == [0, 1, 2, 3]


def test_mixture_same_family_log_prob_is_a_log_sum_exp():
    mix = D.Categorical(ember.tensor([0.3, 0.7]))
    comp = D.Normal(ember.tensor([-1.0, 2.0]), ember.tensor([0.5, 1.5]))
    m = D.MixtureSameFamily(mix, comp)
    x = 0.4
    expected = np.log(0.3 * stats.norm(-1, 0.5).pdf(x) + 0.7 * stats.norm(2, 1.5).pdf(x))
    np.testing.assert_allclose(m.log_prob(ember.tensor(x)).item(), expected, rtol=1e-5)
    assert m.sample((7,)).shape == (7,)


def test_kl_divergence_unknown_pair_raises():
    class Mine(D.Distribution):
        arg_constraints: dict = {}
    with pytest.raises(NotImplementedError, match="No KL"):
        D.kl_divergence(Mine(), D.Normal(0.0, 1.0))


TRANSFORMS = [
    (T.ExpTransform(), lambda: np.array([-1.0, 0.3, 2.0])),
    (T.SigmoidTransform(), lambda: np.array([-3.0, 0.3, 2.0])),
    (T.TanhTransform(), lambda: np.array([-1.5, 0.3, 2.0])),
    (T.SoftplusTransform(), lambda: np.array([-1.5, 0.3, 2.0])),
    (T.AffineTransform(1.0, -2.0), lambda: np.array([-1.5, 0.3, 2.0])),
    (T.PowerTransform(ember.tensor(2.5, dtype=ember.float64)), lambda: np.array([0.5, 1.2])),
    (T.ComposeTransform([T.ExpTransform(), T.AffineTransform(0.5, 3.0)]),
     lambda: np.array([-1.0, 0.4])),
]


@pytest.mark.parametrize("t, x", TRANSFORMS, ids=[type(t).__name__ for t, _ in TRANSFORMS])
def test_scalar_transforms_invert_and_match_autograd_jacobian(t, x):
    xs = ember.tensor(x(), dtype=ember.float64, requires_grad=True)
    y = t(xs)
    np.testing.assert_allclose(t.inv(y).detach().numpy(), xs.detach().numpy(), rtol=1e-8)
    (dy,) = ember.autograd.grad(y.sum(), xs)
    np.testing.assert_allclose(t.log_abs_det_jacobian(xs, y).detach().numpy(),
                               np.log(np.abs(dy.numpy())), rtol=1e-8)


@pytest.mark.parametrize("t, n", [(T.StickBreakingTransform(), 3),
                                  (T.CorrCholeskyTransform(), 3)])
def test_vector_transforms_log_det_matches_jacobian(t, n):
    x = ember.tensor(np.random.default_rng(0).standard_normal(n), dtype=ember.float64)
    y = t(x)
    np.testing.assert_allclose(t.inv(y).numpy(), x.numpy(), rtol=1e-7, atol=1e-10)
    jac = ember.autograd.functional.jacobian(
        lambda v: t(v).reshape(-1), x).numpy()
    if isinstance(t, T.StickBreakingTransform):
        jac = jac[:-1]  # the last coordinate is determined by the others
    else:
        rows, cols = np.tril_indices(3, -1)
        jac = jac[rows * 3 + cols]
    np.testing.assert_allclose(t.log_abs_det_jacobian(x, y).item(),
                               np.log(abs(np.linalg.det(jac))), rtol=1e-7)


@pytest.mark.parametrize("c", [constraints.real, constraints.positive, constraints.unit_interval,
                               constraints.interval(-2.0, 3.0), constraints.greater_than(1.0),
                               constraints.less_than(1.0), constraints.simplex,
                               constraints.lower_cholesky, constraints.corr_cholesky,
                               constraints.positive_definite])
def test_transform_to_lands_in_the_constraint(c):
    shape = {2: (3, 3), 1: (3,)}.get(c.event_dim, (4,))
    if c is constraints.corr_cholesky:
        shape = (3,)
    x = ember.tensor(np.random.default_rng(1).standard_normal(shape), dtype=ember.float64)
    assert bool(c.check(D.transform_to(c)(x)).all())
    if c not in (constraints.lower_cholesky, constraints.positive_definite):
        assert bool(c.check(D.biject_to(c)(x)).all())


def test_biject_to_unknown_constraint_raises():
    with pytest.raises(NotImplementedError, match="Cannot transform"):
        D.biject_to(constraints.boolean)


def test_transformed_distribution_log_prob_matches_lognormal():
    base = D.Normal(ember.tensor(0.3, dtype=ember.float64), ember.tensor(0.8, dtype=ember.float64))
    td = D.TransformedDistribution(base, [T.ExpTransform()])
    x = ember.tensor([0.5, 1.5], dtype=ember.float64)
    np.testing.assert_allclose(td.log_prob(x).numpy(), stats.lognorm(0.8, scale=np.exp(0.3))
                               .logpdf(x.numpy()), rtol=1e-10)
