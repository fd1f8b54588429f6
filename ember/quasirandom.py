"""``ember.quasirandom.SobolEngine``: Sobol' low-discrepancy sequences (torch.quasirandom).

The points come from SciPy's Sobol' generator (Joe and Kuo's direction numbers, 30 bits, up to
21201 dimensions), which gives the same unscrambled sequence as torch, point for point.
Scrambled sequences (`scramble=True`) use SciPy's scrambling seeded by `seed`: a valid
randomised Sobol' sequence, but not torch's numbers for the same seed (docs/DEVIATIONS.md).
"""
from __future__ import annotations

import warnings

import numpy as np
from scipy.stats import qmc

from ._dtype import get_default_dtype
from ._tensor import Tensor, _make

__all__ = ["SobolEngine"]


class SobolEngine:
    """Draws points of a `dimension`-dimensional Sobol' sequence in [0, 1)."""

    MAXBIT = 30
    MAXDIM = 21201

    def __init__(self, dimension, scramble=False, seed=None):
        if not 1 <= dimension <= self.MAXDIM:
            raise ValueError(f"SobolEngine: supported range of dimensionality is [1, "
                             f"{self.MAXDIM}]; got dimension={dimension}")
        self.dimension = dimension
        self.scramble = scramble
        self.seed = seed
        self.reset()

    def reset(self):
        """Start the sequence again from its first point."""
        self._engine = qmc.Sobol(self.dimension, scramble=self.scramble, bits=self.MAXBIT,
                                 seed=self.seed)
        self.num_generated = 0
        return self

    def draw(self, n=1, out=None, dtype=None):
        """The next `n` points, an (n, dimension) tensor (default dtype unless `dtype`)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)   # SciPy's power-of-2 advice
            pts = self._engine.random(n)
        self.num_generated += n
        return self._result(pts, out, dtype)

    def draw_base2(self, m, out=None, dtype=None):
        """The next 2**m points; the total drawn must stay a power of 2 (Sobol's balance)."""
        n = 2 ** m
        total = self.num_generated + n
        if total & (total - 1):
            raise ValueError(f"SobolEngine.draw_base2: the balance properties of Sobol' points "
                             f"require n to be a power of 2. {self.num_generated} points have "
                             f"been previously generated, then: {self.num_generated} + 2**{m}"
                             f" = {total}. If you still want to do this, please use "
                             "'SobolEngine.draw()' instead.")
        return self.draw(n, out=out, dtype=dtype)

    def fast_forward(self, n):
        """Skip the next `n` points."""
        self._engine.fast_forward(n)
        self.num_generated += n
        return self

    def _result(self, pts, out, dtype):
        dt = dtype or (out.dtype if out is not None else get_default_dtype())
        res = _make(np.ascontiguousarray(pts, dtype=dt.np))
        if out is not None:
            if not isinstance(out, Tensor):
                raise TypeError(f"SobolEngine.draw: out must be a Tensor; got "
                                f"{type(out).__name__}")
            out.resize_(res.shape).copy_(res)
            return out
        return res

    def __repr__(self):
        return (f"SobolEngine(dimension={self.dimension}, scramble={self.scramble}, "
                f"seed={self.seed})")
