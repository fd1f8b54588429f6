"""General (non-symmetric) eigen-decomposition: ``linalg.eig`` and ``linalg.eigvals``.

LAPACK geev (through NumPy) gives the same eigenvalue order and eigenvector normalization as
torch: each eigenvector has unit Euclidean norm. Results are complex for real inputs too.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..._tensor import _make
from ...autograd.function import Op
from ..rearrange import diag_embed
from ..rearrange import diagonal as _diagonal
from ._common import _check_matrix, _out, _rt, linalg_op
from ._solve import solve

_rt["linalg_eig"] = namedtuple("linalg_eig", "eigenvalues eigenvectors")


def _complex_of(dtype):
    return np.complex64 if dtype in (np.float32, np.complex64) else np.complex128


def _h(x):
    """Conjugate transpose."""
    return x.transpose(-2, -1).conj()


class Eig(Op):
    """(L, V) with A V = V diag(L).

    Backward (torch's convention for complex gradients; F_ij = 1 / conj(L_j - L_i) off the
    diagonal): gA = V^-H (diag(gL) + F o (V^H gV - V^H V diag(Re diag(V^H gV)))) V^H; the
    second term keeps the unit-norm normalization of V out of the gradient. A real input keeps
    the real part (the engine drops the imaginary part)."""

    @staticmethod
    def forward(ctx, a):
        ctx.set_materialize_grads(False)
        w, v = np.linalg.eig(a)
        ct = _complex_of(a.dtype)
        w, v = w.astype(ct), v.astype(ct)
        ctx.save_for_backward(w, v)
        return w, v

    @staticmethod
    def backward(ctx, gL, gV):
        L, V = ctx.saved_tensors
        n = L.shape[-1]
        Vh = _h(V)
        inner = diag_embed(gL) if gL is not None else None
        if gV is not None:
            VhgV = Vh @ gV
            phase = np.abs(np.imag(np.diagonal(VhgV._data, 0, -2, -1)))
            if phase.size and phase.max() > 1e-6 * (1.0 + np.abs(VhgV._data).max()):
                raise RuntimeError(
                    "linalg.eig backward: the loss depends on the phase of the eigenvectors, "
                    "which eig does not determine (each column may be multiplied by e^(i phi)); "
                    "got a gradient with a non-zero imaginary part on diag(V^H gV), expected "
                    "a loss invariant to that phase (e.g. of |V| or of V V^-1).")
            re_diag = _diagonal(VhgV, 0, -2, -1).real
            term = VhgV - (Vh @ V) * re_diag.unsqueeze(-2).to(VhgV.dtype)
            E = (L.unsqueeze(-2) - L.unsqueeze(-1)).conj()  # E_ij = conj(L_j - L_i)
            eye = _make(np.eye(n, dtype=bool))
            term = (term / E.masked_fill(eye, 1.0)).masked_fill(eye, 0.0)
            inner = term if inner is None else inner + term
        return solve(Vh, inner @ Vh)  # V^-H inner V^H


@linalg_op
def eig(input, *, out=None):
    """(eigenvalues, eigenvectors) of a (batch of) square matrix, both complex; eigenvectors
    are the columns, each of unit norm."""
    _check_matrix(input, "linalg.eig", square=True)
    _check_finite("linalg.eig", input)
    return _out(_rt["linalg_eig"](*Eig.apply(input)), out, "linalg.eig")


@linalg_op
def eigvals(input, *, out=None):
    """Eigenvalues (complex) of a (batch of) square matrix, in LAPACK's order."""
    _check_matrix(input, "linalg.eigvals", square=True)
    _check_finite("linalg.eigvals", input)
    return _out(Eig.apply(input)[0], out, "linalg.eigvals")


def _check_finite(name, A):
    if not np.all(np.isfinite(A._data)):
        raise RuntimeError(f"{name}: the input contains infinities or NaNs; got "
                           f"{A.dtype} matrix of shape {list(A.shape)}, expected finite values.")

