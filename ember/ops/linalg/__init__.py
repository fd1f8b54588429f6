"""``ember.linalg``'s ops: decompositions, solvers, inverses and norms, like torch.linalg.

Each public function is registered by ``@linalg_op`` (``ember.linalg.<name>``, op database key
``linalg.<name>``); ``ember/linalg.py`` re-exports them. The legacy top-level names
(``ember.det``, ``ember.svd``, ``ember.norm``, ...) and their Tensor methods are registered at
the end of this file.
"""
from __future__ import annotations

import numpy as np

from ..._tensor import _make
from ..registry import register, write_out
from ._common import LinAlgError, _check_matrix, _out, _rt, _t
from ._decomp import (
    SVD,
    det,
    eigh,
    eigvalsh,
    lstsq,
    matrix_exp,
    matrix_power,
    matrix_rank,
    pinv,
    qr,
    svd,
    svdvals,
)
from ._composite import cond, tensorinv, tensorsolve, vander
from ._eig import eig, eigvals
from ._householder import householder_product
from ._ldl import ldl_factor, ldl_factor_ex, ldl_solve
from ._lowrank import lobpcg, pca_lowrank, svd_lowrank  # noqa: F401  (ember.<name>)
from ._lu import lu, lu_factor, lu_factor_ex, lu_solve
from ._norms import (
    cross,
    diagonal,
    dist,
    matmul,
    matrix_norm,
    multi_dot,
    norm,
    torch_norm,
    vecdot,
    vector_norm,
)
from ._solve import (
    cholesky,
    cholesky_ex,
    inv,
    inv_ex,
    logdet,
    slogdet,
    solve,
    solve_ex,
    solve_triangular,
)

__all__ = [
    "LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig", "eigh",
    "eigvals", "eigvalsh", "householder_product", "inv", "inv_ex", "ldl_factor",
    "ldl_factor_ex", "ldl_solve", "logdet", "lstsq", "lu", "lu_factor", "lu_factor_ex",
    "lu_solve", "matmul", "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank",
    "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular",
    "svd", "svdvals", "tensorinv", "tensorsolve", "vander", "vecdot", "vector_norm",
]


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


def _legacy_slogdet(input, *, out=None):
    res = _rt["slogdet"](*slogdet(input))
    return res if out is None else write_out(out, res, "slogdet")


# the top-level forms name their matrix `input` (torch.linalg's name it A)
def _det(input):
    return det(input)


def _logdet(input):
    return logdet(input)


def _matrix_power(input, n, *, out=None):
    return matrix_power(input, n, out=out)


def _matrix_exp(input):
    return matrix_exp(input)


for _name, _fn in (("det", _det), ("inverse", _inverse), ("logdet", _logdet),
                   ("slogdet", _legacy_slogdet), ("cholesky", _legacy_cholesky),
                   ("svd", _legacy_svd), ("qr", _legacy_qr), ("pinverse", _pinverse),
                   ("matrix_power", _matrix_power), ("matrix_exp", _matrix_exp),
                   ("norm", torch_norm), ("dist", dist)):
    register(_name, wrap_out=False)(_fn)
