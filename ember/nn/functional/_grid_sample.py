"""``grid_sample``: sample a 4-D (N, C, H, W) or 5-D (N, C, D, H, W) input at the grid's
locations, with 'bilinear' (trilinear in 5-D), 'nearest' or 'bicubic' (4-D only) interpolation
and 'zeros' / 'border' / 'reflection' padding.

Everything is a composite of ember ops: the integer taps are found in NumPy, their values come
from a ``gather`` of the flattened input, and the weights are differentiable functions of the
grid, so gradients (and double backward) reach both the input and the grid.

Bicubic follows torch's definition: the cubic convolution kernel with A = -0.75 over the 4 x 4
taps around the unnormalized point; the padding mode is applied to each integer tap (so the
weights depend on the grid, the tap positions do not).
"""
from __future__ import annotations

import numpy as np

from ..._tensor import _make
from ...ops.indexing import where
from ._utils import _check_tensor

__all__ = ["grid_sample"]

_CUBIC_A = -0.75


def _unnormalize(coord, n, align_corners):
    if align_corners:
        return (coord + 1) * ((n - 1) / 2)
    return ((coord + 1) * n - 1) / 2


def _reflect_coords(coord, lo, hi):
    """Reflect coordinates into [lo, hi] (differentiable: a sign flip and a shift per fold)."""
    span = hi - lo
    if span <= 0:
        return coord * 0
    x = (coord - lo).abs()
    flips = (x / span).floor().detach()
    extra = x - flips * span
    even = (flips._data % 2) == 0
    return where(_make(np.asarray(even)), extra + lo, span - extra + lo)


def _fold(coord, n, padding_mode, align_corners):
    """A continuous pixel coordinate after the padding mode's folding (bilinear / nearest)."""
    if padding_mode == "reflection":
        lo, hi = (0, n - 1) if align_corners else (-0.5, n - 0.5)
        coord = _reflect_coords(coord, lo, hi)
    if padding_mode in ("border", "reflection"):
        coord = coord.clamp(0, n - 1)
    return coord


def _fold_taps(taps, n, padding_mode, align_corners):
    """Integer tap positions after the padding mode (bicubic: one fold per tap, as torch)."""
    if padding_mode == "reflection":
        lo, hi = (0.0, n - 1.0) if align_corners else (-0.5, n - 0.5)
        span = hi - lo
        if span <= 0:
            taps = np.zeros_like(taps)
        else:
            x = np.abs(taps - lo)
            flips = np.floor(x / span)
            extra = x - flips * span
            taps = np.where(flips % 2 == 0, extra + lo, span - extra + lo)
    if padding_mode in ("border", "reflection"):
        taps = np.clip(taps, 0, n - 1)
    return np.round(taps).astype(np.int64)


def _tapper(input, out_shape):
    """tap(idx): input at integer positions idx = [per spatial dim (N, *out) arrays] (zero
    outside), as (N, C, *out), and the validity mask (N, *out)."""
    n, c = input.shape[:2]
    spatial = tuple(input.shape[2:])
    flat = input.reshape(n, c, -1)
    count = int(np.prod(out_shape))

    def tap(idx):
        valid = np.ones(idx[0].shape, bool)
        at = np.zeros(idx[0].shape, np.int64)
        for k, size in enumerate(spatial):
            valid &= (idx[k] >= 0) & (idx[k] < size)
            at = at * size + np.clip(idx[k], 0, size - 1)
        at = np.ascontiguousarray(np.broadcast_to(at.reshape(n, 1, count), (n, c, count)))
        vals = flat.gather(2, _make(at)).reshape((n, c) + tuple(out_shape))
        return vals, valid

    return tap


def _masked(vals, weight, valid, dtype):
    """vals (N, C, *out) times weight (N, *out), zero where the tap is outside the input."""
    return vals * (weight * _make(valid.astype(dtype))).unsqueeze(1)


def _cubic_weights(t):
    """The four cubic-convolution weights for taps at -1, 0, 1, 2 from fractional part t."""
    a = _CUBIC_A

    def near(x):     # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):      # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _check(name, input, grid, mode, padding_mode):
    _check_tensor(name, input)
    _check_tensor(name, grid, "grid")
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: {mode!r}")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: {padding_mode!r}")
    nd = input.ndim - 2
    if input.ndim not in (4, 5) or grid.ndim != input.ndim:
        raise RuntimeError(f"grid_sampler(): expected 4-D or 5-D input and grid of the same "
                           f"dimension; got input {tuple(input.shape)} and grid "
                           f"{tuple(grid.shape)}.")
    if grid.shape[-1] != nd:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {nd} in last dimension, "
                           f"but got grid with sizes {list(grid.shape)}")
    if grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    if mode == "bicubic" and nd != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if input.dtype != grid.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have the same dtype, "
                           f"but input has {input.dtype} and grid has {grid.dtype}")
    return nd


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample ``input`` (N, C, H, W) at ``grid`` (N, H_out, W_out, 2) locations in [-1, 1]
    (x, y order), or (N, C, D, H, W) at (N, D_out, H_out, W_out, 3) (x, y, z order).

    Modes: 'bilinear' (trilinear for 5-D), 'nearest' (ties round half to even, as torch),
    'bicubic' (4-D only). Padding: 'zeros', 'border', 'reflection'. Gradients flow to both the
    input and the grid ('nearest' gives the grid a zero gradient, as torch).

    Example:
        >>> import ember
        >>> from ember.nn.functional import affine_grid
        >>> g = affine_grid(ember.eye(2, 3).unsqueeze(0), (1, 1, 3, 3), align_corners=True)
        >>> x = ember.arange(9.).reshape(1, 1, 3, 3)
        >>> bool((grid_sample(x, g, align_corners=True) - x).abs().max() < 1e-6)
        True
    """
    name = "grid_sample"
    nd = _check(name, input, grid, mode, padding_mode)
    align = bool(align_corners)
    spatial = tuple(input.shape[2:])
    out_shape = tuple(grid.shape[1:-1])
    dt = input._data.dtype
    if input.numel() == 0 or grid.numel() == 0:  # torch: an empty batch gives an empty result
        return input.new_zeros((input.shape[0], input.shape[1]) + out_shape)
    tap = _tapper(input, out_shape)
    # coordinate k follows spatial dim k (D, H, W); the grid lists them x (W) first
    raw = [_unnormalize(grid[..., nd - 1 - k], spatial[k], align) for k in range(nd)]
    if mode == "bicubic":
        return _bicubic(raw, spatial, tap, padding_mode, align, dt)
    coords = [_fold(c, size, padding_mode, align) for c, size in zip(raw, spatial, strict=True)]
    if mode == "nearest":
        vals, valid = tap([np.round(c._data).astype(np.int64) for c in coords])
        out = vals * _make(valid[:, None].astype(dt))
        if grid.requires_grad:          # a zero gradient for the grid, as torch reports
            out = out + sum(c.sum() for c in coords) * 0
        return out
    low = [np.floor(c._data).astype(np.int64) for c in coords]
    frac = [c - _make(lo.astype(dt)) for c, lo in zip(coords, low, strict=True)]
    out = None
    for corner in np.ndindex(*(2,) * nd):
        weight = None
        for k, bit in enumerate(corner):
            w = frac[k] if bit else 1 - frac[k]
            weight = w if weight is None else weight * w
        vals, valid = tap([lo + bit for lo, bit in zip(low, corner, strict=True)])
        term = _masked(vals, weight, valid, dt)
        out = term if out is None else out + term
    return out


def _bicubic(raw, spatial, tap, padding_mode, align, dt):
    """4 x 4 cubic convolution around each point (see the module docstring)."""
    (iy, ix), (h, w) = raw, spatial
    y0, x0 = np.floor(iy._data), np.floor(ix._data)
    wy = _cubic_weights(iy - _make(y0.astype(dt)))
    wx = _cubic_weights(ix - _make(x0.astype(dt)))
    out = None
    for i in range(4):
        ty = _fold_taps(y0 - 1 + i, h, padding_mode, align)
        for j in range(4):
            tx = _fold_taps(x0 - 1 + j, w, padding_mode, align)
            vals, valid = tap([ty, tx])
            term = _masked(vals, wy[i] * wx[j], valid, dt)
            out = term if out is None else out + term
    return out
