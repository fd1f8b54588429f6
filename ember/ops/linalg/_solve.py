"""Inverses, determinants and solvers of ``ember.linalg`` (inv, det, slogdet, solve,
solve_triangular, cholesky). Each differentiable one is an ``Op`` whose backward is written with
ember ops (so double backward works), the matrix-calculus formula stated next to it.
"""
from __future__ import annotations

import numpy as np
from scipy.linalg import lapack as _lapack
from scipy.linalg.blas import get_blas_funcs as _get_blas_funcs

from ..._tensor import _make
from ...autograd.function import Op
from ..complex import complex_ as _complex_
from ..rearrange import diag_embed
from ..rearrange import diagonal as _diagonal
from ..registry import sum_to
from ._common import (
    LinAlgError,
    _batch_prefix,
    _broadcast_batch,
    _check_matrix,
    _check_pair,
    _each,
    _getrf_info,
    _out,
    _rt,
    _singular,
    _t,
    linalg_op,
)


def _h(x):
    """Conjugate transpose (the transpose for real x)."""
    return _t(x).conj()


def _renamed(exc, name, ex_name):
    """The LinAlgError of ``name`` re-raised by its ``_ex`` twin (check_errors=True), naming
    the function the user called."""
    return LinAlgError(str(exc).replace(name, ex_name, 1))


# ----------------------------------------------------------------------------- inverse, det
class Inv(Op):
    """Matrix inverse; d(A^-1) = -A^-1 dA A^-1, so gA = -A^-T G A^-T."""

    holomorphic = True  # see NOTE [Complex gradients]

    @staticmethod
    def forward(ctx, a):
        try:
            y = np.linalg.inv(a)
        except np.linalg.LinAlgError:
            raise _singular("linalg.inv", a) from None
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        yt = _t(y)
        return -(yt @ grad @ yt)


@linalg_op
def inv(A, *, out=None):
    """Inverse of a (batch of) square matrix; LinAlgError when singular."""
    _check_matrix(A, "linalg.inv", square=True)
    return _out(Inv.apply(A), out, "linalg.inv")


@linalg_op
def inv_ex(A, *, check_errors=False, out=None):
    """(inverse, info): info[b] > 0 marks a singular batch element (its inverse is NaN)."""
    _check_matrix(A, "linalg.inv_ex", square=True)
    batch = tuple(A.shape[:-2])
    try:
        res = _rt["linalg_inv_ex"](Inv.apply(A), _make(np.zeros(batch, np.int32)))
    except LinAlgError as exc:
        if check_errors:
            raise _renamed(exc, "linalg.inv", "linalg.inv_ex") from None
        a = A._data
        invs, info = np.full(a.shape, np.nan, a.dtype), np.zeros(batch, np.int32)
        flat_inv, flat_info = invs.reshape((-1,) + a.shape[-2:]), info.reshape(-1)
        for b, m in _each(a):
            flat_info[b] = _getrf_info(m)
            if flat_info[b] == 0:
                flat_inv[b] = np.linalg.inv(m)
        res = _rt["linalg_inv_ex"](_make(invs), _make(info))
    return _out(res, out, "linalg.inv_ex")


class Slogdet(Op):
    """(sign, log|det|) with sign = det / |det|.

    With w = log det A, dw = tr(A^-1 dA), d log|det| = Re(dw) and d sign = sign i Im(dw), so
    gA = c A^-H with c = g_logabs - i Im(conj(g_sign) sign). For real A the sign is piecewise
    constant and c = g_logabs."""

    @staticmethod
    def forward(ctx, a):
        sign, logabs = np.linalg.slogdet(a)
        real = a.real.dtype if a.dtype.kind == "c" else a.dtype  # log|det| is real
        sign, logabs = np.asarray(sign, a.dtype), np.asarray(logabs, real)
        # the saved sign is the output itself, so double backward differentiates through it
        ctx.save_for_backward(a, sign)
        return sign, logabs

    @staticmethod
    def backward(ctx, grad_sign, grad_logabs):
        a, sign = ctx.saved_tensors
        c = grad_logabs
        if a.is_complex():
            c = c.to(a.dtype)
            if grad_sign is not None:
                phase = (grad_sign.conj() * sign).imag
                c = c - _complex_(phase * 0, phase)
        return c.unsqueeze(-1).unsqueeze(-1) * _h(Inv.apply(a))


@linalg_op
def slogdet(A, *, out=None):
    """(sign, logabsdet) of a (batch of) square matrix; sign 0 and -inf for singular ones."""
    _check_matrix(A, "linalg.slogdet", square=True)
    return _out(_rt["linalg_slogdet"](*Slogdet.apply(A)), out, "linalg.slogdet")


@linalg_op
def logdet(A):
    """log(det(A)): NaN for a negative determinant, -inf for a singular matrix."""
    _check_matrix(A, "logdet", square=True)
    sign, logabs = Slogdet.apply(A)
    return logabs + sign.log()  # log(1) = 0, log(-1) = NaN, log(0) = -inf


# ----------------------------------------------------------------------------- solvers
class Solve(Op):
    """X = A^-1 B for equal batch shapes; gB = A^-T G, gA = -gB X^T."""

    holomorphic = True  # see NOTE [Complex gradients]

    @staticmethod
    def forward(ctx, a, b):
        try:
            x = np.linalg.solve(a, b)
        except np.linalg.LinAlgError:
            raise LinAlgError("linalg.solve: The solver failed because the input matrix is "
                              "singular.") from None
        ctx.save_for_backward(a, x)
        return x

    @staticmethod
    def backward(ctx, grad):
        a, x = ctx.saved_tensors
        gb = Solve.apply(_t(a), grad)
        return -(gb @ _t(x)), gb


@linalg_op
def solve(A, B, *, left=True, out=None):
    """The solution X of AX = B (XA = B when left=False); batches broadcast, and B may be a
    (batch of) vector of shape A.shape[:-1]."""
    _check_matrix(A, "linalg.solve", square=True)
    _check_pair("linalg.solve", A, B)
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    if not left:
        A = _t(A)
        B = B if vector else _t(B)
    Bm = B.unsqueeze(-1) if vector else B
    n = A.shape[-1]
    if Bm.shape[-2] != n:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({A.shape[-2]}x{n} and {Bm.shape[-2]}x{Bm.shape[-1]})")
    X = Solve.apply(*_broadcast_batch("linalg.solve", A, Bm))
    if vector:
        X = X.squeeze(-1)
    elif not left:
        X = _t(X)
    return _out(X, out, "linalg.solve")


@linalg_op
def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """(result, info) version of solve: info[b] > 0 marks a singular batch element of A.
    Differs from torch: when any element is singular the whole result is NaN (with
    check_errors=True a singular A raises instead)."""
    try:
        X = solve(A, B, left=left)
        info = np.zeros(A.shape[:-2], np.int32)
    except LinAlgError as exc:
        if check_errors:
            raise _renamed(exc, "linalg.solve", "linalg.solve_ex") from None
        # the shape solve would give, from a stand-in with the same shapes
        shape = solve(_make(np.broadcast_to(np.eye(A.shape[-1], dtype=A._data.dtype),
                                            tuple(A.shape))), B, left=left).shape
        X = _make(np.full(tuple(shape), np.nan, A._data.dtype))
        info = np.array([_getrf_info(m) for _, m in _each(A._data)], np.int32).reshape(
            A.shape[:-2])
    return _out(_rt["linalg_solve_ex"](X, _make(info)), out, "linalg.solve_ex")


class SolveTriangular(Op):
    """X = A^-1 B with A triangular (only its upper/lower triangle is read)."""

    holomorphic = True  # see NOTE [Complex gradients]

    @staticmethod
    def forward(ctx, a, b, upper=True, unitriangular=False):
        ctx.upper, ctx.unit = upper, unitriangular
        x = np.empty(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:],
                     np.result_type(a, b))
        aa = np.broadcast_to(a, x.shape[:-2] + a.shape[-2:])
        bb = np.broadcast_to(b, x.shape)
        if x.size:
            # BLAS trsm, not LAPACK trtrs: a zero on the diagonal gives inf/NaN, as in torch,
            # instead of a "singular matrix" error
            trsm = _get_blas_funcs("trsm", (aa, bb))
            with np.errstate(all="ignore"):
                for idx in np.ndindex(x.shape[:-2]):
                    x[idx] = trsm(1.0, aa[idx], bb[idx], lower=int(not upper),
                                  diag=int(unitriangular))
        ctx.save_for_backward(a, x)
        return x

    @staticmethod
    def backward(ctx, grad):
        a, x = ctx.saved_tensors
        gb = SolveTriangular.apply(_t(a), grad, upper=not ctx.upper, unitriangular=ctx.unit)
        ga = -(gb @ _t(x))
        k = 1 if ctx.unit else 0  # the unit diagonal is not read, so it gets no gradient
        ga = ga.triu(k) if ctx.upper else ga.tril(-k)
        return sum_to(ga, a.shape), gb


@linalg_op
def solve_triangular(input, B, *, upper, left=True, unitriangular=False, out=None):
    """Solve AX = B (XA = B when left=False) for triangular A."""
    A = input  # torch's parser name (see NOTE [linalg parameter names])
    _check_matrix(A, "linalg.solve_triangular", square=True)
    _check_pair("linalg.solve_triangular", A, B)
    if B.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 "
                           f"dimensions; got shape {list(B.shape)}. Use B.unsqueeze(-1) for a "
                           "vector right-hand side.")
    if left:
        X = SolveTriangular.apply(A, B, upper=upper, unitriangular=unitriangular)
    else:
        X = _t(SolveTriangular.apply(_t(A), _t(B), upper=not upper, unitriangular=unitriangular))
    return _out(X, out, "linalg.solve_triangular")


# ----------------------------------------------------------------------------- cholesky
def _not_pd(a, upper_name="linalg.cholesky"):
    for b, m in _each(a):
        info = int(_lapack.get_lapack_funcs("potrf", (m,))(m, lower=1)[1])
        if info > 0:
            return LinAlgError(
                f"{upper_name}: {_batch_prefix(a, b)}The factorization could not be completed "
                f"because the input is not positive-definite (the leading minor of order {info} "
                "is not positive-definite).")
    return LinAlgError(f"{upper_name}: the input is not positive-definite")


class Cholesky(Op):
    """Lower factor L of A = L L^H (reads A's lower triangle).

    With Phi(X) = tril(X) with a halved diagonal: gA = herm(L^-H Phi(L^H gL) L^-1), herm(S) =
    (S + S^H) / 2 (the Hermitian part, torch's convention for the symmetric input)."""

    @staticmethod
    def forward(ctx, a):
        try:
            L = np.linalg.cholesky(a)
        except np.linalg.LinAlgError:
            raise _not_pd(a) from None
        ctx.save_for_backward(L)
        return L

    @staticmethod
    def backward(ctx, grad):
        (L,) = ctx.saved_tensors
        P = _h(L) @ grad
        P = P.tril() - 0.5 * diag_embed(_diagonal(P, 0, -2, -1))
        S = SolveTriangular.apply(_h(L), P, upper=True)            # L^-H P
        S = _h(SolveTriangular.apply(_h(L), _h(S), upper=True))    # (L^-H P) L^-1
        return 0.5 * (S + _h(S))


@linalg_op
def cholesky(input, *, upper=False, out=None):
    """Cholesky factor of a Hermitian positive-definite (batch of) matrix: lower L with
    A = L L^H, or upper U = L^H with A = U^H U. LinAlgError if not positive-definite."""
    A = input  # torch's parser name (see NOTE [linalg parameter names])
    _check_matrix(A, "linalg.cholesky", square=True)
    L = Cholesky.apply(A)
    return _out(_h(L).contiguous() if upper else L, out, "linalg.cholesky")


@linalg_op
def cholesky_ex(input, *, upper=False, check_errors=False, out=None):
    """(L, info): info[b] = order of the first non-positive leading minor, 0 on success."""
    A = input  # torch's parser name (see NOTE [linalg parameter names])
    _check_matrix(A, "linalg.cholesky_ex", square=True)
    try:
        L = cholesky(A, upper=upper)
        return _out(_rt["linalg_cholesky_ex"](L, _make(np.zeros(A.shape[:-2], np.int32))), out,
                    "linalg.cholesky_ex")
    except LinAlgError as exc:
        if check_errors:
            raise _renamed(exc, "linalg.cholesky", "linalg.cholesky_ex") from None
    a = A._data
    Ls, info = np.zeros(a.shape, a.dtype), np.zeros(A.shape[:-2], np.int32)
    flat_L, flat_info = Ls.reshape((-1,) + a.shape[-2:]), info.reshape(-1)
    for b, m in _each(a):
        c, flat_info[b] = _lapack.get_lapack_funcs("potrf", (m,))(m, lower=1)
        flat_L[b] = np.tril(c)
    L = _make(np.ascontiguousarray(np.swapaxes(Ls, -1, -2).conj()) if upper else Ls)
    return _out(_rt["linalg_cholesky_ex"](L, _make(info)), out, "linalg.cholesky_ex")
