"""ONNX translations that need eigenvalues of a symmetric matrix or singular values:
eigvalsh, svdvals, nuclear_norm, cond, matrix_rank, pinv/pinverse, and matrix_norm's 2, -2 and
'nuc' orders.

NOTE [Cyclic Jacobi]: a symmetric n x n matrix (n static, at most 12; batch dimensions may be
dynamic) is diagonalised by a fixed number of cyclic Jacobi sweeps in float64 (each rotation
zeroes one off-diagonal pair; convergence is quadratic, so 8 to 10 sweeps leave off-diagonal
mass far below float32 rounding). Singular values are the square roots of the eigenvalues of
A^T A (or A A^T, the smaller). Eigenvectors come out too, but their signs are arbitrary (torch
returns LAPACK's): only sign-free results are exported (pinv = V diag(1/s^2) V^T A^T)."""
from __future__ import annotations

import numpy as np

from ._builder import Builder, T
from ._functions import _norm, _reg, _Unsupported
from ._linalg import _batch_ones, _entry, _solve_square, _static, _transpose
from ._math import _e, _lin, arg
from ._reductions import vector_norm

F64 = np.float64
MAX_N = 12


def _c(b: Builder, v) -> T:
    return b.const(v, F64)


def jacobi(b: Builder, A: T, n: int, rank: int) -> tuple[T, T]:
    """(eigenvalues (..., n) unsorted, eigenvectors (..., n, n) as columns) of symmetric A."""
    if n > MAX_N:
        raise _Unsupported()
    eye = np.eye(n)
    V = b.op("Expand", [b.const(eye), _batch_ones(b, A, 2)])
    for _ in range(8 if n <= 6 else 10):
        for p in range(n):
            for q in range(p + 1, n):
                app, aqq, apq = _entry(b, A, p, p), _entry(b, A, q, q), _entry(b, A, p, q)
                zero = b.op("Equal", [apq, _c(b, 0.0)], dtype=np.bool_)
                safe = b.op("Where", [zero, _c(b, 1.0), apq])
                theta = b.op("Div", [b.op("Sub", [aqq, app]), b.op("Mul", [safe, _c(b, 2.0)])])
                sgn = b.op("Where", [b.op("Less", [theta, _c(b, 0.0)], dtype=np.bool_),
                                     _c(b, -1.0), _c(b, 1.0)])
                root = b.op("Sqrt", [b.op("Add", [b.op("Mul", [theta, theta]), _c(b, 1.0)])])
                t = b.op("Div", [sgn, b.op("Add", [b.op("Abs", [theta]), root])])
                t = b.op("Where", [zero, _c(b, 0.0), t])
                c = b.op("Reciprocal", [b.op("Sqrt", [b.op("Add", [b.op("Mul", [t, t]),
                                                                   _c(b, 1.0)])])])
                s = b.op("Mul", [t, c])
                dpq = np.zeros((n, n))
                dpq[p, p] = dpq[q, q] = 1.0
                epq = np.zeros((n, n))
                epq[p, q], epq[q, p] = 1.0, -1.0
                J = b.op("Add", [b.op("Add", [b.const(eye), b.op("Mul", [b.op(
                    "Sub", [c, _c(b, 1.0)]), b.const(dpq)])]), b.op("Mul", [s, b.const(epq)])])
                A = b.op("MatMul", [b.op("MatMul", [_transpose(b, J, rank), A]), J])
                V = b.op("MatMul", [V, J])
    diag = b.op("ReduceSum", [b.op("Mul", [A, b.const(eye)]), b.const([-1], np.int64)],
                keepdims=0)
    return diag, V


def _sort(b: Builder, w: T, n: int, largest: bool) -> tuple[T, T]:
    vals, idx = b.op("TopK", [w, b.const([n], np.int64)], outputs=2, axis=-1,
                     largest=int(largest), sorted=1)
    idx.dtype = np.dtype(np.int64)
    return vals, idx


def _sym(b: Builder, A: T, upper: bool) -> T:
    """The symmetric matrix one triangle of A describes (as LAPACK's UPLO)."""
    tri = b.op("Trilu", [A], upper=int(upper))
    strict = b.op("Trilu", [A, b.const(1 if upper else -1, np.int64)], upper=int(upper))
    return b.op("Add", [tri, _transpose(b, strict, A.rank)])


@_reg(_lin("eigvalsh"))
def _eigvalsh(b, node, args, kwargs):
    A = args[0]
    n, n2 = _static(A)
    uplo = arg(args, kwargs, 1, "UPLO", "L")
    if n != n2 or uplo not in ("L", "U"):
        raise _Unsupported()
    w, _ = jacobi(b, _sym(b, b.cast(A, F64), uplo == "U"), n, A.rank)
    return _sort(b, w, n, largest=False)[0]


def _gram(b: Builder, A: T) -> tuple[T, int, bool]:
    """A^T A or A A^T, whichever is smaller; its size; whether it is A^T A."""
    m, n = _static(A)
    A = b.cast(A, F64)
    At = _transpose(b, A, A.rank)
    if m >= n:
        return b.op("MatMul", [At, A]), n, True
    return b.op("MatMul", [A, At]), m, False


def svdvals(b: Builder, A: T) -> T:
    """Singular values (..., min(m, n)), largest first."""
    G, k, _ = _gram(b, A)
    w, _ = jacobi(b, G, k, A.rank)
    w = _sort(b, w, k, largest=True)[0]
    return b.op("Sqrt", [b.op("Max", [w, _c(b, 0.0)])])


def _reduce_last(b: Builder, op: str, x: T, keep: bool = False) -> T:
    op, ins, kw = b.axes(op, [x], [-1], keepdims=int(keep))    # axes: input or attribute
    return b.op(op, ins, **kw)


@_reg(_lin("svdvals"))
def _svdvals(b, node, args, kwargs):
    return svdvals(b, args[0])


def _moved(b: Builder, x: T, dim) -> T:
    """x with the two matrix dims ``dim`` moved last (in that order)."""
    d0, d1 = (_norm(d, x.rank) for d in dim)
    if (d0, d1) == (x.rank - 2, x.rank - 1):
        return x
    perm = [i for i in range(x.rank) if i not in (d0, d1)] + [d0, d1]
    out = b.op("Transpose", [x], perm=perm)
    out.shape = tuple(x.shape[i] for i in perm) if x.shape is not None else None
    return out


def _keep(b: Builder, out: T, x: T, dim, keep: bool) -> T:
    if not keep:
        return out
    d0, d1 = sorted(_norm(d, x.rank) for d in dim)
    return b.op("Unsqueeze", [out, b.const([d0, d1], np.int64)])


def spectral_norm(b: Builder, x: T, ord_, dim, keep: bool) -> T:
    s = svdvals(b, _moved(b, x, dim))
    op = {"nuc": "ReduceSum", 2: "ReduceMax", -2: "ReduceMin"}[ord_]
    return _keep(b, _reduce_last(b, op, s), x, dim, keep)


@_reg(_e("nuclear_norm"), methods=("nuclear_norm",))
def _nuclear_norm(b, node, args, kwargs):
    x = args[0]
    dim = arg(args, kwargs, 1, "dim")
    keep = arg(args, kwargs, 2, "keepdim", False)
    if isinstance(dim, bool):          # nuclear_norm(x, keepdim)
        dim, keep = None, dim
    return spectral_norm(b, x, "nuc", (-2, -1) if dim is None else dim, keep)


@_reg(_lin("cond"))
def _cond(b, node, args, kwargs):
    A = args[0]
    p = arg(args, kwargs, 1, "p")
    if p in (None, 2, -2):
        s = svdvals(b, A)
        hi, lo = _reduce_last(b, "ReduceMax", s), _reduce_last(b, "ReduceMin", s)
        return b.op("Div", [hi, lo]) if p != -2 else b.op("Div", [lo, hi])
    n, n2 = _static(A)
    if p != "fro" or n != n2:
        raise _Unsupported()
    inv = _solve_square(b, A, None)[0]
    inv.shape = tuple(A.shape)
    a64 = b.cast(A, F64)
    return b.op("Mul", [vector_norm(b, a64, 2, [-2, -1], False),
                        vector_norm(b, inv, 2, [-2, -1], False)])


def _tolerance(b: Builder, smax: T, m: int, n: int, atol, rtol, dtype) -> T:
    """torch's max(atol, rtol * smax), rtol defaulting to eps * max(m, n) without atol."""
    if isinstance(atol, T) or isinstance(rtol, T):
        raise _Unsupported()
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else \
            float(np.finfo(dtype).eps) * max(m, n)
    return b.op("Max", [b.op("Mul", [smax, _c(b, float(rtol))]), _c(b, float(atol or 0.0))])


@_reg(_lin("matrix_rank"))
def _matrix_rank(b, node, args, kwargs):
    A = args[0]
    if kwargs.get("hermitian") or kwargs.get("tol") is not None:
        raise _Unsupported()
    m, n = _static(A)
    s = svdvals(b, A)
    tol = _tolerance(b, _reduce_last(b, "ReduceMax", s, keep=True), m, n,
                     kwargs.get("atol"), kwargs.get("rtol"), A.dtype)
    return _reduce_last(b, "ReduceSum", b.cast(b.op("Greater", [s, tol], dtype=np.bool_),
                                               np.int64))


def pinv(b: Builder, A: T, tol_of) -> T:
    """V diag(1/s^2) V^T A^T over the singular values above the tolerance (A^T A = V S^2 V^T;
    the basis chosen within a repeated eigenvalue does not change the product)."""
    m, n = _static(A)
    a = b.cast(A, F64)
    at = _transpose(b, a, A.rank)
    w, V = jacobi(b, b.op("MatMul", [at, a]), n, A.rank)
    s = b.op("Sqrt", [b.op("Max", [w, _c(b, 0.0)])])
    tol = tol_of(_reduce_last(b, "ReduceMax", s, keep=True))
    keep = b.op("Greater", [s, tol], dtype=np.bool_)
    inv_sq = b.op("Where", [keep, b.op("Reciprocal", [b.op("Where", [
        keep, b.op("Mul", [w, _c(b, 1.0)]), _c(b, 1.0)])]), _c(b, 0.0)])
    scaled = b.op("Mul", [V, b.op("Unsqueeze", [inv_sq, b.const([-2], np.int64)])])
    vt = _transpose(b, V, A.rank)
    return b.op("MatMul", [b.op("MatMul", [scaled, vt]), at])


@_reg(_lin("pinv"))
def _pinv(b, node, args, kwargs):
    A = args[0]
    if kwargs.get("hermitian"):
        raise _Unsupported()
    m, n = _static(A)
    return pinv(b, A, lambda smax: _tolerance(b, smax, m, n, kwargs.get("atol"),
                                              kwargs.get("rtol"), A.dtype))


@_reg(_e("pinverse"), methods=("pinverse",))
def _pinverse(b, node, args, kwargs):
    rcond = arg(args, kwargs, 1, "rcond", 1e-15)
    if isinstance(rcond, T):
        raise _Unsupported()
    return pinv(b, args[0], lambda smax: b.op("Mul", [smax, _c(b, float(rcond))]))


# ------------------------------------------------------------------------------ matrix_exp
MAX_SQUARINGS = 40


def matrix_exp(b: Builder, A: T) -> T:
    """exp(A) by scaling and squaring in float64: A / 2^s with s = ceil(log2 ||A||_1) (at
    least 0) has norm <= 1, where an 18-term Taylor sum is exact to float64 rounding; then
    s squarings, each applied only while k < s (a fixed chain of MAX_SQUARINGS steps, which
    covers every norm whose exponential float64 can hold)."""
    n, n2 = _static(A)
    if n != n2:
        raise _Unsupported()
    a = b.cast(A, F64)
    col_sums = b.op("ReduceSum", [b.op("Abs", [a]), b.const([-2], np.int64)], keepdims=1)
    norm = _reduce_last(b, "ReduceMax", col_sums, keep=True)            # (..., 1, 1)
    s = b.op("Ceil", [b.op("Div", [b.op("Log", [b.op("Max", [norm, _c(b, 1e-300)])]),
                                   _c(b, float(np.log(2.0)))])])
    s = b.op("Min", [b.op("Max", [s, _c(b, 0.0)]), _c(b, float(MAX_SQUARINGS))])
    x = b.op("Div", [a, b.op("Pow", [_c(b, 2.0), s])])
    eye = b.op("Expand", [b.const(np.eye(n)), _batch_ones(b, a, 2)])
    term, total = eye, eye
    for k in range(1, 19):
        term = b.op("Div", [b.op("MatMul", [term, x]), _c(b, float(k))])
        total = b.op("Add", [total, term])
    for k in range(MAX_SQUARINGS):
        sq = b.op("MatMul", [total, total])
        total = b.op("Where", [b.op("Less", [_c(b, float(k)), s], dtype=np.bool_), sq, total])
    return total


@_reg(_lin("matrix_exp"), _e("matrix_exp"), methods=("matrix_exp",))
def _matrix_exp(b, node, args, kwargs):
    return matrix_exp(b, args[0])
