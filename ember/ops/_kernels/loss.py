"""Row-wise softmax, log-softmax and a fused cross-entropy (forward and backward).

numba here has no SVML, so ``math.exp`` in a kernel is a scalar libm call: the row pass (max,
exponentials, sum) uses vmath's vectorisable `vexp` on float32/float64 rows with unit stride, and
NumPy's SIMD ufuncs otherwise and for the logarithms; numba fuses the per-row arithmetic around
them so each pass over the (M, K) logits does as much as it can. Stability: every exponent is
taken of x - rowmax <= 0, so nothing overflows.
"""

import numba
import numpy as np

from ... import _blas_parts, _onepool
from ..._backend import reusable_empty
from ..._kernel_threads import parallel_range
from .vmath import row_max, row_sum, vexp

PARALLEL = False  # see NOTE [Kernel threading] in conv.py
_FAST = {"reassoc"}  # vectorized sums; NaN and inf still propagate
_GRAIN = 1 << 15  # elements per kernel-thread part: NOTE [Kernel threads]
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _row_exp(x2d):
    """Stable pieces of softmax per row of (M, K): (shift, e, total) with e = exp(x - shift),
    total = e.sum(1), so softmax = e / total and logsumexp = shift + log(total)."""
    n_rows, n_cols = x2d.shape
    shift = np.empty(n_rows, x2d.dtype)
    total = np.empty(n_rows, x2d.dtype)
    # the (M, K) exponentials live until the backward: NOTE [Reused buffers] in _backend.py
    # (GNMT-S's (640, 2000) logits: ~570 fewer page faults per step)
    shifted_exp = reusable_empty(x2d.shape, x2d.dtype)
    kernel = x2d.dtype in _FLOATS and x2d.strides[-1] == x2d.itemsize and n_cols > 0
    if kernel and x2d.size >= _k_row_exp.min_work and _onepool.enabled():
        # NOTE [Softmax rows on the one pool]
        _k_row_exp.parallel(x2d, shift, shifted_exp, total)
        return shift, shifted_exp, total
    if kernel:  # one pass per row instead of NumPy's four (NOTE [Softmax rows on the one pool])
        def rows(lo, hi):
            _k_row_exp.serial(x2d[lo:hi], shift[lo:hi], shifted_exp[lo:hi], total[lo:hi])

        grain = max(1, _GRAIN // max(1, n_cols))
        if n_rows >= 2 * grain and _blas_parts.on("softmax_rows"):
            # NOTE [Python parts on OpenBLAS's threads] in _blas_parts.py; one run of rows
            # per thread: NOTE [One Python part per thread] in norm.py
            _blas_parts.run_ranges(rows, n_rows)
        else:
            parallel_range(rows, n_rows, grain)
        return shift, shifted_exp, total

    def rows(lo, hi):  # NumPy releases the GIL in each pass: NOTE [Kernel threads]
        row_max = x2d[lo:hi].max(axis=1)
        # an all -inf row would give -inf - -inf = NaN; shift it by 0 (torch's result -inf).
        # A +inf max stays: inf - inf makes the row NaN, as torch's (shifting by 0 gave inf)
        shift[lo:hi] = np.where(row_max == -np.inf, 0, row_max)
        e = np.subtract(x2d[lo:hi], shift[lo:hi, None], out=shifted_exp[lo:hi])
        np.exp(e, out=e)
        np.add.reduce(e, axis=1, out=total[lo:hi])

    parallel_range(rows, n_rows, max(1, _GRAIN // max(1, n_cols)))
    return shift, shifted_exp, total


# NOTE [Softmax rows on the one pool]
# With the one pool on (NOTE [One pool] in ember/_onepool.py), NumPy's passes above would run on
# one core. `_k_row_exp` does the same per row - max (NaN-propagating; an all -inf row shifts
# by 0, a +inf or NaN max stays and makes the row NaN), exp(x - shift) with the vectorisable
# `vexp` (vmath.py), row sum - in one parallel pass over rows, so each row is one thread's and
# the numbers do not depend on the split. They agree with the NumPy path to rounding (vexp's
# ulp and the order of the row sum), not bit for bit. With the pool off the same kernel runs
# serially (on the kernel threads' parts of the rows when they are on): GPT-S's (1024, 1024)
# logits took 0.79 ms against 1.05 ms for NumPy's passes (one thread); the NumPy passes stay
# for other dtypes and layouts.
@_onepool.twin(min_work=1 << 16, error_model="numpy")
def _k_row_exp(x, shift, e, total):
    n_rows, n_cols = x.shape
    for r in numba.prange(n_rows):
        row = x[r]
        m = row_max(row)  # n_cols >= 1: the caller sends min_work elements at least
        m = m if m != -np.inf else x.dtype.type(0)
        dst = e[r]
        for k in range(n_cols):
            dst[k] = vexp(row[k] - m)
        shift[r] = m
        total[r] = row_sum(dst)


def _log(values):
    with np.errstate(divide="ignore"):  # log(0) = -inf is the right answer here
        return np.log(values)


def log_softmax_forward(x2d):
    """log(softmax(x)) over the last dim of (M, K), like torch.log_softmax(x, dim=1)."""
    if x2d.size == 0:
        return np.empty_like(x2d)
    shift, _, total = _row_exp(x2d)
    return x2d - (shift + _log(total))[:, None]


def softmax_forward(x2d):
    """softmax over the last dim of (M, K), like torch.softmax(x, dim=1)."""
    if x2d.size == 0:
        return np.empty_like(x2d)
    _, shifted_exp, total = _row_exp(x2d)
    shifted_exp /= total[:, None]
    return shifted_exp


# ---------------------------------------------------------------------------------------------
# Cross-entropy with class indices.
#
# With p = softmax(x), w the class weights (1 if None), s = label_smoothing, K classes and
# target t, a non-ignored row's loss and its gradient are
#     loss = (1 - s) * w_t * (lse - x_t) + s/K * sum_k w_k * (lse - x_k)
#     dloss/dx_j = p_j * ((1 - s) * w_t + s/K * sum_k w_k) - (1 - s) * w_t * [j == t] - s/K * w_j
# and 'mean' divides the sum of row losses by the sum of w_t over non-ignored rows.


@_onepool.twin(min_work=1 << 16, fastmath=_FAST)
def _k_cross_entropy_fwd(x, target, weight, lse, ignore_index, smoothing, losses, row_weight):
    n_rows, n_classes = x.shape
    for r in numba.prange(n_rows):
        t = target[r]
        if t == ignore_index:
            losses[r] = 0.0
            row_weight[r] = 0.0
            continue
        w_t = weight[t]
        loss = (1.0 - smoothing) * w_t * (lse[r] - x[r, t])
        if smoothing > 0.0:
            row = x[r]
            smooth = 0.0
            for k in range(n_classes):
                smooth += weight[k] * (lse[r] - row[k])
            loss += smoothing / n_classes * smooth
        losses[r] = loss
        row_weight[r] = w_t


# error_model="numpy": an all -inf row has total 0, and its gradient is NaN (as torch's), not
# a ZeroDivisionError
@_onepool.twin(min_work=1 << 16, fastmath=_FAST, error_model="numpy")
def _k_cross_entropy_bwd(shifted_exp, total, target, weight, ignore_index, smoothing, row_scale,
                         grad):
    """dloss/dx into grad (M, K), row r scaled by row_scale[r]; p = shifted_exp / total."""
    n_rows, n_classes = grad.shape
    weight_total = 0.0
    for k in range(n_classes):
        weight_total += weight[k]
    uniform = smoothing / n_classes
    for r in numba.prange(n_rows):
        dst = grad[r]
        t = target[r]
        if t == ignore_index:
            dst[:] = 0
            continue
        e = shifted_exp[r]
        scale = row_scale[r]
        hard = (1.0 - smoothing) * weight[t]
        p_coef = scale * (hard + uniform * weight_total) / total[r]
        if smoothing > 0.0:
            for k in range(n_classes):
                dst[k] = e[k] * p_coef - scale * uniform * weight[k]
        else:
            for k in range(n_classes):
                dst[k] = e[k] * p_coef
        dst[t] -= scale * hard


# NOTE [Small cross-entropy in one kernel]
# At a small batch (the 3x256 MLP at batch 8: (8, 10) logits) the NumPy passes of `_row_exp`,
# the log, the target check and the reductions are ~10 calls of 1-2 us each around ~80
# exponentials: the loss took 42 us against torch's 5. Up to _SMALL_CE elements one numba call
# does all of it (scalar libm exp is no loss at that size); the results agree with the NumPy
# path to rounding (tests/nn/test_small_cross_entropy.py).
_SMALL_CE = 1 << 12


@numba.njit(nogil=True, cache=True)
def _k_cross_entropy_small(x, target, weight, ignore_index, smoothing, shifted_exp, total,
                           losses, sums):
    """The forward of `cross_entropy_forward` for small C-contiguous (M, K) logits: fills
    shifted_exp, total, losses (float64) and sums = (sum of losses, sum of row weights); returns
    the first row whose target is out of range (and not ignored), else -1. ``weight`` None
    means all ones."""
    n_rows, n_classes = x.shape
    for r in range(n_rows):
        t = target[r]
        if t != ignore_index and (t < 0 or t >= n_classes):
            return r
    loss_sum = 0.0
    weight_sum = 0.0
    for r in range(n_rows):
        row = x[r]
        m = -np.inf
        for k in range(n_classes):
            if row[k] > m:  # a NaN never wins here, but its exp below makes the row NaN
                m = row[k]
        if m == -np.inf:  # an all -inf row: shift by 0 (torch's result -inf); +inf: NaN row
            m = 0.0
        tot = 0.0
        e = shifted_exp[r]
        for k in range(n_classes):
            e[k] = np.exp(row[k] - m)
            tot += e[k]
        total[r] = tot
        t = target[r]
        if t == ignore_index:
            losses[r] = 0.0
            continue
        lse = m + np.log(tot)
        w_t = 1.0 if weight is None else weight[t]
        loss = (1.0 - smoothing) * w_t * (lse - row[t])
        if smoothing > 0.0:
            smooth = 0.0
            for k in range(n_classes):
                w_k = 1.0 if weight is None else weight[k]
                smooth += w_k * (lse - row[k])
            loss += smoothing / n_classes * smooth
        losses[r] = loss
        loss_sum += loss
        weight_sum += w_t
    sums[0] = loss_sum
    sums[1] = weight_sum
    return -1


@numba.njit(nogil=True, cache=True)
def _k_first_bad_target(target, n_classes, ignore_index):
    for r in range(target.shape[0]):
        t = target[r]
        if t != ignore_index and (t < 0 or t >= n_classes):
            return r
    return -1


def _target_error(bad, n_classes, ignore_index):
    return IndexError(f"cross_entropy: Target {bad} is out of bounds; expected class "
                      f"indices in [0, {n_classes}) or ignore_index={ignore_index}.")


def _small_forward(logits2d, target1d, weight, ignore_index, smoothing, reduction):
    """`cross_entropy_forward` in one kernel call: NOTE [Small cross-entropy in one kernel]."""
    n_rows, n_classes = logits2d.shape
    dtype = logits2d.dtype
    shifted_exp = np.empty((n_rows, n_classes), dtype)
    total = np.empty(n_rows, dtype)
    losses = np.empty(n_rows, np.float64)
    sums = np.zeros(2, np.float64)
    bad = _k_cross_entropy_small(logits2d, target1d, weight, ignore_index, smoothing,
                                 shifted_exp, total, losses, sums)
    if bad >= 0:
        raise _target_error(target1d[bad], n_classes, ignore_index)
    total_weight = float(sums[1])
    if reduction == "none":
        loss = losses.astype(dtype)
    elif reduction == "sum":
        loss = np.asarray(sums[0], dtype)
    else:
        loss = np.asarray(sums[0] / total_weight if total_weight != 0 else np.nan, dtype)
    return loss, (shifted_exp, total, total_weight)


def _check_targets(target, n_classes, ignore_index):
    valid = target[target != ignore_index]
    if valid.size and (valid.min() < 0 or valid.max() >= n_classes):
        bad = valid[(valid < 0) | (valid >= n_classes)][0]
        raise IndexError(f"cross_entropy: Target {bad} is out of bounds; expected class "
                         f"indices in [0, {n_classes}) or ignore_index={ignore_index}.")


def cross_entropy_forward(logits2d, target1d, weight, ignore_index, label_smoothing, reduction):
    """Cross-entropy with class-index targets, like torch.nn.functional.cross_entropy.

    Args:
        logits2d: (M, K) float. target1d: (M,) int64. weight: (K,) or None.
        ignore_index: int; such rows add 0 loss and 0 weight. label_smoothing: float in [0, 1].
        reduction: 'none' | 'mean' | 'sum'. 'mean' divides by the summed weight of non-ignored
            targets (NaN when there is none, as in torch).

    Returns:
        (loss, saved): loss is (M,) for 'none', else a 0-d array, in the logits' dtype.
        saved = (shifted_exp, total, total_weight) for `cross_entropy_backward`:
        shifted_exp (M, K) = exp(x - rowmax) and total (M,) its row sums, so softmax(x) =
        shifted_exp / total and the backward needs no exp (like torch, which keeps the
        (M, K) log-softmax); total_weight is the float 'mean' denominator.
    """
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"cross_entropy: {reduction} is not a valid value for reduction; "
                         f"expected 'none', 'mean' or 'sum'.")
    n_rows, n_classes = logits2d.shape
    if (0 < logits2d.size <= _SMALL_CE and logits2d.dtype in _FLOATS
            and logits2d.flags.c_contiguous and target1d.dtype == np.int64
            and (weight is None or weight.dtype == logits2d.dtype)):
        return _small_forward(logits2d, target1d, weight, ignore_index, float(label_smoothing),
                              reduction)
    _check_targets(target1d, n_classes, ignore_index)
    dtype = logits2d.dtype
    w = np.ones(n_classes, dtype) if weight is None else weight
    shifted_exp = np.empty((n_rows, n_classes), dtype)
    total = np.empty(n_rows, dtype)
    losses = np.zeros(n_rows, np.float64)
    row_weight = np.zeros(n_rows, np.float64)
    if n_rows and n_classes:
        shift, shifted_exp, total = _row_exp(logits2d)
        lse = shift + _log(total)
        # in parallel on the one pool from its min_work (NOTE [One pool])
        _k_cross_entropy_fwd.pick(logits2d.size)(logits2d, target1d, w, lse, ignore_index,
                                                 float(label_smoothing), losses, row_weight)
    total_weight = float(row_weight.sum())
    if reduction == "none":
        loss = losses.astype(dtype)
    elif reduction == "sum":
        loss = np.asarray(losses.sum(), dtype)
    else:
        mean = losses.sum() / total_weight if total_weight != 0 else np.nan
        loss = np.asarray(mean, dtype)
    return loss, (shifted_exp, total, total_weight)


def cross_entropy_backward(grad_loss, logits2d, target1d, saved, weight, ignore_index,
                           label_smoothing, reduction):
    """Gradient wrt the logits of `cross_entropy_forward`: (M, K), softmax minus one-hot, fused.

    Args:
        grad_loss: (M,) for reduction 'none', else a scalar or 0-d array.
        saved: the tuple returned by the forward; other args as in the forward.
    """
    shifted_exp, total, total_weight = saved
    n_rows, n_classes = logits2d.shape
    # the kernel indexes by target without bounds checks: check in this call, never trust the
    # forward's check (the targets may have been written since, e.g. through a .numpy() alias)
    if logits2d.size <= _SMALL_CE and target1d.dtype == np.int64:
        bad = _k_first_bad_target(target1d, n_classes, ignore_index)
        if bad >= 0:
            raise _target_error(target1d[bad], n_classes, ignore_index)
    else:
        _check_targets(target1d, n_classes, ignore_index)
    dtype = logits2d.dtype
    w = np.ones(n_classes, dtype) if weight is None else weight
    if reduction == "none":
        row_scale = np.asarray(grad_loss, np.float64).reshape(n_rows)
    else:
        scale = float(np.asarray(grad_loss))
        if reduction == "mean":
            scale = scale / total_weight if total_weight != 0 else np.nan
        row_scale = np.full(n_rows, scale, np.float64)
    if logits2d.size == 0:
        return np.zeros_like(logits2d)
    grad = reusable_empty(logits2d.shape, dtype)  # NOTE [Reused buffers] in _backend.py
    smoothing = float(label_smoothing)

    def rows(lo, hi):
        _k_cross_entropy_bwd.serial(shifted_exp[lo:hi], total[lo:hi], target1d[lo:hi], w,
                                    ignore_index, smoothing, row_scale[lo:hi], grad[lo:hi])

    if n_rows < 2 * max(1, _GRAIN // n_classes) or _onepool.enabled():
        # one part (no closure, no hand-off), or the twin's pick on the one pool (NOTE [One
        # pool]: never two pools at once)
        _k_cross_entropy_bwd.pick(logits2d.size)(shifted_exp, total, target1d, w, ignore_index,
                                                 smoothing, row_scale, grad)
        return grad
    if _blas_parts.on("softmax_rows"):
        # NOTE [Python parts on OpenBLAS's threads] in _blas_parts.py; one run of rows per
        # thread: NOTE [One Python part per thread] in norm.py
        _blas_parts.run_ranges(rows, n_rows)
    else:
        parallel_range(rows, n_rows, max(1, _GRAIN // n_classes))  # NOTE [Kernel threads]
    return grad


# NOTE [Negative log-likelihood in one kernel]
# nll_loss was a composition of eight ops (movedim, reshape, gather, products, two sums, a
# division): 39 us for an (8, 10) batch where torch takes 1.4. One pass over the rows picks each
# row's target entry, weights it and sums losses and weights in float64; a second kernel writes
# the gradient's one entry per row. Out-of-range targets are found in the same pass (the first
# one is reported, as the composition did).
@numba.njit(nogil=True, cache=True)
def nll_forward(rows, target, weight, has_weight, ignore_index, losses, sums):
    """losses[r] = -w[t_r] * rows[r, t_r] (0 where t_r is ignore_index); sums[0] += the
    losses, sums[1] += the weights; returns the first row whose target is out of range, or -1."""
    n_classes = rows.shape[1]
    for r in range(rows.shape[0]):
        t = target[r]
        if t == ignore_index:
            losses[r] = 0
            continue
        if t < 0 or t >= n_classes:
            return r
        w = weight[t] if has_weight else 1.0
        losses[r] = -w * rows[r, t]
        sums[0] += losses[r]
        sums[1] += w
    return -1


@numba.njit(nogil=True, cache=True)
def nll_backward(target, weight, has_weight, ignore_index, scale, per_row, out):
    """out (zeros, (rows, C)): out[r, t_r] = -w[t_r] * scale[r if per_row else 0]."""
    for r in range(out.shape[0]):
        t = target[r]
        if t != ignore_index:
            w = weight[t] if has_weight else 1.0
            out[r, t] = -w * scale[r if per_row else 0]
