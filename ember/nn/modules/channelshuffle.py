"""ChannelShuffle (torch's module path: a pickled model names the class from here)."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """Interleave the channels of ``groups`` groups (ShuffleNet): (N, g*k, *) -> (N, k*g, *).

    Example:
        >>> import ember
        >>> ChannelShuffle(2)(ember.arange(4.).reshape(1, 4, 1, 1)).flatten()
        tensor([0., 2., 1., 3.])
    """

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"
