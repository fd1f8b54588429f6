"""The window functions of torch.signal.windows, computed by scipy.signal.windows in float64
and returned in the requested dtype (default: the default float dtype)."""
from __future__ import annotations

import numpy as np
import scipy.signal.windows as _sw

from ... import _dtype as D
from ..._tensor import _make

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _window(name, M, sym, dtype, device, requires_grad, compute):
    from ..._backend import check_device
    if device is not None:
        check_device(device)
    if isinstance(M, bool) or not isinstance(M, (int, np.integer)):
        raise TypeError(f"{name}(): argument 'M' must be int, not {type(M).__name__}")
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    dtype = D.get_default_dtype() if dtype is None else D.to_dtype(dtype)
    if dtype not in (D.float32, D.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    values = np.ones(M) if M <= 1 else compute(M, sym)
    t = _make(np.asarray(values, dtype=dtype.np))
    return t.requires_grad_(True) if requires_grad else t


def _positive(name, what, value):
    if not value > 0:
        raise ValueError(f"{name}: {what} must be positive, got: {value} instead.")


def bartlett(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The triangular Bartlett window (zero at both ends when symmetric).

    Example:
        >>> import ember
        >>> ember.signal.windows.bartlett(5)
        tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
    """
    return _window("bartlett", M, sym, dtype, device, requires_grad,
                   lambda M, sym: _sw.bartlett(M, sym=sym))


def blackman(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Blackman window: general_cosine with a = (0.42, 0.5, 0.08)."""
    return _window("blackman", M, sym, dtype, device, requires_grad,
                   lambda M, sym: _sw.blackman(M, sym=sym))


def cosine(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The cosine (sine) window: sin(pi * (n + 0.5) / M)."""
    return _window("cosine", M, sym, dtype, device, requires_grad,
                   lambda M, sym: _sw.cosine(M, sym=sym))


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=None, device=None,
                requires_grad=False):
    """The exponential (Poisson) window exp(-|n - center| / tau); ``center`` only with
    ``sym=False`` (a symmetric window is centred)."""
    if sym and center is not None:
        raise ValueError("exponential: Center must be None for symmetric windows")
    _positive("exponential", "Tau", tau)
    return _window("exponential", M, sym, dtype, device, requires_grad,
                   lambda M, sym: _sw.exponential(M, center=center, tau=tau, sym=sym))


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=None, device=None,
             requires_grad=False):
    """The Gaussian window exp(-(n - (M - 1) / 2)^2 / (2 std^2))."""
    _positive("gaussian", "Standard deviation", std)
    return _window("gaussian", M, sym, dtype, device, requires_grad,
                   lambda M, sym: _sw.gaussian(M, std, sym=sym))


def general_cosine(M, *, a, sym=True, dtype=None, layout=None, device=None,
                   requires_grad=False):
    """sum_k (-1)^k a[k] cos(2 pi k n / (M - 1)) (M instead of M - 1 with ``sym=False``)."""
    if not isinstance(a, (list, tuple)):
        raise TypeError(f"general_cosine: Coefficients must be a list/tuple; got "
                        f"{type(a).__name__}")
    if not a:
        raise ValueError("general_cosine: Coefficients cannot be empty")
    coefficients = [float(c) for c in a]
    return _window("general_cosine", M, sym, dtype, device, requires_grad,
                   lambda M, sym: _sw.general_cosine(M, coefficients, sym=sym))


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """alpha - (1 - alpha) cos(2 pi n / (M - 1)): Hann for alpha=0.5, Hamming for 0.54."""
    return _window("general_hamming", M, sym, dtype, device, requires_grad,
                   lambda M, sym: _sw.general_hamming(M, alpha, sym=sym))


def hamming(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Hamming window (general_hamming with alpha=0.54)."""
    return _window("hamming", M, sym, dtype, device, requires_grad,
                   lambda M, sym: _sw.hamming(M, sym=sym))


def hann(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Hann window (general_hamming with alpha=0.5).

    Example:
        >>> import ember
        >>> ember.signal.windows.hann(5)
        tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
    """
    return _window("hann", M, sym, dtype, device, requires_grad,
                   lambda M, sym: _sw.hann(M, sym=sym))


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=None, device=None,
           requires_grad=False):
    """The Kaiser window I0(beta sqrt(1 - (2n / (M - 1) - 1)^2)) / I0(beta)."""
    beta = float(beta)
    if beta < 0:
        raise ValueError(f"kaiser: beta must be non-negative, got: {beta} instead.")
    return _window("kaiser", M, sym, dtype, device, requires_grad,
                   lambda M, sym: _sw.kaiser(M, beta, sym=sym))


def nuttall(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The minimum 4-term Blackman-Harris window of Nuttall."""
    return _window("nuttall", M, sym, dtype, device, requires_grad,
                   lambda M, sym: _sw.nuttall(M, sym=sym))
