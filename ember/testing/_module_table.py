"""The module table: one ``ModuleSpec`` line per public ``nn`` module, driving the generic module
suite (tests/nn/test_module_db.py): construct, forward, gradcheck and gradgradcheck with respect
to the inputs, state_dict round trip, ``repr``, and parity with torch (values, gradients of
inputs and parameters, state_dict keys, buffers after a training-mode forward, ``repr``).

A line builds the module from a library namespace (``lambda t: t.nn.Linear(3, 2)``, called with
``ember`` or ``torch``), so the same line constructs both sides of a parity check. Inputs are
NumPy-described (``F(2, 3)`` is a float64 normal sample of shape (2, 3)), small enough that the
finite-difference checks stay cheap. A completeness test fails for a module without a line.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

# ---------------------------------------------------------------------------------------------
# inputs: each is (rng) -> ndarray, turned into a tensor of the library under test


def F(*shape):
    """float64 standard-normal values."""
    return lambda rng: rng.standard_normal(shape)


def P(*shape):
    """float64 values in [0.5, 2): variances, rates."""
    return lambda rng: rng.uniform(0.5, 2.0, shape)


def U(*shape):
    """float64 values in (0.1, 0.9): probabilities and targets of BCE / KL."""
    return lambda rng: rng.uniform(0.1, 0.9, shape)


def I(high, *shape, low=0):  # noqa: E743 - I for integer, beside F / P / U
    """int64 values in [low, high)."""
    return lambda rng: rng.integers(low, high, shape).astype(np.int64)


def SIGN(*shape):
    """float64 +1 / -1 labels (margin and embedding losses)."""
    return lambda rng: rng.choice([-1.0, 1.0], shape)


def BIN(*shape):
    """float64 0 / 1 labels (multi-label losses)."""
    return lambda rng: rng.integers(0, 2, shape).astype(np.float64)


def FIXED(values, dtype=np.int64):
    return lambda rng: np.asarray(values, dtype)


@dataclass
class ModuleSpec:
    """Everything the generic module suite knows about one nn module."""

    make: Callable                      # (library) -> module, e.g. lambda t: t.nn.Linear(3, 2)
    inputs: tuple = ()                  # (rng) -> ndarray per forward argument
    kwargs: dict = field(default_factory=dict)   # extra forward keyword arguments
    grad_inputs: tuple | None = None    # which inputs gradcheck differentiates (None: floats)
    train: bool = True                  # forward in training mode (False: random in training)
    once_differentiable: str = ""       # why gradgradcheck does not apply (empty: it does)
    forward: bool = True                # False for containers without a forward
    grad_parity: str = ""               # why input gradients are not compared with torch's
    tol: tuple = (1e-7, 1e-9)           # (rtol, atol) for float64 parity


M = ModuleSpec


def _loss(make, *inputs, **kw):
    """A loss: gradients are taken for the prediction only (torch rejects many targets)."""
    return M(make, inputs, grad_inputs=(0,), **kw)


_SEQ = F(3, 2, 3)                       # (L, N, H_in) for recurrent modules
_TOKENS = F(3, 2, 4)                    # (L, N, E) for attention and transformers


_NUMBA_BACKWARD = "its backward is a fused numba kernel (docs/DEVIATIONS.md, nn)"


def _layer(t, kind):
    cls = getattr(t.nn, kind)
    return cls(4, 2, dim_feedforward=8, dropout=0.0)


MODULE_TABLE: dict[str, ModuleSpec] = {
    # containers
    "Module": M(lambda t: t.nn.Module(), forward=False),
    "Container": M(lambda t: t.nn.Container(proj=t.nn.Linear(2, 3)), forward=False),
    "Sequential": M(lambda t: t.nn.Sequential(t.nn.Linear(3, 4), t.nn.Tanh()), (F(2, 3),)),
    "ModuleList": M(lambda t: t.nn.ModuleList([t.nn.Linear(2, 2), t.nn.ReLU()]), forward=False),
    "ModuleDict": M(lambda t: t.nn.ModuleDict({"proj": t.nn.Linear(2, 3)}), forward=False),
    "ParameterList": M(lambda t: t.nn.ParameterList([t.nn.Parameter(t.ones(2, 3))]),
                       forward=False),
    "ParameterDict": M(lambda t: t.nn.ParameterDict({"w": t.nn.Parameter(t.zeros(3))}),
                       forward=False),
    "RNNBase": M(lambda t: t.nn.RNNBase("GRU", 3, 4), forward=False),
    "RNNCellBase": M(lambda t: t.nn.RNNCellBase(3, 4, bias=True, num_chunks=2), forward=False),
    # linear, embedding
    "Identity": M(lambda t: t.nn.Identity(), (F(2, 3),)),
    # lazy layers: the generic suite builds them only (their first forward turns them into the
    # eager class); tests/compat/test_lazy_modules.py checks inference, training and parity
    "LazyLinear": M(lambda t: t.nn.LazyLinear(2), forward=False),
    "LazyConv1d": M(lambda t: t.nn.LazyConv1d(3, 3), forward=False),
    "LazyConv2d": M(lambda t: t.nn.LazyConv2d(3, 3), forward=False),
    "LazyConv3d": M(lambda t: t.nn.LazyConv3d(3, 3), forward=False),
    "LazyConvTranspose1d": M(lambda t: t.nn.LazyConvTranspose1d(3, 3), forward=False),
    "LazyConvTranspose2d": M(lambda t: t.nn.LazyConvTranspose2d(3, 3), forward=False),
    "LazyConvTranspose3d": M(lambda t: t.nn.LazyConvTranspose3d(3, 3), forward=False),
    "LazyBatchNorm1d": M(lambda t: t.nn.LazyBatchNorm1d(), forward=False),
    "LazyBatchNorm2d": M(lambda t: t.nn.LazyBatchNorm2d(), forward=False),
    "LazyBatchNorm3d": M(lambda t: t.nn.LazyBatchNorm3d(), forward=False),
    "Linear": M(lambda t: t.nn.Linear(3, 2), (F(4, 3),)),
    "Bilinear": M(lambda t: t.nn.Bilinear(3, 2, 4), (F(2, 3), F(2, 2))),
    "Embedding": M(lambda t: t.nn.Embedding(5, 3), (I(5, 2, 3),)),
    "EmbeddingBag": M(lambda t: t.nn.EmbeddingBag(5, 3, mode="mean"), (I(5, 2, 3),)),
    "Flatten": M(lambda t: t.nn.Flatten(), (F(2, 3, 2),)),
    "Unflatten": M(lambda t: t.nn.Unflatten(1, (2, 3)), (F(2, 6),)),
    # convolution, folding, pixel shuffle, upsampling
    "Conv1d": M(lambda t: t.nn.Conv1d(2, 3, 3), (F(1, 2, 5),)),
    "Conv2d": M(lambda t: t.nn.Conv2d(2, 3, 3, padding=1), (F(1, 2, 4, 4),)),
    "ConvTranspose1d": M(lambda t: t.nn.ConvTranspose1d(2, 3, 3, stride=2), (F(1, 2, 3),)),
    "ConvTranspose2d": M(lambda t: t.nn.ConvTranspose2d(2, 3, 3, stride=2), (F(1, 2, 3, 3),)),
    "Fold": M(lambda t: t.nn.Fold(output_size=(3, 3), kernel_size=2), (F(1, 4, 4),)),
    "Unfold": M(lambda t: t.nn.Unfold(kernel_size=2), (F(1, 2, 3, 3),)),
    "PixelShuffle": M(lambda t: t.nn.PixelShuffle(2), (F(1, 4, 2, 2),)),
    "PixelUnshuffle": M(lambda t: t.nn.PixelUnshuffle(2), (F(1, 1, 4, 4),)),
    "ChannelShuffle": M(lambda t: t.nn.ChannelShuffle(2), (F(1, 4, 2, 2),)),
    "Upsample": M(lambda t: t.nn.Upsample(scale_factor=2, mode="nearest"), (F(1, 1, 2, 3),)),
    "UpsamplingNearest2d": M(lambda t: t.nn.UpsamplingNearest2d(scale_factor=2),
                             (F(1, 1, 2, 2),)),
    "UpsamplingBilinear2d": M(lambda t: t.nn.UpsamplingBilinear2d(scale_factor=2),
                              (F(1, 1, 2, 2),)),
    # pooling
    "AvgPool1d": M(lambda t: t.nn.AvgPool1d(2), (F(1, 2, 6),)),
    "AvgPool2d": M(lambda t: t.nn.AvgPool2d(2), (F(1, 2, 4, 4),)),
    "MaxPool1d": M(lambda t: t.nn.MaxPool1d(2), (F(1, 2, 6),)),
    "MaxPool2d": M(lambda t: t.nn.MaxPool2d(2), (F(1, 2, 4, 4),)),
    "AdaptiveAvgPool1d": M(lambda t: t.nn.AdaptiveAvgPool1d(3), (F(1, 2, 5),)),
    "AdaptiveAvgPool2d": M(lambda t: t.nn.AdaptiveAvgPool2d((2, 2)), (F(1, 2, 4, 5),)),
    "AdaptiveMaxPool1d": M(lambda t: t.nn.AdaptiveMaxPool1d(3), (F(1, 2, 5),)),
    "AdaptiveMaxPool2d": M(lambda t: t.nn.AdaptiveMaxPool2d(2), (F(1, 2, 4, 4),)),
    "LPPool1d": M(lambda t: t.nn.LPPool1d(2, 2), (F(1, 2, 6),)),
    "LPPool2d": M(lambda t: t.nn.LPPool2d(2, 2), (F(1, 2, 4, 4),)),
    # one index per 2-wide window (and per 2x2 window of the 4x4 output)
    "MaxUnpool1d": M(lambda t: t.nn.MaxUnpool1d(2), (F(1, 1, 3), FIXED([[[1, 2, 5]]]))),
    "MaxUnpool2d": M(lambda t: t.nn.MaxUnpool2d(2), (F(1, 1, 2, 2),
                                                     FIXED([[[[0, 3], [9, 14]]]]))),
    "Conv3d": M(lambda t: t.nn.Conv3d(2, 3, 2, padding=1), (F(1, 2, 3, 3, 3),)),
    "ConvTranspose3d": M(lambda t: t.nn.ConvTranspose3d(2, 3, 2, stride=2), (F(1, 2, 2, 2, 2),)),
    "AvgPool3d": M(lambda t: t.nn.AvgPool3d(2), (F(1, 2, 4, 4, 4),)),
    "MaxPool3d": M(lambda t: t.nn.MaxPool3d(2), (F(1, 2, 4, 4, 4),)),
    "AdaptiveAvgPool3d": M(lambda t: t.nn.AdaptiveAvgPool3d((2, 1, 2)), (F(1, 2, 3, 3, 4),)),
    "AdaptiveMaxPool3d": M(lambda t: t.nn.AdaptiveMaxPool3d((2, 1, 2)), (F(1, 2, 3, 3, 4),)),
    "LPPool3d": M(lambda t: t.nn.LPPool3d(2, 2), (P(1, 2, 4, 4, 4),)),
    # one index per 2x2x2 window of the 4x4x4 output
    "MaxUnpool3d": M(lambda t: t.nn.MaxUnpool3d(2), (F(1, 1, 1, 1, 2), FIXED([[[[[0, 7]]]]]))),
    # padding
    **{f"{kind}Pad{d}d": M(lambda t, kind=kind, d=d: getattr(t.nn, f"{kind}Pad{d}d")(1),
                           (F(1, 2, *(3,) * d),))
       for kind in ("Circular", "Reflection", "Replication", "Zero") for d in (1, 2, 3)},
    "ConstantPad1d": M(lambda t: t.nn.ConstantPad1d((1, 2), 0.5), (F(1, 2, 3),)),
    "ConstantPad2d": M(lambda t: t.nn.ConstantPad2d((1, 0, 2, 1), -1.0), (F(1, 2, 3),)),
    "ConstantPad3d": M(lambda t: t.nn.ConstantPad3d(1, 0.25), (F(1, 2, 2, 2),)),
    # normalization
    "BatchNorm1d": M(lambda t: t.nn.BatchNorm1d(3), (F(4, 3),)),
    "BatchNorm2d": M(lambda t: t.nn.BatchNorm2d(2), (F(3, 2, 2, 2),)),
    "BatchNorm3d": M(lambda t: t.nn.BatchNorm3d(2), (F(2, 2, 2, 2, 2),)),
    # without a process group it is BatchNorm; torch trains it only on GPU, hence eval mode
    # (tests/distributed cover the synchronised statistics)
    "SyncBatchNorm": M(lambda t: t.nn.SyncBatchNorm(2), (F(3, 2, 2, 2),), train=False),
    # torch without CUDA, like ember, runs the wrapped module unchanged
    "DataParallel": M(lambda t: t.nn.DataParallel(t.nn.Linear(3, 2)), (F(4, 3),)),
    "InstanceNorm1d": M(lambda t: t.nn.InstanceNorm1d(3), (F(2, 3, 4),)),
    "InstanceNorm2d": M(lambda t: t.nn.InstanceNorm2d(2, affine=True), (F(2, 2, 3, 3),)),
    "InstanceNorm3d": M(lambda t: t.nn.InstanceNorm3d(2, track_running_stats=True),
                        (F(1, 2, 2, 2, 3),)),
    "GroupNorm": M(lambda t: t.nn.GroupNorm(2, 4), (F(2, 4, 3),)),
    "LayerNorm": M(lambda t: t.nn.LayerNorm(4), (F(2, 3, 4),)),
    "RMSNorm": M(lambda t: t.nn.RMSNorm(4), (F(2, 3, 4),)),
    "LocalResponseNorm": M(lambda t: t.nn.LocalResponseNorm(2), (F(1, 4, 3, 3),)),
    "CrossMapLRN2d": M(lambda t: t.nn.CrossMapLRN2d(3, alpha=0.5, k=2), (F(2, 5, 2, 2),),
                       grad_parity="torch's backward is not the derivative of its forward "
                                   "(DEVIATIONS.md); ember's is, see tests/nn/test_nn_rest.py"),
    "LazyInstanceNorm1d": M(lambda t: t.nn.LazyInstanceNorm1d(), forward=False),
    "LazyInstanceNorm2d": M(lambda t: t.nn.LazyInstanceNorm2d(), forward=False),
    "LazyInstanceNorm3d": M(lambda t: t.nn.LazyInstanceNorm3d(), forward=False),
    # fixed samples: the windows are random otherwise
    "FractionalMaxPool2d": M(lambda t: t.nn.FractionalMaxPool2d(
        2, output_size=(3, 2), _random_samples=t.tensor([[[0.3, 0.6], [0.8, 0.1]]] * 2)),
        (F(2, 2, 5, 4),)),
    "FractionalMaxPool3d": M(lambda t: t.nn.FractionalMaxPool3d(
        (2, 1, 2), output_ratio=0.5, _random_samples=t.tensor([[[0.3, 0.6, 0.45]]])),
        (F(1, 1, 4, 4, 5),)),
    # dropout: random in training mode, so the table runs them in eval mode (the identity;
    # tests/nn/test_dropout.py covers training mode)
    **{n: M(lambda t, n=n: getattr(t.nn, n)(0.5), (F(*shape),), train=False)
       for n, shape in (("Dropout", (2, 3)), ("Dropout1d", (2, 3, 4)), ("Dropout2d", (1, 2, 3, 3)),
                        ("Dropout3d", (1, 2, 2, 2, 2)), ("AlphaDropout", (2, 3)),
                        ("FeatureAlphaDropout", (1, 2, 3, 3)))},
    # activations
    **{n: M(lambda t, n=n: getattr(t.nn, n)(), (F(2, 3),)) for n in (
        "ReLU", "ReLU6", "ELU", "CELU", "SELU", "GELU", "SiLU", "Mish", "Sigmoid", "Tanh",
        "LogSigmoid", "Hardsigmoid", "Hardswish", "Hardtanh", "Hardshrink", "Softshrink",
        "Softsign", "Softplus", "Tanhshrink", "LeakyReLU", "PReLU")},
    "RReLU": M(lambda t: t.nn.RReLU(), (F(2, 3),), train=False),  # random slopes in training
    "GLU": M(lambda t: t.nn.GLU(), (F(2, 4),)),
    "Threshold": M(lambda t: t.nn.Threshold(0.1, 20.0), (F(2, 3),)),
    "Softmax": M(lambda t: t.nn.Softmax(dim=1), (F(2, 3),)),
    "Softmin": M(lambda t: t.nn.Softmin(dim=1), (F(2, 3),)),
    "LogSoftmax": M(lambda t: t.nn.LogSoftmax(dim=1), (F(2, 3),)),
    "Softmax2d": M(lambda t: t.nn.Softmax2d(), (F(1, 2, 3, 3),)),
    "CosineSimilarity": M(lambda t: t.nn.CosineSimilarity(), (F(3, 4), F(3, 4))),
    "PairwiseDistance": M(lambda t: t.nn.PairwiseDistance(), (F(3, 4), F(3, 4))),
    # recurrent
    "RNN": M(lambda t: t.nn.RNN(3, 4), (_SEQ,)),
    "LSTM": M(lambda t: t.nn.LSTM(3, 4), (_SEQ,), once_differentiable=_NUMBA_BACKWARD),
    "GRU": M(lambda t: t.nn.GRU(3, 4), (_SEQ,), once_differentiable=_NUMBA_BACKWARD),
    "RNNCell": M(lambda t: t.nn.RNNCell(3, 4), (F(2, 3),)),
    "LSTMCell": M(lambda t: t.nn.LSTMCell(3, 4), (F(2, 3),), once_differentiable=_NUMBA_BACKWARD),
    "GRUCell": M(lambda t: t.nn.GRUCell(3, 4), (F(2, 3),), once_differentiable=_NUMBA_BACKWARD),
    # attention and transformers (dropout 0: deterministic in training mode)
    "MultiheadAttention": M(lambda t: t.nn.MultiheadAttention(4, 2),
                            (_TOKENS, _TOKENS, _TOKENS)),
    "TransformerEncoderLayer": M(lambda t: _layer(t, "TransformerEncoderLayer"), (_TOKENS,)),
    "TransformerDecoderLayer": M(lambda t: _layer(t, "TransformerDecoderLayer"),
                                 (F(2, 2, 4), _TOKENS)),
    "TransformerEncoder": M(lambda t: t.nn.TransformerEncoder(
        _layer(t, "TransformerEncoderLayer"), num_layers=2, enable_nested_tensor=False),
        (_TOKENS,)),
    "TransformerDecoder": M(lambda t: t.nn.TransformerDecoder(
        _layer(t, "TransformerDecoderLayer"), num_layers=1), (F(2, 2, 4), _TOKENS)),
    "Transformer": M(lambda t: t.nn.Transformer(4, 2, 1, 1, dim_feedforward=8, dropout=0.0),
                     (_TOKENS, F(2, 2, 4))),
    # losses
    **{n: _loss(lambda t, n=n: getattr(t.nn, n)(), F(3, 2), F(3, 2)) for n in (
        "L1Loss", "MSELoss", "HuberLoss", "SmoothL1Loss")},
    "BCELoss": _loss(lambda t: t.nn.BCELoss(), U(3, 2), U(3, 2)),
    "BCEWithLogitsLoss": _loss(lambda t: t.nn.BCEWithLogitsLoss(), F(3, 2), U(3, 2)),
    "CrossEntropyLoss": _loss(lambda t: t.nn.CrossEntropyLoss(label_smoothing=0.1),
                              F(3, 4), I(4, 3)),
    "NLLLoss": _loss(lambda t: t.nn.NLLLoss(), F(3, 4), I(4, 3)),
    "NLLLoss2d": _loss(lambda t: t.nn.NLLLoss2d(), F(2, 3, 2, 2), I(3, 2, 2, 2)),
    "MultiLabelMarginLoss": _loss(lambda t: t.nn.MultiLabelMarginLoss(), F(3, 4),
                                  FIXED([[3, 0, -1, 1], [1, 2, -1, 0], [0, -1, 2, 2]])),
    "LinearCrossEntropyLoss": _loss(lambda t: t.nn.LinearCrossEntropyLoss(
        4, 3, out_features=(2,), bias=True, label_smoothing=0.1), F(3, 4), I(3, 3, 2)),
    "AdaptiveLogSoftmaxWithLoss": _loss(lambda t: t.nn.AdaptiveLogSoftmaxWithLoss(
        8, 10, [3, 6], div_value=2.0, head_bias=True), F(4, 8), FIXED([0, 4, 7, 9])),
    "MultiMarginLoss": _loss(lambda t: t.nn.MultiMarginLoss(), F(3, 4), I(4, 3)),
    "MultiLabelSoftMarginLoss": _loss(lambda t: t.nn.MultiLabelSoftMarginLoss(),
                                      F(3, 4), BIN(3, 4)),
    "KLDivLoss": _loss(lambda t: t.nn.KLDivLoss(reduction="batchmean"), F(3, 4), U(3, 4)),
    "PoissonNLLLoss": _loss(lambda t: t.nn.PoissonNLLLoss(), F(3, 2), P(3, 2)),
    "GaussianNLLLoss": _loss(lambda t: t.nn.GaussianNLLLoss(), F(3, 2), F(3, 2), P(3, 2)),
    "SoftMarginLoss": _loss(lambda t: t.nn.SoftMarginLoss(), F(3, 4), SIGN(3, 4)),
    "HingeEmbeddingLoss": _loss(lambda t: t.nn.HingeEmbeddingLoss(), F(3, 4), SIGN(3, 4)),
    "MarginRankingLoss": M(lambda t: t.nn.MarginRankingLoss(margin=0.1),
                           (F(4), F(4), SIGN(4)), grad_inputs=(0, 1)),
    "CosineEmbeddingLoss": M(lambda t: t.nn.CosineEmbeddingLoss(), (F(3, 4), F(3, 4), SIGN(3)),
                             grad_inputs=(0, 1)),
    "TripletMarginLoss": M(lambda t: t.nn.TripletMarginLoss(), (F(3, 4), F(3, 4), F(3, 4))),
    "TripletMarginWithDistanceLoss": M(lambda t: t.nn.TripletMarginWithDistanceLoss(),
                                       (F(3, 4), F(3, 4), F(3, 4))),
    # (T, N, C) log-probabilities, targets in 1..C-1 (0 is the blank), input and target lengths
    "CTCLoss": _loss(lambda t: t.nn.CTCLoss(), F(5, 2, 4), I(4, 2, 2, low=1),
                     FIXED([5, 4]), FIXED([2, 1]), once_differentiable=_NUMBA_BACKWARD,
                     grad_parity="ember's is the exact gradient in log_probs (DEVIATIONS.md)"),
}
