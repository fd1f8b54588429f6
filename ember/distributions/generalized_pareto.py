"""Generalized Pareto distribution (the law of exceedances over a high threshold)."""

from __future__ import annotations

import math

import ember

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    r"""Generalized Pareto with ``loc`` :math:`\mu`, ``scale`` :math:`\sigma` and
    ``concentration`` :math:`\xi`: survival :math:`(1 + \xi z)^{-1/\xi}`, :math:`z = (x-\mu)/\sigma`
    (:math:`e^{-z}` at :math:`\xi = 0`). Exponential, Pareto and Uniform are special cases.
    Supported on :math:`x \ge \mu`, and below :math:`\mu - \sigma/\xi` when :math:`\xi < 0`.
    Sampling inverts the cdf, so ``rsample`` carries gradients to all three parameters.

    Example:
        >>> import ember
        >>> d = GeneralizedPareto(ember.tensor(0.0), ember.tensor(2.0), ember.tensor(0.25))
        >>> round(d.mean.item(), 4), round(d.cdf(ember.tensor(1.0)).item(), 4)
        (2.6667, 0.3757)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalars = all(isinstance(v, (int, float)) for v in (loc, scale, concentration))
        batch_shape = ember.Size() if scalars else self.loc.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(GeneralizedPareto, _instance)
        batch_shape = ember.Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        super(GeneralizedPareto, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _xi(self):
        """(xi == 0 mask, xi with the zeros replaced by 1 so that 1/xi stays finite)."""
        at_zero = ember.isclose(self.concentration, ember.zeros_like(self.concentration))
        return at_zero, ember.where(at_zero, ember.ones_like(self.concentration),
                                    self.concentration)

    def rsample(self, sample_shape=ember.Size()):
        u = ember.rand(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        at_zero, xi = self._xi()
        power = 1 / xi + 1
        # the density is sigma^-1 (1 + xi z)^-(1/xi + 1); at 1/xi + 1 == 0 (xi = -1, uniform)
        # the log factor is 0 even where log1p is -inf at the upper end
        tail = ember.where(power == 0, power, power * ember.log1p(xi * z))
        return -self.scale.log() - ember.where(at_zero, z, tail)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        at_zero, xi = self._xi()
        return ember.where(at_zero, -z, -ember.log1p(xi * z) / xi)

    def log_cdf(self, value):
        return ember.log1p(-ember.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return ember.exp(self.log_cdf(value))

    def icdf(self, value):
        at_zero, xi = self._xi()
        log_survival = ember.log1p(-value)
        general = self.loc + self.scale / xi * ember.expm1(-xi * log_survival)
        return ember.where(at_zero, self.loc - self.scale * log_survival, general)

    @property
    def mean(self):
        finite = self.concentration < 1
        xi = ember.where(finite, self.concentration, ember.full_like(self.concentration, 0.5))
        return ember.where(finite, self.loc + self.scale / (1 - xi),
                           ember.full_like(self.loc, math.nan))

    @property
    def variance(self):
        finite = self.concentration < 0.5
        xi = ember.where(finite, self.concentration, ember.full_like(self.concentration, 0.25))
        value = self.scale ** 2 / ((1 - xi) ** 2 * (1 - 2 * xi))
        return ember.where(finite, value, ember.full_like(self.scale, math.nan))

    @property
    def mode(self):
        return self.loc

    def entropy(self):
        return ember.broadcast_to(self.scale.log() + self.concentration + 1, self._batch_shape)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        upper = ember.where(self.concentration < 0, self.loc - self.scale / self.concentration,
                            ember.full_like(self.loc, math.inf))
        return constraints.interval(self.loc, upper)
