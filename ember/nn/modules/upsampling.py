"""Upsampling layers: Upsample, UpsamplingNearest2d, UpsamplingBilinear2d."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]


class Upsample(Module):
    """Resize (N, C, *spatial) input by ``scale_factor`` or to ``size`` (see F.interpolate).

    Args:
        size, scale_factor (exactly one), mode='nearest' ('nearest-exact', 'linear',
        'bilinear', 'bicubic', 'trilinear'), align_corners=None, recompute_scale_factor=None.

    Example:
        >>> import ember
        >>> Upsample(scale_factor=2)(ember.ones(1, 1, 2, 2)).shape
        ember.Size([1, 1, 4, 4])
    """

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        self.scale_factor = float(scale_factor) if isinstance(scale_factor, (int, float)) \
            else (tuple(float(f) for f in scale_factor) if scale_factor else None)
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self):
        if self.scale_factor is not None:
            info = f"scale_factor={self.scale_factor!r}"
        else:
            info = f"size={self.size!r}"
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour upsampling of (N, C, H, W).

    Example:
        >>> import ember
        >>> UpsamplingNearest2d(scale_factor=2)(ember.ones(1, 1, 2, 2)).shape
        ember.Size([1, 1, 4, 4])
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear upsampling of (N, C, H, W) with align_corners=True.

    Example:
        >>> import ember
        >>> UpsamplingBilinear2d(size=(3, 3))(ember.ones(1, 1, 2, 2)).shape
        ember.Size([1, 1, 3, 3])
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
