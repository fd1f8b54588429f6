"""Linalg functions composed of other ember ops (their gradients come from the parts):
``linalg.cond``, ``linalg.tensorinv``, ``linalg.tensorsolve``, ``linalg.vander``, and the
top-level ``cholesky_solve``, ``cholesky_inverse``, ``triangular_solve``, ``nuclear_norm``,
``frobenius_norm``. ``CholeskySolve`` is the one primitive: torch differentiates it as a function
of the whole factor (see its docstring), which composing triangular solves would not give.
"""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from scipy.linalg import cho_solve as _cho_solve

from ... import _dtype as D
from ..._tensor import Tensor, _make
from ...autograd.function import Op
from ..registry import register, sum_to
from ._common import (
    _broadcast_batch,
    _check_matrix,
    _check_pair,
    _out,
    _rt,
    _t,
    _warn_once,
    linalg_op,
)
from ._decomp import svdvals
from ._norms import matrix_norm, vector_norm
from ._solve import inv, inv_ex, solve, solve_triangular

_rt["triangular_solve"] = namedtuple("triangular_solve", "solution cloned_coefficient")


# ----------------------------------------------------------------------------- condition number
_COND_ORDS = (None, 2, -2, "fro", "nuc", 1, -1, math.inf, -math.inf)


@linalg_op
def cond(input, p=None, *, out=None):
    """Condition number of a (batch of) matrix in the ``p`` norm.

    p = None / 2 / -2 use the singular values (any m x n); 'nuc' is sum(s) * sum(1 / s); 'fro',
    1, -1, inf, -inf compute norm(A) * norm(inv(A)) and give inf for a singular matrix."""
    name = "linalg.cond"
    A = input
    if p not in _COND_ORDS:
        raise RuntimeError(f"{name}: got an invalid norm type {p!r}, expected one of None, 2, "
                           "-2, 'fro', 'nuc', 1, -1, inf, -inf.")
    square = p not in (None, 2, -2)
    _check_matrix(A, f"{name}(ord={p})" if square else name, square=square)
    if A.numel() == 0:
        return _out(_make(np.zeros(tuple(A.shape[:-2]), A._data.dtype)), out, name)
    if p in (None, 2, -2, "nuc"):
        s = svdvals(A)
        if p == "nuc":
            res = s.sum(-1) * (1 / s).sum(-1)
        else:
            big, small = s.narrow(-1, 0, 1).squeeze(-1), s.narrow(-1, -1, 1).squeeze(-1)
            res = small / big if p == -2 else big / small
        return _out(res, out, name)
    inverse, info = inv_ex(A)
    res = matrix_norm(A, p) * matrix_norm(inverse, p)
    singular = info != 0
    if bool(singular.any()):
        res = res.masked_fill(singular, math.inf)  # torch's value where inv(A) does not exist
    return _out(res, out, name)


# ----------------------------------------------------------------------------- tensor solves
def _prod(shape):
    return int(np.prod(shape, dtype=np.int64))


@linalg_op
def tensorinv(input, ind=2, *, out=None):
    """The tensor X with tensordot(A, X, ind) = identity: A's first ``ind`` dims and the rest
    must hold equally many elements; the result has shape A.shape[ind:] + A.shape[:ind]."""
    name = "linalg.tensorinv"
    A = input
    if not isinstance(ind, (int, np.integer)) or ind <= 0:
        raise RuntimeError(f"{name}: ind must be a strictly positive integer; got {ind}.")
    front, back = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    if _prod(front) != _prod(back):
        raise RuntimeError(f"{name}: prod(A.shape[:ind]) must equal prod(A.shape[ind:]); got "
                           f"{_prod(front)} != {_prod(back)} for shape {list(A.shape)} and "
                           f"ind={ind}.")
    n = _prod(front)
    return _out(inv(A.reshape(n, n)).reshape(back + front), out, name)


@linalg_op
def tensorsolve(input, other, dims=None, *, out=None):
    """The tensor X with tensordot(A, X, X.ndim) = B (X has shape A.shape[B.ndim:]); ``dims``
    moves those dims of A to the end first."""
    name = "linalg.tensorsolve"
    A, B = input, other
    if dims is not None:
        dims = [d % A.ndim for d in ((dims,) if isinstance(dims, int) else dims)]
        keep = [d for d in range(A.ndim) if d not in dims]
        A = A.permute(*(keep + dims))
    front, back = tuple(A.shape[:B.ndim]), tuple(A.shape[B.ndim:])
    if _prod(front) != _prod(back):
        raise RuntimeError(f"{name}: prod(A.shape[B.ndim:]) must equal prod(A.shape[:B.ndim]); "
                           f"got {_prod(back)} != {_prod(front)} for A {list(A.shape)} and B "
                           f"{list(B.shape)}.")
    n = _prod(front)
    return _out(solve(A.reshape(n, n), B.reshape(n)).reshape(back), out, name)


@linalg_op
def vander(x, *, N=None):
    """Vandermonde matrix of the last dim of x: out[..., i, j] = x[..., i] ** j for
    j < N (N defaults to x.shape[-1]); integer inputs stay integers."""
    name = "linalg.vander"
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'x' must be Tensor, not {type(x).__name__}")
    if x.dtype is D.bool_:
        raise RuntimeError(f"{name}: expected a floating point or integer tensor; got "
                           f"{x.dtype}.")
    if N is None:
        N = x.shape[-1] if x.ndim else 1
    if N <= 1:
        raise RuntimeError(f"{name}: N must be greater than 1; got N={N}.")
    if x.ndim == 0:
        x = x.unsqueeze(0)
    cols = x.unsqueeze(-1).expand(tuple(x.shape) + (N - 1,))
    ones = _make(np.ones(tuple(x.shape) + (1,), x._data.dtype))
    return ones._cat_with(cols, -1).cumprod(-1)  # x^0, x^1, x^2, ... by running products


# ----------------------------------------------------------------------------- cholesky-based
class CholeskySolve(Op):
    """X = (L L^T)^-1 B (U^T U with upper=True); the factor's forward reads one triangle.

    Like torch, the gradient treats the factor as a general matrix in A = L L^T:
    gB = A^-1 G, gA = -gB X^T, gL = (gA + gA^T) L (gU = U (gA + gA^T)). Gradient checks
    therefore pass a triangular factor through tril/triu first."""

    @staticmethod
    def forward(ctx, b, factor, upper=False):
        ctx.upper, ctx.b_shape = upper, b.shape
        batch = np.broadcast_shapes(b.shape[:-2], factor.shape[:-2])
        x = np.empty(batch + b.shape[-2:], np.result_type(b, factor))
        bb = np.broadcast_to(b, x.shape)
        ff = np.broadcast_to(factor, batch + factor.shape[-2:])
        with np.errstate(all="ignore"):
            for idx in np.ndindex(batch):
                x[idx] = _cho_solve((ff[idx], not upper), bb[idx], check_finite=False)
        ctx.save_for_backward(factor, x)
        return x

    @staticmethod
    def backward(ctx, grad):
        factor, x = ctx.saved_tensors
        gb = CholeskySolve.apply(grad, factor, upper=ctx.upper)
        common = gb @ _t(x).conj()  # gA = -gb X^H, and A = L L^H gives gL = (gA + gA^H) L
        common = common + _t(common).conj()
        gf = -(factor @ common) if ctx.upper else -(common @ factor)
        return sum_to(gb, ctx.b_shape), sum_to(gf, factor.shape)


def cholesky_solve(input, input2, upper=False, *, out=None):
    """Solve A X = B given A's Cholesky factor: cholesky_solve(B, L) with A = L L^T (or
    A = U^T U with upper=True). Batch dims broadcast."""
    name = "cholesky_solve"
    _check_matrix(input2, name, square=True)
    _check_pair(name, input2, input)
    if input.ndim < 2:
        raise RuntimeError(f"{name}: B must have at least 2 dimensions; got shape "
                           f"{list(input.shape)}.")
    if input.shape[-2] != input2.shape[-1]:
        raise RuntimeError(f"{name}: incompatible shapes; got B {list(input.shape)} and factor "
                           f"{list(input2.shape)}, expected B.shape[-2] == "
                           f"{input2.shape[-1]}.")
    _broadcast_batch(name, input2, input)  # the batch-shape check and its message
    return _out(CholeskySolve.apply(input, input2, upper=upper), out, name)


def cholesky_inverse(input, upper=False, *, out=None):
    """(L L^T)^-1 (or (U^T U)^-1 with upper=True) from a Cholesky factor."""
    name = "cholesky_inverse"
    _check_matrix(input, name, square=True)
    n = input.shape[-1]
    eye = _make(np.broadcast_to(np.eye(n, dtype=input._data.dtype), tuple(input.shape)).copy())
    return _out(CholeskySolve.apply(eye, input, upper=upper), out, name)


def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """torch.triangular_solve(b, A): (solution, cloned_coefficient) of A X = b (A^T X = b with
    transpose=True); linalg.solve_triangular is the modern form."""
    _warn_once("triangular_solve", "torch.triangular_solve is deprecated: "
               "linalg.solve_triangular(A, B) takes its arguments in the other order and returns "
               "only the solution.")
    name = "triangular_solve"
    _check_matrix(A, name, square=True)
    if input.ndim < 2:
        raise RuntimeError(f"{name}: b must have at least 2 dimensions; got shape "
                           f"{list(input.shape)}.")
    coefficient = _t(A) if transpose else A
    X = solve_triangular(coefficient, input, upper=upper != transpose,
                         unitriangular=unitriangular)
    return _out(_rt["triangular_solve"](X, A.clone()), out, name)


# ----------------------------------------------------------------------------- legacy norms
def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    """Sum of singular values over the last two dims (or the two dims in ``dim``).
    ``nuclear_norm(x, True)`` means keepdim=True, as in torch's first overload."""
    if isinstance(dim, bool):
        dim, keepdim = None, dim
    dims = (-2, -1) if dim is None else dim
    return matrix_norm(input, "nuc", dims, keepdim, out=out)


def frobenius_norm(input, dim, keepdim=False, *, out=None):
    """sqrt(sum x^2) over ``dim`` (one or two dims)."""
    dims = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
    if len(dims) > 2:
        raise RuntimeError(f"frobenius_norm: expected at most 2 dims; got {len(dims)} "
                           f"dims {dims}.")
    return vector_norm(input, 2, dims, keepdim, out=out)


register("cholesky_solve", wrap_out=False)(cholesky_solve)
register("cholesky_inverse", wrap_out=False)(cholesky_inverse)
register("triangular_solve", wrap_out=False)(triangular_solve)
register("nuclear_norm", method=False, wrap_out=False)(nuclear_norm)
register("frobenius_norm", method=False, wrap_out=False)(frobenius_norm)
