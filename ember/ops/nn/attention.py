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


class ScaledDotProductAttention(Op):
    """softmax(q k^T * scale, causal top-left) with dropout ``keep``, times v.

    ``keep`` is None or an array shaped like the scores holding 0 (dropped) or 1/(1 - p);
    ``query``/``key``/``value`` share their leading dims and a float dtype.
    """

    @staticmethod
    def forward(ctx, query, key, value, scale, is_causal, keep):
        out, p = _katt.attention_forward(query, key, value, scale, is_causal, keep)
        ctx.scale, ctx.is_causal, ctx.keep = scale, is_causal, keep
        ctx.save_for_backward(query, key, value, p)
        return out

    @staticmethod
    def backward(ctx, grad):
        query, key, value, p = ctx.saved_tensors
        if _grad_state.enabled:  # create_graph: ember ops, so that the gradient differentiates
            return _backward_recorded(ctx, grad, query, key, value) + (None, None, None)
        dq, dk, dv = _katt.attention_backward(grad._data, query._data, key._data, value._data,
                                              p._data, ctx.scale, ctx.is_causal, ctx.keep)
        return _make(dq), _make(dk), _make(dv), None, None, None


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
