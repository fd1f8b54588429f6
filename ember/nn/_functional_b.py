"""ember.nn.functional, part B: convolution, pooling, padding, resizing, sampling, attention.

Re-exported by ``ember.nn.functional``. The code lives in the family modules
``_functional_conv`` (conv/conv_transpose/unfold/fold), ``_functional_pool`` (pooling),
``_functional_resize`` (pad, interpolate/upsample, pixel/channel shuffle, grid_sample,
affine_grid) and ``_functional_attention`` (scaled_dot_product_attention,
multi_head_attention_forward); this module re-exports their public names under one ``__all__``.
The heavy ops (convolution, fold/unfold, pooling) are ``Op`` classes in ``ember.ops.nn_ops`` that
call numba kernels; everything else is a composite of ember ops and gets its gradient (of any
order) for free. 1-D convolution and pooling run through the 2-D ops with a height of one.
"""
from __future__ import annotations

from ._functional_attention import *  # noqa: F401,F403
from ._functional_conv import *  # noqa: F401,F403
from ._functional_pool import *  # noqa: F401,F403
from ._functional_resize import *  # noqa: F401,F403

__all__ = [
    "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "unfold", "fold",
    "max_pool1d", "max_pool2d", "max_pool1d_with_indices", "max_pool2d_with_indices",
    "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
    "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices", "max_unpool1d", "max_unpool2d", "lp_pool1d", "lp_pool2d",
    "pad", "interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "pixel_shuffle",
    "pixel_unshuffle", "channel_shuffle", "grid_sample", "affine_grid",
    "scaled_dot_product_attention", "multi_head_attention_forward",
]
