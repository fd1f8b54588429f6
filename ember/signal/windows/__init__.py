"""torch.signal.windows: SciPy-style window functions with ``sym=`` (symmetric for filter
design, periodic for spectral analysis with ``sym=False``)."""
from __future__ import annotations

from .windows import (
    bartlett,
    blackman,
    cosine,
    exponential,
    gaussian,
    general_cosine,
    general_hamming,
    hamming,
    hann,
    kaiser,
    nuttall,
)

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]
