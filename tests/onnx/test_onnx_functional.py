"""ONNX translations of nn.functional calls and the modules traced into them (activations,
group/instance/batch norms, convolution and pooling functions, interpolate, pad, one_hot,
distances, losses), each compared with onnxruntime."""
from __future__ import annotations

import io

import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F

onnx = pytest.importorskip("onnx", reason="ember.onnx.export needs the optional onnx package")
ort = pytest.importorskip("onnxruntime", reason="onnxruntime runs the exported models")

from onnx_roundtrip import check_roundtrip as _check  # noqa: E402  (after the importorskips)

_ACTS = ["hardswish", "hardsigmoid", "mish", "selu", "celu", "softsign", "tanhshrink",
         "softshrink", "hardshrink", "logsigmoid", "silu", "gelu", "elu", "relu6"]


@pytest.mark.parametrize("name", _ACTS)
def test_activation_function(name):
    x = ember.randn(2, 3, 5) * 3
    _check(lambda x: getattr(F, name)(x), (x,))


def test_activation_functions_with_arguments():
    x = ember.randn(2, 4, 5) * 3
    _check(lambda x: F.threshold(x, 0.5, -1.0) + F.celu(x, alpha=0.5) +
           F.softshrink(x, 1.0) + F.hardshrink(x, lambd=2.0), (x,))
    _check(lambda x: F.glu(x, dim=1) + F.softmin(x, dim=-1)[:, :2], (x,))
    _check(lambda x: F.normalize(x, dim=-1) + F.normalize(x, p=1.0, dim=1), (x,))


@pytest.mark.parametrize("cls", [nn.Hardswish, nn.Mish, nn.SELU, nn.Softsign, nn.LogSigmoid,
                                 nn.Tanhshrink, nn.Hardsigmoid])
def test_activation_modules(cls):
    _check(nn.Sequential(cls()), (ember.randn(3, 4) * 3,), dynamic_batch=True,
           run_args=(ember.randn(5, 4),))


def test_prelu_module_per_channel():
    ember.manual_seed(0)
    m = nn.PReLU(3)
    with ember.no_grad():
        m.weight.copy_(ember.tensor([0.1, 0.2, 0.3]))
    _check(nn.Sequential(m), (ember.randn(2, 3, 4, 4),))


@pytest.mark.parametrize("make", [lambda: nn.GroupNorm(2, 4), lambda: nn.GroupNorm(4, 4,
                                                                                  affine=False),
                                  lambda: nn.InstanceNorm2d(4, affine=True),
                                  lambda: nn.InstanceNorm2d(4)])
def test_group_and_instance_norm_modules_dynamic_batch(make):
    ember.manual_seed(0)
    m = make()
    for p in m.parameters():
        with ember.no_grad():
            p.copy_(ember.randn(*p.shape))
    _check(nn.Sequential(m), (ember.randn(2, 4, 3, 5),), dynamic_batch=True,
           run_args=(ember.randn(3, 4, 3, 5),))


def test_norm_functions():
    w, b = ember.randn(4), ember.randn(4)
    rm, rv = ember.randn(4), ember.rand(4) + 0.5
    _check(lambda x: F.group_norm(x, 2, w, b, eps=1e-3), (ember.randn(2, 4, 6),))
    _check(lambda x: F.batch_norm(x, rm, rv, w, b), (ember.randn(3, 4, 5),))
    _check(lambda x: F.batch_norm(x, None, None, training=True), (ember.randn(3, 4, 5),))
    g = ember.randn(5)
    _check(lambda x: F.rms_norm(x, (5,), g), (ember.randn(3, 4, 5),))
    _check(lambda x: F.rms_norm(x, [4, 5], eps=1e-3), (ember.randn(3, 4, 5),))


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_conv_and_pool_functions(nd):
    ember.manual_seed(0)
    def conv(*a, **k):       # looked up at call time: tracing patches F's functions
        return getattr(F, f"conv{nd}d")(*a, **k)
    w = ember.randn(4, 2, *([3] * nd))
    bias = ember.randn(4)
    x = ember.randn(2, 2, *([7] * nd))
    _check(lambda x: conv(x, w, bias, stride=2, padding=1), (x,), dynamic_batch=True,
           run_args=(ember.randn(3, 2, *([7] * nd)),))
    _check(lambda x: conv(x, w, padding="same", dilation=2), (x,))
    _check(lambda x: getattr(F, f"max_pool{nd}d")(x, 3, stride=2, padding=1), (x,))
    _check(lambda x: getattr(F, f"avg_pool{nd}d")(x, 2, count_include_pad=False,
                                                  padding=1), (x,))
    _check(lambda x: getattr(F, f"adaptive_avg_pool{nd}d")(x, 1) +
           getattr(F, f"adaptive_max_pool{nd}d")(x, 1), (x,))


def test_pool_modules_traced_into_functions_and_unbatched():
    x = ember.randn(2, 3, 4, 6, 6)
    _check(nn.Sequential(nn.MaxPool3d(2), nn.AdaptiveAvgPool3d((1, None, 3))), (x,))
    _check(lambda x: F.max_pool1d(x, 2), (ember.randn(3, 8),))      # (C, L)
    _check(lambda x: F.adaptive_max_pool2d(x, (2, 3)), (ember.randn(2, 3, 4, 6),))


@pytest.mark.parametrize("kw", [dict(scale_factor=2, mode="nearest"),
                                dict(size=(5, 7), mode="nearest"),
                                dict(scale_factor=2, mode="bilinear", align_corners=False),
                                dict(size=(5, 9), mode="bilinear", align_corners=True),
                                dict(scale_factor=2, mode="bicubic", align_corners=False),
                                dict(size=(6, 6), mode="nearest-exact")])
def test_interpolate_modes_with_dynamic_batch(kw):
    x = ember.randn(2, 3, 4, 5)
    _check(lambda x: F.interpolate(x, **kw), (x,), dynamic_batch=True,
           run_args=(ember.randn(3, 3, 4, 5),), atol=1e-4)


def test_upsample_module_and_linear_1d():
    _check(nn.Sequential(nn.Upsample(scale_factor=2, mode="nearest")), (ember.randn(1, 2, 3, 3),))
    _check(lambda x: F.interpolate(x, size=9, mode="linear"), (ember.randn(2, 3, 4),))


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate"])
def test_pad_modes(mode):
    x = ember.randn(2, 3, 4, 5)
    _check(lambda x: F.pad(x, (1, 2, 2, 1), mode=mode), (x,))


def test_pad_constant_value_and_negative():
    _check(lambda x: F.pad(x, (1, -1), value=3.0), (ember.randn(2, 4),))


def test_one_hot_and_distances():
    idx = ember.tensor([[0, 3], [2, 1]])
    _check(lambda i: F.one_hot(i, 4), (idx,))
    a, b = ember.randn(3, 5), ember.randn(3, 5)
    _check(lambda a, b: F.cosine_similarity(a, b) + F.pairwise_distance(a, b), (a, b))


def test_one_hot_without_class_count_names_itself():
    with pytest.raises(ember.onnx.UnsupportedOperatorError, match=r"one_hot \(this form"):
        ember.onnx.export(lambda i: F.one_hot(i), (ember.tensor([0, 2]),), io.BytesIO())


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_losses(reduction):
    x, t = ember.randn(4, 3), ember.randn(4, 3)
    p, y = ember.rand(4, 3) * 0.9 + 0.05, ember.rand(4, 3).round()
    _check(lambda x, t: F.mse_loss(x, t, reduction=reduction) +
           F.l1_loss(x, t, reduction=reduction) +
           F.smooth_l1_loss(x, t, reduction=reduction, beta=0.5) +
           F.huber_loss(x, t, reduction=reduction, delta=0.7), (x, t))
    _check(lambda p, y: F.binary_cross_entropy(p, y, reduction=reduction), (p, y))
    _check(lambda x, y: F.binary_cross_entropy_with_logits(
        x * 10, y, reduction=reduction, pos_weight=ember.tensor([1.0, 2.0, 0.5])), (x, y))
    logits, cls = ember.randn(4, 5), ember.tensor([0, 4, -100, 2])
    _check(lambda z, c: F.cross_entropy(z, c, reduction=reduction) +
           F.nll_loss(F.log_softmax(z, 1), c, reduction=reduction), (logits, cls))
