"""fftfreq, rfftfreq, fftshift, ifftshift against torch."""
from __future__ import annotations

import numpy as np
import pytest

import ember


@pytest.mark.parity
@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
@pytest.mark.parametrize("n", [0, 1, 2, 5, 8, 11])
@pytest.mark.parametrize("d", [1.0, 0.1, 3])
@pytest.mark.parametrize("dtype", [None, "float64", "float32"])
def test_freq_matches_torch(name, n, d, dtype):
    torch = pytest.importorskip("torch")
    ours = getattr(ember.fft, name)(n, d, dtype=getattr(ember, dtype) if dtype else None)
    ref = getattr(torch.fft, name)(n, d, dtype=getattr(torch, dtype) if dtype else None)
    assert str(ours.dtype).split(".")[1] == str(ref.dtype).split(".")[1]
    np.testing.assert_array_equal(ours.numpy(), ref.numpy())


def test_freq_keywords_out_and_requires_grad():
    f = ember.fft.fftfreq(4, d=0.5, requires_grad=True, device="cpu")
    assert f.requires_grad and f.is_leaf
    np.testing.assert_allclose(f.detach().numpy(), [0, 0.5, -1, -0.5])
    out = ember.empty(0, dtype=ember.float64)
    res = ember.fft.rfftfreq(4, out=out)
    assert res is out and out.dtype == ember.float64
    np.testing.assert_allclose(out.numpy(), [0, 0.25, 0.5])


@pytest.mark.parity
@pytest.mark.parametrize("call,exc,match", [
    (lambda F, t: F.fftfreq(5, dtype=t.int64), RuntimeError, "floating point or complex"),
    (lambda F, t: F.fftfreq(-1), RuntimeError, "negative dimension -1"),
    (lambda F, t: F.rfftfreq(2.5), TypeError, "must be int"),
])
def test_freq_errors(call, exc, match):
    torch = pytest.importorskip("torch")
    with pytest.raises(exc, match=match):
        call(ember.fft, ember)
    with pytest.raises(exc):
        call(torch.fft, torch)


@pytest.mark.parity
@pytest.mark.parametrize("name", ["fftshift", "ifftshift"])
@pytest.mark.parametrize("shape,dim", [((7,), None), ((4, 5), None), ((4, 5), 1),
                                       ((4, 5), -2), ((3, 4, 5), (0, 2))])
def test_shift_matches_torch(rng, name, shape, dim):
    torch = pytest.importorskip("torch")
    a = rng.standard_normal(shape)
    ours = getattr(ember.fft, name)(ember.tensor(a), dim=dim)
    ref = getattr(torch.fft, name)(torch.tensor(a), dim=dim)
    np.testing.assert_array_equal(ours.numpy(), ref.numpy())


@pytest.mark.parity
@pytest.mark.parametrize("shape,dim", [((3, 4), ()), ((), None)])
def test_shift_without_dims_is_an_error(shape, dim):
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match="`shifts` required"):
        ember.fft.fftshift(ember.zeros(shape), dim=dim)
    with pytest.raises(RuntimeError, match="`shifts` required"):
        torch.fft.fftshift(torch.zeros(shape), dim=dim)


def test_shift_keeps_integer_dtype_and_inverts():
    x = ember.arange(7, dtype=ember.int32)
    y = ember.fft.fftshift(x)
    assert y.dtype == ember.int32
    np.testing.assert_array_equal(y.numpy(), [4, 5, 6, 0, 1, 2, 3])
    np.testing.assert_array_equal(ember.fft.ifftshift(y).numpy(), x.numpy())


def test_shift_gradient():
    x = ember.tensor(np.arange(6.0), requires_grad=True)
    g = ember.tensor(np.arange(6.0) * 10)
    ember.fft.fftshift(x).backward(g)
    np.testing.assert_array_equal(x.grad.numpy(), [30, 40, 50, 0, 10, 20])


def test_fftshift_of_fftfreq_is_sorted():
    f = ember.fft.fftshift(ember.fft.fftfreq(9))
    assert (np.diff(f.numpy()) > 0).all()
