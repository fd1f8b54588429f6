"""``ember.backends``: PyTorch's backend flags (cudnn, cuda, mps). ember computes with NumPy and
numba kernels on the CPU, so the flags are settable and readable, but only
``ember.set_float32_matmul_precision`` / ``backends.cuda.matmul.allow_tf32`` share state; none
changes CPU results (TF32 is a GPU number format)."""
from __future__ import annotations

from . import cuda, cudnn, mps

__all__ = ["cuda", "cudnn", "mps"]
