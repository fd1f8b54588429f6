"""Draws from NumPy's discrete samplers, on ember's default generator."""

from __future__ import annotations

import numpy as np

import ember
from ember.ops.random import _gen


def numpy_draw(method: str, dtype, *params):
    """``Generator.<method>(*params)`` on ember's stream, as a tensor of ``dtype``."""
    arrays = [p.detach().numpy() if isinstance(p, ember.Tensor) else p for p in params]
    draws = getattr(_gen(None), method)(*arrays)
    return ember.tensor(np.asarray(draws), dtype=dtype)
