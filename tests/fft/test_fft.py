"""ember.fft against torch.fft: values and dtypes, gradients (complex convention), errors."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

C2C_1D = ["fft", "ifft"]
R2C_1D = ["rfft", "ihfft"]
C2R_1D = ["irfft", "hfft"]
C2C_ND = ["fft2", "ifft2", "fftn", "ifftn"]
R2C_ND = ["rfft2", "ihfft2", "rfftn", "ihfftn"]
C2R_ND = ["irfft2", "hfft2", "irfftn", "hfftn"]
ALL_1D = C2C_1D + R2C_1D + C2R_1D
ALL_ND = C2C_ND + R2C_ND + C2R_ND
REAL_ONLY = set(R2C_1D + R2C_ND)


def _input(rng, name, shape, dtype="float64"):
    """A test input the transform accepts: complex for the Hermitian-to-real ones."""
    a = rng.standard_normal(shape)
    if name not in REAL_ONLY and (name in C2R_1D + C2R_ND or "complex" in dtype):
        a = a + 1j * rng.standard_normal(shape)
        return a.astype("complex128" if dtype in ("float64", "complex128") else "complex64")
    return a.astype(dtype)


def _np(t):
    return t.detach().numpy()


def _torch_np(t):
    return t.detach().resolve_conj().numpy()


def _tol(dtype):
    return dict(rtol=1e-4, atol=1e-4) if dtype in ("float32", "complex64") else dict(
        rtol=1e-10, atol=1e-10)


# ---- values ----------------------------------------------------------------------------------

def _valid_1d():
    """(name, dtype) pairs the transform accepts (complex input to rfft/ihfft is an error)."""
    return [(name, dtype) for name in ALL_1D for dtype in ("float64", "complex128")
            if not (name in REAL_ONLY and dtype == "complex128")]


@pytest.mark.parity
@pytest.mark.parametrize("name,dtype", _valid_1d())
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize("n,dim", [(None, -1), (None, 0), (5, -1), (12, 1), (1, 0)])
def test_1d_transforms_match_torch(rng, name, dtype, norm, n, dim):
    torch = pytest.importorskip("torch")
    a = _input(rng, name, (4, 7), dtype)
    ours = getattr(ember.fft, name)(ember.tensor(a), n=n, dim=dim, norm=norm)
    ref = getattr(torch.fft, name)(torch.tensor(a), n=n, dim=dim, norm=norm)
    assert str(ours.dtype).split(".")[1] == str(ref.dtype).split(".")[1]
    np.testing.assert_allclose(_np(ours), _torch_np(ref), **_tol(dtype))


@pytest.mark.parity
@pytest.mark.parametrize("name", ALL_1D + ALL_ND)
@pytest.mark.parametrize("dtype", ["float32", "complex64"])
def test_single_precision_matches_torch(rng, name, dtype):
    torch = pytest.importorskip("torch")
    a = _input(rng, name, (3, 8), dtype)
    if name in REAL_ONLY:
        a = a.real.astype("float32")
    ours = getattr(ember.fft, name)(ember.tensor(a), norm="backward")
    ref = getattr(torch.fft, name)(torch.tensor(a), norm="backward")
    assert str(ours.dtype).split(".")[1] == str(ref.dtype).split(".")[1]
    np.testing.assert_allclose(_np(ours), _torch_np(ref), **_tol(dtype))


ND_CASES = [(None, None), ((3, 8), None), (None, (0, 2)), ((4, 2), (2, 0)), ((-1, 6), None)]
N_CASES = [((5,), None), (None, (-1,)), ((2, 3, 5), None)]  # 1 or 3 dims: fftn family only


@pytest.mark.parity
@pytest.mark.parametrize("name,s,dim",
                         [(n, s, d) for n in ALL_ND for s, d in ND_CASES]
                         + [(n, s, d) for n in ALL_ND if n.endswith("n") for s, d in N_CASES])
@pytest.mark.parametrize("norm", [None, "forward"])
def test_nd_transforms_match_torch(rng, name, norm, s, dim):
    torch = pytest.importorskip("torch")
    a = _input(rng, name, (3, 4, 6))
    kw = {} if dim is None else {"dim": dim}
    ours = getattr(ember.fft, name)(ember.tensor(a), s=s, norm=norm, **kw)
    ref = getattr(torch.fft, name)(torch.tensor(a), s=s, norm=norm, **kw)
    assert ours.shape == tuple(ref.shape)
    assert str(ours.dtype).split(".")[1] == str(ref.dtype).split(".")[1]
    np.testing.assert_allclose(_np(ours), _torch_np(ref), rtol=1e-10, atol=1e-10)


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("name", ["fft", "rfft", "ihfft", "irfft", "hfft", "fftn"])
def test_integer_and_bool_inputs_use_the_default_float(dtype, name):
    torch = pytest.importorskip("torch")
    a = (np.arange(6) % 3).astype(dtype)
    ours = getattr(ember.fft, name)(ember.tensor(a))
    ref = getattr(torch.fft, name)(torch.tensor(a))
    assert str(ours.dtype).split(".")[1] == str(ref.dtype).split(".")[1]
    np.testing.assert_allclose(_np(ours), _torch_np(ref), rtol=1e-5, atol=1e-5)


def test_integer_input_follows_set_default_dtype():
    prev = ember.get_default_dtype()
    ember.set_default_dtype(ember.float64)
    try:
        assert ember.fft.fft(ember.arange(4)).dtype == ember.complex128
        assert ember.fft.irfft(ember.arange(4)).dtype == ember.float64
    finally:
        ember.set_default_dtype(prev)


def test_known_values():
    y = ember.fft.fft(ember.tensor([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_allclose(_np(y), [10, -2 + 2j, -2, -2 - 2j], atol=1e-6)
    x = ember.fft.irfft(ember.tensor([10.0 + 0j, -2 + 2j, -2 + 0j]))
    np.testing.assert_allclose(_np(x), [1, 2, 3, 4], atol=1e-6)


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "ihfft"])
def test_roundtrip_of_each_pair(rng, name):
    inverse = {"fft": "ifft", "rfft": "irfft", "irfft": "rfft", "ihfft": "hfft"}[name]
    a = rng.standard_normal(10)
    x = ember.tensor(a)
    y = getattr(ember.fft, name)(x)
    n = {"rfft": 10, "ihfft": 10}.get(name)
    back = getattr(ember.fft, inverse)(y, n=n) if n else getattr(ember.fft, inverse)(y)
    if name == "irfft":  # rfft(irfft(X)) == X for a valid one-sided spectrum
        x2 = ember.fft.rfft(ember.tensor(a))
        np.testing.assert_allclose(_np(ember.fft.rfft(ember.fft.irfft(x2, n=10))), _np(x2),
                                   atol=1e-12)
    else:
        np.testing.assert_allclose(_np(back), a, atol=1e-12)


@pytest.mark.parity
def test_noncontiguous_input_matches_contiguous(rng):
    torch = pytest.importorskip("torch")
    a = rng.standard_normal((6, 5)) + 1j * rng.standard_normal((6, 5))
    x = ember.tensor(a).t()
    assert not x.is_contiguous()
    np.testing.assert_allclose(_np(ember.fft.fft(x)), _torch_np(torch.fft.fft(
        torch.tensor(a).t())), atol=1e-12)
    r = ember.tensor(a.real)[:, ::2]
    np.testing.assert_allclose(_np(ember.fft.rfft2(r)), _torch_np(torch.fft.rfft2(
        torch.tensor(a.real)[:, ::2])), atol=1e-12)


def test_empty_batch_gives_empty_result():
    # differs from torch (its CPU backend raises an MKL error): an empty batch is no error
    y = ember.fft.fft(ember.zeros(0, 4))
    assert y.shape == (0, 4) and y.dtype == ember.complex64
    assert ember.fft.rfft(ember.zeros(3, 0, 4)).shape == (3, 0, 3)


def test_fftn_over_no_dims_returns_complex_copy():
    x = ember.tensor([1.0, 2.0])
    y = ember.fft.fftn(x, dim=())
    assert y.dtype == ember.complex64
    np.testing.assert_allclose(_np(y), [1, 2])
    assert ember.fft.fftn(ember.tensor(3.0)).dtype == ember.complex64


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "fft2", "irfftn"])
def test_out_argument(rng, name):
    a = _input(rng, name, (3, 4))
    x = ember.tensor(a)
    expected = getattr(ember.fft, name)(x)
    out = ember.empty(0, dtype=expected.dtype)
    res = getattr(ember.fft, name)(x, out=out)
    assert res is out
    np.testing.assert_allclose(_np(out), _np(expected))


# ---- gradients -------------------------------------------------------------------------------

def _grad_input(rng, name, shape):
    return ember.tensor(_input(rng, name, shape), requires_grad=True)


@pytest.mark.parametrize("name", ALL_1D)
@pytest.mark.parametrize("norm,n", [("backward", None), ("ortho", 3), ("forward", 9)])
def test_1d_gradcheck(rng, name, norm, n):
    x = _grad_input(rng, name, (2, 6))
    fn = getattr(ember.fft, name)
    assert gradcheck(lambda t: fn(t, n=n, norm=norm), (x,))


@pytest.mark.parametrize("name", C2C_1D + C2R_1D)
def test_1d_gradcheck_real_input_of_complex_transform(rng, name):
    x = ember.tensor(rng.standard_normal((2, 5)), requires_grad=True)
    assert gradcheck(lambda t: getattr(ember.fft, name)(t), (x,))


@pytest.mark.parametrize("name", C2C_1D)
def test_1d_gradcheck_complex_input(rng, name):
    x = ember.tensor(_input(rng, name, (2, 5), "complex128"), requires_grad=True)
    assert gradcheck(lambda t: getattr(ember.fft, name)(t, n=7), (x,))


@pytest.mark.parametrize("name", ALL_ND)
@pytest.mark.parametrize("s", [None, (3, 5), (2, 7)])
def test_nd_gradcheck(rng, name, s):
    x = _grad_input(rng, name, (2, 3, 4))
    assert gradcheck(lambda t: getattr(ember.fft, name)(t, s=s, norm="ortho"), (x,))


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "hfft", "ihfft", "rfftn", "irfftn"])
def test_gradgradcheck(rng, name):
    x = _grad_input(rng, name, (2, 5))
    assert gradgradcheck(lambda t: getattr(ember.fft, name)(t), (x,))


@pytest.mark.parity
@pytest.mark.parametrize("name", ALL_1D + ALL_ND)
def test_gradients_match_torch(rng, name):
    torch = pytest.importorskip("torch")
    a = _input(rng, name, (3, 4, 5))
    kw = {"n": 7} if name in ALL_1D else {"s": (5, 3)}
    ours_x = ember.tensor(a, requires_grad=True)
    ref_x = torch.tensor(a, requires_grad=True)
    ours = getattr(ember.fft, name)(ours_x, **kw)
    ref = getattr(torch.fft, name)(ref_x, **kw)
    shape = tuple(ref.shape)
    g = rng.standard_normal(shape)
    if ref.is_complex():
        g = g + 1j * rng.standard_normal(shape)
    (gx,) = ember.autograd.grad(ours, ours_x, ember.tensor(g))
    (rx,) = torch.autograd.grad(ref, ref_x, torch.tensor(g))
    np.testing.assert_allclose(_np(gx), _torch_np(rx), rtol=1e-10, atol=1e-10)


def test_rfft_gradient_of_sum_of_magnitudes_is_finite(rng):
    x = ember.tensor(rng.standard_normal(16), requires_grad=True)
    ember.fft.rfft(x).abs().sum().backward()
    assert x.grad.shape == (16,) and x.grad.dtype == ember.float64
    assert np.isfinite(_np(x.grad)).all()


# ---- errors ----------------------------------------------------------------------------------

X = np.zeros((4, 6))
XC = np.zeros((4, 6), dtype=np.complex64)

ERRORS = [
    ("fft", (X,), {"n": 0}, RuntimeError, r"Invalid number of data points \(0\)"),
    ("fft", (X,), {"n": -1}, RuntimeError, r"Invalid number of data points \(-1\)"),
    ("fft", (X,), {"dim": 2}, IndexError, r"Dimension out of range"),
    ("fft", (X,), {"dim": -3}, IndexError, r"Dimension out of range"),
    ("fft", (X,), {"norm": "bad"}, RuntimeError, r'Invalid normalization mode: "bad"'),
    ("fft", (np.array(1.0),), {}, IndexError, r"tensor has no dimensions"),
    ("fft", (np.zeros(0),), {}, RuntimeError, r"Invalid number of data points \(0\)"),
    ("fft", (X.astype(np.float16),), {}, RuntimeError, r"Unsupported dtype"),
    ("fft", (X,), {"n": 3.0}, TypeError, r"argument 'n' must be int"),
    ("fft", (X,), {"dim": 1.0}, TypeError, r"argument 'dim' must be int"),
    ("rfft", (XC,), {}, RuntimeError, r"rfft expects a real input tensor"),
    ("ihfft", (XC,), {}, RuntimeError, r"ihfft expects a real input tensor"),
    ("rfftn", (XC,), {}, RuntimeError, r"rfftn expects a real input tensor"),
    ("irfft", (XC[:, :1],), {}, RuntimeError, r"Invalid number of data points \(0\)"),
    ("irfft", (XC,), {"n": 0}, RuntimeError, r"Invalid number of data points \(0\)"),
    ("fft2", (np.zeros(3),), {}, IndexError, r"Dimension out of range"),
    ("fftn", (X,), {"s": (2, 3, 4)}, RuntimeError, r"Got shape with 3 values"),
    ("fftn", (X,), {"s": (2, 3), "dim": (0,)}, RuntimeError, r"must have the same length"),
    ("fftn", (X,), {"dim": (0, 0)}, RuntimeError, r"FFT dims must be unique"),
    ("fftn", (X,), {"s": (0, 2)}, RuntimeError, r"Invalid number of data points \(0\)"),
    ("rfftn", (X,), {"dim": ()}, RuntimeError, r"rfftn must transform at least one axis"),
    ("irfftn", (XC,), {"dim": ()}, RuntimeError, r"irfftn must transform at least one axis"),
]


@pytest.mark.parametrize("name,args,kwargs,exc,match", ERRORS,
                         ids=[f"{e[0]}-{i}" for i, e in enumerate(ERRORS)])
def test_errors(name, args, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        getattr(ember.fft, name)(*[ember.tensor(a) for a in args], **kwargs)


@pytest.mark.parity
@pytest.mark.parametrize("name,args,kwargs,exc,match", ERRORS,
                         ids=[f"{e[0]}-{i}" for i, e in enumerate(ERRORS)])
def test_error_types_match_torch(name, args, kwargs, exc, match):
    torch = pytest.importorskip("torch")
    with pytest.raises(exc):
        getattr(torch.fft, name)(*[torch.tensor(a) for a in args], **kwargs)


def test_non_tensor_input_is_a_type_error():
    with pytest.raises(TypeError, match=r"fft\(\): argument 'input' \(position 1\) must be "
                                        r"Tensor, not int"):
        ember.fft.fft(3)
