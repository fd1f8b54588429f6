"""LKJ distribution over correlation matrices, on their lower Cholesky factors."""

from __future__ import annotations

import math

import ember

from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    r"""LKJ(``concentration`` :math:`\eta`) over ``dim`` x ``dim`` correlation matrices
    :math:`C = L L^T`, as a law on :math:`L`: density :math:`\propto \prod_{i \ge 2}
    L_{ii}^{\,d - i + 2\eta - 2}`. :math:`\eta = 1` is uniform over correlation matrices,
    larger :math:`\eta` concentrates near the identity.

    Sampling uses the onion method: row :math:`i` (0-based) is :math:`\sqrt{y_i}\,u_i` with
    :math:`u_i` uniform on the unit sphere of its first :math:`i` entries and
    :math:`y_i \sim \mathrm{Beta}(i/2, \eta + (d - 1 - i)/2)`, then the diagonal completes the
    row to unit norm. Differs from torch: torch 2.13 draws :math:`y_i` from
    Beta(i - 1/2, ...), whose samples do not have the LKJ marginals (off-diagonal
    correlations of variance 1/(2 eta + d - 1)); ember's do. ``log_prob`` agrees with torch.

    Example:
        >>> import ember
        >>> d = LKJCholesky(3, 2.0)
        >>> L = d.sample()
        >>> bool(ember.allclose((L @ L.mT).diagonal(), ember.ones(3)))
        True
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found "
                             f"dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        super().__init__(self.concentration.shape, ember.Size((dim, dim)),
                         validate_args=validate_args)
        self._beta = self._row_beta(self.concentration)

    def _row_beta(self, concentration):
        rows = ember.arange(self.dim, dtype=concentration.dtype)
        # row 0 has no off-diagonal entries: its Beta is a placeholder that is never used
        first = ember.where(rows > 0, rows / 2, ember.full_like(rows, 0.5))
        second = concentration.unsqueeze(-1) + (self.dim - 1 - rows) / 2
        return Beta(first.expand(second.shape), second)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = ember.Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        super(LKJCholesky, new).__init__(batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=ember.Size()):
        with ember.no_grad():
            shape = self._extended_shape(sample_shape)
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            direction = ember.randn(shape, dtype=y.dtype).tril(-1)
            norm = direction.norm(dim=-1, keepdim=True)
            direction = direction / ember.where(norm > 0, norm, ember.ones_like(norm))
            off_diagonal = y.sqrt() * direction
            tiny = float(ember.finfo(y.dtype).tiny)
            diag = (1 - off_diagonal.pow(2).sum(-1)).clamp(min=tiny).sqrt()
            return off_diagonal + ember.diag_embed(diag)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        d, eta = self.dim, self.concentration
        diag = value.diagonal(dim1=-2, dim2=-1)[..., 1:]
        rows = ember.arange(2, d + 1, dtype=eta.dtype)  # 1-based row numbers 2..d
        exponents = 2 * (eta.unsqueeze(-1) - 1) + d - rows
        unnormalised = (exponents * diag.log()).sum(-1)
        # log normaliser: (d-1)/2 log(pi) + mvlgamma(a - 1/2, d-1) - (d-1) lgamma(a),
        # a = eta + (d-1)/2
        a = eta + 0.5 * (d - 1)
        log_norm = (0.5 * (d - 1) * math.log(math.pi) + ember.mvlgamma(a - 0.5, d - 1)
                    - (d - 1) * ember.lgamma(a))
        return unnormalised - log_norm
