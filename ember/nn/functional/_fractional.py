"""Fractional max pooling (Graham, 2014) of ``ember.nn.functional``: 2-D and 3-D.

The windows come from one uniform sample u in [0, 1) per (batch, channel, spatial dim): with
alpha = (in - k) / (out - 1), window i starts at floor((i + u) * alpha) - floor(u * alpha) and the
last window ends at the input's edge. The arithmetic runs in the input's dtype, as torch's
kernel does, so float32 inputs draw the same windows as torch's for the same samples.

The maximum's position is found in NumPy (no graph); the values are then a gather of the input
at those plane offsets (``PlaneGather``), whose gradient is the scatter-add of max pooling and
whose own gradient is the gather again, so double backward works.
"""
from __future__ import annotations

import numpy as np

import ember

from ...ops.nn.pool import PlaneGather
from ._utils import _check_float, _check_tensor, _tuple

__all__ = [
    "fractional_max_pool2d", "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d", "fractional_max_pool3d_with_indices",
]


def _window_starts(u, in_size, out_size, k):
    """(N, C, out_size) int64 window starts from samples u of shape (N, C)."""
    starts = np.empty(u.shape + (out_size,), np.int64)
    if out_size == 0:
        return starts
    if out_size > 1:
        alpha = u.dtype.type(in_size - k) / u.dtype.type(out_size - 1)
        i = np.arange(out_size - 1).astype(u.dtype)
        scaled = ((i + u[..., None]) * alpha).astype(np.int64)
        starts[..., :-1] = scaled - (u * alpha).astype(np.int64)[..., None]
    starts[..., -1] = in_size - k
    return starts


def _argmax_offsets(x, samples, kernel, out):
    """Plane offsets (N, C, *out) of each window's maximum; NaN wins, the last NaN if several
    (torch's rule), and the first of equal maxima otherwise."""
    n, c = x.shape[:2]
    spatial = x.shape[2:]
    nd = len(spatial)
    strides = np.cumprod((1,) + spatial[::-1])[:-1][::-1]      # plane strides, e.g. (W, 1)
    # torch's sample order: 2-D uses samples[..., 0] for W and [..., 1] for H; 3-D uses
    # [..., 0] for T, [..., 1] for H and [..., 2] for W
    offsets = np.zeros((n, c) + tuple(out) + tuple(kernel), np.int64)
    for d in range(nd):
        u = samples[..., 1 - d if nd == 2 else d]
        starts = _window_starts(u, spatial[d], out[d], kernel[d])       # (N, C, out_d)
        pos = starts[..., :, None] + np.arange(kernel[d])              # (N, C, out_d, k_d)
        shape = [n, c] + [1] * (2 * nd)
        shape[2 + d], shape[2 + nd + d] = out[d], kernel[d]
        offsets = offsets + pos.reshape(shape) * strides[d]
    window = offsets.reshape((n, c) + tuple(out) + (-1,))
    values = np.take_along_axis(x.reshape(n, c, -1), window.reshape(n, c, -1), axis=-1)
    values = values.reshape(window.shape)
    choice = np.argmax(values, axis=-1) if values.shape[-1] else np.zeros(window.shape[:-1], int)
    nan = np.isnan(values)
    if nan.any():
        last_nan = values.shape[-1] - 1 - np.argmax(nan[..., ::-1], axis=-1)
        choice = np.where(nan.any(-1), last_nan, choice)
    return np.take_along_axis(window, choice[..., None], axis=-1)[..., 0]


def _output_size(name, spatial, kernel, output_size, output_ratio, nd):
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        ratio = (output_ratio,) * nd if isinstance(output_ratio, (int, float)) else output_ratio
        if len(ratio) != nd:
            raise ValueError(f"{name}: output_ratio must be a float or a tuple of {nd} floats; "
                             f"got {output_ratio!r}.")
        return tuple(int(s * r) for s, r in zip(spatial, ratio, strict=True))
    return _tuple(output_size, nd, name, "output_size")


def _fractional(input, kernel_size, output_size, output_ratio, samples, nd):
    name = f"fractional_max_pool{nd}d"
    _check_tensor(name, input)
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}: expected {nd + 1}-D (unbatched) or {nd + 2}-D (batched) "
                           f"input; got {input.ndim}-D input of shape {tuple(input.shape)}.")
    _check_float(name, input)
    batched = input.ndim == nd + 2
    x = input if batched else input.unsqueeze(0)
    spatial = tuple(x.shape[2:])
    kernel = _tuple(kernel_size, nd, name, "kernel_size")
    out = _output_size(name, spatial, kernel, output_size, output_ratio, nd)
    dims = ("height", "width") if nd == 2 else ("time", "height", "width")
    # torch's 3-D check is strict (output + kernel - 1 < input), its 2-D check is not
    limit = "<" if nd == 3 else "<="
    for dim, s, k, o in zip(dims, spatial, kernel, out, strict=True):
        if o + k - 1 > s - (nd == 3):
            raise RuntimeError(f"{name}(): pool {dim} {k} too large relative to input {dim} "
                               f"{s}; got output {dim} {o}, expected output + kernel - 1 "
                               f"{limit} input.")
    n, c = x.shape[:2]
    if samples is None:
        samples = ember.rand(n, c, nd, dtype=x.dtype)
    else:
        _check_tensor(name, samples, "_random_samples")
        if samples.dtype != x.dtype:
            raise RuntimeError(f"{name}: expected _random_samples to have the input's dtype "
                               f"{x.dtype}; got {samples.dtype}.")
        if samples.ndim != 3 or samples.shape[2] != nd or samples.shape[0] < n or \
                samples.shape[1] < c:
            raise RuntimeError(f"{name}: expected _random_samples of shape ({n}, {c}, {nd}); "
                               f"got {tuple(samples.shape)}.")
    u = samples.detach().numpy()[:n, :c]
    offsets = _argmax_offsets(x.detach().numpy(), u, kernel, out)
    indices = ember.tensor(offsets.reshape(n, c, 1, -1))
    y = PlaneGather.apply(x.reshape(n, c, 1, -1), indices).reshape((n, c) + out)
    indices = indices.reshape((n, c) + out)
    if not batched:
        return y.squeeze(0), indices.squeeze(0)
    return y, indices


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """2-D fractional max pooling returning (values, indices into each H*W plane)."""
    return _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 2)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """2-D fractional max pooling over (N, C, H, W) or (C, H, W) with pseudo-random windows.

    Args:
        kernel_size: window size (int or pair).
        output_size: (oH, oW), or give ``output_ratio`` (fraction of the input size) instead.
        return_indices: also return the offsets of the maxima in each H*W plane.
        _random_samples: (N, C, 2) samples in [0, 1) fixing the windows (drawn when None).

    Differs from torch: a float ``output_ratio`` is accepted here too (torch's function takes a
    pair only; its module takes both).

    Example:
        >>> import ember
        >>> x = ember.arange(25.).reshape(1, 1, 5, 5)
        >>> u = ember.full((1, 1, 2), 0.5)
        >>> fractional_max_pool2d(x, 2, output_size=2, _random_samples=u)
        tensor([[[[ 6.,  9.],
                  [21., 24.]]]])
    """
    y, indices = _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 2)
    return (y, indices) if return_indices else y


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """3-D fractional max pooling returning (values, indices into each D*H*W volume)."""
    return _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 3)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """3-D fractional max pooling over (N, C, T, H, W) or (C, T, H, W); the arguments are
    those of :func:`fractional_max_pool2d` with triples and (N, C, 3) samples."""
    y, indices = _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 3)
    return (y, indices) if return_indices else y
