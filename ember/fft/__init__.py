"""torch.fft: discrete Fourier transforms with gradients, over SciPy's pocketfft.

The transforms are three differentiable primitives (``ember/ops/fft.py``): complex-to-complex,
real-to-one-sided-complex and one-sided-Hermitian-to-real; each one's backward is another of
them, so double backward works. Inputs follow torch's dtype rules: float32 gives complex64,
float64 complex128, integer and bool inputs are computed in the default float dtype, and
float16/bfloat16 are refused (as torch's CPU backend does).

Example:
    >>> import ember
    >>> ember.fft.rfft(ember.tensor([1.0, 2.0, 3.0, 4.0]))
    tensor([10.+0.j, -2.+2.j, -2.+0.j])
"""
from __future__ import annotations

from .._tensor import Tensor as Tensor
from ._helpers import fftfreq, fftshift, ifftshift, rfftfreq
from ._transforms import (
    fft,
    fft2,
    fftn,
    hfft,
    hfft2,
    hfftn,
    ifft,
    ifft2,
    ifftn,
    ihfft,
    ihfft2,
    ihfftn,
    irfft,
    irfft2,
    irfftn,
    rfft,
    rfft2,
    rfftn,
)

__all__ = [
    "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
    "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq",
    "rfftfreq", "fftshift", "ifftshift",
]
