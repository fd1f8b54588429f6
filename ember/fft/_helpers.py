"""The sample-frequency and shift helpers of ``torch.fft``."""
from __future__ import annotations

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor, _make
from ..ops.registry import write_out


def _freq(name, n, d, out, dtype, device, requires_grad, values):
    from .._backend import check_device
    if device is not None:
        check_device(device)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"{name}(): argument 'n' (position 1) must be int, not "
                        f"{type(n).__name__}")
    if n < 0:
        raise RuntimeError(f"{name}: Trying to create tensor with negative dimension {n}: [{n}]")
    if dtype is None:
        dtype = out.dtype if out is not None else D.get_default_dtype()
    dtype = D.to_dtype(dtype)
    if dtype.is_complex:  # (torch's arange has no complex kernel)
        raise NotImplementedError(f"{name}: not implemented for the complex dtype {dtype}; "
                                  "expected a real floating dtype")
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} requires a floating point or complex dtype; got {dtype}")
    dt = dtype.np
    # torch computes in the result dtype: the integer ramp times one rounded scale factor
    # (infinite when n * d == 0: rfftfreq(0) is [nan], as torch's 0 * inf)
    scale = 1.0 / (n * d) if n * d != 0 else np.inf
    with np.errstate(invalid="ignore", over="ignore"):
        result = _make(values(n, dt) * dt.type(scale))
    if out is not None:
        return write_out(out, result, name)
    return result.requires_grad_(requires_grad) if requires_grad else result


def _ramp(n, dt):
    k = np.arange(n, dtype=dt)
    k[(n + 1) // 2:] -= n  # the negative frequencies follow the non-negative ones
    return k


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of an ``n``-point FFT with sample spacing ``d``:
    ``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n)``.

    Example:
        >>> import ember
        >>> ember.fft.fftfreq(4)
        tensor([ 0.0000,  0.2500, -0.5000, -0.2500])
    """
    return _freq("fftfreq", n, d, out, dtype, device, requires_grad, _ramp)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    """The sample frequencies of :func:`rfft`: ``[0, 1, ..., n // 2] / (d * n)``.

    Example:
        >>> import ember
        >>> ember.fft.rfftfreq(4)
        tensor([0.0000, 0.2500, 0.5000])
    """
    return _freq("rfftfreq", n, d, out, dtype, device, requires_grad,
                 lambda n, dt: np.arange(n // 2 + 1, dtype=dt))


def _shift(name, input, dim, amount):
    import ember
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if dim is None:
        dims = tuple(range(input.ndim))
    elif isinstance(dim, (tuple, list)):
        dims = tuple(dim)
    else:
        dims = (dim,)
    if not dims:  # torch's roll refuses an empty shift list, and so fftshift
        raise RuntimeError(f"{name}: `shifts` required; got no dims to shift (a 0-d input or "
                           "dim=()).")
    shifts = tuple(amount(input.shape[d]) for d in dims)
    return ember.roll(input, shifts, dims)


def fftshift(input, dim=None):
    """Move the zero frequency to the centre of ``dim`` (all dims by default): a roll by
    ``size // 2``.

    Example:
        >>> import ember
        >>> ember.fft.fftshift(ember.fft.fftfreq(4))
        tensor([-0.5000, -0.2500,  0.0000,  0.2500])
    """
    return _shift("fftshift", input, dim, lambda n: n // 2)


def ifftshift(input, dim=None):
    """Inverse of :func:`fftshift`: a roll by ``(size + 1) // 2``."""
    return _shift("ifftshift", input, dim, lambda n: (n + 1) // 2)
