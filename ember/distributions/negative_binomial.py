"""Negative binomial distribution."""

from __future__ import annotations

import ember
import ember.nn.functional as F

from . import constraints
from ._binary import BinaryProbsLogits
from .distribution import Distribution
from .gamma import Gamma
from .poisson import Poisson
from .utils import broadcast_all, lazy_property

__all__ = ["NegativeBinomial"]


class NegativeBinomial(BinaryProbsLogits, Distribution):
    """Successes before ``total_count`` failures, each trial succeeding with ``probs``."""

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(NegativeBinomial, _instance)
        batch_shape = ember.Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        self._expand_param(new, batch_shape)
        super(NegativeBinomial, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.total_count * ember.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / ember.sigmoid(-self.logits)

    @lazy_property
    def _gamma(self):
        # a Gamma-Poisson mixture: rate ~ Gamma(total_count, exp(-logits))
        return Gamma(concentration=self.total_count, rate=ember.exp(-self.logits),
                     validate_args=False)

    def sample(self, sample_shape=ember.Size()):
        with ember.no_grad():
            rate = self._gamma.sample(sample_shape=sample_shape)
            return Poisson(rate, validate_args=False).sample()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized_prob = (self.total_count * F.logsigmoid(-self.logits)
                                 + value * F.logsigmoid(self.logits))
        log_normalization = (-ember.lgamma(self.total_count + value)
                             + ember.lgamma(1.0 + value) + ember.lgamma(self.total_count))
        # a total count of 0 puts all mass on value 0
        log_normalization = log_normalization.masked_fill(
            self.total_count + value == 0.0, 0.0)
        return log_unnormalized_prob - log_normalization
