"""numba kernels for the optimizers: one fused elementwise pass per parameter.

Every kernel works in place on flat (1-D, C-contiguous) arrays of one float dtype: the parameter
``p``, its gradient ``g`` (read only) and the optimizer's state buffers. Scalars that depend only
on the step count (bias corrections, step sizes) are computed once in Python and passed in, so a
kernel does no per-element work that does not depend on the element.

NOTE [Optimizer kernel numerics and speed]
* The arithmetic follows PyTorch's documented update rules operation by operation (including
  where a state value is stored and read back), so float64 trajectories agree with torch to
  ~1e-15 relative.
* Scalars arrive already converted to the arrays' dtype (``_elementwise_update`` does it) and
  the kernels contain no float literals: float32 parameters are then updated in float32 like
  torch's CPU kernels (which cast scalar arguments to the tensor's compute type), and the loops
  stay in one precision, which lets LLVM vectorize them.
* ``error_model="numpy"``: division by zero gives inf/nan as in torch instead of numba's
  Python-style ZeroDivisionError check, whose branch would also block vectorization.
* ``maximize`` enters as a sign (``gsign`` = +-1, an exact multiply) rather than a branch.
* NOTE [Unsigned loop indices]: numba wraps a negative index (a[i] with i < 0 reads from the
  end), and the check it emits for a signed loop variable kept Adam's loop scalar: indexing with
  uint64 keeps that check out of the loops. Adam's common case (no amsgrad, no L2 term) also
  runs as a loop without the helpers' loop-invariant branches, which LLVM left in the loop:
  a 320K-element float32 update 283 -> ~136 us (one thread, smoke figures on a busy machine;
  the same operations in the same order, so the same bits).
Unused state arguments receive the parameter array as a placeholder (numba needs a fixed
signature); each kernel branches once, outside its loops, so that a loop never mentions a buffer
it does not use -- an overlapping pair of written arrays in a loop makes LLVM fall back to its
scalar version (measured 5-10x slower for Adam).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange, uint64

from .. import _onepool

_JIT = dict(nogil=True, cache=True, error_model="numpy")


@njit(inline="always", **_JIT)
def _lerp(start, end, weight, one_minus_weight):
    # torch.lerp's two-sided form: exact at both ends; the branch is loop-invariant
    if weight < 0.5:
        return start + weight * (end - start)
    return end - (end - start) * one_minus_weight


@njit(inline="always", **_JIT)
def _nan_max(a, b):
    # torch.maximum propagates NaN; Python's max() would drop it depending on argument order
    if a != a or a > b:
        return a
    return b


@njit(inline="always", **_JIT)
def _decayed(gi, pi, gsign, weight_decay):
    # (maximized) gradient plus the L2 penalty. Helpers take scalars only: passing arrays into
    # an inlined helper leaves reference-count updates in the loop, which blocks vectorization
    d = gsign * gi
    if weight_decay != 0:
        d = d + weight_decay * pi
    return d


@njit(inline="always", **_JIT)
def _shrunk(pi, decoupled_factor, decoupled):
    # decoupled weight decay (AdamW): shrink the weight before the update
    if decoupled:
        return pi * decoupled_factor
    return pi


@njit(**_JIT)
def _k_sgd_step(p, g, buf, neg_lr, gsign, momentum, one_minus_dampening, weight_decay, nesterov,
                init_buf):
    # one loop per buffer configuration: a loop must not mention an unused (placeholder) array,
    # or LLVM's overlap check against it makes the loop run unvectorized
    if momentum == 0:
        for i in range(p.size):
            p[i] = p[i] + neg_lr * _decayed(g[i], p[i], gsign, weight_decay)
        return
    for i in range(p.size):
        d = _decayed(g[i], p[i], gsign, weight_decay)
        if init_buf:
            buf[i] = d  # first step: the buffer starts as a copy of the gradient
        else:
            buf[i] = buf[i] * momentum + one_minus_dampening * d
        if nesterov:
            d = d + momentum * buf[i]
        else:
            d = buf[i]
        p[i] = p[i] + neg_lr * d


@njit(**_JIT)
def _k_sgd_multi(ps, gs, bufs, neg_lr, gsign, momentum, one_minus_dampening, weight_decay,
                 nesterov, init_buf):
    # up to _MULTI parameters, each by _k_sgd_step's loop (NOTE [One SGD call for many
    # parameters] in sgd.py)
    for k in range(len(ps)):
        _k_sgd_step(ps[k], gs[k], bufs[k], neg_lr, gsign, momentum, one_minus_dampening,
                    weight_decay, nesterov, init_buf)


@njit(inline="always", **_JIT)
def _overlap(lo, hi, start, n):
    """The part [a, b) of a parameter laid at [start, start + n) that the range [lo, hi) covers,
    in the parameter's own indices (empty when a >= b)."""
    return max(lo, start) - start, min(hi, start + n) - start


@njit(**_JIT)
def _k_sgd_multi_span(ps, gs, bufs, lo, hi, neg_lr, gsign, momentum, one_minus_dampening,
                      weight_decay, nesterov, init_buf):
    """_k_sgd_multi on elements lo..hi of the parameters laid end to end: one part of an update
    of many parameters in parts (NOTE [One SGD hand-off for all parameters] in sgd.py).
    Elementwise, so the same numbers for any split."""
    start = 0
    for k in range(len(ps)):
        a, b = _overlap(lo, hi, start, ps[k].size)
        if a < b:
            _k_sgd_step(ps[k][a:b], gs[k][a:b], bufs[k][a:b], neg_lr, gsign, momentum,
                        one_minus_dampening, weight_decay, nesterov, init_buf)
        start += ps[k].size


@njit(**_JIT)
def _k_adam_step(p, g, exp_avg, exp_avg_sq, max_exp_avg_sq, gsign, w1, one_minus_w1, beta2,
                 one_minus_beta2, eps, coupled_decay, decoupled_factor, neg_step_size,
                 bias_correction2_sqrt, amsgrad, decoupled):
    # unsigned indices: NOTE [Unsigned loop indices]
    n = uint64(p.size)
    if not amsgrad and coupled_decay == 0 and w1 < 0.5:
        # the common case as straight-line loops: the same operations as the general loop
        # below with its branches taken (lerp's first form, no L2 term), which LLVM otherwise
        # left inside the loop (NOTE [Unsigned loop indices])
        if decoupled:
            for i in range(n):
                pi = p[i] * decoupled_factor
                d = gsign * g[i]
                m = exp_avg[i] + w1 * (d - exp_avg[i])
                exp_avg[i] = m
                v = exp_avg_sq[i] * beta2 + one_minus_beta2 * d * d
                exp_avg_sq[i] = v
                p[i] = pi + neg_step_size * (m / (math.sqrt(v) / bias_correction2_sqrt + eps))
            return
        for i in range(n):
            d = gsign * g[i]
            m = exp_avg[i] + w1 * (d - exp_avg[i])
            exp_avg[i] = m
            v = exp_avg_sq[i] * beta2 + one_minus_beta2 * d * d
            exp_avg_sq[i] = v
            p[i] = p[i] + neg_step_size * (m / (math.sqrt(v) / bias_correction2_sqrt + eps))
        return
    if amsgrad:
        for i in range(n):
            p[i] = _shrunk(p[i], decoupled_factor, decoupled)
            d = _decayed(g[i], p[i], gsign, coupled_decay)
            exp_avg[i] = _lerp(exp_avg[i], d, w1, one_minus_w1)
            exp_avg_sq[i] = exp_avg_sq[i] * beta2 + one_minus_beta2 * d * d
            max_exp_avg_sq[i] = _nan_max(max_exp_avg_sq[i], exp_avg_sq[i])
            denom = math.sqrt(max_exp_avg_sq[i]) / bias_correction2_sqrt + eps
            p[i] = p[i] + neg_step_size * (exp_avg[i] / denom)
        return
    for i in range(n):
        p[i] = _shrunk(p[i], decoupled_factor, decoupled)
        d = _decayed(g[i], p[i], gsign, coupled_decay)
        exp_avg[i] = _lerp(exp_avg[i], d, w1, one_minus_w1)
        exp_avg_sq[i] = exp_avg_sq[i] * beta2 + one_minus_beta2 * d * d
        denom = math.sqrt(exp_avg_sq[i]) / bias_correction2_sqrt + eps
        p[i] = p[i] + neg_step_size * (exp_avg[i] / denom)


# NOTE [One Adam call for many parameters]
# Adam's per-parameter cost outside the arithmetic (state lookups, a kernel dispatch, scalar
# conversion: ~10-20 us each) is a third of NCF's optimizer step (10 parameters, 4 of them
# 320K-element tables). _k_adam_multi updates up to _MULTI parameters in one call, each with the
# per-parameter kernel's own loop, so the numbers are the ones _k_adam_step computes; the
# arrays arrive as fixed-length tuples of flat arrays (padded with empty ones) so that numba
# compiles one specialisation per dtype, not one per parameter count.
_MULTI = 8


@njit(**_JIT)
def _k_adam_multi(ps, gs, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, gsign, w1, one_minus_w1,
                  beta2, one_minus_beta2, eps, coupled_decay, decoupled_factor, neg_step_size,
                  bias_correction2_sqrt, amsgrad, decoupled):
    for k in range(len(ps)):
        _k_adam_step(ps[k], gs[k], exp_avgs[k], exp_avg_sqs[k], max_exp_avg_sqs[k], gsign, w1,
                     one_minus_w1, beta2, one_minus_beta2, eps, coupled_decay,
                     decoupled_factor, neg_step_size, bias_correction2_sqrt, amsgrad,
                     decoupled)


@njit(**_JIT)
def _k_adam_multi_span(ps, gs, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, lo, hi, gsign, w1,
                       one_minus_w1, beta2, one_minus_beta2, eps, coupled_decay,
                       decoupled_factor, neg_step_size, bias_correction2_sqrt, amsgrad,
                       decoupled):
    """_k_adam_multi on elements lo..hi of the parameters laid end to end: one part of a
    parallel_range over all of them (NOTE [One Adam hand-off for many parameters] in adam.py).
    Elementwise, so the same numbers for any split."""
    start = 0
    for k in range(len(ps)):
        a, b = _overlap(lo, hi, start, ps[k].size)
        if a < b:
            _k_adam_step(ps[k][a:b], gs[k][a:b], exp_avgs[k][a:b], exp_avg_sqs[k][a:b],
                         max_exp_avg_sqs[k][a:b], gsign, w1, one_minus_w1, beta2,
                         one_minus_beta2, eps, coupled_decay, decoupled_factor, neg_step_size,
                         bias_correction2_sqrt, amsgrad, decoupled)
        start += ps[k].size


# With the one pool on (NOTE [One pool] in ember/_onepool.py) the queued parameters are cut into
# chunks of _CHUNK elements, and one parallel loop over all the chunks of all of them runs
# _k_adam_step on each: elementwise, so the same numbers as _k_adam_multi for any split. (The
# unused amsgrad placeholder is the parameter itself, so it slices like one.)
_CHUNK = 1 << 14


@_onepool.twin(min_work=1 << 16, error_model="numpy")
def _k_adam_multi_chunks(ps, gs, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, gsign, w1,
                         one_minus_w1, beta2, one_minus_beta2, eps, coupled_decay,
                         decoupled_factor, neg_step_size, bias_correction2_sqrt, amsgrad,
                         decoupled):
    n_chunks = 0
    for k in range(len(ps)):
        n_chunks += (ps[k].size + _CHUNK - 1) // _CHUNK
    owner = np.empty(n_chunks, np.int64)
    start = np.empty(n_chunks, np.int64)
    c = 0
    for k in range(len(ps)):
        for lo in range(0, ps[k].size, _CHUNK):
            owner[c] = k
            start[c] = lo
            c += 1
    for c in prange(n_chunks):
        k = owner[c]
        lo = start[c]
        hi = min(lo + _CHUNK, ps[k].size)
        _k_adam_step(ps[k][lo:hi], gs[k][lo:hi], exp_avgs[k][lo:hi], exp_avg_sqs[k][lo:hi],
                     max_exp_avg_sqs[k][lo:hi], gsign, w1,
                     one_minus_w1, beta2, one_minus_beta2, eps, coupled_decay,
                     decoupled_factor, neg_step_size, bias_correction2_sqrt, amsgrad,
                     decoupled)


@njit(**_JIT)
def _k_rmsprop_step(p, g, square_avg, grad_avg, momentum_buffer, neg_lr, gsign, alpha,
                    one_minus_alpha, alpha_w, alpha_w_c, eps, weight_decay, momentum, centered):
    # one loop per buffer configuration (see _k_sgd_step)
    n = p.size
    if centered and momentum > 0:
        for i in range(n):
            d = _decayed(g[i], p[i], gsign, weight_decay)
            square_avg[i] = square_avg[i] * alpha + one_minus_alpha * d * d
            grad_avg[i] = _lerp(grad_avg[i], d, alpha_w, alpha_w_c)
            avg = math.sqrt(square_avg[i] - grad_avg[i] * grad_avg[i]) + eps
            momentum_buffer[i] = momentum_buffer[i] * momentum + d / avg
            p[i] = p[i] + neg_lr * momentum_buffer[i]
    elif centered:
        for i in range(n):
            d = _decayed(g[i], p[i], gsign, weight_decay)
            square_avg[i] = square_avg[i] * alpha + one_minus_alpha * d * d
            grad_avg[i] = _lerp(grad_avg[i], d, alpha_w, alpha_w_c)
            avg = math.sqrt(square_avg[i] - grad_avg[i] * grad_avg[i]) + eps
            p[i] = p[i] + neg_lr * (d / avg)
    elif momentum > 0:
        for i in range(n):
            d = _decayed(g[i], p[i], gsign, weight_decay)
            square_avg[i] = square_avg[i] * alpha + one_minus_alpha * d * d
            avg = math.sqrt(square_avg[i]) + eps
            momentum_buffer[i] = momentum_buffer[i] * momentum + d / avg
            p[i] = p[i] + neg_lr * momentum_buffer[i]
    else:
        for i in range(n):
            d = _decayed(g[i], p[i], gsign, weight_decay)
            square_avg[i] = square_avg[i] * alpha + one_minus_alpha * d * d
            avg = math.sqrt(square_avg[i]) + eps
            p[i] = p[i] + neg_lr * (d / avg)


@njit(**_JIT)
def _k_adagrad_step(p, g, state_sum, neg_clr, gsign, eps, weight_decay):
    for i in range(p.size):
        d = _decayed(g[i], p[i], gsign, weight_decay)
        state_sum[i] = state_sum[i] + d * d
        std = math.sqrt(state_sum[i]) + eps
        p[i] = p[i] + neg_clr * (d / std)


@njit(**_JIT)
def _k_adadelta_step(p, g, square_avg, acc_delta, neg_lr, gsign, rho, one_minus_rho, eps,
                     weight_decay):
    for i in range(p.size):
        d = _decayed(g[i], p[i], gsign, weight_decay)
        square_avg[i] = square_avg[i] * rho + one_minus_rho * d * d
        std = math.sqrt(square_avg[i] + eps)
        delta = math.sqrt(acc_delta[i] + eps) / std * d
        acc_delta[i] = acc_delta[i] * rho + one_minus_rho * delta * delta
        p[i] = p[i] + neg_lr * delta


@njit(**_JIT)
def _k_adamax_step(p, g, exp_avg, exp_inf, neg_clr, gsign, w1, one_minus_w1, beta2, eps,
                   weight_decay):
    for i in range(p.size):
        d = _decayed(g[i], p[i], gsign, weight_decay)
        exp_avg[i] = _lerp(exp_avg[i], d, w1, one_minus_w1)
        exp_inf[i] = _nan_max(exp_inf[i] * beta2, abs(d) + eps)
        p[i] = p[i] + neg_clr * (exp_avg[i] / exp_inf[i])


@njit(**_JIT)
def _k_nadam_step(p, g, exp_avg, exp_avg_sq, gsign, w1, one_minus_w1, beta2, one_minus_beta2,
                  eps, coupled_decay, decoupled_factor, bias_correction2, grad_coef, avg_coef,
                  decoupled):
    for i in range(p.size):
        p[i] = _shrunk(p[i], decoupled_factor, decoupled)
        d = _decayed(g[i], p[i], gsign, coupled_decay)
        exp_avg[i] = _lerp(exp_avg[i], d, w1, one_minus_w1)
        exp_avg_sq[i] = exp_avg_sq[i] * beta2 + one_minus_beta2 * d * d
        denom = math.sqrt(exp_avg_sq[i] / bias_correction2) + eps
        # two separate updates, as in torch: the gradient term then the momentum term
        p[i] = p[i] + grad_coef * (d / denom)
        p[i] = p[i] + avg_coef * (exp_avg[i] / denom)


@njit(**_JIT)
def _k_radam_step(p, g, exp_avg, exp_avg_sq, gsign, w1, one_minus_w1, beta2, one_minus_beta2,
                  eps, coupled_decay, decoupled_factor, lr, bias_correction1, sqrt_bc2, rect,
                  rectify, decoupled):
    for i in range(p.size):
        p[i] = _shrunk(p[i], decoupled_factor, decoupled)
        d = _decayed(g[i], p[i], gsign, coupled_decay)
        exp_avg[i] = _lerp(exp_avg[i], d, w1, one_minus_w1)
        exp_avg_sq[i] = exp_avg_sq[i] * beta2 + one_minus_beta2 * d * d
        corrected = exp_avg[i] / bias_correction1
        if rectify:
            adaptive = sqrt_bc2 / (math.sqrt(exp_avg_sq[i]) + eps)
            p[i] = p[i] - corrected * lr * adaptive * rect
        else:
            p[i] = p[i] - corrected * lr
