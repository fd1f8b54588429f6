"""Convolution: functional conv1d/conv2d/conv_transpose, the Conv* modules, errors, gradcheck."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.nn import functional as F
from ember.nn.modules.conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d


def _torch():
    return pytest.importorskip("torch", reason="torch oracle not installed")


def _pair(arrays):
    """The same float64 inputs as ember and torch leaves that require grad."""
    torch = _torch()
    ours = [None if a is None else ember.tensor(a, requires_grad=True) for a in arrays]
    ref = [None if a is None else torch.tensor(a, requires_grad=True) for a in arrays]
    return ours, ref


def _compare(rng, ours_fn, ref_fn, arrays, tol=1e-10):
    """Forward and every input gradient of ours_fn vs ref_fn on identical float64 inputs."""
    torch = _torch()
    ours, ref = _pair(arrays)
    y, ty = ours_fn(*ours), ref_fn(*ref)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=tol, atol=tol)
    g = rng.standard_normal(tuple(ty.shape))
    y.backward(ember.tensor(g))
    ty.backward(torch.tensor(g))
    for o, r in zip(ours, ref):
        if o is not None:
            np.testing.assert_allclose(o.grad.numpy(), r.grad.numpy(), rtol=tol, atol=tol)


CONV2D_CASES = [
    dict(),
    dict(stride=2, padding=1),
    dict(stride=(2, 1), padding=(0, 2), dilation=(2, 1)),
    dict(padding="same", dilation=2),
    dict(padding="valid"),
    dict(groups=2, padding=1),
    dict(groups=4, stride=2, padding=1),  # depthwise, channel multiplier 2
]


@pytest.mark.parity
@pytest.mark.parametrize("kw", CONV2D_CASES)
def test_conv2d_matches_torch(rng, kw):
    torch = _torch()
    groups = kw.get("groups", 1)
    x = rng.standard_normal((2, 4, 9, 8))
    w = rng.standard_normal((8, 4 // groups, 3, 2 if kw.get("padding") != "same" else 4))
    b = rng.standard_normal(8)
    _compare(rng, lambda x, w, b: F.conv2d(x, w, b, **kw),
             lambda x, w, b: torch.nn.functional.conv2d(x, w, b, **kw), [x, w, b])


@pytest.mark.parity
@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("kw", [dict(), dict(stride=2, padding=2, dilation=2, groups=2),
                                dict(padding="same")])
def test_conv1d_matches_torch(rng, kw):
    torch = _torch()
    x = rng.standard_normal((2, 4, 11))
    w = rng.standard_normal((6, 4 // kw.get("groups", 1), 4))
    _compare(rng, lambda x, w: F.conv1d(x, w, **kw),
             lambda x, w: torch.nn.functional.conv1d(x, w, **kw), [x, w])


@pytest.mark.parity
@pytest.mark.parametrize("kw", [dict(), dict(stride=2, padding=1, output_padding=1),
                                dict(stride=(2, 3), output_padding=(1, 2), groups=2),
                                dict(dilation=2, stride=2, output_padding=1)])
def test_conv_transpose2d_matches_torch(rng, kw):
    torch = _torch()
    g = kw.get("groups", 1)
    x, w, b = rng.standard_normal((2, 4, 5, 6)), rng.standard_normal((4, 6 // g, 3, 3)), \
        rng.standard_normal(6)
    _compare(rng, lambda x, w, b: F.conv_transpose2d(x, w, b, **kw),
             lambda x, w, b: torch.nn.functional.conv_transpose2d(x, w, b, **kw), [x, w, b])


@pytest.mark.parity
def test_conv_transpose1d_matches_torch(rng):
    torch = _torch()
    kw = dict(stride=3, padding=1, output_padding=2, groups=2, dilation=1)
    x, w = rng.standard_normal((2, 4, 7)), rng.standard_normal((4, 3, 3))
    _compare(rng, lambda x, w: F.conv_transpose1d(x, w, **kw),
             lambda x, w: torch.nn.functional.conv_transpose1d(x, w, **kw), [x, w])


def test_conv2d_unbatched_and_noncontiguous_input(rng):
    w = ember.tensor(rng.standard_normal((3, 2, 3, 3)))
    x = ember.tensor(rng.standard_normal((2, 6, 7)))
    batched = F.conv2d(x.unsqueeze(0), w, padding=1)
    np.testing.assert_allclose(F.conv2d(x, w, padding=1).numpy(), batched[0].numpy())
    xt = ember.tensor(rng.standard_normal((1, 2, 7, 6))).transpose(2, 3)  # strided view
    ref = F.conv2d(xt.contiguous(), w)
    np.testing.assert_allclose(F.conv2d(xt, w).numpy(), ref.numpy(), rtol=1e-12)


def test_conv2d_float32_output_dtype_and_batch_one(rng):
    x = ember.tensor(rng.standard_normal((1, 3, 5, 5)).astype(np.float32))
    w = ember.tensor(rng.standard_normal((2, 3, 3, 3)).astype(np.float32))
    y = F.conv2d(x, w)
    assert y.dtype == ember.float32 and tuple(y.shape) == (1, 2, 3, 3)
    ref = F.conv2d(x.double(), w.double())
    np.testing.assert_allclose(y.numpy(), ref.numpy(), rtol=1e-4, atol=1e-5)


def test_conv2d_gradcheck_and_double_backward(rng):
    x = ember.tensor(rng.standard_normal((1, 2, 4, 5)), requires_grad=True)
    w = ember.tensor(rng.standard_normal((2, 1, 2, 3)), requires_grad=True)
    b = ember.tensor(rng.standard_normal(2), requires_grad=True)

    def fn(x, w, b):
        return F.conv2d(x, w, b, stride=(1, 2), padding=1, dilation=(2, 1), groups=2)

    assert gradcheck(fn, (x, w, b))
    assert gradgradcheck(fn, (x, w, b))


@pytest.mark.parametrize("c, mult, hw, stride", [
    (16, 1, (4, 3), 2),   # channels-last depthwise kernels (>= 16 channels, small map)
    (16, 1, (3, 3), 1),
    (3, 2, (9, 10), 2),   # planar, strided: backward on the stride-1 grid, multiplier 2
])
def test_depthwise_conv2d_gradcheck_and_double_backward(rng, c, mult, hw, stride):
    x = ember.tensor(rng.standard_normal((2, c) + hw), requires_grad=True)
    w = ember.tensor(rng.standard_normal((c * mult, 1, 3, 3)), requires_grad=True)

    def fn(x, w):
        return F.conv2d(x, w, None, stride=stride, padding=1, groups=c)

    assert gradcheck(fn, (x, w))
    assert gradgradcheck(fn, (x, w))


def test_conv_transpose2d_gradcheck_and_double_backward(rng):
    x = ember.tensor(rng.standard_normal((1, 2, 3, 3)), requires_grad=True)
    w = ember.tensor(rng.standard_normal((2, 2, 2, 2)), requires_grad=True)

    def fn(x, w):
        return F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1)

    assert gradcheck(fn, (x, w))
    assert gradgradcheck(fn, (x, w))


def test_conv1d_gradcheck(rng):
    x = ember.tensor(rng.standard_normal((2, 2, 6)), requires_grad=True)
    w = ember.tensor(rng.standard_normal((3, 2, 3)), requires_grad=True)
    assert gradcheck(lambda x, w: F.conv1d(x, w, padding="same", dilation=2), (x, w))


# ---------------------------------------------------------------------------------------------
# modules


def _copy_params(ours, ref):
    for name, p in ref.named_parameters():
        getattr(ours, name)._data[...] = p.detach().numpy()


@pytest.mark.parity
@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("cls_name,args,kw,shape", [
    ("Conv2d", (4, 6, 3), dict(stride=2, padding=1, bias=False), (2, 4, 8, 8)),
    ("Conv2d", (4, 4, 3), dict(groups=4, padding="same"), (2, 4, 7, 7)),
    ("Conv2d", (4, 6, (3, 2)), dict(padding=(1, 2), padding_mode="reflect"), (2, 4, 6, 7)),
    ("Conv2d", (4, 6, 4), dict(padding="same", padding_mode="circular"), (2, 4, 6, 7)),
    ("Conv2d", (4, 6, 3), dict(padding=1, padding_mode="replicate"), (4, 6, 7)),
    ("Conv1d", (4, 6, 3), dict(padding=2, dilation=2, padding_mode="reflect"), (2, 4, 9)),
    ("ConvTranspose2d", (4, 6, 3), dict(stride=2, padding=1, output_padding=1), (2, 4, 5, 5)),
    ("ConvTranspose1d", (4, 6, 3), dict(stride=2, groups=2), (2, 4, 5)),
])
def test_conv_modules_match_torch(rng, cls_name, args, kw, shape):
    torch = _torch()
    ref = getattr(torch.nn, cls_name)(*args, **kw).double()
    ours = {"Conv1d": Conv1d, "Conv2d": Conv2d, "ConvTranspose1d": ConvTranspose1d,
            "ConvTranspose2d": ConvTranspose2d}[cls_name](*args, **kw, dtype=ember.float64)
    _copy_params(ours, ref)
    assert repr(ours) == repr(ref)
    x = rng.standard_normal(shape)
    _compare(rng, ours, ref, [x])
    for name, p in ref.named_parameters():
        np.testing.assert_allclose(getattr(ours, name).grad.numpy(), p.grad.numpy(),
                                   rtol=1e-10, atol=1e-10)


@pytest.mark.parity
def test_conv_transpose2d_output_size_argument(rng):
    torch = _torch()
    ref = torch.nn.ConvTranspose2d(3, 2, 3, stride=2).double()
    ours = ConvTranspose2d(3, 2, 3, stride=2, dtype=ember.float64)
    _copy_params(ours, ref)
    x = rng.standard_normal((1, 3, 4, 4))
    y = ours(ember.tensor(x), output_size=(10, 9))
    ty = ref(torch.tensor(x), output_size=(10, 9))
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="valid sizes range"):
        ours(ember.tensor(x), output_size=(12, 9))


def test_conv_default_init_follows_pytorch_bounds():
    conv = Conv2d(8, 16, 3)
    bound = 1 / np.sqrt(8 * 9)  # kaiming_uniform_(a=sqrt(5)) == U(+-1/sqrt(fan_in))
    w, b = conv.weight.detach().numpy(), conv.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert np.abs(b).max() <= bound
    assert abs(w.std() - bound / np.sqrt(3)) < 0.1 * bound  # uniform, not normal
    t = ConvTranspose2d(8, 4, 3, groups=2)
    assert tuple(t.weight.shape) == (8, 2, 3, 3)
    assert np.abs(t.weight.detach().numpy()).max() <= 1 / np.sqrt(2 * 9)


def test_conv_module_state_dict_keys_and_backward():
    conv = Conv2d(3, 4, 3, bias=True)
    assert list(conv.state_dict()) == ["weight", "bias"]
    conv(ember.randn(2, 3, 5, 5)).sum().backward()
    assert conv.weight.grad.shape == conv.weight.shape
    assert conv.bias.grad.shape == (4,)


# ---------------------------------------------------------------------------------------------
# errors


def test_conv2d_wrong_rank_names_module_and_expected_shape():
    conv = Conv2d(3, 4, 3)
    with pytest.raises(RuntimeError, match=r"Conv2d: expected 4-D .*\(N, C, H, W\).*3-D unbatched"):
        conv(ember.randn(5, 5))
    with pytest.raises(RuntimeError, match=r"Conv2d: expected 4-D"):
        conv(ember.randn(1, 1, 3, 5, 5))


def test_conv2d_batch_of_grayscale_as_3d_input_explains_unbatched_reading():
    conv = Conv2d(1, 4, 3)
    with pytest.raises(RuntimeError, match=r"Conv2d: .*to have 1 channels, but got 8 "
                                           r"channels.*unbatched \(C, H, W\).*4-D \(N, C, H, W\)"):
        conv(ember.randn(8, 28, 28))


def test_conv_wrong_channel_count_names_expected_and_got():
    with pytest.raises(RuntimeError, match=r"Conv1d: .*expected input\[2, 5, 8\] to have 4 "
                                           r"channels, but got 5 channels"):
        Conv1d(4, 2, 3)(ember.randn(2, 5, 8))
    with pytest.raises(RuntimeError, match=r"conv_transpose2d: .*to have 3 channels, but got 2"):
        F.conv_transpose2d(ember.randn(1, 2, 4, 4), ember.randn(3, 2, 3, 3))


def test_conv_argument_errors():
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="padding='same' is not supported for strided"):
        Conv2d(3, 4, 3, stride=2, padding="same")  # the module's check, as torch's
    with pytest.raises(RuntimeError, match="padding='same' is not supported for strided"):
        F.conv2d(ember.randn(1, 3, 5, 5), ember.randn(4, 3, 3, 3), stride=2, padding="same")
    with pytest.raises(ValueError, match="padding_mode"):
        Conv2d(3, 4, 3, padding_mode="mirror")
    with pytest.raises(RuntimeError, match="Kernel size can't be greater than actual input"):
        F.conv2d(ember.randn(1, 1, 2, 2), ember.randn(1, 1, 3, 3))
    with pytest.raises(RuntimeError, match="should be the same"):
        F.conv2d(ember.randn(1, 1, 4, 4), ember.randn(1, 1, 3, 3).double())
    with pytest.raises(RuntimeError, match="output padding must be smaller"):
        F.conv_transpose2d(ember.randn(1, 1, 4, 4), ember.randn(1, 1, 3, 3), output_padding=1)
    with pytest.raises(RuntimeError, match="floating.point"):
        F.conv2d(ember.ones(1, 1, 4, 4, dtype=ember.int64),
                 ember.ones(1, 1, 3, 3, dtype=ember.int64))


def test_conv2d_empty_batch():
    y = F.conv2d(ember.randn(0, 3, 5, 5), ember.randn(2, 3, 3, 3))
    assert tuple(y.shape) == (0, 2, 3, 3)


@pytest.mark.parametrize("groups, shape", [(1, (2, 4, 9, 9)), (8, (2, 8, 6, 6)), (2, (3, 4, 7, 5))])
def test_conv_backward_direct_kernels_equal_the_graph_building_path(groups, shape):
    # without create_graph Conv2d's backward calls the kernels directly; with it, it builds
    # ConvTranspose2d / ConvWeight nodes. Both must give the same gradients.
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.standard_normal(shape), requires_grad=True)
    conv = ember.nn.Conv2d(shape[1], 8, 3, stride=2, padding=1, groups=groups,
                           dtype=ember.float64)
    g = ember.tensor(rng.standard_normal(tuple(conv(x).shape)))
    direct = ember.autograd.grad(conv(x), (x, conv.weight, conv.bias), g)
    graph = ember.autograd.grad(conv(x), (x, conv.weight, conv.bias), g, create_graph=True)
    for a, b in zip(direct, graph):
        assert b.grad_fn is not None or not b.requires_grad
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-12)
