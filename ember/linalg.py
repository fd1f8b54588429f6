"""ember.linalg: decompositions, solvers, inverses and norms, like torch.linalg.

Factorizations run in NumPy/SciPy (LAPACK); each differentiable one is an ``Op`` whose backward
is written with ember ops (so double backward works) using the standard matrix-calculus
formulas, stated next to the code. The legacy top-level names (``ember.det``, ``ember.svd``,
``ember.norm``, ...) and the matching Tensor methods are defined at the end of this file.
"""
from __future__ import annotations

import math
import sys
from collections import namedtuple

import numpy as np
from scipy.linalg import lapack as _lapack
from scipy.linalg import expm as _expm
from scipy.linalg import solve_triangular as _sp_solve_triangular

from . import _dtype as D
from ._tensor import Tensor, _make
from .autograd.function import Op
from .ops.registry import FUNCTIONS, norm_dims
from .ops.shape import _cross, diag_embed, diagonal as _diagonal


class LinAlgError(RuntimeError):
    """A linear-algebra failure (singular matrix, not positive-definite), like
    torch.linalg.LinAlgError; a RuntimeError subclass."""


_rt = {n: namedtuple(n, f) for n, f in (
    ("linalg_inv_ex", "inverse info"), ("linalg_cholesky_ex", "L info"),
    ("linalg_slogdet", "sign logabsdet"), ("slogdet", "sign logabsdet"), ("linalg_qr", "Q R"),
    ("qr", "Q R"), ("linalg_svd", "U S Vh"), ("svd", "U S V"),
    ("linalg_eigh", "eigenvalues eigenvectors"),
    ("linalg_lstsq", "solution residuals rank singular_values"),
    ("linalg_solve_ex", "result info"))}

_TORCH_NAMES = {D.float32: "Float", D.float64: "Double", D.float16: "Half",
                D.bfloat16: "BFloat16", D.int64: "Long", D.int32: "Int", D.int16: "Short",
                D.int8: "Char", D.uint8: "Byte", D.bool_: "Bool"}


# ----------------------------------------------------------------------------- checks
def _check_float(A, name, lapack=True):
    if not isinstance(A, Tensor):
        raise TypeError(f"{name}(): argument 'A' must be Tensor, not {type(A).__name__}")
    if not A.is_floating_point():
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{_TORCH_NAMES[A.dtype]}")
    if lapack and A.dtype in (D.float16, D.bfloat16):
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got "
                           f"{_TORCH_NAMES[A.dtype]}; convert to float32 or float64 first")


def _check_matrix(A, name, square=False):
    _check_float(A, name)
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def _batch_prefix(a, b):
    return f"(Batch element {b}): " if a.ndim > 2 else ""


def _each(a):
    """(batch index, 2-D matrix) pairs of a (*, m, n) array."""
    flat = a.reshape((-1,) + a.shape[-2:])
    return enumerate(flat)


def _getrf_info(m):
    return int(_lapack.get_lapack_funcs("getrf", (m,))(m)[2])


def _singular(name, a):
    """The LinAlgError torch raises for a singular (batch of) matrix."""
    for b, m in _each(a):
        info = _getrf_info(m)
        if info > 0:
            return LinAlgError(
                f"{name}: {_batch_prefix(a, b)}The diagonal element {info} is zero, the inversion "
                "could not be completed because the input matrix is singular.")
    return LinAlgError(f"{name}: the input matrix is singular")


def _t(x):
    return x.transpose(-2, -1)


# ----------------------------------------------------------------------------- inverse, det
class Inv(Op):
    """Matrix inverse; d(A^-1) = -A^-1 dA A^-1, so gA = -A^-T G A^-T."""

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


def inv(A, *, out=None):
    """Inverse of a (batch of) square matrix; LinAlgError when singular."""
    _check_matrix(A, "linalg.inv", square=True)
    return _out(Inv.apply(A), out, "linalg.inv")


def inv_ex(A, *, check_errors=False, out=None):
    """(inverse, info): info[b] > 0 marks a singular batch element (its inverse is NaN)."""
    _check_matrix(A, "linalg.inv_ex", square=True)
    batch = tuple(A.shape[:-2])
    try:
        res = _rt["linalg_inv_ex"](Inv.apply(A), _make(np.zeros(batch, np.int32)))
    except LinAlgError:
        if check_errors:
            raise
        a = A._data
        invs, info = np.full(a.shape, np.nan, a.dtype), np.zeros(batch, np.int32)
        flat_inv, flat_info = invs.reshape((-1,) + a.shape[-2:]), info.reshape(-1)
        for b, m in _each(a):
            flat_info[b] = _getrf_info(m)
            if flat_info[b] == 0:
                flat_inv[b] = np.linalg.inv(m)
        res = _rt["linalg_inv_ex"](_make(invs), _make(info))
    return _out(res, out, "linalg.inv_ex")


def _adjugate_t(A):
    """adj(A)^T, also for singular A: with A = U S V^T, adj(A)^T = det(U) det(V) U diag(prod of
    the other singular values) V^T (no division by a zero singular value)."""
    U, S, Vh = svd(A)
    n = S.shape[-1]
    ones = S.narrow(-1, 0, 1) * 0 + 1
    left = ones._cat_with(S.narrow(-1, 0, n - 1).cumprod(-1), -1) if n > 1 else ones
    right = ones._cat_with(S.flip(-1).narrow(-1, 0, n - 1).cumprod(-1), -1).flip(-1) \
        if n > 1 else ones
    others = left * right
    sign = _make(np.asarray(np.sign(np.linalg.det(U._data) * np.linalg.det(Vh._data))))
    return (U * others.unsqueeze(-2)) @ Vh * sign.unsqueeze(-1).unsqueeze(-1)


class Det(Op):
    """Determinant; d det(A) / dA = adj(A)^T (= det(A) A^-T when A is invertible)."""

    @staticmethod
    def forward(ctx, a):
        y = np.asarray(np.linalg.det(a))
        ctx.save_for_backward(a, y)
        return y

    @staticmethod
    def backward(ctx, grad):
        a, y = ctx.saved_tensors
        g = grad.unsqueeze(-1).unsqueeze(-1)
        if a.shape[-1] == 0:
            return a * 0
        if bool((y._data != 0).all()) and np.all(np.isfinite(y._data)):
            try:
                return g * y.unsqueeze(-1).unsqueeze(-1) * _t(Inv.apply(a))
            except LinAlgError:
                pass
        return g * _adjugate_t(a)


def det(A):
    """Determinant of a (batch of) square matrix."""
    _check_matrix(A, "linalg.det", square=True)
    return Det.apply(A)


class Slogdet(Op):
    """(sign, log|det|); d log|det A| / dA = A^-T. The sign is piecewise constant."""

    @staticmethod
    def forward(ctx, a):
        sign, logabs = np.linalg.slogdet(a)
        ctx.save_for_backward(a)
        return np.asarray(sign, a.dtype), np.asarray(logabs, a.dtype)

    @staticmethod
    def backward(ctx, grad_sign, grad_logabs):
        (a,) = ctx.saved_tensors
        return grad_logabs.unsqueeze(-1).unsqueeze(-1) * _t(Inv.apply(a))


def slogdet(A):
    """(sign, logabsdet) of a (batch of) square matrix; sign 0 and -inf for singular ones."""
    _check_matrix(A, "linalg.slogdet", square=True)
    return _rt["linalg_slogdet"](*Slogdet.apply(A))


def logdet(A):
    """log(det(A)): NaN for a negative determinant, -inf for a singular matrix."""
    _check_matrix(A, "logdet", square=True)
    sign, logabs = Slogdet.apply(A)
    return logabs + sign.log()  # log(1) = 0, log(-1) = NaN, log(0) = -inf


# ----------------------------------------------------------------------------- solvers
class Solve(Op):
    """X = A^-1 B for equal batch shapes; gB = A^-T G, gA = -gB X^T."""

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


def _broadcast_batch(name, A, B):
    try:
        batch = np.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-2]))
    except ValueError:
        raise RuntimeError(f"{name}: the batch dimensions of A {list(A.shape)} and B "
                           f"{list(B.shape)} do not broadcast") from None
    return A.expand(batch + tuple(A.shape[-2:])), B.expand(batch + tuple(B.shape[-2:]))


def _check_pair(name, A, B):
    _check_float(B, name)
    if A.dtype != B.dtype:
        raise RuntimeError(f"{name}: Expected A and B to have the same dtype, but found A of type "
                           f"{_TORCH_NAMES[A.dtype]} and B of type {_TORCH_NAMES[B.dtype]} "
                           "instead")


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


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """(result, info) version of solve: info[b] > 0 marks a singular batch element of A.
    Differs from torch: when any element is singular the whole result is NaN (with
    check_errors=True a singular A raises instead)."""
    try:
        X = solve(A, B, left=left)
        info = np.zeros(A.shape[:-2], np.int32)
    except LinAlgError:
        if check_errors:
            raise
        # the shape solve would give, from a stand-in with the same shapes
        shape = solve(_make(np.broadcast_to(np.eye(A.shape[-1], dtype=A._data.dtype),
                                            tuple(A.shape))), B, left=left).shape
        X = _make(np.full(tuple(shape), np.nan, A._data.dtype))
        info = np.array([_getrf_info(m) for _, m in _each(A._data)], np.int32).reshape(
            A.shape[:-2])
    return _out(_rt["linalg_solve_ex"](X, _make(info)), out, "linalg.solve_ex")


class SolveTriangular(Op):
    """X = A^-1 B with A triangular (only its upper/lower triangle is read)."""

    @staticmethod
    def forward(ctx, a, b, upper=True, unitriangular=False):
        ctx.upper, ctx.unit = upper, unitriangular
        x = np.empty(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:],
                     np.result_type(a, b))
        aa = np.broadcast_to(a, x.shape[:-2] + a.shape[-2:])
        bb = np.broadcast_to(b, x.shape)
        with np.errstate(all="ignore"):
            for idx in np.ndindex(x.shape[:-2]):
                x[idx] = _sp_solve_triangular(aa[idx], bb[idx], lower=not upper,
                                              unit_diagonal=unitriangular, check_finite=False)
        ctx.save_for_backward(a, x)
        return x

    @staticmethod
    def backward(ctx, grad):
        from .ops.registry import sum_to
        a, x = ctx.saved_tensors
        gb = SolveTriangular.apply(_t(a), grad, upper=not ctx.upper, unitriangular=ctx.unit)
        ga = -(gb @ _t(x))
        k = 1 if ctx.unit else 0  # the unit diagonal is not read, so it gets no gradient
        ga = ga.triu(k) if ctx.upper else ga.tril(-k)
        return sum_to(ga, a.shape), gb


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """Solve AX = B (XA = B when left=False) for triangular A."""
    _check_matrix(A, "linalg.solve_triangular", square=True)
    _check_pair("linalg.solve_triangular", A, B)
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
    """Lower factor L of A = L L^T (reads A's lower triangle).

    With Phi(X) = tril(X) with a halved diagonal: gA = sym(L^-T Phi(L^T gL) L^-1)."""

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
        P = _t(L) @ grad
        P = P.tril() - 0.5 * diag_embed(_diagonal(P, 0, -2, -1))
        S = SolveTriangular.apply(_t(L), P, upper=True)            # L^-T P
        S = _t(SolveTriangular.apply(_t(L), _t(S), upper=True))    # (L^-T P) L^-1
        return 0.5 * (S + _t(S))


def cholesky(A, *, upper=False, out=None):
    """Cholesky factor of a symmetric positive-definite (batch of) matrix: lower L with
    A = L L^T, or upper U = L^T with A = U^T U. LinAlgError if not positive-definite."""
    _check_matrix(A, "linalg.cholesky", square=True)
    L = Cholesky.apply(A)
    return _out(_t(L).contiguous() if upper else L, out, "linalg.cholesky")


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """(L, info): info[b] = order of the first non-positive leading minor, 0 on success."""
    _check_matrix(A, "linalg.cholesky_ex", square=True)
    try:
        L = cholesky(A, upper=upper)
        return _out(_rt["linalg_cholesky_ex"](L, _make(np.zeros(A.shape[:-2], np.int32))), out,
                    "linalg.cholesky_ex")
    except LinAlgError:
        if check_errors:
            raise
    a = A._data
    Ls, info = np.zeros(a.shape, a.dtype), np.zeros(A.shape[:-2], np.int32)
    flat_L, flat_info = Ls.reshape((-1,) + a.shape[-2:]), info.reshape(-1)
    for b, m in _each(a):
        c, flat_info[b] = _lapack.get_lapack_funcs("potrf", (m,))(m, lower=1)
        flat_L[b] = np.tril(c)
    L = _make(np.ascontiguousarray(np.swapaxes(Ls, -1, -2)) if upper else Ls)
    return _out(_rt["linalg_cholesky_ex"](L, _make(info)), out, "linalg.cholesky_ex")


# ----------------------------------------------------------------------------- qr
def _copyltu(M):
    """The symmetric matrix with M's lower triangle."""
    return M.tril() + _t(M.tril(-1))


def _qr_backward_tall(Q, R, gQ, gR):
    # m >= n: M = R gR^T - gQ^T Q;  gA = (gQ + Q copyltu(M)) R^-T
    M = R @ _t(gR) - _t(gQ) @ Q
    b = gQ + Q @ _copyltu(M)
    return _t(SolveTriangular.apply(R, _t(b), upper=True))


class QR(Op):
    """A = QR (Householder, LAPACK signs). Differentiable for mode='reduced', and for
    mode='complete' when m <= n."""

    @staticmethod
    def forward(ctx, a, mode="reduced"):
        ctx.mode = mode
        if mode == "r":
            r = np.linalg.qr(a, mode="r")
            ctx.save_for_backward(None, r)
            return np.zeros((0,), a.dtype), r
        q, r = np.linalg.qr(a, mode=mode)
        ctx.save_for_backward(q, r)
        return q, r

    @staticmethod
    def backward(ctx, gQ, gR):
        m, n = ctx._out_meta[1][0][-2], ctx._out_meta[1][0][-1]
        if ctx.mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed "
                               "when mode='r'. Please use linalg.qr(A, mode='reduced') if you are "
                               "going to differentiate through linalg.qr.")
        Q, R = ctx.saved_tensors
        if ctx.mode == "complete" and Q.shape[-1] > n:
            raise NotImplementedError("The QR decomposition is not differentiable when "
                                      "mode='complete' and nrows > ncols.")
        if m >= n:
            return _qr_backward_tall(Q, R, gQ, gR)
        # m < n: A = [X | Y], R = [U | V] with X = QU square; Y = QV
        U, V = R.narrow(-1, 0, m), R.narrow(-1, m, n - m)
        gU, gV = gR.narrow(-1, 0, m), gR.narrow(-1, m, n - m)
        Y = Q @ V
        gX = _qr_backward_tall(Q, U, gQ + Y @ _t(gV), gU)
        return gX._cat_with(Q @ gV, -1)


def qr(A, mode="reduced", *, out=None):
    """QR decomposition: mode 'reduced' (Q m x k), 'complete' (Q m x m) or 'r' (Q empty)."""
    _check_matrix(A, "linalg.qr")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    return _out(_rt["linalg_qr"](*QR.apply(A, mode=mode)), out, "linalg.qr")


# ----------------------------------------------------------------------------- svd, eigh
class SVD(Op):
    """A = U diag(S) Vh. Gradients assume distinct (non-zero when m != n) singular values."""

    @staticmethod
    def forward(ctx, a, full_matrices=True):
        ctx.set_materialize_grads(False)
        ctx.full = full_matrices
        u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
        ctx.save_for_backward(u, s, vh)
        return u, s, vh  # the saved arrays must be the outputs themselves (see _pack)

    @staticmethod
    def backward(ctx, gU, gS, gVh):
        U, S, Vh = ctx.saved_tensors
        k = S.shape[-1]
        if ctx.full:  # the extra columns are arbitrary: only the first k carry a gradient
            U, Vh = U.narrow(-1, 0, k), Vh.narrow(-2, 0, k)
            gU = gU.narrow(-1, 0, k) if gU is not None else None
            gVh = gVh.narrow(-2, 0, k) if gVh is not None else None
        return _svd_backward(U, S, Vh, gU, gS, gVh)


def _off_diag_inverse(E):
    """1 / E off the diagonal, 0 on it (E_ij = x_j - x_i)."""
    n = E.shape[-1]
    eye = _make(np.eye(n, dtype=bool))
    return eye.logical_not().to(E.dtype) / E.masked_fill(eye, 1.0)


def _svd_backward(U, S, Vh, gU, gS, gVh):
    # gA = U [ (F o (U^T gU - gU^T U)) S + diag(gS) + S (F o (V^T gV - gV^T V)) ] V^T
    #      + (I - U U^T) gU S^-1 V^T + U S^-1 gV^T (I - V V^T),   F_ij = 1 / (s_j^2 - s_i^2)
    m, n = U.shape[-2], Vh.shape[-1]
    inner = diag_embed(gS) if gS is not None else None
    if gU is not None or gVh is not None:
        s2 = S * S
        F = _off_diag_inverse(s2.unsqueeze(-2) - s2.unsqueeze(-1))
        terms = []
        if gU is not None:
            UtgU = _t(U) @ gU
            terms.append((F * (UtgU - _t(UtgU))) * S.unsqueeze(-2))
        if gVh is not None:
            VhgV = Vh @ _t(gVh)  # V^T gV
            terms.append(S.unsqueeze(-1) * (F * (VhgV - _t(VhgV))))
        for t in terms:
            inner = t if inner is None else inner + t
    gA = U @ inner @ Vh if inner is not None else None
    if gU is not None and m > S.shape[-1]:
        extra = (gU - U @ (_t(U) @ gU)) / S.unsqueeze(-2) @ Vh
        gA = extra if gA is None else gA + extra
    if gVh is not None and n > S.shape[-1]:
        extra = U @ ((gVh - (gVh @ _t(Vh)) @ Vh) / S.unsqueeze(-1))
        gA = extra if gA is None else gA + extra
    return gA


def svd(A, full_matrices=True, *, driver=None, out=None):
    """Singular value decomposition (U, S, Vh) with A = U diag(S) Vh."""
    _check_matrix(A, "linalg.svd")
    return _out(_rt["linalg_svd"](*SVD.apply(A, full_matrices=full_matrices)), out,
                "linalg.svd")


def svdvals(A, *, driver=None, out=None):
    """Singular values, in descending order."""
    _check_matrix(A, "linalg.svdvals")
    return _out(SVD.apply(A, full_matrices=False)[1], out, "linalg.svdvals")


class Eigh(Op):
    """Eigen-decomposition of a symmetric matrix (reads the UPLO triangle), eigenvalues
    ascending. gA = sym(V (diag(gL) + F o (V^T gV)) V^T) with F_ij = 1 / (l_j - l_i);
    assumes distinct eigenvalues when eigenvectors get a gradient."""

    @staticmethod
    def forward(ctx, a, UPLO="L"):
        ctx.set_materialize_grads(False)
        w, v = np.linalg.eigh(a, UPLO=UPLO)
        ctx.save_for_backward(w, v)
        return w, v

    @staticmethod
    def backward(ctx, gL, gV):
        L, V = ctx.saved_tensors
        inner = diag_embed(gL) if gL is not None else None
        if gV is not None:
            F = _off_diag_inverse(L.unsqueeze(-2) - L.unsqueeze(-1))
            t = F * (_t(V) @ gV)
            inner = t if inner is None else inner + t
        gA = V @ inner @ _t(V)
        return 0.5 * (gA + _t(gA))  # a symmetric gradient, as torch returns


def _check_uplo(UPLO):
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")


def eigh(A, UPLO="L", *, out=None):
    """(eigenvalues ascending, eigenvectors as columns) of a symmetric (batch of) matrix."""
    _check_matrix(A, "linalg.eigh", square=True)
    _check_uplo(UPLO)
    return _out(_rt["linalg_eigh"](*Eigh.apply(A, UPLO=UPLO)), out, "linalg.eigh")


def eigvalsh(A, UPLO="L", *, out=None):
    """Eigenvalues (ascending) of a symmetric (batch of) matrix."""
    _check_matrix(A, "linalg.eigvalsh", square=True)
    _check_uplo(UPLO)
    return _out(Eigh.apply(A, UPLO=UPLO)[0], out, "linalg.eigvalsh")


# ----------------------------------------------------------------------------- pinv, rank, ...
def _tolerances(s_max, m, n, dtype, atol, rtol):
    """torch's rule: rtol defaults to eps * max(m, n) unless atol > 0 was given."""
    atol_v = 0.0 if atol is None else (atol._data if isinstance(atol, Tensor) else atol)
    if rtol is None:
        rtol_v = np.finfo(dtype).eps * max(m, n) if atol is None or np.all(
            np.asarray(atol_v) <= 0) else 0.0
    else:
        rtol_v = rtol._data if isinstance(rtol, Tensor) else rtol
    return np.maximum(np.asarray(atol_v), np.asarray(rtol_v) * s_max)


class Pinv(Op):
    """Moore-Penrose pseudo-inverse P = A^+ via the SVD. Its gradient (for constant rank):
    gA = -P^T G P^T + (I - A P) G^T P P^T + P^T P G^T (I - P A)."""

    @staticmethod
    def forward(ctx, a, atol=None, rtol=None):
        m, n = a.shape[-2:]
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        smax = s.max(-1, keepdims=True, initial=0.0)
        tol = _tolerances(smax, m, n, a.dtype, atol, rtol)
        keep = s > (tol[..., None] if np.ndim(tol) == s.ndim - 1 else tol)
        with np.errstate(divide="ignore"):
            s_inv = np.where(keep, 1 / np.where(keep, s, 1), 0).astype(a.dtype)
        p = np.swapaxes(vh, -1, -2) * s_inv[..., None, :] @ np.swapaxes(u, -1, -2)
        ctx.save_for_backward(a, p)
        return p

    @staticmethod
    def backward(ctx, grad):
        a, p = ctx.saved_tensors
        pt, gt = _t(p), _t(grad)
        m, n = a.shape[-2], a.shape[-1]
        eye_m = _make(np.eye(m, dtype=a._data.dtype))
        eye_n = _make(np.eye(n, dtype=a._data.dtype))
        return (-(pt @ grad @ pt) + (eye_m - a @ p) @ gt @ (p @ pt)
                + (pt @ p) @ gt @ (eye_n - p @ a))


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """Pseudo-inverse; singular values <= max(atol, rtol * s_max) are treated as zero."""
    _check_matrix(A, "linalg.pinv")
    return _out(Pinv.apply(A, atol=atol, rtol=rtol), out, "linalg.pinv")


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, tol=None, out=None):
    """Number of singular values above max(atol, rtol * s_max), as int64."""
    _check_matrix(A, "linalg.matrix_rank")
    if tol is not None:
        atol, rtol = tol, 0.0
    a = A._data
    s = np.abs(np.linalg.eigvalsh(a)) if hermitian else np.linalg.svd(a, compute_uv=False)
    smax = s.max(-1, initial=0.0)
    tol_v = _tolerances(smax, a.shape[-2], a.shape[-1], a.dtype, atol, rtol)
    return _out(_make((s > np.asarray(tol_v)[..., None]).sum(-1).astype(np.int64)), out,
                "linalg.matrix_rank")


def matrix_power(A, n, *, out=None):
    """A multiplied by itself n times (n < 0 uses the inverse; n == 0 gives the identity)."""
    _check_matrix(A, "linalg.matrix_power", square=True)
    if not isinstance(n, (int, np.integer)):
        raise TypeError(f"linalg.matrix_power(): argument 'n' must be int, not "
                        f"{type(n).__name__}")
    if n == 0:
        eye = np.broadcast_to(np.eye(A.shape[-1], dtype=A._data.dtype), tuple(A.shape))
        return _out(_make(eye.copy()), out, "linalg.matrix_power")
    base = inv(A) if n < 0 else A
    n = abs(int(n))
    result = None
    while n:  # exponentiation by squaring
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    return _out(result, out, "linalg.matrix_power")


class MatrixExp(Op):
    """exp(A) (scipy's Pade approximation). Its gradient is the top-right block of
    exp([[A^T, G], [0, A^T]]) (the Frechet derivative in direction G, transposed)."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _expm(a).astype(a.dtype) if a.size else a.copy()

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        n = a.shape[-1]
        at = _t(a)
        top = at._cat_with(grad, -1)
        bottom = (at * 0)._cat_with(at, -1)
        big = MatrixExp.apply(top._cat_with(bottom, -2))
        return big.narrow(-2, 0, n).narrow(-1, n, n)


def matrix_exp(A):
    """Matrix exponential of a (batch of) square matrix."""
    _check_matrix(A, "linalg.matrix_exp", square=True)
    return MatrixExp.apply(A)


def lstsq(A, B, rcond=None, *, driver=None):
    """Least-squares solution of AX = B: (solution, residuals, rank, singular_values).

    The solution is pinv(A) @ B (minimum norm, differentiable). Like torch's CPU drivers:
    residuals (squared column residual norms) only when m > n, A has full rank and the driver
    is not 'gelsy' (the default); rank unless driver='gels'; singular values for
    'gelsd'/'gelss'."""
    name = "torch.linalg.lstsq"
    _check_matrix(A, "linalg.lstsq")
    _check_pair("linalg.lstsq", A, B)
    if driver not in (None, "gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(f"{name}: parameter `driver` should be one of (gels, gelsy, gelsd, "
                           f"gelss); got {driver!r}")
    driver = driver or "gelsy"
    vector = B.ndim == A.ndim - 1
    Bm = B.unsqueeze(-1) if vector else B
    if Bm.shape[-2] != A.shape[-2]:
        raise RuntimeError(f"{name}: input.size(-2) should match other.size(-2); got A "
                           f"{list(A.shape)} and B {list(B.shape)}")
    m, n = A.shape[-2], A.shape[-1]
    dt = A._data.dtype
    rtol = rcond if rcond is not None and rcond > 0 else np.finfo(dt).eps * max(m, n)
    X = Pinv.apply(A, rtol=rtol) @ Bm
    rank = matrix_rank(A.detach(), rtol=rtol) if driver != "gels" else \
        _make(np.zeros((0,), np.int64))
    full = bool(np.all(matrix_rank(A.detach(), rtol=rtol)._data == n))
    if m > n and driver != "gelsy" and full:
        residuals = ((A @ X - Bm) ** 2).sum(-2)
        residuals = residuals.squeeze(-1) if vector else residuals
    else:
        residuals = _make(np.zeros((0,), dt))
    sv = svdvals(A.detach()) if driver in ("gelsd", "gelss") else _make(np.zeros((0,), dt))
    return _rt["linalg_lstsq"](X.squeeze(-1) if vector else X, residuals, rank, sv)


def cross(input, other, *, dim=-1, out=None):
    """Cross product of 3-vectors along ``dim`` (default -1), broadcasting."""
    try:
        res = _cross(input, other, dim, "linalg.cross")
    except ValueError:
        raise RuntimeError(f"linalg.cross: the shapes {list(input.shape)} and "
                           f"{list(other.shape)} do not broadcast") from None
    return _out(res, out, "linalg.cross")


def vecdot(x, y, *, dim=-1, out=None):
    """Dot product of vectors along ``dim``, broadcasting the other dims."""
    return _out((x * y).sum(dim), out, "linalg.vecdot")


def multi_dot(tensors, *, out=None):
    """Product of a chain of matrices (first/last may be 1-D), in the cheapest order."""
    ts = list(tensors)
    if len(ts) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(ts)}")
    for i, t in enumerate(ts):
        ok = t.ndim in (1, 2) if i in (0, len(ts) - 1) else t.ndim == 2
        if not ok:
            which = "first" if i == 0 else "last" if i == len(ts) - 1 else f"tensor {i}"
            need = "1D or 2D" if i in (0, len(ts) - 1) else "2D"
            raise RuntimeError(f"multi_dot(): {'the ' if i in (0, len(ts) - 1) else ''}{which}"
                               f"{' tensor' if i in (0, len(ts) - 1) else ''} must be {need} but "
                               f"got {t.ndim}D")
    first_vec, last_vec = ts[0].ndim == 1, ts[-1].ndim == 1
    if first_vec:
        ts[0] = ts[0].unsqueeze(0)
    if last_vec:
        ts[-1] = ts[-1].unsqueeze(-1)
    res = _chain(ts)
    if first_vec:
        res = res.squeeze(0)
    if last_vec:
        res = res.squeeze(-1)
    return _out(res, out, "linalg.multi_dot")


def _chain(ts):
    """Matrix-chain order by dynamic programming on the multiplication count."""
    dims = [ts[0].shape[0]] + [t.shape[1] for t in ts]
    k = len(ts)
    cost = [[0] * k for _ in range(k)]
    split = [[0] * k for _ in range(k)]
    for length in range(1, k):
        for i in range(k - length):
            j = i + length
            cost[i][j] = math.inf
            for s in range(i, j):
                c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, s

    def build(i, j):
        if i == j:
            return ts[i]
        s = split[i][j]
        return build(i, s) @ build(s + 1, j)

    return build(0, k - 1)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonal of the last two dims (by default) as a view."""
    return _diagonal(A, offset, dim1, dim2)


def matmul(input, other, *, out=None):
    return FUNCTIONS["matmul"](input, other, out=out)


# ----------------------------------------------------------------------------- norms
class PNorm(Op):
    """(sum |x|^p)^(1/p) over dims for a finite p > 1 (p = 2 is the Euclidean norm).

    d/dx = sign(x) |x|^(p-1) / norm^(p-1); 0 where the norm is 0 (torch's subgradient)."""

    @staticmethod
    def forward(ctx, x, p=2.0, dims=(), keepdim=False):
        ctx.p, ctx.dims, ctx.keepdim = p, dims, keepdim
        with np.errstate(over="ignore"):
            if p == 2:
                y = np.sqrt(np.sum(x * x, axis=dims, keepdims=keepdim))
            else:
                y = np.sum(np.abs(x) ** p, axis=dims, keepdims=keepdim) ** (1.0 / p)
        y = np.asarray(y, x.dtype)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        if not ctx.keepdim and ctx.dims:
            kept = tuple(1 if i in ctx.dims else n for i, n in enumerate(x.shape))
            y, grad = y.reshape(kept), grad.reshape(kept)
        zero = y == 0
        safe = y.masked_fill(zero, 1.0)
        if ctx.p == 2:
            scale = x / safe
        else:
            scale = x.sign() * x.abs() ** (ctx.p - 1) / safe ** (ctx.p - 1)
        return (grad * scale).masked_fill(zero, 0.0)


def _ord_name(ord):
    return "inf" if ord == math.inf else "-inf" if ord == -math.inf else f"{ord:g}"


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """Vector ``ord``-norm over ``dim`` (all elements by default): inf/-inf take max/min |x|,
    0 counts non-zeros, other p give (sum |x|^p)^(1/p)."""
    name = "linalg.vector_norm"
    _check_float(x, name, lapack=False)
    if isinstance(ord, str):
        raise RuntimeError(f"{name}: ord must be a number, got '{ord}'")
    if dtype is not None:
        dt = D.to_dtype(dtype)
        if D.promote_types(x.dtype, dt) != dt:
            raise RuntimeError(f"{name}: the dtype of the input ({_TORCH_NAMES[x.dtype]}) should "
                               f"be convertible without narrowing to the specified dtype "
                               f"({_TORCH_NAMES[dt]})")
        x = x.to(dt)
    dims = norm_dims(dim, x.ndim, name)
    ord = float(ord)
    empty = x.ndim and any(x.shape[d] == 0 for d in dims)
    if empty and (ord < 0 or ord == math.inf):
        raise RuntimeError(f"{name} cannot compute the {_ord_name(ord)} norm on an empty tensor "
                           "because the operation does not have an identity")
    a = x.abs()
    if not dims:  # a 0-d input: every norm is |x| (except ord 0, which counts)
        res = (x != 0).to(x.dtype) if ord == 0 else a
    elif ord == math.inf:
        res = a.amax(dims, keepdim)
    elif ord == -math.inf:
        res = a.amin(dims, keepdim)
    elif ord == 0:
        res = (x != 0).to(x.dtype).sum(dims, keepdim=keepdim)
    elif ord == 1:
        res = a.sum(dims, keepdim=keepdim)
    elif ord > 1:
        res = PNorm.apply(x, p=ord, dims=dims, keepdim=keepdim)
    else:  # 0 < p < 1 or p < 0: the plain formula (infinite gradient at zeros, as in torch)
        res = (a ** ord).sum(dims, keepdim=keepdim) ** (1.0 / ord)
    return _out(res, out, name)


def _two_dims(A, dim, name):
    dim = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
    if len(dim) != 2:
        raise RuntimeError(f"{name}: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
    d0, d1 = (norm_dims(d, A.ndim, name)[0] for d in dim)
    if d0 == d1:
        raise RuntimeError(f"{name}: dims must be different. Got ({dim[0]}, {dim[1]})")
    return d0, d1


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """Matrix norm over the two dims in ``dim``: 'fro', 'nuc', 2/-2 (largest/smallest singular
    value), 1/-1 (max/min column abs-sum), inf/-inf (max/min row abs-sum)."""
    name = "linalg.matrix_norm"
    _check_float(A, name, lapack=False)
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    d0, d1 = _two_dims(A, dim, name)
    if dtype is not None:
        A = A.to(dtype)
    if ord == "fro":
        return _out(vector_norm(A, 2, (d0, d1), keepdim), out, name)
    if ord not in ("nuc", 2, -2, 1, -1, math.inf, -math.inf):
        raise RuntimeError(f"{name}: Order {ord} not supported.")
    if A.numel() == 0:
        shape = [1 if i in (d0, d1) else s for i, s in enumerate(A.shape)]
        res = _make(np.zeros(shape, A._data.dtype))
        return _out(res if keepdim else res.squeeze((d0, d1)), out, name)
    if ord in ("nuc", 2, -2):
        _check_float(A, name)
        S = svdvals(A.movedim((d0, d1), (-2, -1)))
        res = S.sum(-1) if ord == "nuc" else S.amax(-1) if ord == 2 else S.amin(-1)
        if keepdim:
            for d in sorted((d0, d1)):
                res = res.unsqueeze(d)
        return _out(res, out, name)
    # 1 / -1: reduce rows (sum over d0) then pick over columns; inf / -inf: the other way
    sum_dim, pick_dim = (d0, d1) if abs(ord) == 1 else (d1, d0)
    sums = A.abs().sum(sum_dim, keepdim=True)
    res = sums.amax(pick_dim, keepdim=True) if ord > 0 else sums.amin(pick_dim, keepdim=True)
    return _out(res if keepdim else res.squeeze((d0, d1)), out, name)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """Vector or matrix norm (torch.linalg.norm): with ``ord`` and no ``dim`` the input must be
    1-D or 2-D; an int or 1-tuple dim means a vector norm, a 2-tuple a matrix norm."""
    _check_float(A, "linalg.norm", lapack=False)
    if dim is not None:
        dim = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
    if ord is None:
        if dim is not None and len(dim) == 2:
            return matrix_norm(A, "fro", dim, keepdim, dtype=dtype, out=out)
        return vector_norm(A, 2, dim, keepdim, dtype=dtype, out=out)
    if dim is None:
        if A.ndim not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must "
                               f"be 1D or 2D. Got {A.ndim}D.")
        dim = tuple(range(A.ndim))
    if isinstance(ord, str) or len(dim) == 2:
        return matrix_norm(A, ord, dim, keepdim, dtype=dtype, out=out)
    return vector_norm(A, ord, dim, keepdim, dtype=dtype, out=out)


def torch_norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """Legacy ember.norm / Tensor.norm: a number p (or 'fro' over <= 2 dims) is a vector norm
    over ``dim`` (every element by default); 'nuc' is the nuclear matrix norm."""
    if dim is not None and not isinstance(dim, (int, np.integer)):
        dim = tuple(dim)
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, (int, np.integer)) or len(dim) <= 2):
            return vector_norm(input, 2, dim, keepdim, dtype=dtype, out=out)
        dims = tuple(range(input.ndim)) if dim is None else dim
        return matrix_norm(input, p, dims, keepdim, dtype=dtype, out=out)
    return vector_norm(input, 2.0 if p is None else p, dim, keepdim, dtype=dtype, out=out)


def dist(input, other, p=2):
    """p-norm of input - other (broadcasting)."""
    return vector_norm(input - other, p)


# ----------------------------------------------------------------------------- legacy names
def _inverse(input, *, out=None):
    return inv(input, out=out)


def _legacy_cholesky(input, upper=False, *, out=None):
    return cholesky(input, upper=upper, out=out)


def _legacy_svd(input, some=True, compute_uv=True, *, out=None):
    """torch.svd: (U, S, V) with V (not V^T); compute_uv=False gives zero U and V."""
    _check_matrix(input, "svd")
    if not compute_uv:
        m, n = input.shape[-2], input.shape[-1]
        batch = tuple(input.shape[:-2])
        z = np.zeros
        return _rt["svd"](_make(z(batch + (m, m), input._data.dtype)), svdvals(input),
                          _make(z(batch + (n, n), input._data.dtype)))
    U, S, Vh = SVD.apply(input, full_matrices=not some)
    return _out(_rt["svd"](U, S, _t(Vh)), out, "svd")


def _legacy_qr(input, some=True, *, out=None):
    Q, R = qr(input, "reduced" if some else "complete")
    return _out(_rt["qr"](Q, R), out, "qr")


def _pinverse(input, rcond=1e-15):
    return pinv(input, rtol=rcond)


def _legacy_slogdet(input):
    return _rt["slogdet"](*slogdet(input))


_TOP_LEVEL = {"det": det, "inverse": _inverse, "logdet": logdet, "slogdet": _legacy_slogdet,
              "cholesky": _legacy_cholesky, "svd": _legacy_svd, "qr": _legacy_qr,
              "pinverse": _pinverse, "matrix_power": matrix_power, "matrix_exp": matrix_exp,
              "norm": torch_norm, "dist": dist}


def _install():
    """Make the legacy names ember.<name> and Tensor.<name> (whatever the import order)."""
    pkg = sys.modules.get("ember")
    for name, fn in _TOP_LEVEL.items():
        FUNCTIONS[name] = fn
        if pkg is not None:
            setattr(pkg, name, fn)
        setattr(Tensor, name, (lambda f: lambda self, *a, **k: f(self, *a, **k))(fn))


_install()


def _out(res, out, name):
    if out is None:
        return res
    from .ops.registry import write_out
    if isinstance(res, tuple):
        for o, r in zip(out, res):
            write_out(o, r, name)
        return type(res)(*out)
    return write_out(out, res, name)
