"""ember.stft / ember.istft (and the Tensor methods) against torch."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

STFT_CASES = [
    dict(),
    dict(center=False),
    dict(win_length=10),
    dict(hop_length=7, normalized=True),
    dict(pad_mode="constant"),
    dict(pad_mode="replicate", hop_length=3),
    dict(center=False, win_length=9, align_to_window=True),
    dict(onesided=False),
]


def _np(t):
    return t.detach().numpy()


@pytest.mark.parity
@pytest.mark.parametrize("kw", STFT_CASES, ids=str)
@pytest.mark.parametrize("shape", [(50,), (2, 50)])
def test_stft_matches_torch(rng, kw, shape):
    torch = pytest.importorskip("torch")
    a = rng.standard_normal(shape)
    win = kw.get("win_length", 16)
    w = rng.uniform(0.5, 1.0, win)
    ours = ember.stft(ember.tensor(a), 16, window=ember.tensor(w), return_complex=True, **kw)
    ref = torch.stft(torch.tensor(a), 16, window=torch.tensor(w), return_complex=True, **kw)
    assert ours.shape == tuple(ref.shape) and ours.dtype == ember.complex128
    np.testing.assert_allclose(_np(ours), ref.numpy(), rtol=1e-10, atol=1e-10)


@pytest.mark.parity
def test_stft_defaults_method_and_real_view(rng):
    torch = pytest.importorskip("torch")
    a = rng.standard_normal(64).astype(np.float32)
    with pytest.warns(UserWarning, match="A window was not provided"):
        ours = ember.tensor(a).stft(12, return_complex=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = torch.tensor(a).stft(12, return_complex=True)
        ref_real = torch.stft(torch.tensor(a), 12, window=torch.ones(12), return_complex=False)
    assert ours.dtype == ember.complex64
    np.testing.assert_allclose(_np(ours), ref.numpy(), rtol=1e-4, atol=1e-4)
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        real = ember.stft(ember.tensor(a), 12, window=ember.ones(12), return_complex=False)
    assert real.shape == tuple(ref_real.shape) and real.dtype == ember.float32
    np.testing.assert_allclose(_np(real), ref_real.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parity
def test_stft_complex_input_is_two_sided(rng):
    torch = pytest.importorskip("torch")
    a = rng.standard_normal(40) + 1j * rng.standard_normal(40)
    w = np.hanning(8)
    ours = ember.stft(ember.tensor(a), 8, window=ember.tensor(w))
    ref = torch.stft(torch.tensor(a), 8, window=torch.tensor(w), return_complex=True)
    assert ours.shape == tuple(ref.shape) == (8, 21)
    np.testing.assert_allclose(_np(ours), ref.numpy(), rtol=1e-10, atol=1e-10)


def test_stft_gradcheck_input_and_window(rng):
    x = ember.tensor(rng.standard_normal(24), requires_grad=True)
    w = ember.tensor(rng.uniform(0.5, 1.0, 8), requires_grad=True)
    assert gradcheck(lambda x, w: ember.stft(x, 8, hop_length=3, window=w,
                                             return_complex=True), (x, w))
    assert gradgradcheck(lambda x: ember.stft(x, 8, window=ember.hann_window(8).double(),
                                              return_complex=True), (x,))


@pytest.mark.parity
@pytest.mark.parametrize("kw", [dict(), dict(hop_length=3), dict(win_length=12),
                                dict(normalized=True), dict(length=45), dict(length=70)],
                         ids=str)
def test_istft_matches_torch(rng, kw):
    torch = pytest.importorskip("torch")
    a = rng.standard_normal((2, 60))
    win = kw.get("win_length", 16)
    w = np.hanning(win + 1)[:win]
    stft_kw = {k: v for k, v in kw.items() if k != "length"}
    spec = torch.stft(torch.tensor(a), 16, window=torch.tensor(w), return_complex=True,
                      **stft_kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = torch.istft(spec, 16, window=torch.tensor(w), **kw)
        ours = ember.istft(ember.tensor(spec.numpy()), 16, window=ember.tensor(w), **kw)
    assert ours.shape == tuple(ref.shape) and ours.dtype == ember.float64
    np.testing.assert_allclose(_np(ours), ref.numpy(), rtol=1e-9, atol=1e-9)


def test_istft_inverts_stft(rng):
    a = rng.standard_normal(100)
    w = ember.hann_window(32, dtype=ember.float64)
    spec = ember.stft(ember.tensor(a), 32, hop_length=8, window=w, return_complex=True)
    back = spec.istft(32, hop_length=8, window=w, length=100)
    np.testing.assert_allclose(_np(back), a, atol=1e-12)


@pytest.mark.parity
def test_istft_two_sided_complex(rng):
    torch = pytest.importorskip("torch")
    a = rng.standard_normal(40) + 1j * rng.standard_normal(40)
    w = np.hanning(9)[:8]
    spec = torch.stft(torch.tensor(a), 8, window=torch.tensor(w), return_complex=True)
    ref = torch.istft(spec, 8, window=torch.tensor(w), return_complex=True)
    ours = ember.istft(ember.tensor(spec.numpy()), 8, window=ember.tensor(w),
                       return_complex=True)
    assert ours.dtype == ember.complex128
    np.testing.assert_allclose(_np(ours), ref.numpy(), atol=1e-10)


def test_istft_gradcheck(rng):
    a = rng.standard_normal((9, 6)) + 1j * rng.standard_normal((9, 6))
    spec = ember.tensor(a, requires_grad=True)
    w = ember.tensor(np.hanning(17)[:16] + 0.1, requires_grad=True)
    assert gradcheck(lambda s, w: ember.istft(s, 16, window=w), (spec, w))


@pytest.mark.parity
def test_stft_istft_gradients_match_torch(rng):
    torch = pytest.importorskip("torch")
    a = rng.standard_normal(40)
    w = np.hanning(10)
    ours_x, ref_x = ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    ours = ember.istft(ember.stft(ours_x, 10, hop_length=2, window=ember.tensor(w),
                                  return_complex=True).abs().pow(2) * 1.0 + 0j, 10,
                       hop_length=2, window=ember.tensor(w))
    ref = torch.istft(torch.stft(ref_x, 10, hop_length=2, window=torch.tensor(w),
                                 return_complex=True).abs().pow(2) * 1.0 + 0j, 10,
                      hop_length=2, window=torch.tensor(w))
    g = rng.standard_normal(tuple(ref.shape))
    ours.backward(ember.tensor(g))
    ref.backward(torch.tensor(g))
    np.testing.assert_allclose(_np(ours_x.grad), ref_x.grad.numpy(), rtol=1e-8, atol=1e-8)


X = np.zeros(100)
S = np.zeros((9, 26), np.complex128)
ERRORS = [
    ("stft", X, (16,), {}, RuntimeError, "requires the return_complex parameter"),
    ("stft", X, (0,), {"return_complex": True}, RuntimeError, "n_fft"),
    ("stft", X, (200,), {"center": False, "return_complex": True}, RuntimeError, "n_fft"),
    ("stft", X, (16,), {"hop_length": 0, "return_complex": True}, RuntimeError,
     "hop_length > 0"),
    ("stft", X, (16,), {"win_length": 20, "return_complex": True}, RuntimeError,
     "win_length <= n_fft"),
    ("stft", np.zeros((2, 3, 10)), (4,), {"return_complex": True}, RuntimeError,
     "1D or 2D tensor"),
    ("stft", X.astype(np.complex64), (16,), {"onesided": True}, RuntimeError,
     "Cannot have onesided output"),
    ("stft", X.astype(np.int64), (16,), {"return_complex": True}, RuntimeError,
     "floating point or complex"),
    ("stft", X, (16,), {"align_to_window": True, "return_complex": True}, RuntimeError,
     "align_to_window should only be set when center = false"),
    ("istft", S.real.copy(), (16,), {}, RuntimeError, "requires a complex-valued input"),
    ("istft", S, (15,), {}, RuntimeError, "match n_fft / 2 \\+ 1 when onesided=True"),
    ("istft", S, (16,), {"onesided": False}, RuntimeError, "match n_fft when onesided=False"),
    ("istft", S, (16,), {"hop_length": 20}, RuntimeError, "hop_length <= win_length"),
    ("istft", S[None, None], (16,), {}, RuntimeError, "dimensions"),
    ("istft", S[:, :0], (16,), {}, RuntimeError, "cannot be empty"),
    ("istft", S, (16,), {"return_complex": True}, RuntimeError,
     "Cannot have onesided output"),
    ("istft", S, (16,), {"center": False, "window": "hann"}, RuntimeError,
     "window overlap add min"),
]


def _args(mod, data, kw):
    kw = dict(kw)
    if kw.get("window") == "hann":
        kw["window"] = mod.hann_window(16, dtype=mod.float64)
    return mod.tensor(data), kw


@pytest.mark.parametrize("name,data,args,kw,exc,match", ERRORS,
                         ids=[f"{e[0]}-{i}" for i, e in enumerate(ERRORS)])
def test_errors(name, data, args, kw, exc, match):
    x, kw = _args(ember, data, kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(exc, match=match):
            getattr(ember, name)(x, *args, **kw)


@pytest.mark.parity
@pytest.mark.parametrize("name,data,args,kw,exc,match", ERRORS,
                         ids=[f"{e[0]}-{i}" for i, e in enumerate(ERRORS)])
def test_error_types_match_torch(name, data, args, kw, exc, match):
    torch = pytest.importorskip("torch")
    x, kw = _args(torch, data, kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(exc):
            getattr(torch, name)(x, *args, **kw)
