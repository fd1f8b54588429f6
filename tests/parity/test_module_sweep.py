"""A differential sweep of the torch.nn modules programs construct, against torch 2.13, over
their constructor arguments: convolutions with every stride/padding (incl. 'same'/'valid' and
padding_mode)/dilation/groups/bias/output_padding, pools (ceil_mode, return_indices, adaptive,
LPPool, MaxUnpool), the norms in train and eval (affine, track_running_stats, momentum=None),
Embedding(Bag), the recurrent layers (num_layers, bidirectional, batch_first, proj_size,
unbatched inputs, h0, PackedSequence), the transformer layers and MultiheadAttention with their
masks and options, dropout, activations, reshaping layers and the losses with every reduction.

A case builds the module in both libraries from one line (``lambda nn: nn.Conv2d(...)``), then
copies torch's initial state_dict into ember's module (both in float64) and compares: repr,
state_dict keys/shapes/order, named_parameters and named_buffers order, and for each mode
(train, eval) the outputs' dtype, shape and values, the float64 gradients of the inputs and
parameters and the buffers after the forward. A constructor or forward that raises must raise
torch's exception type, and ember's message must name the module. Divergences kept on purpose
are in KNOWN with a reason (and in docs/DEVIATIONS.md); PENDING lists those not yet decided.
"""
from __future__ import annotations

import re

import numpy as np
import pytest
from _sweep import error_difference, weighted_grads

import ember

torch = pytest.importorskip("torch")

pytestmark = [pytest.mark.parity, pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::DeprecationWarning")]

_RNG = [np.random.default_rng(34)]


def r(*shape, lo=-2.0, hi=2.0):
    """A random float64 array: drawn once when a case is defined, or inside a case's run (each
    library's run restarts the generator, so both see the same values)."""
    return _RNG[0].uniform(lo, hi, size=shape)


def ri(high, *shape, low=0):
    return _RNG[0].integers(low, high, size=shape).astype(np.int64)


class Lib:
    """What a case sees of one library: its module, nn, and tensor makers."""

    def __init__(self, mod, float_dtype=np.float64):
        self.mod = mod
        self.nn = mod.nn
        self.leaves = []
        self.float_dtype = float_dtype   # of the leaves G makes (the module's)

    def T(self, a, dtype=None):
        t = self.mod.tensor(np.asarray(a))
        return t if dtype is None else t.to(getattr(self.mod, dtype))

    def G(self, a):
        t = self.mod.tensor(np.asarray(a, dtype=self.float_dtype), requires_grad=True)
        self.leaves.append(t)
        return t


CASES: list = []


def case(group, what, make, run=None, modes=("train", "eval"), values=True, float32=False):
    """make(nn) -> module; run(m, L) -> output (None: construction and metadata only);
    values=False compares only dtypes and shapes in train mode (dropout); float32 keeps the
    module and the leaves in float32 (else both are float64)."""
    CASES.append((group, what, (make, run, modes, values, float32)))


def x_(a):
    """run: the module applied to one float64 leaf with a's values."""
    return lambda m, L: m(L.G(a))


# --------------------------------------------------------------------------- linear
X34 = r(3, 4)
case("Linear", "basic", lambda nn: nn.Linear(4, 5), x_(X34))
case("Linear", "bias=False", lambda nn: nn.Linear(4, 5, bias=False), x_(X34))
case("Linear", "3-d input", lambda nn: nn.Linear(4, 2), x_(r(2, 3, 4)))
case("Linear", "1-d input", lambda nn: nn.Linear(4, 2), x_(r(4)))
case("Linear", "zero features", lambda nn: nn.Linear(0, 3), x_(r(2, 0)))
case("Linear", "zero features 3-d", lambda nn: nn.Linear(0, 3), x_(r(3, 2, 0)))
case("Linear", "zero features 1-d", lambda nn: nn.Linear(0, 3), x_(r(0)))
case("Linear", "zero out features", lambda nn: nn.Linear(4, 0), x_(r(2, 2, 4)))
case("Linear", "empty batch 3-d", lambda nn: nn.Linear(4, 2), x_(r(0, 2, 4)))
case("Linear", "empty batch and features", lambda nn: nn.Linear(0, 2), x_(r(3, 0, 0)))
case("Linear", "bad input", lambda nn: nn.Linear(4, 2), x_(r(3, 5)))
case("Linear", "negative features", lambda nn: nn.Linear(-1, 2))
case("Bilinear", "basic", lambda nn: nn.Bilinear(3, 4, 2), lambda m, L: m(L.G(r(5, 3)),
                                                                        L.G(r(5, 4))))
case("Bilinear", "bias=False", lambda nn: nn.Bilinear(3, 4, 2, bias=False),
     lambda m, L: m(L.G(r(5, 3)), L.G(r(5, 4))))
case("Bilinear", "negative features", lambda nn: nn.Bilinear(3, -4, 2))
case("Bilinear", "bad input", lambda nn: nn.Bilinear(3, 4, 2),
     lambda m, L: m(L.G(r(5, 3)), L.G(r(5, 3))))
case("Identity", "args ignored", lambda nn: nn.Identity(3, k=4), x_(X34))
# a lazy layer's weights are drawn at its first forward, so that forward compares shapes only;
# "materialized" then compares values, its state copied from torch after a first forward
case("LazyLinear", "first forward", lambda nn: nn.LazyLinear(3), x_(X34), modes=("train",),
     values=False)


def _materialized(make, shape):
    def build(nn):
        m = make(nn)
        m(torch.zeros(shape) if nn is torch.nn else ember.zeros(shape))
        return m
    return build


case("LazyLinear", "materialized", _materialized(lambda nn: nn.LazyLinear(3), (1, 4)), x_(X34))
case("LazyConv2d", "materialized", _materialized(lambda nn: nn.LazyConv2d(3, 2, padding=1),
                                                 (1, 4, 3, 3)), x_(r(2, 4, 7, 6)))
case("LazyBatchNorm1d", "first forward", lambda nn: nn.LazyBatchNorm1d(), x_(X34))

# --------------------------------------------------------------------------- convolution
X1, X2, X3 = r(2, 4, 9), r(2, 4, 7, 6), r(1, 4, 5, 4, 6)
for _dim, _x in ((1, X1), (2, X2), (3, X3)):
    _c, _t = f"Conv{_dim}d", f"ConvTranspose{_dim}d"
    for _what, _kw in (("basic", {}), ("stride 2", {"stride": 2}), ("padding 1", {"padding": 1}),
                       ("padding same", {"padding": "same"}),
                       ("padding valid", {"padding": "valid"}),
                       ("same dilation 2", {"padding": "same", "dilation": 2}),
                       ("dilation 2", {"dilation": 2}), ("groups 2", {"groups": 2}),
                       ("depthwise", {"groups": 4}), ("bias=False", {"bias": False}),
                       ("reflect", {"padding": 1, "padding_mode": "reflect"}),
                       ("replicate", {"padding": 2, "padding_mode": "replicate"}),
                       ("circular", {"padding": 1, "padding_mode": "circular"}),
                       ("zeros same", {"padding": "same", "padding_mode": "zeros"}),
                       ("reflect same", {"padding": "same", "padding_mode": "reflect"}),
                       ("tuple args", {"stride": (1, 2, 1)[:_dim], "padding": (0, 1, 1)[:_dim]})):
        case(_c, _what, (lambda c, kw: lambda nn: getattr(nn, c)(4, 6, 3, **kw))(_c, _kw), x_(_x))
    case(_c, "kernel 2 same", (lambda c: lambda nn: getattr(nn, c)(4, 2, 2, padding="same"))(_c),
         x_(_x))
    case(_c, "unbatched", (lambda c: lambda nn: getattr(nn, c)(4, 2, 2))(_c), x_(_x[0]))
    case(_c, "same with stride", (lambda c: lambda nn: getattr(nn, c)(
        4, 2, 3, stride=2, padding="same"))(_c))
    case(_c, "bad padding string", (lambda c: lambda nn: getattr(nn, c)(4, 2, 3,
                                                                         padding="full"))(_c))
    case(_c, "bad padding_mode", (lambda c: lambda nn: getattr(nn, c)(4, 2, 3,
                                                                       padding_mode="wrap"))(_c))
    case(_c, "in not divisible by groups", (lambda c: lambda nn: getattr(nn, c)(
        4, 6, 3, groups=3))(_c))
    case(_c, "out not divisible by groups", (lambda c: lambda nn: getattr(nn, c)(
        4, 6, 3, groups=4))(_c))
    case(_c, "groups 0", (lambda c: lambda nn: getattr(nn, c)(4, 6, 3, groups=0))(_c))
    for _what, _args in (("negative in_channels", (-1, 2, 3)),
                         ("negative out_channels", (2, -2, 3)),
                         ("negative kernel", (2, 2, -1)), ("kernel 0", (2, 2, 0))):
        case(_c, _what, (lambda c, a: lambda nn: getattr(nn, c)(*a))(_c, _args))
        case(_t, _what, (lambda t, a: lambda nn: getattr(nn, t)(*a))(_t, _args))
    case(_c, "wrong channels", (lambda c: lambda nn: getattr(nn, c)(3, 2, 2))(_c), x_(_x))
    for _what, _kw in (("basic", {}), ("stride 2", {"stride": 2}),
                       ("stride 2 output_padding 1", {"stride": 2, "output_padding": 1}),
                       ("padding 1", {"padding": 1}), ("dilation 2", {"dilation": 2}),
                       ("groups 2", {"groups": 2}), ("bias=False", {"bias": False}),
                       ("dilation output_padding", {"stride": 2, "dilation": 2,
                                                    "output_padding": 1})):
        case(_t, _what, (lambda t, kw: lambda nn: getattr(nn, t)(4, 6, 3, **kw))(_t, _kw), x_(_x))
    case(_t, "output_size", (lambda t: lambda nn: getattr(nn, t)(4, 2, 3, stride=2))(_t),
         (lambda x: lambda m, L: m(L.G(x), output_size=[2 * s + 2 for s in x.shape[2:]]))(_x))
    case(_t, "unbatched", (lambda t: lambda nn: getattr(nn, t)(4, 2, 2))(_t), x_(_x[0]))
    case(_t, "output_padding too big", (lambda t: lambda nn: getattr(nn, t)(
        4, 2, 3, stride=1, output_padding=1))(_t), x_(_x))
    case(_t, "padding_mode reflect", (lambda t: lambda nn: getattr(nn, t)(
        4, 2, 3, padding_mode="reflect"))(_t))
    case(_t, "padding same", (lambda t: lambda nn: getattr(nn, t)(4, 2, 3, padding="same"))(_t))

# --------------------------------------------------------------------------- pooling
for _dim, _x in ((1, X1), (2, X2), (3, X3)):
    for _p in ("MaxPool", "AvgPool"):
        _n = f"{_p}{_dim}d"
        for _what, _kw in (("k2", {"kernel_size": 2}), ("k3 s2 p1", {"kernel_size": 3, "stride": 2,
                                                                    "padding": 1}),
                           ("ceil_mode", {"kernel_size": 2, "ceil_mode": True}),
                           ("ceil_mode k3 s2", {"kernel_size": 3, "stride": 2, "ceil_mode": True,
                                                "padding": 1})):
            case(_n, _what, (lambda n, kw: lambda nn: getattr(nn, n)(**kw))(_n, _kw), x_(_x))
        case(_n, "unbatched", (lambda n: lambda nn: getattr(nn, n)(2))(_n), x_(_x[0]))
        case(_n, "pad too big", (lambda n: lambda nn: getattr(nn, n)(2, padding=2))(_n), x_(_x))
    _n = f"MaxPool{_dim}d"
    case(_n, "return_indices", (lambda n: lambda nn: getattr(nn, n)(2, return_indices=True))(_n),
         x_(_x))
    case(_n, "dilation", (lambda n: lambda nn: getattr(nn, n)(2, dilation=2))(_n), x_(_x))
    case(f"MaxUnpool{_dim}d", "roundtrip", (lambda d: lambda nn: getattr(nn, f"MaxUnpool{d}d")(
        2))(_dim), (lambda d, x: lambda m, L: m(*getattr(L.nn.functional, f"max_pool{d}d")(
            L.G(x), 2, return_indices=True)))(_dim, _x))
    case(f"MaxUnpool{_dim}d", "output_size", (lambda d: lambda nn: getattr(
        nn, f"MaxUnpool{d}d")(2))(_dim), (lambda d, x: lambda m, L: m(*getattr(
            L.nn.functional, f"max_pool{d}d")(L.G(x), 2, return_indices=True),
        output_size=x.shape[2:]))(_dim, _x))
    for _p in ("AdaptiveAvgPool", "AdaptiveMaxPool"):
        _n = f"{_p}{_dim}d"
        case(_n, "size 2", (lambda n: lambda nn: getattr(nn, n)(2))(_n), x_(_x))
        case(_n, "size 1", (lambda n: lambda nn: getattr(nn, n)(1))(_n), x_(_x))
        case(_n, "size up", (lambda n: lambda nn: getattr(nn, n)(5))(_n), x_(_x[0]))
        if _dim > 1:
            case(_n, "None size", (lambda n, d: lambda nn: getattr(nn, n)(
                (None,) + (3,) * (d - 1)))(_n, _dim), x_(_x))
    case(f"AdaptiveMaxPool{_dim}d", "return_indices", (lambda d: lambda nn: getattr(
        nn, f"AdaptiveMaxPool{d}d")(3, return_indices=True))(_dim), x_(_x))
case("AvgPool2d", "count_include_pad=False", lambda nn: nn.AvgPool2d(3, 2, 1,
                                                                     count_include_pad=False),
     x_(X2))
case("AvgPool2d", "divisor_override", lambda nn: nn.AvgPool2d(2, divisor_override=3), x_(X2))
case("AvgPool3d", "divisor_override", lambda nn: nn.AvgPool3d(2, divisor_override=5), x_(X3))
case("AvgPool1d", "count_include_pad=False", lambda nn: nn.AvgPool1d(3, 2, 1,
                                                                     count_include_pad=False),
     x_(X1))
XP = r(2, 3, 6, 7, lo=0.1)
case("LPPool2d", "p=2", lambda nn: nn.LPPool2d(2, 2), x_(XP))
case("LPPool2d", "p=3 stride 1 ceil", lambda nn: nn.LPPool2d(3, (2, 3), 1, ceil_mode=True),
     x_(XP))
case("LPPool1d", "p=2", lambda nn: nn.LPPool1d(2, 3, 2), x_(XP[0]))
case("LPPool3d", "p=1.5", lambda nn: nn.LPPool3d(1.5, 2), x_(r(1, 2, 4, 4, 4, lo=0.1)))
case("FractionalMaxPool2d", "bad ratio", lambda nn: nn.FractionalMaxPool2d(2,
                                                                           output_ratio=1.5))
case("FractionalMaxPool3d", "bad ratio", lambda nn: nn.FractionalMaxPool3d(2, output_ratio=0))
case("FractionalMaxPool2d", "no size", lambda nn: nn.FractionalMaxPool2d(2))

# --------------------------------------------------------------------------- normalization
XB = r(4, 3, 5, 2)
for _n, _x in (("BatchNorm1d", XB[:, :, :, 0]), ("BatchNorm2d", XB),
               ("BatchNorm3d", r(3, 3, 2, 3, 2))):
    for _what, _kw in (("default", {}), ("affine=False", {"affine": False}),
                       ("no running stats", {"track_running_stats": False}),
                       ("momentum=None", {"momentum": None}), ("momentum 0.3 eps", {
                           "momentum": 0.3, "eps": 1e-3})):
        case(_n, _what, (lambda n, kw: lambda nn: getattr(nn, n)(3, **kw))(_n, _kw), x_(_x))
    case(_n, "wrong channels", (lambda n: lambda nn: getattr(nn, n)(4))(_n), x_(_x))
case("BatchNorm2d", "negative features", lambda nn: nn.BatchNorm2d(-1))
case("BatchNorm1d", "2-d input", lambda nn: nn.BatchNorm1d(3), x_(r(5, 3)))
case("BatchNorm1d", "batch of one", lambda nn: nn.BatchNorm1d(3), x_(r(1, 3)))
case("BatchNorm2d", "wrong ndim", lambda nn: nn.BatchNorm2d(3), x_(r(4, 3, 5)))
for _n, _x in (("InstanceNorm1d", XB[:, :, :, 0]), ("InstanceNorm2d", XB),
               ("InstanceNorm3d", r(2, 3, 2, 3, 2))):
    for _what, _kw in (("default", {}), ("affine", {"affine": True}),
                       ("running stats", {"track_running_stats": True}),
                       ("affine+stats momentum=None", {"affine": True, "track_running_stats": True,
                                                       "momentum": None})):
        case(_n, _what, (lambda n, kw: lambda nn: getattr(nn, n)(3, **kw))(_n, _kw), x_(_x))
    case(_n, "unbatched", (lambda n: lambda nn: getattr(nn, n)(3, affine=True))(_n), x_(_x[0]))
case("GroupNorm", "basic", lambda nn: nn.GroupNorm(3, 6), x_(r(2, 6, 4)))
case("GroupNorm", "affine=False", lambda nn: nn.GroupNorm(2, 6, affine=False), x_(r(2, 6, 2, 2)))
case("GroupNorm", "2-d input", lambda nn: nn.GroupNorm(2, 4, eps=1e-3), x_(r(3, 4)))
case("GroupNorm", "not divisible", lambda nn: nn.GroupNorm(4, 6))
case("LayerNorm", "negative shape", lambda nn: nn.LayerNorm(-1))
case("GroupNorm", "wrong channels", lambda nn: nn.GroupNorm(2, 4), x_(r(2, 6, 3)))
case("LayerNorm", "int shape", lambda nn: nn.LayerNorm(4), x_(r(2, 3, 4)))
case("LayerNorm", "tuple shape", lambda nn: nn.LayerNorm((3, 4)), x_(r(2, 3, 4)))
case("LayerNorm", "no affine", lambda nn: nn.LayerNorm(4, elementwise_affine=False), x_(X34))
case("LayerNorm", "bias=False", lambda nn: nn.LayerNorm(4, bias=False), x_(X34))
case("LayerNorm", "wrong shape", lambda nn: nn.LayerNorm(5), x_(X34))
case("RMSNorm", "default eps", lambda nn: nn.RMSNorm(4), x_(r(2, 3, 4)))
case("RMSNorm", "eps and tuple", lambda nn: nn.RMSNorm([3, 4], eps=1e-3), x_(r(2, 3, 4)))
case("RMSNorm", "no affine", lambda nn: nn.RMSNorm(4, elementwise_affine=False), x_(X34))
case("LocalResponseNorm", "basic", lambda nn: nn.LocalResponseNorm(3), x_(r(2, 5, 3, 3)))
case("LocalResponseNorm", "args 3-d", lambda nn: nn.LocalResponseNorm(2, 1e-3, 0.5, 2.0),
     x_(r(2, 5, 4)))
case("CrossMapLRN2d", "basic", lambda nn: nn.CrossMapLRN2d(3), x_(r(2, 5, 3, 3)))

# --------------------------------------------------------------------------- embedding
IDX = ri(10, 3, 4)
case("Embedding", "basic", lambda nn: nn.Embedding(10, 3), lambda m, L: m(L.T(IDX)))
case("Embedding", "padding_idx", lambda nn: nn.Embedding(10, 3, padding_idx=2),
     lambda m, L: m(L.T(IDX)))
case("Embedding", "negative padding_idx", lambda nn: nn.Embedding(10, 3, padding_idx=-1),
     lambda m, L: m(L.T(IDX)))
case("Embedding", "max_norm", lambda nn: nn.Embedding(10, 3, max_norm=1.0),
     lambda m, L: m(L.T(IDX)))
case("Embedding", "max_norm p1 scale_grad", lambda nn: nn.Embedding(
    10, 3, max_norm=0.5, norm_type=1.0, scale_grad_by_freq=True), lambda m, L: m(L.T(IDX)))
case("Embedding", "sparse", lambda nn: nn.Embedding(10, 3, sparse=True), lambda m, L: m(L.T(IDX)))
case("Embedding", "padding_idx out of range", lambda nn: nn.Embedding(10, 3, padding_idx=10))
case("Embedding", "padding_idx below range", lambda nn: nn.Embedding(10, 3, padding_idx=-11))
case("Embedding", "negative size", lambda nn: nn.Embedding(-1, 3))
case("EmbeddingBag", "padding_idx out of range", lambda nn: nn.EmbeddingBag(10, 3,
                                                                            padding_idx=10))
case("Embedding", "index out of range", lambda nn: nn.Embedding(5, 3), lambda m, L: m(L.T(IDX)))
case("Embedding", "float index", lambda nn: nn.Embedding(10, 3), lambda m, L: m(L.T(X34)))
case("Embedding", "from_pretrained", lambda nn: nn.Embedding.from_pretrained(
    torch.tensor(r(10, 3)) if nn is torch.nn else ember.tensor(r(10, 3)), freeze=False,
    padding_idx=1), lambda m, L: m(L.T(IDX)))
OFFS = np.array([0, 2, 5], dtype=np.int64)
BAG = ri(10, 8)
for _mode in ("mean", "sum", "max"):
    case("EmbeddingBag", f"{_mode} offsets", (lambda md: lambda nn: nn.EmbeddingBag(
        10, 3, mode=md))(_mode), lambda m, L: m(L.T(BAG), L.T(OFFS)))
    case("EmbeddingBag", f"{_mode} 2-d", (lambda md: lambda nn: nn.EmbeddingBag(
        10, 3, mode=md))(_mode), lambda m, L: m(L.T(IDX)))
    case("EmbeddingBag", f"{_mode} include_last_offset", (lambda md: lambda nn: nn.EmbeddingBag(
        10, 3, mode=md, include_last_offset=True))(_mode),
        lambda m, L: m(L.T(BAG), L.T(np.array([0, 2, 5, 8]))))
    case("EmbeddingBag", f"{_mode} padding_idx", (lambda md: lambda nn: nn.EmbeddingBag(
        10, 3, mode=md, padding_idx=int(BAG[0])))(_mode), lambda m, L: m(L.T(BAG), L.T(OFFS)))
case("EmbeddingBag", "per_sample_weights", lambda nn: nn.EmbeddingBag(10, 3, mode="sum"),
     lambda m, L: m(L.T(BAG), L.T(OFFS), per_sample_weights=L.G(r(8))))
case("EmbeddingBag", "max_norm", lambda nn: nn.EmbeddingBag(10, 3, max_norm=1.0),
     lambda m, L: m(L.T(BAG), L.T(OFFS)))
case("EmbeddingBag", "empty bag", lambda nn: nn.EmbeddingBag(10, 3),
     lambda m, L: m(L.T(BAG), L.T(np.array([0, 3, 3]))))
case("EmbeddingBag", "2-d with offsets", lambda nn: nn.EmbeddingBag(10, 3),
     lambda m, L: m(L.T(IDX), L.T(OFFS)))
case("EmbeddingBag", "bad mode", lambda nn: nn.EmbeddingBag(10, 3, mode="min"))

# --------------------------------------------------------------------------- recurrent
XS = r(5, 2, 3)        # (seq, batch, feature)


def _rnn_run(kind, layers, bi, batch_first=False, h0=False, unbatched=False, proj=0):
    def run(m, L):
        x = XS[0] if unbatched else (XS.transpose(1, 0, 2) if batch_first else XS)
        dirs = 2 if bi else 1
        hshape = (layers * dirs, 4) if unbatched else (layers * dirs, 2, 4)
        args = [L.G(x)]
        if h0:
            h = L.G(np.cos(np.arange(np.prod(hshape))).reshape(hshape))
            if kind == "LSTM":
                cshape = hshape
                hshape_h = hshape[:-1] + (proj or 4,)
                h = L.G(np.sin(np.arange(np.prod(hshape_h))).reshape(hshape_h))
                c = L.G(np.cos(np.arange(np.prod(cshape))).reshape(cshape))
                args.append((h, c))
            else:
                args.append(h)
        return m(*args)
    return run


for _kind in ("RNN", "LSTM", "GRU"):
    for _what, _kw, _h0, _unb in (
            ("basic", {}, False, False), ("h0", {}, True, False),
            ("2 layers", {"num_layers": 2}, False, False),
            ("bidirectional", {"bidirectional": True}, False, False),
            ("2 layers bi h0", {"num_layers": 2, "bidirectional": True}, True, False),
            ("batch_first", {"batch_first": True}, True, False),
            ("bias=False", {"bias": False}, False, False),
            ("unbatched", {}, False, True), ("unbatched h0 bi", {"bidirectional": True}, True,
                                             True),
            ("dropout 2 layers", {"num_layers": 2, "dropout": 0.0}, False, False)):
        case(_kind, _what, (lambda k, kw: lambda nn: getattr(nn, k)(3, 4, **kw))(_kind, _kw),
             _rnn_run(_kind, _kw.get("num_layers", 1), _kw.get("bidirectional", False),
                      _kw.get("batch_first", False), _h0, _unb))
    case(_kind, "wrong input size", (lambda k: lambda nn: getattr(nn, k)(5, 4))(_kind),
         _rnn_run(_kind, 1, False))
    case(_kind, "dropout out of range", (lambda k: lambda nn: getattr(nn, k)(3, 4,
                                                                            dropout=1.5))(_kind))
    case(_kind, "4-d input", (lambda k: lambda nn: getattr(nn, k)(3, 4))(_kind),
         lambda m, L: m(L.G(r(1, 5, 2, 3))))
    case(_kind, "PackedSequence", (lambda k: lambda nn: getattr(nn, k)(3, 4, bidirectional=True))(
        _kind), lambda m, L: m(L.nn.utils.rnn.pack_padded_sequence(
            L.G(XS), L.T(np.array([5, 3])))))
    case(_kind, "PackedSequence unsorted", (lambda k: lambda nn: getattr(nn, k)(
        3, 4, num_layers=2))(_kind), lambda m, L: m(L.nn.utils.rnn.pack_padded_sequence(
            L.G(XS), L.T(np.array([3, 5])), enforce_sorted=False)))
case("RNN", "relu", lambda nn: nn.RNN(3, 4, nonlinearity="relu"), _rnn_run("RNN", 1, False))
case("RNN", "bad nonlinearity", lambda nn: nn.RNN(3, 4, nonlinearity="gelu"))
case("LSTM", "proj_size", lambda nn: nn.LSTM(3, 4, proj_size=2), _rnn_run("LSTM", 1, False))
case("LSTM", "proj_size bi 2 layers h0", lambda nn: nn.LSTM(3, 4, proj_size=2, num_layers=2,
                                                            bidirectional=True),
     _rnn_run("LSTM", 2, True, h0=True, proj=2))
case("LSTM", "proj_size too big", lambda nn: nn.LSTM(3, 4, proj_size=4))
case("LSTM", "wrong h0 shape", lambda nn: nn.LSTM(3, 4), lambda m, L: m(
    L.G(XS), (L.G(r(1, 3, 4)), L.G(r(1, 2, 4)))))
for _cell in ("RNNCell", "LSTMCell", "GRUCell"):
    case(_cell, "basic", (lambda c: lambda nn: getattr(nn, c)(3, 4))(_cell), x_(XS[0]))
    case(_cell, "unbatched", (lambda c: lambda nn: getattr(nn, c)(3, 4))(_cell), x_(XS[0, 0]))
    case(_cell, "bias=False", (lambda c: lambda nn: getattr(nn, c)(3, 4, bias=False))(_cell),
         x_(XS[0]))
case("GRUCell", "hx", lambda nn: nn.GRUCell(3, 4), lambda m, L: m(L.G(XS[0]), L.G(r(2, 4))))
case("LSTMCell", "hx", lambda nn: nn.LSTMCell(3, 4), lambda m, L: m(L.G(XS[0]), (
    L.G(r(2, 4)), L.G(r(2, 4)))))

# --------------------------------------------------------------------------- attention
Q, KV = r(3, 2, 8), r(4, 2, 8)   # (L, N, E), (S, N, E)


def _mha(run_kw=None, q=Q, k=KV, v=KV, batch_first=False):
    def run(m, L):
        kw = {key: (val(L) if callable(val) else val) for key, val in (run_kw or {}).items()}
        tr = (lambda a: a.transpose(1, 0, 2)) if batch_first and q.ndim == 3 else (lambda a: a)
        return m(L.G(tr(q)), L.G(tr(k)), L.G(tr(v)), **kw)
    return run


KPM = np.array([[False, False, True, True], [False, False, False, True]])
AMASK = np.triu(np.ones((3, 4), dtype=bool), 2)
case("MultiheadAttention", "basic", lambda nn: nn.MultiheadAttention(8, 2), _mha())
case("MultiheadAttention", "self", lambda nn: nn.MultiheadAttention(8, 2), _mha(k=Q, v=Q))
case("MultiheadAttention", "batch_first", lambda nn: nn.MultiheadAttention(8, 2,
                                                                           batch_first=True),
     _mha(batch_first=True))
case("MultiheadAttention", "kdim vdim", lambda nn: nn.MultiheadAttention(8, 2, kdim=5, vdim=6),
     _mha(k=r(4, 2, 5), v=r(4, 2, 6)))
case("MultiheadAttention", "bias=False", lambda nn: nn.MultiheadAttention(8, 4, bias=False),
     _mha())
case("MultiheadAttention", "add_bias_kv", lambda nn: nn.MultiheadAttention(8, 2,
                                                                           add_bias_kv=True),
     _mha())
case("MultiheadAttention", "add_zero_attn", lambda nn: nn.MultiheadAttention(
    8, 2, add_zero_attn=True), _mha())
case("MultiheadAttention", "bias_kv zero_attn masks", lambda nn: nn.MultiheadAttention(
    8, 2, add_bias_kv=True, add_zero_attn=True), _mha({
        "key_padding_mask": lambda L: L.T(KPM), "attn_mask": lambda L: L.T(AMASK)}))
case("MultiheadAttention", "need_weights False", lambda nn: nn.MultiheadAttention(8, 2),
     _mha({"need_weights": False}))
case("MultiheadAttention", "per-head weights", lambda nn: nn.MultiheadAttention(8, 2),
     _mha({"average_attn_weights": False}))
case("MultiheadAttention", "bool key_padding_mask", lambda nn: nn.MultiheadAttention(8, 2),
     _mha({"key_padding_mask": lambda L: L.T(KPM)}))
case("MultiheadAttention", "float key_padding_mask", lambda nn: nn.MultiheadAttention(8, 2),
     _mha({"key_padding_mask": lambda L: L.T(np.where(KPM, -np.inf, 0.0))}))
case("MultiheadAttention", "float key_padding_mask, bool mask",
     lambda nn: nn.MultiheadAttention(8, 2), _mha({
         "key_padding_mask": lambda L: L.T(np.where(KPM, -np.inf, 0.0)),
         "attn_mask": lambda L: L.T(AMASK)}))
case("MultiheadAttention", "int key_padding_mask", lambda nn: nn.MultiheadAttention(8, 2),
     _mha({"key_padding_mask": lambda L: L.T(KPM.astype(np.int64))}))
case("MultiheadAttention", "bool attn_mask", lambda nn: nn.MultiheadAttention(8, 2),
     _mha({"attn_mask": lambda L: L.T(AMASK)}))
case("MultiheadAttention", "float attn_mask", lambda nn: nn.MultiheadAttention(8, 2),
     _mha({"attn_mask": lambda L: L.T(r(3, 4))}))
case("MultiheadAttention", "3-d attn_mask", lambda nn: nn.MultiheadAttention(8, 2),
     _mha({"attn_mask": lambda L: L.T(r(4, 3, 4))}))
case("MultiheadAttention", "is_causal with mask", lambda nn: nn.MultiheadAttention(8, 2),
     _mha({"attn_mask": lambda L: L.T(np.triu(np.ones((3, 3), dtype=bool), 1)),
           "is_causal": True}, k=Q, v=Q))
case("MultiheadAttention", "unbatched", lambda nn: nn.MultiheadAttention(8, 2),
     _mha(q=Q[:, 0], k=KV[:, 0], v=KV[:, 0]))
case("MultiheadAttention", "embed not divisible", lambda nn: nn.MultiheadAttention(8, 3))
case("MultiheadAttention", "wrong attn_mask shape", lambda nn: nn.MultiheadAttention(8, 2),
     _mha({"attn_mask": lambda L: L.T(r(4, 4))}))

SRC, TGT = r(5, 2, 8), r(3, 2, 8)
_TKW = {"d_model": 8, "nhead": 2, "dim_feedforward": 16, "dropout": 0.0}


def _relu(x):
    return x.clamp(min=0)


for _what, _kw in (("default", {}), ("norm_first", {"norm_first": True}),
                   ("gelu string", {"activation": "gelu"}),
                   ("callable activation", {"activation": _relu}),
                   ("bias=False", {"bias": False}), ("layer_norm_eps", {"layer_norm_eps": 1e-3})):
    case("TransformerEncoderLayer", _what, (lambda kw: lambda nn: nn.TransformerEncoderLayer(
        **_TKW, **kw))(_kw), x_(SRC))
    case("TransformerDecoderLayer", _what, (lambda kw: lambda nn: nn.TransformerDecoderLayer(
        **_TKW, **kw))(_kw), lambda m, L: m(L.G(TGT), L.G(SRC)))
case("TransformerEncoderLayer", "batch_first masks", lambda nn: nn.TransformerEncoderLayer(
    **_TKW, batch_first=True), lambda m, L: m(
        L.G(SRC.transpose(1, 0, 2)), src_mask=L.T(np.triu(np.ones((5, 5), bool), 1)),
        src_key_padding_mask=L.T(np.array([[False] * 5, [False] * 3 + [True] * 2]))))
case("TransformerEncoderLayer", "float src_mask", lambda nn: nn.TransformerEncoderLayer(**_TKW),
     lambda m, L: m(L.G(SRC), src_mask=L.T(r(5, 5))))
case("TransformerEncoderLayer", "is_causal", lambda nn: nn.TransformerEncoderLayer(**_TKW),
     lambda m, L: m(L.G(SRC), src_mask=L.T(np.triu(np.full((5, 5), -np.inf), 1)),
                    is_causal=True))
case("TransformerEncoderLayer", "bad activation", lambda nn: nn.TransformerEncoderLayer(
    **_TKW, activation="swish"))
case("TransformerDecoderLayer", "bad activation", lambda nn: nn.TransformerDecoderLayer(
    **_TKW, activation="tanh"))
case("TransformerDecoderLayer", "masks", lambda nn: nn.TransformerDecoderLayer(**_TKW),
     lambda m, L: m(L.G(TGT), L.G(SRC), tgt_mask=L.T(np.triu(np.ones((3, 3), bool), 1)),
                    memory_key_padding_mask=L.T(np.array([[False] * 5, [False] * 4 + [True]])),
                    tgt_key_padding_mask=L.T(np.array([[False] * 3, [False, False, True]]))))
case("TransformerEncoder", "2 layers norm", lambda nn: nn.TransformerEncoder(
    nn.TransformerEncoderLayer(**_TKW), 2, norm=nn.LayerNorm(8), enable_nested_tensor=False),
    lambda m, L: m(L.G(SRC), mask=L.T(np.triu(np.ones((5, 5), bool), 1))))
case("TransformerDecoder", "2 layers", lambda nn: nn.TransformerDecoder(
    nn.TransformerDecoderLayer(**_TKW, norm_first=True), 2),
    lambda m, L: m(L.G(TGT), L.G(SRC), tgt_is_causal=False))
case("Transformer", "small", lambda nn: nn.Transformer(8, 2, 1, 1, 16, 0.0),
     lambda m, L: m(L.G(SRC), L.G(TGT), tgt_mask=L.T(np.triu(np.full((3, 3), -np.inf), 1))))
case("Transformer", "batch_first norm_first", lambda nn: nn.Transformer(
    8, 2, 1, 2, 16, 0.0, batch_first=True, norm_first=True, activation="gelu"),
    lambda m, L: m(L.G(SRC.transpose(1, 0, 2)), L.G(TGT.transpose(1, 0, 2))))
case("Transformer", "generate_square_subsequent_mask", lambda nn: nn.Transformer(
    8, 2, 1, 1, 16, 0.0), lambda m, L: m.generate_square_subsequent_mask(4, dtype=L.mod.float64),
    modes=("eval",))
case("Transformer", "d_model mismatch", lambda nn: nn.Transformer(8, 2, 1, 1, 16, 0.0),
     lambda m, L: m(L.G(r(5, 2, 6)), L.G(TGT)))

# --------------------------------------------------------------------------- dropout
for _n in ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"):
    _x = {"Dropout1d": r(2, 3, 4), "Dropout2d": r(2, 3, 4, 4), "Dropout3d": r(2, 3, 2, 2, 2)}.get(
        _n, r(2, 3, 4, 4))
    case(_n, "p=0.3", (lambda n: lambda nn: getattr(nn, n)(0.3))(_n), x_(_x), values=False)
    case(_n, "p=0", (lambda n: lambda nn: getattr(nn, n)(0.0))(_n), x_(_x))
    case(_n, "p=1", (lambda n: lambda nn: getattr(nn, n)(1.0))(_n), x_(_x))
    case(_n, "p out of range", (lambda n: lambda nn: getattr(nn, n)(1.5))(_n))
    case(_n, "inplace", (lambda n: lambda nn: getattr(nn, n)(0.2, inplace=True))(_n),
         lambda m, L: m(L.G(r(2, 3, 4, 4)) * 1.0), values=False)
case("Dropout2d", "3-d input", lambda nn: nn.Dropout2d(0.5), x_(r(3, 4, 4)), values=False)


def _dropout_law(channel_dims, p=0.4):
    """run: whether a training forward keeps each element (or whole channel: the trailing
    channel_dims dims zeroed together) as x / (1 - p) or zeroes it, and the kept fraction
    within 0.15 of 1 - p: the random draws differ between the libraries, the law must not."""
    def run(m, L):
        x = L.T(np.abs(r(16, 12, 5, 5)) + 0.5)   # 192 channels: the fraction +-0.035
        if channel_dims == 1:
            x = x[..., 0]
        elif channel_dims == 3:
            x = x[..., None]
        y = m(x)
        zero, scaled = y == 0, (y - x / (1 - p)).abs() < 1e-12
        unit = tuple(range(-channel_dims, 0)) if channel_dims else None
        whole = (zero.all(unit) | scaled.all(unit)) if unit else (zero | scaled)
        kept = float(scaled.double().mean())
        return whole.all(), L.mod.tensor(abs(kept - (1 - p)) < 0.15)
    return run


for _n, _dims in (("Dropout", 0), ("Dropout1d", 1), ("Dropout2d", 2), ("Dropout3d", 3)):
    case(_n, "train law", (lambda n: lambda nn: getattr(nn, n)(0.4))(_n), _dropout_law(_dims),
         modes=("train",))

# --------------------------------------------------------------------------- activations
XA = r(3, 5, lo=-3, hi=3)
for _n, _args, _kw in (
        ("ReLU", (), {}), ("ReLU6", (), {}), ("ELU", (0.5,), {}), ("SELU", (), {}),
        ("CELU", (1.5,), {}), ("GELU", (), {"approximate": "tanh"}), ("GELU", (), {}),
        ("SiLU", (), {}), ("Mish", (), {}), ("Sigmoid", (), {}), ("Tanh", (), {}),
        ("Hardtanh", (-0.5, 2.0), {}), ("Hardswish", (), {}), ("Hardsigmoid", (), {}),
        ("LeakyReLU", (0.2,), {}), ("PReLU", (), {}), ("PReLU", (3,), {"init": 0.1}),
        ("RReLU", (0.1, 0.3), {}), ("Softplus", (2.0, 5.0), {}), ("Softshrink", (0.7,), {}),
        ("Hardshrink", (0.3,), {}), ("Tanhshrink", (), {}), ("Threshold", (0.5, -1.0), {}),
        ("LogSigmoid", (), {}), ("Softsign", (), {}), ("Softmax", (1,), {}),
        ("Softmax", (0,), {}), ("LogSoftmax", (-1,), {}), ("Softmin", (1,), {}),
        ("Softmax2d", (), {}), ("GLU", (), {}), ("GLU", (0,), {})):
    _x = r(2, 3, 4, 4) if _n in ("Softmax2d",) else (r(3, 6) if _n == "GLU" else XA)
    if _n == "PReLU" and _args:
        _x = r(2, 3, 4)
    _tag = ", ".join([str(v) for v in _args] + [f"{k}={v}" for k, v in _kw.items()]) or "default"
    case(_n, _tag, (lambda n, a, kw: lambda nn: getattr(nn, n)(*a, **kw))(_n, _args, _kw), x_(_x),
         values=_n != "RReLU")
case("Softmax", "no dim", lambda nn: nn.Softmax(), x_(r(2, 3, 4)))
case("ReLU", "inplace", lambda nn: nn.ReLU(inplace=True), lambda m, L: m(L.G(XA) * 1.0))
case("GELU", "bad approximate", lambda nn: nn.GELU(approximate="fast"), x_(XA))
case("Hardtanh", "min > max", lambda nn: nn.Hardtanh(1.0, -1.0))
case("Hardtanh", "min == max", lambda nn: nn.Hardtanh(1.0, 1.0))
case("Threshold", "inplace", lambda nn: nn.Threshold(0.1, 20.0, inplace=True),
     lambda m, L: m(L.G(XA) * 1.0))
case("GLU", "odd size", lambda nn: nn.GLU(), x_(r(3, 5)))

# --------------------------------------------------------------------------- reshaping layers
case("Flatten", "default", lambda nn: nn.Flatten(), x_(r(2, 3, 4)))
case("Flatten", "dims", lambda nn: nn.Flatten(0, -2), x_(r(2, 3, 4)))
case("Unflatten", "tuple", lambda nn: nn.Unflatten(1, (2, 3)), x_(r(4, 6)))
case("Unflatten", "-1", lambda nn: nn.Unflatten(-1, (3, -1)), x_(r(4, 6)))
case("Unflatten", "bad size", lambda nn: nn.Unflatten(1, (4, 4)), x_(r(4, 6)))
case("Upsample", "nearest scale", lambda nn: nn.Upsample(scale_factor=2), x_(r(1, 2, 3, 3)))
case("Upsample", "bilinear size", lambda nn: nn.Upsample(size=(5, 4), mode="bilinear"),
     x_(r(1, 2, 3, 3)))
case("Upsample", "bilinear align_corners", lambda nn: nn.Upsample(
    scale_factor=1.5, mode="bilinear", align_corners=True), x_(r(1, 2, 3, 3)))
case("Upsample", "linear 1-d", lambda nn: nn.Upsample(scale_factor=2, mode="linear"),
     x_(r(1, 2, 3)))
case("Upsample", "trilinear", lambda nn: nn.Upsample(size=4, mode="trilinear"),
     x_(r(1, 2, 3, 3, 3)))
case("UpsamplingNearest2d", "scale", lambda nn: nn.UpsamplingNearest2d(scale_factor=2),
     x_(r(1, 2, 3, 3)))
case("UpsamplingBilinear2d", "size", lambda nn: nn.UpsamplingBilinear2d(size=5),
     x_(r(1, 2, 3, 3)))
case("PixelShuffle", "2", lambda nn: nn.PixelShuffle(2), x_(r(2, 8, 3, 3)))
case("PixelShuffle", "bad channels", lambda nn: nn.PixelShuffle(2), x_(r(2, 6, 3, 3)))
case("PixelUnshuffle", "2", lambda nn: nn.PixelUnshuffle(2), x_(r(2, 2, 4, 6)))
case("ChannelShuffle", "2", lambda nn: nn.ChannelShuffle(2), x_(r(2, 4, 3, 3)))
case("Fold", "basic", lambda nn: nn.Fold((4, 5), 2), x_(r(2, 12, 12)))
case("Fold", "stride dilation padding", lambda nn: nn.Fold((5, 5), (2, 3), dilation=2,
                                                           padding=1, stride=2),
     x_(r(1, 6, 4)))
case("Fold", "wrong blocks", lambda nn: nn.Fold((4, 5), 2), x_(r(2, 12, 11)))
case("Unfold", "basic", lambda nn: nn.Unfold(2), x_(r(2, 3, 4, 5)))
case("Unfold", "all args", lambda nn: nn.Unfold((2, 3), dilation=2, padding=1, stride=(2, 1)),
     x_(r(1, 2, 5, 6)))
case("ZeroPad2d", "tuple", lambda nn: nn.ZeroPad2d((1, 0, 2, 1)), x_(r(1, 2, 3, 3)))
case("ReflectionPad1d", "2", lambda nn: nn.ReflectionPad1d(2), x_(r(1, 2, 5)))
case("ReplicationPad3d", "1", lambda nn: nn.ReplicationPad3d(1), x_(r(1, 1, 2, 2, 2)))
case("CircularPad2d", "1", lambda nn: nn.CircularPad2d(1), x_(r(1, 2, 3, 3)))
case("ConstantPad1d", "value", lambda nn: nn.ConstantPad1d((2, 1), 3.5), x_(r(2, 4)))
case("CosineSimilarity", "dim 0", lambda nn: nn.CosineSimilarity(0), lambda m, L: m(
    L.G(X34), L.G(r(3, 4))))
case("PairwiseDistance", "p=1 keepdim", lambda nn: nn.PairwiseDistance(1.0, keepdim=True),
     lambda m, L: m(L.G(X34), L.G(r(3, 4))))

# --------------------------------------------------------------------------- losses
LOGITS, TARGET = r(4, 5), ri(5, 4)


def _loss(inp, tgt, grad_target=False, extra=()):
    def run(m, L):
        ins = [L.G(a) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else L.T(a)
               for a in extra]
        t = L.G(tgt) if grad_target else L.T(tgt)
        return m(L.G(inp), t, *ins)
    return run


def _ctc_run(m, L):
    """CTC: (T, N, C) log-probabilities, padded targets and both lengths."""
    return m(L.G(r(6, 2, 4)).log_softmax(2), L.T(ri(4, 2, 3, low=1)), L.T(np.array([6, 5])),
             L.T(np.array([3, 2])))


PROB, LAB01 = r(4, 5, lo=0.05, hi=0.95), ri(2, 4, 5).astype(np.float64)
_LOSSES = (
    ("L1Loss", {}, _loss(X34, r(3, 4), True)),
    ("MSELoss", {}, _loss(X34, r(3, 4), True)),
    ("SmoothL1Loss", {"beta": 0.5}, _loss(X34, r(3, 4), True)),
    ("HuberLoss", {"delta": 0.7}, _loss(X34, r(3, 4), True)),
    ("CrossEntropyLoss", {}, _loss(LOGITS, TARGET)),
    ("CrossEntropyLoss", {"label_smoothing": 0.2, "ignore_index": 1}, _loss(LOGITS, TARGET)),
    ("CrossEntropyLoss", {"weight": "w5"}, _loss(LOGITS, TARGET)),
    ("CrossEntropyLoss", {"weight": "w5", "label_smoothing": 0.1}, _loss(LOGITS, TARGET)),
    ("CrossEntropyLoss", {"probs": True}, _loss(LOGITS, PROB)),
    ("CrossEntropyLoss", {"spatial": True}, _loss(r(2, 5, 3), ri(5, 2, 3))),
    ("NLLLoss", {}, _loss(LOGITS, TARGET)),
    ("NLLLoss", {"weight": "w5", "ignore_index": 2}, _loss(LOGITS, TARGET)),
    ("BCELoss", {}, _loss(PROB, LAB01)),
    ("BCELoss", {"weight": "w5"}, _loss(PROB, LAB01)),
    ("BCEWithLogitsLoss", {}, _loss(LOGITS, LAB01, True)),
    ("BCEWithLogitsLoss", {"pos_weight": "w5"}, _loss(LOGITS, LAB01)),
    ("KLDivLoss", {}, _loss(np.log(PROB), PROB, True)),
    ("KLDivLoss", {"log_target": True}, _loss(np.log(PROB), np.log(PROB[::-1].copy()), True)),
    ("PoissonNLLLoss", {}, _loss(X34, np.abs(r(3, 4)))),
    ("PoissonNLLLoss", {"log_input": False, "full": True}, _loss(np.abs(X34) + 0.1,
                                                                 np.abs(r(3, 4)) * 3)),
    ("GaussianNLLLoss", {}, _loss(X34, r(3, 4), extra=(np.abs(r(3, 4)) + 0.1,))),
    ("GaussianNLLLoss", {"full": True, "eps": 1e-3}, _loss(X34, r(3, 4),
                                                           extra=(np.abs(r(3, 1)) + 0.1,))),
    ("HingeEmbeddingLoss", {"margin": 0.5}, _loss(X34, np.sign(r(3, 4)))),
    ("SoftMarginLoss", {}, _loss(X34, np.sign(r(3, 4)))),
    ("MultiLabelSoftMarginLoss", {}, _loss(LOGITS, LAB01)),
    ("MultiLabelMarginLoss", {}, _loss(LOGITS, np.array([[1, 3, -1, 0, 0]] * 4))),
    ("MultiMarginLoss", {}, _loss(LOGITS, TARGET)),
    ("MultiMarginLoss", {"p": 2, "margin": 0.5, "weight": "w5"}, _loss(LOGITS, TARGET)),
    ("MarginRankingLoss", {"margin": 0.1}, _loss(r(6), r(6), extra=(np.sign(r(6)),))),
    ("CosineEmbeddingLoss", {"margin": 0.2}, _loss(X34, r(3, 4), extra=(np.sign(r(3)),))),
    ("TripletMarginLoss", {}, _loss(X34, r(3, 4), True, extra=(r(3, 4),))),
    ("TripletMarginLoss", {"p": 1, "swap": True}, _loss(X34, r(3, 4), True, extra=(r(3, 4),))),
    ("CTCLoss", {}, None),
)
for _n, _kw, _run in _LOSSES:
    _tag = ", ".join(f"{k}={v}" for k, v in _kw.items() if k not in ("probs", "spatial")) or (
        "probabilities" if "probs" in _kw else ("spatial" if "spatial" in _kw else "default"))
    _kw = {k: v for k, v in _kw.items() if k not in ("probs", "spatial")}
    for _red in ("mean", "sum", "none"):
        if _run is None:
            _run = _ctc_run
        case(_n, f"{_tag} / {_red}", (lambda n, kw, red: lambda nn: getattr(nn, n)(
            reduction=red, **{k: (_w5(nn) if v == "w5" else v) for k, v in kw.items()}))(
                _n, _kw, _red), _run)
    case(_n, f"{_tag} / bad reduction", (lambda n: lambda nn: getattr(nn, n)(
        reduction="average"))(_n), _run)
case("CrossEntropyLoss", "size_average False", lambda nn: nn.CrossEntropyLoss(size_average=False),
     _loss(LOGITS, TARGET))
case("CrossEntropyLoss", "wrong target shape", lambda nn: nn.CrossEntropyLoss(),
     _loss(LOGITS, ri(5, 3)))
case("MSELoss", "broadcast target", lambda nn: nn.MSELoss(), _loss(X34, r(4), True))
case("CTCLoss", "zero_infinity blank", lambda nn: nn.CTCLoss(blank=3, zero_infinity=True),
     lambda m, L: m(L.G(np.log(np.full((3, 1, 4), 0.25))), L.T(np.array([[0, 1, 2, 1]])),
                    L.T(np.array([3])), L.T(np.array([4]))))
case("BCELoss", "out of range input", lambda nn: nn.BCELoss(), _loss(X34 + 3, LAB01[:3, :4]))


def _w5(nn):
    w = np.array([0.5, 1.0, 2.0, 0.3, 1.5])
    return torch.tensor(w) if nn is torch.nn else ember.tensor(w)


# --------------------------------------------------------------------------- more losses
case("KLDivLoss", "batchmean", lambda nn: nn.KLDivLoss(reduction="batchmean"),
     _loss(np.log(PROB), PROB, True))
case("KLDivLoss", "batchmean log_target", lambda nn: nn.KLDivLoss(reduction="batchmean",
                                                                  log_target=True),
     _loss(np.log(PROB), np.log(PROB), True))
case("SmoothL1Loss", "beta=0", lambda nn: nn.SmoothL1Loss(beta=0.0), _loss(X34, r(3, 4), True))
case("SmoothL1Loss", "negative beta", lambda nn: nn.SmoothL1Loss(beta=-1.0),
     _loss(X34, r(3, 4)))
case("NLLLoss", "spatial weight none", lambda nn: nn.NLLLoss(weight=_w5(nn), reduction="none"),
     _loss(r(2, 5, 3, 2), ri(5, 2, 3, 2)))
case("NLLLoss", "spatial weight mean ignore", lambda nn: nn.NLLLoss(weight=_w5(nn),
                                                                    ignore_index=0),
     _loss(r(2, 5, 3, 2), ri(5, 2, 3, 2)))
case("NLLLoss", "all ignored mean", lambda nn: nn.NLLLoss(ignore_index=1),
     _loss(LOGITS, np.ones(4, dtype=np.int64)))
case("NLLLoss", "1-d input", lambda nn: nn.NLLLoss(), _loss(LOGITS[0], np.array(2)))
case("NLLLoss", "target out of range", lambda nn: nn.NLLLoss(), _loss(LOGITS, TARGET + 5))
case("CrossEntropyLoss", "probabilities smoothing weight", lambda nn: nn.CrossEntropyLoss(
    weight=_w5(nn), label_smoothing=0.3), _loss(LOGITS, PROB / PROB.sum(1, keepdims=True)))
case("CrossEntropyLoss", "spatial smoothing weight none", lambda nn: nn.CrossEntropyLoss(
    weight=_w5(nn), label_smoothing=0.1, reduction="none", ignore_index=2),
    _loss(r(2, 5, 3), ri(5, 2, 3)))
case("CrossEntropyLoss", "label_smoothing > 1", lambda nn: nn.CrossEntropyLoss(
    label_smoothing=1.5), _loss(LOGITS, TARGET))
case("CrossEntropyLoss", "float target wrong shape", lambda nn: nn.CrossEntropyLoss(),
     _loss(LOGITS, r(4, 4)))
case("CrossEntropyLoss", "int32 target", lambda nn: nn.CrossEntropyLoss(),
     lambda m, L: m(L.G(LOGITS), L.T(TARGET, "int32")))
case("BCEWithLogitsLoss", "weight and pos_weight broadcast", lambda nn: nn.BCEWithLogitsLoss(
    weight=_w5(nn)[:1], pos_weight=_w5(nn)), _loss(LOGITS, LAB01, True))
case("BCELoss", "target shape mismatch", lambda nn: nn.BCELoss(), _loss(PROB, LAB01[:, :4]))
case("MSELoss", "size_average reduce False", lambda nn: nn.MSELoss(size_average=False,
                                                                   reduce=False),
     _loss(X34, r(3, 4), True))
case("L1Loss", "reduce False", lambda nn: nn.L1Loss(reduce=False), _loss(X34, r(3, 4), True))
case("HuberLoss", "delta sum", lambda nn: nn.HuberLoss(reduction="sum", delta=2.5),
     _loss(X34 * 2, r(3, 4), True))
case("TripletMarginWithDistanceLoss", "default", lambda nn: nn.TripletMarginWithDistanceLoss(),
     _loss(X34, r(3, 4), True, extra=(r(3, 4),)))
case("TripletMarginWithDistanceLoss", "cosine distance swap", lambda nn:
     nn.TripletMarginWithDistanceLoss(distance_function=nn.CosineSimilarity(), margin=0.5,
                                      swap=True, reduction="sum"),
     _loss(X34, r(3, 4), True, extra=(r(3, 4),)))
case("MultiLabelMarginLoss", "1-d", lambda nn: nn.MultiLabelMarginLoss(),
     _loss(LOGITS[0], np.array([3, 0, -1, 1, 1])))
case("MultiMarginLoss", "bad p", lambda nn: nn.MultiMarginLoss(p=3))
case("PoissonNLLLoss", "eps", lambda nn: nn.PoissonNLLLoss(eps=0.5, log_input=False),
     _loss(np.abs(X34), np.abs(r(3, 4))))
case("GaussianNLLLoss", "negative var", lambda nn: nn.GaussianNLLLoss(),
     _loss(X34, r(3, 4), extra=(-np.abs(r(3, 4)),)))
case("GaussianNLLLoss", "var one fewer dim", lambda nn: nn.GaussianNLLLoss(),
     _loss(X34, r(3, 4), extra=(np.abs(r(3)) + 0.1,)))
case("CTCLoss", "zero target length", lambda nn: nn.CTCLoss(reduction="mean"),
     lambda m, L: m(L.G(r(5, 2, 4)).log_softmax(2), L.T(ri(4, 2, 3, low=1)),
                    L.T(np.array([5, 5])), L.T(np.array([0, 3]))))
case("CTCLoss", "1-d concatenated targets", lambda nn: nn.CTCLoss(reduction="sum"),
     lambda m, L: m(L.G(r(6, 2, 4)).log_softmax(2), L.T(np.array([1, 2, 3, 1])),
                    L.T(np.array([6, 6])), L.T(np.array([3, 1]))))
case("CTCLoss", "unbatched", lambda nn: nn.CTCLoss(),
     lambda m, L: m(L.G(r(6, 4)).log_softmax(1), L.T(np.array([1, 2])),
                    L.T(np.array(6)), L.T(np.array(2))))

# --------------------------------------------------------------------------- more layers
case("PixelShuffle", "unbatched", lambda nn: nn.PixelShuffle(2), x_(r(8, 2, 3)))
case("PixelUnshuffle", "not divisible", lambda nn: nn.PixelUnshuffle(2), x_(r(1, 2, 3, 4)))
case("Fold", "unbatched", lambda nn: nn.Fold((4, 5), 2), x_(r(12, 12)))
case("Unfold", "unbatched", lambda nn: nn.Unfold(2, stride=2), x_(r(3, 4, 6)))
case("Upsample", "nearest-exact", lambda nn: nn.Upsample(scale_factor=1.5, mode="nearest-exact"),
     x_(r(1, 2, 4, 4)))
case("Upsample", "bicubic recompute", lambda nn: nn.Upsample(scale_factor=1.7, mode="bicubic",
                                                             recompute_scale_factor=True),
     x_(r(1, 2, 4, 4)))
case("Upsample", "size and scale", lambda nn: nn.Upsample(size=4, scale_factor=2),
     x_(r(1, 2, 4, 4)))
case("Softmax2d", "3-d input", lambda nn: nn.Softmax2d(), x_(r(3, 4, 4)))
case("Softmax2d", "2-d input", lambda nn: nn.Softmax2d(), x_(r(4, 4)))
case("PReLU", "wrong channels", lambda nn: nn.PReLU(4), x_(r(2, 3, 4)))
case("PReLU", "1-d input", lambda nn: nn.PReLU(), x_(r(5)))
case("CELU", "alpha 0", lambda nn: nn.CELU(0.0), x_(XA))
case("Softplus", "negative beta", lambda nn: nn.Softplus(beta=-1.0), x_(XA))
case("LeakyReLU", "inplace", lambda nn: nn.LeakyReLU(0.3, inplace=True),
     lambda m, L: m(L.G(XA) * 1.0))
case("ELU", "inplace", lambda nn: nn.ELU(inplace=True), lambda m, L: m(L.G(XA) * 1.0))
case("SiLU", "inplace", lambda nn: nn.SiLU(inplace=True), lambda m, L: m(L.G(XA) * 1.0))
case("Hardtanh", "deprecated min_value", lambda nn: nn.Hardtanh(min_value=-0.5), x_(XA))
case("RReLU", "eval", lambda nn: nn.RReLU(0.1, 0.3), x_(XA), modes=("eval",))
case("RReLU", "lower > upper", lambda nn: nn.RReLU(0.5, 0.1), x_(XA), modes=("eval",))
case("Threshold", "int input", lambda nn: nn.Threshold(1, 0), lambda m, L: m(L.T(ri(5, 3, 4))))
case("ReLU", "int input", lambda nn: nn.ReLU(), lambda m, L: m(L.T(ri(5, 3, 4, low=-5))))
case("Flatten", "0-d input", lambda nn: nn.Flatten(0), x_(np.array(2.0)))
case("Unflatten", "named-free sizes list", lambda nn: nn.Unflatten(0, [2, 2]), x_(r(4, 3)))
case("Identity", "int input", lambda nn: nn.Identity(), lambda m, L: m(L.T(ri(3, 2))))
case("AdaptiveAvgPool2d", "bigger than input", lambda nn: nn.AdaptiveAvgPool2d((9, 8)),
     x_(r(1, 2, 4, 3)))
case("AdaptiveMaxPool2d", "0 output", lambda nn: nn.AdaptiveMaxPool2d(0), x_(r(1, 2, 4, 3)))
case("MaxPool2d", "kernel bigger than input", lambda nn: nn.MaxPool2d(5), x_(r(1, 2, 4, 4)))
case("MaxPool2d", "ceil_mode last window in padding", lambda nn: nn.MaxPool2d(
    2, 2, 1, ceil_mode=True), x_(r(1, 1, 4, 4)))
case("AvgPool2d", "ceil_mode count_include_pad", lambda nn: nn.AvgPool2d(
    3, 2, 1, ceil_mode=True), x_(r(1, 2, 6, 6)))
case("AvgPool2d", "ceil_mode no count_include_pad", lambda nn: nn.AvgPool2d(
    3, 2, 1, ceil_mode=True, count_include_pad=False), x_(r(1, 2, 6, 6)))
case("MaxUnpool2d", "stride and padding", lambda nn: nn.MaxUnpool2d(3, 2, 1),
     lambda m, L: m(*L.nn.functional.max_pool2d(L.G(r(1, 2, 7, 7)), 3, 2, 1,
                                                 return_indices=True)))
case("MaxUnpool2d", "bad output_size", lambda nn: nn.MaxUnpool2d(2),
     lambda m, L: m(*L.nn.functional.max_pool2d(L.G(r(1, 2, 6, 6)), 2, return_indices=True),
                    output_size=(9, 9)))
case("LPPool2d", "inf norm", lambda nn: nn.LPPool2d(float("inf"), 2), x_(XP))
case("LocalResponseNorm", "size 1 on 2-d", lambda nn: nn.LocalResponseNorm(1), x_(r(3, 4)))
case("GroupNorm", "one group per channel", lambda nn: nn.GroupNorm(6, 6), x_(r(2, 6, 3, 2)))
case("GroupNorm", "empty batch", lambda nn: nn.GroupNorm(2, 4), x_(r(0, 4, 3)))
case("LayerNorm", "empty batch", lambda nn: nn.LayerNorm(4), x_(r(0, 4)))
case("LayerNorm", "empty batch float32", lambda nn: nn.LayerNorm((2, 2)), x_(r(3, 0, 2, 2)),
     float32=True)
case("RMSNorm", "empty batch", lambda nn: nn.RMSNorm(4), x_(r(0, 4)))
case("LPPool1d", "-inf norm", lambda nn: nn.LPPool1d(-float("inf"), 2), x_(r(2, 3, 6)))
case("LPPool3d", "inf norm", lambda nn: nn.LPPool3d(float("inf"), 2), x_(r(1, 2, 4, 4, 4)))
case("RReLU", "lower > upper train", lambda nn: nn.RReLU(0.5, 0.1), x_(XA), modes=("train",),
     values=False)
case("BatchNorm2d", "empty batch eval", lambda nn: nn.BatchNorm2d(3), x_(r(0, 3, 2, 2)),
     modes=("eval",))
case("BatchNorm1d", "momentum=None eval after 2 trains", lambda nn: nn.BatchNorm1d(
    3, momentum=None), lambda m, L: (m(L.G(r(4, 3))), m(L.G(r(5, 3)))))
case("BatchNorm2d", "float32", lambda nn: nn.BatchNorm2d(3), x_(XB), float32=True)
case("InstanceNorm1d", "2-d running stats eval", lambda nn: nn.InstanceNorm1d(
    3, track_running_stats=True), x_(r(3, 5)))

# --------------------------------------------------------------------------- more recurrent
case("LSTM", "proj_size batch_first unbatched", lambda nn: nn.LSTM(
    3, 4, proj_size=2, batch_first=True), x_(XS[:, 0]))
case("LSTM", "proj_size PackedSequence", lambda nn: nn.LSTM(3, 4, proj_size=3),
     lambda m, L: m(L.nn.utils.rnn.pack_padded_sequence(L.G(XS), L.T(np.array([5, 2])))))
case("GRU", "PackedSequence h0 batch_first", lambda nn: nn.GRU(3, 4, batch_first=True,
                                                               num_layers=2),
     lambda m, L: m(L.nn.utils.rnn.pack_padded_sequence(
         L.G(XS.transpose(1, 0, 2)), L.T(np.array([2, 5])), batch_first=True,
         enforce_sorted=False), L.G(r(2, 2, 4))))
case("LSTM", "dropout between layers", lambda nn: nn.LSTM(3, 4, num_layers=2, dropout=0.5),
     _rnn_run("LSTM", 2, False), values=False)
case("RNN", "hidden_size 0", lambda nn: nn.RNN(3, 0))
case("GRU", "num_layers 0", lambda nn: nn.GRU(3, 4, num_layers=0))
case("LSTM", "float32", lambda nn: nn.LSTM(3, 4, num_layers=2, bidirectional=True),
     _rnn_run("LSTM", 2, True), float32=True)
case("GRU", "float32 batch_first", lambda nn: nn.GRU(3, 4, batch_first=True),
     _rnn_run("GRU", 1, False, batch_first=True), float32=True)
case("RNN", "h0 wrong batch", lambda nn: nn.RNN(3, 4), lambda m, L: m(L.G(XS), L.G(r(1, 3, 4))))
case("GRU", "unbatched with batched h0", lambda nn: nn.GRU(3, 4),
     lambda m, L: m(L.G(XS[:, 0]), L.G(r(1, 2, 4))))

# --------------------------------------------------------------------------- more attention
case("MultiheadAttention", "kdim vdim batch_first masks", lambda nn: nn.MultiheadAttention(
    8, 2, kdim=5, vdim=6, batch_first=True), _mha({
        "key_padding_mask": lambda L: L.T(KPM), "attn_mask": lambda L: L.T(AMASK)},
        k=r(4, 2, 5), v=r(4, 2, 6), batch_first=True))
case("MultiheadAttention", "kdim add_bias_kv zero_attn", lambda nn: nn.MultiheadAttention(
    8, 2, kdim=5, vdim=5, add_bias_kv=True, add_zero_attn=True),
    _mha({"need_weights": True, "average_attn_weights": False}, k=r(4, 2, 5), v=r(4, 2, 5)))
case("MultiheadAttention", "unbatched masks", lambda nn: nn.MultiheadAttention(8, 2),
     _mha({"key_padding_mask": lambda L: L.T(KPM[0]), "attn_mask": lambda L: L.T(AMASK)},
          q=Q[:, 0], k=KV[:, 0], v=KV[:, 0]))
case("MultiheadAttention", "all keys masked", lambda nn: nn.MultiheadAttention(8, 2),
     _mha({"key_padding_mask": lambda L: L.T(np.ones((2, 4), dtype=bool))}))
case("MultiheadAttention", "is_causal without mask", lambda nn: nn.MultiheadAttention(8, 2),
     _mha({"is_causal": True}, k=Q, v=Q))
case("MultiheadAttention", "float32 self batch_first", lambda nn: nn.MultiheadAttention(
    8, 2, batch_first=True), _mha(k=Q, v=Q, batch_first=True), float32=True)
case("MultiheadAttention", "float32 eval masks", lambda nn: nn.MultiheadAttention(8, 2),
     _mha({"key_padding_mask": lambda L: L.T(KPM), "attn_mask": lambda L: L.T(AMASK)}),
     float32=True)
case("MultiheadAttention", "dropout", lambda nn: nn.MultiheadAttention(8, 2, dropout=0.5),
     _mha(), values=False)
case("MultiheadAttention", "mask dtype mismatch", lambda nn: nn.MultiheadAttention(8, 2),
     _mha({"key_padding_mask": lambda L: L.T(KPM),
           "attn_mask": lambda L: L.T(np.zeros((3, 4)))}))
case("TransformerEncoderLayer", "float32 batch_first norm_first", lambda nn:
     nn.TransformerEncoderLayer(**_TKW, batch_first=True, norm_first=True), x_(SRC),
     float32=True)
case("TransformerEncoder", "eval key padding nested", lambda nn: nn.TransformerEncoder(
    nn.TransformerEncoderLayer(**_TKW, batch_first=True), 2),
    lambda m, L: m(L.G(SRC.transpose(1, 0, 2)),
                   src_key_padding_mask=L.T(np.array([[False] * 5, [False] * 3 + [True] * 2]))))
case("TransformerDecoderLayer", "batch_first memory_mask", lambda nn: nn.TransformerDecoderLayer(
    **_TKW, batch_first=True), lambda m, L: m(
        L.G(TGT.transpose(1, 0, 2)), L.G(SRC.transpose(1, 0, 2)),
        memory_mask=L.T(np.triu(np.ones((3, 5), bool), 3))))
case("Transformer", "d_model not divisible", lambda nn: nn.Transformer(10, 3, 1, 1, 16))

# --------------------------------------------------------------------------- float32 layers
case("Linear", "float32", lambda nn: nn.Linear(4, 5), x_(r(2, 3, 4)), float32=True)
case("Conv2d", "float32 groups stride", lambda nn: nn.Conv2d(4, 6, 3, 2, 1, groups=2),
     x_(r(2, 4, 7, 6)), float32=True)
case("ConvTranspose2d", "float32", lambda nn: nn.ConvTranspose2d(4, 2, 3, 2, 1, 1),
     x_(r(2, 4, 5, 4)), float32=True)
case("Conv1d", "float32 reflect", lambda nn: nn.Conv1d(4, 3, 3, padding=1, padding_mode="reflect"),
     x_(r(2, 4, 9)), float32=True)
case("LayerNorm", "float32", lambda nn: nn.LayerNorm(4), x_(r(2, 3, 4)), float32=True)
case("GroupNorm", "float32", lambda nn: nn.GroupNorm(2, 6), x_(r(2, 6, 5)), float32=True)
case("Embedding", "float32 max_norm", lambda nn: nn.Embedding(10, 3, max_norm=0.5),
     lambda m, L: m(L.T(IDX)), float32=True)
case("EmbeddingBag", "float32 max", lambda nn: nn.EmbeddingBag(10, 3, mode="max"),
     lambda m, L: m(L.T(BAG), L.T(OFFS)), float32=True)
case("MaxPool2d", "float32 indices", lambda nn: nn.MaxPool2d(3, 2, 1, return_indices=True),
     x_(r(2, 3, 7, 6)), float32=True)
case("CrossEntropyLoss", "float32 smoothing", lambda nn: nn.CrossEntropyLoss(
    label_smoothing=0.1), _loss(LOGITS, TARGET), float32=True)

# --------------------------------------------------------------------------- more modules
def _pretrained(nn, cls, **kw):
    w = r(10, 3)
    return getattr(nn, cls).from_pretrained(torch.tensor(w) if nn is torch.nn else
                                            ember.tensor(w), **kw)


case("Embedding", "from_pretrained frozen", lambda nn: _pretrained(nn, "Embedding"),
     lambda m, L: m(L.T(IDX)))
case("Embedding", "from_pretrained max_norm", lambda nn: _pretrained(
    nn, "Embedding", max_norm=1.0, freeze=False), lambda m, L: m(L.T(IDX)))
case("EmbeddingBag", "from_pretrained", lambda nn: _pretrained(nn, "EmbeddingBag", mode="max"),
     lambda m, L: m(L.T(BAG), L.T(OFFS)))
case("EmbeddingBag", "from_pretrained trainable", lambda nn: _pretrained(
    nn, "EmbeddingBag", freeze=False, padding_idx=2), lambda m, L: m(L.T(IDX)))
case("AdaptiveLogSoftmaxWithLoss", "basic", lambda nn: nn.AdaptiveLogSoftmaxWithLoss(
    8, 12, cutoffs=[4, 8]), lambda m, L: m(L.G(r(5, 8)), L.T(ri(12, 5))))
case("AdaptiveLogSoftmaxWithLoss", "div_value head_bias", lambda nn:
     nn.AdaptiveLogSoftmaxWithLoss(8, 12, cutoffs=[3, 6, 9], div_value=2.0, head_bias=True),
     lambda m, L: (m(L.G(r(5, 8)), L.T(ri(12, 5))), m.log_prob(L.G(r(2, 8))),
                   m.predict(L.G(r(3, 8)))))
case("AdaptiveLogSoftmaxWithLoss", "unbatched", lambda nn: nn.AdaptiveLogSoftmaxWithLoss(
    8, 12, cutoffs=[4]), lambda m, L: m(L.G(r(8)), L.T(np.array(9))))
case("AdaptiveLogSoftmaxWithLoss", "bad cutoffs", lambda nn: nn.AdaptiveLogSoftmaxWithLoss(
    8, 12, cutoffs=[8, 4]))
case("AdaptiveLogSoftmaxWithLoss", "target out of range", lambda nn:
     nn.AdaptiveLogSoftmaxWithLoss(8, 12, cutoffs=[4]),
     lambda m, L: m(L.G(r(2, 8)), L.T(np.array([3, 12]))))
case("TransformerEncoderLayer", "eval float key padding", lambda nn: nn.TransformerEncoderLayer(
    **_TKW), lambda m, L: m(L.G(SRC), src_key_padding_mask=L.T(
        np.where(np.array([[False] * 5, [False] * 3 + [True] * 2]), -np.inf, 0.0))))
case("TransformerEncoderLayer", "unbatched", lambda nn: nn.TransformerEncoderLayer(**_TKW),
     x_(SRC[:, 0]))
case("TransformerDecoderLayer", "unbatched norm_first", lambda nn: nn.TransformerDecoderLayer(
    **_TKW, norm_first=True), lambda m, L: m(L.G(TGT[:, 0]), L.G(SRC[:, 0])))
case("Transformer", "src_is_causal masks", lambda nn: nn.Transformer(8, 2, 1, 1, 16, 0.0),
     lambda m, L: m(L.G(SRC), L.G(TGT), src_mask=L.T(np.triu(np.full((5, 5), -np.inf), 1)),
                    src_is_causal=True, tgt_mask=L.T(np.triu(np.full((3, 3), -np.inf), 1)),
                    tgt_is_causal=True, memory_key_padding_mask=L.T(
                        np.array([[False] * 5, [False] * 4 + [True]]))))
case("TransformerEncoder", "enable_nested_tensor eval no mask", lambda nn:
     nn.TransformerEncoder(nn.TransformerEncoderLayer(**_TKW), 1), x_(SRC))
case("RNNCell", "bad nonlinearity", lambda nn: nn.RNNCell(3, 4, nonlinearity="gelu"))
case("LSTMCell", "wrong hx shape", lambda nn: nn.LSTMCell(3, 4),
     lambda m, L: m(L.G(XS[0]), (L.G(r(3, 4)), L.G(r(2, 4)))))
case("GRUCell", "3-d input", lambda nn: nn.GRUCell(3, 4), x_(XS))

# --------------------------------------------------------------------------- inference forms
def _no_grad(run):
    """run under no_grad (torch's eval fast paths for attention and transformer layers)."""
    def wrapped(m, L):
        with L.mod.no_grad():
            return run(m, L)
    return wrapped


SRC_B = SRC.transpose(1, 0, 2)
PAD_B = np.array([[False] * 5, [False] * 3 + [True] * 2])
case("MultiheadAttention", "no_grad eval self batch_first", lambda nn: nn.MultiheadAttention(
    8, 2, batch_first=True), _no_grad(_mha(k=Q, v=Q, batch_first=True)), modes=("eval",))
case("MultiheadAttention", "no_grad eval need_weights False padding", lambda nn:
     nn.MultiheadAttention(8, 2, batch_first=True), _no_grad(lambda m, L: m(
         L.T(SRC_B), L.T(SRC_B), L.T(SRC_B), key_padding_mask=L.T(PAD_B),
         need_weights=False)), modes=("eval",))
case("TransformerEncoderLayer", "no_grad eval batch_first", lambda nn:
     nn.TransformerEncoderLayer(**_TKW, batch_first=True), _no_grad(lambda m, L: m(
         L.T(SRC_B))), modes=("eval",))
case("TransformerEncoderLayer", "no_grad eval padding", lambda nn:
     nn.TransformerEncoderLayer(**_TKW, batch_first=True), _no_grad(lambda m, L: m(
         L.T(SRC_B), src_key_padding_mask=L.T(PAD_B))), modes=("eval",))
case("TransformerEncoder", "no_grad eval padding nested", lambda nn: nn.TransformerEncoder(
    nn.TransformerEncoderLayer(**_TKW, batch_first=True), 2), _no_grad(lambda m, L: m(
        L.T(SRC_B), src_key_padding_mask=L.T(PAD_B))), modes=("eval",))
case("BatchNorm2d", "eval before training", lambda nn: nn.BatchNorm2d(3), x_(XB),
     modes=("eval", "train", "eval"))
case("InstanceNorm2d", "running stats eval first", lambda nn: nn.InstanceNorm2d(
    3, track_running_stats=True, affine=True), x_(XB), modes=("eval", "train", "eval"))

# --------------------------------------------------------------------------- bad arguments
X225 = r(1, 2, 5, 5)
for _what, _make, _run in (
        ("Conv2d stride 0", lambda nn: nn.Conv2d(2, 2, 3, stride=0), x_(X225)),
        ("Conv2d padding -1", lambda nn: nn.Conv2d(2, 2, 3, padding=-1), x_(X225)),
        ("Conv2d dilation 0", lambda nn: nn.Conv2d(2, 2, 3, dilation=0), x_(X225)),
        ("Conv2d kernel 0", lambda nn: nn.Conv2d(2, 2, 0), x_(X225)),
        ("Conv2d float channels", lambda nn: nn.Conv2d(2.0, 3, 3), None),
        ("Conv2d input dtype", lambda nn: nn.Conv2d(2, 2, 3), lambda m, L: m(L.T(X225))),
        ("ConvTranspose2d output_padding = stride", lambda nn: nn.ConvTranspose2d(
            2, 2, 3, stride=2, output_padding=2), x_(X225)),
        ("MaxPool2d stride 0", lambda nn: nn.MaxPool2d(2, stride=0), x_(X225)),
        ("AvgPool2d kernel 0", lambda nn: nn.AvgPool2d(0), x_(X225)),
        ("MaxPool1d ceil return_indices", lambda nn: nn.MaxPool1d(2, return_indices=True,
                                                                  ceil_mode=True),
         x_(r(1, 1, 5))),
        ("AdaptiveAvgPool2d negative", lambda nn: nn.AdaptiveAvgPool2d(-1), x_(X225)),
        ("Fold kernel too big", lambda nn: nn.Fold((4, 4), 5), x_(r(1, 25, 1))),
        ("PixelShuffle 0", lambda nn: nn.PixelShuffle(0), x_(r(1, 4, 2, 2))),
        ("Upsample bad mode", lambda nn: nn.Upsample(scale_factor=2, mode="cubic"), x_(X225)),
        ("ZeroPad2d negative", lambda nn: nn.ZeroPad2d(-1), x_(r(1, 1, 3, 3))),
        ("ReflectionPad1d too big", lambda nn: nn.ReflectionPad1d(3), x_(r(1, 1, 3))),
        ("Softmax dim out of range", lambda nn: nn.Softmax(3), x_(r(2, 2))),
        ("GLU dim out of range", lambda nn: nn.GLU(3), x_(r(2, 4))),
        ("Flatten start after end", lambda nn: nn.Flatten(2, 1), x_(r(2, 3, 4))),
        ("Linear float features", lambda nn: nn.Linear(3.5, 2), None),
        ("Linear input dtype", lambda nn: nn.Linear(3, 4), lambda m, L: m(L.T(r(2, 3)))),
        ("Bilinear 1-d inputs", lambda nn: nn.Bilinear(3, 4, 2),
         lambda m, L: m(L.G(r(3)), L.G(r(4)))),
        ("Embedding empty index", lambda nn: nn.Embedding(5, 3),
         lambda m, L: m(L.T(np.zeros(0, dtype=np.int64)))),
        ("Embedding negative max_norm", lambda nn: nn.Embedding(5, 3, max_norm=-1.0),
         lambda m, L: m(L.T(np.array([1, 3])))),
        ("BatchNorm1d momentum 2", lambda nn: nn.BatchNorm1d(3, momentum=2.0), x_(r(4, 3))),
        ("MultiheadAttention 0 heads", lambda nn: nn.MultiheadAttention(8, 0), None),
        ("TransformerEncoderLayer nhead", lambda nn: nn.TransformerEncoderLayer(8, 3), None),
        ("LSTM negative proj_size", lambda nn: nn.LSTM(3, 4, proj_size=-1), None),
        ("GRU input_size 0", lambda nn: nn.GRU(0, 3), None),
        ("LSTM input dtype", lambda nn: nn.LSTM(3, 4),
         lambda m, L: m(L.T(XS, "float32")))):
    _f32 = "input dtype" in _what and not _what.startswith("LSTM")   # a float32 module
    case(_what.split()[0], _what, _make, _run, float32=_f32)

# --------------------------------------------------------------------------- containers
case("Sequential", "nested", lambda nn: nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Sequential(
    nn.Linear(3, 2), nn.Tanh())), x_(X34))
case("ModuleDict", "repr", lambda nn: nn.ModuleDict({"a": nn.Linear(2, 2), "b": nn.ReLU()}))
case("ModuleList", "repr repeated", lambda nn: nn.ModuleList([nn.Linear(2, 2) for _ in range(3)]))
case("ParameterList", "repr", lambda nn: nn.ParameterList([nn.Parameter(
    nn.init.zeros_(nn.Linear(2, 3).weight.data))]))


# ============================================================================ the harness
# (group, case) -> why the difference is deliberate (docs/DEVIATIONS.md, nn)
KNOWN: dict = {
    ("TransformerEncoder", "no_grad eval padding nested"):
        "there is no nested-tensor fast path (docs/DEVIATIONS.md, nn): torch's zeroes the "
        "padded positions of the output in eval under no_grad; ember computes them as in "
        "training",
    ("RNNCell", "bad nonlinearity"):
        "ember refuses an unknown nonlinearity at construction (ValueError, as nn.RNN does in "
        "both); torch's RNNCell keeps it and raises RuntimeError at the first forward",
    ("AdaptiveMaxPool2d", "0 output"):
        "torch's adaptive max pooling backward refuses an empty gradient (its forward returns "
        "the empty output); ember's backward returns the zero gradient",
    ("CrossMapLRN2d", "basic"):
        "torch's hand-written CrossMapLRN2d backward is not the derivative of its forward (its "
        "gradcheck fails); ember's is autograd's, the forward reproduced exactly",
}
for _t in ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"):
    KNOWN[(_t, "padding same")] = (
        "torch's ConvTranspose constructor keeps padding='same' and every forward then raises "
        "TypeError from the functional; ember refuses it at construction (ValueError)")

# (group, case) -> found by this sweep and not yet decided: fix the module and drop the entry,
# or move it to KNOWN with a reason. Each still diverges (checked like KNOWN).
PENDING: set = set()


def _build(mod, make):
    mod.manual_seed(0)
    try:
        return make(mod.nn), None
    except Exception as exc:
        return None, exc


# the functional op a module's errors may name instead of the class
_ALIASES = {"BCELoss": "binary_cross_entropy", "BCEWithLogitsLoss": "binary_cross_entropy",
            "KLDivLoss": "kl_div", "NLLLoss": "nll_loss", "CTCLoss": "ctc_loss",
            "Upsample": "interpolate", "Transformer": "MultiheadAttention",
            "TransformerEncoderLayer": "MultiheadAttention"}


def _names(group, exc):
    """ember's message names the module: its class name, a word of it of 3+ letters ('conv',
    'cross', 'pad'), or the functional op it calls (_ALIASES)."""
    text = str(exc).lower()
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", group).lower()
    words = [group.lower(), _ALIASES.get(group, group).lower()] + [
        w for w in (re.sub("[123]d$", "", w) for w in snake.split("_")) if len(w) >= 3]
    if any(w in text for w in words):
        return None
    return f"ember's {type(exc).__name__} does not name {group}: {str(exc)[:80]}"


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out]


def _np(t):
    return np.asarray(t.detach().numpy()) if hasattr(t, "detach") else np.asarray(t)


_F64_TOL, _F32_TOL = (1e-7, 1e-9), (2e-4, 2e-5)


def _compare_values(fe, ft, values, tag, tol=_F64_TOL):
    if len(fe) != len(ft):
        return f"{tag}: ember returns {len(fe)} values, torch {len(ft)}"
    for i, (a, b) in enumerate(zip(fe, ft)):
        if (a is None) != (b is None):
            return f"{tag}[{i}]: None in one library only"
        if a is None:
            continue
        if hasattr(b, "dtype") and str(a.dtype).split(".")[-1] != str(b.dtype).split(".")[-1]:
            return f"{tag}[{i}] dtype: ember {a.dtype}, torch {b.dtype}"
        if tuple(a.shape) != tuple(b.shape):
            return f"{tag}[{i}] shape: ember {tuple(a.shape)}, torch {tuple(b.shape)}"
        if not values:
            continue
        na, nb = _np(a), _np(b)
        same = (np.allclose(na, nb, rtol=tol[0], atol=tol[1], equal_nan=True)
                if na.dtype.kind in "fc" else np.array_equal(na, nb))
        if not same:
            worst = np.nanmax(np.abs(na - nb)) if na.size and na.dtype.kind in "fc" else "?"
            return f"{tag}[{i}] values differ (max {worst})"
    return None


def _metadata(em, tm):
    """How the two modules' repr, state_dict and parameter/buffer names differ, or None."""
    re_, rt = repr(em), repr(tm).replace("torch.", "ember.")
    if re_ != rt:
        return f"repr: ember {re_[:200]!r}, torch {rt[:200]!r}"
    sde, sdt = em.state_dict(), tm.state_dict()
    if list(sde) != list(sdt):
        return f"state_dict keys: ember {list(sde)}, torch {list(sdt)}"
    for k in sdt:
        lazy = torch.nn.parameter.is_lazy(sdt[k])
        if not lazy and tuple(sde[k].shape) != tuple(sdt[k].shape):
            return f"state_dict {k}: ember {tuple(sde[k].shape)}, torch {tuple(sdt[k].shape)}"
    for what in ("named_parameters", "named_buffers"):
        ne = [n for n, _ in getattr(em, what)()]
        nt = [n for n, _ in getattr(tm, what)()]
        if ne != nt:
            return f"{what}: ember {ne}, torch {nt}"
    return None


def _copy_state(em, tm):
    """torch's initial float64 state into ember's module (lazy parameters stay as they are)."""
    sd = {k: ember.tensor(v.detach().numpy().copy()) for k, v in tm.state_dict().items()
          if not torch.nn.parameter.is_lazy(v)}
    em.load_state_dict(sd, strict=False)


def _forward(mod, m, run, float32):
    L = Lib(mod, np.float32 if float32 else np.float64)
    mod.manual_seed(0)
    _RNG[0] = np.random.default_rng(35)
    try:
        with np.errstate(all="ignore"):
            out = run(m, L)
    except Exception as exc:
        return L, None, exc
    return L, out, None


def _grad_difference(Le, Lt, fe, ft, tol):
    """How the gradients of the outputs that require grad differ, or None."""
    try:
        ge = weighted_grads(Le, [o for o in fe if getattr(o, "requires_grad", False)])
        gt = weighted_grads(Lt, [o for o in ft if getattr(o, "requires_grad", False)])
    except Exception as exc:
        return f"gradient raises {type(exc).__name__}: {str(exc)[:80]}"
    if (ge is None) != (gt is None):
        return "one library has no gradient"
    for i, (a, b) in enumerate(zip(ge or [], gt or [])):
        if (a is None) != (b is None):
            return f"gradient {i} is None in one library only"
        if a is not None and (a.shape != b.shape or not np.allclose(
                a, b, rtol=tol[0] * 10, atol=tol[1] * 10, equal_nan=True)):
            worst = np.nanmax(np.abs(a - b)) if a.shape == b.shape and a.size else "?"
            return f"gradient {i} differs (max {worst})"
    return None


def _divergence(group, spec):
    make, run, modes, values, float32 = spec
    em, ee = _build(ember, make)
    tm, et = _build(torch, make)
    if ee is not None or et is not None:
        return error_difference(ee, et) or _names(group, ee)
    found = _metadata(em, tm)
    if found or run is None:
        return found
    if not float32:
        tm.double()
        em.double()
    _copy_state(em, tm)
    tol = _F32_TOL if float32 else _F64_TOL
    for mode in modes:
        em.train(mode == "train")
        tm.train(mode == "train")
        flags = ([s.training for s in em.modules()], [s.training for s in tm.modules()])
        if flags[0] != flags[1]:
            return f"{mode}: submodules' training flags ember {flags[0]}, torch {flags[1]}"
        Le, oe, ee = _forward(ember, em, run, float32)
        Lt, ot, et = _forward(torch, tm, run, float32)
        if ee is not None or et is not None:
            return error_difference(ee, et) or _names(group, ee)
        keep = values or mode == "eval"
        fe, ft = _flat(oe), _flat(ot)
        found = _compare_values(fe, ft, keep, f"{mode} output", tol)
        if found:
            return found
        if not keep:
            continue
        # the whole state after the forward: running statistics, and weights a forward writes
        # (Embedding's max_norm renormalises the rows it looks up)
        found = _compare_values(list(em.state_dict().values()), list(tm.state_dict().values()),
                                True, f"{mode} state_dict after forward", tol)
        if found:
            return found
        Le.leaves += [p for p in em.parameters() if p.requires_grad]
        Lt.leaves += [p for p in tm.parameters() if p.requires_grad]
        found = _grad_difference(Le, Lt, fe, ft, tol)
        if found:
            return f"{mode}: {found}"
    return None


@pytest.mark.parametrize("group,what,spec", CASES, ids=[f"{g}-{w}" for g, w, _ in CASES])
def test_module_against_torch(group, what, spec):
    found = _divergence(group, spec)
    if (group, what) in KNOWN or (group, what) in PENDING:
        assert found is not None, f"nn.{group} ({what}) agrees with torch now: drop it"
        return
    assert found is None, f"nn.{group} ({what}): {found}"
