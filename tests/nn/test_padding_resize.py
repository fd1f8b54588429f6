"""F.pad and padding layers, F.interpolate and Upsample, pixel / channel shuffle."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.nn import functional as F
from ember.nn.modules import padding as P
from ember.nn.modules import pixelshuffle as PS
from ember.nn.modules import upsampling as U


def _torch():
    return pytest.importorskip("torch", reason="torch oracle not installed")


def _compare(rng, ours_fn, ref_fn, x, tol=1e-12):
    torch = _torch()
    ours, ref = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    y, ty = ours_fn(ours), ref_fn(ref)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=tol, atol=tol)
    g = rng.standard_normal(tuple(ty.shape))
    y.backward(ember.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(ours.grad.numpy(), ref.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parity
@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("pads", [(1, 2), (2, 1, 0, 3), (1, 2, -1, 3), (-2, 1, 1, -1)])
def test_pad_modes_match_torch(rng, mode, pads):
    torch = _torch()
    x = rng.standard_normal((2, 3, 5, 6)[2 - len(pads) // 2:])  # (N, C, *padded dims)
    _compare(rng, lambda t: F.pad(t, pads, mode=mode),
             lambda t: torch.nn.functional.pad(t, pads, mode=mode), x)


@pytest.mark.parity
def test_pad_constant_any_dims_value_and_3d_modes(rng):
    torch = _torch()
    x = rng.standard_normal((2, 3, 4, 5))
    pads = (1, 0, 2, 1, 0, 2, 1, 1)  # all four dims
    _compare(rng, lambda t: F.pad(t, pads, value=2.5),
             lambda t: torch.nn.functional.pad(t, pads, value=2.5), x)
    x5 = rng.standard_normal((1, 2, 3, 4, 4))
    for mode in ("reflect", "replicate", "circular"):
        _compare(rng, lambda t, mode=mode: F.pad(t, (1, 1, 2, 0, 1, 2), mode=mode),
                 lambda t, mode=mode: torch.nn.functional.pad(t, (1, 1, 2, 0, 1, 2), mode=mode),
                 x5)


def test_pad_integer_input_and_gradcheck(rng):
    xi = ember.tensor([[1, 2, 3]])
    np.testing.assert_array_equal(F.pad(xi, (1, 1), value=7).numpy(), [[7, 1, 2, 3, 7]])
    x = ember.tensor(rng.standard_normal((1, 2, 3, 4)), requires_grad=True)
    for mode in ("constant", "reflect", "replicate", "circular"):
        assert gradcheck(lambda t, mode=mode: F.pad(t, (2, 1, 1, -1), mode=mode), (x,))
    assert gradgradcheck(lambda t: F.pad(t, (1, 2, 1, 1), mode="reflect"), (x,))


def test_pad_errors():
    x = ember.randn(1, 2, 3)
    with pytest.raises(RuntimeError, match="divisible by 2"):  # torch 2.13: RuntimeError
        F.pad(x, (1, 2, 3))
    with pytest.raises(RuntimeError, match="too large for a 3-D input"):
        F.pad(x, (1,) * 8)
    with pytest.raises(RuntimeError, match="Padding size should be less than"):
        F.pad(x, (3, 3), mode="reflect")
    with pytest.raises(NotImplementedError, match="padding mode"):
        F.pad(x, (1, 1), mode="mirror")
    with pytest.raises(NotImplementedError, match="needs a 2-D .* or 3-D"):
        F.pad(ember.randn(1, 2, 3, 4), (1, 1), mode="replicate")
    with pytest.raises(RuntimeError, match="negative output size"):
        F.pad(x, (-2, -2))


@pytest.mark.parity
@pytest.mark.parametrize("name,args,shape", [
    ("ZeroPad2d", ((1, 2, 0, 1),), (2, 3, 4, 4)), ("ZeroPad1d", (2,), (2, 3)),
    ("ConstantPad1d", ((1, 2), 3.5), (2, 3, 4)), ("ConstantPad2d", (1, -1.0), (2, 3, 4)),
    ("ConstantPad3d", (1, 0.5), (1, 2, 2, 3, 3)),
    ("ReflectionPad1d", ((2, 1),), (2, 3, 4)), ("ReflectionPad2d", (1,), (2, 3, 4, 4)),
    ("ReplicationPad1d", (2,), (2, 3, 4)), ("ReplicationPad2d", ((1, 0, 2, 1),), (3, 4, 4)),
    ("CircularPad1d", (2,), (2, 3, 4)), ("CircularPad2d", ((1, 0, 2, 1),), (2, 3, 4, 4)),
])
def test_padding_modules_match_torch(rng, name, args, shape):
    torch = _torch()
    ours, ref = getattr(P, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(ours) == repr(ref)
    _compare(rng, ours, ref, rng.standard_normal(shape))


INTERP = [
    dict(size=(13, 5), mode="nearest"), dict(scale_factor=(1.7, 0.6), mode="nearest"),
    dict(scale_factor=2, mode="nearest"), dict(size=(7, 11), mode="nearest-exact"),
    dict(size=(13, 5), mode="bilinear"), dict(size=(13, 5), mode="bilinear", align_corners=True),
    dict(scale_factor=(1.7, 0.6), mode="bilinear"),
    dict(scale_factor=1.5, mode="bilinear", recompute_scale_factor=True),
    dict(size=(11, 6), mode="bicubic"), dict(scale_factor=2, mode="bicubic", align_corners=True),
    dict(size=(4, 3), mode="area"),
]


@pytest.mark.parity
@pytest.mark.parametrize("kw", INTERP)
def test_interpolate_2d_matches_torch(rng, kw):
    torch = _torch()
    x = rng.standard_normal((2, 3, 9, 8))
    _compare(rng, lambda t: F.interpolate(t, **kw),
             lambda t: torch.nn.functional.interpolate(t, **kw), x)


@pytest.mark.parity
@pytest.mark.parametrize("kw,shape", [
    (dict(scale_factor=2.5, mode="linear"), (2, 3, 7)),
    (dict(size=4, mode="linear", align_corners=True), (2, 3, 7)),
    (dict(size=10, mode="nearest"), (2, 3, 7)),
    (dict(size=3, mode="area"), (2, 3, 7)),
    (dict(size=(3, 4, 5), mode="trilinear"), (1, 2, 2, 3, 4)),
    (dict(scale_factor=2, mode="nearest"), (1, 2, 2, 3, 4)),
])
def test_interpolate_1d_3d_match_torch(rng, kw, shape):
    torch = _torch()
    _compare(rng, lambda t: F.interpolate(t, **kw),
             lambda t: torch.nn.functional.interpolate(t, **kw), rng.standard_normal(shape))


def test_interpolate_gradcheck(rng):
    x = ember.tensor(rng.standard_normal((1, 1, 3, 4)), requires_grad=True)
    assert gradcheck(lambda t: F.interpolate(t, size=(5, 3), mode="bilinear"), (x,))
    assert gradcheck(lambda t: F.interpolate(t, scale_factor=2, mode="bicubic",
                                             align_corners=True), (x,))
    assert gradcheck(lambda t: F.interpolate(t, size=(5, 7), mode="nearest"), (x,))
    assert gradgradcheck(lambda t: F.interpolate(t, size=(4, 6), mode="bilinear",
                                                 align_corners=True), (x,))


def test_interpolate_errors():
    x = ember.randn(1, 1, 4, 4)
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        F.interpolate(x, size=2, scale_factor=2)
    with pytest.raises(ValueError, match="either size or scale_factor"):
        F.interpolate(x)
    with pytest.raises(ValueError, match="align_corners option can only be set"):
        F.interpolate(x, scale_factor=2, align_corners=True)
    with pytest.raises(NotImplementedError, match="needs a 3-D input"):
        F.interpolate(x, scale_factor=2, mode="linear")
    with pytest.raises(ValueError, match="same number of spatial dimensions"):
        F.interpolate(x, size=(2, 2, 2))


@pytest.mark.parity
@pytest.mark.parametrize("name,kw", [
    ("Upsample", dict(scale_factor=2, mode="bilinear", align_corners=False)),
    ("Upsample", dict(size=(5, 7), mode="nearest")),
    ("UpsamplingNearest2d", dict(scale_factor=3)),
    ("UpsamplingBilinear2d", dict(size=(6, 5))),
])
def test_upsample_modules_match_torch(rng, name, kw):
    torch = _torch()
    ours, ref = getattr(U, name)(**kw), getattr(torch.nn, name)(**kw)
    assert repr(ours) == repr(ref)
    _compare(rng, ours, ref, rng.standard_normal((2, 3, 4, 4)))


@pytest.mark.parity
def test_pixel_and_channel_shuffle_match_torch(rng):
    torch = _torch()
    x = rng.standard_normal((2, 18, 3, 4))
    _compare(rng, PS.PixelShuffle(3), torch.nn.PixelShuffle(3), x)
    _compare(rng, PS.PixelUnshuffle(2), torch.nn.PixelUnshuffle(2),
             rng.standard_normal((2, 3, 4, 6)))
    _compare(rng, ember.nn.ChannelShuffle(3), torch.nn.ChannelShuffle(3), x)
    _compare(rng, lambda t: F.pixel_shuffle(t, 2),
             lambda t: torch.nn.functional.pixel_shuffle(t, 2), rng.standard_normal((5, 8, 2, 2)))
    for name in ("PixelShuffle", "PixelUnshuffle", "ChannelShuffle"):
        assert repr(getattr(ember.nn, name)(2)) == repr(getattr(torch.nn, name)(2))


def test_pixel_shuffle_errors():
    with pytest.raises(RuntimeError, match=r"divisible by the square of upscale_factor"):
        F.pixel_shuffle(ember.randn(1, 5, 2, 2), 2)
    with pytest.raises(RuntimeError, match="at least 3 dimensions"):
        F.pixel_unshuffle(ember.randn(4, 4), 2)
    with pytest.raises(RuntimeError, match="divisible by groups"):
        F.channel_shuffle(ember.randn(1, 5, 2, 2), 2)
