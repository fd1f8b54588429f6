"""Von Mises distribution (a circular normal)."""

from __future__ import annotations

import math

import numpy as np
from scipy import special

import ember
from ember.ops.random import _gen

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]


def _log_modified_bessel_fn(x, order=0):
    """log I_order(x) for order 0 or 1, differentiable in x.

    I0' = I1 and I1' = I0 - I1/x; exponentially scaled SciPy values keep large x finite.
    """
    return _LogBessel.apply(x, order)


class _LogBessel(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x, order):
        xs = x.detach().numpy().astype(np.float64)
        scaled = special.i0e(xs) if order == 0 else special.i1e(xs)
        value = np.log(scaled) + np.abs(xs)
        ctx.order = order
        ctx.save_for_backward(x)
        return ember.tensor(value.astype(x.detach().numpy().dtype), dtype=x.dtype)

    @staticmethod
    def backward(ctx, grad):
        # ember ops (exponentially scaled, so the ratio stays finite for large x), not NumPy:
        # the second derivative of log_prob needs this backward to be differentiable too
        (x,) = ctx.saved_tensors
        i0e, i1e = ember.special.i0e(x), ember.special.i1e(x)
        if ctx.order == 0:
            return grad * (i1e / i0e), None  # d log I0 / dx = I1 / I0
        ratio = i0e / i1e - 1 / x  # d log I1 / dx = I0 / I1 - 1 / x
        return grad * ember.where(x == 0, math.inf, ratio), None


def _rejection_sample(loc, concentration, proposal_r, shape):
    """Best & Fisher's (1979) rejection sampler for the von Mises, on NumPy arrays."""
    rng = _gen(None)
    kappa = np.broadcast_to(concentration, shape).astype(np.float64)
    r = np.broadcast_to(proposal_r, shape).astype(np.float64)
    out = np.empty(shape, np.float64)
    todo = np.ones(shape, bool)
    while todo.any():
        u = rng.random((3,) + shape)
        z = np.cos(math.pi * u[0])
        f = (1 + r * z) / (r + z)
        c = kappa * (r - f)
        accept = ((c * (2 - c) - u[1]) > 0) | (np.log(c / u[1]) + 1 - c >= 0)
        new = accept & todo
        out[new] = (np.sign(u[2] - 0.5) * np.arccos(np.clip(f, -1, 1)))[new]
        todo &= ~accept
    return (out + np.broadcast_to(loc, shape) + math.pi) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """Circular distribution on [-pi, pi) with mean direction ``loc`` and ``concentration``."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        batch_shape = self.loc.shape
        super().__init__(batch_shape, ember.Size(), validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * ember.cos(value - self.loc)
        return (log_prob - math.log(2 * math.pi)
                - _log_modified_bessel_fn(self.concentration, order=0))

    @lazy_property
    def _loc(self):
        return self.loc.to(ember.double)

    @lazy_property
    def _concentration(self):
        return self.concentration.to(ember.double)

    @lazy_property
    def _proposal_r(self):
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        _proposal_r = (1 + rho ** 2) / (2 * rho)
        # second-order Taylor expansion around 0 for small kappa
        _proposal_r_taylor = 1 / kappa + kappa
        return ember.where(kappa < 1e-5, _proposal_r_taylor, _proposal_r)

    def sample(self, sample_shape=ember.Size()):
        shape = tuple(self._extended_shape(sample_shape))
        with ember.no_grad():
            draws = _rejection_sample(self._loc.numpy(), self._concentration.numpy(),
                                      self._proposal_r.numpy(), shape)
            return ember.tensor(draws, dtype=self.loc.dtype)

    def expand(self, batch_shape, _instance=None):
        try:
            return super().expand(batch_shape)
        except NotImplementedError:
            validate_args = self.__dict__.get("_validate_args")
            loc = self.loc.expand(batch_shape)
            concentration = self.concentration.expand(batch_shape)
            return type(self)(loc, concentration, validate_args=validate_args)

    @property
    def mean(self):
        """The provided mean is the circular one."""
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        """The provided variance is the circular one."""
        return 1 - (_log_modified_bessel_fn(self.concentration, order=1)
                    - _log_modified_bessel_fn(self.concentration, order=0)).exp()
