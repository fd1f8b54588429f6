"""ExponentialFamily: distributions whose entropy follows from their log-normaliser."""

from __future__ import annotations

import ember

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Densities of the form ``exp(<t(x), theta> - F(theta) + k(x))``.

    Subclasses give ``_natural_params``, ``_log_normalizer`` (F) and ``_mean_carrier_measure``
    (E[k(x)]); the entropy is then ``F(theta) - <theta, grad F(theta)> - E[k(x)]``, computed
    with autograd (the Bregman divergence of F).
    """

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        gradients = ember.autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for np_, g in zip(nparams, gradients, strict=True):
            result = result - (np_ * g).reshape(self._batch_shape + (-1,)).sum(-1)
        return result
