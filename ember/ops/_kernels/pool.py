"""2-D pooling kernels (max, average, adaptive) on arrays shaped (..., H, W).

Leading dimensions (N, C or just C) are flattened into independent planes; outputs keep them.
Max-pool indices are int64 offsets into each H*W input plane, as torch's ``return_indices``.
Loops run over planes with prange, compiled serially: see NOTE [Kernel threading] in conv.py;
the max and average pooling kernels are twins that run on the one pool when it is on (NOTE [One
pool] in ember/_onepool.py).
"""

import numba
import numpy as np
from numba import types
from numba.extending import intrinsic

from ... import _onepool
from ..._kernel_threads import conv_scope
from . import split
from .planes import _N_BLOCKS, _block, _fill_interior

PARALLEL = False


def _planes(x):
    """View x (..., H, W) as (P, H, W) planes; the leading shape is restored by the caller."""
    return x.reshape((-1,) + x.shape[-2:])


def _pool_out_size(size, k, s, p, d, ceil_mode):
    """torch's pooling output length: floor or ceil division; with ceil_mode the last window
    must still start inside the input or its left padding, never only in the right padding."""
    span = size + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _check_pool_args(op, shape, kernel, stride, padding, dilation, ceil_mode):
    """Validate like torch and return (out_h, out_w)."""
    outs = []
    for dim in range(2):
        k, s, p, d = kernel[dim], stride[dim], padding[dim], dilation[dim]
        if k <= 0 or s <= 0 or d <= 0 or p < 0:
            raise RuntimeError(
                f"{op}: kernel_size, stride and dilation must be positive and padding >= 0; "
                f"got kernel_size={kernel}, stride={stride}, padding={padding}, "
                f"dilation={dilation}.")
        if 2 * p > d * (k - 1) + 1:
            raise RuntimeError(
                f"{op}: pad should be at most half of effective kernel size; got padding="
                f"{padding}, kernel_size={kernel}, dilation={dilation}.")
        outs.append(_pool_out_size(shape[-2 + dim], k, s, p, d, ceil_mode))
    if outs[0] < 1 or outs[1] < 1:
        raise RuntimeError(
            f"{op}: output size is too small; got input {tuple(shape)}, computed output "
            f"{tuple(outs)}. Use a smaller kernel or more padding.")
    return outs[0], outs[1]


# ---------------------------------------------------------------------------------------------
# Max pooling


@intrinsic
def _select(typingctx, cond, a, b):
    """`a if cond else b` as a single LLVM select.

    numba lowers the conditional expression to a branch; in the max-pool loops that branch is
    taken at random (about every other tap of real data) and blocks vectorization, so the
    running max and argmax are updated branch-free instead (2x faster on 3x3/2 pooling).
    """
    sig = a(types.boolean, a, a)

    def codegen(context, builder, signature, args):
        return builder.select(*args)
    return sig, codegen


@numba.njit(nogil=True, cache=True, inline="always")
def _max_taps(src, step, best, best_at, offset, count):
    """Fold one kernel tap into the running max of `count` outputs: src[ow * step] is what
    output ow sees, and offset + ow * step its index in the input plane.

    Callers pass step as a literal when they can (1, 2): a constant stride vectorizes, a
    runtime one does not.
    """
    for ow in range(count):
        v = src[ow * step]
        cur = best[ow]
        # NaN wins, and a later NaN replaces an earlier one, as in torch
        take = (v > cur) | (v != v)
        best[ow] = _select(take, v, cur)
        best_at[ow] = _select(take, offset + ow * step, best_at[ow])


@numba.njit(nogil=True, cache=True, inline="always")
def _maxpool_plane(x, y, idx, p, buf, best, best_at, kh, kw, sh, sw, ph, pw, dh, dw):
    """Plane p of `_k_maxpool_fwd`, using the caller's scratch."""
    height, width = x.shape[1], x.shape[2]
    out_h, out_w = y.shape[1], y.shape[2]
    for r in range(height):
        src = x[p, r]
        dst = buf[r + ph, pw:]
        for t in range(width):
            dst[t] = src[t]
    for oh in range(out_h):
        for ow in range(out_w):
            best[ow] = -np.inf
            best_at[ow] = -1
        for i in range(kh):
            ih = oh * sh - ph + i * dh
            if ih < 0 or ih >= height:
                continue  # a padding row never wins
            row = buf[oh * sh + i * dh]
            for j in range(kw):
                src = row[j * dw:]
                offset = ih * width + j * dw - pw
                if sw == 1:
                    _max_taps(src, 1, best, best_at, offset, out_w)
                elif sw == 2:
                    _max_taps(src, 2, best, best_at, offset, out_w)
                else:
                    _max_taps(src, sw, best, best_at, offset, out_w)
        h0 = oh * sh - ph
        for ow in range(out_w):
            y[p, oh, ow] = best[ow]
            if best_at[ow] < 0:
                # every tap was -inf: torch reports the window's first in-bounds element
                w0 = ow * sw - pw
                ih = h0 if h0 >= 0 else h0 + (-h0 + dh - 1) // dh * dh
                iw = w0 if w0 >= 0 else w0 + (-w0 + dw - 1) // dw * dw
                best_at[ow] = ih * width + iw
            idx[p, oh, ow] = best_at[ow]


@_onepool.twin
def _k_maxpool_fwd(x, y, idx, kh, kw, sh, sw, ph, pw, dh, dw):
    """Max pooling one output row at a time; the padding (and the ceil_mode overhang) is a
    -inf border of a padded copy of the plane, so no loop tests bounds."""
    n_planes, height, width = x.shape
    out_h, out_w = y.shape[1], y.shape[2]
    hp = max(height + 2 * ph, (out_h - 1) * sh + (kh - 1) * dh + 1)
    wp = max(width + 2 * pw, (out_w - 1) * sw + (kw - 1) * dw + 1)
    n_blocks = min(n_planes, _N_BLOCKS)
    for blk in numba.prange(n_blocks):
        # scratch once per block of planes: the -inf border is never written, the interior is
        # overwritten by every plane (per-plane allocation cost more than small planes' work)
        buf = np.full((hp, wp), -np.inf, dtype=x.dtype)
        best = np.empty(out_w, dtype=x.dtype)
        best_at = np.empty(out_w, dtype=np.int64)
        lo, hi = _block(blk, n_blocks, n_planes)
        for p in range(lo, hi):
            _maxpool_plane(x, y, idx, p, buf, best, best_at, kh, kw, sh, sw, ph, pw, dh, dw)


# NOTE [Stride-2 max pooling by rows]
# `_k_maxpool_fwd` folds every tap of every window: for ResNet's stem pool (3x3, stride 2,
# padding 1, 32x32 maps) that is 9 passes of 16-wide loops with stride-2 loads per output row,
# 1.6 ms for (8, 64, 32, 32) on one thread, 27x a relu over the same input. With stride 2 the
# max separates: each padded row is split into its even and odd columns (so every tap reads
# consecutive elements), the kw taps are folded along the row once per input row into a row of
# (max, index) pairs, and each output row folds the kh rows of its window. Rows are shared by
# overlapping windows instead of refolded, and every loop is a unit-stride select. The result
# is the one of `_k_maxpool_fwd`, ties and NaNs included: folding row by row in tap order keeps
# its rule (the first maximum in row-major tap order wins, NaN wins and a later NaN replaces an
# earlier one), since the winner of a window is the winner among its rows' winners. (8, 64, 32,
# 32) 3x3/2 padding 1: 1.60 -> 0.72 ms (one thread, best CPU time of 20).


@numba.njit(nogil=True, cache=True, inline="always")
def _fold_row_s2(row, even, odd, hv, h_at, kw, pw, base, out_w):
    """(max, input index) over the kw taps of each stride-2 window along one padded row into
    hv, h_at (index -1 and -inf where every tap is -inf); base: the row's start in the plane."""
    for t in range(even.size):
        even[t] = row[2 * t]
        odd[t] = row[2 * t + 1]
    for ow in range(out_w):
        hv[ow] = -np.inf
        h_at[ow] = -1
    for j in range(kw):
        src = even[j // 2:] if j % 2 == 0 else odd[j // 2:]
        first = base + j - pw  # input index of output 0's tap j
        for ow in range(out_w):
            v = src[ow]
            cur = hv[ow]
            take = (v > cur) | (v != v)
            hv[ow] = _select(take, v, cur)
            h_at[ow] = _select(take, first + 2 * ow, h_at[ow])


@_onepool.twin
def _k_maxpool_s2_fwd(x, y, idx, kh, kw, ph, pw):
    """Max pooling with stride 2 and dilation 1, row by row: NOTE [Stride-2 max pooling by
    rows]. Padding and the ceil_mode overhang are the -inf border of a padded copy."""
    n_planes, height, width = x.shape
    out_h, out_w = y.shape[1], y.shape[2]
    rows = (out_h - 1) * 2 + kh
    hp = max(height + 2 * ph, rows)
    wp = max(width + 2 * pw, (out_w - 1) * 2 + kw)
    wp += wp % 2  # whole (even, odd) column pairs
    n_blocks = min(n_planes, _N_BLOCKS)
    for blk in numba.prange(n_blocks):
        buf = np.full((hp, wp), -np.inf, dtype=x.dtype)  # the border is never written
        even = np.empty(wp // 2, dtype=x.dtype)
        odd = np.empty(wp // 2, dtype=x.dtype)
        hv = np.empty((rows, out_w), dtype=x.dtype)
        h_at = np.empty((rows, out_w), dtype=np.int64)
        lo, hi = _block(blk, n_blocks, n_planes)
        for p in range(lo, hi):
            _fill_interior(buf, x[p], ph, pw)
            for r in range(rows):
                _fold_row_s2(buf[r], even, odd, hv[r], h_at[r], kw, pw, (r - ph) * width,
                             out_w)
            for oh in range(out_h):
                best = y[p, oh]
                best_at = idx[p, oh]
                for ow in range(out_w):
                    best[ow] = -np.inf
                    best_at[ow] = -1
                for i in range(kh):
                    vr = hv[2 * oh + i]
                    ar = h_at[2 * oh + i]
                    for ow in range(out_w):
                        v = vr[ow]
                        cur = best[ow]
                        take = (v > cur) | (v != v)
                        best[ow] = _select(take, v, cur)
                        best_at[ow] = _select(take, ar[ow], best_at[ow])
                h0 = 2 * oh - ph
                for ow in range(out_w):
                    if best_at[ow] < 0:
                        # every tap was -inf: the window's first in-bounds element, as torch
                        w0 = 2 * ow - pw
                        best_at[ow] = max(h0, 0) * width + max(w0, 0)


@_onepool.twin
def _k_maxpool_bwd(gy, idx, gx):
    """Route each output gradient to the input element that won the max (sums over overlaps).

    gy, idx: (P, L); gx: (P, H*W), all C-contiguous. Indexed flat, with no per-plane views or
    slice assignments: on the 2x2 maps of deep layers those cost 10x the scatter itself.
    """
    n_planes, size = gx.shape
    n_out = gy.shape[1]
    g = gy.reshape(-1)
    where = idx.reshape(-1)
    flat = gx.reshape(-1)
    for p in numba.prange(n_planes):
        base = p * size
        plane = flat[base:base + size]
        for t in range(size):
            plane[t] = 0
        for t in range(p * n_out, (p + 1) * n_out):
            at = where[t]
            if 0 <= at < size:  # a window wholly in padding points nowhere
                flat[base + at] += g[t]


# Fewest outputs per row from which `_k_maxpool2x2_fwd` first copies each pair of input rows
# into its four taps' columns: unit-stride loops then vectorize ((8, 64, 32, 32): 0.51 -> 0.10
# ms, (8, 128, 16, 16): 0.26 -> 0.14 ms, one thread, best of 30), while on 8x8 maps and below
# the copies cost more than the strided loads they replace (0.15 -> 0.18 ms at 8x8).
_TAP_COLUMNS_MIN = 8


@numba.njit(nogil=True, cache=True, inline="always")
def _max_2x2(a, b, c, d, yrow, irow, base, width):
    """One output row of 2x2/2 max pooling from its windows' four taps: a, b the top row's
    even and odd columns, c, d the bottom row's (index ow of each is output ow's tap); base
    is the top row's start in the plane. Tap order, ties and NaN as `_k_maxpool_fwd`."""
    for ow in range(yrow.size):
        best = a[ow]
        at = base + 2 * ow
        v = b[ow]
        take = (v > best) | (v != v)
        best = _select(take, v, best)
        at = _select(take, base + 2 * ow + 1, at)
        v = c[ow]
        take = (v > best) | (v != v)
        best = _select(take, v, best)
        at = _select(take, base + width + 2 * ow, at)
        v = d[ow]
        take = (v > best) | (v != v)
        best = _select(take, v, best)
        at = _select(take, base + width + 2 * ow + 1, at)
        yrow[ow] = best
        irow[ow] = at


@_onepool.twin
def _k_maxpool2x2_fwd(x, y, idx):
    """2x2 windows with stride 2, no padding or dilation (the common CNN case): each output
    reads its four inputs directly, no padded copy of the plane (which costs more than the
    arithmetic on the 4x4 and 2x2 maps of deep layers); on wide maps through a copy of the
    taps' columns (_TAP_COLUMNS_MIN). Same tap order, tie and NaN rules as `_k_maxpool_fwd`.
    Kept beside `_k_maxpool_direct_fwd` because the unrolled taps are 2.5x faster than its
    loops ((8,64,32,32): 0.41 vs 1.14 ms)."""
    n_planes, width = x.shape[0], x.shape[2]
    out_h, out_w = y.shape[1], y.shape[2]
    if out_w < _TAP_COLUMNS_MIN:
        for p in numba.prange(n_planes):
            for oh in range(out_h):
                top = x[p, 2 * oh]
                bottom = x[p, 2 * oh + 1]
                _max_2x2(top[0::2], top[1::2], bottom[0::2], bottom[1::2], y[p, oh],
                         idx[p, oh], 2 * oh * width, width)
        return
    n_blocks = min(n_planes, _N_BLOCKS)
    for blk in numba.prange(n_blocks):
        taps = np.empty((4, out_w), dtype=x.dtype)  # scratch once per block of planes
        lo, hi = _block(blk, n_blocks, n_planes)
        for p in range(lo, hi):
            for oh in range(out_h):
                top = x[p, 2 * oh]
                bottom = x[p, 2 * oh + 1]
                for ow in range(out_w):
                    taps[0, ow] = top[2 * ow]
                    taps[1, ow] = top[2 * ow + 1]
                    taps[2, ow] = bottom[2 * ow]
                    taps[3, ow] = bottom[2 * ow + 1]
                _max_2x2(taps[0], taps[1], taps[2], taps[3], y[p, oh], idx[p, oh],
                         2 * oh * width, width)


@_onepool.twin
def _k_maxpool_direct_fwd(x, y, idx, kh, kw, sh, sw):
    """Any window and stride without padding or dilation, every window inside the plane: each
    output folds its taps directly (3x3/2 on 7x7-15x15 maps: 3x faster than the padded-copy
    kernel, whose per-row tap loops are only out_w long there). Same tap order, tie and NaN
    rules as `_k_maxpool_fwd`."""
    n_planes, width = x.shape[0], x.shape[2]
    out_h, out_w = y.shape[1], y.shape[2]
    for p in numba.prange(n_planes):
        for oh in range(out_h):
            r0 = oh * sh
            yrow = y[p, oh]
            irow = idx[p, oh]
            for ow in range(out_w):
                c0 = ow * sw
                best = x[p, r0, c0]
                at = r0 * width + c0
                for i in range(kh):
                    row = x[p, r0 + i]
                    base = (r0 + i) * width + c0
                    for j in range(kw):
                        v = row[c0 + j]
                        take = (v > best) | (v != v)
                        best = _select(take, v, best)
                        at = _select(take, base + j, at)
                yrow[ow] = best
                irow[ow] = at


def maxpool2d_forward(x, kernel, stride, padding, dilation, ceil_mode):
    """Max pooling like torch.nn.functional.max_pool2d(..., return_indices=True).

    Args:
        x: (..., H, W). kernel, stride, padding, dilation: (int, int). ceil_mode: bool.
            Padding acts as -inf.

    Returns:
        (y, indices), both (..., OH, OW); indices are int64 offsets into each H*W plane.
    """
    out_h, out_w = _check_pool_args("max_pool2d", x.shape, kernel, stride, padding, dilation,
                                    ceil_mode)
    lead = x.shape[:-2]
    y = np.empty(lead + (out_h, out_w), dtype=x.dtype)
    indices = np.empty(lead + (out_h, out_w), dtype=np.int64)
    if y.size == 0:
        return y, indices
    direct = (tuple(padding) == (0, 0) and tuple(dilation) == (1, 1)
              and (out_h - 1) * stride[0] + kernel[0] <= x.shape[-2]
              and (out_w - 1) * stride[1] + kernel[1] <= x.shape[-1])  # no ceil_mode overhang
    if direct and tuple(kernel) == (2, 2) and tuple(stride) == (2, 2):
        kernel_args = (_k_maxpool2x2_fwd,)
    elif direct:
        kernel_args = (_k_maxpool_direct_fwd, kernel[0], kernel[1], stride[0], stride[1])
    elif tuple(stride) == (2, 2) and tuple(dilation) == (1, 1):
        # NOTE [Stride-2 max pooling by rows]
        kernel_args = (_k_maxpool_s2_fwd, kernel[0], kernel[1], padding[0], padding[1])
    else:
        kernel_args = (_k_maxpool_fwd, kernel[0], kernel[1], stride[0], stride[1], padding[0],
                       padding[1], dilation[0], dilation[1])
    xp, yp, ip = _planes(x), _planes(y), _planes(indices)
    if _onepool.enabled():  # one pool, never two: NOTE [One pool]
        kernel_args[0].pick(x.size)(xp, yp, ip, *kernel_args[1:])
        return y, indices
    # planes are independent: in parts on the kernel threads (NOTE [Two halves on two threads])
    with conv_scope():  # NOTE [Conv threads] in _kernel_threads.py
        split.run(_on_planes, xp.shape[0], x.size, kernel_args, xp, yp, ip, family="pool")
    return y, indices


def _on_planes(kernel_args, x, y, idx, lo, hi):
    """A pooling kernel on planes [lo, hi) of (P, H, W) x and its outputs."""
    kernel_args[0](x[lo:hi], y[lo:hi], idx[lo:hi], *kernel_args[1:])


def _bwd_on_planes(gy, idx, gx, lo, hi):
    _k_maxpool_bwd(gy[lo:hi], idx[lo:hi], gx[lo:hi])


def maxpool2d_backward(grad_y, indices, input_shape):
    """Gradient of max pooling (also of adaptive max pooling): scatter-add by indices."""
    gx = np.empty(tuple(input_shape), dtype=grad_y.dtype)
    if gx.size == 0:
        return gx
    planes = gx.reshape(-1, gx.shape[-2] * gx.shape[-1])
    n = planes.shape[0]
    if _onepool.enabled():  # one pool, never two: NOTE [One pool]
        _k_maxpool_bwd.pick(gx.size)(np.ascontiguousarray(grad_y.reshape(n, -1)),
                                     np.ascontiguousarray(indices.reshape(n, -1)), planes)
        return gx
    with conv_scope():  # NOTE [Conv threads] in _kernel_threads.py
        split.run(_bwd_on_planes, n, gx.size, np.ascontiguousarray(grad_y.reshape(n, -1)),
                  np.ascontiguousarray(indices.reshape(n, -1)), planes, family="pool")
    return gx


# ---------------------------------------------------------------------------------------------
# Average pooling


@numba.njit(nogil=True, cache=True, inline="always")
def _avg_window(o, k, s, p, size, count_include_pad):
    """Clipped window [lo, hi) of output o along one dim, and its length for the divisor.

    The divisor may count padding but never the ceil_mode overhang past the right padding.
    """
    lo = o * s - p
    hi = min(lo + k, size + p)
    padded_len = hi - lo
    lo = max(lo, 0)
    hi = min(hi, size)
    return lo, hi, padded_len if count_include_pad else hi - lo


@_onepool.twin
def _k_avgpool_fwd(x, y, kh, kw, sh, sw, ph, pw, count_include_pad, divisor_override):
    n_planes, height, width = x.shape
    out_h, out_w = y.shape[1], y.shape[2]
    for p in numba.prange(n_planes):
        for oh in range(out_h):
            h_lo, h_hi, h_len = _avg_window(oh, kh, sh, ph, height, count_include_pad)
            for ow in range(out_w):
                w_lo, w_hi, w_len = _avg_window(ow, kw, sw, pw, width, count_include_pad)
                total = 0.0
                for ih in range(h_lo, h_hi):
                    for iw in range(w_lo, w_hi):
                        total += x[p, ih, iw]
                divisor = divisor_override if divisor_override > 0 else h_len * w_len
                y[p, oh, ow] = total / divisor


@_onepool.twin
def _k_avgpool_bwd(gy, gx, kh, kw, sh, sw, ph, pw, count_include_pad, divisor_override):
    n_planes, height, width = gx.shape
    out_h, out_w = gy.shape[1], gy.shape[2]
    for p in numba.prange(n_planes):
        gx[p] = 0
        for oh in range(out_h):
            h_lo, h_hi, h_len = _avg_window(oh, kh, sh, ph, height, count_include_pad)
            for ow in range(out_w):
                w_lo, w_hi, w_len = _avg_window(ow, kw, sw, pw, width, count_include_pad)
                divisor = divisor_override if divisor_override > 0 else h_len * w_len
                g = gy[p, oh, ow] / divisor
                for ih in range(h_lo, h_hi):
                    for iw in range(w_lo, w_hi):
                        gx[p, ih, iw] += g


def _avg_args(op, shape, kernel, stride, padding, ceil_mode, divisor_override):
    if divisor_override is not None and divisor_override <= 0:
        raise RuntimeError(f"{op}: divisor must be not zero; got divisor_override="
                           f"{divisor_override}.")
    out = _check_pool_args(op, shape, kernel, stride, padding, (1, 1), ceil_mode)
    return out, (0 if divisor_override is None else int(divisor_override))


def avgpool2d_forward(x, kernel, stride, padding, ceil_mode, count_include_pad,
                      divisor_override):
    """Average pooling like torch.nn.functional.avg_pool2d.

    Args:
        x: (..., H, W). kernel, stride, padding: (int, int). divisor_override: int or None.
        count_include_pad: divide by the window size including zero padding (but not the
            ceil_mode overhang) instead of the number of input elements it covers.

    Returns:
        y (..., OH, OW).
    """
    (out_h, out_w), divisor = _avg_args("avg_pool2d", x.shape, kernel, stride, padding,
                                        ceil_mode, divisor_override)
    y = np.empty(x.shape[:-2] + (out_h, out_w), dtype=x.dtype)
    if y.size:
        _k_avgpool_fwd.pick(x.size)(_planes(x), _planes(y), kernel[0], kernel[1], stride[0],
                                    stride[1], padding[0], padding[1], bool(count_include_pad),
                                    divisor)
    return y


def avgpool2d_backward(grad_y, input_shape, kernel, stride, padding, ceil_mode,
                       count_include_pad, divisor_override):
    """Gradient of `avgpool2d_forward`: each output spreads grad / divisor over its window."""
    _, divisor = _avg_args("avg_pool2d", input_shape, kernel, stride, padding, ceil_mode,
                           divisor_override)
    gx = np.empty(tuple(input_shape), dtype=grad_y.dtype)
    if gx.size:
        _k_avgpool_bwd.pick(gx.size)(_planes(grad_y), _planes(gx), kernel[0], kernel[1],
                                     stride[0], stride[1], padding[0], padding[1],
                                     bool(count_include_pad), divisor)
    return gx


# ---------------------------------------------------------------------------------------------
# Adaptive pooling: output cell o covers [floor(o*size/out), ceil((o+1)*size/out)).


@numba.njit(nogil=True, cache=True, inline="always")
def _adaptive_window(o, size, out):
    return (o * size) // out, ((o + 1) * size + out - 1) // out


@numba.njit(nogil=True, cache=True, inline="always")
def _adaptive_windows(size, out):
    """(lo, hi) of every output cell, computed once per call: two integer divisions per cell
    and plane cost more than averaging a 2x2 window (MobileNetV2's (16,1280,2,2) global pool
    took 250 us)."""
    lo = np.empty(out, dtype=np.int64)
    hi = np.empty(out, dtype=np.int64)
    for o in range(out):
        lo[o], hi[o] = _adaptive_window(o, size, out)
    return lo, hi


@numba.njit(nogil=True, cache=True, parallel=PARALLEL)
def _k_adaptive_avgpool_fwd(x, y):
    n_planes, height, width = x.shape
    out_h, out_w = y.shape[1], y.shape[2]
    h_lo, h_hi = _adaptive_windows(height, out_h)
    w_lo, w_hi = _adaptive_windows(width, out_w)
    for p in numba.prange(n_planes):
        for oh in range(out_h):
            for ow in range(out_w):
                total = 0.0
                for ih in range(h_lo[oh], h_hi[oh]):
                    for iw in range(w_lo[ow], w_hi[ow]):
                        total += x[p, ih, iw]
                y[p, oh, ow] = total / ((h_hi[oh] - h_lo[oh]) * (w_hi[ow] - w_lo[ow]))


@numba.njit(nogil=True, cache=True, parallel=PARALLEL)
def _k_adaptive_avgpool_bwd(gy, gx):
    n_planes, height, width = gx.shape
    out_h, out_w = gy.shape[1], gy.shape[2]
    h_lo, h_hi = _adaptive_windows(height, out_h)
    w_lo, w_hi = _adaptive_windows(width, out_w)
    for p in numba.prange(n_planes):
        gx[p] = 0
        for oh in range(out_h):
            for ow in range(out_w):
                g = gy[p, oh, ow] / ((h_hi[oh] - h_lo[oh]) * (w_hi[ow] - w_lo[ow]))
                for ih in range(h_lo[oh], h_hi[oh]):
                    for iw in range(w_lo[ow], w_hi[ow]):
                        gx[p, ih, iw] += g


@numba.njit(nogil=True, cache=True, parallel=PARALLEL)
def _k_adaptive_maxpool_fwd(x, y, idx):
    n_planes, height, width = x.shape
    out_h, out_w = y.shape[1], y.shape[2]
    for p in numba.prange(n_planes):
        for oh in range(out_h):
            h_lo, h_hi = _adaptive_window(oh, height, out_h)
            for ow in range(out_w):
                w_lo, w_hi = _adaptive_window(ow, width, out_w)
                best = x[p, h_lo, w_lo]
                best_at = h_lo * width + w_lo
                for ih in range(h_lo, h_hi):
                    for iw in range(w_lo, w_hi):
                        v = x[p, ih, iw]
                        take = (v > best) | (v != v)
                        best = _select(take, v, best)
                        best_at = _select(take, ih * width + iw, best_at)
                y[p, oh, ow] = best
                idx[p, oh, ow] = best_at


def _adaptive_out(op, shape, output_size):
    """Resolve output_size (int, (int|None, int|None)) against the input's H, W."""
    if isinstance(output_size, int):
        output_size = (output_size, output_size)
    out_h = shape[-2] if output_size[0] is None else int(output_size[0])
    out_w = shape[-1] if output_size[1] is None else int(output_size[1])
    if out_h < 0 or out_w < 0 or (shape[-2] * shape[-1] == 0 and out_h * out_w > 0):
        raise RuntimeError(f"{op}: cannot pool input of shape {tuple(shape)} to output_size "
                           f"{(out_h, out_w)}; expected non-empty H and W and sizes >= 0.")
    return out_h, out_w


@numba.njit(nogil=True, cache=True)
def _k_global_avgpool_fwd(x, y):
    """y[p] = mean of row p of the (planes, H*W) x: adaptive pooling to 1x1."""
    n_planes, size = x.shape
    for p in range(n_planes):
        total = 0.0
        for t in range(size):
            total += x[p, t]
        y[p] = total / size


@numba.njit(nogil=True, cache=True)
def _k_global_avgpool_bwd(gy, gx):
    n_planes, size = gx.shape
    for p in range(n_planes):
        g = gy[p] / size
        for t in range(size):
            gx[p, t] = g


def _global(x_shape, out_hw):
    # pooling to 1x1 (classifier heads) runs on flat planes: 4-6x faster than the windowed
    # kernels on (16,1280,2,2)
    return out_hw == (1, 1) and x_shape[-2] * x_shape[-1] > 0


def adaptive_avgpool2d_forward(x, output_size):
    """Adaptive average pooling like torch.nn.functional.adaptive_avg_pool2d: (..., OH, OW)."""
    out_h, out_w = _adaptive_out("adaptive_avg_pool2d", x.shape, output_size)
    y = np.empty(x.shape[:-2] + (out_h, out_w), dtype=x.dtype)
    if y.size and _global(x.shape, (out_h, out_w)):
        flat = np.ascontiguousarray(x).reshape(-1, x.shape[-2] * x.shape[-1])
        _k_global_avgpool_fwd(flat, y.reshape(-1))
    elif y.size:
        _k_adaptive_avgpool_fwd(_planes(x), _planes(y))
    return y


def adaptive_avgpool2d_backward(grad_y, input_shape):
    """Gradient of `adaptive_avgpool2d_forward` (the output size is grad_y's)."""
    gx = np.empty(tuple(input_shape), dtype=grad_y.dtype)
    if gx.size and _global(gx.shape, grad_y.shape[-2:]):
        _k_global_avgpool_bwd(np.ascontiguousarray(grad_y).reshape(-1),
                              gx.reshape(-1, gx.shape[-2] * gx.shape[-1]))
    elif gx.size:
        _k_adaptive_avgpool_bwd(_planes(grad_y), _planes(gx))
    return gx


def adaptive_maxpool2d_forward(x, output_size):
    """Adaptive max pooling like torch's adaptive_max_pool2d(..., return_indices=True).

    Returns:
        (y, indices), indices int64 offsets into each H*W input plane.
    """
    out_h, out_w = _adaptive_out("adaptive_max_pool2d", x.shape, output_size)
    y = np.empty(x.shape[:-2] + (out_h, out_w), dtype=x.dtype)
    indices = np.empty(y.shape, dtype=np.int64)
    if y.size:
        _k_adaptive_maxpool_fwd(_planes(x), _planes(y), _planes(indices))
    return y, indices


def adaptive_maxpool2d_backward(grad_y, indices, input_shape):
    """Gradient of `adaptive_maxpool2d_forward`: the same scatter-add as max pooling."""
    return maxpool2d_backward(grad_y, indices, input_shape)
