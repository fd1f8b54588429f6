"""ONNX translations of nn.functional calls (the registry is in _functions.py)."""
from __future__ import annotations

import math

import numpy as np

import ember
import ember.nn.functional as F

from ._builder import Builder, T
from ._functions import FUNCTIONS, _e, _reg, _Unsupported


# ------------------------------------------------------------------------------ nn functions
def layer_norm(b: Builder, x: T, normalized_shape, weight, bias, eps) -> T:
    k = len(normalized_shape)
    shape = list(normalized_shape)
    if weight is None:
        weight = b.const(np.ones(shape, x.dtype))
    if bias is None:
        bias = b.const(np.zeros(shape, x.dtype))
    return b.op("LayerNormalization", [x, weight, bias], axis=-k, epsilon=float(eps))


@_reg(_e("layer_norm"))
def _layer_norm(b, node, args, kwargs):
    x, shape = args[0], args[1]
    weight = args[2] if len(args) > 2 else kwargs.get("weight")
    bias = args[3] if len(args) > 3 else kwargs.get("bias")
    eps = args[4] if len(args) > 4 else kwargs.get("eps", 1e-5)
    return layer_norm(b, x, shape, weight, bias, eps)


@_reg(_e("dropout"), _e("dropout1d"), _e("dropout2d"), _e("alpha_dropout"))
def _dropout(b, node, args, kwargs):
    training = args[2] if len(args) > 2 else kwargs.get("training", True)
    if training:
        raise _Unsupported()      # random in training mode: no deterministic translation
    return b.op("Identity", [args[0]])


def attention(b: Builder, q: T, k: T, v: T, mask=None, is_causal=False, scale=None) -> T:
    """softmax(q k^T * scale + mask) v over the last two dimensions."""
    head_dim = q.shape[-1]
    s = (1.0 / math.sqrt(head_dim)) if scale is None else scale
    perm = list(range(k.rank))
    perm[-2], perm[-1] = perm[-1], perm[-2]
    kt = b.op("Transpose", [k], perm=perm)
    scores = b.op("Mul", [b.op("MatMul", [q, kt]), b.tensor(s, q.dtype)])
    if is_causal:
        ls, ss = b.dim(q, -2), b.dim(k, -2)
        ones = b.op("ConstantOfShape", [b.i64_vec([ls, ss])], dtype=np.bool_,
                    value=b.onnx.numpy_helper.from_array(np.array([True])))
        keep = b.op("Trilu", [ones, b.tensor(0, np.int64)], upper=0)
        scores = b.op("Where", [keep, scores, b.tensor(-np.inf, q.dtype)])
    if mask is not None:
        if mask.dtype == np.bool_:
            scores = b.op("Where", [mask, scores, b.tensor(-np.inf, q.dtype)])
        else:
            scores = b.op("Add", [scores, b.cast(mask, q.dtype)])
    weights = b.op("Softmax", [scores], axis=-1)
    return b.op("MatMul", [weights, v])


@_reg(_e("scaled_dot_product_attention"))
def _sdpa(b, node, args, kwargs):
    q, k, v = args[:3]
    mask = args[3] if len(args) > 3 else kwargs.get("attn_mask")
    dropout_p = args[4] if len(args) > 4 else kwargs.get("dropout_p", 0.0)
    causal = args[5] if len(args) > 5 else kwargs.get("is_causal", False)
    if dropout_p:
        raise _Unsupported()
    return attention(b, q, k, v, mask, causal, kwargs.get("scale"))



def _alias_functional():
    # ember.nn.functional.<name> can be a wrapper of ember.<name> rather than the same object;
    # a program may call either, so both translate alike
    for name in dir(F):
        ours, top = getattr(F, name), getattr(ember, name, None)
        if callable(ours) and top is not None and top in FUNCTIONS and ours not in FUNCTIONS:
            FUNCTIONS[ours] = FUNCTIONS[top]

