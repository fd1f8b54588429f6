"""Inputs and helpers the autograd sweeps share (test_autograd_sweep.py,
test_autograd_function_sweep.py)."""
from __future__ import annotations

import numpy as np

RNG = np.random.default_rng(36)
X = RNG.uniform(-1.5, 1.5, (3, 4))
Y = RNG.uniform(-1.5, 1.5, (3, 4))
W = RNG.uniform(-1.0, 1.0, (4, 2))
V = RNG.uniform(0.5, 1.5, (3, 4))


def mix(L, x, w=None):
    """A chain of ops of different kinds (pointwise, matmul, softmax, reduction, view), so the
    derivatives of every order go through more than one backward formula."""
    w = L.T(W) if w is None else w
    h = (x.sin() * x.exp().tanh()).matmul(w)
    return h.softmax(-1).log().mul(h).t().reshape(-1)


def ag(L):
    return L.mod.autograd
