"""Samples, NumPy/SciPy references and error inputs for the factorization-based linalg ops:
LU (lu_factor, lu, lu_solve, lu_unpack), LDL, Householder (geqrf, householder_product, ormqr),
Cholesky solves, triangular_solve, cond, tensorinv/tensorsolve, vander and the legacy norms.

Inputs are small and well conditioned (see _linalg.py); factor inputs (LU, pivots, reflectors)
come from SciPy's LAPACK calls on such matrices, so the gradient checks perturb valid factors.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.linalg
from scipy.linalg import lapack

from ._generators import ErrorInput, S
from ._linalg import _arr, _spd, _square, _t, _tt


# ----------------------------------------------------------------------------- LU
def _getrf(a):
    """(LU, 1-based int32 pivots) per matrix of a (*, m, n) array, as LAPACK computes them."""
    m, n = a.shape[-2:]
    k = min(m, n)
    lu = np.array(a, copy=True)
    piv = np.zeros(a.shape[:-2] + (k,), np.int32)
    for idx in np.ndindex(a.shape[:-2]):
        f, p, _ = lapack.get_lapack_funcs("getrf", (a,))(a[idx])
        lu[idx], piv[idx] = f, p + 1
    return lu, piv


def _perm(piv, m, dtype):
    """P with A = P L U, from 1-based pivots of shape (*, k)."""
    out = np.zeros(piv.shape[:-1] + (m, m), dtype)
    for idx in np.ndindex(piv.shape[:-1]):
        order = np.arange(m)
        for i, j in enumerate(piv[idx] - 1):
            order[i], order[j] = order[j], order[i]
        out[idx] = np.eye(m, dtype=dtype)[order].T
    return out


def lu_factor_samples(rng, dtype, **kwargs):
    return [S(_t(_square(rng, (3, 3), dtype)), (), dict(kwargs), "3x3"),
            S(_t(_arr(rng, (2, 3, 3), dtype)), (), dict(kwargs), "batch of 2"),
            S(_t(_arr(rng, (4, 2), dtype)), (), dict(kwargs), "tall 4x2"),
            S(_t(_arr(rng, (2, 4), dtype)), (), dict(kwargs), "wide 2x4"),
            S(_tt(_square(rng, (3, 3), dtype)), (), dict(kwargs), "transposed")]


def lu_grad_samples(rng, dtype, **kwargs):
    """Small ones: LU's backward is a dozen ops, and gradgradcheck differentiates it per entry."""
    return [S(_t(_square(rng, (2, 2), dtype)), (), dict(kwargs), "2x2"),
            S(_t(_arr(rng, (3, 2), dtype)), (), dict(kwargs), "tall 3x2"),
            S(_t(_arr(rng, (2, 3), dtype)), (), dict(kwargs), "wide 2x3")]


def lu_alias_grad_samples(rng, dtype, **kwargs):
    """The aliases share linalg.lu_factor's backward: one sample shows they are wired to it."""
    return [S(_t(_arr(rng, (3, 2), dtype)), (), dict(kwargs), "tall 3x2")]


def lu_factor_ref(A, pivot=True):
    return _getrf(A)


def lu_factor_ex_ref(A, pivot=True, check_errors=False):
    return (*_getrf(A), np.zeros(A.shape[:-2], np.int32))


def legacy_lu_ref(A, pivot=True, get_infos=False):
    return lu_factor_ex_ref(A) if get_infos else _getrf(A)


def legacy_lu_samples(rng, dtype):
    return lu_factor_samples(rng, dtype) + [
        S(_t(_square(rng, (2, 3, 3), dtype)), (True, True), {}, "get_infos")]


def _unpacked(lu, piv):
    m, n = lu.shape[-2:]
    k = min(m, n)
    L = np.tril(lu, -1)[..., :, :k] + np.eye(m, k, dtype=lu.dtype)
    U = np.triu(lu)[..., :k, :]
    return _perm(piv, m, lu.dtype), L, U


def lu_ref(A, pivot=True):
    """(P, L, U) from scipy.linalg.lu (same LAPACK pivoting)."""
    if A.ndim == 2:
        return scipy.linalg.lu(A)
    parts = [lu_ref(a) for a in A]
    return tuple(np.stack([p[i] for p in parts]) for i in range(3))


def lu_unpack_samples(rng, dtype):
    out = []
    for shape, kw, name in (((3, 3), {}, "3x3"), ((2, 3, 3), {}, "batch of 2"),
                            ((4, 2), {}, "tall"), ((2, 4), {"unpack_pivots": False}, "wide")):
        lu, piv = _getrf(_square(rng, shape, dtype) if shape[-1] == shape[-2]
                         else _arr(rng, shape, dtype))
        out.append(S(_t(lu), (_t(piv),), kw, name))
    return out


def lu_unpack_ref(LU, pivots, unpack_data=True, unpack_pivots=True):
    P, L, U = _unpacked(LU, pivots)
    empty = np.zeros((0,), LU.dtype)
    return (P if unpack_pivots else empty, L if unpack_data else empty,
            U if unpack_data else empty)


def lu_solve_samples(rng, dtype):
    out = []
    for shape, bshape, kw, name in (((3, 3), (3, 2), {}, "3x3"),
                                    ((2, 3, 3), (2, 3, 1), {"adjoint": True}, "batched adjoint"),
                                    ((3, 3), (2, 3, 3), {}, "broadcast B"),
                                    ((3, 3), (2, 3), {"left": False}, "right")):
        lu, piv = _getrf(_square(rng, shape, dtype))
        out.append(S(_t(lu), (_t(piv), _t(_arr(rng, bshape, dtype))), kw, name))
    return out


def lu_solve_grad_samples(rng, dtype):
    out = []
    for bshape, kw, name in (((2, 1), {}, "2x2"), ((2, 2), {"adjoint": True}, "adjoint"),
                             ((1, 2), {"left": False}, "right")):
        lu, piv = _getrf(_square(rng, (2, 2), dtype))
        out.append(S(_t(lu), (_t(piv), _t(_arr(rng, bshape, dtype))), kw, name))
    return out


def lu_solve_ref(LU, pivots, B, left=True, adjoint=False):
    P, L, U = _unpacked(LU, pivots)
    A = P @ L @ U
    if not left:  # X A = B  <=>  A^T X^T = B^T
        A, B = np.swapaxes(A, -1, -2), np.swapaxes(B, -1, -2)
    A = np.swapaxes(A, -1, -2) if adjoint else A
    X = np.linalg.solve(np.broadcast_to(A, np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
                                        + A.shape[-2:]), B)
    return X if left else np.swapaxes(X, -1, -2)


def legacy_lu_solve_samples(rng, dtype):
    return [S(s.args[1], (s.input, s.args[0]), {}, s.name)
            for s in lu_solve_samples(rng, dtype) if not s.kwargs]


def legacy_lu_solve_grad_samples(rng, dtype):
    s = lu_solve_grad_samples(rng, dtype)[0]
    return [S(s.args[1], (s.input, s.args[0]), {}, s.name)]


def legacy_lu_solve_ref(b, LU_data, LU_pivots):
    return lu_solve_ref(LU_data, LU_pivots, b)


def lu_factor_errors(rng, dtype):
    singular = _t(np.array([[1.0, 2.0], [2.0, 4.0]], dtype.np))
    return [ErrorInput(S(singular), RuntimeError, r"lu_factor.*U\[2,2\] is zero"),
            ErrorInput(S(_t(_square(rng, (3, 3), dtype)), (), {"pivot": False}), RuntimeError,
                       "without pivoting")]


# ----------------------------------------------------------------------------- LDL
def _sym(rng, shape, dtype):
    a = rng.standard_normal(shape)
    return (a + np.swapaxes(a, -1, -2)).astype(dtype.np)


def ldl_samples(rng, dtype, **kwargs):
    indefinite = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 3.0], [2.0, 3.0, 1.0]], dtype.np)
    return [S(_t(_sym(rng, (3, 3), dtype)), (), dict(kwargs), "3x3"),
            S(_t(_sym(rng, (2, 4, 4), dtype)), (), dict(kwargs), "batch of 2"),
            S(_t(indefinite), (), dict(kwargs), "2x2 pivot block")]


def _sytrf(A):
    ld = np.zeros_like(A)
    piv = np.zeros(A.shape[:-1], np.int32)
    for idx in np.ndindex(A.shape[:-2]):
        f, p, _ = lapack.get_lapack_funcs("sytrf", (A,))(A[idx], lower=1)
        ld[idx], piv[idx] = np.tril(f), p
    return ld, piv


def ldl_factor_ref(A, hermitian=False):
    return _sytrf(A)


def ldl_factor_ex_ref(A, hermitian=False, check_errors=False):
    return (*_sytrf(A), np.zeros(A.shape[:-2], np.int32))


def ldl_solve_samples(rng, dtype):
    out = []
    for shape, bshape, name in (((3, 3), (3, 2), "3x3"), ((2, 4, 4), (2, 4, 1), "batched"),
                                ((3, 3), (2, 3, 2), "broadcast B")):
        ld, piv = _sytrf(_sym(rng, shape, dtype) + 4 * np.eye(shape[-1], dtype=dtype.np))
        out.append(S(_t(ld), (_t(piv), _t(_arr(rng, bshape, dtype))), {}, name))
    return out


def ldl_solve_ref(LD, pivots, B, hermitian=False):
    X = np.empty(np.broadcast_shapes(LD.shape[:-2], B.shape[:-2]) + B.shape[-2:], B.dtype)
    lds, pivs = np.broadcast_to(LD, X.shape[:-2] + LD.shape[-2:]), \
        np.broadcast_to(pivots, X.shape[:-2] + pivots.shape[-1:])
    bs = np.broadcast_to(B, X.shape)
    for idx in np.ndindex(X.shape[:-2]):
        X[idx] = lapack.get_lapack_funcs("sytrs", (LD,))(lds[idx], pivs[idx], bs[idx], lower=1)[0]
    return X


# ----------------------------------------------------------------------------- Householder
def geqrf_samples(rng, dtype):
    return [S(_t(_arr(rng, (4, 3), dtype)), (), {}, "tall"),
            S(_t(_arr(rng, (3, 4), dtype)), (), {}, "wide"),
            S(_t(_arr(rng, (2, 3, 3), dtype)), (), {}, "batch of 2"),
            S(_tt(_arr(rng, (3, 3), dtype)), (), {}, "transposed")]


def geqrf_ref(A):
    qr = np.array(A, copy=True)
    k = min(A.shape[-2:])
    tau = np.zeros(A.shape[:-2] + (k,), A.dtype)
    for idx in np.ndindex(A.shape[:-2]):
        r, t, _, _ = lapack.get_lapack_funcs("geqrf", (A,))(A[idx])
        qr[idx], tau[idx] = r, t[:k]
    return qr, tau


def householder_samples(rng, dtype):
    out = []
    for shape, k, name in (((4, 3), 3, "4x3"), ((3, 3), 2, "fewer reflectors"),
                           ((2, 3, 2), 2, "batch of 2")):
        qr, tau = geqrf_ref(_arr(rng, shape, dtype))
        out.append(S(_t(qr), (_t(tau[..., :k]),), {}, name))
    return out


def householder_ref(A, tau):
    m, n = A.shape[-2:]
    Q = np.broadcast_to(np.eye(m, n), A.shape).copy()
    for idx in np.ndindex(A.shape[:-2]):
        H = np.eye(m)
        for i in range(tau.shape[-1]):
            v = np.zeros(m)
            v[i], v[i + 1:] = 1.0, A[idx][i + 1:, i]
            H = H @ (np.eye(m) - tau[idx][i] * np.outer(v, v))
        Q[idx] = H[:, :n]
    return Q


def ormqr_samples(rng, dtype):
    out = []
    for shape, cshape, kw, name in (((4, 3), (4, 2), {}, "left"),
                                    ((3, 3), (2, 3), {"left": False}, "right"),
                                    ((4, 2), (4, 3), {"transpose": True}, "transposed Q"),
                                    ((2, 3, 2), (2, 2, 3), {"left": False, "transpose": True},
                                     "batched right transposed")):
        qr, tau = geqrf_ref(_arr(rng, shape, dtype))
        out.append(S(_t(qr), (_t(tau), _t(_arr(rng, cshape, dtype))), kw, name))
    return out


def ormqr_ref(A, tau, C, left=True, transpose=False):
    m = A.shape[-2]
    full = np.zeros(A.shape[:-1] + (m,), A.dtype)
    full[..., : A.shape[-1]] = A
    tau_full = np.zeros(A.shape[:-2] + (m,), A.dtype)
    tau_full[..., : tau.shape[-1]] = tau
    Q = householder_ref(full, tau_full)
    Q = np.swapaxes(Q, -1, -2) if transpose else Q
    return Q @ C if left else C @ Q


def householder_errors(rng, dtype):
    return [ErrorInput(S(_t(_arr(rng, (2, 3), dtype)), (_t(_arr(rng, (2,), dtype)),)),
                       RuntimeError, "householder_product: input must have at least as many rows"),
            ErrorInput(S(_t(_arr(rng, (4, 2), dtype)), (_t(_arr(rng, (3,), dtype)),)),
                       RuntimeError, r"householder_product: tau.shape\[-1\] must be at most 2")]


# ----------------------------------------------------------------------------- cholesky solves
def _chol(rng, shape, dtype, upper):
    L = np.linalg.cholesky(_spd(rng, shape, dtype).astype(np.float64))
    return (np.swapaxes(L, -1, -2) if upper else L).astype(dtype.np)


def cholesky_solve_samples(rng, dtype):
    return [S(_t(_arr(rng, (3, 2), dtype)), (_t(_chol(rng, (3, 3), dtype, False)),), {},
              "lower"),
            S(_t(_arr(rng, (2, 3, 1), dtype)), (_t(_chol(rng, (2, 3, 3), dtype, True)), True),
              {}, "batched upper"),
            S(_t(_arr(rng, (2, 3, 2), dtype)), (_t(_chol(rng, (3, 3), dtype, False)),), {},
              "broadcast factor")]


def _gram(factor, upper):
    ft = np.swapaxes(factor, -1, -2)
    return ft @ factor if upper else factor @ ft


def cholesky_solve_ref(B, L, upper=False):
    A = _gram(L, upper)
    return np.linalg.solve(np.broadcast_to(A, np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
                                           + A.shape[-2:]), B)


# cholesky_solve and cholesky_inverse read one triangle of the factor, while their gradient (as
# torch's) is that of the whole factor in L L^T: the gradient checks vary the triangle only
def triangular_factor_solve(fn):
    def f(B, L, upper=False, **kw):
        return fn(B, L.triu() if upper else L.tril(), upper, **kw)
    return f


def triangular_factor_inverse(fn):
    def f(L, upper=False, **kw):
        return fn(L.triu() if upper else L.tril(), upper, **kw)
    return f


def cholesky_inverse_samples(rng, dtype):
    return [S(_t(_chol(rng, (3, 3), dtype, False)), (), {}, "lower"),
            S(_t(_chol(rng, (2, 3, 3), dtype, True)), (True,), {}, "batched upper"),
            S(_tt(_chol(rng, (3, 3), dtype, False)), (), {"upper": False}, "transposed")]


def cholesky_inverse_ref(L, upper=False):
    return np.linalg.inv(_gram(L, upper))


def triangular_solve_samples(rng, dtype):
    A = _square(rng, (3, 3), dtype)
    return [S(_t(_arr(rng, (3, 2), dtype)), (_t(A),), {}, "upper"),
            S(_t(_arr(rng, (3, 2), dtype)), (_t(A), False, True), {}, "lower transposed"),
            S(_t(_arr(rng, (2, 3, 1), dtype)), (_t(_square(rng, (2, 3, 3), dtype)),),
              {"unitriangular": True}, "batched unitriangular")]


def triangular_solve_grad_samples(rng, dtype):
    return [S(_t(_arr(rng, (2, 1), dtype)), (_t(_square(rng, (2, 2), dtype)), False, True), {},
              "lower transposed")]


def triangular_solve_ref(b, A, upper=True, transpose=False, unitriangular=False):
    T = np.triu(A) if upper else np.tril(A)
    if unitriangular:
        T = T - T * np.eye(A.shape[-1]) + np.eye(A.shape[-1])
    T = np.swapaxes(T, -1, -2) if transpose else T
    return np.linalg.solve(T, b), A


# ----------------------------------------------------------------------------- cond, tensors
def cond_samples(rng, dtype):
    A = _square(rng, (3, 3), dtype)
    return ([S(_t(A), (p,), {}, f"p={p}") for p in (None, -2, "fro", "nuc", 1, -math.inf)]
            + [S(_t(_arr(rng, (4, 3), dtype)), (), {}, "rectangular"),
               S(_t(_square(rng, (2, 3, 3), dtype)), (math.inf,), {}, "batched p=inf"),
               S(_tt(A), (), {"p": -1}, "transposed p=-1")])


def cond_ref(A, p=None):
    return np.linalg.cond(A, p)


def cond_errors(rng, dtype):
    return [ErrorInput(S(_t(_square(rng, (3, 3), dtype)), (3,)), RuntimeError,
                       "cond: got an invalid norm type 3"),
            ErrorInput(S(_t(_arr(rng, (3, 2), dtype)), ("fro",)), RuntimeError,
                       "square matrices")]


def tensorinv_samples(rng, dtype):
    a = _square(rng, (6, 6), dtype)
    return [S(_t(a.reshape(2, 3, 6)), (), {"ind": 2}, "ind 2"),
            S(_t(a.reshape(6, 2, 3)), (1,), {}, "ind 1"),
            S(_t(_square(rng, (4, 4), dtype).reshape(2, 2, 2, 2)), (), {}, "default ind")]


def tensorinv_ref(A, ind=2):
    return np.linalg.tensorinv(A, ind)


def tensorsolve_samples(rng, dtype):
    a = _square(rng, (6, 6), dtype)
    return [S(_t(a.reshape(2, 3, 6)), (_t(_arr(rng, (2, 3), dtype)),), {}, "B 2-D"),
            S(_t(a.reshape(6, 2, 3)), (_t(_arr(rng, (6,), dtype)),), {}, "B 1-D"),
            S(_t(np.moveaxis(a.reshape(2, 3, 6), 2, 0)), (_t(_arr(rng, (2, 3), dtype)),),
              {"dims": (0,)}, "dims")]


def tensorsolve_ref(A, B, dims=None):
    return np.linalg.tensorsolve(A, B, dims)


def tensor_errors(rng, dtype):
    return [ErrorInput(S(_t(_arr(rng, (2, 3, 4), dtype)), (), {"ind": 0}), RuntimeError,
                       "strictly positive"),
            ErrorInput(S(_t(_arr(rng, (2, 3, 4), dtype)), (1,)), RuntimeError,
                       r"prod\(A.shape\[:ind\]\)")]


def vander_samples(rng, dtype):
    x = (rng.integers(-3, 4, (4,)) if not dtype.is_floating_point
         else rng.standard_normal(4)).astype(dtype.np)
    return [S(_t(x), (), {}, "default N"), S(_t(x[:3]), (), {"N": 5}, "N=5"),
            S(_t(np.stack([x, x[::-1]])), (), {"N": 2}, "batched N=2")]


def vander_ref(x, N=None):
    N = x.shape[-1] if N is None else N
    return x[..., None] ** np.arange(N).astype(x.dtype)


def vander_errors(rng, dtype):
    return [ErrorInput(S(_t(_arr(rng, (3,), dtype)), (), {"N": 1}), RuntimeError,
                       "N must be greater than 1")]


# ----------------------------------------------------------------------------- legacy norms
def nuclear_norm_samples(rng, dtype):
    return [S(_t(_arr(rng, (3, 2), dtype)), (), {}, "matrix"),
            S(_t(_arr(rng, (3, 3), dtype)), (True,), {}, "keepdim positional"),
            S(_t(_arr(rng, (2, 3, 2), dtype)), ((0, 2),), {"keepdim": True}, "dims")]


def nuclear_norm_ref(x, dim=None, keepdim=False):
    if isinstance(dim, bool):
        dim, keepdim = None, dim
    dims = (-2, -1) if dim is None else tuple(dim)
    return np.linalg.norm(x, "nuc", axis=dims, keepdims=keepdim)


def frobenius_norm_samples(rng, dtype):
    x = _arr(rng, (2, 3, 2), dtype)
    return [S(_t(x), ((0, 1),), {}, "two dims"), S(_t(x), (1,), {"keepdim": True}, "one dim"),
            S(_tt(x[0]), ((-1, -2),), {}, "transposed")]


def frobenius_norm_ref(x, dim, keepdim=False):
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    return np.sqrt(np.sum(x * x, axis=dims, keepdims=keepdim))



# ----------------------------------------------------------------------------- eig
def eig_samples(rng, dtype):
    """Real matrices with real and with complex-conjugate eigenvalues (distinct, so the
    eigenvectors are differentiable)."""
    rotation = np.array([[0.0, -2.0, 0.5], [2.0, 0.0, 0.1], [0.3, 0.2, 1.0]], dtype.np)
    return [S(_t(_arr(rng, (3, 3), dtype)), (), {}, "3x3"),
            S(_t(rotation), (), {}, "complex pair"),
            S(_t(_arr(rng, (2, 3, 3), dtype)), (), {}, "batch of 2"),
            S(_tt(_arr(rng, (3, 3), dtype)), (), {}, "transposed")]


def eig_ref(A):
    return np.linalg.eig(A)


def eigvals_ref(A):
    return np.linalg.eig(A)[0]


def phase_free_eig(fn):
    """eig as the gradient checks call it: real outputs (the real and imaginary parts of the
    eigenvalues, |V|), since eigenvectors are defined up to a phase per column and torch's
    gradient is that of a phase-invariant loss."""
    def f(A, **kw):
        L, V = fn(A, **kw)
        return L.real, L.imag, V.abs()
    return f


def real_imag(fn):
    """A complex-valued op as its real and imaginary parts, for the real gradient checks."""
    def f(A, **kw):
        z = fn(A, **kw)
        return z.real, z.imag
    return f
