"""ember.Size: the tuple type of ``tensor.shape``."""
from __future__ import annotations


class Size(tuple):
    """A tuple of ints describing a tensor's shape (torch.Size)."""

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self):
        return f"ember.Size({list(self)})"

    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))
