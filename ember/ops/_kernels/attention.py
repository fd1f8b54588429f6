"""Scaled-dot-product attention on (..., L, E) queries and (..., S, E) keys / values (... =
batch, heads): the two GEMMs of each direction go to BLAS through NumPy's batched matmul (on the
strided inputs as they are: no copies of permuted heads), and numba
fuses everything between them, the scale, the causal mask, the softmax and (backward) the
softmax's gradient, in one pass over each row of the (..., L, S) scores, without a mask array.

Causal masking is top-left aligned as in torch: query i sees keys 0..i, also when L != S (so
every row sees key 0 and no row is all masked).
"""

import math

import numba
import numpy as np

from ..._backend import reusable_empty
from ..._kernel_threads import blas_parallel_range, parallel_range
from .vmath import row_dot, row_max, row_sum, vexp

_OPTS = {"nogil": True, "cache": True, "error_model": "numpy"}


@numba.njit(**_OPTS)
def _k_attention_softmax_fwd(scores, scale, causal):
    """scores (N, L, S) -> softmax(scores * scale) per row, in place; with ``causal`` the keys
    after the row's query are set to probability 0 without being read."""
    n_batch, n_query, n_key = scores.shape
    for b in range(n_batch):
        for i in range(n_query):
            row = scores[b, i]
            seen = min(i + 1, n_key) if causal else n_key
            live = row[:seen]
            for k in range(seen):
                live[k] = live[k] * scale
            m = row_max(live)
            m = m if m != -math.inf else row.dtype.type(0)  # see _shift in softmax.py
            for k in range(seen):
                live[k] = vexp(live[k] - m)
            total = row_sum(live)
            for k in range(seen):
                live[k] = live[k] / total
            for k in range(seen, n_key):
                row[k] = 0


@numba.njit(**_OPTS)
def _k_attention_softmax_bwd(grad_p, p, scale, causal):
    """grad_p (N, L, S) = dL/dP -> dL/d(q k^T) = scale * P * (dP - sum(dP * P)), in place.
    Masked keys have P = 0, so their gradient is 0 and only the seen prefix is visited."""
    n_batch, n_query, n_key = p.shape
    for b in range(n_batch):
        for i in range(n_query):
            seen = min(i + 1, n_key) if causal else n_key
            g, y = grad_p[b, i, :seen], p[b, i, :seen]
            s = row_dot(g, y)
            for k in range(seen):
                g[k] = scale * y[k] * (g[k] - s)
            for k in range(seen, n_key):
                grad_p[b, i, k] = 0


def _grain(n_query, n_key):
    # (batch x head) matrices per kernel-thread part: ~16k scores (NOTE [Kernel threads])
    return max(1, (1 << 14) // (n_query * n_key))


def attention_forward(q, k, v, scale, causal, keep=None):
    """(out, p): out = P v with P = softmax(q k^T * scale [causal]) (..., L, S), each dropped-out
    entry of P zeroed and the rest scaled by ``keep`` (an array shaped like P of 0 or 1/(1-p),
    or None). q (..., L, E), k (..., S, E), v (..., S, Ev): one float dtype, the same leading
    dims, L, S >= 1, any strides (NumPy's batched matmul takes strided matrices as they are,
    so the heads of a permuted q/k/v projection are not copied). p is C-contiguous, the softmax
    before dropout: the backward needs it."""
    batch, n_query, n_key = q.shape[:-2], q.shape[-2], k.shape[-2]
    p = _bmm(q, np.swapaxes(k, -1, -2), reusable_empty(batch + (n_query, n_key), q.dtype))
    scores, scale = p.reshape(-1, n_query, n_key), q.dtype.type(scale)
    parallel_range(lambda lo, hi: _k_attention_softmax_fwd(scores[lo:hi], scale, causal),
                   scores.shape[0], _grain(n_query, n_key))
    weights = p if keep is None else p * keep
    return _bmm(weights, v, _out_buffer(q, v.shape[-1])), p


def _out_buffer(q, n_value):
    """The uninitialised (..., L, Ev) output, laid out as torch lays out its CPU kernel's: for
    a 4-D query whose heads are interleaved in memory ((B, L, H, E) transposed to (B, H, L, E),
    as a transformer block makes them) a (B, H, L, Ev) view of a C-contiguous (B, L, H, Ev)
    array, so that the usual ``y.transpose(1, 2).reshape(B, L, H * Ev)`` is a view rather than
    a copy; C-contiguous otherwise."""
    if q.ndim == 4 and q.strides[1] < q.strides[2]:
        b, h, n_query, _ = q.shape
        return reusable_empty((b, n_query, h, n_value), q.dtype).transpose(0, 2, 1, 3)
    return reusable_empty(q.shape[:-1] + (n_value,), q.dtype)


def attention_backward(grad, q, k, v, p, scale, causal, keep=None):
    """(dq, dk, dv) of `attention_forward` given dL/dout (..., L, Ev), any strides."""
    n_query, n_key = p.shape[-2], p.shape[-1]
    weights = p if keep is None else p * keep
    # the three gradients come from the reuse pool (NOTE [Reused buffers] in _backend.py)
    dv = _bmm(np.swapaxes(weights, -1, -2), grad,
              reusable_empty(v.shape[:-1] + grad.shape[-1:], grad.dtype))
    dp = _bmm(grad, np.swapaxes(v, -1, -2), reusable_empty(p.shape, p.dtype))
    if keep is not None:
        dp *= keep
    dps, ps = dp.reshape(-1, n_query, n_key), p.reshape(-1, n_query, n_key)
    scale = q.dtype.type(scale)
    parallel_range(lambda lo, hi: _k_attention_softmax_bwd(dps[lo:hi], ps[lo:hi], scale, causal),
                   ps.shape[0], _grain(n_query, n_key))
    dq = _bmm(dp, k, reusable_empty(q.shape, np.result_type(dp, k)))
    dk = _bmm(np.swapaxes(dp, -1, -2), q, reusable_empty(k.shape, np.result_type(dp, q)))
    return dq, dk, dv


def _bmm(a, b, out):
    """np.matmul(a, b, out=out) for operands with the same leading (batch) dims; with at least
    two entries on the first batch axis, that axis is split over the kernel threads with BLAS
    on one thread per part (NOTE [Small GEMMs on the kernel threads] in _kernel_threads.py)."""
    if a.ndim < 3 or a.shape[0] < 2:
        return np.matmul(a, b, out=out)
    blas_parallel_range(lambda lo, hi: np.matmul(a[lo:hi], b[lo:hi], out=out[lo:hi]),
                        a.shape[0], 1)
    return out
