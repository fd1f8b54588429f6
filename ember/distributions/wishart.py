"""Wishart distribution over symmetric positive-definite matrices."""

from __future__ import annotations

import math
import warnings

import ember

from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .multivariate_normal import _precision_to_scale_tril
from .utils import _standard_normal, lazy_property

__all__ = ["Wishart"]


def _multi_digamma(a, p: int):
    """The multivariate digamma psi_p(a) = sum_{i<p} digamma(a - i/2)."""
    offsets = ember.arange(p, dtype=a.dtype) / 2
    return ember.digamma(a.unsqueeze(-1) - offsets).sum(-1)


class Wishart(Distribution):
    r"""Wishart with ``df`` degrees of freedom :math:`n` and scale matrix :math:`\Sigma`, given by
    exactly one of ``covariance_matrix``, ``precision_matrix`` (:math:`\Sigma^{-1}`) or
    ``scale_tril`` (its lower Cholesky factor :math:`L`). ``df`` must exceed ``p - 1``.

    A sample is :math:`L A A^T L^T` with Bartlett's :math:`A`: lower triangular, standard
    normal below the diagonal and :math:`\sqrt{\chi^2_{n-i}}` on it, so ``rsample`` is
    differentiable in the scale matrix and in ``df`` (through the chi-square draws).

    Example:
        >>> import ember
        >>> d = Wishart(ember.tensor(5.0), covariance_matrix=ember.eye(2))
        >>> d.mean
        tensor([[5., 0.],
                [0., 5.]])
    """

    arg_constraints = {"covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky, "df": constraints.greater_than(0)}
    support = constraints.positive_definite
    has_rsample = True

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading "
                             "batch dimensions")
        if isinstance(df, (int, float)):
            batch_shape = ember.Size(param.shape[:-2])
            self.df = ember.tensor(float(df), dtype=param.dtype)
        else:
            batch_shape = ember.Size(ember.broadcast_shapes(param.shape[:-2], df.shape))
            self.df = df.expand(batch_shape)
        event_shape = ember.Size(param.shape[-2:])
        p = event_shape[-1]
        if bool((self.df <= p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        full = batch_shape + event_shape
        if scale_tril is not None:
            self.scale_tril = param.expand(full)
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(full)
            self._unbroadcasted_scale_tril = ember.linalg.cholesky(covariance_matrix)
        else:
            self.precision_matrix = param.expand(full)
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        if bool((self.df < p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur "
                          "for ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._dist_chi2 = self._bartlett_chi2()

    def _bartlett_chi2(self):
        p = self._event_shape[-1]
        dof = self.df.unsqueeze(-1) - ember.arange(p, dtype=self._unbroadcasted_scale_tril.dtype)
        return Chi2(dof)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = ember.Size(batch_shape)
        full = batch_shape + self._event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(full)
        new.df = self.df.expand(batch_shape)
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(full))
        super(Wishart, new).__init__(batch_shape, self._event_shape, validate_args=False)
        new._dist_chi2 = new._bartlett_chi2()
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        eye = ember.eye(self._event_shape[-1], dtype=self._unbroadcasted_scale_tril.dtype)
        l_inv = ember.linalg.solve_triangular(self._unbroadcasted_scale_tril, eye, upper=False)
        return (l_inv.mT @ l_inv).expand(self._batch_shape + self._event_shape)

    def _df_matrix(self, df):
        return df.reshape(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self):
        return self._df_matrix(self.df) * self.covariance_matrix

    @property
    def mode(self):
        # (n - p - 1) Sigma, defined only for n > p + 1 (NaN elsewhere, as torch)
        factor = self.df - self._event_shape[-1] - 1
        factor = ember.where(factor > 0, factor, ember.full_like(factor, math.nan))
        return self._df_matrix(factor) * self.covariance_matrix

    @property
    def variance(self):
        # Var X_ij = n (S_ij^2 + S_ii S_jj)
        S = self.covariance_matrix
        diag = S.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix(self.df) * (S.pow(2) + diag.unsqueeze(-1) * diag.unsqueeze(-2))

    def rsample(self, sample_shape=ember.Size(), max_try_correction=None):
        """Bartlett samples; ``max_try_correction`` is accepted for torch's signature (ember's
        draws are not re-tried: a singular draw has probability 0 for df > p - 1)."""
        sample_shape = ember.Size(sample_shape)
        p = self._event_shape[-1]
        noise = _standard_normal(self._extended_shape(sample_shape),
                                 dtype=self._unbroadcasted_scale_tril.dtype).tril(-1)
        diag = self._dist_chi2.rsample(sample_shape).sqrt()
        bartlett = noise + ember.diag_embed(diag)
        factor = self._unbroadcasted_scale_tril @ bartlett
        out = factor @ factor.mT
        return out.expand(self._extended_shape(sample_shape)) if p else out

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n, p = self.df, self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        log_det_scale = 2 * L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        # a value that is not positive-definite (possible only with validate_args=False) has
        # no Cholesky factor: its log_prob is NaN rather than a LinAlgError
        chol, info = ember.linalg.cholesky_ex(value)
        log_det_value = 2 * chol.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        # tr(Sigma^-1 X) = ||L^-1 X L^-T||_tr = sum of squares of L^-1 chol(X)
        whitened = ember.linalg.solve_triangular(L, chol, upper=False)
        trace = whitened.pow(2).sum((-2, -1))
        result = (0.5 * (n - p - 1) * log_det_value - 0.5 * trace
                  - 0.5 * n * p * math.log(2) - 0.5 * n * log_det_scale
                  - ember.mvlgamma(0.5 * n, p))
        return result.masked_fill(info > 0, math.nan)

    def entropy(self):
        n, p = self.df, self._event_shape[-1]
        log_det_scale = 2 * self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return ((p + 1) / 2 * log_det_scale + p * (p + 1) / 2 * math.log(2)
                + ember.mvlgamma(0.5 * n, p) - 0.5 * (n - p - 1) * _multi_digamma(0.5 * n, p)
                + 0.5 * n * p).expand(self._batch_shape)
