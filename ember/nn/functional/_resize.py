"""Padding, resizing (interpolate/upsample), pixel and channel shuffle, and sampling grids
(affine_grid; grid_sample is in _grid_sample.py) of ``ember.nn.functional``.

Composites of ember ops (gradients of any order for free), apart from the ``ConstantPadNd``
primitive in ``ember/ops/nn/padding.py``.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from ..._tensor import _make
from ...ops.gather import IndexSelect
from ...ops.nn.padding import ConstantPadNd
from ._grid_sample import grid_sample  # re-exported: it lives in _grid_sample.py
from ._pool import adaptive_avg_pool1d, adaptive_avg_pool2d
from ._utils import _check_tensor

__all__ = [
    "pad", "interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "pixel_shuffle",
    "pixel_unshuffle", "channel_shuffle", "grid_sample", "affine_grid",
]


# ---------------------------------------------------------------------------------------------
# padding

_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def _pad_index(n, lo, hi, mode, dim, name, shape):
    """Source index along one dim for each padded position -lo .. n + hi - 1."""
    pos = np.arange(-lo, n + hi)
    if mode == "reflect":
        if lo >= n or hi >= n:
            raise RuntimeError(
                f"{name}: Padding size should be less than the corresponding input dimension, "
                f"but got: padding ({lo}, {hi}) at dimension {dim} of input {list(shape)}.")
        period = 2 * (n - 1)
        m = np.abs(pos) % period if period else np.zeros_like(pos)
        return np.where(m >= n, period - m, m)
    if mode == "replicate":
        if n == 0:
            raise RuntimeError(f"{name}: cannot replicate-pad an empty dimension {dim} of input "
                               f"{list(shape)}.")
        return np.clip(pos, 0, n - 1)
    if lo > n or hi > n:  # circular
        raise RuntimeError(f"{name}: Padding value causes wrapping around more than once; got "
                           f"padding ({lo}, {hi}) at dimension {dim} of size {n}.")
    return pos % n


def pad(input, pad, mode="constant", value=None):
    """Pad (or, with negative amounts, crop) the last len(pad) // 2 dims.

    ``pad`` lists (left, right) pairs starting from the last dim. Modes: 'constant' (any number
    of dims, fill ``value``), 'reflect' (mirror without repeating the edge), 'replicate'
    (repeat the edge), 'circular' (wrap around).

    Example:
        >>> import ember
        >>> pad(ember.tensor([[1., 2., 3.]]), (1, 2), mode='reflect')
        tensor([[2., 1., 2., 3., 2., 1.]])
    """
    name = "pad"
    _check_tensor(name, input)
    pads = [int(p) for p in pad]
    if len(pads) % 2:
        raise RuntimeError(f"{name}: Padding length must be divisible by 2; got {len(pads)} "
                         f"values {tuple(pad)}.")
    nd = len(pads) // 2
    if nd > input.ndim:
        raise RuntimeError(f"{name}: Padding length {len(pads)} is too large for a {input.ndim}-D "
                         f"input; expected at most {2 * input.ndim} values.")
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"{name}: Unrecognised padding mode {mode!r}; expected one of "
                                  f"{_PAD_MODES}.")
    if mode == "constant":
        return _constant_pad(input, pads, 0.0 if value is None else value)
    if value is not None and value != 0:
        raise ValueError(f"{name}: Padding mode {mode!r} doesn't take in value argument.")
    if not nd <= input.ndim - 1 <= nd + 1:
        raise NotImplementedError(
            f"{name}: {mode} padding of {nd} dim(s) needs a {nd + 1}-D (unbatched) or "
            f"{nd + 2}-D (batched) input; got input of shape {tuple(input.shape)}.")
    out = input
    for i in range(nd):
        dim = input.ndim - 1 - i
        lo, hi = pads[2 * i], pads[2 * i + 1]
        if lo == 0 and hi == 0:
            continue
        # negative amounts crop first; the positive ones then pad the cropped tensor
        start = max(-lo, 0)
        n = input.shape[dim] - start - max(-hi, 0)
        idx = start + _pad_index(n, max(lo, 0), max(hi, 0), mode, dim, name, input.shape)
        out = _along(out, dim, idx)
    return out


def _constant_pad(input, pads, value):
    # crop first (a differentiable view), then pad the non-negative amounts
    crop = [slice(None)] * input.ndim
    grow = [(0, 0)] * input.ndim
    for i in range(len(pads) // 2):
        dim = input.ndim - 1 - i
        lo, hi = pads[2 * i], pads[2 * i + 1]
        n = input.shape[dim]
        if n + lo + hi < 0:
            raise RuntimeError(f"pad: The input size {n}, plus negative padding {lo} and {hi} "
                               f"resulted in a negative output size at dimension {dim}.")
        crop[dim] = slice(max(-lo, 0), n - max(-hi, 0))
        grow[dim] = (max(lo, 0), max(hi, 0))
    x = input[tuple(crop)] if any(s != slice(None) for s in crop) else input
    if all(g == (0, 0) for g in grow):
        return x if x is not input else input.clone()
    return ConstantPadNd.apply(x, tuple(grow), value)


# ---------------------------------------------------------------------------------------------
# resizing

_LINEAR_MODES = {"linear": 1, "bilinear": 2, "trilinear": 3, "bicubic": 2, "lanczos": 2}


def _interp_sizes(x, size, scale_factor, nd, name):
    """(output sizes, scales used for the source coordinate or None per dim)."""
    spatial = tuple(x.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError(f"{name}: only one of size or scale_factor should be defined")
    if size is not None:
        sizes = (size,) * nd if isinstance(size, (int, np.integer)) else tuple(size)
        if len(sizes) != nd:
            raise ValueError(f"{name}: Input and output must have the same number of spatial "
                             f"dimensions, but got input with spatial dimensions of "
                             f"{list(spatial)} and output size of {list(sizes)}. Please provide "
                             f"input tensor in (N, C, d1, d2, ...,dK) format and output size in "
                             f"(o1, o2, ...,oK) format.")
        return tuple(int(s) for s in sizes), (None,) * nd
    if scale_factor is None:
        raise ValueError(f"{name}: either size or scale_factor should be defined")
    scales = (scale_factor,) * nd if isinstance(scale_factor, numbers.Number) \
        else tuple(scale_factor)
    if len(scales) != nd:
        raise ValueError(f"{name}: Input and scale_factor must have the same number of spatial "
                         f"dimensions, but got input with spatial dimensions of {list(spatial)} "
                         f"and scale_factor of shape {list(scales)}.")
    return tuple(int(math.floor(n * float(s))) for n, s in zip(spatial, scales)), \
        tuple(float(s) for s in scales)


def _src_scale(n_in, n_out, scale, align_corners):
    """Step between source coordinates of consecutive outputs (torch's area_pixel scale)."""
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    if scale is not None and scale > 0:
        return 1.0 / scale
    return n_in / n_out


def _along(x, dim, idx):
    return IndexSelect.apply(x, np.ascontiguousarray(idx, np.int64), dim=dim)


def _weights_for(w, dim, ndim, dtype):
    shape = [1] * ndim
    shape[dim] = w.size
    return _make(w.astype(dtype).reshape(shape))


def _nearest_dim(x, dim, n_out, scale, exact):
    n_in = x.shape[dim]
    if scale is None and n_out % n_in == 0 and n_out > 0:
        # integer upsampling: repeat each element (expand + reshape backprop as a sum)
        k = n_out // n_in
        shape = list(x.shape)
        y = x.unsqueeze(dim + 1)
        y = y.expand(*shape[:dim + 1], k, *shape[dim + 1:])
        shape[dim] = n_out
        return y.reshape(*shape)
    step = np.float32(1.0 / scale if scale else n_in / n_out)
    pos = np.arange(n_out, dtype=np.float32)
    # torch computes nearest indices in float32; matching that keeps the same rounding
    src = np.floor((pos + np.float32(0.5)) * step) if exact else np.floor(pos * step)
    return _along(x, dim, np.minimum(src.astype(np.int64), n_in - 1))


def _linear_dim(x, dim, n_out, scale, align_corners):
    n_in = x.shape[dim]
    step = _src_scale(n_in, n_out, scale, align_corners)
    pos = np.arange(n_out, dtype=np.float64)
    src = pos * step if align_corners else np.maximum((pos + 0.5) * step - 0.5, 0.0)
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    i1 = np.minimum(i0 + 1, n_in - 1)
    lam = src - i0
    dt = x._data.dtype
    w0 = _weights_for(1.0 - lam, dim, x.ndim, dt)
    w1 = _weights_for(lam, dim, x.ndim, dt)
    return _along(x, dim, i0) * w0 + _along(x, dim, i1) * w1


def _cubic_weights(t, a=-0.75):
    """Keys' cubic convolution weights for taps at offsets -1, 0, 1, 2 from floor(src)."""
    def near(d):  # |d| <= 1
        return ((a + 2) * d - (a + 3)) * d * d + 1

    def far(d):  # 1 < |d| < 2
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a

    return far(t + 1), near(t), near(1 - t), far(2 - t)


def _cubic_dim(x, dim, n_out, scale, align_corners):
    n_in = x.shape[dim]
    step = _src_scale(n_in, n_out, scale, align_corners)
    pos = np.arange(n_out, dtype=np.float64)
    src = pos * step if align_corners else (pos + 0.5) * step - 0.5  # no clamp for cubic
    base = np.floor(src).astype(np.int64)
    ws = _cubic_weights(src - base)
    dt = x._data.dtype
    out = None
    for off, w in zip((-1, 0, 1, 2), ws):
        term = _along(x, dim, np.clip(base + off, 0, n_in - 1)) * _weights_for(w, dim, x.ndim,
                                                                                 dt)
        out = term if out is None else out + term
    return out


# NOTE [Antialiased resize]: downsampling by s > 1 widens the interpolation kernel s times
# (support = s * kernel radius) so every input pixel contributes; output i is centred at
# s * (i + 0.5) in input coordinates, the kernel is evaluated at (j + 0.5 - centre) / s for the
# input pixels j within the support, and the weights are normalised to sum to 1. Kernels:
# triangle (bilinear), Keys' cubic with a = -0.5 (bicubic; PIL's choice, torch's too) and
# Lanczos-3, sinc(x) sinc(x / 3) (lanczos). When upsampling (s <= 1) the kernel keeps its
# size. Separable: one (out, in) weight matrix per spatial dim, applied by a matmul, so
# gradients of any order come for free.
def _aa_filter(x, mode):
    x = np.abs(x)
    if mode == "bilinear":
        return np.maximum(1.0 - x, 0.0)
    if mode == "lanczos":            # sinc(x) sinc(x / 3) on |x| < 3
        return np.where(x < 3.0, np.sinc(x) * np.sinc(x / 3.0), 0.0)
    a = -0.5
    near = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    far = (((x - 5.0) * x + 8.0) * x - 4.0) * a
    return np.where(x < 1.0, near, np.where(x < 2.0, far, 0.0))


def _antialias_weights(in_size, out_size, scale, align_corners, mode):
    """(out_size, in_size) float64 resampling matrix; see NOTE [Antialiased resize]."""
    if align_corners:
        s = (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    else:
        s = 1.0 / scale if scale is not None and scale > 0 else in_size / out_size
    radius = {"bilinear": 1.0, "bicubic": 2.0, "lanczos": 3.0}[mode]
    support = radius * s if s >= 1.0 else radius
    inv = 1.0 / s if s >= 1.0 else 1.0
    weights = np.zeros((out_size, in_size))
    for i in range(out_size):
        centre = s * (i + 0.5)
        lo = max(int(centre - support + 0.5), 0)
        hi = min(int(centre + support + 0.5), in_size)
        w = _aa_filter((np.arange(lo, hi) - centre + 0.5) * inv, mode)
        total = w.sum()
        weights[i, lo:hi] = w / total if total != 0 else w
    return weights


def _antialias_dim(x, dim, out_size, scale, align_corners, mode):
    w = _antialias_weights(x.shape[dim], out_size, scale, align_corners, mode)
    matrix = _make(w.T.astype(x._data.dtype))
    return x.movedim(dim, -1).matmul(matrix).movedim(-1, dim)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize (N, C, *spatial) input to ``size`` or by ``scale_factor``.

    Modes: 'nearest', 'nearest-exact', 'linear' (3-D), 'bilinear' / 'bicubic' (4-D),
    'trilinear' (5-D), 'area' (adaptive average pooling, 3-D / 4-D). Linear modes map
    coordinates by pixel centres unless ``align_corners=True`` (corner pixels aligned).

    ``antialias=True`` (bilinear / bicubic / lanczos, 4-D; 'lanczos' requires it) low-pass
    filters while downsampling, as PIL and torch do: see NOTE [Antialiased resize].

    Example:
        >>> import ember
        >>> interpolate(ember.ones(1, 1, 2, 2), scale_factor=2, mode='bilinear').shape
        ember.Size([1, 1, 4, 4])
    """
    name = "interpolate"
    _check_tensor(name, input)
    if input.ndim not in (3, 4, 5):
        raise NotImplementedError(f"{name}: Input Error: Only 3D, 4D and 5D input Tensors "
                                  f"supported (got {input.ndim}D) for the modes: nearest | "
                                  f"linear | bilinear | bicubic | trilinear | area | "
                                  f"nearest-exact (got {mode})")
    nd = input.ndim - 2
    if mode in ("nearest", "nearest-exact", "area"):
        if align_corners is not None:
            raise ValueError(f"{name}: align_corners option can only be set with the "
                             "interpolating modes: linear | bilinear | bicubic | trilinear")
    elif mode in _LINEAR_MODES:
        if _LINEAR_MODES[mode] != nd:
            raise NotImplementedError(f"{name}: mode {mode!r} needs a "
                                      f"{_LINEAR_MODES[mode] + 2}-D input, got "
                                      f"{input.ndim}-D input {tuple(input.shape)}.")
        align_corners = bool(align_corners)
    else:
        raise NotImplementedError(f"{name}: unknown mode {mode!r}; expected one of nearest, "
                                  "nearest-exact, linear, bilinear, bicubic, trilinear, area.")
    if mode == "lanczos" and not antialias:
        raise ValueError(f"{name}: Lanczos mode requires antialias=True")
    if mode == "lanczos" and align_corners:
        raise ValueError(f"{name}: Lanczos mode does not support align_corners=True")
    if antialias and (mode not in ("bilinear", "bicubic", "lanczos") or input.ndim != 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes "
                         f"and requires a 4-D tensor as input; got mode {mode!r} and a "
                         f"{input.ndim}-D input.")
    sizes, scales = _interp_sizes(input, size, scale_factor, nd, name)
    if recompute_scale_factor:
        scales = (None,) * nd  # derive the coordinate scale from the rounded output size
    if any(s <= 0 for s in sizes):
        raise RuntimeError(f"{name}: computed output size {sizes} must be positive (input "
                           f"{tuple(input.shape)}).")
    if input.is_floating_point() is False and mode != "nearest":
        raise RuntimeError(f"{name}: mode {mode!r} needs a floating point input, got "
                           f"{input.dtype}.")
    if mode == "area":
        if nd == 1:
            return adaptive_avg_pool1d(input, sizes)
        if nd == 2:
            return adaptive_avg_pool2d(input, sizes)
        raise NotImplementedError(f"{name}: mode 'area' supports 3-D and 4-D inputs only.")
    out = input
    for i in range(nd):
        dim = 2 + i
        if mode in ("nearest", "nearest-exact"):
            if out.shape[dim] != sizes[i] or scales[i] not in (None, 1.0):
                out = _nearest_dim(out, dim, sizes[i], scales[i], mode == "nearest-exact")
        elif antialias:
            out = _antialias_dim(out, dim, sizes[i], scales[i], align_corners, mode)
        elif mode == "bicubic":
            out = _cubic_dim(out, dim, sizes[i], scales[i], align_corners)
        else:
            out = _linear_dim(out, dim, sizes[i], scales[i], align_corners)
    return out if out is not input else input.clone()


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of :func:`interpolate`."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: interpolate(..., mode='nearest')."""
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: interpolate(..., mode='bilinear', align_corners=True)."""
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def pixel_shuffle(input, upscale_factor):
    """(*, C * r^2, H, W) -> (*, C, H * r, W * r).

    Example:
        >>> import ember
        >>> pixel_shuffle(ember.ones(1, 8, 3, 3), 2).shape
        ember.Size([1, 2, 6, 6])
    """
    name = "pixel_shuffle"
    _check_tensor(name, input)
    r = int(upscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"{name}: expects input to have at least 3 dimensions, but got input "
                           f"with {input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"{name}: upscale_factor must be greater than 0, but got {r}")
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"{name}: expects its input's 'channel' dimension to be divisible by "
                           f"the square of upscale_factor, but input.size(-3)={c} is not "
                           f"divisible by {r * r}")
    n = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H * r, W * r) -> (*, C * r^2, H, W), the inverse of pixel_shuffle."""
    name = "pixel_unshuffle"
    _check_tensor(name, input)
    r = int(downscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"{name}: expects input to have at least 3 dimensions, but got input "
                           f"with {input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"{name}: downscale_factor must be greater than 0, but got {r}")
    *lead, c, h, w = input.shape
    if h % r or w % r:
        raise RuntimeError(f"{name}: expects height and width to be divisible by "
                           f"downscale_factor={r}, but got input of shape {tuple(input.shape)}")
    n = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


def channel_shuffle(input, groups):
    """Interleave channel groups: (N, g * k, *) viewed as (N, g, k, *) -> (N, k, g, *)."""
    name = "channel_shuffle"
    _check_tensor(name, input)
    g = int(groups)
    if input.ndim < 3:
        raise RuntimeError(f"{name}: expects input to have at least 3 dimensions, but got input "
                           f"with {input.ndim} dimension(s)")
    if g <= 0:
        raise ValueError(f"{name}: Number of groups to divide channels in must be positive. "
                         f"Value of groups:{g}")
    n, c, *rest = input.shape
    if c % g:
        raise RuntimeError(f"{name}: Number of channels must be divisible by groups. Got {c} "
                           f"channels and {g} groups.")
    x = input.reshape(n, g, c // g, *rest).transpose(1, 2)
    return x.reshape(n, c, *rest)


# ---------------------------------------------------------------------------------------------
# sampling grids


def affine_grid(theta, size, align_corners=None):
    """Sampling grid (N, H, W, 2) (or (N, D, H, W, 3)) for affine matrices theta (N, 2, 3).

    Example:
        >>> import ember
        >>> affine_grid(ember.eye(2, 3).unsqueeze(0), (1, 1, 2, 3), align_corners=False).shape
        ember.Size([1, 2, 3, 2])
    """
    name = "affine_grid"
    _check_tensor(name, theta, "theta")
    size = tuple(int(s) for s in size)
    if not theta.is_floating_point():
        raise ValueError(f"{name}: Expected theta to have floating point type, but got "
                         f"{theta.dtype}")
    nd = len(size) - 2
    if nd not in (2, 3):
        raise NotImplementedError(f"{name}: only supports 4D and 5D sizes, for 2D and 3D affine "
                                  f"transforms, respectively. Got size {size}.")
    if theta.ndim != 3 or tuple(theta.shape[1:]) != (nd, nd + 1):
        raise ValueError(f"{name}: Expected a batch of {nd}D affine matrices of shape Nx{nd}x"
                         f"{nd + 1} for size {size}. Got {tuple(theta.shape)}.")
    if theta.shape[0] != size[0]:  # torch: its batched product's error, a RuntimeError
        raise RuntimeError(f"{name}: theta holds {theta.shape[0]} matrices but size {size} "
                           f"asks for a batch of {size[0]}")
    if min(size[2:]) <= 0:
        raise ValueError(f"{name}: Expected non-zero, positive output size. Got {size}")
    dt = theta._data.dtype
    axes = []
    for n in reversed(size[2:]):  # x (width) first
        lin = np.linspace(-1.0, 1.0, n) if n > 1 else np.zeros(1)
        if not align_corners:
            lin = lin * (n - 1) / n
        axes.append(lin)
    mesh = np.meshgrid(*reversed(axes), indexing="ij")  # spatial order D, H, W
    coords = [m for m in reversed(mesh)] + [np.ones_like(mesh[0])]
    base = _make(np.stack(coords, axis=-1).reshape(1, -1, nd + 1).astype(dt))
    grid = base.matmul(theta.transpose(1, 2))  # (N, prod(spatial), nd)
    return grid.reshape(size[0], *size[2:], nd)
