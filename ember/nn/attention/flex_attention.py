"""``ember.nn.attention.flex_attention``: attention with a Python score modification and mask.

``flex_attention(q, k, v, score_mod, block_mask)`` computes softmax(score_mod(q k^T * scale))
v over the keys the mask allows. ember runs it as torch runs it without torch.compile: the full
(B, H, L, S) score matrix is materialised, and ``score_mod(score, b, h, q_idx, kv_idx)`` /
``mask_mod(b, h, q_idx, kv_idx)`` are called once, on index tensors shaped to broadcast against
it (B, 1, 1, 1), (1, H, 1, 1), (1, 1, L, 1), (1, 1, 1, S) - torch calls them through vmap on
0-d indices; a function of elementwise ops and indexing by those indices gives the same values
either way. A query the mask allows no key gives zeros (and a log-sum-exp of -inf), as torch's.

A BlockMask here is the mask function with its shape (``create_block_mask``); torch's block
tables (``kv_num_blocks``, ``from_kv_blocks``, block sparsity) are not built.
"""
from __future__ import annotations

import math
from typing import NamedTuple

__all__ = ["AuxOutput", "AuxRequest", "BlockMask", "create_block_mask", "create_mask",
           "flex_attention"]

_DEFAULT_SPARSE_BLOCK_SIZE = 128


class AuxRequest(NamedTuple):
    """Which extra outputs flex_attention should return."""

    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """flex_attention's extra outputs."""

    lse: object = None
    max_scores: object = None


class BlockMask:
    """A mask for flex_attention: ``mask_mod`` over (B, H, Q_LEN, KV_LEN) (see the module's
    docstring). Made by create_block_mask."""

    def __init__(self, mask_mod, shape, block_size=_DEFAULT_SPARSE_BLOCK_SIZE):
        self.mask_mod = mask_mod
        self.shape = tuple(shape)
        self.seq_lengths = self.shape[-2:]
        self.BLOCK_SIZE = (block_size, block_size) if isinstance(block_size, int) \
            else tuple(block_size)

    def to_dense(self):
        """The mask as a (B, H, Q_LEN, KV_LEN) bool tensor."""
        return create_mask(self.mask_mod, *self.shape)

    def __repr__(self):
        return f"BlockMask(shape={self.shape}, mask_mod={getattr(self.mask_mod, '__name__', '?')})"


def _indices(B, H, L, S):
    from ... import arange
    return (arange(B).view(B, 1, 1, 1), arange(H).view(1, H, 1, 1),
            arange(L).view(1, 1, L, 1), arange(S).view(1, 1, 1, S))


def create_mask(mod_fn, B, H, Q_LEN, KV_LEN, device=None):
    """``mask_mod`` evaluated at every (b, h, q_idx, kv_idx): a (B, H, Q_LEN, KV_LEN) bool
    tensor (B or H None: 1)."""
    B, H = B or 1, H or 1
    return mod_fn(*_indices(B, H, Q_LEN, KV_LEN)).expand(B, H, Q_LEN, KV_LEN)


def create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN, device=None,
                      BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE, _compile=False, **kwargs):
    """A BlockMask of ``mask_mod`` over (B, H, Q_LEN, KV_LEN) (B or H None: 1, broadcast)."""
    return BlockMask(mask_mod, (B or 1, H or 1, Q_LEN, KV_LEN), BLOCK_SIZE)


def flex_attention(query, key, value, score_mod=None, block_mask=None, scale=None,
                   enable_gqa=False, return_lse=False, kernel_options=None, *, return_aux=None):
    """softmax(score_mod(query key^T * scale)) value over the keys block_mask allows, for
    (B, Hq, L, E) queries and (B, Hkv, S, E) / (B, Hkv, S, Ev) keys and values. With
    ``return_lse`` (or ``return_aux=AuxRequest(lse=True)``) also the (B, Hq, L) log-sum-exp of
    the modified scores."""
    from ...ops.indexing import where
    from ..functional._attention import _repeat_heads, _safe_softmax
    if query.ndim != 4 or key.ndim != 4 or value.ndim != 4:
        raise ValueError(f"flex_attention: expected 4-D (B, H, L, E) query, key and value; got "
                         f"{tuple(query.shape)}, {tuple(key.shape)}, {tuple(value.shape)}")
    B, hq, L, E = query.shape
    hk, S = key.shape[1], key.shape[2]
    if hq != hk:
        if not enable_gqa or hq % hk:
            raise ValueError(f"flex_attention: {hq} query heads and {hk} key/value heads need "
                             "enable_gqa=True and a multiple of the key/value heads")
        key, value = _repeat_heads(key, hq // hk), _repeat_heads(value, hq // hk)
    scale = 1.0 / math.sqrt(E) if scale is None else float(scale)
    scores = query.matmul(key.transpose(-2, -1)) * scale
    b, h, q, kv = _indices(B, hq, L, S)
    if score_mod is not None:
        scores = score_mod(scores, b, h, q, kv)
    if block_mask is not None:
        scores = where(block_mask.mask_mod(b, h, q, kv), scores, float("-inf"))
    out = _safe_softmax(scores, -1).matmul(value)
    want_lse = return_lse or (return_aux is not None and return_aux.lse)
    if not want_lse:
        return out
    lse = scores.logsumexp(-1)
    return (out, lse) if return_aux is None else (out, AuxOutput(lse=lse))
