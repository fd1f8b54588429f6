"""LDL^T factorization of symmetric (indefinite) matrices with Bunch-Kaufman pivoting:
``linalg.ldl_factor(_ex)`` and ``linalg.ldl_solve``, by LAPACK sytrf / sytrs.

LD is LAPACK's compact lower form with the upper triangle zeroed (as torch returns it); pivots
are LAPACK's ipiv (1-based; a negative pair marks a 2 x 2 block of D). Like torch, neither op is
differentiable: their backward raises.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from scipy.linalg import lapack as _lapack

from ..._tensor import Tensor
from ...autograd.function import Op
from ._common import LinAlgError, _batch_prefix, _check_matrix, _check_pair, _out, _rt, linalg_op

_rt["linalg_ldl_factor"] = namedtuple("linalg_ldl_factor", "LD pivots")
_rt["linalg_ldl_factor_ex"] = namedtuple("linalg_ldl_factor_ex", "LD pivots info")


class LDLFactor(Op):
    """(LD, pivots, info) per matrix from sytrf, or hetrf for a Hermitian complex matrix (reads
    the lower triangle)."""

    @staticmethod
    def forward(ctx, a, hermitian=False):
        n = a.shape[-1]
        ld = np.zeros_like(a)
        pivots = np.broadcast_to(np.arange(1, n + 1, dtype=np.int32), a.shape[:-1]).copy()
        info = np.zeros(a.shape[:-2], np.int32)
        if a.size:
            sytrf = _lapack.get_lapack_funcs(_routine("trf", a, hermitian), (a,))
            flat_a, flat_ld = a.reshape(-1, n, n), ld.reshape(-1, n, n)
            flat_piv, flat_info = pivots.reshape(-1, n), info.reshape(-1)
            for b in range(flat_a.shape[0]):
                f, p, flat_info[b] = sytrf(flat_a[b], lower=1)
                flat_ld[b], flat_piv[b] = np.tril(f), p
        return ld, pivots, info

    @staticmethod
    def backward(ctx, g_ld, g_pivots, g_info):
        raise RuntimeError("linalg.ldl_factor: its derivative is not implemented (as in "
                           "torch); differentiate linalg.solve or linalg.eigh instead.")


def _routine(suffix, a, hermitian):
    """LAPACK's symmetric (sy) or Hermitian (he) routine: they differ for complex matrices."""
    return ("he" if hermitian and a.dtype.kind == "c" else "sy") + suffix


def _factor(name, A, hermitian, check_errors):
    _check_matrix(A, name, square=True)
    LD, pivots, info = LDLFactor.apply(A, hermitian=hermitian)
    if check_errors and np.any(info._data > 0):
        flat = info._data.reshape(-1)
        b = int(np.flatnonzero(flat > 0)[0])
        i = int(flat[b])
        raise LinAlgError(f"{name}: {_batch_prefix(A, b)}D[{i},{i}] is exactly zero, so the "
                          "factorization cannot be used to solve; got a singular matrix, "
                          "expected an invertible one.")
    return LD, pivots, info


@linalg_op
def ldl_factor_ex(input, *, hermitian=False, check_errors=False, out=None):
    """(LD, pivots, info) of a symmetric (batch of) matrix: A = P L D L^T P^T; info[b] = i > 0
    when D[i, i] (1-based) is exactly zero."""
    res = _rt["linalg_ldl_factor_ex"](*_factor("linalg.ldl_factor_ex", input, hermitian,
                                               check_errors))
    return _out(res, out, "linalg.ldl_factor_ex")


@linalg_op
def ldl_factor(input, *, hermitian=False, out=None):
    """(LD, pivots) of a symmetric (batch of) matrix; LinAlgError when it is singular."""
    LD, pivots, _ = _factor("linalg.ldl_factor", input, hermitian, True)
    return _out(_rt["linalg_ldl_factor"](LD, pivots), out, "linalg.ldl_factor")


class LDLSolve(Op):
    """X = A^-1 B from A's LDL^T factors (sytrs); not differentiable, like torch's."""

    @staticmethod
    def forward(ctx, ld, pivots, b, hermitian=False):
        batch = np.broadcast_shapes(ld.shape[:-2], pivots.shape[:-1], b.shape[:-2])
        x = np.empty(batch + b.shape[-2:], b.dtype)
        lds = np.broadcast_to(ld, batch + ld.shape[-2:])
        pivs = np.broadcast_to(pivots.astype(np.int32), batch + pivots.shape[-1:])
        bs = np.broadcast_to(b, x.shape)
        if x.size:
            sytrs = _lapack.get_lapack_funcs(_routine("trs", ld, hermitian), (ld,))
            for idx in np.ndindex(batch):
                x[idx] = sytrs(lds[idx], pivs[idx], bs[idx], lower=1)[0]
        return x

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("linalg.ldl_solve: its derivative is not implemented (as in torch); "
                           "use linalg.solve to differentiate a solve.")


@linalg_op
def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """Solve AX = B from ldl_factor's (LD, pivots); batch dims broadcast."""
    name = "linalg.ldl_solve"
    _check_matrix(LD, name, square=True)
    _check_pair(name, LD, B)
    if not isinstance(pivots, Tensor) or pivots.dtype.is_floating_point:
        raise RuntimeError(f"{name}: pivots must be an int32 tensor; got "
                           f"{getattr(pivots, 'dtype', type(pivots).__name__)}.")
    if B.ndim < 2:
        raise RuntimeError(f"{name}: B must have at least 2 dimensions; got shape "
                           f"{list(B.shape)}.")
    n = LD.shape[-1]
    if B.shape[-2] != n or pivots.shape[-1] != n:
        raise RuntimeError(f"{name}: incompatible shapes; got LD {list(LD.shape)}, pivots "
                           f"{list(pivots.shape)} and B {list(B.shape)}, expected "
                           f"B.shape[-2] == pivots.shape[-1] == {n}.")
    X = LDLSolve.apply(LD, pivots, B, hermitian=hermitian)
    return _out(X, out, name)

