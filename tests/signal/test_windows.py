"""ember.signal.windows and the top-level *_window functions against torch."""
from __future__ import annotations

import numpy as np
import pytest

import ember

WINDOWS = {"bartlett": {}, "blackman": {}, "cosine": {}, "exponential": {"tau": 2.0},
           "gaussian": {"std": 1.5}, "general_cosine": {"a": [0.46, 0.23, 0.31]},
           "general_hamming": {"alpha": 0.6}, "hamming": {}, "hann": {}, "kaiser": {"beta": 5.0},
           "nuttall": {}}


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(WINDOWS))
@pytest.mark.parametrize("M", [0, 1, 2, 7, 16])
@pytest.mark.parametrize("sym", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_signal_windows_match_torch(name, M, sym, dtype):
    torch = pytest.importorskip("torch")
    ours = getattr(ember.signal.windows, name)(M, sym=sym, dtype=getattr(ember, dtype),
                                               **WINDOWS[name])
    ref = getattr(torch.signal.windows, name)(M, sym=sym, dtype=getattr(torch, dtype),
                                              **WINDOWS[name])
    assert str(ours.dtype) == str(ref.dtype).replace("torch", "ember")
    tol = 1e-6 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=tol, atol=tol)


def test_exponential_center_and_defaults():
    w = ember.signal.windows.exponential(5, center=1.0, sym=False)
    np.testing.assert_allclose(w.numpy(), np.exp(-np.abs(np.arange(5) - 1.0)), rtol=1e-6)
    assert ember.signal.windows.hann(4).dtype == ember.get_default_dtype()
    assert ember.signal.windows.hann(4, requires_grad=True).requires_grad


@pytest.mark.parity
@pytest.mark.parametrize("call,exc,match", [
    (lambda W, t: W.hann(-1), ValueError, "non-negative window length"),
    (lambda W, t: W.hann(5, dtype=t.int64), ValueError, "float32 or float64"),
    (lambda W, t: W.exponential(5, center=1.0), ValueError, "Center must be None"),
    (lambda W, t: W.exponential(5, tau=-1.0), ValueError, "Tau must be positive"),
    (lambda W, t: W.gaussian(5, std=0.0), ValueError, "Standard deviation must be positive"),
    (lambda W, t: W.kaiser(5, beta=-1.0), ValueError, "beta must be non-negative"),
    (lambda W, t: W.general_cosine(5, a=[]), ValueError, "Coefficients cannot be empty"),
    (lambda W, t: W.general_cosine(5, a=3), TypeError, "Coefficients must be a list/tuple"),
    (lambda W, t: W.hann(3.0), TypeError, "must be int"),
])
def test_signal_window_errors(call, exc, match):
    torch = pytest.importorskip("torch")
    with pytest.raises(exc, match=match):
        call(ember.signal.windows, ember)
    with pytest.raises(exc):
        call(torch.signal.windows, torch)


@pytest.mark.parity
@pytest.mark.parametrize("name,args", [("hann_window", ()), ("hamming_window", ()),
                                       ("hamming_window", (0.5, 0.3)), ("blackman_window", ()),
                                       ("bartlett_window", ()), ("kaiser_window", ()),
                                       ("kaiser_window", (3.0,))])
@pytest.mark.parametrize("n", [0, 1, 2, 9, 16])
@pytest.mark.parametrize("periodic", [True, False])
def test_top_level_windows_match_torch(name, args, n, periodic):
    torch = pytest.importorskip("torch")
    ours = getattr(ember, name)(n, periodic, *args, dtype=ember.float64)
    ref = getattr(torch, name)(n, periodic, *args, dtype=torch.float64)
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-12, atol=1e-12)
