"""Batch and layer normalisation kernels (training-mode statistics and their gradients).

Statistics are accumulated in float64 whatever the input dtype and use two passes (mean, then
the mean of squared deviations): E[x^2] - E[x]^2 cancels catastrophically in float32 when the
mean is large next to the spread. Sums use ``fastmath={"reassoc"}`` only, which lets LLVM
vectorize the reductions; NaN and inf still propagate. Saved statistics (mean, invstd) have the
input's dtype. Batch norm walks memory in order (NOTE [Batch norm in memory order]); layer norm
loops over rows with prange, compiled serially: see NOTE [Kernel threading] in conv.py.
"""

import math

import numba
import numpy as np

from ... import _blas_parts, _onepool
from ..._backend import reusable_empty
from ..._kernel_threads import conv_scope, parallel_range
from . import split

PARALLEL = False
_FAST = {"reassoc"}
_GRAIN = 1 << 14  # elements per kernel-thread part (layer norm): NOTE [Kernel threads]


@numba.njit(nogil=True, cache=True, fastmath=_FAST, inline="always")
def _sum(row):
    total = 0.0
    for t in range(row.size):
        total += row[t]
    return total


@numba.njit(nogil=True, cache=True, fastmath=_FAST, inline="always")
def _sum_sq_dev(row, mean):
    total = 0.0
    for t in range(row.size):
        dev = row[t] - mean
        total += dev * dev
    return total


@numba.njit(nogil=True, cache=True, fastmath=_FAST, inline="always")
def _sum_and_sq_dev(row, shift):
    """(sum(row - shift), sum((row - shift)^2)) in float64."""
    total = 0.0
    sq = 0.0
    for t in range(row.size):
        dev = row[t] - shift
        total += dev
        sq += dev * dev
    return total, sq


@numba.njit(nogil=True, cache=True, fastmath=_FAST, inline="always")
def _sum_prod_dev(g, row, mean):
    """sum(g * (row - mean)), the unnormalised covariance used by both backward passes."""
    total = 0.0
    for t in range(row.size):
        total += g[t] * (row[t] - mean)
    return total


# ---------------------------------------------------------------------------------------------
# Batch norm over (N, C, L): one set of statistics per channel c, over N*L values.


# NOTE [Batch norm in memory order]
# Every pass walks x (N, C, L) in memory order, sample by sample and channel by channel within a
# sample, keeping the per-channel float64 sums in small (C,) accumulators. The channel-major order
# (all of channel c, then c + 1) jumps C*L elements between consecutive rows; on big maps every
# row is a fresh page and the hardware prefetcher restarts at each one: the output pass of
# (16, 144, 32, 32) took 0.85 ms that way and 0.27 ms in memory order (CPU time, one thread).
# The arithmetic is the same in either order: each row's sum is taken first (float64), and rows
# are added to their channel's total in sample order.
#
# NOTE [Shifted sums for batch norm]
# The forward reads x twice, not three times: the mean and the variance come from one pass of
# float64 sums of d = x - K and d^2, with K the channel's first value (mean = K + sum(d)/M,
# var = sum(d^2)/M - (sum(d)/M)^2), then the output pass. Without the shift the difference of
# the two sums cancels when the mean is large next to the spread; with K a value of the channel,
# sum(d^2)/M is the variance plus (mean - K)^2, a few variances for any data that has one, so the
# float64 sums lose only a few digits of their ~16: float32 statistics are off the float64
# reference by the same ~4e-8 as with two passes, for means of 0 to 1e4 standard deviations.
# One pass fewer over each input: (16, 144, 32, 32) 0.72 -> 0.64 ms, (8, 256, 16, 16) 0.156 ->
# 0.139 ms (one thread, best CPU time of 30), ~0.5 ms of ResNet-50's ~5 ms of batch-norm forward.


@numba.njit(nogil=True, cache=True, fastmath=_FAST)
def _k_batchnorm_fwd(x, weight, bias, eps, y, mean_out, invstd_out, lo, hi):
    """Channels [lo, hi) (each writes only its own statistics and planes)."""
    n_batch, n_chan, length = x.shape
    count = n_batch * length
    # one pass for both statistics, NOTE [Shifted sums for batch norm]
    shift = np.empty(n_chan)
    for c in range(lo, hi):
        shift[c] = x[0, c, 0]
    total = np.zeros(n_chan)
    sq = np.zeros(n_chan)
    for n in range(n_batch):
        for c in range(lo, hi):
            s, s2 = _sum_and_sq_dev(x[n, c], shift[c])
            total[c] += s
            sq[c] += s2
    scale = np.empty(n_chan, x.dtype)
    for c in range(lo, hi):
        dev = total[c] / count  # mean - shift
        mean_out[c] = shift[c] + dev
        var = max(sq[c] / count - dev * dev, 0.0)
        invstd_out[c] = 1.0 / math.sqrt(var + eps)
        # the elementwise pass runs in the input's dtype, on the stored statistics
        scale[c] = invstd_out[c] * weight[c]
    for n in range(n_batch):
        for c in range(lo, hi):
            mu = mean_out[c]
            sc = scale[c]
            shift = bias[c]
            src = x[n, c]
            dst = y[n, c]
            for t in range(length):
                # (x - mean) first: x*scale + (b - mean*scale) would cancel in float32
                dst[t] = (src[t] - mu) * sc + shift


@numba.njit(nogil=True, cache=True, fastmath=_FAST)
def _k_batchnorm_bwd(gy, x, weight, mean, invstd, need_x, gx, gw, gb, lo, hi):
    """Channels [lo, hi) (each writes only its own gradient entries and planes)."""
    n_batch, n_chan, length = x.shape
    count = n_batch * length
    sum_g = np.zeros(n_chan)
    sum_g_dev = np.zeros(n_chan)
    for n in range(n_batch):
        for c in range(lo, hi):
            sum_g[c] += _sum(gy[n, c])
            sum_g_dev[c] += _sum_prod_dev(gy[n, c], x[n, c], mean[c])
    scale = np.empty(n_chan)
    mean_g = np.empty(n_chan)
    proj = np.empty(n_chan)
    for c in range(lo, hi):
        istd = float(invstd[c])
        gb[c] = sum_g[c]
        gw[c] = sum_g_dev[c] * istd  # dL/dw = sum(g * xhat)
        # dL/dx = w*invstd * (g - mean(g) - xhat * mean(g*xhat)), xhat = (x - mean)*invstd
        scale[c] = weight[c] * istd
        mean_g[c] = sum_g[c] / count
        proj[c] = sum_g_dev[c] * istd * istd / count
    if not need_x:
        return
    for n in range(n_batch):
        for c in range(lo, hi):
            mu = mean[c]
            sc = scale[c]
            mg = mean_g[c]
            pr = proj[c]
            g = gy[n, c]
            src = x[n, c]
            dst = gx[n, c]
            for t in range(length):
                dst[t] = sc * (g[t] - mg - (src[t] - mu) * pr)


# parts drivers on the one pool: NOTE [Ranges on the one pool] in split.py
@_onepool.twin
def _p_batchnorm_fwd(x, weight, bias, eps, y, mean_out, invstd_out, n, parts):
    for p in numba.prange(parts):
        _k_batchnorm_fwd(x, weight, bias, eps, y, mean_out, invstd_out, n * p // parts,
                         n * (p + 1) // parts)


@_onepool.twin
def _p_batchnorm_bwd(gy, x, weight, mean, invstd, need_x, gx, gw, gb, n, parts):
    for p in numba.prange(parts):
        _k_batchnorm_bwd(gy, x, weight, mean, invstd, need_x, gx, gw, gb, n * p // parts,
                         n * (p + 1) // parts)


split.pooled(_k_batchnorm_fwd, _p_batchnorm_fwd)
split.pooled(_k_batchnorm_bwd, _p_batchnorm_bwd)


def _as_ncl(x):
    """View (N, C, *) as (N, C, L); L is spelled out because -1 is ambiguous when N == 0."""
    return x.reshape(x.shape[0], x.shape[1], math.prod(x.shape[2:]))


def _channel_param(param, n_chan, dtype):
    return np.ones(n_chan, dtype) if param is None else param


def batchnorm_forward_train(x, weight, bias, eps):
    """Training-mode batch norm like torch.nn.functional.batch_norm(training=True).

    Args:
        x: (N, C, *) with N * prod(*) > 0. weight, bias: (C,) or None (1 and 0). eps: float.

    Returns:
        (y, mean, invstd): y like x; mean and invstd (C,) are the batch statistics, invstd =
        1 / sqrt(biased_var + eps). Running stats need the unbiased variance:
        (1 / invstd**2 - eps) * M / (M - 1) with M = N * prod(*).
    """
    x3 = _as_ncl(x)
    n_chan = x3.shape[1]
    if x3.shape[0] * x3.shape[2] == 0:
        raise ValueError(f"batch_norm: expected more than 0 values per channel when training; "
                         f"got input of shape {tuple(x.shape)}.")
    w = _channel_param(weight, n_chan, x.dtype)
    b = np.zeros(n_chan, x.dtype) if bias is None else bias
    y = reusable_empty(x.shape, x.dtype)  # NOTE [Reused buffers] in _backend.py
    mean = np.empty(n_chan, x.dtype)
    invstd = np.empty(n_chan, x.dtype)
    # NOTE [Two halves on two threads] in split.py; NOTE [Conv threads] in _kernel_threads.py
    with conv_scope():
        split.run(_k_batchnorm_fwd, n_chan, x3.size, x3, w, b, float(eps), y.reshape(x3.shape),
                  mean, invstd, family="batchnorm")
    return y, mean, invstd


@numba.njit(nogil=True, cache=True)
def _k_update_running(mean, invstd, eps, count, momentum, run_mean, run_var):
    """running = (1 - momentum) * running + momentum * batch, in float64, for the mean and the
    unbiased variance (1 / invstd^2 - eps) * count / (count - 1); an empty array is skipped."""
    denom = max(count - 1, 1)
    for c in range(mean.size):
        if run_mean.size:
            run_mean[c] = (1 - momentum) * float(run_mean[c]) + momentum * float(mean[c])
        if run_var.size:
            istd = float(invstd[c])
            var = max(1.0 / (istd * istd) - eps, 0.0) * count / denom
            run_var[c] = (1 - momentum) * float(run_var[c]) + momentum * var


def update_running_stats(mean, invstd, eps, count, momentum, run_mean, run_var):
    """Batch norm's running statistics updated in place from the batch's (mean, invstd); an
    empty run_mean or run_var is left out. The formula of ember/nn/functional/_norm.py's
    `_update_running`, in float64 with one rounding to the statistics' dtype."""
    _k_update_running(mean, invstd, eps, count, momentum, run_mean, run_var)


def batchnorm_backward_train(grad_y, x, weight, mean, invstd, need_x, need_w):
    """Gradients of `batchnorm_forward_train` given its saved (mean, invstd).

    Returns:
        (gx, gw, gb): gx like x or None unless need_x; gw (C,) or None unless need_w; gb (C,)
        is always returned (it is a by-product). With weight None, gw is still d/dw at w = 1.
    """
    x3 = _as_ncl(x)
    n_chan = x3.shape[1]
    w = _channel_param(weight, n_chan, x.dtype)
    gx = np.empty_like(x) if need_x else np.empty((0, 0, 0), x.dtype)
    gw = np.empty(n_chan, x.dtype)
    gb = np.empty(n_chan, x.dtype)
    with conv_scope():  # NOTE [Conv threads] in _kernel_threads.py
        split.run(_k_batchnorm_bwd, n_chan, x3.size, grad_y.reshape(x3.shape), x3, w, mean,
                  invstd, bool(need_x), gx.reshape(x3.shape) if need_x else gx, gw, gb,
                  family="batchnorm_bwd")
    return (gx if need_x else None), (gw if need_w else None), gb


# ---------------------------------------------------------------------------------------------
# Layer norm over the last dim of (M, D): one set of statistics per row.


@_onepool.twin(fastmath=_FAST)
def _k_layernorm_fwd(x, weight, bias, eps, y, mean_out, invstd_out):
    n_rows, dim = x.shape
    for r in numba.prange(n_rows):
        row = x[r]
        mean = _sum(row) / dim
        invstd = 1.0 / math.sqrt(_sum_sq_dev(row, mean) / dim + eps)
        # statistics in float64, the output pass in x's dtype (float32: twice the SIMD lanes
        # and no conversions; 138 -> 100 us for (1024, 256) on one core). The mean is the pair
        # mean_x + rest (rest = what rounding it to x's dtype lost), subtracted one after the
        # other, so a mean far from 0 next to the spread keeps the float64 pass's accuracy
        mean_x = row.dtype.type(mean)
        rest = row.dtype.type(mean - mean_x)
        invstd_x = row.dtype.type(invstd)
        dst = y[r]
        for t in range(dim):
            dst[t] = ((row[t] - mean_x) - rest) * invstd_x * weight[t] + bias[t]
        mean_out[r] = mean
        invstd_out[r] = invstd


@_onepool.twin(fastmath=_FAST)
def _k_layernorm_bwd(gy, x, weight, mean, invstd, gx, gw_parts, gb_parts, blk_lo, blk_hi):
    """gx row by row; gw/gb partial sums per block of rows, so blocks never share an output.
    Runs blocks blk_lo..blk_hi-1 of the gw_parts.shape[0] blocks (one kernel-thread part, or
    all of them in parallel on the one pool)."""
    n_rows, dim = x.shape
    n_blocks = gw_parts.shape[0]
    for blk in numba.prange(blk_lo, blk_hi):
        gw_acc = gw_parts[blk]
        gb_acc = gb_parts[blk]
        for r in range(blk * n_rows // n_blocks, (blk + 1) * n_rows // n_blocks):
            g = gy[r]
            row = x[r]
            mu = mean[r]
            istd = invstd[r]
            # with gw_t = g_t * w_t: dL/dx = invstd * (gw - mean(gw) - xhat * mean(gw * xhat));
            # the row sums in float64, the elementwise passes in x's dtype (as the forward's)
            sum_gw = 0.0
            sum_gw_dev = 0.0
            for t in range(dim):
                gwt = g[t] * weight[t]
                sum_gw += gwt
                sum_gw_dev += gwt * (row[t] - mu)
            mean_gw = row.dtype.type(sum_gw / dim)
            proj = row.dtype.type(sum_gw_dev * float(istd) * float(istd) / dim)
            dst = gx[r]
            for t in range(dim):
                dev = row[t] - mu
                dst[t] = istd * (g[t] * weight[t] - mean_gw - dev * proj)
                gw_acc[t] += g[t] * dev * istd
                gb_acc[t] += g[t]


def layernorm_forward(x2d, weight, bias, eps):
    """Layer norm over the last dim like torch.nn.functional.layer_norm on a (M, D) view.

    Args:
        x2d: (M, D). weight, bias: (D,) or None (1 and 0). eps: float.

    Returns:
        (y, mean, invstd): y (M, D); mean, invstd (M,) with invstd = 1/sqrt(biased_var + eps).
    """
    n_rows, dim = x2d.shape
    w = np.ones(dim, x2d.dtype) if weight is None else weight
    b = np.zeros(dim, x2d.dtype) if bias is None else bias
    y = reusable_empty(x2d.shape, x2d.dtype)  # NOTE [Reused buffers] in _backend.py
    mean = np.empty(n_rows, x2d.dtype)
    invstd = np.empty(n_rows, x2d.dtype)
    if dim == 0:
        mean[:] = np.nan  # torch: the mean of nothing
        invstd[:] = np.nan
        return y, mean, invstd
    eps = float(eps)
    grain = max(1, _GRAIN // dim)
    if n_rows < 2 * grain or _onepool.enabled():
        # one part (a decoding step's row: no closure, slices or pool call), or the twin
        # kernel's pick on the one pool (never two pools at once: NOTE [One pool])
        _k_layernorm_fwd.pick(x2d.size)(x2d, w, b, eps, y, mean, invstd)
        return y, mean, invstd

    def rows(lo, hi):
        _k_layernorm_fwd.serial(x2d[lo:hi], w, b, eps, y[lo:hi], mean[lo:hi], invstd[lo:hi])

    # NOTE [Kernel threads]; NOTE [Python parts on OpenBLAS's threads] in _blas_parts.py
    split_rows = _blas_parts.parallel_range if _blas_parts.on("layernorm") else parallel_range
    split_rows(rows, n_rows, grain)
    return y, mean, invstd


def layernorm_backward(grad_y, x2d, weight, mean, invstd):
    """Gradients of `layernorm_forward` given its saved (mean, invstd).

    Returns:
        (gx, gw, gb): gx (M, D); gw, gb (D,) summed over rows (gw is d/dw at w = 1 when weight
        is None; callers drop what they do not need).
    """
    n_rows, dim = x2d.shape
    w = np.ones(dim, x2d.dtype) if weight is None else weight
    # a fixed number of row blocks keeps the float64 partials small and the result independent
    # of the thread count
    n_blocks = max(1, min(n_rows, 16))
    gw_parts = np.zeros((n_blocks, dim), np.float64)
    gb_parts = np.zeros((n_blocks, dim), np.float64)
    gx = reusable_empty(x2d.shape, x2d.dtype)  # NOTE [Reused buffers] in _backend.py
    if n_rows and dim and _onepool.enabled():  # the blocks in parallel (NOTE [One pool])
        _k_layernorm_bwd.pick(x2d.size)(grad_y, x2d, w, mean, invstd, gx, gw_parts, gb_parts, 0,
                                        n_blocks)
    elif n_rows and dim:
        def blocks(lo, hi):
            _k_layernorm_bwd.serial(grad_y, x2d, w, mean, invstd, gx, gw_parts, gb_parts, lo,
                                    hi)

        # the blocks are fixed above; the kernel threads share them out (NOTE [Kernel threads])
        split_blocks = (_blas_parts.parallel_range if _blas_parts.on("layernorm")
                        else parallel_range)
        split_blocks(blocks, n_blocks, max(1, _GRAIN // max(1, n_rows // n_blocks * dim)))
    gw = gw_parts.sum(axis=0).astype(x2d.dtype)
    gb = gb_parts.sum(axis=0).astype(x2d.dtype)
    return gx, gw, gb
