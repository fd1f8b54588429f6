"""Fisher-Snedecor (F) distribution."""

from __future__ import annotations

import math

import ember

from . import constraints
from ._sampling import standard_gamma
from .distribution import Distribution
from .utils import _finfo, broadcast_all

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """F distribution with ``df1`` and ``df2`` degrees of freedom."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        super().__init__(self.df1.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(FisherSnedecor, _instance)
        batch_shape = ember.Size(batch_shape)
        new.df1 = self.df1.expand(batch_shape)
        new.df2 = self.df2.expand(batch_shape)
        super(FisherSnedecor, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        df2 = self.df2.clone()
        return ember.where(df2 <= 2, ember.full_like(df2, math.nan), df2 / (df2 - 2))

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return ember.where(self.df1 <= 2, ember.full_like(mode, math.nan), mode)

    @property
    def variance(self):
        df2 = self.df2.clone()
        var = (2 * df2.pow(2) * (self.df1 + df2 - 2)
               / (self.df1 * (df2 - 2).pow(2) * (df2 - 4)))
        return ember.where(df2 <= 4, ember.full_like(var, math.nan), var)

    def rsample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        # X1 ~ Gamma(df1/2, 1/df1), X2 ~ Gamma(df2/2, 1/df2): Y = X1 / X2
        x1 = standard_gamma(0.5 * self.df1.expand(shape)) / (0.5 * self.df1.expand(shape))
        x2 = standard_gamma(0.5 * self.df2.expand(shape)) / (0.5 * self.df2.expand(shape))
        tiny = float(_finfo(x2.dtype).tiny)
        x2 = x2.clamp(min=tiny)
        return (x1 / x2).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        ct1 = self.df1 * 0.5
        ct2 = self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * ember.log(value)
        t3 = (ct1 + ct2) * ember.log1p(ct3 * value)
        return t1 + t2 - t3
