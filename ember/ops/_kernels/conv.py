"""2-D convolution kernels: numba packs patches (im2col / col2im), BLAS does the arithmetic.

All arrays are C-contiguous NCHW; stride, padding and dilation are ``(int, int)`` tuples; outputs
have the dtype of the input (float32 or float64). A 1-D convolution is the 2-D one with ``H == 1``
and a ``(1, k)`` kernel: every loop below is over whole rows, so a height of one costs nothing.

NOTE [Convolution as one GEMM]
im2col writes, for every input channel c and kernel tap (i, j), one row of ``cols`` holding the
input pixel that tap sees at each output position. We lay ``cols`` out as (C*kh*kw, N, L) with
L = OH*OW, so the whole batch is one GEMM ``W (O, C*kh*kw) @ cols`` (one group at a time stacked
by np.matmul): one large product keeps both BLAS threads busy even when L is small (8x8 maps),
where per-sample GEMMs would be thin. The price is a transpose of the (O, N, L) product back to
NCHW, which moves O*N*L numbers, few next to the C*kh*kw*N*L of the packing itself.
Each row of ``cols`` is written as contiguous runs of OW numbers read from one input row, so the
packing streams through memory; it runs in parallel over (sample, channel) pairs, which own
disjoint rows of ``cols`` and disjoint planes of the input gradient, so col2im needs no atomics.
Large batches are processed in chunks so that ``cols`` stays under ``_COLS_BUDGET`` elements.

NOTE [Kernel threading]
The GEMMs already run on every core through OpenBLAS's own threads. numba's default OpenMP pool
busy-waits for milliseconds after each parallel loop, and OpenBLAS's workers spin (yielding)
after each GEMM, so alternating the two pools makes them fight for the same cores: on a 2-core
machine conv fwd+bwd (8,256,8,8)x(256,256,3,3) took 25 ms with parallel packing against 11 ms
serial (the GEMMs alone take 8 ms). So the loops are written with prange, which documents the
independent axis, but compile serially; the kernels are nogil, so callers that want more
parallelism can run them from threads. Set PARALLEL = True only together with a threading layer
that sleeps instead of spinning (numba's workqueue, or tbb) and measure first.
"""

import numba
import numpy as np

# Whether the packing kernels run their prange loops on numba's thread pool.
# see NOTE [Kernel threading]
PARALLEL = False

# Elements in one im2col buffer (64 MiB in float32); bounds memory for big batches or images.
_COLS_BUDGET = 1 << 24


def _out_size(size, k, s, p, d):
    """Output length of a convolution along one dim (floor rule)."""
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


@numba.njit(nogil=True, cache=True, inline="always")
def _pad_plane(plane, ph, pw, hp, wp):
    """Copy one (H, W) plane into a zeroed (hp, wp) buffer at offset (ph, pw).

    Working on a padded copy keeps every inner loop free of bounds tests: a loop that starts at
    0 and reads src[t] or src[t * s] lets LLVM prove the index is non-negative, drop numba's
    negative-index wraparound and vectorize.
    """
    buf = np.zeros((hp, wp), dtype=plane.dtype)
    for r in range(plane.shape[0]):
        src = plane[r]
        dst = buf[r + ph, pw:]
        for t in range(plane.shape[1]):
            dst[t] = src[t]
    return buf


@numba.njit(nogil=True, cache=True, inline="always")
def _crop_plane(buf, plane, ph, pw):
    """Inverse of `_pad_plane`: copy the (H, W) interior of buf into plane."""
    for r in range(plane.shape[0]):
        src = buf[r + ph, pw:]
        dst = plane[r]
        for t in range(plane.shape[1]):
            dst[t] = src[t]


@numba.njit(nogil=True, cache=True, inline="always")
def _axpy_strided(dst, alpha, src, s, count):
    """dst[t] += alpha * src[t * s] for t < count; stride 1 gets its own contiguous loop."""
    if s == 1:
        for t in range(count):
            dst[t] += alpha * src[t]
    else:
        for t in range(count):
            dst[t] += alpha * src[t * s]


@numba.njit(nogil=True, cache=True, inline="always")
def _scatter_strided(dst, alpha, src, s, count):
    """dst[t * s] += alpha * src[t] for t < count (the adjoint of `_axpy_strided`)."""
    if s == 1:
        for t in range(count):
            dst[t] += alpha * src[t]
    else:
        for t in range(count):
            dst[t * s] += alpha * src[t]


@numba.njit(nogil=True, cache=True, parallel=PARALLEL)
def _k_unfold_fwd(x, cols, kh, kw, sh, sw, ph, pw, dh, dw, out_h, out_w):
    """im2col: cols[(c*kh + i)*kw + j, n, oh*out_w + ow] = x[n, c, oh*sh-ph+i*dh, ow*sw-pw+j*dw].

    Zero where the tap falls in the padding. cols may be any (rows, N, L) view.
    """
    n_batch, n_chan, height, width = x.shape
    hp, wp = height + 2 * ph, width + 2 * pw
    for nc in numba.prange(n_batch * n_chan):
        n = nc // n_chan
        c = nc % n_chan
        buf = _pad_plane(x[n, c], ph, pw, hp, wp)
        for i in range(kh):
            for j in range(kw):
                crow = cols[(c * kh + i) * kw + j, n]
                for oh in range(out_h):
                    src = buf[oh * sh + i * dh, j * dw:]
                    dst = crow[oh * out_w:]
                    if sw == 1:
                        for t in range(out_w):
                            dst[t] = src[t]
                    else:
                        for t in range(out_w):
                            dst[t] = src[t * sw]


@numba.njit(nogil=True, cache=True, parallel=PARALLEL)
def _k_unfold_bwd(cols, x, kh, kw, sh, sw, ph, pw, dh, dw, out_h, out_w):
    """col2im, the adjoint of im2col: x is overwritten with the sum of every patch entry."""
    n_batch, n_chan, height, width = x.shape
    hp, wp = height + 2 * ph, width + 2 * pw
    for nc in numba.prange(n_batch * n_chan):
        n = nc // n_chan
        c = nc % n_chan
        buf = np.zeros((hp, wp), dtype=x.dtype)
        for i in range(kh):
            for j in range(kw):
                crow = cols[(c * kh + i) * kw + j, n]
                for oh in range(out_h):
                    dst = buf[oh * sh + i * dh, j * dw:]
                    src = crow[oh * out_w:]
                    if sw == 1:
                        for t in range(out_w):
                            dst[t] += src[t]
                    else:
                        for t in range(out_w):
                            dst[t * sw] += src[t]
        _crop_plane(buf, x[n, c], ph, pw)


@numba.njit(nogil=True, cache=True, parallel=PARALLEL)
def _k_depthwise_fwd(x, w, y, sh, sw, ph, pw, dh, dw):
    """Direct depthwise convolution: output channel o reads only input channel o // multiplier."""
    n_batch, n_chan, height, width = x.shape
    _, n_out, out_h, out_w = y.shape
    kh, kw = w.shape[2], w.shape[3]
    mult = n_out // n_chan
    hp, wp = height + 2 * ph, width + 2 * pw
    for no in numba.prange(n_batch * n_out):
        n = no // n_out
        o = no % n_out
        buf = _pad_plane(x[n, o // mult], ph, pw, hp, wp)
        acc = np.zeros(out_w, dtype=y.dtype)
        for oh in range(out_h):
            acc[:] = 0
            for i in range(kh):
                row = buf[oh * sh + i * dh]
                for j in range(kw):
                    _axpy_strided(acc, w[o, 0, i, j], row[j * dw:], sw, out_w)
            y[n, o, oh] = acc


@numba.njit(nogil=True, cache=True, parallel=PARALLEL)
def _k_depthwise_input_bwd(gy, w, gx, sh, sw, ph, pw, dh, dw):
    """Input gradient of depthwise conv, scattered per (sample, input channel): no races."""
    n_batch, n_chan, height, width = gx.shape
    _, n_out, out_h, out_w = gy.shape
    kh, kw = w.shape[2], w.shape[3]
    mult = n_out // n_chan
    hp, wp = height + 2 * ph, width + 2 * pw
    for nc in numba.prange(n_batch * n_chan):
        n = nc // n_chan
        c = nc % n_chan
        buf = np.zeros((hp, wp), dtype=gx.dtype)
        for o in range(c * mult, (c + 1) * mult):
            for oh in range(out_h):
                g = gy[n, o, oh]
                for i in range(kh):
                    row = buf[oh * sh + i * dh]
                    for j in range(kw):
                        _scatter_strided(row[j * dw:], w[o, 0, i, j], g, sw, out_w)
        _crop_plane(buf, gx[n, c], ph, pw)


@numba.njit(nogil=True, cache=True, parallel=PARALLEL)
def _k_depthwise_weight_bwd(gy, x, gw_per_sample, sh, sw, ph, pw, dh, dw):
    """Weight gradient of depthwise conv, one partial per (sample, channel); caller sums over N."""
    n_batch, n_chan, height, width = x.shape
    _, n_out, out_h, out_w = gy.shape
    kh, kw = gw_per_sample.shape[2], gw_per_sample.shape[3]
    mult = n_out // n_chan
    hp, wp = height + 2 * ph, width + 2 * pw
    for no in numba.prange(n_batch * n_out):
        n = no // n_out
        o = no % n_out
        buf = _pad_plane(x[n, o // mult], ph, pw, hp, wp)
        # per-column partial sums: a vectorizable update, reduced once at the end of each tap
        acc = np.empty(out_w, dtype=x.dtype)
        for i in range(kh):
            for j in range(kw):
                acc[:] = 0
                for oh in range(out_h):
                    g = gy[n, o, oh]
                    row = buf[oh * sh + i * dh, j * dw:]
                    if sw == 1:
                        for t in range(out_w):
                            acc[t] += g[t] * row[t]
                    else:
                        for t in range(out_w):
                            acc[t] += g[t] * row[t * sw]
                gw_per_sample[n, o, i, j] = acc.sum()


# ---------------------------------------------------------------------------------------------
# Shared drivers. `geo` = (kh, kw, sh, sw, ph, pw, dh, dw); shapes are full NCHW / OIHW tuples.


def _geometry(w_shape, stride, padding, dilation):
    return (w_shape[2], w_shape[3], stride[0], stride[1], padding[0], padding[1],
            dilation[0], dilation[1])


def _is_depthwise(n_in, w_shape, groups):
    # one input channel per group; the direct loop beats `groups` tiny GEMMs
    return groups == n_in and groups > 1 and w_shape[1] == 1


def _is_pointwise(geo):
    # 1x1, stride 1, no padding: the convolution is a matmul on the untouched input
    kh, kw, sh, sw, ph, pw, _, _ = geo
    return kh == 1 and kw == 1 and sh == 1 and sw == 1 and ph == 0 and pw == 0


def _batch_chunk(rows, length):
    """Samples per im2col chunk so that a (rows, chunk, length) buffer fits the budget."""
    return max(1, _COLS_BUDGET // max(1, rows * length))


def _im2col(x, geo, out_h, out_w):
    """Pack x (n, C, H, W) into cols laid out (C*kh*kw, n, L); see NOTE [Convolution as one GEMM]."""
    kh, kw = geo[0], geo[1]
    n, c = x.shape[0], x.shape[1]
    cols = np.empty((c * kh * kw, n, out_h * out_w), dtype=x.dtype)
    _k_unfold_fwd(x, cols, *geo, out_h, out_w)
    return cols


def _conv_forward(x, w, geo, groups):
    """Convolution without bias: (N, C, H, W) * (O, C/groups, kh, kw) -> (N, O, OH, OW)."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    out_h = _out_size(h, kh, geo[2], geo[4], geo[6])
    out_w = _out_size(wd, kw, geo[3], geo[5], geo[7])
    y = np.empty((n, o, out_h, out_w), dtype=x.dtype)
    if n == 0 or y.size == 0:
        return y
    if _is_depthwise(c, w.shape, groups):
        _k_depthwise_fwd(x, w, y, *geo[2:])
        return y
    w3 = w.reshape(groups, o // groups, cg * kh * kw)
    if _is_pointwise(geo):
        x4 = x.reshape(n, groups, cg, h * wd)
        np.matmul(w3, x4, out=y.reshape(n, groups, o // groups, h * wd))
        return y
    length = out_h * out_w
    chunk = _batch_chunk(c * kh * kw, length)
    for n0 in range(0, n, chunk):
        xs = x[n0:n0 + chunk]
        nb = xs.shape[0]
        cols = _im2col(xs, geo, out_h, out_w).reshape(groups, cg * kh * kw, nb * length)
        prod = np.matmul(w3, cols).reshape(o, nb, length)
        y[n0:n0 + nb].reshape(nb, o, length)[...] = prod.transpose(1, 0, 2)
    return y


def _conv_input_grad(gy, w, x_shape, geo, groups):
    """Adjoint of `_conv_forward` in x: gradient (N, C, H, W) from gy (N, O, OH, OW)."""
    n, c, h, wd = x_shape
    o, cg, kh, kw = w.shape
    out_h, out_w = gy.shape[2], gy.shape[3]
    if n == 0 or gy.size == 0:
        return np.zeros(x_shape, dtype=gy.dtype)
    gx = np.empty(x_shape, dtype=gy.dtype)
    if _is_depthwise(c, w.shape, groups):
        _k_depthwise_input_bwd(gy, w, gx, *geo[2:])
        return gx
    # (G, C/G*kh*kw, O/G): the transposed weight of each group
    wt = w.reshape(groups, o // groups, cg * kh * kw).transpose(0, 2, 1)
    if _is_pointwise(geo):
        gy4 = gy.reshape(n, groups, o // groups, h * wd)
        np.matmul(wt, gy4, out=gx.reshape(n, groups, cg, h * wd))
        return gx
    length = out_h * out_w
    chunk = _batch_chunk(c * kh * kw, length)
    for n0 in range(0, n, chunk):
        gys = gy[n0:n0 + chunk]
        nb = gys.shape[0]
        gy_t = np.ascontiguousarray(gys.reshape(nb, o, length).transpose(1, 0, 2))
        cols = np.matmul(wt, gy_t.reshape(groups, o // groups, nb * length))
        cols = cols.reshape(c * kh * kw, nb, length)
        _k_unfold_bwd(cols, gx[n0:n0 + nb], *geo, out_h, out_w)
    return gx


def _conv_weight_grad(gy, x, w_shape, geo, groups):
    """Adjoint of `_conv_forward` in w: gradient (O, C/G, kh, kw) from gy and the input x."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w_shape
    out_h, out_w = gy.shape[2], gy.shape[3]
    if n == 0 or gy.size == 0:
        return np.zeros(w_shape, dtype=x.dtype)
    if _is_depthwise(c, w_shape, groups):
        per_sample = np.empty((n,) + tuple(w_shape), dtype=x.dtype)
        _k_depthwise_weight_bwd(gy, x, per_sample.reshape(n, o, kh, kw), *geo[2:])
        return per_sample.sum(axis=0)
    og = o // groups
    if _is_pointwise(geo):
        gy4 = gy.reshape(n, groups, og, h * wd)
        x4 = x.reshape(n, groups, cg, h * wd)
        # per-sample products summed over the batch: avoids transposing the whole activation
        return np.matmul(gy4, x4.transpose(0, 1, 3, 2)).sum(axis=0).reshape(w_shape)
    length = out_h * out_w
    gw = np.zeros((groups, og, cg * kh * kw), dtype=x.dtype)
    chunk = _batch_chunk(c * kh * kw, length)
    for n0 in range(0, n, chunk):
        xs = x[n0:n0 + chunk]
        nb = xs.shape[0]
        cols = _im2col(xs, geo, out_h, out_w).reshape(groups, cg * kh * kw, nb * length)
        gy_t = np.ascontiguousarray(gy[n0:n0 + nb].reshape(nb, o, length).transpose(1, 0, 2))
        gw += np.matmul(gy_t.reshape(groups, og, nb * length), cols.transpose(0, 2, 1))
    return gw.reshape(w_shape)


# ---------------------------------------------------------------------------------------------
# Public functions.


def conv2d_forward(x, w, bias, stride, padding, dilation, groups):
    """2-D cross-correlation like torch.nn.functional.conv2d with zero padding.

    Args:
        x: input (N, C, H, W). w: weight (O, C // groups, kh, kw). bias: (O,) or None.
        stride, padding, dilation: (int, int) tuples. groups: int dividing C and O.

    Returns:
        y (N, O, OH, OW) with OH = (H + 2*ph - dh*(kh-1) - 1) // sh + 1 (same for W).
    """
    geo = _geometry(w.shape, stride, padding, dilation)
    y = _conv_forward(x, w, geo, groups)
    if bias is not None:
        y += bias.reshape(1, -1, 1, 1)
    return y


def conv2d_backward(grad_y, x, w, stride, padding, dilation, groups, need_x, need_w, need_b):
    """Gradients of `conv2d_forward`; returns (gx, gw, gb), None for those not requested."""
    geo = _geometry(w.shape, stride, padding, dilation)
    gx = _conv_input_grad(grad_y, w, x.shape, geo, groups) if need_x else None
    gw = _conv_weight_grad(grad_y, x, w.shape, geo, groups) if need_w else None
    gb = grad_y.sum(axis=(0, 2, 3)) if need_b else None
    return gx, gw, gb


def _transposed_out_size(size, k, s, p, d, out_pad):
    return (size - 1) * s - 2 * p + d * (k - 1) + out_pad + 1


def conv_transpose2d_forward(x, w, bias, stride, padding, dilation, groups, output_padding):
    """Transposed convolution like torch.nn.functional.conv_transpose2d.

    It is the adjoint (input gradient) of conv2d with the same weight, so it reuses col2im.

    Args:
        x: input (N, C_in, H, W). w: weight (C_in, C_out // groups, kh, kw). bias: (C_out,)|None.
        stride, padding, dilation, output_padding: (int, int); output_padding only enlarges the
        output at the bottom/right (it must be smaller than stride or dilation, as in torch).

    Returns:
        y (N, C_out, OH, OW), OH = (H-1)*sh - 2*ph + dh*(kh-1) + oph + 1.
    """
    n, _, h, wd = x.shape
    geo = _geometry(w.shape, stride, padding, dilation)
    out_h = _transposed_out_size(h, w.shape[2], stride[0], padding[0], dilation[0],
                                 output_padding[0])
    out_w = _transposed_out_size(wd, w.shape[3], stride[1], padding[1], dilation[1],
                                 output_padding[1])
    y_shape = (n, w.shape[1] * groups, out_h, out_w)
    y = _conv_input_grad(x, w, y_shape, geo, groups)
    if bias is not None:
        y += bias.reshape(1, -1, 1, 1)
    return y


def conv_transpose2d_backward(grad_y, x, w, stride, padding, dilation, groups, output_padding,
                              need_x, need_w, need_b):
    """Gradients of `conv_transpose2d_forward`; returns (gx, gw, gb), None where not requested.

    output_padding is accepted for symmetry: grad_y already has the padded shape.
    """
    geo = _geometry(w.shape, stride, padding, dilation)
    # the adjoint of an adjoint is the forward convolution itself
    gx = _conv_forward(grad_y, w, geo, groups) if need_x else None
    # roles swap: x is the "output gradient" of the underlying conv, grad_y its "input"
    gw = _conv_weight_grad(x, grad_y, w.shape, geo, groups) if need_w else None
    gb = grad_y.sum(axis=(0, 2, 3)) if need_b else None
    return gx, gw, gb


def unfold(x, kernel_size, dilation, padding, stride):
    """im2col like torch.nn.functional.unfold: (N, C, H, W) -> (N, C*kh*kw, L).

    Rows are ordered (c, i, j) and columns (oh, ow), both row-major, as in torch.
    """
    n, c, h, wd = x.shape
    kh, kw = kernel_size
    geo = (kh, kw, stride[0], stride[1], padding[0], padding[1], dilation[0], dilation[1])
    out_h = _out_size(h, kh, stride[0], padding[0], dilation[0])
    out_w = _out_size(wd, kw, stride[1], padding[1], dilation[1])
    cols = np.empty((n, c * kh * kw, out_h * out_w), dtype=x.dtype)
    if cols.size:
        _k_unfold_fwd(x, cols.transpose(1, 0, 2), *geo, out_h, out_w)
    return cols


def fold(cols, output_size, kernel_size, dilation, padding, stride):
    """col2im like torch.nn.functional.fold: (N, C*kh*kw, L) -> (N, C, H, W), summing overlaps.

    fold is the adjoint of unfold, so each is the other's backward.
    """
    n, rows, length = cols.shape
    kh, kw = kernel_size
    h, wd = output_size
    geo = (kh, kw, stride[0], stride[1], padding[0], padding[1], dilation[0], dilation[1])
    out_h = _out_size(h, kh, stride[0], padding[0], dilation[0])
    out_w = _out_size(wd, kw, stride[1], padding[1], dilation[1])
    if rows % (kh * kw) != 0 or length != out_h * out_w:
        raise RuntimeError(
            f"fold: input shape {cols.shape} does not match kernel_size {kernel_size} and "
            f"output_size {output_size}; expected ({n}, C*{kh * kw}, {out_h * out_w}).")
    x = np.empty((n, rows // (kh * kw), h, wd), dtype=cols.dtype)
    if x.size:
        _k_unfold_bwd(cols.transpose(1, 0, 2), x, *geo, out_h, out_w)
    return x
