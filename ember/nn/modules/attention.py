"""MultiheadAttention."""
from __future__ import annotations

from ... import _dtype as D
from ... import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear
from .module import Module

__all__ = ["MultiheadAttention"]


class MultiheadAttention(Module):
    """Multi-head attention: softmax(Q K^T / sqrt(d)) V in ``num_heads`` parallel subspaces.

    Args:
        embed_dim, num_heads (must divide embed_dim), dropout=0.0 (on the attention weights),
        bias=True, add_bias_kv=False (append learned bias_k / bias_v to the keys / values),
        add_zero_attn=False (append a zero key / value), kdim=None, vdim=None (key / value
        feature sizes, default embed_dim), batch_first=False.

    Shape:
        forward(query (L, N, E), key (S, N, kdim), value (S, N, vdim), key_padding_mask=None
        (N, S), need_weights=True, attn_mask=None ((L, S) or (N * num_heads, L, S)),
        average_attn_weights=True, is_causal=False) -> (output (L, N, E), weights (N, L, S)
        averaged over heads, (N, num_heads, L, S) otherwise, or None). With batch_first the
        batch dim comes first. For masks, bool True means "may not attend" and float values
        are added to the scores.

    Example:
        >>> import ember
        >>> mha = MultiheadAttention(8, 2, batch_first=True)
        >>> x = ember.randn(3, 5, 8)
        >>> out, w = mha(x, x, x)
        >>> out.shape, w.shape
        (ember.Size([3, 5, 8]), ember.Size([3, 5, 5]))
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"MultiheadAttention: embed_dim and num_heads must be greater than "
                             f"0, got embed_dim={embed_dim} and num_heads={num_heads} instead")
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("MultiheadAttention: embed_dim must be divisible by num_heads; "
                                 f"got embed_dim={embed_dim}, num_heads={num_heads}")
        dt = D.get_default_dtype() if dtype is None else D.to_dtype(dtype)
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(empty(embed_dim, embed_dim, dtype=dt))
            self.k_proj_weight = Parameter(empty(embed_dim, self.kdim, dtype=dt))
            self.v_proj_weight = Parameter(empty(embed_dim, self.vdim, dtype=dt))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim, dtype=dt))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, dtype=dt))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, dtype=dt)
        if add_bias_kv:
            self.bias_k = Parameter(empty(1, 1, embed_dim, dtype=dt))
            self.bias_v = Parameter(empty(1, 1, embed_dim, dtype=dt))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        """PyTorch's default: xavier_uniform_ projections, zero biases, xavier_normal_ bias_kv."""
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
        if self.out_proj.bias is not None:
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        batched = query.ndim == 3
        if self.batch_first and batched:
            query, key, value = (t.transpose(1, 0) for t in (query, key, value))
        same = self._qkv_same_embed_dim
        out, weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=not same, q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        if self.batch_first and batched:
            out = out.transpose(1, 0)
        return out, weights
