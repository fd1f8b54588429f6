"""Shared parts of the location-scale distributions (Laplace, Cauchy, Gumbel...)."""

from __future__ import annotations

import numbers

import ember

from .utils import broadcast_all


def init_loc_scale(dist, base, loc, scale, validate_args):
    """Broadcast ``loc`` and ``scale`` onto ``dist`` and initialise it as a ``base``."""
    dist.loc, dist.scale = broadcast_all(loc, scale)
    if isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number):
        batch_shape = ember.Size()
    else:
        batch_shape = dist.loc.size()
    base.__init__(dist, batch_shape, validate_args=validate_args)


def expand_params(dist, cls, batch_shape, names, _instance=None):
    """``dist.expand`` for distributions whose parameters are the tensors ``names``."""
    new = dist._get_checked_instance(cls, _instance)
    batch_shape = ember.Size(batch_shape)
    for name in names:
        setattr(new, name, getattr(dist, name).expand(batch_shape))
    super(cls, new).__init__(batch_shape, validate_args=False)
    new._validate_args = dist._validate_args
    return new
