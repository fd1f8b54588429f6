"""LU factorization with partial pivoting and what uses it: ``linalg.lu_factor(_ex)``,
``linalg.lu``, ``linalg.lu_solve`` and the legacy ``ember.lu`` / ``ember.lu_solve`` /
``ember.lu_unpack``.

The factorization runs in LAPACK (getrf). Its packed result LU holds the unit lower factor L
below the diagonal and U on and above it; pivots are LAPACK's 1-based row interchanges, as
int32, like torch's. Everything after the factorization is composed of differentiable ember
ops, so only ``LUFactor`` has a hand-written backward.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from scipy.linalg import lapack as _lapack

from ..._tensor import Tensor, _make
from ...autograd.function import Op
from ..registry import register
from ._common import (
    _batch_prefix,
    _broadcast_batch,
    _check_matrix,
    _out,
    _rt,
    _t,
    _warn_once,
    linalg_op,
)
from ._solve import SolveTriangular

for _name, _fields in (("linalg_lu_factor", "LU pivots"), ("linalg_lu_factor_ex", "LU pivots info"),
                       ("linalg_lu", "P L U"), ("lu_unpack", "P L U"),
                       ("_lu_with_info", "LU pivots info")):
    _rt[_name] = namedtuple(_name, _fields)


# ----------------------------------------------------------------------------- pivots
def _permutations(pivots, m):
    """Row orders perm with P^T A = A[perm] for LAPACK pivots of shape (*, k) (1-based)."""
    piv = np.asarray(pivots).astype(np.int64) - 1
    perm = np.broadcast_to(np.arange(m), piv.shape[:-1] + (m,)).copy()
    if perm.size == 0 or piv.shape[-1] == 0:
        return perm
    flat_perm, flat_piv = perm.reshape(-1, m), piv.reshape(-1, piv.shape[-1])
    for row, p in zip(flat_perm, flat_piv):
        for i, j in enumerate(p):  # row i was swapped with row j, in this order
            row[i], row[j] = row[j], row[i]
    return perm


def _perm_matrix(pivots, m, dtype):
    """The permutation matrix P of A = P L U as an array of shape (*, m, m)."""
    perm = _permutations(pivots, m)
    eye = np.eye(m, dtype=dtype)
    return np.ascontiguousarray(np.swapaxes(eye[perm], -1, -2))  # P^T = I[perm]


def _check_pivots(name, LU, pivots):
    if not isinstance(pivots, Tensor) or pivots.dtype.is_floating_point or \
            pivots.dtype.name == "bool":
        got = type(pivots).__name__ if not isinstance(pivots, Tensor) else pivots.dtype
        raise RuntimeError(f"{name}: pivots must be an integer (int32) tensor; got {got}.")
    k = min(LU.shape[-2], LU.shape[-1])
    if pivots.ndim < 1 or pivots.shape[-1] != k:
        raise RuntimeError(f"{name}: pivots must have shape (*, {k}) for an LU of shape "
                           f"{list(LU.shape)}; got {list(pivots.shape)}.")


# ----------------------------------------------------------------------------- factorization
class LUFactor(Op):
    """(LU, pivots, info) of A (m x n) by getrf.

    Backward (k = min(m, n); L is m x k unit lower, U is k x n upper): with
    dA = P (dL U + L dU), write X = L^-1 P^T dA. For m <= n split U = [U1 | U2] (U1 square):
    gA = P L^-T [M U1^-T | gU2] with M = tril_-1(L^T gL - gU2 U2^T) + triu(gU1 U1^T).
    For m > n split L = [L1; L2] (L1 square): gA = P [L1^-T gZ; gL2] U^-T with
    gZ = tril_-1(L1^T gL1) + triu(gU U^T - L2^T gL2). (gL, gU are read from the packed gLU.)"""

    holomorphic = True  # L and U are rational in A's entries: see NOTE [Complex gradients]

    @staticmethod
    def forward(ctx, a):
        ctx.set_materialize_grads(False)
        m, n = a.shape[-2:]
        k = min(m, n)
        lu = np.array(a, copy=True)
        pivots = np.broadcast_to(np.arange(1, k + 1, dtype=np.int32), a.shape[:-2] + (k,)).copy()
        info = np.zeros(a.shape[:-2], np.int32)
        if a.size:
            getrf = _lapack.get_lapack_funcs("getrf", (a,))
            flat_lu, flat_piv = lu.reshape(-1, m, n), pivots.reshape(-1, k)
            flat_info = info.reshape(-1)
            for b in range(flat_lu.shape[0]):
                f, p, flat_info[b] = getrf(flat_lu[b])
                flat_lu[b], flat_piv[b] = f, p + 1
        ctx.save_for_backward(lu, pivots)
        return lu, pivots, info

    @staticmethod
    def backward(ctx, gLU, g_pivots, g_info):
        if gLU is None:
            return None
        LU, pivots = ctx.saved_tensors
        m, n = LU.shape[-2], LU.shape[-1]
        k = min(m, n)
        eye = _make(np.eye(m, k, dtype=LU._data.dtype))
        L = LU.tril(-1).narrow(-1, 0, k) + eye
        U = LU.triu().narrow(-2, 0, k)
        gL, gU = gLU.tril(-1).narrow(-1, 0, k), gLU.triu().narrow(-2, 0, k)
        P = _make(_perm_matrix(pivots._data, m, LU._data.dtype))
        if m <= n:
            U1, U2 = U.narrow(-1, 0, m), U.narrow(-1, m, n - m)
            gU1, gU2 = gU.narrow(-1, 0, m), gU.narrow(-1, m, n - m)
            M = (_t(L) @ gL - gU2 @ _t(U2)).tril(-1) + (gU1 @ _t(U1)).triu()
            gX1 = _t(SolveTriangular.apply(U1, _t(M), upper=True))          # M U1^-T
            gX = gX1._cat_with(gU2, -1) if n > m else gX1
            return P @ SolveTriangular.apply(_t(L), gX, upper=True, unitriangular=True)
        L1, L2 = L.narrow(-2, 0, n), L.narrow(-2, n, m - n)
        gL1, gL2 = gL.narrow(-2, 0, n), gL.narrow(-2, n, m - n)
        gZ = (_t(L1) @ gL1).tril(-1) + (gU @ _t(U) - _t(L2) @ gL2).triu()
        top = SolveTriangular.apply(_t(L1), gZ, upper=True, unitriangular=True)  # L1^-T gZ
        R = top._cat_with(gL2, -2)
        return P @ _t(SolveTriangular.apply(U, _t(R), upper=True))            # R U^-T


def _first_zero_pivot(name, U_packed, info):
    """The error torch raises when U has a zero on its diagonal (lu_solve would divide by 0)."""
    flat = info.reshape(-1)
    b = int(np.flatnonzero(flat > 0)[0])
    i = int(flat[b])
    return RuntimeError(
        f"{name}: {_batch_prefix(U_packed, b)}U[{i},{i}] is zero, so lu_solve with this "
        "factorization would divide by zero; got a singular matrix, expected an invertible one. "
        "linalg.lu(A) and linalg.lu_factor_ex(A) factor singular matrices without raising.")


def _factor(name, A, pivot):
    _check_matrix(A, name)
    if not pivot:
        raise RuntimeError(f"{name}: LU without pivoting is not implemented on the CPU; got "
                           "pivot=False, expected pivot=True.")
    return LUFactor.apply(A)


@linalg_op
def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """(LU, pivots, info): the packed LU factorization of a (batch of) m x n matrix with partial
    pivoting; info[b] = i > 0 when U[i, i] (1-based) is exactly zero."""
    LU, pivots, info = _factor("linalg.lu_factor_ex", A, pivot)
    if check_errors and np.any(info._data > 0):
        raise _first_zero_pivot("linalg.lu_factor_ex", A, info._data)
    return _out(_rt["linalg_lu_factor_ex"](LU, pivots, info), out, "linalg.lu_factor_ex")


@linalg_op
def lu_factor(A, *, pivot=True, out=None):
    """(LU, pivots) of a (batch of) matrix: A = P L U packed into one matrix. Raises a
    RuntimeError when U has a zero on its diagonal (use lu_factor_ex or lu for those)."""
    LU, pivots, info = _factor("linalg.lu_factor", A, pivot)
    if np.any(info._data > 0):
        raise _first_zero_pivot("linalg.lu_factor", A, info._data)
    return _out(_rt["linalg_lu_factor"](LU, pivots), out, "linalg.lu_factor")


def _unpack(LU, pivots, unpack_data=True, unpack_pivots=True):
    m, n = LU.shape[-2], LU.shape[-1]
    k = min(m, n)
    empty = _make(np.zeros((0,), LU._data.dtype))
    L = U = P = empty
    if unpack_data:
        L = LU.tril(-1).narrow(-1, 0, k) + _make(np.eye(m, k, dtype=LU._data.dtype))
        U = LU.triu().narrow(-2, 0, k)
    if unpack_pivots:
        P = _make(_perm_matrix(pivots._data, m, LU._data.dtype))
    return P, L, U


@linalg_op
def lu(A, *, pivot=True, out=None):
    """(P, L, U) with A = P L U: P a permutation, L unit lower (m x k), U upper (k x n)."""
    LU, pivots, _ = _factor("linalg.lu", A, pivot)
    return _out(_rt["linalg_lu"](*_unpack(LU, pivots)), out, "linalg.lu")


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """(P, L, U) from lu_factor's packed result; an unrequested part is an empty tensor."""
    _check_matrix(LU_data, "lu_unpack")
    _check_pivots("lu_unpack", LU_data, LU_pivots)
    return _out(_rt["lu_unpack"](*_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots)), out,
                "lu_unpack")


# ----------------------------------------------------------------------------- solving
def _solve_left(LU, pivots, B, adjoint):
    """A^-1 B (or A^-H B) for A = P L U given by its packed factors (batches broadcast)."""
    P = _make(_perm_matrix(pivots._data, LU.shape[-1], LU._data.dtype))
    if adjoint:  # A^H = U^H L^H P^T, so A^-H B = P L^-H U^-H B
        LUh = _t(LU).conj()
        Y = SolveTriangular.apply(LUh, B, upper=False)
        Y = SolveTriangular.apply(LUh, Y, upper=True, unitriangular=True)
        return P @ Y
    Y = SolveTriangular.apply(LU, _t(P) @ B, upper=False, unitriangular=True)
    return SolveTriangular.apply(LU, Y, upper=True)


@linalg_op
def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """Solve AX = B from A's LU factorization (A^H X = B with adjoint=True; XA = B with
    left=False). Batch dims of LU and B broadcast; B must be at least 2-D."""
    name = "linalg.lu_solve"
    _check_matrix(LU, name, square=True)
    _check_pivots(name, LU, pivots)
    if not isinstance(B, Tensor):
        raise TypeError(f"{name}(): argument 'B' must be Tensor, not {type(B).__name__}")
    if B.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions; got "
                           f"shape {list(B.shape)}.")
    if B.dtype != LU.dtype:
        raise RuntimeError(f"{name}: LU and B must have the same dtype; got {LU.dtype} and "
                           f"{B.dtype}.")
    n = LU.shape[-1]
    rows = B.shape[-2] if left else B.shape[-1]
    if rows != n:
        side = "B.shape[-2]" if left else "B.shape[-1]"
        raise RuntimeError(f"{name}: incompatible shapes of A and B; got A {n}x{n} and B "
                           f"{list(B.shape)}, expected {side} == {n}.")
    Bm = B if left else _t(B).conj()
    LUb, Bm = _broadcast_batch(name, LU, Bm)
    piv = pivots.expand(tuple(LUb.shape[:-2]) + (n,)) if LUb.ndim > 2 else pivots
    # X A = B is A^H X^H = B^H: the right-hand solve is the left one with adjoint flipped
    X = _solve_left(LUb, piv, Bm, adjoint if left else not adjoint)
    return _out(X if left else _t(X).conj(), out, name)


# ----------------------------------------------------------------------------- legacy names
def _legacy_lu(A, pivot=True, get_infos=False, out=None):
    """torch.lu: (LU, pivots) or (LU, pivots, infos) with get_infos=True; never raises for a
    singular matrix."""
    _warn_once("lu", "torch.lu is deprecated: use linalg.lu_factor (or linalg.lu_factor_ex "
               "for get_infos=True) instead.")
    LU, pivots, info = _factor("lu", A, pivot)
    res = _rt["_lu_with_info"](LU, pivots, info) if get_infos else (LU, pivots)
    return _out(res, out, "lu")


def _legacy_lu_solve(input, LU_data, LU_pivots, *, out=None):
    """torch.lu_solve(b, LU, pivots) = linalg.lu_solve(LU, pivots, b)."""
    _warn_once("lu_solve", "torch.lu_solve is deprecated: linalg.lu_solve(LU, pivots, B) "
               "takes its arguments in the other order.")
    return lu_solve(LU_data, LU_pivots, input, out=out)


register("lu", wrap_out=False)(_legacy_lu)
register("lu_solve", wrap_out=False)(_legacy_lu_solve)
register("lu_unpack", method=False, wrap_out=False)(lu_unpack)
