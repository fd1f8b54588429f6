"""3-D convolution and pooling (nn/functional/_volume.py and their modules) against torch."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")
TF = torch.nn.functional
RNG = np.random.default_rng(0)


def _pair(a, grad=False):
    return ember.tensor(a, requires_grad=grad), torch.tensor(a, requires_grad=grad)


def _check(ours, ref, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(ours.detach().numpy(), ref.detach().numpy(), rtol=rtol,
                               atol=atol)


CONV = [dict(), dict(stride=2, padding=1), dict(stride=(2, 1, 2), padding=(1, 0, 1),
                                                dilation=(1, 2, 1), groups=2),
        dict(padding="same", dilation=(2, 1, 1)), dict(padding="valid")]


@pytest.mark.parity
@pytest.mark.parametrize("kw", CONV)
def test_conv3d_values_and_gradients_match_torch(kw):
    (ex, tx) = _pair(RNG.standard_normal((2, 4, 5, 6, 7)), grad=True)
    (ew, tw) = _pair(RNG.standard_normal((6, 4 // kw.get("groups", 1), 3, 2, 3)), grad=True)
    (eb, tb) = _pair(RNG.standard_normal(6), grad=True)
    ours, ref = F.conv3d(ex, ew, eb, **kw), TF.conv3d(tx, tw, tb, **kw)
    _check(ours, ref)
    g = RNG.standard_normal(tuple(ref.shape))
    ours.backward(ember.tensor(g))
    ref.backward(torch.tensor(g))
    for a, b in ((ex, tx), (ew, tw), (eb, tb)):
        _check(a.grad, b.grad)


@pytest.mark.parity
@pytest.mark.parametrize("kw", [dict(), dict(stride=2, padding=1, output_padding=1),
                                dict(stride=(2, 2, 1), padding=(1, 0, 1),
                                     output_padding=(1, 0, 0), groups=2, dilation=(1, 1, 2))])
def test_conv_transpose3d_values_and_gradients_match_torch(kw):
    (ex, tx) = _pair(RNG.standard_normal((2, 4, 3, 4, 3)), grad=True)
    (ew, tw) = _pair(RNG.standard_normal((4, 3, 3, 2, 2)), grad=True)
    ours, ref = F.conv_transpose3d(ex, ew, None, **kw), TF.conv_transpose3d(tx, tw, None, **kw)
    _check(ours, ref)
    ours.sum().backward()
    ref.sum().backward()
    _check(ex.grad, tx.grad)
    _check(ew.grad, tw.grad)


def test_conv3d_gradcheck_and_double_backward():
    x = ember.tensor(RNG.standard_normal((1, 2, 3, 4, 3)), requires_grad=True)
    w = ember.tensor(RNG.standard_normal((2, 2, 2, 2, 2)), requires_grad=True)
    assert gradcheck(lambda a, b: F.conv3d(a, b, stride=(1, 2, 1), padding=1), (x, w))
    assert gradgradcheck(lambda a, b: F.conv3d(a, b), (x, w))
    assert gradcheck(lambda a, b: F.conv_transpose3d(a, b, stride=2), (x, w))


POOL = [dict(kernel_size=2), dict(kernel_size=(3, 2, 3), stride=2, padding=1),
        dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
        dict(kernel_size=(2, 3, 3), stride=(1, 2, 2), ceil_mode=True)]


@pytest.mark.parity
@pytest.mark.parametrize("kw", POOL)
def test_max_pool3d_values_indices_and_unpool_match_torch(kw):
    (ex, tx) = _pair(RNG.standard_normal((2, 3, 5, 6, 7)), grad=True)
    ours, oi = F.max_pool3d(ex, return_indices=True, **kw)
    ref, ri = TF.max_pool3d(tx, return_indices=True, **kw)
    _check(ours, ref)
    assert oi.tolist() == ri.tolist()
    ours.sum().backward()
    ref.sum().backward()
    _check(ex.grad, tx.grad)
    if not kw.get("ceil_mode"):
        size = (5, 6, 7)
        args = (kw["kernel_size"], kw.get("stride"), kw.get("padding", 0))
        _check(F.max_unpool3d(ours, oi, *args, output_size=size),
               TF.max_unpool3d(ref, ri, *args, output_size=size))


@pytest.mark.parity
@pytest.mark.parametrize("kw", POOL)
@pytest.mark.parametrize("count_include_pad", [True, False])
def test_avg_pool3d_matches_torch(kw, count_include_pad):
    (ex, tx) = _pair(RNG.standard_normal((2, 3, 5, 6, 7)), grad=True)
    ours = F.avg_pool3d(ex, count_include_pad=count_include_pad, **kw)
    ref = TF.avg_pool3d(tx, count_include_pad=count_include_pad, **kw)
    _check(ours, ref)
    ours.sum().backward()
    ref.sum().backward()
    _check(ex.grad, tx.grad)
    _check(F.avg_pool3d(ex, 2, divisor_override=3), TF.avg_pool3d(tx, 2, divisor_override=3))


@pytest.mark.parity
@pytest.mark.parametrize("size", [(3, 4, 2), 1, (None, 2, 5)])
def test_adaptive_pools3d_match_torch(size):
    (ex, tx) = _pair(RNG.standard_normal((2, 3, 5, 6, 7)), grad=True)
    _check(F.adaptive_avg_pool3d(ex, size), TF.adaptive_avg_pool3d(tx, size))
    ours, oi = F.adaptive_max_pool3d(ex, size, return_indices=True)
    ref, ri = TF.adaptive_max_pool3d(tx, size, return_indices=True)
    _check(ours, ref)
    assert oi.tolist() == ri.tolist()


@pytest.mark.parity
def test_lp_pool3d_and_unbatched_inputs_match_torch():
    (ex, tx) = _pair(np.abs(RNG.standard_normal((3, 4, 4, 4))))
    _check(F.lp_pool3d(ex, 2.0, 2), TF.lp_pool3d(tx, 2.0, 2))
    _check(F.max_pool3d(ex, 2), TF.max_pool3d(tx, 2))
    (ew, tw) = _pair(RNG.standard_normal((2, 3, 2, 2, 2)))
    _check(F.conv3d(ex, ew), TF.conv3d(tx, tw))


@pytest.mark.parity
def test_modules_match_torch():
    x = RNG.standard_normal((2, 2, 4, 5, 5)).astype(np.float32)
    for name, args, kwargs in [("Conv3d", (2, 3, 3), dict(padding=1, padding_mode="reflect")),
                               ("ConvTranspose3d", (2, 3, 2), dict(stride=2)),
                               ("MaxPool3d", (2,), {}), ("AvgPool3d", (2,), dict(padding=1)),
                               ("AdaptiveAvgPool3d", ((2, 2, 2),), {}),
                               ("AdaptiveMaxPool3d", ((1, 2, 2),), {}),
                               ("LPPool3d", (2, 2), {})]:
        ours = getattr(ember.nn, name)(*args, **kwargs)
        ref = getattr(torch.nn, name)(*args, **kwargs)
        if list(ref.parameters()):
            ours.load_state_dict({k: ember.tensor(v.detach().numpy())
                                  for k, v in ref.state_dict().items()})
        xin = np.abs(x) if name == "LPPool3d" else x
        _check(ours(ember.tensor(xin)), ref(torch.tensor(xin)), rtol=2e-5, atol=1e-6)
    assert ember.nn.modules.conv.Conv3d is ember.nn.Conv3d
    assert ember.nn.modules.pooling.MaxUnpool3d is ember.nn.MaxUnpool3d


def test_errors_name_the_op():
    with pytest.raises(RuntimeError, match="conv3d: expected a 5-D weight"):
        F.conv3d(ember.ones(1, 2, 3, 3, 3), ember.ones(2, 2, 3, 3))
    with pytest.raises(RuntimeError, match="Kernel size can't be greater"):
        F.conv3d(ember.ones(1, 1, 2, 3, 3), ember.ones(1, 1, 3, 3, 3))
    with pytest.raises(RuntimeError, match="max_pool3d: Expected 4D or 5D"):
        F.max_pool3d(ember.ones(3, 3), 2)
    with pytest.raises(RuntimeError, match="pad should be at most half"):
        F.avg_pool3d(ember.ones(1, 1, 4, 4, 4), 2, padding=2)
