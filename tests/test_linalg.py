"""ember.linalg and the legacy top-level linear-algebra names, against NumPy/SciPy, finite
differences and (when installed) torch."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg

import ember
import ember.linalg as LA
from ember.autograd import gradcheck, gradgradcheck

INF = math.inf


def _t(a, grad=False):
    return ember.tensor(np.asarray(a), requires_grad=grad)


def _close(got, want, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(np.asarray(got.detach().numpy()), want, rtol=rtol, atol=atol)


def _spd(rng, *batch, n=3):
    a = rng.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _sym(x):
    """A symmetric matrix from any square x: keeps gradcheck's perturbations symmetric."""
    return x + x.mT


# ----------------------------------------------------------------------------- values
def test_inv_det_slogdet_logdet(rng):
    a = rng.standard_normal((2, 4, 4))
    _close(LA.inv(_t(a)), np.linalg.inv(a))
    _close(LA.det(_t(a)), np.linalg.det(a))
    sign, logabs = LA.slogdet(_t(a))
    rs, rl = np.linalg.slogdet(a)
    _close(sign, rs)
    _close(logabs, rl)
    with np.errstate(invalid="ignore"):
        _close(ember.logdet(_t(a)), np.where(rs > 0, rl, np.nan))
    _close(_t(a).inverse(), np.linalg.inv(a))
    _close(ember.det(_t(a)), np.linalg.det(a))
    _close(LA.det(_t(a[0]).t()), np.linalg.det(a[0].T))  # non-contiguous
    assert LA.det(ember.zeros(2, 0, 0)).tolist() == [1.0, 1.0]
    assert ember.logdet(ember.zeros(2, 2)).item() == -INF
    s = ember.slogdet(ember.zeros(2, 2))
    assert s.sign.item() == 0.0 and s.logabsdet.item() == -INF


def test_inv_ex_reports_singular_elements(rng):
    a = np.stack([rng.standard_normal((3, 3)), np.zeros((3, 3))])
    inverse, info = LA.inv_ex(_t(a))
    assert info.dtype == ember.int32 and info.tolist() == [0, 1]
    _close(inverse[0], np.linalg.inv(a[0]))
    with pytest.raises(LA.LinAlgError, match="Batch element 1"):
        LA.inv_ex(_t(a), check_errors=True)


@pytest.mark.parametrize("bshape", [(2, 4, 3), (4, 3), (3, 2, 4, 1), (2, 4), (4,)])
def test_solve_batched_broadcast_vector(rng, bshape):
    a = rng.standard_normal((2, 4, 4))
    b = rng.standard_normal(bshape)
    got = LA.solve(_t(a), _t(b))
    vector = b.ndim == 1 or b.shape == a.shape[:-1]
    if vector:
        want = np.linalg.solve(a, b[..., None])[..., 0]
    else:
        want = np.linalg.solve(a, b)
    _close(got, want, rtol=1e-9)


def test_solve_left_false_and_noncontiguous(rng):
    a, b = rng.standard_normal((3, 3)), rng.standard_normal((2, 3))
    x = LA.solve(_t(a), _t(b), left=False)
    _close(x @ _t(a), b, rtol=1e-9)
    _close(LA.solve(_t(a).t(), _t(b).t()), np.linalg.solve(a.T, b.T), rtol=1e-9)


def test_solve_ex_and_solve_triangular(rng):
    a = np.stack([np.eye(2), [[1.0, 2.0], [2.0, 4.0]]])
    res, info = LA.solve_ex(_t(a), ember.ones(2, dtype=ember.float64))
    assert info.tolist() == [0, 2] and np.isnan(res.numpy()).all()
    with pytest.raises(LA.LinAlgError):
        LA.solve_ex(_t(a), ember.ones(2, dtype=ember.float64), check_errors=True)
    res, info = LA.solve_ex(_t(a[0]), ember.ones(2, 1, dtype=ember.float64))
    assert info.item() == 0 and res.tolist() == [[1.0], [1.0]]
    t, b = np.triu(rng.standard_normal((2, 3, 3))) + 3 * np.eye(3), rng.standard_normal((3, 2))
    _close(LA.solve_triangular(_t(t), _t(b), upper=True), np.linalg.solve(t, b), rtol=1e-9)
    got = LA.solve_triangular(_t(t), _t(b.T), upper=True, left=False, unitriangular=True)
    unit = t - np.einsum("...ii->...i", t)[..., None] * np.eye(3) + np.eye(3)
    _close(got @ _t(unit), np.broadcast_to(b.T, (2, 2, 3)), rtol=1e-9)


def test_cholesky_lower_upper_and_ex(rng):
    s = _spd(rng, 2)
    L = LA.cholesky(_t(s))
    _close(L, np.linalg.cholesky(s))
    U = LA.cholesky(_t(s), upper=True)
    _close(U.mT @ U, s, rtol=1e-9)
    _close(ember.cholesky(_t(s)), np.linalg.cholesky(s))
    L2, info = LA.cholesky_ex(_t(s))
    assert info.tolist() == [0, 0]
    _close(L2, np.linalg.cholesky(s))
    bad = np.array([[1.0, 2.0], [2.0, 1.0]])
    L3, info = LA.cholesky_ex(_t(bad))
    assert info.item() == 2
    _close(L3, [[1.0, 0.0], [2.0, -3.0]])  # the partial factor LAPACK left


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr(rng, shape, mode):
    a = rng.standard_normal(shape)
    Q, R = LA.qr(_t(a), mode)
    if mode == "r":
        assert Q.shape == (0,)
        _close(R, np.linalg.qr(a, mode="r"))
        return
    _close(Q @ R, a, rtol=1e-9)
    k = Q.shape[-1]
    _close(Q.mT @ Q, np.broadcast_to(np.eye(k), Q.shape[:-2] + (k, k)), atol=1e-12)
    assert np.allclose(np.tril(R.numpy(), -1), 0)
    q2, r2 = ember.qr(_t(a), some=mode == "reduced")
    _close(q2, Q.numpy())


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
def test_svd_and_svdvals(rng, shape):
    a = rng.standard_normal(shape)
    U, S, Vh = LA.svd(_t(a), full_matrices=False)
    _close(S, np.linalg.svd(a, compute_uv=False))
    _close((U * S.unsqueeze(-2)) @ Vh, a, rtol=1e-9)
    U, S, Vh = LA.svd(_t(a))
    assert U.shape[-1] == shape[-2] and Vh.shape[-2] == shape[-1]
    _close(LA.svdvals(_t(a).mT), np.linalg.svd(np.swapaxes(a, -1, -2), compute_uv=False))
    u, s, v = ember.svd(_t(a))
    _close((u * s.unsqueeze(-2)) @ v.mT, a, rtol=1e-9)
    u, s, v = ember.svd(_t(a), compute_uv=False)
    assert not u.numpy().any() and u.shape[-1] == shape[-2] and v.shape[-1] == shape[-1]


def test_eigh_eigvalsh(rng):
    s = _spd(rng, 2, n=4)
    w, v = LA.eigh(_t(s))
    _close(w, np.linalg.eigvalsh(s), rtol=1e-9)
    _close(v @ ember.diag_embed(w) @ v.mT, s, rtol=1e-9)
    a = rng.standard_normal((3, 3))
    _close(LA.eigvalsh(_t(a), "U"), np.linalg.eigvalsh(a, "U"), rtol=1e-9)
    _close(LA.eigvalsh(_t(a)), np.linalg.eigvalsh(a, "L"), rtol=1e-9)


def test_pinv_rank_power_exp(rng):
    low = rng.standard_normal((4, 2)) @ rng.standard_normal((2, 5))
    _close(LA.pinv(_t(low)), np.linalg.pinv(low), rtol=1e-8, atol=1e-10)
    _close(ember.pinverse(_t(low)), np.linalg.pinv(low, rcond=1e-15), rtol=1e-8, atol=1e-10)
    assert LA.matrix_rank(_t(low)).item() == 2
    assert LA.matrix_rank(_t(low), atol=1e9).item() == 0
    assert LA.matrix_rank(ember.ones(2, 3, 3), hermitian=True).tolist() == [1, 1]
    a = rng.standard_normal((2, 3, 3))
    for n in (-3, -1, 0, 1, 2, 5):
        _close(LA.matrix_power(_t(a), n), np.linalg.matrix_power(a, n), rtol=1e-8)
    _close(_t(a).matrix_power(3), np.linalg.matrix_power(a, 3), rtol=1e-10)
    _close(LA.matrix_exp(_t(a)), scipy.linalg.expm(a), rtol=1e-10)
    _close(ember.matrix_exp(_t(a[0]).t()), scipy.linalg.expm(a[0].T), rtol=1e-10)


def test_lstsq(rng):
    a, b = rng.standard_normal((6, 3)), rng.standard_normal((6, 2))
    ref, res, rank, sv = np.linalg.lstsq(a, b, rcond=None)
    out = LA.lstsq(_t(a), _t(b))
    _close(out.solution, ref, rtol=1e-9)
    assert out.residuals.shape == (0,) and out.rank.item() == 3  # default driver: gelsy
    out = LA.lstsq(_t(a), _t(b), driver="gelsd")
    _close(out.residuals, res, rtol=1e-9)
    _close(out.singular_values, sv, rtol=1e-9)
    vec = LA.lstsq(_t(a), _t(b[:, 0])).solution
    _close(vec, ref[:, 0], rtol=1e-9)
    with pytest.raises(RuntimeError, match="should match other.size"):
        LA.lstsq(_t(a), _t(b[:4]))
    with pytest.raises(RuntimeError, match="driver"):
        LA.lstsq(_t(a), _t(b), driver="foo")


def test_cross_vecdot_multi_dot_diagonal(rng):
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((1, 3))
    _close(LA.cross(_t(a), _t(b)), np.cross(a, b))
    with pytest.raises(RuntimeError, match="must have length 3"):
        LA.cross(ember.ones(3, 2), ember.ones(3, 2))
    _close(LA.vecdot(_t(a), _t(b[0])), a @ b[0])
    mats = [rng.standard_normal(s) for s in [(3,), (3, 5), (5, 2), (2, 4)]]
    _close(LA.multi_dot([_t(m) for m in mats]), np.linalg.multi_dot(mats), rtol=1e-10)
    with pytest.raises(RuntimeError, match="expected at least 2 tensors but got 1"):
        LA.multi_dot([ember.zeros(3)])
    with pytest.raises(RuntimeError, match="first tensor must be 1D or 2D but got 3D"):
        LA.multi_dot([ember.zeros(3, 3, 3), ember.zeros(3, 2)])
    x = rng.standard_normal((2, 3, 4))
    _close(LA.diagonal(_t(x), offset=1), np.diagonal(x, 1, -2, -1))


# ----------------------------------------------------------------------------- norms
def _vector_norm_ref(x, ord, dims):
    a = np.abs(x)
    if ord == INF:
        return a.max(dims, keepdims=True)
    if ord == -INF:
        return a.min(dims, keepdims=True)
    if ord == 0:
        return (x != 0).sum(dims, keepdims=True).astype(x.dtype)
    return (a ** ord).sum(dims, keepdims=True) ** (1 / ord)


@pytest.mark.parametrize("ord", [2, 1, 0, 3, 0.5, -1, INF, -INF])
@pytest.mark.parametrize("dim", [None, 1, (0, 2), -1])
def test_vector_norm_matches_numpy(rng, ord, dim):
    x = rng.standard_normal((3, 4, 5))
    dims = None if dim is None else tuple(d % 3 for d in np.atleast_1d(dim))
    _close(LA.vector_norm(_t(x), ord, dim, keepdim=True), _vector_norm_ref(x, ord, dims),
           rtol=1e-9)
    _close(LA.vector_norm(_t(x).transpose(0, 2), ord, dim),
           _vector_norm_ref(x.transpose(2, 1, 0), ord, dims).squeeze(dims), rtol=1e-9)


@pytest.mark.parametrize("ord", ["fro", "nuc", 2, -2, 1, -1, INF, -INF])
def test_matrix_norm_matches_numpy(rng, ord):
    x = rng.standard_normal((2, 3, 4))
    want = np.stack([np.linalg.norm(m, ord) for m in x])
    _close(LA.matrix_norm(_t(x), ord), want, rtol=1e-9)
    want_t = np.stack([np.linalg.norm(m.T, ord) for m in x])
    _close(LA.matrix_norm(_t(x), ord, dim=(2, 1)), want_t, rtol=1e-9)
    assert LA.matrix_norm(_t(x), ord, keepdim=True).shape == (2, 1, 1)
    _close(LA.norm(_t(x[0]), ord), np.linalg.norm(x[0], ord), rtol=1e-9)


def test_norm_dispatch_and_legacy_norm(rng):
    x = rng.standard_normal((2, 3, 4))
    _close(LA.norm(_t(x)), np.linalg.norm(x.ravel()))
    _close(LA.norm(_t(x), dim=(0, 2)), np.sqrt((x ** 2).sum((0, 2))))
    _close(LA.norm(_t(x[0]), 3, dim=1), np.linalg.norm(x[0], 3, axis=1))
    _close(ember.norm(_t(x)), np.linalg.norm(x.ravel()))
    _close(_t(x).norm(1, (0, 1)), np.abs(x).sum((0, 1)))  # a number p: vector norm
    _close(ember.norm(_t(x), "nuc", (0, 2)),
           [np.linalg.norm(x[:, j, :], "nuc") for j in range(3)], rtol=1e-9)
    _close(ember.dist(_t(x), _t(x[0]), 3), np.linalg.norm((x - x[0]).ravel(), 3))
    _close(_t(x[0]).t().norm(), np.linalg.norm(x[0]))


def test_norm_edge_cases():
    assert LA.vector_norm(ember.zeros(0)).item() == 0.0
    assert LA.vector_norm(ember.zeros(0, 3), INF, dim=1).shape == (0,)
    assert LA.vector_norm(ember.tensor(-3.0)).item() == 3.0
    assert LA.vector_norm(ember.tensor([1.0, 0.0, 2.0]), 0).item() == 2.0
    assert LA.matrix_norm(ember.zeros(0, 3), 2).item() == 0.0
    v = LA.vector_norm(ember.tensor([3.0, 4.0]), dtype=ember.float64)
    assert v.dtype == ember.float64 and v.item() == 5.0
    x = ember.zeros(3, requires_grad=True)
    LA.vector_norm(x).backward()  # the subgradient at 0 is 0, not NaN
    assert x.grad.tolist() == [0.0, 0.0, 0.0]


def test_vector_norm_negative_ord_gradient_is_zero_at_zero_entries():
    # a zero entry makes sum |x|^p infinite and the norm 0: torch's gradient is 0 everywhere
    # there, not the NaN of the plain formula (a sweep finding)
    x = _t([[0.0, 1.5, -2.0], [0.5, -1.0, 2.0]], grad=True)
    y = LA.vector_norm(x, -1, dim=1)
    _close(y, [0.0, 1 / (2 + 1 + 0.5)])
    (g,) = ember.autograd.grad(y.sum(), x)
    _close(g[0], [0.0, 0.0, 0.0])
    assert gradcheck(lambda t: LA.vector_norm(t, -1, dim=1), (_t(np.abs(x.detach().numpy()[1:])
                                                                + 0.1, grad=True),))


def test_vector_norm_ord_zero_counts_and_gives_no_gradient():
    for x in (_t([[0.0, 1.5], [2.0, -3.0]], grad=True), _t(2.5, grad=True)):
        y = LA.vector_norm(x, 0)
        assert y.requires_grad  # as torch's: in the graph, with no gradient to give
        assert y.item() == (3.0 if x.ndim else 1.0)
        assert ember.autograd.grad(y, x, allow_unused=True) == (None,)
        (y + x.sum()).backward()
        assert x.grad.tolist() == np.ones(x.shape).tolist()


def test_vector_norm_of_half_types_is_computed_in_float32():
    # 1200 squares of ~1 summed in bfloat16 stop growing (spacing 2 past 256): the norm of
    # ones would read ~22.6 instead of sqrt(1200) = 34.64 -> 34.5 in bfloat16
    for dt in (ember.bfloat16, ember.float16):
        got = LA.vector_norm(ember.ones(1200, dtype=dt))
        assert got.dtype == dt
        assert got.item() == ember.tensor(math.sqrt(1200.0)).to(dt).item()


def test_norm_errors():
    with pytest.raises(TypeError, match=r"vector_norm\(\): argument 'ord' must be a number, "
                                        "not str \\('fro'\\)"):
        LA.vector_norm(ember.ones(3), "fro")
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor as "
                                           "input. Got Long"):
        LA.vector_norm(ember.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="without narrowing to the specified dtype"):
        LA.vector_norm(ember.tensor([1.0]), dtype=ember.float16)
    with pytest.raises(RuntimeError, match="cannot compute the inf norm on an empty tensor"):
        LA.vector_norm(ember.zeros(0), INF)
    with pytest.raises(RuntimeError, match="cannot compute the -1 norm on an empty tensor"):
        LA.vector_norm(ember.zeros(0), -1)
    with pytest.raises(RuntimeError, match="input must be 1D or 2D. Got 3D"):
        LA.norm(ember.zeros(2, 2, 2), 2)
    with pytest.raises(RuntimeError, match="must have at least 2 dimensions"):
        LA.norm(ember.zeros(3), "fro")
    with pytest.raises(RuntimeError, match="dim must be a 2-tuple. Got 1"):
        LA.norm(ember.zeros(3, 4), "fro", dim=1)
    with pytest.raises(RuntimeError, match="Order 3 not supported"):
        LA.matrix_norm(ember.zeros(3, 3), 3)
    with pytest.raises(RuntimeError, match="dim must be a 2-tuple. Got 0 1 2"):
        ember.norm(ember.zeros(2, 3, 4), "nuc")


# ----------------------------------------------------------------------------- errors
def test_singular_raises_linalg_error():
    assert issubclass(LA.LinAlgError, RuntimeError)
    with pytest.raises(RuntimeError, match="The diagonal element 1 is zero"):
        LA.inv(ember.zeros(2, 2))
    with pytest.raises(LA.LinAlgError, match=r"\(Batch element 1\): The diagonal element 2"):
        LA.inv(ember.tensor([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 4.0]]]))
    with pytest.raises(LA.LinAlgError, match="input matrix is singular"):
        LA.solve(ember.zeros(2, 2), ember.zeros(2))
    with pytest.raises(LA.LinAlgError, match="leading minor of order 2 is not positive-definite"):
        LA.cholesky(ember.tensor([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(LA.LinAlgError, match=r"\(Batch element 1\).*order 1"):
        LA.cholesky(ember.tensor([[[1.0, 0.0], [0.0, 1.0]], [[-1.0, 0.0], [0.0, 1.0]]]))
    with pytest.raises(LA.LinAlgError):
        LA.matrix_power(ember.zeros(3, 3), -1)


@pytest.mark.parametrize("fn", [LA.inv, LA.det, LA.slogdet, LA.cholesky, LA.eigh,
                                LA.matrix_exp, lambda a: LA.matrix_power(a, 2),
                                lambda a: LA.solve(a, ember.zeros(2, 1))])
def test_non_square_names_shapes(fn):
    with pytest.raises(RuntimeError, match="must be batches of square matrices, but they are "
                                           "2 by 3 matrices"):
        fn(ember.zeros(2, 3))


def test_input_checks():
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        LA.inv(ember.zeros(3))
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor as "
                                           "input. Got Long"):
        LA.inv(ember.eye(2, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="same dtype, but found A of type Double and B of "
                                           "type Float"):
        LA.solve(ember.eye(2, dtype=ember.float64), ember.zeros(2))
    with pytest.raises(RuntimeError, match=r"Incompatible shapes of A and B .* \(2x2 and 3x1\)"):
        LA.solve(ember.eye(2), ember.zeros(3))
    with pytest.raises(RuntimeError, match="unrecognized mode 'x'"):
        LA.qr(ember.zeros(3, 3), "x")
    with pytest.raises(RuntimeError, match="Expected UPLO argument to be 'L' or 'U'"):
        LA.eigh(ember.eye(3), "X")
    with pytest.raises(RuntimeError, match="Low precision"):
        LA.inv(ember.eye(2, dtype=ember.float16))


def test_qr_mode_r_backward_raises(rng):
    x = _t(rng.standard_normal((3, 3)), grad=True)
    with pytest.raises(RuntimeError, match="mode='r'"):
        LA.qr(x, "r").R.sum().backward()


# ----------------------------------------------------------------------------- gradients
def _sign_fixed_svd(x):
    U, S, Vh = LA.svd(x, full_matrices=False)
    sign = U[:1].sign().detach()  # undo LAPACK's sign choice: a smooth function of x
    return (U * sign).sum(0) + S + (Vh * sign.mT).sum(1)


GRAD_CASES = {
    "inv": (LA.inv, [(3, 3)]),
    "det": (LA.det, [(2, 3, 3)]),
    "slogdet": (lambda a: LA.slogdet(a).logabsdet, [(3, 3)]),
    "logdet": (lambda a: ember.logdet(a @ a.mT + ember.eye(3, dtype=a.dtype)), [(3, 3)]),
    "solve": (LA.solve, [(3, 3), (3, 2)]),
    "solve_broadcast_vector": (LA.solve, [(2, 3, 3), (3,)]),
    "solve_left_false": (lambda a, b: LA.solve(a, b, left=False), [(3, 3), (2, 3)]),
    "solve_triangular": (lambda a, b: LA.solve_triangular(a + 3 * ember.eye(
        3, dtype=a.dtype), b, upper=False), [(3, 3), (3, 2)]),
    "cholesky": (lambda a: LA.cholesky(a @ a.mT + ember.eye(3, dtype=a.dtype)), [(3, 3)]),
    "cholesky_upper": (lambda a: LA.cholesky(_sym(a) + 6 * ember.eye(3, dtype=a.dtype),
                                             upper=True), [(3, 3)]),
    "qr_tall": (lambda a: LA.qr(a).Q * 2 + LA.qr(a).R.sum(), [(4, 3)]),
    "qr_wide": (lambda a: LA.qr(a).Q + LA.qr(a).R.sum(-1, keepdim=True)[:3], [(3, 5)]),
    "svd_tall": (_sign_fixed_svd, [(4, 3)]),
    "svd_wide": (_sign_fixed_svd, [(3, 4)]),
    "svdvals": (LA.svdvals, [(2, 4, 3)]),
    "eigh": (lambda a: LA.eigh(_sym(a)).eigenvectors.abs() + LA.eigh(_sym(a)).eigenvalues,
             [(3, 3)]),
    "eigvalsh": (lambda a: LA.eigvalsh(_sym(a), "U"), [(3, 3)]),
    "pinv": (LA.pinv, [(4, 3)]),
    "pinv_wide": (LA.pinv, [(2, 4)]),
    "matrix_power": (lambda a: LA.matrix_power(a, 3), [(3, 3)]),
    "matrix_power_neg": (lambda a: LA.matrix_power(a, -2), [(3, 3)]),
    "matrix_exp": (LA.matrix_exp, [(3, 3)]),
    "lstsq": (lambda a, b: LA.lstsq(a, b).solution, [(4, 3), (4, 2)]),
    "vector_norm_2": (lambda a: LA.vector_norm(a, 2, 1), [(3, 4)]),
    "vector_norm_3": (lambda a: LA.vector_norm(a, 3), [(3, 4)]),
    "vector_norm_1.5": (lambda a: LA.vector_norm(a, 1.5, (0, 1), True), [(3, 4)]),
    "vector_norm_inf": (lambda a: LA.vector_norm(a, INF, 0), [(3, 4)]),
    "matrix_norm_nuc": (lambda a: LA.matrix_norm(a, "nuc"), [(3, 4)]),
    "matrix_norm_2": (lambda a: LA.matrix_norm(a, 2), [(3, 4)]),
    "matrix_norm_1": (lambda a: LA.matrix_norm(a, -1), [(3, 4)]),
    "multi_dot": (lambda a, b, c: LA.multi_dot([a, b, c]), [(4, 3), (3, 3), (3, 2)]),
    "cross": (LA.cross, [(2, 3), (2, 3)]),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradcheck(rng, name):
    fn, shapes = GRAD_CASES[name]
    inputs = [_t(rng.standard_normal(s), grad=True) for s in shapes]
    assert gradcheck(fn, inputs)


@pytest.mark.parametrize("name", ["inv", "det", "solve", "cholesky", "qr_tall", "svd_tall",
                                  "eigh", "pinv", "matrix_exp", "vector_norm_2"])
def test_gradgradcheck(rng, name):
    fn, shapes = GRAD_CASES[name]
    inputs = [_t(rng.standard_normal(s), grad=True) for s in shapes]
    assert gradgradcheck(fn, inputs)


def test_det_gradient_of_singular_matrix_is_adjugate():
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 5.0]])  # rank 2
    x = _t(a, grad=True)
    LA.det(x).backward()
    adj_t = np.array([[np.linalg.det(np.delete(np.delete(a, i, 0), j, 1)) * (-1) ** (i + j)
                       for j in range(3)] for i in range(3)])  # the cofactor matrix
    _close(x.grad, adj_t, atol=1e-9)
    assert gradcheck(LA.det, (_t(a, grad=True),))


def test_symmetric_inputs_get_symmetric_gradients(rng):
    s = _t(_spd(rng), grad=True)
    (LA.cholesky(s) * _t(rng.standard_normal((3, 3)))).sum().backward()
    _close(s.grad, s.grad.numpy().T)
    s.grad = None
    (LA.eigh(s).eigenvectors.abs() * _t(rng.standard_normal((3, 3)))).sum().backward()
    _close(s.grad, s.grad.numpy().T)


# ----------------------------------------------------------------------------- torch parity
@pytest.mark.parity
def test_decompositions_match_torch(rng):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    a = rng.standard_normal((5, 3))
    for mode in ("reduced", "complete"):
        q1, r1 = LA.qr(_t(a), mode)
        q2, r2 = torch.linalg.qr(torch.tensor(a), mode)
        _close(q1, q2.numpy(), rtol=1e-9)
        _close(r1, r2.numpy(), rtol=1e-9)
    s = _spd(rng)
    cases = [
        lambda m, x: m.linalg.cholesky(x),
        lambda m, x: m.linalg.eigh(x).eigenvectors.abs(),
        lambda m, x: m.linalg.eigvalsh(x),
        lambda m, x: m.linalg.inv(x),
        lambda m, x: m.linalg.slogdet(x).logabsdet,
        lambda m, x: m.linalg.pinv(x[:, :2]),
        lambda m, x: m.linalg.svdvals(x),
        lambda m, x: m.linalg.matrix_norm(x, "nuc"),
        lambda m, x: m.linalg.matrix_exp(x / 4),
    ]
    for f in cases:
        xe, xt = _t(s, grad=True), torch.tensor(s, requires_grad=True)
        ye, yt = f(ember, xe), f(torch, xt)
        _close(ye, yt.detach().numpy(), rtol=1e-8, atol=1e-10)
        w = rng.standard_normal(tuple(yt.shape))
        (ye * _t(w)).sum().backward()
        (yt * torch.tensor(w)).sum().backward()
        _close(xe.grad, xt.grad.numpy(), rtol=1e-7, atol=1e-9)


@pytest.mark.parity
def test_error_types_match_torch():
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    cases = [
        (lambda m: m.linalg.inv(m.zeros(2, 2)), RuntimeError),
        (lambda m: m.linalg.inv(m.zeros(2, 3)), RuntimeError),
        (lambda m: m.linalg.cholesky(m.tensor([[1.0, 2.0], [2.0, 1.0]])), RuntimeError),
        (lambda m: m.linalg.vector_norm(m.tensor([1, 2])), RuntimeError),
        (lambda m: m.linalg.multi_dot([m.zeros(3)]), RuntimeError),
    ]
    for f, kind in cases:
        with pytest.raises(kind) as ours:
            f(ember)
        with pytest.raises(kind) as theirs:
            f(torch)
        assert isinstance(ours.value, RuntimeError) == isinstance(theirs.value, RuntimeError)
