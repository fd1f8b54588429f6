"""Half-Cauchy distribution."""

from __future__ import annotations

import math

import ember

from .cauchy import Cauchy
from .half_normal import _FoldedAtZero
from .transforms import AbsTransform

__all__ = ["HalfCauchy"]


class HalfCauchy(_FoldedAtZero):
    """|X| for X ~ Cauchy(0, scale)."""

    def __init__(self, scale, validate_args=None):
        base_dist = Cauchy(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return ember.full(self._extended_shape(), math.inf, dtype=self.scale.dtype)

    @property
    def variance(self):
        return self.base_dist.variance
