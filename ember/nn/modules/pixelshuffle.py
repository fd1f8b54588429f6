"""PixelShuffle and PixelUnshuffle."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle"]


class PixelShuffle(Module):
    """Rearrange (*, C * r^2, H, W) into (*, C, H * r, W * r) (sub-pixel convolution).

    Example:
        >>> import ember
        >>> PixelShuffle(3)(ember.randn(1, 9, 4, 4)).shape
        ember.Size([1, 1, 12, 12])
    """

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """Rearrange (*, C, H * r, W * r) into (*, C * r^2, H, W), the inverse of PixelShuffle.

    Example:
        >>> import ember
        >>> PixelUnshuffle(2)(ember.randn(1, 1, 4, 4)).shape
        ember.Size([1, 4, 2, 2])
    """

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"
