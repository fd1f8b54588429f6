"""ONNX translations of the linear-algebra solvers and factorizations that ONNX has no operator
for: LU with partial pivoting (inv, solve, slogdet/logdet, lu_factor, lu, lu_unpack, lu_solve),
Cholesky (cholesky, cholesky_solve, cholesky_inverse) and triangular solves.

NOTE [Unrolled factorizations]: each is written out step by step for the matrix size seen at
export (the last two dimensions must be static; batch dimensions may be dynamic), as LAPACK
would run it: the same pivot choice (the first row of largest magnitude, as idamax), the same
row swaps and the same multipliers, so pivots and packed LU factors equal ember's. The steps run
in float64 and the results are cast back, so the ONNX model's rounding error is far below the
float32 error of the LAPACK result it is compared with. A singular or non-positive-definite
matrix cannot raise inside an ONNX model: the results are inf/NaN there (the ``_ex`` forms
report ``info`` as LAPACK does)."""
from __future__ import annotations

import numpy as np

import ember

from ._builder import Builder, T
from ._functions import _e, _reg, _Unsupported
from ._math import _lin, arg

F64 = np.float64


def _static(x: T) -> tuple[int, int]:
    """The static matrix size (rows, cols) of ``x``, or the call is not exportable."""
    if not isinstance(x, T) or x.shape is None or x.rank < 2 or None in x.shape[-2:]:
        raise _Unsupported()
    return x.shape[-2], x.shape[-1]


def _slice(b: Builder, x: T, start: int, end: int, axis: int) -> T:
    return b.op("Slice", [x, b.const([start], np.int64), b.const([end], np.int64),
                          b.const([axis], np.int64)])


def _entry(b: Builder, x: T, i: int, j: int) -> T:
    return _slice(b, _slice(b, x, i, i + 1, -2), j, j + 1, -1)


def _col_index(n: int) -> np.ndarray:
    return np.arange(n, dtype=np.int64).reshape(n, 1)


def _transpose(b: Builder, x: T, rank: int | None = None) -> T:
    """Swap the last two dimensions (``rank`` when ``x``'s is not recorded)."""
    rank = x.rank if rank is None else rank
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    return b.op("Transpose", [x], perm=perm)


def _batch_ones(b: Builder, x: T, tail: int) -> T:
    """A shape vector: ``x``'s batch dimensions followed by ``tail`` ones (Expand to it
    broadcasts another value over ``x``'s batch without touching its values)."""
    batch = b.op("Shape", [x], dtype=np.int64, shape=(None,), end=-2)
    return b.op("Concat", [batch, b.const([1] * tail, np.int64)], dtype=np.int64, axis=0,
                shape=(None,))


def _eye_like(b: Builder, x: T, n: int) -> T:
    """The n x n identity broadcast over ``x``'s batch dimensions."""
    return b.op("Expand", [b.const(np.eye(n, dtype=F64)), _batch_ones(b, x, 2)],
                shape=tuple(x.shape[:-2]) + (n, n))


# ------------------------------------------------------------------------------ LU
class _LU:
    """Row-pivoted elimination of M (..., m, cols) over its first ``steps`` columns.

    ``jordan=True`` also clears the pivot column above the pivot and scales the pivot row
    (Gauss-Jordan: [A | B] becomes [I | A^-1 B]); otherwise the multipliers are stored below
    the diagonal, giving LAPACK's packed LU."""

    def __init__(self, b: Builder, M: T, m: int, cols: int, steps: int, jordan: bool):
        r = b.const(_col_index(m))
        perm = b.op("Add", [b.op("Mul", [b.cast(_slice(b, M, 0, 1, -1), np.int64),
                                         b.const(0, np.int64)]), r])
        sign = b.const(1.0, F64)
        self.pivots, self.swaps = [], []
        for k in range(steps):
            col = _slice(b, M, k, k + 1, -1)
            below = b.const(_col_index(m) >= k)
            score = b.op("Where", [below, b.op("Abs", [col]), b.const(-1.0, F64)])
            p = b.op("ArgMax", [score], dtype=np.int64, axis=-2, keepdims=1)   # (..., 1, 1)
            self.swaps.append(p)
            at_k = b.const(_col_index(m) == k)
            idx = b.op("Where", [at_k, p, b.op("Where", [
                b.op("Equal", [r, p], dtype=np.bool_), b.const(k, np.int64), r])])
            M = b.op("GatherElements", [M, b.op("Expand", [idx, b.shape_of(M)])], axis=-2)
            perm = b.op("GatherElements", [perm, idx], axis=-2)
            sign = b.op("Mul", [sign, b.op("Where", [b.op("Equal", [p, b.const(k, np.int64)],
                                                          dtype=np.bool_),
                                                    b.const(1.0, F64), b.const(-1.0, F64)])])
            piv = _entry(b, M, k, k)
            col = _slice(b, M, k, k + 1, -1)
            self.pivots.append(piv)
            # a zero pivot means the column below is zero too: divide by 1 to leave it alone
            zero = b.op("Equal", [piv, b.const(0.0, F64)], dtype=np.bool_)
            safe = b.op("Where", [zero, b.const(1.0, F64), piv])
            f = b.op("Div", [b.op("Mul", [col, b.const(
                (_col_index(m) != k if jordan else _col_index(m) > k).astype(F64))]), safe])
            # the pivot row's columns left of k hold earlier multipliers (zeros for
            # Gauss-Jordan): only its trailing part is subtracted, as LAPACK's update
            rowk = b.op("Mul", [_slice(b, M, k, k + 1, -2),
                                b.const((np.arange(cols) >= k).astype(F64))])
            M = b.op("Sub", [M, b.op("Mul", [f, rowk])])
            if jordan:
                M = b.op("Where", [at_k, b.op("Div", [rowk, piv]), M])
            else:
                place = b.const((_col_index(m) > k) & (np.arange(cols) == k))
                M = b.op("Where", [place, f, M])
        self.M, self.perm, self.sign = M, perm, sign

    def pivot_vector(self, b: Builder) -> T:
        """(..., steps): the pivots, each in its own column."""
        return b.op("Concat", [b.op("Squeeze", [p, b.const([-1], np.int64)])
                               for p in self.pivots], axis=-1)

    def lapack_pivots(self, b: Builder) -> T:
        """LAPACK's 1-based ``ipiv``: the row swapped with row k at step k."""
        rows = [b.op("Squeeze", [p, b.const([-1], np.int64)]) for p in self.swaps]
        return b.op("Add", [b.op("Concat", rows, axis=-1), b.const(1, np.int64)])

    def info(self, b: Builder) -> T:
        """LAPACK's ``info``: 1 + the first step with an exactly zero pivot, else 0."""
        return first_true(b, b.op("Equal", [self.pivot_vector(b), b.const(0.0, F64)],
                                  dtype=np.bool_))


def first_true(b: Builder, z: T) -> T:
    """1 + the index of the first True along the last axis, 0 if there is none."""
    zi = b.cast(z, np.int32)
    first = b.op("ArgMax", [zi], dtype=np.int64, axis=-1, keepdims=0)
    some = b.op("ReduceMax", [zi], keepdims=0, axes=[-1]) if b.opset < 18 else \
        b.op("ReduceMax", [zi, b.const([-1], np.int64)], keepdims=0)
    return b.op("Mul", [b.cast(b.op("Add", [first, b.const(1, np.int64)]), np.int32), some])


def _solve_square(b: Builder, A: T, B: T | None) -> T:
    """A^-1 B (A^-1 when B is None) by Gauss-Jordan elimination."""
    n, n2 = _static(A)
    if n != n2:
        raise _Unsupported()
    A = b.cast(A, F64)
    if B is None:
        B, k = _eye_like(b, A, n), n
    else:
        k = _static(B)[1]
        B = b.cast(B, F64)
        # broadcast the batch dimensions of A and B against each other
        z = b.op("Add", [_entry(b, A, 0, 0), _entry(b, B, 0, 0)])
        A = b.op("Expand", [A, b.shape_of(b.op("Mul", [z, b.op("Mul", [A, b.const(0.0,
                                                                                 F64)])]))])
        B = b.op("Expand", [B, b.shape_of(b.op("Mul", [z, b.op("Mul", [B, b.const(0.0,
                                                                                 F64)])]))])
    lu = _LU(b, b.op("Concat", [A, B], axis=-1), n, n + k, n, jordan=True)
    return _slice(b, lu.M, n, n + k, -1), lu


@_reg(_lin("inv"), _e("inverse"), methods=("inverse",))
def _inv(b, node, args, kwargs):
    return _solve_square(b, args[0], None)[0]


@_reg(_lin("inv_ex"))
def _inv_ex(b, node, args, kwargs):
    x, lu = _solve_square(b, args[0], None)
    return x, lu.info(b)


def _solve(b: Builder, A: T, B: T, left: bool):
    if not isinstance(B, T):
        raise _Unsupported()
    vector = B.rank == 1 or (B.rank == A.rank - 1 and A.shape[:-2] == B.shape[:-1])
    if vector:
        B = b.op("Unsqueeze", [B, b.const([-1], np.int64)], shape=tuple(B.shape) + (1,))
    if not left:
        if vector:
            raise _Unsupported()
        X, lu = _solve_square(b, _transpose(b, A), _transpose(b, B))
        return _transpose(b, X, max(A.rank, B.rank)), lu
    X, lu = _solve_square(b, A, B)
    if vector:
        X = b.op("Squeeze", [X, b.const([-1], np.int64)])
    return X, lu


@_reg(_lin("solve"))
def _solve_tr(b, node, args, kwargs):
    return _solve(b, args[0], arg(args, kwargs, 1, "B"), kwargs.get("left", True))[0]


@_reg(_lin("solve_ex"))
def _solve_ex(b, node, args, kwargs):
    X, lu = _solve(b, args[0], arg(args, kwargs, 1, "B"), kwargs.get("left", True))
    return X, lu.info(b)


def slogdet(b: Builder, A: T):
    n, n2 = _static(A)
    if n != n2:
        raise _Unsupported()
    lu = _LU(b, b.cast(A, F64), n, n, n, jordan=False)
    piv = lu.pivot_vector(b)
    sign = b.op("Mul", [b.op("ReduceProd", [b.op("Sign", [piv])], axes=[-1], keepdims=1)
                        if b.opset < 18 else
                        b.op("ReduceProd", [b.op("Sign", [piv]), b.const([-1], np.int64)],
                             keepdims=1),
                        b.op("Squeeze", [lu.sign, b.const([-1], np.int64)])])
    sign = b.op("Squeeze", [sign, b.const([-1], np.int64)])
    logabs = b.op("ReduceSum", [b.op("Log", [b.op("Abs", [piv])]), b.const([-1], np.int64)],
                  keepdims=0)
    return sign, logabs


@_reg(_lin("slogdet"), _e("slogdet"), methods=("slogdet",))
def _slogdet(b, node, args, kwargs):
    return slogdet(b, args[0])


@_reg(_lin("logdet"), _e("logdet"), methods=("logdet",))
def _logdet(b, node, args, kwargs):
    sign, logabs = slogdet(b, args[0])
    neg = b.op("Less", [sign, b.const(0.0, F64)], dtype=np.bool_)
    return b.op("Where", [neg, b.const(np.nan, F64), logabs])


def _lu_factor(b: Builder, A: T) -> _LU:
    m, n = _static(A)
    return _LU(b, b.cast(A, F64), m, n, min(m, n), jordan=False)


def _check_pivot(kwargs):
    if not kwargs.get("pivot", True):
        raise _Unsupported()


@_reg(_lin("lu_factor"))
def _lu_factor_tr(b, node, args, kwargs):
    _check_pivot(kwargs)
    lu = _lu_factor(b, args[0])
    return lu.M, lu.lapack_pivots(b)


@_reg(_lin("lu_factor_ex"))
def _lu_factor_ex(b, node, args, kwargs):
    _check_pivot(kwargs)
    lu = _lu_factor(b, args[0])
    return lu.M, lu.lapack_pivots(b), lu.info(b)


@_reg(_e("lu"), methods=("lu",))
def _lu_old(b, node, args, kwargs):
    if not arg(args, kwargs, 1, "pivot", True):
        raise _Unsupported()
    lu = _lu_factor(b, args[0])
    if arg(args, kwargs, 2, "get_infos", False):
        return lu.M, lu.lapack_pivots(b), lu.info(b)
    return lu.M, lu.lapack_pivots(b)


def _unpack(b: Builder, LU: T, perm: T, m: int, n: int):
    """P, L, U from the packed factors and the row order ``perm`` (..., m, 1)."""
    k = min(m, n)
    L = _slice(b, b.op("Trilu", [LU, b.const(-1, np.int64)], upper=0), 0, k, -1)
    L = b.op("Add", [L, b.const(np.eye(m, k, dtype=F64))])
    U = _slice(b, b.op("Trilu", [LU], upper=1), 0, k, -2)
    # A[perm] = L U, so P[j, i] = (perm[i] == j) gives A = P L U
    row = b.op("Transpose", [perm], perm=list(range(perm.rank - 2)) + [perm.rank - 1,
                                                                       perm.rank - 2]) \
        if perm.shape is not None else None
    if row is None:
        raise _Unsupported()
    P = b.cast(b.op("Equal", [row, b.const(_col_index(m))], dtype=np.bool_), F64)
    return P, L, U


@_reg(_lin("lu"))
def _linalg_lu(b, node, args, kwargs):
    _check_pivot(kwargs)
    A = args[0]
    m, n = _static(A)
    lu = _lu_factor(b, A)
    lu.perm.shape = tuple(A.shape[:-1]) + (1,)
    return _unpack(b, lu.M, lu.perm, m, n)


def _perm_from_pivots(b: Builder, piv: T, m: int) -> T:
    """The row order (..., m, 1) that LAPACK's 1-based swaps ``piv`` (..., k) apply."""
    r = b.const(np.arange(m, dtype=np.int64))
    perm = b.op("Expand", [r, _batch_ones(b, b.op("Unsqueeze", [piv, b.const([-1], np.int64)]),
                                         1)])
    for k in range(piv.shape[-1]):
        j = b.op("Sub", [b.cast(_slice(b, piv, k, k + 1, -1), np.int64), b.const(1, np.int64)])
        at_k = b.const(np.arange(m) == k)
        idx = b.op("Where", [at_k, j, b.op("Where", [
            b.op("Equal", [r, j], dtype=np.bool_), b.const(k, np.int64), r])])
        perm = b.op("GatherElements", [perm, idx], axis=-1)
    return b.op("Unsqueeze", [perm, b.const([-1], np.int64)])


@_reg(_e("lu_unpack"))
def _lu_unpack(b, node, args, kwargs):
    LU, piv = args[0], arg(args, kwargs, 1, "LU_pivots")
    if not (arg(args, kwargs, 2, "unpack_data", True) and
            arg(args, kwargs, 3, "unpack_pivots", True)):
        raise _Unsupported()
    m, n = _static(LU)
    if not isinstance(piv, T) or piv.shape is None or piv.shape[-1] is None:
        raise _Unsupported()
    perm = _perm_from_pivots(b, piv, m)
    perm.shape = tuple(piv.shape[:-1]) + (m, 1)
    return _unpack(b, b.cast(LU, F64), perm, m, n)


def _lu_solve(b: Builder, LU: T, piv: T, B: T) -> T:
    n, n2 = _static(LU)
    if n != n2 or not isinstance(piv, T) or piv.shape is None or piv.shape[-1] != n:
        raise _Unsupported()
    LU, B = b.cast(LU, F64), b.cast(B, F64)
    perm = _perm_from_pivots(b, piv, n)          # A[perm] = L U, so L U X = B[perm]
    _static(B)
    B = b.op("Expand", [B, _batch_ones(b, b.op("Unsqueeze", [piv, b.const([-1], np.int64)]),
                                       2)])
    idx = b.op("Expand", [perm, b.shape_of(B)])
    PB = b.op("GatherElements", [B, idx], axis=-2)
    Y = tri_solve(b, LU, PB, n, upper=False, unit=True)
    return tri_solve(b, LU, Y, n, upper=True, unit=False)


@_reg(_lin("lu_solve"))
def _linalg_lu_solve(b, node, args, kwargs):
    if not kwargs.get("left", True) or kwargs.get("adjoint", False):
        raise _Unsupported()
    return _lu_solve(b, args[0], arg(args, kwargs, 1, "pivots"), arg(args, kwargs, 2, "B"))


@_reg(_e("lu_solve"), methods=("lu_solve",))
def _lu_solve_old(b, node, args, kwargs):
    return _lu_solve(b, args[1] if len(args) > 1 else kwargs["LU_data"],
                     arg(args, kwargs, 2, "LU_pivots"), args[0])


# ------------------------------------------------------------------------------ triangular
def tri_solve(b: Builder, A: T, B: T, n: int, upper: bool, unit: bool) -> T:
    """X with A X = B for triangular A (..., n, n) by substitution, one row at a time."""
    rows: dict[int, T] = {}
    order = range(n - 1, -1, -1) if upper else range(n)
    for i in order:
        rhs = _slice(b, B, i, i + 1, -2)
        done = sorted(rows)
        if done:
            known = b.op("Concat", [rows[j] for j in done], axis=-2) if len(done) > 1 \
                else rows[done[0]]
            lo, hi = (i + 1, n) if upper else (0, i)
            coef = _slice(b, _slice(b, A, i, i + 1, -2), lo, hi, -1)
            rhs = b.op("Sub", [rhs, b.op("MatMul", [coef, known])])
        rows[i] = rhs if unit else b.op("Div", [rhs, _entry(b, A, i, i)])
    return b.op("Concat", [rows[i] for i in range(n)], axis=-2) if n > 1 else rows[0]


def _triangular(b: Builder, A: T, B: T, upper: bool, left: bool, unit: bool) -> T:
    n, n2 = _static(A)
    if n != n2 or not isinstance(B, T):
        raise _Unsupported()
    _static(B)
    A, B = b.cast(A, F64), b.cast(B, F64)
    if not left:           # X A = B  <=>  A^T X^T = B^T
        X = tri_solve(b, _transpose(b, A), _transpose(b, B), n, not upper, unit)
        return _transpose(b, X, max(A.rank, B.rank))
    # substitution broadcasts the batch dimensions of A and B by itself, except that a first
    # row with no matrix product keeps B's: expand B over A's batch
    B = b.op("Expand", [B, _batch_ones(b, A, 2)])
    return tri_solve(b, A, B, n, upper, unit)


@_reg(_lin("solve_triangular"))
def _solve_triangular(b, node, args, kwargs):
    return _triangular(b, args[0], arg(args, kwargs, 1, "B"), kwargs["upper"],
                       kwargs.get("left", True), kwargs.get("unitriangular", False))


@_reg(_e("triangular_solve"), methods=("triangular_solve",))
def _triangular_solve(b, node, args, kwargs):
    B, A = args[0], arg(args, kwargs, 1, "A")
    upper = arg(args, kwargs, 2, "upper", True)
    transpose = arg(args, kwargs, 3, "transpose", False)
    unit = arg(args, kwargs, 4, "unitriangular", False)
    coef = _transpose(b, A) if transpose else A
    return _triangular(b, coef, B, upper != bool(transpose), True, unit), \
        b.op("Identity", [A])


# ------------------------------------------------------------------------------ Cholesky
def cholesky(b: Builder, A: T) -> tuple[T, T]:
    """The lower factor L (A = L L^T), column by column, and the values whose square roots
    are the diagonal (LAPACK's info is the first one that is not positive)."""
    n, n2 = _static(A)
    if n != n2:
        raise _Unsupported()
    A = b.cast(A, F64)
    cols: list[T] = []
    diag = []
    for j in range(n):
        c = _slice(b, A, j, j + 1, -1)                      # (..., n, 1)
        if cols:
            left = b.op("Concat", cols, axis=-1) if len(cols) > 1 else cols[0]
            row = _transpose(b, _slice(b, left, j, j + 1, -2), A.rank)
            c = b.op("Sub", [c, b.op("MatMul", [left, row])])
        d = _slice(b, c, j, j + 1, -2)                      # (..., 1, 1)
        diag.append(d)
        below = b.const((_col_index(n) > j).astype(F64))
        at_j = b.const((_col_index(n) == j).astype(F64))
        root = b.op("Sqrt", [d])
        cols.append(b.op("Add", [b.op("Div", [b.op("Mul", [c, below]), root]),
                                 b.op("Mul", [root, at_j])]))
    L = b.op("Concat", cols, axis=-1) if n > 1 else cols[0]
    d = b.op("Concat", [b.op("Squeeze", [x, b.const([-1], np.int64)]) for x in diag], axis=-1)
    return L, d


def _chol(b, A, upper):
    L, d = cholesky(b, A)
    return (_transpose(b, L, A.rank) if upper else L), d


@_reg(_lin("cholesky"))
def _linalg_cholesky(b, node, args, kwargs):
    return _chol(b, args[0], kwargs.get("upper", False))[0]


@_reg(_e("cholesky"), methods=("cholesky",))
def _cholesky_old(b, node, args, kwargs):
    return _chol(b, args[0], arg(args, kwargs, 1, "upper", False))[0]


@_reg(_lin("cholesky_ex"))
def _cholesky_ex(b, node, args, kwargs):
    L, d = _chol(b, args[0], kwargs.get("upper", False))
    bad = b.op("Not", [b.op("Greater", [d, b.const(0.0, F64)], dtype=np.bool_)])
    return L, first_true(b, bad)


def _cholesky_solve(b: Builder, B: T, L: T, upper: bool) -> T:
    n = _static(L)[0]
    L = b.cast(L, F64)
    if upper:
        L = _transpose(b, L)
    Y = _triangular(b, L, B, False, True, False)
    return tri_solve(b, _transpose(b, L, L.rank), Y, n, upper=True, unit=False)


@_reg(_e("cholesky_solve"), methods=("cholesky_solve",))
def _cholesky_solve_tr(b, node, args, kwargs):
    return _cholesky_solve(b, args[0], arg(args, kwargs, 1, "input2"),
                           arg(args, kwargs, 2, "upper", False))


@_reg(_e("cholesky_inverse"), methods=("cholesky_inverse",))
def _cholesky_inverse(b, node, args, kwargs):
    L = args[0]
    n = _static(L)[0]
    eye = _eye_like(b, b.cast(L, F64), n)
    return _cholesky_solve(b, eye, L, arg(args, kwargs, 1, "upper", False))


_ = ember      # ember.linalg is looked up through _lin


# ------------------------------------------------------------------------------ QR
def geqrf(b: Builder, A: T) -> tuple[T, T]:
    """LAPACK's geqrf: R on and above the diagonal, the Householder vectors below it, and
    tau; each reflector as dlarfg makes it (beta = -sign(alpha) * norm, tau = 0 when the
    column below the diagonal is already zero)."""
    m, n = _static(A)
    rank, shape = A.rank, tuple(A.shape)
    A = b.cast(A, F64)
    taus = []
    for k in range(min(m, n)):
        col = _slice(b, A, k, k + 1, -1)                               # (..., m, 1)
        alpha = _slice(b, col, k, k + 1, -2)                           # (..., 1, 1)
        below = b.op("Mul", [col, b.const((_col_index(m) > k).astype(F64))])
        xnorm = b.op("Sqrt", [b.op("ReduceSum", [b.op("Mul", [below, below]),
                                                 b.const([-2], np.int64)], keepdims=1)])
        norm = b.op("Sqrt", [b.op("Add", [b.op("Mul", [alpha, alpha]),
                                          b.op("Mul", [xnorm, xnorm])])])
        neg = b.op("Less", [alpha, b.const(0.0, F64)], dtype=np.bool_)
        beta = b.op("Where", [neg, norm, b.op("Neg", [norm])])
        trivial = b.op("Equal", [xnorm, b.const(0.0, F64)], dtype=np.bool_)
        beta = b.op("Where", [trivial, alpha, beta])
        safe_beta = b.op("Where", [trivial, b.const(1.0, F64), beta])
        tau = b.op("Where", [trivial, b.const(0.0, F64),
                             b.op("Div", [b.op("Sub", [beta, alpha]), safe_beta])])
        scale = b.op("Where", [trivial, b.const(1.0, F64), b.op("Sub", [alpha, beta])])
        v = b.op("Add", [b.op("Div", [below, scale]),
                         b.const((_col_index(m) == k).astype(F64))])   # v[k] = 1
        # H = I - tau v v^T on the columns right of k
        w = b.op("MatMul", [_transpose(b, v, rank), A])                # (..., 1, n)
        right = b.const((np.arange(n) > k).astype(F64))
        A = b.op("Sub", [A, b.op("Mul", [b.op("Mul", [tau, v]), b.op("Mul", [w, right])])])
        # column k: rows above unchanged, beta on the diagonal, v below
        newcol = b.op("Add", [b.op("Mul", [col, b.const((_col_index(m) < k).astype(F64))]),
                              b.op("Add", [b.op("Mul", [beta, b.const(
                                  (_col_index(m) == k).astype(F64))]),
                                  b.op("Mul", [v, b.const((_col_index(m) > k).astype(F64))])])])
        A = b.op("Where", [b.const(np.arange(n) == k), newcol, A])
        taus.append(b.op("Squeeze", [tau, b.const([-1], np.int64)]))
    tau = b.op("Concat", taus, axis=-1) if len(taus) > 1 else taus[0]
    A.shape, tau.shape = shape, shape[:-2] + (min(m, n),)
    return A, tau


def _reflector(b: Builder, a: T, i: int, m: int) -> T:
    """v_i (..., m, 1) from the packed column i of ``a``: 0 above i, 1 at i, a below."""
    col = _slice(b, a, i, i + 1, -1)
    return b.op("Add", [b.op("Mul", [col, b.const((_col_index(m) > i).astype(F64))]),
                        b.const((_col_index(m) == i).astype(F64))])


def _apply(b: Builder, a: T, tau: T, C: T, m: int, order, left: bool, rank: int) -> T:
    """H_i = I - tau_i v_i v_i^T applied in ``order``: C <- H_i C (left) or C H_i (right)."""
    for i in order:
        v = _reflector(b, a, i, m)
        t = b.op("Unsqueeze", [_slice(b, tau, i, i + 1, -1), b.const([-1], np.int64)])
        vt = _transpose(b, v, rank)
        if left:
            C = b.op("Sub", [C, b.op("Mul", [t, b.op("MatMul", [v, b.op("MatMul", [vt, C])])])])
        else:
            C = b.op("Sub", [C, b.op("Mul", [t, b.op("MatMul", [b.op("MatMul", [C, v]), vt])])])
    return C


def householder_product(b: Builder, a: T, tau: T, cols: int) -> T:
    """The first ``cols`` columns of H_1 ... H_k (LAPACK's orgqr)."""
    m, _ = _static(a)
    if not isinstance(tau, T) or tau.shape is None or tau.shape[-1] is None:
        raise _Unsupported()
    a, tau = b.cast(a, F64), b.cast(tau, F64)
    eye = b.op("Expand", [b.const(np.eye(m, cols, dtype=F64)), _batch_ones(b, a, 2)])
    k = tau.shape[-1]
    return _apply(b, a, tau, eye, m, range(k - 1, -1, -1), True, a.rank)


@_reg(_e("geqrf"), methods=("geqrf",))
def _geqrf(b, node, args, kwargs):
    return geqrf(b, args[0])


@_reg(_lin("householder_product"), _e("orgqr"), methods=("orgqr",))
def _householder_product(b, node, args, kwargs):
    a, tau = args[0], args[1] if len(args) > 1 else kwargs.get("tau", kwargs.get("input2"))
    return householder_product(b, a, tau, _static(a)[1])


def _qr(b: Builder, A: T, mode: str):
    m, n = _static(A)
    a, tau = geqrf(b, A)
    k = min(m, n)
    if mode == "complete":
        Q, R = householder_product(b, a, tau, m), b.op("Trilu", [a], upper=1)
    elif mode == "reduced":
        Q = householder_product(b, a, tau, k)
        R = _slice(b, b.op("Trilu", [a], upper=1), 0, k, -2)
    else:
        raise _Unsupported()        # mode='r' returns an empty Q
    return Q, R


@_reg(_lin("qr"))
def _linalg_qr(b, node, args, kwargs):
    return _qr(b, args[0], arg(args, kwargs, 1, "mode", "reduced"))


@_reg(_e("qr"), methods=("qr",))
def _qr_old(b, node, args, kwargs):
    return _qr(b, args[0], "reduced" if arg(args, kwargs, 1, "some", True) else "complete")


@_reg(_e("ormqr"), methods=("ormqr",))
def _ormqr(b, node, args, kwargs):
    a, tau, C = args[0], arg(args, kwargs, 1, "input2"), arg(args, kwargs, 2, "input3")
    left = arg(args, kwargs, 3, "left", True)
    trans = arg(args, kwargs, 4, "transpose", False)
    m, _ = _static(a)
    if not isinstance(tau, T) or tau.shape is None or tau.shape[-1] is None or \
            not isinstance(C, T):
        raise _Unsupported()
    k = tau.shape[-1]
    a, tau, C = b.cast(a, F64), b.cast(tau, F64), b.cast(C, F64)
    # Q = H_1 ... H_k: Q C applies H_k first, Q^T C H_1 first; C Q applies H_1 first
    forward = (left and trans) or (not left and not trans)
    order = range(k) if forward else range(k - 1, -1, -1)
    return _apply(b, a, tau, C, m, order, left, max(a.rank, C.rank))
