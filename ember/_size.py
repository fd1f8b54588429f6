"""ember.Size: the tuple type of ``tensor.shape``, and the check every shape argument goes
through."""
from __future__ import annotations

import operator


def int_sizes(values, op: str, name: str = "size") -> tuple:
    """``values`` (a sequence of dimension sizes) as a tuple of Python ints.

    torch takes anything with ``__index__`` (ints, NumPy integers, integer 0-d tensors) and
    refuses floats and bools with a TypeError naming the op and the position, where
    ``int(2.5)`` would silently truncate (``nn.Conv2d(c, c / 4, 1)`` must fail at once, as
    in torch, not build a layer of the wrong size).
    """
    for v in values:
        if type(v) is not int:
            break
    else:  # the common case: plain ints, checked without a call per element
        return tuple(values)
    out = []
    for i, v in enumerate(values):
        if isinstance(v, (bool, float)) or not hasattr(type(v), "__index__"):
            raise TypeError(f"{op}(): argument '{name}' (position 1) must be tuple of ints, but "
                            f"found element of type {type(v).__name__} at pos {i}")
        out.append(operator.index(v))
    return tuple(out)


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
