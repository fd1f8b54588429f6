"""Householder QR in LAPACK's compact form: ``geqrf`` (A -> reflectors + tau),
``linalg.householder_product`` / ``orgqr`` (the explicit Q) and ``ormqr`` (Q times a matrix).

A QR factorization's reflectors are stored below the diagonal of geqrf's result: reflector i is
H_i = I - tau_i v_i v_i^T with v_i = (0, ..., 0, 1, A[i+1:, i]). Q = H_1 H_2 ... H_k. Applying
the reflectors one by one with ember ops costs O(k m p) and gives gradients with respect to both
the reflectors and tau (and double backward) without a hand-written backward.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from scipy.linalg import lapack as _lapack

from ..._tensor import Tensor, _make
from ...autograd.function import Op
from ..registry import register
from ._common import _check_float, _check_matrix, _out, _rt, _t, linalg_op

_rt["geqrf"] = namedtuple("geqrf", "a tau")


class Geqrf(Op):
    """LAPACK geqrf per matrix. torch defines no derivative for it, and neither does ember."""

    @staticmethod
    def forward(ctx, a):
        m, n = a.shape[-2:]
        k = min(m, n)
        qr = np.array(a, copy=True)
        tau = np.zeros(a.shape[:-2] + (k,), a.dtype)
        if a.size:
            geqrf = _lapack.get_lapack_funcs("geqrf", (a,))
            flat_qr, flat_tau = qr.reshape(-1, m, n), tau.reshape(-1, k)
            for b in range(flat_qr.shape[0]):
                r, t, _, _ = geqrf(flat_qr[b])
                flat_qr[b], flat_tau[b] = r, t[:k]
        return qr, tau

    @staticmethod
    def backward(ctx, g_a, g_tau):
        raise NotImplementedError("geqrf: its derivative is not implemented (as in torch); "
                                  "differentiate linalg.qr instead.")


def geqrf(input, *, out=None):
    """(a, tau): A's QR factorization in LAPACK's compact form (R on and above the diagonal,
    the Householder vectors below it, their scales in tau)."""
    _check_matrix(input, "geqrf")
    return _out(_rt["geqrf"](*Geqrf.apply(input)), out, "geqrf")


# ----------------------------------------------------------------------------- applying Q
def _reflector(A, i):
    """v_i as an (..., m, 1) column: 1 at row i, A's entries below it, zeros above."""
    m = A.shape[-2]
    below = np.zeros((m, 1), A._data.dtype)
    below[i + 1:] = 1
    unit = np.zeros((m, 1), A._data.dtype)
    unit[i] = 1
    return A.narrow(-1, i, 1) * _make(below) + _make(unit)


def _apply_q(A, tau, C, left, transpose):
    """Q C, Q^H C, C Q or C Q^H with Q = H_1 ... H_k (k = tau.shape[-1]), H_i = I - tau_i v v^H
    (Q^T for real input)."""
    k = tau.shape[-1]
    # Q C = H_1 (H_2 (... H_k C)) applies the last reflector first; so does C Q^H
    order = range(k - 1, -1, -1) if left != transpose else range(k)
    for i in order:
        v = _reflector(A, i)
        vh = _t(v).conj()
        t = tau.narrow(-1, i, 1).unsqueeze(-1)  # (..., 1, 1)
        if transpose:  # H^H = I - conj(tau) v v^H
            t = t.conj()
        if left:   # H C = C - tau v (v^H C)
            C = C - (t * v) @ (vh @ C)
        else:      # C H = C - (C v) tau v^H
            C = C - (C @ v) @ (t * vh)
    return C


def _check_tau(name, A, tau, k_max):
    _check_float(tau, name)
    if tau.dtype != A.dtype:
        raise RuntimeError(f"{name}: tau must have the same dtype as input; got {tau.dtype} and "
                           f"{A.dtype}.")
    if tau.ndim != A.ndim - 1 or tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"{name}: tau must have shape input.shape[:-2] + (k,); got tau "
                           f"{list(tau.shape)} for input {list(A.shape)}.")
    if tau.shape[-1] > k_max:
        raise RuntimeError(f"{name}: tau.shape[-1] must be at most {k_max}; got "
                           f"{tau.shape[-1]} for input {list(A.shape)}.")


@linalg_op
def householder_product(input, tau, *, out=None):
    """The first n columns of H_1 ... H_k for A (m x n, m >= n) holding the Householder vectors
    below its diagonal and tau (k <= n) their scales, as geqrf returns them."""
    name = "linalg.householder_product"
    A = input
    _check_matrix(A, name)
    m, n = A.shape[-2], A.shape[-1]
    if m < n:
        raise RuntimeError(f"{name}: input must have at least as many rows as columns; got "
                           f"shape {list(A.shape)}.")
    _check_tau(name, A, tau, n)
    eye = np.broadcast_to(np.eye(m, n, dtype=A._data.dtype), tuple(A.shape)).copy()
    return _out(_apply_q(A, tau, _make(eye), left=True, transpose=False), out, name)


def orgqr(input, input2, *, out=None):
    """linalg.householder_product(input, tau=input2) under its LAPACK name."""
    return householder_product(input, input2, out=out)


def ormqr(input, input2, input3, left=True, transpose=False, *, out=None):
    """Q @ other (other @ Q with left=False; Q^T with transpose=True) for the m x m Q of
    geqrf's compact form, without forming Q. input2 is tau and input3 the other matrix (torch's
    keyword names)."""
    tau, other = input2, input3
    name = "ormqr"
    _check_matrix(input, name)
    if not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument 'input3' must be Tensor, not {type(other).__name__}")
    _check_matrix(other, name)
    m = input.shape[-2]
    _check_tau(name, input, tau, min(m, input.shape[-1]))
    if other.dtype != input.dtype:
        raise RuntimeError(f"{name}: other must have the same dtype as input; got {other.dtype} "
                           f"and {input.dtype}.")
    along = other.shape[-2] if left else other.shape[-1]
    if along != m:
        side = "other.shape[-2]" if left else "other.shape[-1]"
        raise RuntimeError(f"{name}: {side} must equal input.shape[-2] = {m}; got other "
                           f"{list(other.shape)}.")
    return _out(_apply_q(input, tau, other, left, transpose), out, name)


register("geqrf", wrap_out=False)(geqrf)
register("orgqr", wrap_out=False)(orgqr)
register("ormqr", wrap_out=False)(ormqr)
