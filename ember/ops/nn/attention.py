"""Fused scaled-dot-product attention: one Op for softmax(q k^T * scale [causal]) [dropout] v.

Forward and backward run the GEMMs on BLAS and the rest in numba (ember/ops/_kernels/
attention.py), saving the inputs and the (N, L, S) probabilities; no mask array is built. The
composite of ember ops in ember/nn/functional/_attention.py stays the path for attention
masks, broadcast batch dims, other dtypes, vmap and forward-mode AD.
"""
from __future__ import annotations

import math

import numpy as np

from ..._tensor import _make
from ...autograd.function import Op
from ...autograd.grad_mode import _state as _grad_state
from .._kernels import attention as _katt
from ..indexing import where
from .activation import Softmax


def _batched(a, rows, cols):
    """a (..., rows, cols) as a C-contiguous (N, rows, cols) array."""
    return np.ascontiguousarray(a.reshape(-1, rows, cols))


class ScaledDotProductAttention(Op):
    """softmax(q k^T * scale, causal top-left) with dropout ``keep``, times v.

    ``keep`` is None or an array shaped like the scores holding 0 (dropped) or 1/(1 - p);
    ``query``/``key``/``value`` share their leading dims and a float dtype.
    """

    @staticmethod
    def forward(ctx, query, key, value, scale, is_causal, keep):
        n_query, n_key, n_embed, n_value = (query.shape[-2], key.shape[-2], query.shape[-1],
                                            value.shape[-1])
        flat_keep = None if keep is None else keep.reshape(-1, n_query, n_key)
        out, p = _katt.attention_forward(
            _batched(query, n_query, n_embed), _batched(key, n_key, n_embed),
            _batched(value, n_key, n_value), scale, is_causal, flat_keep)
        ctx.scale, ctx.is_causal, ctx.keep = scale, is_causal, keep
        ctx.save_for_backward(query, key, value, p)
        return out.reshape(query.shape[:-1] + (n_value,))

    @staticmethod
    def backward(ctx, grad):
        query, key, value, p = ctx.saved_tensors
        if _grad_state.enabled:  # create_graph: ember ops, so that the gradient differentiates
            return _backward_recorded(ctx, grad, query, key, value) + (None, None, None)
        q, k, v, g = query._data, key._data, value._data, grad._data
        n_query, n_key, n_embed, n_value = q.shape[-2], k.shape[-2], q.shape[-1], v.shape[-1]
        keep = None if ctx.keep is None else ctx.keep.reshape(-1, n_query, n_key)
        dq, dk, dv = _katt.attention_backward(
            _batched(g, n_query, n_value), _batched(q, n_query, n_embed),
            _batched(k, n_key, n_embed), _batched(v, n_key, n_value), p._data,
            ctx.scale, ctx.is_causal, keep)
        return (_make(dq.reshape(q.shape)), _make(dk.reshape(k.shape)),
                _make(dv.reshape(v.shape)), None, None, None)


def _backward_recorded(ctx, grad, query, key, value):
    """The gradients with ember ops from the inputs (the saved probabilities are constants to
    autograd, so P is recomputed): dV = W^T g, dW = g V^T, dP = dW * keep,
    dS = scale * P * (dP - sum(dP * P)), dQ = dS K, dK = dS^T Q, with W = P * keep."""
    scores = query.matmul(key.transpose(-2, -1)) * ctx.scale
    if ctx.is_causal:
        n_query, n_key = scores.shape[-2], scores.shape[-1]
        allowed = _make(np.tril(np.ones((n_query, n_key), dtype=bool)))
        scores = where(allowed, scores, -math.inf)
    p = Softmax.apply(scores, -1, False)
    keep = None if ctx.keep is None else _make(ctx.keep)
    weights = p if keep is None else p * keep
    dv = weights.transpose(-2, -1).matmul(grad)
    dp = grad.matmul(value.transpose(-2, -1))
    if keep is not None:
        dp = dp * keep
    ds = p * (dp - (dp * p).sum(-1, keepdim=True)) * ctx.scale
    return ds.matmul(key), ds.transpose(-2, -1).matmul(query), dv
