"""Depthwise 2-D convolution kernels (each group has one input channel), used by `conv`.

Per-plane direct kernels, flat stride-1 variants and channels-last variants for small maps; the
drivers in conv.py choose between them. Arrays follow conv.py's conventions (C-contiguous NCHW,
float32 or float64). Every kernel takes a range [lo, hi) of planes or channels, so that parts
of it run on two threads (NOTE [Depthwise in parts] in conv.py).
"""

import numba
import numpy as np
from numba import uint64

from ... import _onepool
from . import split
from .planes import (
    _axpy_strided,
    _crop_plane,
    _fill_interior,
    _zero,
)


@numba.njit(nogil=True, cache=True)
def _k_depthwise_fwd(x, w, y, sh, sw, ph, pw, dh, dw, lo, hi):
    """Direct depthwise convolution of planes [lo, hi) of y (sample-major: n * O + o): output
    channel o reads only input channel o // multiplier."""
    _, n_chan, height, width = x.shape
    _, n_out, out_h, out_w = y.shape
    kh, kw = w.shape[2], w.shape[3]
    mult = n_out // n_chan
    buf = np.zeros((height + 2 * ph, width + 2 * pw), dtype=x.dtype)
    acc = np.empty(out_w, dtype=y.dtype)
    for no in range(lo, hi):
        n, o = no // n_out, no % n_out
        _fill_interior(buf, x[n, o // mult], ph, pw)
        for oh in range(out_h):
            _zero(acc)
            for i in range(kh):
                row = buf[oh * sh + i * dh]
                for j in range(kw):
                    _axpy_strided(acc, w[o, 0, i, j], row[j * dw:], sw, out_w)
            dst = y[n, o, oh]
            for t in range(out_w):
                dst[t] = acc[t]


# NOTE [Flat stride-1 depthwise]
# With stride 1, output (oh, ow) of tap (i, j) reads padded input (oh + i*dh, ow + j*dw). On the
# flattened padded plane (row length wp) that is flat[oh*wp + ow + i*dh*wp + j*dw]: computing
# the outputs on the padded width too, t = oh*wp + ow for ow < wp, each tap becomes ONE
# contiguous run of OH*wp multiply-adds instead of OH runs of OW. Those long runs vectorize
# (2x faster on 16x16 maps); the wp - OW extra columns per row are dropped (forward), fed
# zeros (input grad) or multiplied by zeros (weight grad). The last run overhangs the padded
# plane by up to (kw-1)*dw elements, hence one spare zero row in the buffers.


@numba.njit(nogil=True, cache=True, inline="always")
def _spread_rows(rows, width, flat):
    """Place the (OH, OW) rows at flat[oh*width : oh*width + OW], zero elsewhere."""
    _zero(flat)
    for r in range(rows.shape[0]):
        src = rows[r]
        dst = flat[r * width:]
        for t in range(rows.shape[1]):
            dst[t] = src[t]


@numba.njit(nogil=True, cache=True)
def _k_depthwise_s1_fwd(x, w, y, ph, pw, dh, dw, lo, hi):
    """Stride-1 depthwise convolution of planes [lo, hi) of y (n * O + o); see NOTE [Flat
    stride-1 depthwise]."""
    _, n_chan, height, width = x.shape
    _, n_out, out_h, _ = y.shape
    kh, kw = w.shape[2], w.shape[3]
    mult = n_out // n_chan
    wp = width + 2 * pw
    span = out_h * wp
    buf = np.zeros((height + 2 * ph + 1, wp), dtype=x.dtype)
    flat = buf.ravel()
    acc = np.empty(span, dtype=y.dtype)
    for no in range(lo, hi):
        n, o = no // n_out, no % n_out
        _fill_interior(buf, x[n, o // mult], ph, pw)
        _zero(acc)
        for i in range(kh):
            row = flat[i * dh * wp:]
            if kw == 3:  # one pass over acc per kernel row, not per tap (3x fewer loads)
                w0, w1, w2 = w[o, 0, i, 0], w[o, 0, i, 1], w[o, 0, i, 2]
                s0, s1, s2 = row, row[dw:], row[2 * dw:]
                for t in range(span):
                    acc[t] += w0 * s0[t] + w1 * s1[t] + w2 * s2[t]
                continue
            for j in range(kw):
                wv = w[o, 0, i, j]
                src = row[j * dw:]
                for t in range(span):
                    acc[t] += wv * src[t]
        _crop_plane(acc.reshape(out_h, wp), y[n, o], 0, 0)


@numba.njit(nogil=True, cache=True)
def _k_depthwise_s1_input_bwd(gy, w, gx, ph, pw, dh, dw, lo, hi):
    """Input gradient of stride-1 depthwise conv, planes [lo, hi) of gx (n * C + c); see NOTE
    [Flat stride-1 depthwise]."""
    _, n_chan, height, width = gx.shape
    _, n_out, out_h, _ = gy.shape
    kh, kw = w.shape[2], w.shape[3]
    mult = n_out // n_chan
    wp = width + 2 * pw
    span = out_h * wp
    reach = (kw - 1) * dw  # how far a kernel row's taps spread the gradient
    buf = np.empty((height + 2 * ph + 1, wp), dtype=gx.dtype)
    flat = buf.ravel()
    # g with `reach` zeros on each side: a kernel row's taps become one gather per position
    g_pad = np.zeros(span + 2 * reach, dtype=gy.dtype)
    g = g_pad[reach:reach + span]
    for nc in range(lo, hi):
        n, c = nc // n_chan, nc % n_chan
        _zero(flat)
        for o in range(c * mult, (c + 1) * mult):
            _spread_rows(gy[n, o], wp, g)
            for i in range(kh):
                row = flat[i * dh * wp:]
                if kw == 3:  # one pass per kernel row: row[u] += sum_j w_j g[u - j*dw]
                    w0, w1, w2 = w[o, 0, i, 0], w[o, 0, i, 1], w[o, 0, i, 2]
                    g0, g1, g2 = g_pad[reach:], g_pad[reach - dw:], g_pad[reach - 2 * dw:]
                    for u in range(span + reach):
                        row[u] += w0 * g0[u] + w1 * g1[u] + w2 * g2[u]
                    continue
                for j in range(kw):
                    wv = w[o, 0, i, j]
                    dst = row[j * dw:]
                    for t in range(span):
                        dst[t] += wv * g[t]
        _crop_plane(buf, gx[n, c], ph, pw)


@numba.njit(nogil=True, cache=True, fastmath={"reassoc"})
def _k_depthwise_s1_weight_bwd(gy, x, gw_per_sample, ph, pw, dh, dw, lo, hi):
    """Weight gradient of stride-1 depthwise conv for planes [lo, hi) (n * O + o) as one dot
    product per tap; reassoc lets LLVM vectorize the sum. See NOTE [Flat stride-1 depthwise]."""
    _, n_chan, height, width = x.shape
    _, n_out, out_h, _ = gy.shape
    kh, kw = gw_per_sample.shape[2], gw_per_sample.shape[3]
    mult = n_out // n_chan
    wp = width + 2 * pw
    span = out_h * wp
    buf = np.zeros((height + 2 * ph + 1, wp), dtype=x.dtype)
    flat = buf.ravel()
    g = np.empty(span, dtype=gy.dtype)
    for no in range(lo, hi):
        n, o = no // n_out, no % n_out
        _fill_interior(buf, x[n, o // mult], ph, pw)
        _spread_rows(gy[n, o], wp, g)
        for i in range(kh):
            row = flat[i * dh * wp:]
            if kw == 3:  # the kernel row's three dot products in one pass over g
                s0, s1, s2 = row, row[dw:], row[2 * dw:]
                t0 = t1 = t2 = 0.0
                for t in range(span):
                    t0 += g[t] * s0[t]
                    t1 += g[t] * s1[t]
                    t2 += g[t] * s2[t]
                gw_per_sample[n, o, i, 0] = t0
                gw_per_sample[n, o, i, 1] = t1
                gw_per_sample[n, o, i, 2] = t2
                continue
            for j in range(kw):
                src = row[j * dw:]
                total = 0.0
                for t in range(span):
                    total += g[t] * src[t]
                gw_per_sample[n, o, i, j] = total


# The per-plane kernels take a range [lo, hi) of planes (sample-major) and run, like the
# channels-last ones below, as parts on OpenBLAS's worker or on the one pool (NOTE [Ranges on
# the one pool] in split.py); every plane is computed alone, so the numbers do not depend on
# the split.


@_onepool.twin
def _p_depthwise_fwd(x, w, y, sh, sw, ph, pw, dh, dw, n, parts):
    for p in numba.prange(parts):
        _k_depthwise_fwd(x, w, y, sh, sw, ph, pw, dh, dw, n * p // parts, n * (p + 1) // parts)


@_onepool.twin
def _p_depthwise_s1_fwd(x, w, y, ph, pw, dh, dw, n, parts):
    for p in numba.prange(parts):
        _k_depthwise_s1_fwd(x, w, y, ph, pw, dh, dw, n * p // parts, n * (p + 1) // parts)


@_onepool.twin
def _p_depthwise_s1_input_bwd(gy, w, gx, ph, pw, dh, dw, n, parts):
    for p in numba.prange(parts):
        _k_depthwise_s1_input_bwd(gy, w, gx, ph, pw, dh, dw, n * p // parts,
                                  n * (p + 1) // parts)


@_onepool.twin
def _p_depthwise_s1_weight_bwd(gy, x, gw_per_sample, ph, pw, dh, dw, n, parts):
    for p in numba.prange(parts):
        _k_depthwise_s1_weight_bwd(gy, x, gw_per_sample, ph, pw, dh, dw, n * p // parts,
                                   n * (p + 1) // parts)


split.pooled(_k_depthwise_fwd, _p_depthwise_fwd)
split.pooled(_k_depthwise_s1_fwd, _p_depthwise_s1_fwd)
split.pooled(_k_depthwise_s1_input_bwd, _p_depthwise_s1_input_bwd)
split.pooled(_k_depthwise_s1_weight_bwd, _p_depthwise_s1_weight_bwd)


# NOTE [Channels-last depthwise]
# The per-plane kernels above pay a fixed cost per (sample, channel) plane (copy into a padded
# buffer, loop set-up) that dwarfs the arithmetic on small maps: a 2x2 map has 4 outputs of 9
# taps each. Deep layers of depthwise networks have exactly that: few pixels, many channels.
# With the pixels of one sample laid out (H*W, C), the innermost loop runs over C contiguous
# channels (vectorized, one weight per channel), and the tap loops test bounds once per pixel
# instead of once per channel. Used when every group has one input and one output channel and
# the maps are small. The kernels take and return NCHW arrays and transpose one sample at a time
# into a scratch that stays in cache: whole-batch NCHW <-> NHWC copies by NumPy cost more than
# the arithmetic, and the forward keeps nothing for the backward. Measured on MobileNetV2's
# (16,576,4,4) layer; figures in benchmarks/RESULTS.md, "Figures behind the design notes".


@numba.njit(nogil=True, cache=True, inline="always")
def _tap(o, i, s, p, d, size):
    """Input coordinate read by output coordinate o at tap i, or -1 in the padding."""
    v = o * s - p + i * d
    return v if 0 <= v < size else -1


@numba.njit(nogil=True, cache=True, inline="always")
def _to_pixels(planes, pixels, lo, hi):
    """Planes [lo, hi) of one sample's (C, P) planes -> columns [lo, hi) of (P, C) pixels.
    Reading whole planes and writing strided beats the other loop order on these sizes (0.3 vs
    0.3-0.9 ns per element)."""
    n_pix = planes.shape[1]
    for c in range(uint64(lo), uint64(hi)):
        row = planes[c]
        for p in range(n_pix):
            pixels[p, c] = row[p]


@numba.njit(nogil=True, cache=True, inline="always")
def _to_planes(pixels, planes, lo, hi):
    """The inverse of `_to_pixels`: columns [lo, hi) of (P, C) pixels -> planes [lo, hi)."""
    n_pix = pixels.shape[0]
    for c in range(uint64(lo), uint64(hi)):
        row = planes[c]
        for p in range(n_pix):
            row[p] = pixels[p, c]


# The channels-last kernels take a range [lo, hi) of channels: every channel's arithmetic is
# independent (gw sums over the batch per channel), so parts of the range run on the one pool
# with the numbers of one call (NOTE [Ranges on the one pool] in split.py). The channel loops
# count in uint64: with a signed index from a runtime start numba keeps its negative-index
# wraparound in the loop and LLVM does not vectorize it (4-6x slower; NOTE [Unsigned loop
# indices] in ember/optim/_kernels.py).


@numba.njit(nogil=True, cache=True)
def _k_depthwise_cl_fwd(x, w, y, sh, sw, ph, pw, dh, dw, lo, hi):
    """Channels [lo, hi) of y (N, C, OH, OW) from x (N, C, H, W) and w (kh, kw, C), one sample
    at a time in channels-last scratch; see NOTE [Channels-last depthwise]."""
    n_batch, n_chan, height, width = x.shape
    _, _, out_h, out_w = y.shape
    kh, kw = w.shape[0], w.shape[1]
    xs = np.empty((height * width, n_chan), dtype=x.dtype)
    ys = np.empty((out_h * out_w, n_chan), dtype=y.dtype)
    for n in range(n_batch):
        _to_pixels(x[n].reshape(n_chan, height * width), xs, lo, hi)
        for oh in range(out_h):
            for ow in range(out_w):
                acc = ys[oh * out_w + ow]
                for c in range(uint64(lo), uint64(hi)):
                    acc[c] = 0
                for i in range(kh):
                    ih = _tap(oh, i, sh, ph, dh, height)
                    if ih < 0:
                        continue
                    for j in range(kw):
                        iw = _tap(ow, j, sw, pw, dw, width)
                        if iw < 0:
                            continue
                        src = xs[ih * width + iw]
                        wt = w[i, j]
                        for c in range(uint64(lo), uint64(hi)):
                            acc[c] += wt[c] * src[c]
        _to_planes(ys, y[n].reshape(n_chan, out_h * out_w), lo, hi)


@numba.njit(nogil=True, cache=True)
def _k_depthwise_cl_bwd(gy, x, w, gx, gw, need_x, need_w, sh, sw, ph, pw, dh, dw, lo, hi):
    """Both gradients of channels [lo, hi) in one pass over gy (N, C, OH, OW): gx (N, C, H, W)
    when need_x and the (kh, kw, C) weight gradient gw, summed over the batch in sample order,
    when need_w."""
    n_batch, n_chan, height, width = x.shape
    _, _, out_h, out_w = gy.shape
    kh, kw = w.shape[0], w.shape[1]
    gys = np.empty((out_h * out_w, n_chan), dtype=gy.dtype)
    xs = np.empty((height * width, n_chan), dtype=x.dtype)
    gxs = np.empty((height * width, n_chan), dtype=gy.dtype)
    if need_w:
        for i in range(kh):
            for j in range(kw):
                for c in range(uint64(lo), uint64(hi)):
                    gw[i, j, c] = 0
    for n in range(n_batch):
        _to_pixels(gy[n].reshape(n_chan, out_h * out_w), gys, lo, hi)
        if need_w:
            _to_pixels(x[n].reshape(n_chan, height * width), xs, lo, hi)
        if need_x:
            for p in range(height * width):
                for c in range(uint64(lo), uint64(hi)):
                    gxs[p, c] = 0
        for oh in range(out_h):
            for ow in range(out_w):
                g = gys[oh * out_w + ow]
                for i in range(kh):
                    ih = _tap(oh, i, sh, ph, dh, height)
                    if ih < 0:
                        continue
                    for j in range(kw):
                        iw = _tap(ow, j, sw, pw, dw, width)
                        if iw < 0:
                            continue
                        p = ih * width + iw
                        if need_x:
                            dst = gxs[p]
                            wt = w[i, j]
                            for c in range(uint64(lo), uint64(hi)):
                                dst[c] += wt[c] * g[c]
                        if need_w:
                            src = xs[p]
                            acc = gw[i, j]
                            for c in range(uint64(lo), uint64(hi)):
                                acc[c] += g[c] * src[c]
        if need_x:
            _to_planes(gxs, gx[n].reshape(n_chan, height * width), lo, hi)


@_onepool.twin
def _p_depthwise_cl_fwd(x, w, y, sh, sw, ph, pw, dh, dw, n, parts):
    for p in numba.prange(parts):
        _k_depthwise_cl_fwd(x, w, y, sh, sw, ph, pw, dh, dw, n * p // parts,
                            n * (p + 1) // parts)


@_onepool.twin
def _p_depthwise_cl_bwd(gy, x, w, gx, gw, need_x, need_w, sh, sw, ph, pw, dh, dw, n, parts):
    for p in numba.prange(parts):
        _k_depthwise_cl_bwd(gy, x, w, gx, gw, need_x, need_w, sh, sw, ph, pw, dh, dw,
                            n * p // parts, n * (p + 1) // parts)


split.pooled(_k_depthwise_cl_fwd, _p_depthwise_cl_fwd)
split.pooled(_k_depthwise_cl_bwd, _p_depthwise_cl_bwd)


def _channels_last_depthwise(out_shape, w_shape, groups):
    """Whether the channels-last kernels apply and pay off; see NOTE [Channels-last depthwise]."""
    return (w_shape[0] == groups and w_shape[1] == 1
            and out_shape[2] * out_shape[3] <= _CL_MAX_PIXELS and groups >= 16)


# Output pixels per map up to which the channels-last depthwise kernels are used. Measured on
# MobileNetV2 shapes (batch 16, 3x3): 3-15x faster at 8x8 outputs and below, 2x slower at 16x16.
_CL_MAX_PIXELS = 64
