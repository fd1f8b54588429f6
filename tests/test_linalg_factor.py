"""LU, LDL and Householder factorizations, solves from factors, cond, tensorinv/tensorsolve,
vander and the legacy top-level names: what the op table's samples do not reach (singular
inputs, info tensors, errors, warnings, torch's gradients for rectangular LU, empty inputs)."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.linalg

import ember
import ember.linalg as LA
from ember.autograd import gradcheck, gradgradcheck
from ember.ops.linalg import _common

SINGULAR = [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]


def _t(a, grad=False):
    return ember.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


def _close(got, want, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(np.asarray(got.detach().numpy()), want, rtol=rtol, atol=atol)


# ----------------------------------------------------------------------------- LU
def test_lu_reconstructs_rectangular_and_batched(rng):
    for shape in [(4, 4), (2, 5, 3), (3, 2, 6)]:
        a = rng.standard_normal(shape)
        P, L, U = LA.lu(_t(a))
        _close(P @ L @ U, a)
        k = min(shape[-2:])
        assert tuple(L.shape) == shape[:-1] + (k,) and tuple(U.shape) == shape[:-2] + (k,
                                                                                      shape[-1])
        LU, piv = LA.lu_factor(_t(a))
        assert piv.dtype == ember.int32 and tuple(piv.shape) == shape[:-2] + (k,)
        P2, L2, U2 = ember.lu_unpack(LU, piv)
        _close(P2, P.numpy())
        _close(L2, L.numpy())
        _close(U2, U.numpy())


def test_lu_factor_singular_raises_but_ex_and_lu_do_not():
    with pytest.raises(RuntimeError, match=r"linalg.lu_factor: U\[3,3\] is zero"):
        LA.lu_factor(_t(SINGULAR))
    LU, piv, info = LA.lu_factor_ex(_t(SINGULAR))
    assert info.dtype == ember.int32 and info.item() == 3
    with pytest.raises(RuntimeError, match=r"lu_factor_ex: U\[3,3\] is zero"):
        LA.lu_factor_ex(_t(SINGULAR), check_errors=True)
    batch = _t(np.stack([np.eye(3), SINGULAR]))
    with pytest.raises(RuntimeError, match=r"\(Batch element 1\): U\[3,3\]"):
        LA.lu_factor(batch)
    assert LA.lu_factor_ex(batch).info.tolist() == [0, 3]
    P, L, U = LA.lu(_t(SINGULAR))
    _close(P @ L @ U, np.array(SINGULAR))


def test_lu_errors():
    with pytest.raises(RuntimeError, match="LU without pivoting is not implemented"):
        LA.lu(_t(np.eye(2)), pivot=False)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        LA.lu_factor(_t([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="floating point"):
        LA.lu_factor(ember.eye(2, dtype=ember.int64))
    LU, piv = LA.lu_factor(_t(np.eye(3)))
    with pytest.raises(RuntimeError, match="lu_solve: The input tensor B must have at least 2"):
        LA.lu_solve(LU, piv, _t([1.0, 2.0, 3.0]))
    with pytest.raises(RuntimeError, match=r"expected B.shape\[-2\] == 3"):
        LA.lu_solve(LU, piv, _t(np.ones((2, 2))))
    with pytest.raises(RuntimeError, match="pivots must be an integer"):
        LA.lu_solve(LU, LU, _t(np.ones((3, 1))))


def test_lu_empty_matrices():
    LU, piv, info = LA.lu_factor_ex(ember.zeros(2, 0, 0, dtype=ember.float64))
    assert tuple(LU.shape) == (2, 0, 0) and tuple(piv.shape) == (2, 0)
    P, L, U = LA.lu(ember.zeros(3, 0, dtype=ember.float64))
    assert tuple(P.shape) == (3, 3) and tuple(L.shape) == (3, 0) and tuple(U.shape) == (0, 0)


def test_lu_solve_all_sides_and_out(rng):
    a, b = rng.standard_normal((2, 3, 3)) + 2 * np.eye(3), rng.standard_normal((2, 3, 4))
    LU, piv = LA.lu_factor(_t(a))
    _close(LA.lu_solve(LU, piv, _t(b)), np.linalg.solve(a, b))
    _close(LA.lu_solve(LU, piv, _t(b), adjoint=True), np.linalg.solve(a.mT, b))
    bt = np.ascontiguousarray(b.mT)
    _close(LA.lu_solve(LU, piv, _t(bt), left=False), bt @ np.linalg.inv(a))
    _close(LA.lu_solve(LU, piv, _t(bt), left=False, adjoint=True), bt @ np.linalg.inv(a.mT))
    out = ember.empty(0, dtype=ember.float64)
    assert LA.lu_solve(LU, piv, _t(b), out=out) is out
    _close(out, np.linalg.solve(a, b))


def test_legacy_lu_names_warn_once_and_match(rng):
    a, b = rng.standard_normal((3, 3)), rng.standard_normal((3, 2))
    _common._WARNED.discard("lu")
    with pytest.warns(UserWarning, match="torch.lu is deprecated"):
        LU, piv = ember.lu(_t(a))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the second call stays quiet
        LU2, piv2, info = _t(a).lu(get_infos=True)
    assert piv.tolist() == piv2.tolist() and info.item() == 0
    _common._WARNED.discard("lu_solve")
    with pytest.warns(UserWarning, match="lu_solve is deprecated"):
        _close(_t(b).lu_solve(LU, piv), np.linalg.solve(a, b))
    P, L, U = ember.lu_unpack(LU, piv, unpack_data=False)
    assert L.numel() == 0 and U.numel() == 0 and tuple(P.shape) == (3, 3)


@pytest.mark.parity
@pytest.mark.parametrize("shape", [(4, 2), (2, 4), (2, 3, 3)])
def test_lu_gradients_match_torch(rng, shape):
    torch = pytest.importorskip("torch")
    a = rng.standard_normal(shape)
    ours, theirs = _t(a, True), torch.tensor(a, requires_grad=True)
    outs, touts = LA.lu(ours), torch.linalg.lu(theirs)
    weights = [rng.standard_normal(tuple(o.shape)) for o in outs[1:]]
    sum((o * _t(w)).sum() for o, w in zip(outs[1:], weights)).backward()
    sum((o * torch.tensor(w)).sum() for o, w in zip(touts[1:], weights)).backward()
    _close(ours.grad, theirs.grad.numpy(), rtol=1e-9, atol=1e-10)


# ----------------------------------------------------------------------------- LDL
def test_ldl_factor_and_solve(rng):
    a = rng.standard_normal((2, 4, 4))
    a = a + a.mT
    LD, piv = LA.ldl_factor(_t(a))
    assert piv.dtype == ember.int32 and np.all(np.triu(LD.numpy(), 1) == 0)
    lu, d, perm = scipy.linalg.ldl(a[0], lower=True)
    _close(LD[0].diagonal(), np.diag(d), rtol=1e-8)  # same sytrf pivoting as SciPy's ldl
    b = rng.standard_normal((2, 4, 3))
    _close(LA.ldl_solve(LD, piv, _t(b)), np.linalg.solve(a, b), rtol=1e-8, atol=1e-10)


def test_ldl_singular_and_no_gradient():
    _, _, info = LA.ldl_factor_ex(ember.zeros(2, 2, dtype=ember.float64))
    assert info.item() == 1
    with pytest.raises(ember.linalg.LinAlgError, match=r"ldl_factor: D\[1,1\] is exactly zero"):
        LA.ldl_factor(ember.zeros(2, 2, dtype=ember.float64))
    a = _t([[2.0, 1.0], [1.0, 3.0]], grad=True)
    LD, _ = LA.ldl_factor(a)
    with pytest.raises(RuntimeError, match="ldl_factor: its derivative is not implemented"):
        LD.sum().backward()


# ----------------------------------------------------------------------------- Householder
def test_geqrf_householder_product_rebuild_qr(rng):
    a = rng.standard_normal((2, 5, 3))
    qr, tau = ember.geqrf(_t(a))
    Q = LA.householder_product(qr, tau)
    _close(Q @ qr.triu().narrow(-2, 0, 3), a)
    _close(ember.orgqr(qr, tau), Q.numpy())
    c = rng.standard_normal((2, 5, 2))
    full_q = ember.ormqr(qr, tau, _t(np.broadcast_to(np.eye(5), (2, 5, 5)).copy()))
    _close(full_q.narrow(-1, 0, 3), Q.numpy())
    _close(qr.ormqr(tau, _t(c), True, True), full_q.numpy().mT @ c)


def test_geqrf_has_no_gradient_and_householder_does(rng):
    a = _t(rng.standard_normal((3, 3)), grad=True)
    qr, tau = ember.geqrf(a)
    with pytest.raises(NotImplementedError, match="geqrf: its derivative is not implemented"):
        qr.sum().backward()
    qr, tau = ember.geqrf(_t(rng.standard_normal((4, 3))))
    assert gradgradcheck(LA.householder_product, [qr.clone().requires_grad_(),
                                                  tau.clone().requires_grad_()])


# ----------------------------------------------------------------------------- cholesky, triangular
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_and_inverse(rng, upper):
    a = rng.standard_normal((3, 3))
    spd = a @ a.T + 3 * np.eye(3)
    factor = np.linalg.cholesky(spd)
    factor = np.ascontiguousarray(factor.T) if upper else factor
    b = rng.standard_normal((2, 3, 2))
    _close(ember.cholesky_solve(_t(b), _t(factor), upper), np.linalg.solve(spd, b), rtol=1e-9)
    _close(_t(factor).cholesky_inverse(upper), np.linalg.inv(spd), rtol=1e-9)
    with pytest.raises(RuntimeError, match="cholesky_solve: B must have at least 2 dimensions"):
        ember.cholesky_solve(_t(b[0, :, 0]), _t(factor))


def test_triangular_solve_returns_solution_and_coefficient(rng):
    a, b = rng.standard_normal((3, 3)) + 3 * np.eye(3), rng.standard_normal((3, 2))
    _common._WARNED.add("triangular_solve")
    X, coeff = _t(b).triangular_solve(_t(a), upper=False, transpose=True)
    _close(X, np.linalg.solve(np.tril(a).T, b))
    _close(coeff, a)


# ----------------------------------------------------------------------------- cond, tensors
def test_cond_of_singular_and_empty_matrices():
    s = _t(SINGULAR)
    for p in ("fro", 1, -1, math.inf, -math.inf):
        assert LA.cond(s, p).item() == math.inf
    assert LA.cond(s).item() > 1e15
    assert LA.cond(ember.zeros(2, 3, 0, dtype=ember.float64)).tolist() == [0.0, 0.0]


@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", 1, -1, math.inf, -math.inf])
def test_cond_gradcheck(rng, p):
    a = rng.standard_normal((2, 3, 3)) + 2 * np.eye(3)
    assert gradcheck(lambda x: LA.cond(x, p), [_t(a, True)])


def test_tensorinv_tensorsolve_round_trip(rng):
    a = rng.standard_normal((6, 6)) + 3 * np.eye(6)
    A = _t(a.reshape(2, 3, 3, 2))
    inv = LA.tensorinv(A, ind=2)
    assert tuple(inv.shape) == (3, 2, 2, 3)
    _close(ember.tensordot(A, inv, 2), np.eye(6).reshape(2, 3, 2, 3), atol=1e-12)
    b = rng.standard_normal((2, 3))
    x = LA.tensorsolve(A, _t(b))
    _close(ember.tensordot(A, x, 2), b)
    with pytest.raises(RuntimeError, match=r"prod\(A.shape\[B.ndim:\]\) must equal"):
        LA.tensorsolve(_t(np.ones((2, 3, 5))), _t(np.ones((2, 3))))
    assert gradcheck(lambda m, y: LA.tensorsolve(m, y), [_t(a.reshape(2, 3, 6), True),
                                                           _t(b, True)])


def test_vander_integer_and_gradient(rng):
    v = LA.vander(ember.tensor([1, 2, 3]))
    assert v.dtype == ember.int64 and v.tolist() == [[1, 1, 1], [1, 2, 4], [1, 3, 9]]
    with pytest.raises(RuntimeError, match="vander: expected a floating point or integer"):
        LA.vander(ember.tensor([True, False]))
    with pytest.raises(TypeError):
        LA.vander(ember.tensor([1.0, 2.0]), 3)  # N is keyword-only, as in torch
    assert gradgradcheck(lambda x: LA.vander(x, N=4), [_t(rng.standard_normal(3), True)])


def test_legacy_norms():
    x = ember.ones(2, 3, 4, dtype=ember.float64)
    _close(ember.nuclear_norm(x), np.full(2, np.sqrt(12)))
    assert tuple(ember.nuclear_norm(x, (0, 2), keepdim=True).shape) == (1, 3, 1)
    _close(ember.frobenius_norm(x, (0, 1)), np.full(4, np.sqrt(6)))
    with pytest.raises(RuntimeError, match="frobenius_norm: expected at most 2 dims"):
        ember.frobenius_norm(x, (0, 1, 2))


# ----------------------------------------------------------------------------- low rank, lobpcg
def test_svd_lowrank_recovers_a_low_rank_matrix(rng):
    a = rng.standard_normal((7, 3)) @ rng.standard_normal((3, 5))
    for x in (a, np.ascontiguousarray(a.T)):
        U, S, V = ember.svd_lowrank(_t(x), q=4)
        assert tuple(U.shape) == (x.shape[0], 4) and tuple(V.shape) == (x.shape[1], 4)
        _close((U * S) @ V.mT, x, atol=1e-10)
        _close(S[:3], np.linalg.svd(x, compute_uv=False)[:3], rtol=1e-10)
    assert gradcheck(lambda x: ember.svd_lowrank(x, q=3)[1], [_t(a, True)])
    with pytest.raises(ValueError, match=r"q\(=6\) must not be greater than min\(m, n\)=5"):
        ember.svd_lowrank(_t(a))


def test_pca_lowrank_centers_columns(rng):
    a = rng.standard_normal((8, 3)) @ rng.standard_normal((3, 4)) + 5.0
    U, S, V = ember.pca_lowrank(_t(a))
    centered = a - a.mean(0)
    _close(S, np.linalg.svd(centered, compute_uv=False), atol=1e-9)
    _close((U * S) @ V.mT, centered, atol=1e-9)
    _, S_raw, _ = ember.pca_lowrank(_t(a), q=4, center=False)  # rank 4: exact
    _close(S_raw, np.linalg.svd(a, compute_uv=False), rtol=1e-8)


def test_lobpcg_eigenpairs_and_generalized_problem(rng):
    b = rng.standard_normal((2, 9, 9))
    a = b + b.mT
    E, X = ember.lobpcg(_t(a), k=2)
    _close(E, np.linalg.eigvalsh(a)[..., ::-1][..., :2])
    _close(_t(a) @ X, (X * E.unsqueeze(-2)).numpy(), atol=1e-10)
    E, _ = ember.lobpcg(_t(a), k=3, largest=False)
    _close(E, np.linalg.eigvalsh(a)[..., :3])
    c = rng.standard_normal((9, 9))
    B = c @ c.T + 9 * np.eye(9)
    E, X = ember.lobpcg(_t(a[0]), k=2, B=_t(B))
    _close(E, scipy.linalg.eigh(a[0], B, eigvals_only=True)[::-1][:2], rtol=1e-9)
    _close(_t(a[0]) @ X, (_t(B) @ X * E).numpy(), atol=1e-10)
    assert gradcheck(lambda x: ember.lobpcg(x, k=2, B=_t(B))[0], [_t(a[0], True)])
    with pytest.raises(ValueError, match="at least 3 x the number of requested eigenpairs"):
        ember.lobpcg(_t(a), k=4)


@pytest.mark.parity
def test_lobpcg_matches_torch(rng):
    torch = pytest.importorskip("torch")
    b = rng.standard_normal((12, 12))
    a = b + b.T
    ours, theirs = _t(a, True), torch.tensor(a, requires_grad=True)
    E, _ = ember.lobpcg(ours, k=3)
    tE, _ = torch.lobpcg(theirs, k=3)
    _close(E, tE.detach().numpy(), rtol=1e-7)
    E.sum().backward()
    tE.sum().backward()
    _close(ours.grad, theirs.grad.numpy(), rtol=1e-5, atol=1e-6)  # torch's iterates to tol


# ----------------------------------------------------------------------------- eig
def test_eig_matches_numpy_and_reconstructs(rng):
    a = rng.standard_normal((2, 4, 4))
    L, V = LA.eig(_t(a))
    assert L.dtype == ember.complex128 and V.dtype == ember.complex128
    w, v = np.linalg.eig(a)
    _close(L, w)
    _close(V, v)
    _close(V @ ember.diag_embed(L) @ LA.inv(V), a.astype(complex), atol=1e-10)
    assert LA.eigvals(ember.tensor(a[0].astype(np.float32))).dtype == ember.complex64
    _close(LA.eigvals(_t(a)), w)


def test_eig_rejects_nonfinite_and_phase_dependent_losses(rng):
    with pytest.raises(RuntimeError, match="linalg.eig: the input contains infinities or NaNs"):
        LA.eig(_t([[np.nan, 1.0], [0.0, 1.0]]))
    rotation = [[0.0, -2.0, 0.5], [2.0, 0.0, 0.1], [0.3, 0.2, 1.0]]  # complex eigenvalues
    L, V = LA.eig(_t(rotation, grad=True))
    with pytest.raises(RuntimeError, match="depends on the phase of the eigenvectors"):
        V.real.sum().backward()


@pytest.mark.parity
def test_eig_gradients_match_torch(rng):
    torch = pytest.importorskip("torch")
    a = rng.standard_normal((2, 3, 3))
    w1, w2 = rng.standard_normal((2, 3)), rng.standard_normal((2, 3, 3))
    ours, theirs = _t(a, True), torch.tensor(a, requires_grad=True)
    L, V = LA.eig(ours)
    tL, tV = torch.linalg.eig(theirs)
    loss = (L.real * _t(w1)).sum() + (L.imag ** 2).sum() + (V.abs() * _t(w2)).sum()
    tloss = (tL.real * torch.tensor(w1)).sum() + (tL.imag ** 2).sum() + \
        (tV.abs() * torch.tensor(w2)).sum()
    loss.backward()
    tloss.backward()
    _close(ours.grad, theirs.grad.numpy(), rtol=1e-8, atol=1e-10)
