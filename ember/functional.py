"""``ember.functional``: the tensor functions torch.functional defines (the same objects as the
top-level ``ember.einsum``, ``ember.split`` and the rest; imported last by ember/__init__)."""
from __future__ import annotations

from . import (
               atleast_1d,
               atleast_2d,
               atleast_3d,
               block_diag,
               broadcast_shapes,
               broadcast_tensors,
               cartesian_prod,
               cdist,
               chain_matmul,
               einsum,
               istft,
               lu,
               meshgrid,
               norm,
               pca_lowrank,
               split,
               stft,
               svd_lowrank,
               tensordot,
               unique,
               unique_consecutive,
               unravel_index,
)

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors",
           "cartesian_prod", "block_diag", "cdist", "chain_matmul", "einsum", "istft", "lu",
           "norm", "meshgrid", "pca_lowrank", "split", "stft", "svd_lowrank", "tensordot",
           "unique", "unique_consecutive", "unravel_index"]
