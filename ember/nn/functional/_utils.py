"""Argument checks shared by the family modules of ``ember.nn.functional``."""
from __future__ import annotations

import numpy as np

from ..._tensor import Tensor

# ---------------------------------------------------------------------------------------------
# argument helpers


def _tuple(value, n, name, arg):
    """An int or a length-n sequence of ints as an n-tuple (torch's _pair / _single)."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),) * n
    if isinstance(value, (tuple, list)) and len(value) == n and all(
            isinstance(v, (int, np.integer)) for v in value):
        return tuple(int(v) for v in value)
    if isinstance(value, (tuple, list)) and len(value) == 1 and n > 1:
        return _tuple(value[0], n, name, arg)
    if isinstance(value, (tuple, list)) and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value):
        # ints, but as many as another rank needs: torch's kernels refuse the length with a
        # RuntimeError (its argument parser only checks the type)
        raise RuntimeError(f"{name}: {arg} must be a single int or a tuple of {n} ints; got "
                           f"{tuple(value)!r} ({len(value)} values)")
    raise TypeError(f"{name}(): argument '{arg}' must be an int or a tuple of {n} ints, "
                    f"got {value!r}")


def _conv_arg(value, n, name, arg):
    """stride/padding/dilation/output_padding of an n-d convolution as an n-tuple. A sequence of
    another length reaches here from a layer built with it (`Conv1d(..., padding=(1, 2))`: torch
    accepts it at construction and its kernel refuses it at forward): RuntimeError with the
    kernel's wording."""
    if isinstance(value, (tuple, list)) and len(value) not in (1, n) and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value):
        raise RuntimeError(f"{name}: expected {arg} to be a single integer value or a list of "
                           f"{n} values to match the convolution dimensions, but got "
                           f"{arg}={[int(v) for v in value]}")
    return _tuple(value, n, name, arg)


def _check_tensor(name, value, arg="input"):
    """TypeError, as torch raises it, when ``arg`` of ``name`` is not a Tensor."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' must be Tensor, not {type(value).__name__}")


def _check_float(name, input):
    """``input`` is a floating-point Tensor (TypeError / NotImplementedError otherwise: torch's
    float-only kernels have no integer or bool version)."""
    _check_tensor(name, input)
    if not input.is_floating_point():
        raise NotImplementedError(f"{name}: expected a floating-point input, got dtype "
                                  f"{input.dtype}; convert it with .float() first.")


def _spatial_input(x, name, nd, batched_only=False):
    """Check x is (N, C, *spatial) or unbatched (C, *spatial); returns (x batched, was_batched)."""
    _check_tensor(name, x)
    full = nd + 2
    if x.ndim == full:
        return x, True
    if x.ndim == full - 1 and not batched_only:
        return x.unsqueeze(0), False
    dims = ("H", "W") if nd == 2 else ("L",) if nd == 1 else ("D", "H", "W")
    shape = ", ".join(("N", "C") + dims)
    unb = "" if batched_only else f" or {full - 1}-D unbatched ({', '.join(('C',) + dims)})"
    raise RuntimeError(f"{name}: expected {full}-D (batched) input of shape ({shape}){unb}; "
                       f"got {x.ndim}-D input of shape {tuple(x.shape)}.")


def _finish_unbatched(y, batched):
    return y if batched else y.squeeze(0)
