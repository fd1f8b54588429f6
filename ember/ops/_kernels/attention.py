"""Scaled-dot-product attention on (N, L, E) queries and (N, S, E) keys / values (N = batch x
heads): the two GEMMs of each direction go to BLAS through NumPy's batched matmul, and numba
fuses everything between them, the scale, the causal mask, the softmax and (backward) the
softmax's gradient, in one pass over each row of the (N, L, S) scores, without a mask array.

Causal masking is top-left aligned as in torch: query i sees keys 0..i, also when L != S (so
every row sees key 0 and no row is all masked).
"""

import math

import numba
import numpy as np

from ..._backend import reusable_empty
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


def attention_forward(q, k, v, scale, causal, keep=None):
    """(out, p): out = P v with P = softmax(q k^T * scale [causal]) (N, L, S), each dropped-out
    entry of P zeroed and the rest scaled by ``keep`` (an (N, L, S) array of 0 or 1/(1-p), or
    None). q (N, L, E), k (N, S, E), v (N, S, Ev): C-contiguous, one float dtype, L, S >= 1.
    p is the softmax before dropout: the backward needs it."""
    n, n_query, n_key = q.shape[0], q.shape[1], k.shape[1]
    p = np.matmul(q, k.transpose(0, 2, 1),
                  out=reusable_empty((n, n_query, n_key), q.dtype))
    _k_attention_softmax_fwd(p, q.dtype.type(scale), causal)
    weights = p if keep is None else p * keep
    return np.matmul(weights, v), p


def attention_backward(grad, q, k, v, p, scale, causal, keep=None):
    """(dq, dk, dv) of `attention_forward` given dL/dout (N, L, Ev)."""
    weights = p if keep is None else p * keep
    dv = np.matmul(weights.transpose(0, 2, 1), grad)
    dp = np.matmul(grad, v.transpose(0, 2, 1), out=reusable_empty(p.shape, p.dtype))
    if keep is not None:
        dp *= keep
    _k_attention_softmax_bwd(dp, p, q.dtype.type(scale), causal)
    dq = np.matmul(dp, k)
    dk = np.matmul(dp.transpose(0, 2, 1), q)
    return dq, dk, dv
