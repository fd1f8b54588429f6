"""im2col and col2im: the packing behind every convolution here, and F.unfold / F.fold.

``cols`` is laid out (C*kh*kw, N, L), L = OH*OW: one row per (input channel, kernel tap) over the
whole batch, so a convolution is one GEMM per group (NOTE [Convolution as one GEMM] in conv.py).
`geo` = (kh, kw, sh, sw, ph, pw, dh, dw) throughout; arrays are C-contiguous NCHW.
"""

import functools

import numba
import numpy as np

from ... import _onepool
from . import split
from .planes import _N_BLOCKS, _block, _crop_plane, _fill_interior, _zero

# The prange loops run serially (NOTE [Kernel threading] in conv.py), in parallel on the one
# pool when it is on (twins: NOTE [One pool] in ember/_onepool.py).


def _out_hw(height, width, geo):
    """Output (OH, OW) of a convolution, floor rule."""
    kh, kw, sh, sw, ph, pw, dh, dw = geo
    return ((height + 2 * ph - dh * (kh - 1) - 1) // sh + 1,
            (width + 2 * pw - dw * (kw - 1) - 1) // sw + 1)




@_onepool.twin
def _k_unfold_fwd(x, cols, kh, kw, sh, sw, ph, pw, dh, dw, out_h, out_w):
    """im2col: cols[(c*kh + i)*kw + j, n, oh*out_w + ow] = x[n, c, oh*sh-ph+i*dh, ow*sw-pw+j*dw].

    Zero where the tap falls in the padding. cols may be any (rows, N, L) view.
    """
    n_batch, n_chan, height, width = x.shape
    total = n_batch * n_chan
    n_blocks = min(total, _N_BLOCKS)
    for blk in numba.prange(n_blocks):
        buf = np.zeros((height + 2 * ph, width + 2 * pw), dtype=x.dtype)
        lo, hi = _block(blk, n_blocks, total)
        for nc in range(lo, hi):
            c, n = nc // n_batch, nc % n_batch  # channel-major: see NOTE [Convolution as one GEMM]
            _fill_interior(buf, x[n, c], ph, pw)
            for i in range(kh):
                for j in range(kw):
                    crow = cols[(c * kh + i) * kw + j, n]
                    for oh in range(out_h):
                        src = buf[oh * sh + i * dh, j * dw:]
                        dst = crow[oh * out_w:]
                        if sw == 1:
                            for t in range(out_w):
                                dst[t] = src[t]
                        elif sw == 2:  # literal strides vectorize, see _axpy_strided
                            for t in range(out_w):
                                dst[t] = src[t * 2]
                        else:
                            for t in range(out_w):
                                dst[t] = src[t * sw]


@_onepool.twin
def _k_unfold_bwd(cols, x, kh, kw, sh, sw, ph, pw, dh, dw, out_h, out_w):
    """col2im, the adjoint of im2col: x is overwritten with the sum of every patch entry."""
    n_batch, n_chan, height, width = x.shape
    total = n_batch * n_chan
    n_blocks = min(total, _N_BLOCKS)
    for blk in numba.prange(n_blocks):
        buf = np.empty((height + 2 * ph, width + 2 * pw), dtype=x.dtype)
        lo, hi = _block(blk, n_blocks, total)
        for nc in range(lo, hi):
            c, n = nc // n_batch, nc % n_batch  # channel-major: see NOTE [Convolution as one GEMM]
            _zero(buf.ravel())
            for i in range(kh):
                for j in range(kw):
                    crow = cols[(c * kh + i) * kw + j, n]
                    for oh in range(out_h):
                        dst = buf[oh * sh + i * dh, j * dw:]
                        src = crow[oh * out_w:]
                        if sw == 1:
                            for t in range(out_w):
                                dst[t] += src[t]
                        elif sw == 2:
                            for t in range(out_w):
                                dst[t * 2] += src[t]
                        else:
                            for t in range(out_w):
                                dst[t * sw] += src[t]
            _crop_plane(buf, x[n, c], ph, pw)




# NOTE [Gathered im2col on small maps]
# The row kernels above copy runs of OW numbers: on deep layers' maps (2x2 to 8x8) those runs are
# 2-8 long and the loop set-up per run costs more than the copy. There each row of cols, one
# (channel, tap) pair over the whole batch, is instead gathered through a small index table:
# idx[t, n*L + l] is where output l of sample n reads for tap t, relative to channel 0 (-1 in the
# padding), so a row is ONE loop of N*L gathers (several times faster on 2x2 and 4x4 maps).
# Strided rows are gathers anyway and gain at any width, as do 15-wide 5x5 rows; stride-1 rows of
# 16 and more stay with the row copies, hence _gathered. Tables are cached per shape; one is
# capped at _GATHER_MAX_INDEX entries (4 MiB) so that big images keep the row kernels instead of
# large tables. Measured by ``python benchmarks/kernels.py --only conv``; figures in
# benchmarks/RESULTS.md, "Figures behind the design notes".
_GATHER_MAX_WIDTH = 15
_GATHER_MAX_INDEX = 1 << 20


def _gathered(geo, n_batch, out_h, out_w):
    if geo[0] * geo[1] * n_batch * out_h * out_w > _GATHER_MAX_INDEX:
        return False
    return out_w <= _GATHER_MAX_WIDTH or geo[3] > 1


@functools.lru_cache(maxsize=16)
def _gather_index(x_shape, geo, out_h, out_w):
    """The index table of NOTE [Gathered im2col on small maps] for a C-contiguous x."""
    n_batch, n_chan, height, width = x_shape
    kh, kw, sh, sw, ph, pw, dh, dw = geo
    ih = np.arange(out_h)[:, None] * sh - ph + np.arange(kh)[None, :] * dh  # (OH, kh)
    iw = np.arange(out_w)[:, None] * sw - pw + np.arange(kw)[None, :] * dw  # (OW, kw)
    inside = (((ih >= 0) & (ih < height))[:, None, :, None]
              & ((iw >= 0) & (iw < width))[None, :, None, :])  # (OH, OW, kh, kw)
    at = ih[:, None, :, None] * width + iw[None, :, None, :]
    at = np.where(inside, at, -1).reshape(out_h * out_w, kh * kw).T  # (taps, L)
    sample = (np.arange(n_batch) * (n_chan * height * width))[None, :, None]
    idx = np.where(at[:, None, :] >= 0, at[:, None, :] + sample, -1)
    # int32 where it fits: half the table to keep in cache (ResNet-50's 7x7 stem: 1.6 MB)
    small = n_batch * n_chan * height * width < 2 ** 31
    idx = np.ascontiguousarray(idx.reshape(kh * kw, n_batch * out_h * out_w),
                               dtype=np.int32 if small else np.int64)
    idx.flags.writeable = False  # shared by every call through the cache
    return idx


@numba.njit(nogil=True, cache=True)
def _k_unfold_gather(x, cols, idx, lo, hi):
    """im2col through the index table: cols (C*T, N, L), both C-contiguous; channels [lo, hi)."""
    n_chan = x.shape[1]
    plane = x.shape[2] * x.shape[3]
    n_taps, m = idx.shape
    xf = x.ravel()
    rows = cols.reshape(n_chan * n_taps, m)
    for c in range(lo, hi):
        src = xf[c * plane:]
        for t in range(n_taps):
            dst = rows[c * n_taps + t]
            at = idx[t]
            for q in range(m):
                k = at[q]
                dst[q] = src[k] if k >= 0 else 0


@numba.njit(nogil=True, cache=True)
def _k_fold_gather(cols, x, idx, lo, hi):
    """col2im through the index table: x[:, lo:hi] is overwritten with the sum of every patch
    entry of channels [lo, hi) (each channel writes only its own planes)."""
    n_batch, n_chan = x.shape[0], x.shape[1]
    plane = x.shape[2] * x.shape[3]
    n_taps, m = idx.shape
    xf = x.ravel()
    for n in range(n_batch):
        _zero(xf[(n * n_chan + lo) * plane:(n * n_chan + hi) * plane])
    rows = cols.reshape(n_chan * n_taps, m)
    for c in range(lo, hi):
        dst = xf[c * plane:]
        for t in range(n_taps):
            src = rows[c * n_taps + t]
            at = idx[t]
            for q in range(m):
                k = at[q]
                if k >= 0:
                    dst[k] += src[q]


@numba.njit(nogil=True, cache=True)
def _k_unfold_rows(x, rows, idx, lo, hi):
    """im2col with one row per output pixel through the index table: rows (N*L, C*T)
    C-contiguous, rows [lo, hi) (NOTE [Pixels as rows on small maps] in conv.py)."""
    n_chan = x.shape[1]
    plane = x.shape[2] * x.shape[3]
    n_taps = idx.shape[0]
    xf = x.ravel()
    for q in range(lo, hi):
        dst = rows[q]
        for c in range(n_chan):
            src = xf[c * plane:]
            for t in range(n_taps):
                k = idx[t, q]
                dst[c * n_taps + t] = src[k] if k >= 0 else 0


@numba.njit(nogil=True, cache=True)
def _k_fold_rows(rows, x, idx, lo, hi):
    """col2im of rows (N*L, C*T), the adjoint of `_k_unfold_rows`: x[:, lo:hi] is overwritten
    with the sums of channels [lo, hi) (each channel writes only its own planes)."""
    n_batch, n_chan = x.shape[0], x.shape[1]
    plane = x.shape[2] * x.shape[3]
    n_taps, m = idx.shape
    xf = x.ravel()
    for n in range(n_batch):
        _zero(xf[(n * n_chan + lo) * plane:(n * n_chan + hi) * plane])
    for c in range(lo, hi):
        dst = xf[c * plane:]
        for q in range(m):
            src = rows[q, c * n_taps:(c + 1) * n_taps]
            for t in range(n_taps):
                k = idx[t, q]
                if k >= 0:
                    dst[k] += src[t]


# parts drivers on the one pool: NOTE [Ranges on the one pool] in split.py
@_onepool.twin
def _p_unfold_gather(x, cols, idx, n, parts):
    for p in numba.prange(parts):
        _k_unfold_gather(x, cols, idx, n * p // parts, n * (p + 1) // parts)


@_onepool.twin
def _p_fold_gather(cols, x, idx, n, parts):
    for p in numba.prange(parts):
        _k_fold_gather(cols, x, idx, n * p // parts, n * (p + 1) // parts)


@_onepool.twin
def _p_unfold_rows(x, rows, idx, n, parts):
    for p in numba.prange(parts):
        _k_unfold_rows(x, rows, idx, n * p // parts, n * (p + 1) // parts)


@_onepool.twin
def _p_fold_rows(rows, x, idx, n, parts):
    for p in numba.prange(parts):
        _k_fold_rows(rows, x, idx, n * p // parts, n * (p + 1) // parts)


split.pooled(_k_unfold_gather, _p_unfold_gather)
split.pooled(_k_fold_gather, _p_fold_gather)
split.pooled(_k_unfold_rows, _p_unfold_rows)
split.pooled(_k_fold_rows, _p_fold_rows)


def _unfold(x, cols, geo, out_h, out_w):
    """im2col of x into the C-contiguous cols (C*kh*kw, N, L), by rows or gathered."""
    if _gathered(geo, x.shape[0], out_h, out_w):
        # NOTE [Two halves on two threads] in split.py
        split.run(_k_unfold_gather, x.shape[1], cols.size, x, cols,
                  _gather_index(x.shape, geo, out_h, out_w), family="im2col")
    else:
        _k_unfold_fwd.pick(cols.size)(x, cols, *geo, out_h, out_w)


def _unfold_rows(x, rows, geo, out_h, out_w):
    """im2col of x into rows (N*L, C*kh*kw), one C-contiguous row per output pixel."""
    split.run(_k_unfold_rows, rows.shape[0], rows.size, x, rows,
              _gather_index(x.shape, geo, out_h, out_w), family="im2col")


def _fold_rows(rows, x, geo, out_h, out_w):
    """col2im of rows (N*L, C*kh*kw) into the C-contiguous x, the adjoint of `_unfold_rows`."""
    split.run(_k_fold_rows, x.shape[1], rows.size, rows, x,
              _gather_index(x.shape, geo, out_h, out_w), family="im2col")


def _fold(cols, x, geo, out_h, out_w):
    """col2im of the C-contiguous cols into x, the adjoint of `_unfold`."""
    if _gathered(geo, x.shape[0], out_h, out_w):
        split.run(_k_fold_gather, x.shape[1], cols.size, cols, x,
                  _gather_index(x.shape, geo, out_h, out_w), family="im2col")
    else:
        _k_unfold_bwd.pick(cols.size)(cols, x, *geo, out_h, out_w)



def _geometry(w_shape, stride, padding, dilation):
    return (w_shape[2], w_shape[3], stride[0], stride[1], padding[0], padding[1],
            dilation[0], dilation[1])


def _im2col(x, geo, out_h, out_w, buf=None):
    """Pack x (n, C, H, W) into cols (C*kh*kw, n, L); see NOTE [Convolution as one GEMM].

    buf, if given, is a flat scratch array of at least that many elements (reused by chunks).
    """
    kh, kw = geo[0], geo[1]
    n, c = x.shape[0], x.shape[1]
    shape = (c * kh * kw, n, out_h * out_w)
    if buf is None:
        cols = np.empty(shape, dtype=x.dtype)
    else:
        cols = buf[:shape[0] * n * shape[2]].reshape(shape)
    _unfold(x, cols, geo, out_h, out_w)
    return cols


def unfold(x, kernel_size, dilation, padding, stride):
    """im2col like torch.nn.functional.unfold: (N, C, H, W) -> (N, C*kh*kw, L).

    Rows are ordered (c, i, j) and columns (oh, ow), both row-major, as in torch.
    """
    n, c, h, wd = x.shape
    kh, kw = kernel_size
    geo = _geometry((0, 0, kh, kw), stride, padding, dilation)
    out_h, out_w = _out_hw(h, wd, geo)
    cols = np.empty((n, c * kh * kw, out_h * out_w), dtype=x.dtype)
    if cols.size:
        _k_unfold_fwd.pick(cols.size)(x, cols.transpose(1, 0, 2), *geo, out_h, out_w)
    return cols


def fold(cols, output_size, kernel_size, dilation, padding, stride):
    """col2im like torch.nn.functional.fold: (N, C*kh*kw, L) -> (N, C, H, W), summing overlaps.

    fold is the adjoint of unfold, so each is the other's backward.
    """
    n, rows, length = cols.shape
    kh, kw = kernel_size
    h, wd = output_size
    geo = _geometry((0, 0, kh, kw), stride, padding, dilation)
    out_h, out_w = _out_hw(h, wd, geo)
    if rows % (kh * kw) != 0 or length != out_h * out_w:
        raise RuntimeError(
            f"fold: input shape {cols.shape} does not match kernel_size {kernel_size} and "
            f"output_size {output_size}; expected ({n}, C*{kh * kw}, {out_h * out_w}).")
    x = np.empty((n, rows // (kh * kw), h, wd), dtype=cols.dtype)
    if x.size:
        _k_unfold_bwd.pick(cols.size)(cols.transpose(1, 0, 2), x, *geo, out_h, out_w)
    return x
