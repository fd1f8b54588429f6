"""KL divergences between different families (registered into kl.py's table on import)."""

from __future__ import annotations

import math

import ember

from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .continuous_bernoulli import ContinuousBernoulli
from .exponential import Exponential
from .gamma import Gamma
from .gumbel import Gumbel
from .kl import (
    _cb_expected_log,
    _gamma_expected_log,
    _gumbel_expected_neg_log,
    _infinite_like,
    _normal_expected_neg_log,
    _uniform_mean_log,
    register_kl,
)
from .laplace import Laplace
from .normal import Normal
from .pareto import Pareto
from .poisson import Poisson
from .uniform import Uniform
from .utils import euler_constant

# ---- across families -------------------------------------------------------------------------

@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(Poisson, Bernoulli)
@register_kl(Poisson, Binomial)
def _kl_poisson_infinity(p, q):
    return _infinite_like(p.rate)  # a Poisson puts mass where the other has none


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return -p.entropy() - _cb_expected_log(q, p.mean)


def _beta_mean_log(p):
    return ember.digamma(p.concentration1) - ember.digamma(p.concentration1 + p.concentration0)


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    return -p.entropy() - _gamma_expected_log(q, p.mean, _beta_mean_log(p))


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    return -p.entropy() + _normal_expected_neg_log(q, p.mean, p.variance)


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return ember.where((q.low > 0) | (q.high < 1), _infinite_like(result), result)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() - ember.log(q.rate) + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    return -p.entropy() + _normal_expected_neg_log(q, p.mean, p.variance)


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return ember.where((q.low > 0) | (q.high < 1), _infinite_like(result), result)


@register_kl(Beta, Pareto)
@register_kl(ContinuousBernoulli, Pareto)
def _kl_bounded_pareto(p, q):
    return _infinite_like(p.mean)  # Pareto's support starts at its scale


@register_kl(Exponential, Beta)
@register_kl(Exponential, ContinuousBernoulli)
@register_kl(Exponential, Pareto)
@register_kl(Exponential, Uniform)
@register_kl(Gamma, Beta)
@register_kl(Gamma, ContinuousBernoulli)
@register_kl(Gamma, Pareto)
@register_kl(Gamma, Uniform)
@register_kl(Pareto, Beta)
@register_kl(Pareto, ContinuousBernoulli)
@register_kl(Pareto, Uniform)
def _kl_halfline_to_narrower(p, q):
    return _infinite_like(p.mean)  # p has mass outside q's support


@register_kl(Gumbel, Beta)
@register_kl(Gumbel, ContinuousBernoulli)
@register_kl(Gumbel, Exponential)
@register_kl(Gumbel, Gamma)
@register_kl(Gumbel, Pareto)
@register_kl(Gumbel, Uniform)
@register_kl(Laplace, Beta)
@register_kl(Laplace, ContinuousBernoulli)
@register_kl(Laplace, Exponential)
@register_kl(Laplace, Gamma)
@register_kl(Laplace, Pareto)
@register_kl(Laplace, Uniform)
@register_kl(Normal, Beta)
@register_kl(Normal, ContinuousBernoulli)
@register_kl(Normal, Exponential)
@register_kl(Normal, Gamma)
@register_kl(Normal, Pareto)
@register_kl(Normal, Uniform)
def _kl_real_line_to_narrower(p, q):
    return _infinite_like(p.loc)  # p has mass on the whole real line


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    ratio = q.rate / p.rate
    t1 = -q.concentration * ember.log(ratio)
    return (t1 + ratio + q.concentration.lgamma() + q.concentration * euler_constant
            - (1 + euler_constant))


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    # E_p[exp(-x / beta)] = rate / (rate + 1 / beta)
    scale_rate_prod = p.rate * q.scale
    exp_term = scale_rate_prod / (scale_rate_prod + 1)
    return -p.entropy() + _gumbel_expected_neg_log(q, p.mean, exp_term)


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    return -p.entropy() + _normal_expected_neg_log(q, p.mean, p.variance)


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    # E_p[exp(-x / beta)] = (1 + 1 / (rate beta))^-concentration
    exp_term = (1 + (p.rate * q.scale).reciprocal()).pow(-p.concentration)
    return -p.entropy() + _gumbel_expected_neg_log(q, p.mean, exp_term)


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    return -p.entropy() + _normal_expected_neg_log(q, p.mean, p.variance)


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    return -p.entropy() + _normal_expected_neg_log(q, p.mean, p.variance)


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    return -p.entropy() + _normal_expected_neg_log(q, p.loc, 2 * p.scale.pow(2))


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    # E_p[exp(-x / beta)] = exp(-mu / beta + sigma^2 / (2 beta^2))
    exp_term = ember.exp(-p.loc / q.scale + (p.scale / q.scale).pow(2) / 2)
    return -p.entropy() + _gumbel_expected_neg_log(q, p.loc, exp_term)


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    # E|x - m| for x ~ N(mu, s^2): s sqrt(2/pi) exp(-d^2 / 2s^2) + d erf(d / (s sqrt 2))
    d = p.loc - q.loc
    abs_dev = (p.scale * math.sqrt(2 / math.pi) * ember.exp(-(d / p.scale).pow(2) / 2)
               + d * ember.erf(d / (p.scale * math.sqrt(2))))
    return -p.entropy() + ember.log(2 * q.scale) + abs_dev / q.scale


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    result = -p.entropy() - q.rate.log() + q.rate * p.mean
    return ember.where(p.alpha <= 1, _infinite_like(result), result)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    mean_log = p.scale.log() + p.alpha.reciprocal()
    result = -p.entropy() - _gamma_expected_log(q, p.mean, mean_log)
    return ember.where(p.alpha <= 1, _infinite_like(result), result)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    result = -p.entropy() + _normal_expected_neg_log(q, p.mean, p.variance)
    return ember.where(p.alpha <= 2, _infinite_like(result), result)


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    # E_p[log x] and E_p[log(1 - x)] over [low, high]
    width = p.high - p.low
    mean_log = _uniform_mean_log(p)
    mean_log1m = (ember.xlogy(1 - p.low, 1 - p.low) - ember.xlogy(1 - p.high, 1 - p.high)) / \
        width - 1
    log_beta = (q.concentration1.lgamma() + q.concentration0.lgamma()
                - (q.concentration1 + q.concentration0).lgamma())
    expected_log_q = ((q.concentration1 - 1) * mean_log + (q.concentration0 - 1) * mean_log1m
                      - log_beta)
    result = -p.entropy() - expected_log_q
    return ember.where((p.low < 0) | (p.high > 1), _infinite_like(result), result)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    result = -p.entropy() - _cb_expected_log(q, p.mean)
    return ember.where((p.low < 0) | (p.high > 1), _infinite_like(result), result)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    result = -p.entropy() - q.rate.log() + q.rate * p.mean
    return ember.where(p.low < 0, _infinite_like(result), result)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    result = -p.entropy() - _gamma_expected_log(q, p.mean, _uniform_mean_log(p))
    return ember.where(p.low < 0, _infinite_like(result), result)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    # E_p[exp(-x / beta)] = beta (exp(-low / beta) - exp(-high / beta)) / (high - low)
    exp_term = q.scale * (ember.exp(-p.low / q.scale) - ember.exp(-p.high / q.scale)) / (
        p.high - p.low)
    return -p.entropy() + _gumbel_expected_neg_log(q, p.mean, exp_term)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    return -p.entropy() + _normal_expected_neg_log(q, p.mean, p.variance)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    expected_log_q = (q.alpha.log() + q.alpha * q.scale.log()
                      - (q.alpha + 1) * _uniform_mean_log(p))
    result = -p.entropy() - expected_log_q
    return ember.where(p.low < q.scale, _infinite_like(result), result)
