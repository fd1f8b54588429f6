"""What the nn.utils sweeps share (test_nn_utils_sweep.py, test_nn_utils_param_sweep.py):
modules with fixed parameter values, a parametrized Linear, and a module's metadata."""
from __future__ import annotations

import numpy as np


def det(L, m, dtype="float64", leaves=False):
    """m with every parameter and floating buffer set to fixed values (a cosine of its index and
    name length, so no two parameters agree), in float64 by default; leaves=True adds its
    parameters to the leaves whose gradients the harness compares."""
    m = m.to(getattr(L.mod, dtype))
    with L.mod.no_grad():
        for k, (name, t) in enumerate(list(m.named_parameters()) + list(m.named_buffers())):
            if not t.is_floating_point():
                continue
            # (quadratic in the index: a cosine linear in it would give rank-2 matrices)
            idx = np.arange(t.numel())
            vals = np.cos(0.7 * idx + 0.13 * idx ** 2 + k + len(name)).reshape(tuple(t.shape))
            if "running_var" in name:
                vals = np.abs(vals) + 0.5
            t.copy_(L.mod.tensor(vals))
    if leaves:
        L.leaves += list(m.parameters())
    return m


def P(L):
    return L.mod.nn.utils.parametrize


def PZ(L):
    return L.mod.nn.utils.parametrizations


def symmetric(L):
    """A parametrization to symmetric matrices, with a right_inverse (the upper triangle)."""
    class Symmetric(L.mod.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu()
    return Symmetric()


def sym_linear(L, **kw):
    """A 3x3 Linear of fixed values whose weight is parametrized to be symmetric."""
    m = det(L, L.mod.nn.Linear(3, 3))
    P(L).register_parametrization(m, "weight", symmetric(L), **kw)
    return m


def module_meta(m):
    """What the two libraries' modules must share: repr, class name, state_dict keys and the
    names of parameters and buffers."""
    return (repr(m).replace("ember.", "torch."), type(m).__name__, list(m.state_dict()),
            [n for n, _ in m.named_parameters()], [n for n, _ in m.named_buffers()])
