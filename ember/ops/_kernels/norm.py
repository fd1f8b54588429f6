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


# NOTE [Layer norm's weight gradient in runs of rows]
# The weight and bias gradients are column sums over the rows. Added straight into the block's
# float64 partials, every element of every row was widened to float64 and the partial rows were
# twice as wide: the second pass ran on half as many SIMD lanes. The sums now run in x's dtype
# over runs of at most _RUN_ROWS rows, and each run's sums go into the float64 partials: a
# float32 sum of 64 terms (torch's float accumulators sum a whole thread's rows).
_RUN_ROWS = 64


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
        gw_run = np.zeros_like(weight)  # NOTE [Layer norm's weight gradient in runs of rows]
        gb_run = np.zeros_like(weight)
        r_lo, r_hi = blk * n_rows // n_blocks, (blk + 1) * n_rows // n_blocks
        for r in range(r_lo, r_hi):
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
                gw_run[t] += g[t] * dev * istd
                gb_run[t] += g[t]
            if (r - r_lo) % _RUN_ROWS == _RUN_ROWS - 1 or r == r_hi - 1:
                for t in range(dim):
                    gw_acc[t] += gw_run[t]
                    gb_acc[t] += gb_run[t]
                    gw_run[t] = 0
                    gb_run[t] = 0


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

    if _blas_parts.on("layernorm") and _cfunc_ok(x2d, w, b):
        # NOTE [Layer norm parts without the GIL]
        args = _blas_parts.arguments(9)
        args[1:9] = (x2d.ctypes.data, w.ctypes.data, b.ctypes.data, y.ctypes.data,
                     mean.ctypes.data, invstd.ctypes.data, n_rows, dim)
        args[9:].view(np.float64)[0] = eps
        _blas_parts.run(_part("fwd", x2d.dtype).address, n_rows, args.ctypes.data,
                        _blas_parts.threads())
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
        grain = max(1, _GRAIN // max(1, n_rows // n_blocks * dim))
        if (n_blocks >= 2 * grain and _blas_parts.on("layernorm")
                and _cfunc_ok(grad_y, x2d, w, mean, invstd)):
            # NOTE [Layer norm parts without the GIL]
            args = _blas_parts.arguments(11)
            args[1:12] = (grad_y.ctypes.data, x2d.ctypes.data, w.ctypes.data, mean.ctypes.data,
                          invstd.ctypes.data, gx.ctypes.data, gw_parts.ctypes.data,
                          gb_parts.ctypes.data, n_rows, dim, n_blocks)
            _blas_parts.run(_part("bwd", x2d.dtype).address, n_blocks, args.ctypes.data,
                            _blas_parts.threads())
        else:
            def blocks(lo, hi):
                _k_layernorm_bwd.serial(grad_y, x2d, w, mean, invstd, gx, gw_parts, gb_parts,
                                        lo, hi)

            # the blocks are fixed above; the kernel threads share them out (NOTE [Kernel
            # threads])
            split_blocks = (_blas_parts.parallel_range if _blas_parts.on("layernorm")
                            else parallel_range)
            split_blocks(blocks, n_blocks, grain)
    gw = gw_parts.sum(axis=0).astype(x2d.dtype)
    gb = gb_parts.sum(axis=0).astype(x2d.dtype)
    return gx, gw, gb


# NOTE [Layer norm parts without the GIL]
# Layer norm's parts on OpenBLAS's worker (user "layernorm" of ember/_blas_parts.py) were Python
# callables claiming chunks of rows (`_blas_parts.parallel_range`): each chunk took the GIL for
# its slicing and numba dispatch, so a (1024, 256) call handed the GIL between the two threads
# about eight times for ~170 us of work, and a handoff costs a futex wake-up - more when the
# machine is busy. The parts are instead numba cfuncs of OpenBLAS's part signature (as the LSTM
# steps': NOTE [Kernels on OpenBLAS's threads]): the arrays travel as addresses in the int64
# argument array and each part rebuilds them and calls the serial kernel on its rows (forward)
# or its row blocks (backward), never touching the GIL. The rebuilt arrays have the types the
# serial call gets (C-contiguous slices), so the numbers are the serial kernel's bit for bit;
# other layouts and dtypes keep the Python parts' route.
# NOTE [One Python part per thread]
# Where a part stays a Python callable (attention's plane kernels, Adam's update, the softmax
# rows), it is handed over as one run of the range per thread (`_blas_parts.run_ranges`, the
# split OpenBLAS makes) rather than `_blas_parts.parallel_range`'s four chunks per thread: each
# chunk takes the GIL to reach its kernel, so the two threads pass the GIL between them once per
# chunk instead of once per call. The worker spins after the step's GEMMs and starts at once, so
# the dynamic claiming that chunks buy is not needed; the split never changes a number (every
# row, plane or element is computed by the serial kernel as before).
_PARTS = {}
_PART_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _cfunc_ok(x, *arrays):
    """Whether the cfunc parts take x and these arrays: C-contiguous, one float dtype."""
    return x.dtype in _PART_DTYPES and all(a.flags.c_contiguous and a.dtype == x.dtype
                                            for a in (x, *arrays))


def _part(direction, dt):
    """The compiled part ("fwd" or "bwd") for float dtype dt, made on first use."""
    key = (direction, np.dtype(dt))
    fn = _PARTS.get(key)
    if fn is None:
        make = _fwd_part_of if direction == "fwd" else _bwd_part_of
        fn = _PARTS[key] = numba.cfunc(_blas_parts.PART, nopython=True, cache=True)(
            make(np.dtype(dt)))
    return fn


def _fwd_part_of(dt):
    """Rows r0..r0+m-1 of the forward. Slots: 1 x, 2 weight, 3 bias, 4 y, 5 mean, 6 invstd,
    7 rows, 8 dim, 9 eps (a float64's bits)."""
    as_ptr, kind, item, kernel = _blas_parts.as_ptr, numba.from_dtype(dt), dt.itemsize, \
        _k_layernorm_fwd.serial

    def part(m, n_, k_, alpha, a, lda, b_, ldb, c, ldc, sb):
        arg = numba.carray(as_ptr(c, numba.int64), (10,))
        eps = numba.carray(as_ptr(c + 9 * 8, numba.float64), (1,))[0]
        dim = arg[8]
        r0 = a >> arg[0]
        x = numba.carray(as_ptr(arg[1] + r0 * dim * item, kind), (m, dim))
        w = numba.carray(as_ptr(arg[2], kind), (dim,))
        b = numba.carray(as_ptr(arg[3], kind), (dim,))
        y = numba.carray(as_ptr(arg[4] + r0 * dim * item, kind), (m, dim))
        mean = numba.carray(as_ptr(arg[5] + r0 * item, kind), (m,))
        invstd = numba.carray(as_ptr(arg[6] + r0 * item, kind), (m,))
        kernel(x, w, b, eps, y, mean, invstd)

    return part


def _bwd_part_of(dt):
    """Row blocks r0..r0+m-1 of the backward. Slots: 1 grad_y, 2 x, 3 weight, 4 mean,
    5 invstd, 6 gx, 7 gw_parts, 8 gb_parts (float64), 9 rows, 10 dim, 11 blocks."""
    as_ptr, kind, kernel = _blas_parts.as_ptr, numba.from_dtype(dt), _k_layernorm_bwd.serial

    def part(m, n_, k_, alpha, a, lda, b_, ldb, c, ldc, sb):
        arg = numba.carray(as_ptr(c, numba.int64), (12,))
        rows, dim, blocks = arg[9], arg[10], arg[11]
        r0 = a >> arg[0]
        gy = numba.carray(as_ptr(arg[1], kind), (rows, dim))
        x = numba.carray(as_ptr(arg[2], kind), (rows, dim))
        w = numba.carray(as_ptr(arg[3], kind), (dim,))
        mean = numba.carray(as_ptr(arg[4], kind), (rows,))
        invstd = numba.carray(as_ptr(arg[5], kind), (rows,))
        gx = numba.carray(as_ptr(arg[6], kind), (rows, dim))
        gw = numba.carray(as_ptr(arg[7], numba.float64), (blocks, dim))
        gb = numba.carray(as_ptr(arg[8], numba.float64), (blocks, dim))
        kernel(gy, x, w, mean, invstd, gx, gw, gb, r0, r0 + m)

    return part
