"""Padding layers: constant / zero, reflection, replication and circular padding."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad1d", "ZeroPad2d",
           "ZeroPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d",
           "CircularPad2d", "CircularPad3d"]


def _pads(padding, nd, name):
    """An int (same on every side) or a 2*nd tuple (left, right, top, bottom, front, back)."""
    if isinstance(padding, (tuple, list)):
        if len(padding) != 2 * nd:
            raise ValueError(f"{name}: padding must be an int or a tuple of {2 * nd} ints, got "
                             f"{tuple(padding)}")
        return tuple(int(p) for p in padding)
    return (int(padding),) * (2 * nd)


class _PadNd(Module):
    _nd = 1
    _mode = "constant"

    def __init__(self, padding, value=0.0):
        super().__init__()
        self.padding = _pads(padding, self._nd, type(self).__name__)
        self.value = value

    def forward(self, input):
        if input.ndim not in (self._nd + 1, self._nd + 2) and self._mode != "constant":
            raise ValueError(f"{type(self).__name__}: expected {self._nd + 1}-D or "
                             f"{self._nd + 2}-D input, got {input.ndim}-D input of shape "
                             f"{tuple(input.shape)}")
        if self._mode == "constant":
            return F.pad(input, self.padding, "constant", self.value)
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        if self._mode == "constant":
            return f"padding={self.padding}, value={self.value}"
        return f"{self.padding}"


class ConstantPad1d(_PadNd):
    """Pad the last dim with a constant: ``ConstantPad1d(padding, value)``.

    Example:
        >>> import ember
        >>> ConstantPad1d((1, 2), 9.)(ember.zeros(1, 2))
        tensor([[9., 0., 0., 9., 9.]])
    """

    _nd = 1

    def __init__(self, padding, value):
        super().__init__(padding, value)


class ConstantPad2d(ConstantPad1d):
    """Pad the last two dims with a constant; padding (left, right, top, bottom) or an int.

    Example:
        >>> import ember
        >>> ConstantPad2d(1, 0.5)(ember.zeros(1, 1, 1)).shape
        ember.Size([1, 3, 3])
    """

    _nd = 2


class ConstantPad3d(ConstantPad1d):
    """Pad the last three dims with a constant (left, right, top, bottom, front, back).

    Example:
        >>> import ember
        >>> ConstantPad3d(1, 0.)(ember.zeros(1, 1, 1, 1)).shape
        ember.Size([1, 3, 3, 3])
    """

    _nd = 3


class ZeroPad1d(_PadNd):
    """Pad the last dim with zeros.

    Example:
        >>> import ember
        >>> ZeroPad1d(1)(ember.ones(1, 2))
        tensor([[0., 1., 1., 0.]])
    """

    _nd = 1

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad2d(ZeroPad1d):
    """Pad the last two dims with zeros; padding (left, right, top, bottom) or an int.

    Example:
        >>> import ember
        >>> ZeroPad2d((1, 0, 0, 1))(ember.ones(1, 1, 1))
        tensor([[[0., 1.],
                 [0., 0.]]])
    """

    _nd = 2


class ZeroPad3d(ZeroPad1d):
    """Pad the last three dims with zeros."""

    _nd = 3


class _NoValuePad(_PadNd):
    def __init__(self, padding):
        super().__init__(padding)


class ReflectionPad1d(_NoValuePad):
    """Mirror the last dim at its edges (the edge itself is not repeated).

    Example:
        >>> import ember
        >>> ReflectionPad1d(2)(ember.tensor([[[0., 1., 2.]]]))
        tensor([[[2., 1., 0., 1., 2., 1., 0.]]])
    """

    _nd, _mode = 1, "reflect"


class ReflectionPad2d(_NoValuePad):
    """Mirror the last two dims of (N, C, H, W) or (C, H, W) at their edges."""

    _nd, _mode = 2, "reflect"


class ReflectionPad3d(_NoValuePad):
    """Mirror the last three dims of (N, C, D, H, W) or (C, D, H, W)."""

    _nd, _mode = 3, "reflect"


class ReplicationPad1d(_NoValuePad):
    """Repeat the edge values of the last dim.

    Example:
        >>> import ember
        >>> ReplicationPad1d((2, 1))(ember.tensor([[[0., 1.]]]))
        tensor([[[0., 0., 0., 1., 1.]]])
    """

    _nd, _mode = 1, "replicate"


class ReplicationPad2d(_NoValuePad):
    """Repeat the edge values of the last two dims."""

    _nd, _mode = 2, "replicate"


class ReplicationPad3d(_NoValuePad):
    """Repeat the edge values of the last three dims."""

    _nd, _mode = 3, "replicate"


class CircularPad1d(_NoValuePad):
    """Wrap the last dim around (periodic padding).

    Example:
        >>> import ember
        >>> CircularPad1d(1)(ember.tensor([[[0., 1., 2.]]]))
        tensor([[[2., 0., 1., 2., 0.]]])
    """

    _nd, _mode = 1, "circular"


class CircularPad2d(_NoValuePad):
    """Wrap the last two dims around (periodic padding)."""

    _nd, _mode = 2, "circular"


class CircularPad3d(_NoValuePad):
    """Wrap the last three dims around (periodic padding)."""

    _nd, _mode = 3, "circular"
