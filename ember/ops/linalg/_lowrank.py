"""Low-rank and partial eigen solvers: ``svd_lowrank``, ``pca_lowrank`` and ``lobpcg``.

svd_lowrank is the randomized range finder of Halko, Martinsson and Tropp (2009): a Gaussian
sketch of A's range, refined by ``niter`` subspace iterations, then an exact SVD of the small
projected matrix. Everything is composed of differentiable ember ops (matmul, QR, SVD).

lobpcg returns the k largest (or smallest) eigenpairs of A X = B X diag(E) for symmetric A and
symmetric positive-definite B. Differs from torch: for the dense matrices ember has, it solves
the problem exactly (Cholesky of B, then eigh) instead of iterating LOBPCG, so ``X`` (the start
guess), ``niter``, ``tol``, ``method``, ``tracker`` and the ``ortho_*`` parameters change
nothing; the results agree with torch's to its tolerance, and are differentiable (also with B).
"""
from __future__ import annotations

import numpy as np

from ..._tensor import Tensor
from ..random import randn
from ..registry import export
from ._common import _check_matrix, _t
from ._decomp import eigh, qr, svd
from ._solve import cholesky, solve_triangular


def _check_count(name, value, arg):
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{name}: {arg}(={value}) must be a non-negative integer.")


def _approximate_basis(A, q, niter, M):
    """An m x q orthonormal Q whose range approximates A's (A - M's when M is given)."""
    def apply(x):
        return A @ x if M is None else A @ x - M @ x

    def apply_t(x):
        return _t(A) @ x if M is None else _t(A) @ x - _t(M) @ x

    R = randn(*A.shape[:-2], A.shape[-1], q, dtype=A.dtype)
    Q = qr(apply(R)).Q
    for _ in range(niter):  # subspace iterations sharpen the basis for slowly decaying spectra
        Q = qr(apply_t(Q)).Q
        Q = qr(apply(Q)).Q
    return Q


@export
def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V) of a rank-q approximation of A (of A - M when M is given), with
    A ~ U diag(S) V^T; randomized, so results depend on ember's random state."""
    name = "svd_lowrank"
    _check_matrix(A, name)
    m, n = A.shape[-2], A.shape[-1]
    q = 6 if q is None else q
    _check_count(name, q, "q")
    if q > min(m, n):
        raise ValueError(f"{name}: q(={q}) must not be greater than min(m, n)={min(m, n)}.")
    _check_count(name, niter, "niter")
    if M is not None:
        M = M.broadcast_to(tuple(A.shape)) if tuple(M.shape) != tuple(A.shape) else M
    if m < n:  # sketch the smaller side: factor A^T and swap the factors back
        V, S, U = svd_lowrank(_t(A), q, niter, None if M is None else _t(M))
        return U, S, V
    Q = _approximate_basis(A, q, niter, M)
    B = _t(Q) @ A if M is None else _t(Q) @ A - _t(Q) @ M   # q x n
    Ub, S, Vh = svd(B, full_matrices=False)
    return Q @ Ub, S, _t(Vh)


@export
def pca_lowrank(A, q=None, center=True, niter=2):
    """(U, S, V): principal components of the rows of A (columns centered first when
    ``center``), from svd_lowrank; q defaults to min(6, m, n)."""
    name = "pca_lowrank"
    if not isinstance(A, Tensor):
        raise TypeError(f"{name}(): argument 'A' must be Tensor, not {type(A).__name__}")
    _check_matrix(A, name)
    m, n = A.shape[-2], A.shape[-1]
    q = min(6, m, n) if q is None else q
    _check_count(name, q, "q")
    if q > min(m, n):
        raise ValueError(f"{name}: q(={q}) must not be greater than min(m, n)={min(m, n)}.")
    _check_count(name, niter, "niter")
    if not center:
        return svd_lowrank(A, q, niter)
    mean = A.mean(-2, keepdim=True)
    return svd_lowrank(A, q, niter, M=mean.broadcast_to(tuple(A.shape)))


@export
def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None,
           method=None, tracker=None, ortho_iparams=None, ortho_fparams=None,
           ortho_bparams=None):
    """(E, X): the k largest (largest=False: smallest) eigenvalues of the symmetric (batch of)
    matrix A, or of the pencil (A, B) with B positive-definite, and their eigenvectors.
    Computed exactly (see the module docstring); A's symmetric part is used."""
    name = "lobpcg"
    _check_matrix(A, name, square=True)
    m = A.shape[-1]
    if B is not None and tuple(B.shape) != tuple(A.shape):
        raise RuntimeError(f"{name}: A and B must have the same shape; got {list(A.shape)} and "
                           f"{list(B.shape)}.")
    if method not in (None, "basic", "ortho"):
        raise ValueError(f"{name}: method must be 'basic' or 'ortho'; got {method!r}.")
    if k is None:
        k = 1 if X is None else X.shape[-1]
    width = X.shape[-1] if X is not None else (k if n is None else n)
    if m < 3 * width:
        raise ValueError(f"{name}: the LOBPCG algorithm needs A to have at least 3 x the number "
                         f"of requested eigenpairs as rows; got {m} rows for {width} eigenpairs.")
    A = (A + _t(A)) / 2  # as torch: a symmetric A, and a symmetric gradient
    if B is None:
        values, vectors = eigh(A)
    else:  # A x = l B x with B = L L^T  <=>  (L^-1 A L^-T) y = l y,  x = L^-T y
        L = cholesky((B + _t(B)) / 2)
        C = solve_triangular(L, _t(solve_triangular(L, A, upper=False)), upper=False)
        values, Y = eigh((C + _t(C)) / 2)
        vectors = solve_triangular(_t(L), Y, upper=True)
    if largest is None or largest:
        values, vectors = values.flip(-1), vectors.flip(-1)
    return values.narrow(-1, 0, k), vectors.narrow(-1, 0, k)
