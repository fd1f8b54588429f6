"""What the ops around the numba nn kernels share: the kernels compile for C-contiguous
float32/float64 arrays; half precision is computed in float32 and cast back."""
from __future__ import annotations

import numpy as np

_KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _prep(a):
    """A C-contiguous array in a dtype the kernels compile for (float32 or float64)."""
    if a.dtype not in _KERNEL_DTYPES:
        a = a.astype(np.float32)
    return np.ascontiguousarray(a)


def _back(y, dtype):
    """Cast a kernel result back to the caller's dtype (a no-op for float32/float64)."""
    return y if y.dtype == dtype else y.astype(dtype)
