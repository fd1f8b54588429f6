"""Geometric distribution: failures before the first success."""

from __future__ import annotations

import numbers

import ember
import ember.nn.functional as F

from . import constraints
from ._binary import BinaryProbsLogits
from .distribution import Distribution
from .utils import _finfo, broadcast_all

__all__ = ["Geometric"]


class Geometric(BinaryProbsLogits, Distribution):
    """Number of failures before the first success in Bernoulli(``probs``) trials."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        probs_or_logits = probs if probs is not None else logits
        if isinstance(probs_or_logits, numbers.Number):
            batch_shape = ember.Size()
        else:
            batch_shape = probs_or_logits.size()
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            value = self.probs
            if not bool((value > 0).all()):
                raise ValueError(f"Expected parameter probs ({type(value).__name__} of shape "
                                 f"{tuple(value.shape)}) of distribution {self!r} to satisfy "
                                 f"the constraint Interval(lower_bound=0.0, upper_bound=1.0) "
                                 f"with probs > 0, but found invalid values:\n{value}")

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Geometric, _instance)
        batch_shape = ember.Size(batch_shape)
        self._expand_param(new, batch_shape)
        super(Geometric, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return ember.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        tiny = float(_finfo(self.probs.dtype).tiny)
        with ember.no_grad():
            u = ember.rand(shape, dtype=self.probs.dtype).clamp(min=tiny)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = probs.clone()
        # value * log(1 - p) is 0 where value == 0, even when p == 1
        probs = ember.where((probs == 1) & (value == 0), ember.zeros_like(probs), probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs,
                                                  reduction="none") / self.probs
