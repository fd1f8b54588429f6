"""Instance normalization: InstanceNorm1d/2d/3d (Ulyanov et al., 2016)."""
from __future__ import annotations

from .. import functional as F
from .batchnorm import _NormBase

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]


class _InstanceNorm(_NormBase):
    _spatial = 1

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype,
                         bias=bias)

    def _check_input_dim(self, input):
        d = self._spatial
        if input.ndim not in (d + 1, d + 2):
            raise ValueError(f"{type(self).__name__}: expected {d + 1}D or {d + 2}D input (got "
                             f"{input.ndim}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        unbatched = input.ndim == self._spatial + 1
        if unbatched:
            input = input.unsqueeze(0)
        if self.affine or self.track_running_stats:
            self._check_channels(input)
        out = F.instance_norm(input, self.running_mean, self.running_var, self.weight,
                              self.bias, self.training or not self.track_running_stats,
                              self.momentum if self.momentum is not None else 0.0, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """Normalize each channel of each sample of (N, C, L) or (C, L) input over L."""

    _spatial = 1


class InstanceNorm2d(_InstanceNorm):
    """Normalize each channel of each sample of (N, C, H, W) or (C, H, W) input over H, W."""

    _spatial = 2


class InstanceNorm3d(_InstanceNorm):
    """Normalize each channel of each sample of (N, C, D, H, W) input over D, H, W."""

    _spatial = 3
