"""Decompositions of ``ember.linalg`` (qr, svd, eigh) and what is built on them (pinv,
matrix_rank, matrix_power, matrix_exp, lstsq). Factorizations run in NumPy/SciPy (LAPACK); the
backwards are written with ember ops.
"""
from __future__ import annotations

import numpy as np
from scipy.linalg import expm as _expm

from ... import _dtype as D
from ..._tensor import _make
from ...autograd.function import Op
from ..complex import complex_ as _complex_
from ..rearrange import diag_embed
from ._common import LinAlgError, _check_matrix, _check_pair, _out, _rt, _t, _tolerances, linalg_op
from ._solve import Inv, SolveTriangular, inv


# ----------------------------------------------------------------------------- det
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

    holomorphic = True  # see NOTE [Complex gradients]

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


@linalg_op
def det(A, *, out=None):
    """Determinant of a (batch of) square matrix."""
    _check_matrix(A, "linalg.det", square=True)
    return _out(Det.apply(A), out, "linalg.det")


# ----------------------------------------------------------------------------- qr
def _h(x):
    """Conjugate transpose (the transpose for real x: conj of a real tensor is itself)."""
    return _t(x).conj()


def _copyltu(M):
    """The Hermitian matrix with M's strictly lower triangle and the real part of its diagonal
    (for real M: the symmetric matrix with M's lower triangle)."""
    low = M.tril(-1)
    diag = M.diagonal(0, -2, -1)
    if M.is_complex():
        diag = _complex_(diag.real, diag.real * 0)
    return low + _h(low) + diag_embed(diag)


def _qr_backward_tall(Q, R, gQ, gR):
    # m >= n: M = R gR^H - gQ^H Q;  gA = (gQ + Q copyltu(M)) R^-H. For complex A the real
    # diagonal of R fixes the phase of each column of Q, which is why copyltu keeps only the
    # real part of M's diagonal (torch's convention).
    M = R @ _h(gR) - _h(gQ) @ Q
    b = gQ + Q @ _copyltu(M)
    return _h(SolveTriangular.apply(R, _h(b), upper=True))


class QR(Op):
    """A = QR (Householder, LAPACK signs; R has a real diagonal). Differentiable for
    mode='reduced', and for mode='complete' when m <= n; real and complex input."""

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
            raise RuntimeError("linalg.qr: The QR decomposition is not differentiable when "
                               "mode='complete' and nrows > ncols.")
        if m >= n:
            return _qr_backward_tall(Q, R, gQ, gR)
        # m < n: A = [X | Y], R = [U | V] with X = QU square; Y = QV
        U, V = R.narrow(-1, 0, m), R.narrow(-1, m, n - m)
        gU, gV = gR.narrow(-1, 0, m), gR.narrow(-1, m, n - m)
        Y = Q @ V
        gX = _qr_backward_tall(Q, U, gQ + Y @ _h(gV), gU)
        return gX._cat_with(Q @ gV, -1)


@linalg_op
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


def _check_phase_free(name, vectors, im_diag):
    """A complex decomposition fixes its vectors only up to a phase e^(i phi) each; a loss that
    depends on that phase (a non-zero Im diag(V^H gV), in torch's tolerance) has no gradient."""
    if np.any(np.abs(im_diag) > 1e-2):
        raise RuntimeError(
            f"{name} backward: the {vectors} in the complex case are specified up to "
            "multiplication by e^{i phi}, and the loss depends on that phase; got a non-zero "
            "imaginary part on diag(V^H gV), expected a loss invariant to the phase (e.g. of "
            "|V| or of products such as U diag(S) Vh).")


def _svd_backward(U, S, Vh, gU, gS, gVh):
    # gA = U [ (F o (U^H gU - gU^H U)) S + diag(gS) + S (F o (V^H gV - gV^H V)) ] V^H
    #      + (I - U U^H) gU S^-1 V^H + U S^-1 gV^H (I - V V^H),   F_ij = 1 / (s_j^2 - s_i^2)
    # complex A adds i Im(diag(U^H gU)) / S on the diagonal: the phase of each singular pair is
    # arbitrary, and that term carries the part of gU along it (torch's convention)
    m, n = U.shape[-2], Vh.shape[-1]
    if U.is_complex() and (gU is not None or gVh is not None):
        # U -> U e^(i phi), V -> V e^(i phi) leaves A alone: Im diag(U^H gU + V^H gV) must be 0
        im = 0.0
        if gU is not None:
            im = im + np.imag(np.diagonal((_h(U) @ gU)._data, 0, -2, -1))
        if gVh is not None:
            im = im + np.imag(np.diagonal((Vh @ _h(gVh))._data, 0, -2, -1))
        _check_phase_free("linalg.svd", "singular vectors", im)
    inner = diag_embed(gS).to(U.dtype) if gS is not None else None
    if gU is not None or gVh is not None:
        s2 = S * S
        F = _off_diag_inverse(s2.unsqueeze(-2) - s2.unsqueeze(-1))
        terms = []
        if gU is not None:
            UhgU = _h(U) @ gU
            terms.append((F * (UhgU - _h(UhgU))) * S.unsqueeze(-2))
            if UhgU.is_complex():
                im = UhgU.diagonal(0, -2, -1).imag / S
                terms.append(diag_embed(_complex_(im * 0, im)))
        if gVh is not None:
            VhgV = Vh @ _h(gVh)  # V^H gV
            terms.append(S.unsqueeze(-1) * (F * (VhgV - _h(VhgV))))
        for t in terms:
            inner = t if inner is None else inner + t
    gA = U @ inner @ Vh if inner is not None else None
    if gU is not None and m > S.shape[-1]:
        extra = (gU - U @ (_h(U) @ gU)) / S.unsqueeze(-2) @ Vh
        gA = extra if gA is None else gA + extra
    if gVh is not None and n > S.shape[-1]:
        extra = U @ ((gVh - (gVh @ _h(Vh)) @ Vh) / S.unsqueeze(-1))
        gA = extra if gA is None else gA + extra
    return gA


def _check_driver(driver):
    # torch's CPU svd has one LAPACK path (gesdd) and refuses the choice
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on "
                           f"CUDA inputs with cuSOLVER backend; got driver={driver!r} for a CPU "
                           "tensor.")


@linalg_op
def svd(A, full_matrices=True, *, driver=None, out=None):
    """Singular value decomposition (U, S, Vh) with A = U diag(S) Vh."""
    _check_matrix(A, "linalg.svd")
    _check_driver(driver)
    return _out(_rt["linalg_svd"](*SVD.apply(A, full_matrices=full_matrices)), out,
                "linalg.svd")


@linalg_op
def svdvals(A, *, driver=None, out=None):
    """Singular values, in descending order."""
    _check_matrix(A, "linalg.svdvals")
    _check_driver(driver)
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
        inner = diag_embed(gL).to(V.dtype) if gL is not None else None
        if gV is not None:  # complex (Hermitian) A: the same with conjugate transposes
            F = _off_diag_inverse(L.unsqueeze(-2) - L.unsqueeze(-1))
            VhgV = _h(V) @ gV
            if VhgV.is_complex():
                _check_phase_free("linalg.eigh", "eigenvectors",
                                  np.imag(np.diagonal(VhgV._data, 0, -2, -1)))
            t = F * VhgV
            inner = t if inner is None else inner + t
        gA = V @ inner @ _h(V)
        return 0.5 * (gA + _h(gA))  # a symmetric (Hermitian) gradient, as torch returns


def _check_uplo(name, UPLO):
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"{name}: Expected UPLO argument to be 'L' or 'U', but got {UPLO}")


@linalg_op
def eigh(input, UPLO="L", *, out=None):
    """(eigenvalues ascending, eigenvectors as columns) of a symmetric (batch of) matrix."""
    A = input  # torch's parser name (see NOTE [linalg parameter names])
    _check_matrix(A, "linalg.eigh", square=True)
    _check_uplo("linalg.eigh", UPLO)
    return _out(_rt["linalg_eigh"](*Eigh.apply(A, UPLO=UPLO)), out, "linalg.eigh")


@linalg_op
def eigvalsh(input, UPLO="L", *, out=None):
    """Eigenvalues (ascending) of a symmetric (batch of) matrix."""
    A = input  # torch's parser name (see NOTE [linalg parameter names])
    _check_matrix(A, "linalg.eigvalsh", square=True)
    _check_uplo("linalg.eigvalsh", UPLO)
    return _out(Eigh.apply(A, UPLO=UPLO)[0], out, "linalg.eigvalsh")


class Pinv(Op):
    """Moore-Penrose pseudo-inverse P = A^+ via the SVD. Its gradient (for constant rank):
    gA = -P^T G P^T + (I - A P) G^T P P^T + P^T P G^T (I - P A) (^H for complex A)."""

    @staticmethod
    def forward(ctx, a, atol=None, rtol=None):
        m, n = a.shape[-2:]
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        smax = s.max(-1, initial=0.0)
        # one tolerance per matrix (atol/rtol tensors broadcast with the batch shape)
        tol = np.asarray(_tolerances(smax, m, n, a.dtype, atol, rtol))
        keep = s > tol[..., None]
        with np.errstate(divide="ignore"):
            s_inv = np.where(keep, 1 / np.where(keep, s, 1), 0).astype(a.dtype)
        p = np.swapaxes(vh, -1, -2).conj() * s_inv[..., None, :] @ np.swapaxes(u, -1, -2).conj()
        ctx.save_for_backward(a, p)
        return p

    @staticmethod
    def backward(ctx, grad):
        a, p = ctx.saved_tensors
        pt, gt = _h(p), _h(grad)  # conjugate transposes: the same formula serves complex A
        m, n = a.shape[-2], a.shape[-1]
        eye_m = _make(np.eye(m, dtype=a._data.dtype))
        eye_n = _make(np.eye(n, dtype=a._data.dtype))
        return (-(pt @ grad @ pt) + (eye_m - a @ p) @ gt @ (p @ pt)
                + (pt @ p) @ gt @ (eye_n - p @ a))


@linalg_op
def pinv(input, rcond=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """Pseudo-inverse; singular values <= max(atol, rtol * s_max) are treated as zero.
    ``rcond`` (torch's older positional form) is ``rtol``."""
    A = input  # torch's parser name (see NOTE [linalg parameter names])
    _check_matrix(A, "linalg.pinv")
    if rcond is not None:
        if atol is not None or rtol is not None:
            raise TypeError("linalg.pinv(): rcond is the older name of rtol; got rcond with "
                            "atol or rtol, expected either rcond or atol/rtol")
        rtol = rcond
    return _out(Pinv.apply(A, atol=atol, rtol=rtol), out, "linalg.pinv")


@linalg_op
def matrix_rank(input, tol=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """Number of singular values above max(atol, rtol * s_max), as int64. ``tol`` (torch's
    older positional form) is ``atol`` with ``rtol=0``."""
    A = input  # torch's parser name (see NOTE [linalg parameter names])
    _check_matrix(A, "linalg.matrix_rank")
    if tol is not None:
        atol, rtol = tol, 0.0
    a = A._data
    s = np.abs(np.linalg.eigvalsh(a)) if hermitian else np.linalg.svd(a, compute_uv=False)
    smax = s.max(-1, initial=0.0)
    tol_v = _tolerances(smax, a.shape[-2], a.shape[-1], a.dtype, atol, rtol)
    return _out(_make((s > np.asarray(tol_v)[..., None]).sum(-1).astype(np.int64)), out,
                "linalg.matrix_rank")


@linalg_op
def matrix_power(input, n, *, out=None):
    """A multiplied by itself n times (n < 0 uses the inverse; n == 0 gives the identity)."""
    A = input  # torch's parser name (see NOTE [linalg parameter names])
    if not isinstance(n, (int, np.integer)):
        raise TypeError(f"linalg.matrix_power(): argument 'n' must be int, not "
                        f"{type(n).__name__}")
    if n < 0:  # inv() needs a float or complex matrix
        _check_matrix(A, "linalg.matrix_power", square=True)
    else:  # products only: integer and half matrices too, as torch's
        _check_square_any(A, "linalg.matrix_power")
    if n == 0:  # the identity, still a function of A (its gradient is zero)
        return _out(_Identity.apply(A), out, "linalg.matrix_power")
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


def _check_square_any(A, name):
    """A (batch of) square matrix of any dtype but bool (torch has no bool matrix product)."""
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        if A.ndim < 2:
            raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if A.dtype == D.bool_:
        raise NotImplementedError(f"{name}: matrix products are not implemented for bool; got a "
                                  "bool matrix, expected a numeric one")


class _Identity(Op):
    """The identity matrix of A's shape and dtype, as a function of A (matrix_power(A, 0))."""

    @staticmethod
    def forward(ctx, a):
        return np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape).copy()

    @staticmethod
    def backward(ctx, grad):
        return grad * 0


class MatrixExp(Op):
    """exp(A) (scipy's Pade approximation). Its gradient is the top-right block of
    exp([[A^T, G], [0, A^T]]) (the Frechet derivative in direction G, transposed)."""

    holomorphic = True  # see NOTE [Complex gradients]

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


@linalg_op
def matrix_exp(input):
    """Matrix exponential of a (batch of) square matrix."""
    A = input  # torch's parser name (see NOTE [linalg parameter names])
    if A.dtype in (D.float16, D.bfloat16):  # computed in float32, as torch's CPU kernel does
        return matrix_exp(A.float()).to(A.dtype)
    _check_matrix(A, "linalg.matrix_exp", square=True)
    return MatrixExp.apply(A)


def _check_full_rank(name, a):
    """gels solves through a QR (LQ when m < n) factorization and fails where the triangular
    factor has an exact zero on its diagonal, as torch's gels does."""
    for _, m in (enumerate(a.reshape((-1,) + a.shape[-2:])) if a.size else ()):
        tall = m if m.shape[0] >= m.shape[1] else m.conj().T
        diag = np.abs(np.diagonal(np.linalg.qr(tall, mode="r")))
        if np.any(diag == 0):
            raise LinAlgError(f"{name}: The least squares solution could not be computed because "
                              "the input matrix does not have full rank (error code: "
                              f"{int(np.argmax(diag == 0)) + 1}).")


@linalg_op
def lstsq(input, b, rcond=None, *, driver=None):
    """Least-squares solution of AX = B: (solution, residuals, rank, singular_values).

    The solution is pinv(A) @ B (minimum norm, differentiable). Like torch's CPU drivers:
    residuals (squared column residual norms) only when m > n, A has full rank and the driver
    is not 'gelsy' (the default); rank unless driver='gels'; singular values for
    'gelsd'/'gelss'."""
    A, B = input, b  # torch's parser names (see NOTE [linalg parameter names])
    name = "torch.linalg.lstsq"
    _check_matrix(A, "linalg.lstsq")
    _check_pair("linalg.lstsq", A, B)
    if driver not in (None, "gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(f"{name}: parameter `driver` should be one of (gels, gelsy, gelsd, "
                           f"gelss); got {driver!r}")
    driver = driver or "gelsy"
    if driver == "gels":
        _check_full_rank(name, A._data)
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
