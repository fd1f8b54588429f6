"""Dropout's op: a multiply (and, for alpha dropout, an add) by fixed arrays."""
from __future__ import annotations

from ..._tensor import _make
from ...autograd.function import Op


# ----------------------------------------------------------------------------- dropout
class NativeDropout(Op):
    """y = x * m + c with fixed arrays m (a mask times the keep-scale) and c (alpha
    dropout)."""

    @staticmethod
    def forward(ctx, x, mult, add=None):
        ctx.mult = mult
        y = x * mult
        if add is not None:
            y = y + add
        return y.astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        return grad * _make(ctx.mult), None, None

