"""Samples and NumPy references for ``ember.linalg`` and the legacy top-level linalg names.

Matrices are 3x3 (and batches of two) shifted towards the identity, so they are well
conditioned: inverses, solves and determinants are smooth there and finite differences agree
with the analytic gradients. Symmetric positive definite inputs (cholesky, eigh) are built as
B B^T + I; the gradient checks symmetrize them (``hermitian`` in the op table) because these ops
read one triangle only.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg

from .._tensor import _make
from ._generators import S


def _arr(rng, shape, dtype):
    return rng.standard_normal(shape).astype(dtype.np)


def _square(rng, shape, dtype):
    """Well-conditioned square matrices: standard normal plus 3 on the diagonal."""
    a = rng.standard_normal(shape) + 3 * np.eye(shape[-1])
    return a.astype(dtype.np)


def _spd(rng, shape, dtype):
    b = rng.standard_normal(shape)
    return (b @ np.swapaxes(b, -1, -2) + np.eye(shape[-1])).astype(dtype.np)


def _t(a):
    return _make(np.array(a, order="C"))


def _tt(a):
    """The same values as a non-contiguous tensor (a transposed copy, transposed back)."""
    return _make(np.swapaxes(np.ascontiguousarray(np.swapaxes(a, -1, -2)), -1, -2))


def square_samples(rng, dtype, **kwargs):
    return [S(_t(_square(rng, (3, 3), dtype)), (), dict(kwargs), "3x3"),
            S(_t(_square(rng, (2, 3, 3), dtype)), (), dict(kwargs), "batch of 2"),
            S(_tt(_square(rng, (3, 3), dtype)), (), dict(kwargs), "transposed")]


def spd_samples(rng, dtype, **kwargs):
    return [S(_t(_spd(rng, (3, 3), dtype)), (), dict(kwargs), "3x3"),
            S(_t(_spd(rng, (2, 3, 3), dtype)), (), dict(kwargs), "batch of 2"),
            S(_tt(_spd(rng, (3, 3), dtype)), (), dict(kwargs), "transposed")]


def rect_samples(rng, dtype, **kwargs):
    """Full-rank tall, wide and batched matrices (pinv, qr, svd)."""
    return [S(_t(_arr(rng, (4, 3), dtype)), (), dict(kwargs), "4x3"),
            S(_t(_arr(rng, (3, 4), dtype)), (), dict(kwargs), "3x4"),
            S(_t(_arr(rng, (2, 3, 2), dtype)), (), dict(kwargs), "batch of 2"),
            S(_tt(_arr(rng, (3, 3), dtype)), (), dict(kwargs), "transposed")]


def solve_samples(rng, dtype):
    return [S(_t(_square(rng, (3, 3), dtype)), (_t(_arr(rng, (3, 2), dtype)),), {}, "matrix B"),
            S(_t(_square(rng, (2, 3, 3), dtype)), (_t(_arr(rng, (2, 3, 1), dtype)),), {},
              "batched"),
            S(_tt(_square(rng, (3, 3), dtype)), (_tt(_arr(rng, (3, 3), dtype)),), {},
              "transposed")]


def solve_ref(A, B, left=True):
    return np.linalg.solve(A, B)


def solve_ex_ref(A, B, left=True, check_errors=False):
    return np.linalg.solve(A, B), np.zeros(A.shape[:-2], np.int32)


def solve_triangular_samples(rng, dtype):
    A, B = _square(rng, (3, 3), dtype), _arr(rng, (3, 2), dtype)
    return [S(_t(A), (_t(B),), {"upper": True}, "upper"),
            S(_t(A), (_t(B),), {"upper": False}, "lower"),
            S(_t(_square(rng, (2, 3, 3), dtype)), (_t(_arr(rng, (2, 3, 2), dtype)),),
              {"upper": True, "unitriangular": True}, "batched unitriangular")]


def solve_triangular_ref(A, B, upper, left=True, unitriangular=False):
    T = np.triu(A) if upper else np.tril(A)
    if unitriangular:
        T = T - T * np.eye(A.shape[-1]) + np.eye(A.shape[-1])
    return np.linalg.solve(T, B)


def inv_ex_ref(A, check_errors=False):
    return np.linalg.inv(A), np.zeros(A.shape[:-2], np.int32)


def logdet_ref(A):
    return np.log(np.linalg.det(A))


def cholesky_ref(A, upper=False):
    L = np.linalg.cholesky(A)
    return np.swapaxes(L, -1, -2) if upper else L


def cholesky_ex_ref(A, upper=False, check_errors=False):
    return cholesky_ref(A, upper), np.zeros(A.shape[:-2], np.int32)


def qr_ref(A, mode="reduced"):
    return np.linalg.qr(A, mode=mode)


def legacy_qr_ref(A, some=True):
    return np.linalg.qr(A, mode="reduced" if some else "complete")


def svd_ref(A, full_matrices=True, driver=None):
    return np.linalg.svd(A, full_matrices=full_matrices)


def legacy_svd_ref(A, some=True, compute_uv=True):
    U, S_, Vh = np.linalg.svd(A, full_matrices=not some)
    return U, S_, np.swapaxes(Vh, -1, -2)


def eigh_ref(A, UPLO="L"):
    return np.linalg.eigh(A, UPLO=UPLO)


def matrix_power_samples(rng, dtype):
    return [S(_t(_square(rng, (3, 3), dtype)), (n,), {}, f"n={n}") for n in (0, 1, 3, -2)] + [
        S(_t(_square(rng, (2, 3, 3), dtype)), (2,), {}, "batched"),
        S(_tt(_square(rng, (3, 3), dtype)), (2,), {}, "transposed")]


def matrix_exp_samples(rng, dtype):
    """Small entries keep exp's Taylor terms modest."""
    return [S(_t(0.5 * _arr(rng, (3, 3), dtype)), (), {}, "3x3"),
            S(_t(0.5 * _arr(rng, (2, 2, 2), dtype)), (), {}, "batch of 2"),
            S(_tt(0.5 * _arr(rng, (3, 3), dtype)), (), {}, "transposed")]


def matrix_exp_ref(A):
    if A.ndim == 2:
        return scipy.linalg.expm(A)
    return np.stack([matrix_exp_ref(a) for a in A])


def pinv_ref(A, atol=None, rtol=None, hermitian=False):
    return np.linalg.pinv(A)


def pinverse_ref(A, rcond=1e-15):
    return np.linalg.pinv(A)


def matrix_rank_samples(rng, dtype):
    low = _arr(rng, (4, 1), dtype) @ _arr(rng, (1, 3), dtype)  # rank 1
    return rect_samples(rng, dtype) + [S(_t(low), (), {}, "rank 1")]


def matrix_rank_ref(A, atol=None, rtol=None, hermitian=False, tol=None):
    return np.linalg.matrix_rank(A)


def vector_samples(rng, dtype):
    """Pairs of vectors along the last dim (cross needs 3)."""
    return [S(_t(_arr(rng, (2, 3), dtype)), (_t(_arr(rng, (2, 3), dtype)),), {}, "rows"),
            S(_t(_arr(rng, (3,), dtype)), (_t(_arr(rng, (2, 3), dtype)),), {}, "broadcast"),
            S(_tt(_arr(rng, (2, 3), dtype)), (_t(_arr(rng, (2, 3), dtype)),), {},
              "transposed")]


def cross_vector_samples(rng, dtype):
    """vector_samples for linalg.cross: its inputs have one ndim (torch requires it), the
    broadcast is along a dim of length 1."""
    return [S(_t(_arr(rng, (1, 3), dtype)), (_t(_arr(rng, (2, 3), dtype)),), {}, "broadcast")
            if s.name == "broadcast" else s for s in vector_samples(rng, dtype)]


def cross_ref(a, b, dim=-1):
    return np.cross(*np.broadcast_arrays(a, b), axis=dim)


def vecdot_ref(x, y, dim=-1):
    return np.sum(x * y, axis=dim)


def multi_dot_samples(rng, dtype):
    shapes = [((3,), (3, 4), (4, 2)), ((2, 3), (3, 3), (3,)), ((2, 2), (2, 3))]
    return [S([_t(_arr(rng, s, dtype)) for s in chain], (), {}, f"chain of {len(chain)}")
            for chain in shapes]


def multi_dot_ref(tensors):
    return np.linalg.multi_dot(tensors)


def diagonal_samples(rng, dtype):
    return [S(_t(_arr(rng, (3, 4), dtype)), (), {}, "3x4"),
            S(_t(_arr(rng, (2, 3, 3), dtype)), (), {"offset": 1}, "batched offset 1"),
            S(_tt(_arr(rng, (3, 3), dtype)), (), {"offset": -1}, "transposed offset -1")]


def diagonal_ref(A, offset=0, dim1=-2, dim2=-1):
    return np.diagonal(A, offset, dim1, dim2)


def matmul_samples(rng, dtype):
    return [S(_t(_arr(rng, (2, 3), dtype)), (_t(_arr(rng, (3, 2), dtype)),), {}, "2-d"),
            S(_t(_arr(rng, (2, 2, 3), dtype)), (_t(_arr(rng, (3,), dtype)),), {}, "batched @ 1-d"),
            S(_tt(_arr(rng, (3, 3), dtype)), (_t(_arr(rng, (3, 3), dtype)),), {}, "transposed")]


def vector_norm_samples(rng, dtype):
    x = _arr(rng, (2, 3), dtype)
    return [S(_t(x), (), {}, "all"), S(_t(x), (1,), {"dim": 1}, "ord 1 dim 1"),
            S(_t(x), (np.inf,), {"dim": 0, "keepdim": True}, "ord inf keepdim"),
            S(_t(x), (3,), {}, "ord 3"), S(_t(_arr(rng, (), dtype)), (), {}, "0-d"),
            S(_tt(x), (2,), {"dim": -1}, "transposed")]


def vector_norm_ref(x, ord=2, dim=None, keepdim=False, dtype=None):
    a = np.abs(x)
    if ord == np.inf:
        return np.max(a, axis=dim, keepdims=keepdim)
    return np.sum(a ** ord, axis=dim, keepdims=keepdim) ** (1.0 / ord)


def matrix_norm_samples(rng, dtype):
    A = _arr(rng, (3, 3), dtype)
    return [S(_t(A), (), {}, "fro"), S(_t(A), ("nuc",), {}, "nuclear"),
            S(_t(A), (1,), {}, "ord 1"), S(_t(A), (-np.inf,), {}, "ord -inf"),
            S(_t(_arr(rng, (2, 3, 2), dtype)), (2,), {"keepdim": True}, "batched spectral"),
            S(_tt(A), (np.inf,), {}, "transposed ord inf")]


def matrix_norm_ref(A, ord="fro", dim=(-2, -1), keepdim=False, dtype=None):
    return np.linalg.norm(A, ord, axis=tuple(dim), keepdims=keepdim)


def norm_samples(rng, dtype):
    A, v = _arr(rng, (3, 3), dtype), _arr(rng, (4,), dtype)
    return [S(_t(A), (), {}, "matrix, no ord"), S(_t(A), ("fro",), {}, "fro"),
            S(_t(v), (1,), {}, "vector ord 1"), S(_t(v), (np.inf,), {}, "vector ord inf"),
            S(_t(_arr(rng, (2, 3, 3), dtype)), (), {"dim": (1, 2)}, "batched dims"),
            S(_tt(A), (), {"dim": 0}, "transposed dim 0")]


def norm_ref(A, ord=None, dim=None, keepdim=False, dtype=None):
    if ord is None and dim is None:
        return np.sqrt(np.sum(A * A))
    return np.linalg.norm(A, ord, axis=dim, keepdims=keepdim)


def torch_norm_samples(rng, dtype):
    A = _arr(rng, (3, 3), dtype)
    return [S(_t(A), (), {}, "fro"), S(_t(A), (1,), {"dim": 1}, "p 1 dim 1"),
            S(_t(A), (3,), {}, "p 3"), S(_t(A), ("nuc",), {}, "nuclear"),
            S(_t(_arr(rng, (), dtype)), (), {}, "0-d"), S(_tt(A), (2,), {"dim": 0}, "transposed")]


def torch_norm_ref(x, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    if p == "nuc":
        return np.linalg.norm(x, "nuc")
    p = 2 if p == "fro" else p
    return np.sum(np.abs(x) ** p, axis=dim, keepdims=keepdim) ** (1.0 / p)


def dist_samples(rng, dtype):
    return [S(_t(_arr(rng, (2, 3), dtype)), (_t(_arr(rng, (2, 3), dtype)),), {}, "p 2"),
            S(_t(_arr(rng, (2, 3), dtype)), (_t(_arr(rng, (3,), dtype)), 1), {}, "broadcast p 1"),
            S(_t(_arr(rng, (), dtype)), (_t(_arr(rng, (), dtype)), 3), {}, "0-d p 3")]


def dist_ref(a, b, p=2):
    return np.sum(np.abs(a - b) ** p) ** (1.0 / p)
