"""``ember.nn.functional``: the stateless counterparts of the layers in ``ember.nn``.

One private module per family (activations, attention, convolution, CTC, distances, dropout,
embeddings, linear maps, losses, normalization, pooling, padding and resizing); the argument
checks they share are in ``_utils.py``. The Op classes behind them live in ``ember/ops/nn/``.
Import the functions from here, as from ``torch.nn.functional``.
"""
from __future__ import annotations

from ._activation import (
                          celu,
                          celu_,
                          elu,
                          elu_,
                          gelu,
                          glu,
                          gumbel_softmax,
                          hardshrink,
                          hardsigmoid,
                          hardswish,
                          hardtanh,
                          hardtanh_,
                          leaky_relu,
                          leaky_relu_,
                          log_softmax,
                          logsigmoid,
                          mish,
                          prelu,
                          relu,
                          relu6,
                          relu_,
                          rrelu,
                          rrelu_,
                          selu,
                          selu_,
                          sigmoid,
                          silu,
                          softmax,
                          softmin,
                          softplus,
                          softshrink,
                          softsign,
                          tanh,
                          tanhshrink,
                          threshold,
                          threshold_,
)
from ._attention import multi_head_attention_forward, scaled_dot_product_attention
from ._conv import conv1d, conv2d, conv_transpose1d, conv_transpose2d, fold, unfold
from ._ctc import ctc_loss
from ._distance import cdist, cosine_similarity, normalize, pairwise_distance, pdist
from ._dropout import alpha_dropout, dropout, dropout1d, dropout2d, dropout3d, feature_alpha_dropout
from ._embedding import embedding, embedding_bag, one_hot
from ._fractional import (
                          fractional_max_pool2d,
                          fractional_max_pool2d_with_indices,
                          fractional_max_pool3d,
                          fractional_max_pool3d_with_indices,
)
from ._grouped_mm import grouped_mm
from ._linear import bilinear, linear
from ._linear_cross_entropy import linear_cross_entropy
from ._loss import (
                          binary_cross_entropy,
                          binary_cross_entropy_with_logits,
                          cosine_embedding_loss,
                          cross_entropy,
                          gaussian_nll_loss,
                          hinge_embedding_loss,
                          huber_loss,
                          kl_div,
                          l1_loss,
                          margin_ranking_loss,
                          mse_loss,
                          multi_margin_loss,
                          multilabel_margin_loss,
                          multilabel_soft_margin_loss,
                          nll_loss,
                          poisson_nll_loss,
                          smooth_l1_loss,
                          soft_margin_loss,
                          triplet_margin_loss,
                          triplet_margin_with_distance_loss,
)
from ._norm import batch_norm, group_norm, instance_norm, layer_norm, local_response_norm, rms_norm
from ._pool import (
                          adaptive_avg_pool1d,
                          adaptive_avg_pool2d,
                          adaptive_max_pool1d,
                          adaptive_max_pool1d_with_indices,
                          adaptive_max_pool2d,
                          adaptive_max_pool2d_with_indices,
                          avg_pool1d,
                          avg_pool2d,
                          lp_pool1d,
                          lp_pool2d,
                          max_pool1d,
                          max_pool1d_with_indices,
                          max_pool2d,
                          max_pool2d_with_indices,
                          max_unpool1d,
                          max_unpool2d,
)
from ._volume import (
                          adaptive_avg_pool3d,
                          adaptive_max_pool3d,
                          adaptive_max_pool3d_with_indices,
                          avg_pool3d,
                          conv3d,
                          conv_transpose3d,
                          lp_pool3d,
                          max_pool3d,
                          max_pool3d_with_indices,
                          max_unpool3d,
)
from ._resize import (
                          affine_grid,
                          channel_shuffle,
                          grid_sample,
                          interpolate,
                          pad,
                          pixel_shuffle,
                          pixel_unshuffle,
                          upsample,
                          upsample_bilinear,
                          upsample_nearest,
)

__all__ = [
    "adaptive_avg_pool3d", "adaptive_max_pool3d", "adaptive_max_pool3d_with_indices",
    "avg_pool3d", "conv3d", "conv_transpose3d", "lp_pool3d", "max_pool3d",
    "max_pool3d_with_indices", "max_unpool3d",
    "fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices", "gumbel_softmax", "multilabel_margin_loss",
    "linear_cross_entropy", "grouped_mm",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d", "adaptive_max_pool2d_with_indices",
    "affine_grid", "alpha_dropout", "avg_pool1d", "avg_pool2d", "batch_norm", "bilinear",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "cdist", "celu", "celu_",
    "channel_shuffle", "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d",
    "cosine_embedding_loss", "cosine_similarity", "cross_entropy", "ctc_loss", "dropout",
    "dropout1d", "dropout2d", "dropout3d", "elu", "elu_", "embedding", "embedding_bag",
    "feature_alpha_dropout", "fold", "gaussian_nll_loss", "gelu", "glu", "grid_sample",
    "group_norm", "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "hardtanh_",
    "hinge_embedding_loss", "huber_loss", "instance_norm", "interpolate", "kl_div", "l1_loss",
    "layer_norm", "leaky_relu", "leaky_relu_", "linear", "local_response_norm", "log_softmax",
    "logsigmoid", "lp_pool1d", "lp_pool2d", "margin_ranking_loss", "max_pool1d",
    "max_pool1d_with_indices", "max_pool2d", "max_pool2d_with_indices", "max_unpool1d",
    "max_unpool2d", "mish", "mse_loss", "multi_head_attention_forward", "multi_margin_loss",
    "multilabel_soft_margin_loss", "nll_loss", "normalize", "one_hot", "pad", "pairwise_distance",
    "pdist", "pixel_shuffle", "pixel_unshuffle", "poisson_nll_loss", "prelu", "relu", "relu6",
    "relu_", "rms_norm", "rrelu", "rrelu_", "scaled_dot_product_attention", "selu", "selu_",
    "sigmoid", "silu", "smooth_l1_loss", "soft_margin_loss", "softmax", "softmin", "softplus",
    "softshrink", "softsign", "tanh", "tanhshrink", "threshold", "threshold_",
    "triplet_margin_loss", "triplet_margin_with_distance_loss", "unfold", "upsample",
    "upsample_bilinear", "upsample_nearest",
]
