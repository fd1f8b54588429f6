"""Complex dtypes end to end: creation, promotion, printing, views, arithmetic, autograd
(torch's conjugate-Wirtinger convention), linalg, serialization, interop."""
import warnings

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def _c(rng, *shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _ct(rng, *shape):
    return ember.tensor(_c(rng, *shape), requires_grad=True)


def _rt(rng, *shape):
    return ember.tensor(rng.standard_normal(shape), requires_grad=True)


# ----------------------------------------------------------------------------- dtypes, creation
def test_dtypes_and_aliases():
    assert ember.cfloat is ember.complex64 and ember.cdouble is ember.complex128
    assert ember.complex64.is_complex and not ember.float32.is_complex
    assert not ember.complex64.is_floating_point
    assert ember.complex64.to_real() is ember.float32
    assert ember.complex128.to_real() is ember.float64
    assert ember.float64.to_complex() is ember.complex128
    assert ember.float32.to_complex() is ember.complex64
    assert ember.float32.to_real() is ember.float32
    assert ember.complex64.itemsize == 8


def test_tensor_from_python_complex_infers_default_complex():
    t = ember.tensor([1 + 2j, 3])
    assert t.dtype is ember.complex64 and t.is_complex() and ember.is_complex(t)
    assert not t.is_floating_point()
    np.testing.assert_array_equal(t.numpy(), np.array([1 + 2j, 3], np.complex64))
    ember.set_default_dtype(ember.float64)
    try:
        assert ember.tensor(1j).dtype is ember.complex128
    finally:
        ember.set_default_dtype(ember.float32)
    assert ember.tensor(2j).item() == 2j and isinstance(ember.tensor(2j).item(), complex)


@pytest.mark.parametrize("dt", ["complex64", "complex128"])
def test_creation_functions_take_complex_dtypes(dt):
    d = getattr(ember, dt)
    for fn in (ember.zeros, ember.ones, ember.empty, ember.randn, ember.rand):
        t = fn(2, 3, dtype=d)
        assert t.dtype is d and tuple(t.shape) == (2, 3)
    np.testing.assert_array_equal(ember.ones(2, dtype=d).numpy(), [1, 1])
    np.testing.assert_array_equal(ember.full((2,), 1 + 2j, dtype=d).numpy(), [1 + 2j] * 2)
    x = ember.tensor([1j, 2], dtype=d)
    for like in (ember.zeros_like, ember.ones_like, ember.randn_like, ember.rand_like,
                 ember.empty_like):
        assert like(x).dtype is d
    assert ember.full((2,), 1j).dtype is ember.complex64


def test_rand_and_randn_complex_statistics():
    ember.manual_seed(0)
    u = ember.rand(20000, dtype=ember.complex128).numpy()
    assert 0 <= u.real.min() and u.real.max() < 1 and 0 <= u.imag.min() and u.imag.max() < 1
    z = ember.randn(20000, dtype=ember.complex128).numpy()
    # E|z|^2 = 1 with independent parts of variance 1/2 each, as torch's complex randn
    assert abs(np.mean(np.abs(z) ** 2) - 1) < 0.05
    assert abs(np.var(z.real) - 0.5) < 0.03 and abs(np.var(z.imag) - 0.5) < 0.03


def test_cfloat_cdouble_methods_and_to_complex_python_type():
    x = ember.tensor([1.0, 2.0])
    assert x.cfloat().dtype is ember.complex64 and x.cdouble().dtype is ember.complex128
    assert x.to(complex).dtype is ember.complex128  # Python complex is complex128, as in torch
    assert x.cdouble().type() == "ember.ComplexDoubleTensor"


def test_casting_complex_to_real_warns_and_keeps_real_part():
    z = ember.tensor([1 + 2j, -3 - 1j])
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        r = z.float()
    np.testing.assert_array_equal(r.numpy(), [1, -3])


def test_requires_grad_allowed_on_complex_not_on_int():
    assert ember.zeros(2, dtype=ember.complex64).requires_grad_().requires_grad
    with pytest.raises(RuntimeError, match="floating point and complex"):
        ember.zeros(2, dtype=ember.int64).requires_grad_()


# ----------------------------------------------------------------------------- promotion
@pytest.mark.parametrize("a,b,want", [
    ("float32", "complex64", "complex64"), ("float64", "complex64", "complex128"),
    ("int64", "complex64", "complex64"), ("complex64", "complex128", "complex128"),
    ("float16", "complex64", "complex64"), ("bool", "complex128", "complex128"),
    ("bfloat16", "complex64", "complex64")])
def test_promote_types_with_complex(a, b, want):
    assert ember.promote_types(getattr(ember, a), getattr(ember, b)) is getattr(ember, want)
    assert ember.promote_types(getattr(ember, b), getattr(ember, a)) is getattr(ember, want)


def test_can_cast_complex_to_real_is_false():
    assert not ember.can_cast(ember.complex64, ember.float64)
    assert ember.can_cast(ember.float64, ember.complex64)


@pytest.mark.parametrize("make,want", [
    (lambda m: m.ones(2) * 1j, "complex64"),
    (lambda m: m.ones(2, dtype=m.float64) * 1j, "complex128"),
    (lambda m: m.ones(2, dtype=m.float64) + m.ones(2, dtype=m.complex64), "complex128"),
    (lambda m: m.ones(2, dtype=m.int32) + 1j, "complex64"),
    (lambda m: m.tensor([1, 2]) / 1j, "complex64"),
    (lambda m: m.ones(2) + m.tensor(1j, dtype=m.complex128), "complex64"),
    (lambda m: m.ones(2, dtype=m.int64) + m.tensor(1j, dtype=m.complex128), "complex128"),
    (lambda m: m.tensor(1j) + m.ones(2, dtype=m.float64), "complex128"),
])
def test_result_dtype_of_mixed_operands(make, want):
    assert make(ember).dtype is getattr(ember, want)


@pytest.mark.parity
@pytest.mark.parametrize("i", range(8))
def test_result_dtype_matches_torch(i):
    torch = pytest.importorskip("torch")
    cases = [lambda m: m.ones(2) * 1j, lambda m: m.ones(2, dtype=m.float64) * (1 + 1j),
             lambda m: m.ones(2, dtype=m.float64) + m.ones(2, dtype=m.complex64),
             lambda m: m.ones(2, dtype=m.int32) + 1j, lambda m: m.tensor([1, 2]) / 1j,
             lambda m: m.ones(2) + m.tensor(1j, dtype=m.complex128),
             lambda m: m.ones(2, dtype=m.int64) + m.tensor(1j, dtype=m.complex128),
             lambda m: m.tensor(True) * m.tensor([1j], dtype=m.complex128)]
    assert str(cases[i](ember).dtype).split(".")[1] == str(cases[i](torch).dtype).split(".")[1]


# ----------------------------------------------------------------------------- printing
@pytest.mark.parity
@pytest.mark.parametrize("values,dtype", [
    ([1 + 2j, 3.5 - 4j], None), ([1 + 2j], None), (1j, None), ([1e10 + 1j, 1], None),
    ([0j, 0j], "complex128"), ([[1 + 2j, 3 - 4.5j], [0.25j, -1]], "complex128"),
    ([float("nan") + 1j, complex(1, float("inf"))], None)])
def test_repr_matches_torch(values, dtype):
    torch = pytest.importorskip("torch")
    ours = ember.tensor(values, dtype=getattr(ember, dtype) if dtype else None)
    ref = torch.tensor(values, dtype=getattr(torch, dtype) if dtype else None)
    assert repr(ours) == repr(ref).replace("torch.", "ember.")


def test_repr_with_grad_fn():
    z = ember.tensor([1 + 2j], requires_grad=True) * 2
    assert repr(z) == "tensor([2.+4.j], grad_fn=<MulBackward0>)"


# ----------------------------------------------------------------------------- views
def test_real_and_imag_are_views_that_write_through():
    z = ember.tensor([1 + 2j, 3 - 4j])
    re, im = z.real, z.imag
    np.testing.assert_array_equal(re.numpy(), [1, 3])
    np.testing.assert_array_equal(im.numpy(), [2, -4])
    assert re.dtype is ember.float32 and re._base is z
    re[0] = 7
    im.mul_(2)
    np.testing.assert_array_equal(z.numpy(), [7 + 4j, 3 - 8j])
    z.imag = ember.tensor([0.0, 1.0])
    z.real = 5
    np.testing.assert_array_equal(z.numpy(), [5 + 0j, 5 + 1j])
    assert z._version > 0


def test_real_of_real_is_itself_and_imag_of_real_raises():
    x = ember.tensor([1.0, 2.0])
    assert x.real is x and ember.real(x) is x
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex"):
        x.imag


def test_view_as_real_and_complex_share_memory():
    z = ember.tensor([[1 + 2j, 3 - 4j]], dtype=ember.complex128)
    r = ember.view_as_real(z)
    assert tuple(r.shape) == (1, 2, 2) and r.dtype is ember.float64
    np.testing.assert_array_equal(r.numpy(), [[[1, 2], [3, -4]]])
    r[0, 1, 1] = 9
    assert z[0, 1].item() == 3 + 9j
    back = ember.view_as_complex(r)
    assert back.dtype is ember.complex128 and tuple(back.shape) == (1, 2)
    back[0, 0] = 0
    assert z[0, 0].item() == 0


def test_view_as_real_on_a_noncontiguous_view():
    z = ember.tensor(np.arange(6).reshape(2, 3) * (1 + 1j)).t()
    r = ember.view_as_real(z)
    np.testing.assert_array_equal(r[..., 0].numpy(), z.numpy().real)
    np.testing.assert_array_equal(r[..., 1].numpy(), z.numpy().imag)


def test_view_as_real_and_complex_errors():
    with pytest.raises(RuntimeError, match="view_as_real is only supported for complex"):
        ember.view_as_real(ember.ones(2))
    with pytest.raises(RuntimeError, match="last dimension of size 2"):
        ember.view_as_complex(ember.ones(3))
    with pytest.raises(RuntimeError, match="stride 1"):
        ember.view_as_complex(ember.ones(2, 4).t())
    with pytest.raises(RuntimeError, match="float and double"):
        ember.view_as_complex(ember.ones(2, 2, dtype=ember.float16))


def test_conj_is_eager_and_flags():
    z = ember.tensor([1 + 2j])
    c = z.conj()
    assert c.item() == 1 - 2j and not c.is_conj() and not ember.is_conj(c)
    assert ember.resolve_conj(c) is c and ember.conj_physical(z).item() == 1 - 2j
    x = ember.tensor([1.0])
    assert x.conj() is x
    z.conj_physical_()
    assert z.item() == 1 - 2j


def test_abs_angle_polar_complex_sgn_values(rng):
    a = _c(rng, 5).astype(np.complex64)
    z = ember.tensor(a)
    np.testing.assert_allclose(z.abs().numpy(), np.abs(a), rtol=1e-6)
    assert z.abs().dtype is ember.float32 and z.angle().dtype is ember.float32
    np.testing.assert_allclose(z.angle().numpy(), np.angle(a), rtol=1e-6)
    np.testing.assert_allclose(z.sgn().numpy(), a / np.abs(a), rtol=1e-6)
    assert ember.tensor([0j]).sgn().item() == 0
    np.testing.assert_array_equal(ember.tensor([-2.0, 0.0, 3.0]).angle().numpy(),
                                  np.float32([np.pi, 0, 0]))
    r, th = ember.tensor([1.0, 2.0]), ember.tensor([0.0, 0.5])
    np.testing.assert_allclose(ember.polar(r, th).numpy(), [1, 2 * np.exp(0.5j)], rtol=1e-6)
    np.testing.assert_array_equal(ember.complex(r, th).numpy(), [1, 2 + 0.5j])
    with pytest.raises(RuntimeError, match="Float or Double"):
        ember.complex(ember.ones(1, dtype=ember.int64), ember.ones(1, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="scalar type"):
        ember.complex(ember.ones(1), ember.ones(1, dtype=ember.float64))


# ----------------------------------------------------------------------------- math, errors
@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "sinh",
                                  "cosh", "reciprocal", "neg", "sigmoid", "rsqrt", "square",
                                  "log1p", "expm1", "asin", "acos", "atan", "asinh", "acosh",
                                  "atanh", "log2", "log10"])
def test_unary_math_matches_numpy(rng, name):
    a = _c(rng, 6)
    np_fn = {"neg": np.negative, "sigmoid": lambda v: 1 / (1 + np.exp(-v)),
             "rsqrt": lambda v: 1 / np.sqrt(v), "asin": np.arcsin, "acos": np.arccos,
             "atan": np.arctan, "asinh": np.arcsinh, "acosh": np.arccosh,
             "atanh": np.arctanh}.get(name, getattr(np, name, None))
    got = getattr(ember.tensor(a), name)()
    assert got.dtype is ember.complex128
    np.testing.assert_allclose(got.numpy(), np_fn(a), rtol=1e-10)


@pytest.mark.parametrize("fn,match", [
    (lambda z: z < z, "lt: not implemented for complex"),
    (lambda z: z.ge(1), "ge: not implemented for complex"),
    (lambda z: z.floor(), "floor: not implemented for complex"),
    (lambda z: z.relu(), "relu: not implemented for complex"),
    (lambda z: z.sign(), "Please use torch.sgn"),
    (lambda z: z.max(), "max: not implemented for complex"),
    (lambda z: ember.max(z, 0), "max: not implemented for complex"),
    (lambda z: z.sort(), "sort: not implemented for complex"),
    (lambda z: z.argmax(), "argmax: not implemented for complex"),
    (lambda z: ember.maximum(z, z), "maximum: not implemented for complex"),
    (lambda z: z.clamp_(0, 1), "clamp_: not implemented for complex"),
    (lambda z: z % 2, "remainder: not implemented for complex"),
    (lambda z: z // 2, "floor_divide: not implemented for complex"),
    (lambda z: z.erf(), "erf: not implemented for complex"),
])
def test_ops_without_complex_support_raise(fn, match):
    with pytest.raises(NotImplementedError, match=match):
        fn(ember.tensor([1j, 2]))


def test_inplace_abs_of_complex_raises_as_torch():
    z = ember.tensor([3 + 4j])
    with pytest.raises(RuntimeError, match="In-place abs is not supported for complex"):
        z.abs_()
    with pytest.raises(RuntimeError, match="In-place abs is not supported for complex"):
        z.absolute_()
    assert z.item() == 3 + 4j
    x = ember.tensor([-2.0])
    assert x.abs_() is x and x.item() == 2.0


def test_eq_ne_compare_complex():
    z = ember.tensor([1j, 2])
    np.testing.assert_array_equal((z == ember.tensor([1j, 3])).numpy(), [True, False])
    np.testing.assert_array_equal((z != 2).numpy(), [True, False])


def test_backward_of_complex_scalar_needs_a_gradient():
    z = ember.tensor([1j], requires_grad=True)
    with pytest.raises(RuntimeError, match="only for real scalar outputs"):
        z.sum().backward()


def test_reductions_indexing_shape_ops(rng):
    a = _c(rng, 3, 4)
    z = ember.tensor(a)
    np.testing.assert_allclose(z.sum(0).numpy(), a.sum(0))
    np.testing.assert_allclose(z.mean().numpy(), a.mean())
    np.testing.assert_allclose(z.prod(1).numpy(), a.prod(1))
    np.testing.assert_allclose(z.cumsum(1).numpy(), a.cumsum(1))
    np.testing.assert_array_equal(z[1:, ::2].numpy(), a[1:, ::2])
    np.testing.assert_array_equal(z[[0, 2]].numpy(), a[[0, 2]])
    np.testing.assert_array_equal(z.t().reshape(-1).numpy(), a.T.reshape(-1))
    np.testing.assert_array_equal(ember.cat([z, z]).numpy(), np.concatenate([a, a]))
    np.testing.assert_array_equal(ember.stack([z, z], 1).numpy(), np.stack([a, a], 1))
    w = z.clone()
    w[0, 0] = 5 + 5j
    assert w[0, 0].item() == 5 + 5j


# ----------------------------------------------------------------------------- autograd
def _loss(y, mod, w):
    """A real loss of y: sum(Re w * Re y + Im w * Im y) (w complex, y real or complex)."""
    if y.is_complex():
        return (mod.tensor(w.real) * y.real + mod.tensor(w.imag) * y.imag).sum()
    return (mod.tensor(w.real) * y).sum()


_GRAD_CASES = {
    "add": (lambda m, a, b: a + b, "cc", ((3, 2), (2,))),
    "add_alpha": (lambda m, a, b: m.add(a, b, alpha=2), "cc", ((3, 2), (2,))),
    "sub": (lambda m, a, b: a - b, "cc", ((3, 2), (2,))),
    "mul": (lambda m, a, b: a * b, "cc", ((3, 2), (2,))),
    "mul_real": (lambda m, a, b: a * b, "cr", ((3, 2), (2,))),
    "mul_scalar": (lambda m, a: a * (2 - 1j), "r", ((3,),)),
    "div": (lambda m, a, b: a / b, "cc", ((3, 2), (2,))),
    "rdiv_real": (lambda m, a, b: b / a, "cr", ((3, 2), (2,))),
    "pow": (lambda m, a, b: a ** b, "cc", ((3, 2), (2,))),
    "pow_scalar": (lambda m, a: a ** 2.5, "c", ((3,),)),
    "rpow": (lambda m, a: 2 ** a, "c", ((3,),)),
    "reciprocal": (lambda m, a: a.reciprocal(), "c", ((4,),)),
    "exp": (lambda m, a: a.exp(), "c", ((4,),)),
    "log": (lambda m, a: a.log(), "c", ((4,),)),
    "sqrt": (lambda m, a: a.sqrt(), "c", ((4,),)),
    "sin": (lambda m, a: a.sin(), "c", ((4,),)),
    "cos": (lambda m, a: a.cos(), "c", ((4,),)),
    "tanh": (lambda m, a: a.tanh(), "c", ((4,),)),
    "sigmoid": (lambda m, a: m.sigmoid(a), "c", ((4,),)),
    "acosh": (lambda m, a: a.acosh(), "c", ((4,),)),
    "abs": (lambda m, a: a.abs(), "c", ((4,),)),
    "angle": (lambda m, a: a.angle(), "c", ((4,),)),
    "sgn": (lambda m, a: a.sgn(), "c", ((4,),)),
    "conj": (lambda m, a: a.conj() * a, "c", ((4,),)),
    "real": (lambda m, a: a.real * 2, "c", ((4,),)),
    "imag": (lambda m, a: a.imag * 2, "c", ((4,),)),
    "view_as_real": (lambda m, a: m.view_as_real(a), "c", ((3,),)),
    "view_as_complex": (lambda m, a: m.view_as_complex(a), "r", ((3, 2),)),
    "complex": (lambda m, a, b: m.complex(a, b), "rr", ((3, 2), (2,))),
    "to_complex": (lambda m, a: a.to(m.complex128) * 1j, "r", ((3,),)),
    "matmul": (lambda m, a, b: a @ b, "cc", ((3, 4), (4, 2))),
    "matvec": (lambda m, a, b: a @ b, "cc", ((3, 4), (4,))),
    "bmm": (lambda m, a, b: m.bmm(a, b), "cc", ((2, 3, 4), (2, 4, 2))),
    "einsum": (lambda m, a, b: m.einsum("ij,jk->ik", a, b), "cc", ((3, 4), (4, 2))),
    "sum": (lambda m, a: a.sum(0), "c", ((3, 4),)),
    "mean": (lambda m, a: a.mean(), "c", ((3, 4),)),
    "prod": (lambda m, a: a.prod(1), "c", ((3, 4),)),
    "cat": (lambda m, a, b: m.cat([a, b]), "cc", ((3, 4), (2, 4))),
    "index": (lambda m, a: a[[0, 2, 2], 1:], "c", ((3, 4),)),
    "where": (lambda m, a, b: m.where(a.real > 0, a, b), "cc", ((3, 4), (3, 4))),
    "inv": (lambda m, a: m.linalg.inv(a), "c", ((3, 3),)),
    "det": (lambda m, a: m.linalg.det(a), "c", ((3, 3),)),
    "solve": (lambda m, a, b: m.linalg.solve(a, b), "cc", ((3, 3), (3, 2))),
    "vector_norm": (lambda m, a: m.linalg.vector_norm(a), "c", ((3, 4),)),
    "var": (lambda m, a: a.var(0), "c", ((3, 4),)),
    "svdvals": (lambda m, a: m.linalg.svdvals(a), "c", ((4, 3),)),
    # |U|, |Vh| and U[:, :1] Vh[:1] do not depend on the arbitrary phase of each singular pair
    "svd_abs_U": (lambda m, a: m.linalg.svd(a, full_matrices=False)[0].abs(), "c", ((4, 3),)),
    "svd_abs_Vh": (lambda m, a: m.linalg.svd(a, full_matrices=False)[2].abs(), "c", ((3, 4),)),
    "svd_rank1": (lambda m, a: (lambda r: r[0][:, :1] @ r[2][:1])(
        m.linalg.svd(a, full_matrices=False)), "c", ((3, 3),)),
    "eigvalsh": (lambda m, a: m.linalg.eigvalsh(a @ a.mT.conj()), "c", ((3, 3),)),
    "eigh_abs_V": (lambda m, a: m.linalg.eigh(a @ a.mT.conj())[1].abs(), "c", ((3, 3),)),
    "matrix_norm_nuc": (lambda m, a: m.linalg.matrix_norm(a, "nuc"), "c", ((3, 4),)),
    "matrix_norm_fro": (lambda m, a: m.linalg.matrix_norm(a), "c", ((3, 4),)),
    "pinv": (lambda m, a: m.linalg.pinv(a), "c", ((4, 3),)),
    "solve_triangular": (lambda m, a, b: m.linalg.solve_triangular(
        a.triu() + 3 * m.eye(3), b, upper=True), "cc", ((3, 3), (3, 2))),
    "vector_norm_3": (lambda m, a: m.linalg.vector_norm(a, 3), "c", ((3, 4),)),
    # R's real diagonal makes complex QR unique, so Q and R themselves have gradients
    "qr_Q_tall": (lambda m, a: m.linalg.qr(a)[0], "c", ((4, 3),)),
    "qr_R_tall": (lambda m, a: m.linalg.qr(a)[1], "c", ((2, 4, 3),)),
    "qr_wide": (lambda m, a: (lambda q, r: q @ r[..., :2] + r.sum())(*m.linalg.qr(a)), "c",
                ((3, 5),)),
    "qr_complete_wide": (lambda m, a: m.linalg.qr(a, mode="complete")[0] * 2, "c", ((3, 4),)),
    "cholesky": (lambda m, a: m.linalg.cholesky(a @ a.mH + 3 * m.eye(3)), "c", ((3, 3),)),
    "cholesky_upper": (lambda m, a: m.linalg.cholesky(a @ a.mH + 3 * m.eye(3), upper=True),
                       "c", ((2, 3, 3),)),
    "cholesky_ex": (lambda m, a: m.linalg.cholesky_ex(a @ a.mH + 3 * m.eye(3)).L, "c",
                    ((3, 3),)),
    "cholesky_solve": (lambda m, a, b: m.cholesky_solve(b, a.tril(-1) + 3 * m.eye(3)), "cc",
                       ((3, 3), (3, 2))),
    "cholesky_inverse": (lambda m, a: m.cholesky_inverse(a.triu(1) + 3 * m.eye(3), upper=True),
                         "c", ((3, 3),)),
    "slogdet": (lambda m, a: (lambda s, la: s * la)(*m.linalg.slogdet(a)), "c", ((2, 3, 3),)),
    "slogdet_sign": (lambda m, a: m.linalg.slogdet(a)[0], "c", ((3, 3),)),
    "logdet": (lambda m, a: m.logdet(a), "c", ((3, 3),)),
    "lu_factor": (lambda m, a: m.linalg.lu_factor(a).LU, "c", ((3, 3),)),
    "lu_wide": (lambda m, a: (lambda p, lo, up: lo.sum() + up)(*m.linalg.lu(a)), "c", ((3, 4),)),
    "lu_tall": (lambda m, a: (lambda p, lo, up: lo + up.sum())(*m.linalg.lu(a)), "c", ((4, 3),)),
    "lu_solve": (lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b), "cc",
                 ((3, 3), (3, 2))),
    "lstsq": (lambda m, a, b: m.linalg.lstsq(a, b).solution, "cc", ((4, 3), (4, 2))),
    "householder_product": (lambda m, a, t: m.linalg.householder_product(a, t), "cc",
                            ((4, 3), (2,))),
    "ormqr_left_t": (lambda m, a, t, c: m.ormqr(a, t, c, transpose=True), "ccc",
                     ((4, 4), (4,), (4, 2))),
    "ormqr_right": (lambda m, a, t, c: m.ormqr(a, t, c, left=False), "ccc",
                    ((4, 4), (4,), (2, 4))),
    "vecdot": (lambda m, a, b: m.linalg.vecdot(a, b), "cc", ((3, 4), (4,))),
    "mH": (lambda m, a: a.mH @ a, "c", ((3, 2),)),
    "adjoint": (lambda m, a: m.adjoint(a) * 2, "c", ((2, 3, 2),)),
    "H": (lambda m, a: a.H * 2, "c", ((3, 2),)),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(_GRAD_CASES))
def test_values_and_gradients_match_torch(rng, name):
    torch = pytest.importorskip("torch")
    fn, kinds, shapes = _GRAD_CASES[name]
    arrays = [_c(rng, *s) if k == "c" else rng.standard_normal(s) for k, s in zip(kinds, shapes)]
    ours = [ember.tensor(a, requires_grad=True) for a in arrays]
    refs = [torch.tensor(a, requires_grad=True) for a in arrays]
    y, ty = fn(ember, *ours), fn(torch, *refs)
    assert str(y.dtype).split(".")[1] == str(ty.dtype).split(".")[1]
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().resolve_conj().numpy(), rtol=1e-10,
                               atol=1e-12)
    w = _c(rng, *ty.shape)
    _loss(y, ember, w).backward()
    _loss(ty, torch, w).backward()
    for o, r in zip(ours, refs):
        assert o.grad.dtype == o.dtype
        np.testing.assert_allclose(o.grad.numpy(), r.grad.resolve_conj().numpy(), rtol=1e-9,
                                   atol=1e-12)


@pytest.mark.parametrize("name", sorted(_GRAD_CASES))
def test_gradcheck_and_gradgradcheck_complex(rng, name):
    fn, kinds, shapes = _GRAD_CASES[name]
    args = tuple(_ct(rng, *s) if k == "c" else _rt(rng, *s) for k, s in zip(kinds, shapes))

    def f(*xs):
        return fn(ember, *xs)

    assert gradcheck(f, args)
    assert gradgradcheck(f, args)


def test_gradcheck_detects_a_wrong_complex_gradient():
    class Wrong(ember.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            return z * z

        @staticmethod
        def backward(ctx, grad):
            (z,) = ctx.saved_tensors
            return grad * 2 * z  # missing the conjugate: right only for real z

    z = ember.tensor([1 + 1j, 0.5 - 2j], dtype=ember.complex128, requires_grad=True)
    assert not gradcheck(Wrong.apply, (z,), raise_exception=False)
    x = ember.tensor([1.0, 0.5], dtype=ember.float64, requires_grad=True)
    assert gradcheck(Wrong.apply, (x,))


def test_real_leaf_receives_real_grad_from_complex_graph():
    x = ember.tensor([1.0, 2.0], dtype=ember.float64, requires_grad=True)
    y = (x * (1 + 2j)).abs().sum()
    y.backward()
    assert x.grad.dtype is ember.float64
    np.testing.assert_allclose(x.grad.numpy(), [np.sqrt(5)] * 2)


def test_complex_parameter_trains_with_sgd():
    target = ember.tensor([1 + 2j, -1j], dtype=ember.complex128)
    w = ember.zeros(2, dtype=ember.complex128, requires_grad=True)
    opt = ember.optim.SGD([w], lr=0.25)
    for _ in range(100):
        opt.zero_grad()
        ((w - target).abs() ** 2).sum().backward()
        opt.step()
    np.testing.assert_allclose(w.detach().numpy(), target.numpy(), atol=1e-8)


# ----------------------------------------------------------------------------- interop, saving
def test_numpy_and_dlpack_share_memory():
    z = ember.tensor([1j, 2], dtype=ember.complex128)
    a = z.numpy()
    a[0] = 3
    assert z[0].item() == 3
    back = ember.from_numpy(np.array([1 + 1j], np.complex64))
    assert back.dtype is ember.complex64
    d = ember.from_dlpack(z)
    np.testing.assert_array_equal(d.numpy(), z.numpy())
    assert complex(ember.tensor(1 + 1j)) == 1 + 1j


@pytest.mark.parity
def test_dlpack_exchange_with_torch():
    torch = pytest.importorskip("torch")
    z = ember.tensor([1j, 2 - 1j])
    t = torch.from_dlpack(z)
    assert t.dtype == torch.complex64 and t.tolist() == [1j, 2 - 1j]
    back = ember.from_dlpack(torch.tensor([3j], dtype=torch.complex128))
    assert back.dtype is ember.complex128 and back.item() == 3j


@pytest.mark.parity
def test_save_load_round_trip_with_torch(tmp_path):
    torch = pytest.importorskip("torch")
    z = ember.tensor([[1 + 2j, 3j]], dtype=ember.complex64)
    w = ember.tensor([1j, -2], dtype=ember.complex128)
    ember.save({"z": z, "w": w, "col": z[:, 1]}, tmp_path / "c.pt")
    got = torch.load(tmp_path / "c.pt", weights_only=True)
    assert got["z"].dtype == torch.complex64 and got["w"].dtype == torch.complex128
    np.testing.assert_array_equal(got["z"].numpy(), z.numpy())
    np.testing.assert_array_equal(got["col"].numpy(), z[:, 1].numpy())
    torch.save({"t": torch.tensor([1 + 1j, -2j], dtype=torch.complex128)}, tmp_path / "t.pt")
    back = ember.load(tmp_path / "t.pt")
    assert back["t"].dtype is ember.complex128
    np.testing.assert_array_equal(back["t"].numpy(), [1 + 1j, -2j])
    mine = ember.load(tmp_path / "c.pt")
    np.testing.assert_array_equal(mine["z"].numpy(), z.numpy())


def test_out_and_inplace_keep_complex_rules():
    z = ember.tensor([1j, 2])
    z.mul_(1j)
    np.testing.assert_allclose(z.numpy(), [-1, 2j])
    x = ember.ones(2)
    with pytest.raises(RuntimeError, match="can't be cast"):
        x.mul_(1j)
    out = ember.empty(0, dtype=ember.complex64)
    ember.add(z, 1, out=out)
    np.testing.assert_allclose(out.numpy(), [0, 1 + 2j])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.tensor([1.0]).to(ember.complex64)  # real -> complex: no warning


def test_slogdet_of_complex_has_complex_sign_and_real_logabsdet(rng):
    a = _c(rng, 3, 3)
    sign, logabs = ember.linalg.slogdet(ember.tensor(a))
    assert sign.dtype is ember.complex128 and logabs.dtype is ember.float64
    ref_sign, ref_log = np.linalg.slogdet(a)
    np.testing.assert_allclose(sign.numpy(), ref_sign)
    np.testing.assert_allclose(logabs.numpy(), ref_log)


# found by the reduction sweep's complex source (tests/parity/test_reduction_sweep.py)
def test_logsumexp_and_logcumsumexp_of_complex_keep_the_imaginary_part():
    z = np.array([[1 + 2j, 3 - 1j, -0.5 + 4j], [100 + 1j, 99 + 3j, 0j]])
    shift = z.real.max(1, keepdims=True)
    want = np.log(np.exp(z - shift).sum(1)) + shift[:, 0]
    got = ember.logsumexp(ember.tensor(z), 1)
    assert got.dtype == ember.complex128  # was cast to float32, dropping the imaginary part
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    want = np.log(np.cumsum(np.exp(z - shift), 1)) + shift
    np.testing.assert_allclose(ember.logcumsumexp(ember.tensor(z), 1).numpy(), want, rtol=1e-12)


def test_ordering_ops_report_a_bad_argument_before_the_complex_dtype():
    z = ember.tensor([[1 + 1j, 2j]])
    with pytest.raises(IndexError, match="Dimension out of range"):
        z.sort(5)
    with pytest.raises(TypeError, match="dim"):
        ember.median(z, (0, 1))
    with pytest.raises(NotImplementedError, match="sort: not implemented for complex"):
        z.sort(1)
    # argmax/argmin check the dtype before the dim's range, as torch
    with pytest.raises(NotImplementedError, match="argmax: not implemented for complex"):
        z.argmax(5)
    clamped = ember.tensor([[1 + 1j, 2j]])
    with pytest.raises(NotImplementedError):
        clamped.clamp_(0, 1)
    assert clamped.tolist() == [[1 + 1j, 2j]]  # the argument check worked on a copy
