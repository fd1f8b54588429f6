"""stride/padding/dilation given as sequences of the wrong or a single length.

A conv layer keeps whatever sequence it is given, as torch does (`Conv1d(2, 3, 3, padding=(1, 2))`
is built), and the call refuses a wrong length with the kernel's RuntimeError.

torch keeps a one-element sequence given to a conv layer as is (`Conv2d(3, 4, 3, stride=[2])
.stride == (2,)`) and its kernels read one value as every dim's; EfficientNet-PyTorch builds
its convs this way and reads `len(self.stride)`. A sequence of ints of another length is a
RuntimeError from torch's kernels (conv, pooling, unfold), not a TypeError: the argument parser
only checks the type."""
from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn


@pytest.mark.parametrize("cls, nd", [(nn.Conv1d, 1), (nn.Conv2d, 2), (nn.Conv3d, 3)])
def test_conv_one_element_sequences_apply_to_every_dim(cls, nd):
    ember.manual_seed(0)
    ours = cls(2, 3, 3, stride=[2], padding=[1], dilation=[1])
    ref = cls(2, 3, 3, stride=2, padding=1, dilation=1)
    ref.load_state_dict(ours.state_dict())
    assert (ours.stride, ours.padding, ours.dilation) == ((2,), (1,), (1,))
    x = ember.randn(1, 2, *([7] * nd))
    np.testing.assert_allclose(ours(x).detach().numpy(), ref(x).detach().numpy(), rtol=1e-6)


def test_conv_transpose_one_element_sequences_and_output_size():
    ember.manual_seed(0)
    ours = nn.ConvTranspose2d(2, 3, 3, stride=[2], padding=[1], output_padding=[1])
    ref = nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1, output_padding=1)
    ref.load_state_dict(ours.state_dict())
    x = ember.randn(1, 2, 5, 5)
    np.testing.assert_allclose(ours(x).detach().numpy(), ref(x).detach().numpy(), rtol=1e-6)
    assert ours(x, output_size=(9, 9)).shape == (1, 3, 9, 9)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_conv_one_element_padding_with_padding_mode_pads_the_last_dim(mode):
    # torch: the explicit F.pad gets the one-element padding reversed and repeated twice, two
    # amounts: the last dim of an unbatched input, and a refusal for a batched one
    ember.manual_seed(0)
    ours = nn.Conv2d(2, 3, 3, padding=(1,), padding_mode=mode)
    assert ours._reversed_padding_repeated_twice == [1, 1]
    assert ours(ember.randn(2, 6, 6)).shape == (3, 4, 6)
    with pytest.raises(NotImplementedError, match="pad"):
        ours(ember.randn(1, 2, 6, 6))
    assert nn.Conv1d(2, 3, 3, padding=[1], padding_mode=mode)(ember.randn(1, 2, 6)).shape == \
        (1, 3, 6)


@pytest.mark.parity
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
def test_conv_one_element_padding_modes_match_torch(nd, mode):
    torch = pytest.importorskip("torch")
    cls = f"Conv{nd}d"
    ours = getattr(nn, cls)(2, 3, 3, padding=[1], padding_mode=mode)
    theirs = getattr(torch.nn, cls)(2, 3, 3, padding=[1], padding_mode=mode)
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    rng = np.random.default_rng(0)
    for shape in ((2,) + (5,) * nd, (1, 2) + (5,) * nd):
        x = rng.standard_normal(shape).astype(np.float32)
        try:
            want = theirs(torch.tensor(x)).detach().numpy()
        except NotImplementedError:
            with pytest.raises(NotImplementedError):
                ours(ember.tensor(x))
            continue
        np.testing.assert_allclose(ours(ember.tensor(x)).detach().numpy(), want, rtol=1e-5,
                                   atol=1e-6)


@pytest.mark.parametrize("make, shape, arg", [
    (lambda: nn.Conv1d(2, 3, 3, padding=(1, 2)), (1, 2, 8), "padding"),
    (lambda: nn.Conv1d(2, 3, 3, stride=[1, 2]), (1, 2, 8), "stride"),
    (lambda: nn.Conv1d(2, 3, 3, dilation=(1, 1)), (2, 8), "dilation"),
    (lambda: nn.Conv1d(2, 3, 3, padding=()), (1, 2, 8), "padding"),
    (lambda: nn.Conv2d(2, 3, 3, padding=(1, 2, 3)), (1, 2, 8, 8), "padding"),
    (lambda: nn.Conv3d(2, 3, 3, stride=(1, 2)), (1, 2, 6, 6, 6), "stride"),
    (lambda: nn.ConvTranspose1d(2, 3, 3, padding=(1, 2)), (1, 2, 8), "padding"),
    (lambda: nn.ConvTranspose2d(2, 3, 3, output_padding=(0, 0, 0)), (1, 2, 5, 5),
     "output_padding"),
    (lambda: nn.ConvTranspose3d(2, 3, 3, dilation=[1, 1]), (1, 2, 4, 4, 4), "dilation"),
])
def test_conv_layer_with_wrong_length_sequence_builds_and_refuses_at_forward(make, shape, arg):
    # torch keeps any sequence at construction; its kernel checks the length at the call
    layer = make()
    nd = len(layer.kernel_size)
    assert len(getattr(layer, arg)) != nd
    with pytest.raises(RuntimeError, match=rf"expected {arg} to be a single integer value or a "
                       rf"list of {nd} values to match the convolution dimensions, but got "
                       rf"{arg}=\["):
        layer(ember.randn(*shape))


def test_conv_layer_with_kernel_size_of_another_rank_refuses_at_forward():
    layer = nn.Conv1d(2, 3, (3, 3))
    assert layer.weight.shape == (3, 2, 3, 3)
    with pytest.raises(RuntimeError, match="Conv1d: expected a 3-D weight"):
        layer(ember.randn(1, 2, 8))
    assert nn.Conv2d(2, 3, [3]).weight.shape == (3, 2, 3)


@pytest.mark.parity
@pytest.mark.parametrize("kw", [dict(padding=(1, 2)), dict(stride=(1, 2)), dict(dilation=[1, 2]),
                                dict(padding=(1, 2), padding_mode="reflect"),
                                dict(kernel_size=(3, 3))])
def test_conv1d_wrong_length_sequences_match_torch(kw):
    torch = pytest.importorskip("torch")
    kw = {"kernel_size": 3, **kw}
    ours, theirs = nn.Conv1d(2, 3, **kw), torch.nn.Conv1d(2, 3, **kw)
    assert repr(ours) == repr(theirs)
    assert (ours.kernel_size, ours.stride, ours.padding, ours.dilation) == \
        (theirs.kernel_size, theirs.stride, theirs.padding, theirs.dilation)
    assert list(ours._reversed_padding_repeated_twice) == \
        list(theirs._reversed_padding_repeated_twice)
    with pytest.raises(RuntimeError) as want:
        theirs(torch.randn(1, 2, 8))
    with pytest.raises(RuntimeError) as got:
        ours(ember.randn(1, 2, 8))
    if "match the convolution dimensions" in str(want.value):
        assert str(want.value) in str(got.value)


@pytest.mark.parametrize("call, match", [
    (lambda x: F.conv2d(x, ember.randn(3, 2, 3, 3), stride=(1, 2, 3)),
     r"conv2d: expected stride to be a single integer value or a list of 2 values to match the "
     r"convolution dimensions, but got stride=\[1, 2, 3\]"),
    (lambda x: F.conv2d(x, ember.randn(3, 2, 3, 3), dilation=[1, 1, 1]),
     "conv2d: expected dilation"),
    (lambda x: F.max_pool2d(x, (2, 2, 2)), "max_pool2d: kernel_size"),
    (lambda x: F.avg_pool2d(x, 2, stride=(1, 1, 1)), "avg_pool2d: stride"),
    (lambda x: F.conv_transpose2d(x, ember.randn(2, 3, 3, 3), output_padding=(0, 0, 0)),
     "conv_transpose2d: expected output_padding"),
])
def test_wrong_length_int_sequence_is_a_runtime_error(call, match):
    with pytest.raises(RuntimeError, match=match):
        call(ember.randn(1, 2, 8, 8))


def test_non_int_sequence_stays_a_type_error():
    with pytest.raises(TypeError, match="conv2d"):
        F.conv2d(ember.randn(1, 2, 8, 8), ember.randn(3, 2, 3, 3), stride=(1.5, 1))


@pytest.mark.parity
def test_one_element_conv_matches_torch():
    torch = pytest.importorskip("torch")
    ours = nn.Conv2d(2, 3, 3, stride=[2], padding=[1])
    theirs = torch.nn.Conv2d(2, 3, 3, stride=[2], padding=[1])
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((1, 2, 7, 7)).astype(np.float32)
    assert repr(ours) == repr(theirs)
    np.testing.assert_allclose(ours(ember.tensor(x)).detach().numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError):
        torch.nn.functional.max_pool2d(torch.tensor(x), (2, 2, 2))
