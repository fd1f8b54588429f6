"""Attention of ``ember.nn.functional``: scaled_dot_product_attention and
multi_head_attention_forward. Composites of ember ops, so they get gradients of any order for
free.
"""
from __future__ import annotations

import math

import numpy as np

from ... import _dtype as D
from ..._tensor import Tensor, _make
from ...autograd.function import _batch_hook, _fw_active
from ...ops._kernels import attention as _katt
from ...ops.indexing import where
from ...ops.join import cat
from ...ops.nn import attention as _ops
from ...ops.products import matmul
from ...ops.registry import records, unwatched
from ._resize import pad
from ._utils import _check_tensor

__all__ = [
    "scaled_dot_product_attention", "multi_head_attention_forward",
]


# ---------------------------------------------------------------------------------------------
# attention


def _softmax(x, dim):
    """Numerically stable softmax; rows that are entirely -inf give NaN, as in torch."""
    shift = x.amax(dim=dim, keepdim=True).detach()
    e = (x - shift).exp()
    return e / e.sum(dim=dim, keepdim=True)


def _safe_softmax(x, dim):
    """softmax for scaled_dot_product_attention: a row whose scores are all -inf (a query
    allowed to attend to nothing, such as a padding position) gives zeros, not NaN, as torch's
    math backend gives them since 2.5. The shift and the denominator of such a row are
    replaced (0 and 1), so neither the values nor the gradients meet a NaN; a NaN in a
    padding row would reach every later layer through 0 * NaN in the next product."""
    shift = x.amax(dim=dim, keepdim=True).detach()
    shift = where(shift == float("-inf"), 0.0, shift)
    e = (x - shift).exp()
    total = e.sum(dim=dim, keepdim=True)
    return e / where(total == 0, 1.0, total)


def _dropout(x, p, training=True):
    if p == 0.0 or not training:
        return x
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 1.0:
        return x * 0
    from ... import rand
    keep = _make((rand(*x.shape)._data >= p).astype(x._data.dtype) / (1.0 - p))
    return x * keep


def _keep_mask(shape, p, dtype):
    """The dropout multiplier of the fused path: 0 where dropped, 1/(1 - p) elsewhere, drawn as
    `_dropout` draws it (so both paths drop the same entries for one seed)."""
    if p == 1.0:
        return np.zeros(shape, dtype)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    from ... import rand
    return (rand(*shape)._data >= p).astype(dtype) / dtype.type(1.0 - p)


def _fusable(query, key, value, attn_mask):
    """Whether the fused Op (ember/ops/nn/attention.py) computes this call: no mask, one float32
    or float64 dtype, equal leading dims, no empty dim, and neither vmap nor forward-mode AD
    running (they batch / differentiate the composite)."""
    from ...autograd.function import _batch_hook, _fw_active
    return (attn_mask is None and query._data.dtype in (np.float32, np.float64)
            and query.shape[:-2] == key.shape[:-2] == value.shape[:-2]
            and 0 not in query.shape and 0 not in key.shape and 0 not in value.shape
            and _batch_hook[0] is None and not _fw_active[0])


_FAST_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _fast_call(query, key, value, attn_mask, dropout_p, scale):
    """The scale when the call is the common fused case (what `_fusable` accepts, without a
    mask or dropout, same-rank q/k/v), checked on the arrays' shapes; else None. A decoding
    step calls attention once per layer and token, and the general checks build Size objects."""
    if (attn_mask is not None or dropout_p != 0.0 or not isinstance(query, Tensor)
            or not isinstance(key, Tensor) or not isinstance(value, Tensor)):
        return None
    q, k, v = query._data, key._data, value._data
    qs, ks, vs = q.shape, k.shape, v.shape
    if (q.dtype not in _FAST_DTYPES or k.dtype != q.dtype or v.dtype != q.dtype
            or len(qs) < 2 or len(ks) != len(qs) or len(vs) != len(qs)
            or qs[:-2] != ks[:-2] or qs[:-2] != vs[:-2] or qs[-1] != ks[-1] or ks[-2] != vs[-2]
            or q.size == 0 or k.size == 0 or v.size == 0
            or _batch_hook[0] is not None or _fw_active[0]):
        return None
    return 1.0 / math.sqrt(qs[-1]) if scale is None else float(scale)


def _repeat_heads(x, times):
    """(..., Hkv, S, E) -> (..., Hkv * times, S, E), each head repeated ``times`` in a row."""
    if times == 1:
        return x
    *lead, hk, s, e = x.shape
    return x.unsqueeze(-3).expand(*lead, hk, times, s, e).reshape(*lead, hk * times, s, e)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """softmax(Q K^T * scale + mask) V over (..., L, E) queries and (..., S, E) keys/values.

    attn_mask: bool (True = may attend) or float (added to the scores), broadcastable to
    (..., L, S). is_causal: mask out keys after each query (cannot combine with attn_mask).

    Example:
        >>> import ember
        >>> q = ember.ones(2, 3, 4)
        >>> scaled_dot_product_attention(q, q, q).shape
        ember.Size([2, 3, 4])
    """
    fast = _fast_call(query, key, value, attn_mask, dropout_p, scale)
    if fast is not None:
        if not records((query, key, value)) and unwatched():
            # nothing records or watches the call (a decoding step): the kernel's output
            # straight away, NOTE [Unwatched no-grad views] in ops/registry.py (~3 us of a
            # 10 us call at one query and 49 keys)
            return _make(_katt.attention_forward(query._data, key._data, value._data, fast,
                                                 bool(is_causal))[0])
        return _ops.ScaledDotProductAttention.apply(query, key, value, fast, bool(is_causal),
                                                    None)
    name = "scaled_dot_product_attention"
    for t, arg in ((query, "query"), (key, "key"), (value, "value")):
        _check_tensor(name, t, arg)
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError(f"{name}: query, key and value must be at least 2-D; got "
                           f"{tuple(query.shape)}, {tuple(key.shape)}, {tuple(value.shape)}.")
    if query.dtype != key.dtype or query.dtype != value.dtype:
        raise RuntimeError(f"{name}: Expected query, key, and value to have the same dtype, but "
                           f"got query.dtype: {query.dtype} key.dtype: {key.dtype} and "
                           f"value.dtype: {value.dtype} instead.")
    if not query.is_floating_point():
        raise RuntimeError(f"{name}: expected floating-point query, key and value, got "
                           f"{query.dtype}")
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise RuntimeError(f"{name}: expected query (..., L, E), key (..., S, E) and value "
                           f"(..., S, Ev); got {tuple(query.shape)}, {tuple(key.shape)}, "
                           f"{tuple(value.shape)}.")
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        hq, hk = query.shape[-3], key.shape[-3]
        if hq % hk or value.shape[-3] != hk:
            raise RuntimeError(f"{name}: with enable_gqa the number of query heads ({hq}) must "
                               f"be a multiple of the key/value heads ({hk}, {value.shape[-3]}).")
        key, value = _repeat_heads(key, hq // hk), _repeat_heads(value, hq // hk)
    try:
        if query.shape[:-2] != key.shape[:-2] or key.shape[:-2] != value.shape[:-2]:
            np.broadcast_shapes(tuple(query.shape[:-2]), tuple(key.shape[:-2]),
                                tuple(value.shape[:-2]))
    except ValueError:
        raise RuntimeError(f"{name}: the batch dims of query {tuple(query.shape)}, key "
                           f"{tuple(key.shape)} and value {tuple(value.shape)} do not broadcast"
                           + ("" if enable_gqa else " (pass enable_gqa=True for grouped heads)")
                           ) from None
    L, S = query.shape[-2], key.shape[-2]
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    if S == 0:  # no keys: torch returns zeros (an empty sum of values), as these products do
        return (query.matmul(key.transpose(-2, -1)) * scale).matmul(value)
    if _fusable(query, key, value, attn_mask):
        keep = None
        if dropout_p > 0.0:
            keep = _keep_mask(tuple(query.shape[:-1]) + (S,), dropout_p, query._data.dtype)
        return _ops.ScaledDotProductAttention.apply(query, key, value, scale, bool(is_causal),
                                                    keep)
    scores = query.matmul(key.transpose(-2, -1)) * scale
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError(f"{name}: _scaled_dot_product_attention: Explicit attn_mask "
                               "should not be set when is_causal=True")
        attn_mask = _make(np.tril(np.ones((L, S), dtype=bool)))
        if query._meta:
            attn_mask = attn_mask.to("meta")
    if attn_mask is not None:
        _check_tensor(name, attn_mask, "attn_mask")
        try:
            np.broadcast_shapes(attn_mask.shape, scores.shape)
        except ValueError:
            raise RuntimeError(f"{name}: attn_mask of shape {tuple(attn_mask.shape)} does not "
                               f"broadcast to the attention scores (..., L, S) = "
                               f"{tuple(scores.shape)}.") from None
        if attn_mask.dtype == D.bool_:   # (one op: compiled code can record it, gpt-fast)
            scores = where(attn_mask, scores, float("-inf"))
        else:
            scores = scores + attn_mask.to(scores.dtype)
    weights = _dropout(_safe_softmax(scores, -1) if attn_mask is not None else
                       _softmax(scores, -1), dropout_p)
    return weights.matmul(value)


def _canonical_mask(mask, name, arg, dtype):
    """A key padding / attention mask as float (bool True -> -inf: not allowed to attend)."""
    if mask is None:
        return None
    _check_tensor(name, mask, arg)
    if mask.dtype == D.bool_:
        return _make(np.where(mask._data, -np.inf, 0.0).astype(dtype.np))
    if not mask.is_floating_point():
        raise AssertionError(f"{name}: only bool and floating types of {arg} are supported; "
                             f"got {mask.dtype}.")
    return mask.to(dtype)


def _in_projection(query, key, value, w, b, sep, embed_dim):

    def lin(x, weight, bias):
        y = matmul(x, weight.t())
        return y if bias is None else y + bias

    bq = bk = bv = None
    if b is not None:
        bq, bk, bv = b[:embed_dim], b[embed_dim:2 * embed_dim], b[2 * embed_dim:]
    if sep is None:
        wq, wk, wv = w[:embed_dim], w[embed_dim:2 * embed_dim], w[2 * embed_dim:]
    else:
        wq, wk, wv = sep
    return lin(query, wq, bq), lin(key, wk, bk), lin(value, wv, bv)


def _check_mha_masks(attn_mask, key_padding_mask, tgt_len, src_len, bsz, num_heads, name,
                     padded_len=None):
    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"{name}: The shape of the 2D attn_mask is "
                                   f"{tuple(attn_mask.shape)}, but should be "
                                   f"{(tgt_len, src_len)} (L, S).")
        elif attn_mask.ndim == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"{name}: The shape of the 3D attn_mask is "
                                   f"{tuple(attn_mask.shape)}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)} (N * num_heads, L, S).")
        else:
            raise RuntimeError(f"{name}: attn_mask's dimension {attn_mask.ndim} is not "
                               "supported; expected a 2-D (L, S) or 3-D (N * num_heads, L, S) "
                               "mask.")
    # torch checks key_padding_mask against the keys actually used (static_k's length)
    padded_len = src_len if padded_len is None else padded_len
    if key_padding_mask is not None and tuple(key_padding_mask.shape) != (bsz, padded_len):
        raise RuntimeError(f"{name}: expected key_padding_mask of shape {(bsz, padded_len)} "
                           f"(N, S), got {tuple(key_padding_mask.shape)}.")


def _check_mha_inputs(query, key, value, embed_dim_to_check, num_heads, is_causal, attn_mask,
                      key_padding_mask, name, padded_len=None):
    """Shape checks of multi_head_attention_forward on batched (L, N, E) inputs."""
    tgt_len, bsz, embed_dim = query.shape
    if embed_dim != embed_dim_to_check:
        raise RuntimeError(f"{name}: was expecting embedding dimension of {embed_dim_to_check}, "
                           f"but got {embed_dim} (query shape {tuple(query.shape)}).")
    if key.shape[:2] != value.shape[:2] or key.shape[1] != bsz:
        raise RuntimeError(f"{name}: key shape {tuple(key.shape)} does not match value shape "
                           f"{tuple(value.shape)} / batch size {bsz}.")
    if is_causal and attn_mask is None:
        raise RuntimeError(f"{name}: Need attn_mask if specifying the is_causal hint.")
    if (embed_dim // num_heads) * num_heads != embed_dim:
        raise AssertionError(f"{name}: embed_dim {embed_dim} not divisible by num_heads "
                             f"{num_heads}")
    _check_mha_masks(attn_mask, key_padding_mask, tgt_len, key.shape[0], bsz, num_heads, name,
                     padded_len)


def _append_key(k, v, extra_k, extra_v, masks, dim):
    """Append one key / value position along ``dim``; masks grow by a zero (allowed) column."""
    for i, m in enumerate(masks):
        masks[i] = None if m is None else pad(m, (0, 1))
    return cat([k, extra_k], dim=dim), cat([v, extra_v], dim=dim)


def _merge_masks(attn_mask, key_padding_mask, bsz, num_heads, src_len):
    """One additive (N * H, L or 1, S) mask from the float attention and key padding masks."""
    if key_padding_mask is None:
        return attn_mask
    kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(bsz, num_heads, 1, src_len)
    kpm = kpm.reshape(bsz * num_heads, 1, src_len)
    return kpm if attn_mask is None else attn_mask + kpm


def _static(t, arg, heads, head_dim):
    """A static key / value: (N * num_heads, S, head_dim), checked like torch checks it."""
    if t.ndim != 3 or t.shape[0] != heads or t.shape[2] != head_dim:
        raise RuntimeError(f"MultiheadAttention: expecting {arg} of shape ({heads}, S, "
                           f"{head_dim}) (N * num_heads, S, head_dim); got {tuple(t.shape)}.")
    return t


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """Multi-head attention on sequence-first (L, N, E) inputs (or unbatched (L, E)).

    Masks follow nn.MultiheadAttention: a bool mask marks with True the positions that may NOT
    be attended; a float mask is added to the scores. Returns (output, weights or None).

    ``static_k`` / ``static_v`` ((N * num_heads, S, head_dim)) replace the projected keys /
    values per head (the key / value inputs are then only used for their shapes), as in torch.
    """
    name = "MultiheadAttention"
    batched = query.ndim == 3
    if query.ndim not in (2, 3) or key.ndim != query.ndim or value.ndim != query.ndim:
        raise RuntimeError(f"{name}: expected query, key, value all 3-D (L, N, E) (or 2-D "
                           f"unbatched (L, E)); got {tuple(query.shape)}, {tuple(key.shape)}, "
                           f"{tuple(value.shape)}.")
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    _check_mha_inputs(query, key, value, embed_dim_to_check, num_heads, is_causal, attn_mask,
                      key_padding_mask, name,
                      static_k.shape[1] if static_k is not None and static_k.ndim == 3 else None)
    head_dim = embed_dim // num_heads
    dt = query.dtype
    attn_mask = _canonical_mask(attn_mask, name, "attn_mask", dt)
    key_padding_mask = _canonical_mask(key_padding_mask, name, "key_padding_mask", dt)
    sep = (q_proj_weight, k_proj_weight, v_proj_weight) if use_separate_proj_weight else None
    q, k, v = _in_projection(query, key, value, in_proj_weight, in_proj_bias, sep, embed_dim)
    masks = [attn_mask, key_padding_mask]
    if bias_k is not None and bias_v is not None:
        # torch's rule: a bias cannot be appended to a key / value given whole
        if static_k is not None or static_v is not None:
            raise AssertionError(f"{name}: bias cannot be added to static key / value; got "
                                 "bias_k / bias_v together with static_k / static_v.")
        k, v = _append_key(k, v, bias_k.reshape(1, 1, embed_dim).expand(1, bsz, embed_dim),
                           bias_v.reshape(1, 1, embed_dim).expand(1, bsz, embed_dim), masks, 0)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _static(static_k, "static_k", bsz * num_heads, head_dim) if static_k is not None else \
        k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    v = _static(static_v, "static_v", bsz * num_heads, head_dim) if static_v is not None else \
        v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    if add_zero_attn:
        zero = _make(np.zeros((bsz * num_heads, 1, head_dim), dt.np))
        k, v = _append_key(k, v, zero, zero, masks, 1)
    src_len = k.shape[1]
    attn_mask = _merge_masks(masks[0], masks[1], bsz, num_heads, src_len)
    if not training:
        dropout_p = 0.0
    scores = q.matmul(k.transpose(1, 2)) * (1.0 / math.sqrt(head_dim))
    if attn_mask is not None:
        scores = scores + attn_mask
    # the returned weights are the dropped-out ones, as torch returns them
    weights = _dropout(_softmax(scores, -1), dropout_p)
    out = weights.matmul(v)  # (N * H, L, hd)
    out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    out = out.matmul(out_proj_weight.t())
    if out_proj_bias is not None:
        out = out + out_proj_bias
    # out_proj_weight may map embed_dim to another width (CLIP's attention pooling projects
    # to its output dimension): the output's last dim is the product's
    out = out.reshape(tgt_len, bsz, out.shape[-1])
    if not batched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
    if average_attn_weights:
        weights = weights.mean(dim=1)
    if not batched:
        weights = weights.squeeze(0)
    return out, weights
