"""``ember.nn.attention.flex_attention``: the names programs import; not implemented in ember.

transformers imports BlockMask, create_block_mask and flex_attention at import time and calls
them only for ``attn_implementation="flex_attention"``. Calling them raises
NotImplementedError (use scaled_dot_product_attention, with a mask, instead); BlockMask is a
class no ember object is an instance of."""
from __future__ import annotations

from typing import NamedTuple

__all__ = ["AuxOutput", "AuxRequest", "BlockMask", "create_block_mask", "create_mask",
           "flex_attention"]

_DEFAULT_SPARSE_BLOCK_SIZE = 128
_WHY = ("ember has no flex_attention; scaled_dot_product_attention with an attention mask "
        "computes the same for masks given as tensors")


class AuxRequest(NamedTuple):
    """Which extra outputs flex_attention should return."""

    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """flex_attention's extra outputs."""

    lse: object = None
    max_scores: object = None


class BlockMask:
    """A block-sparse attention mask for flex_attention: not implemented in ember."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError(f"BlockMask: {_WHY}")


def _missing(name):
    def fn(*args, **kwargs):
        raise NotImplementedError(f"{name}: {_WHY}")
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = "Not implemented in ember: raises NotImplementedError."
    return fn


flex_attention = _missing("flex_attention")
create_block_mask = _missing("create_block_mask")
create_mask = _missing("create_mask")
