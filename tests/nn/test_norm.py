"""Normalization layers vs torch: outputs, gradients, running statistics, train/eval, double
backward, bad input."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from ember import nn
from ember.autograd import gradcheck, gradgradcheck

F = nn.functional


def _torch():
    return pytest.importorskip("torch", reason="torch oracle not installed")


def _randomize(module, rng):
    """Non-trivial affine parameters, so that tests see their effect."""
    with ember.no_grad():
        for p in module.parameters():
            p.copy_(ember.tensor(rng.uniform(0.5, 1.5, tuple(p.shape))).to(p.dtype))


def _sync(ours, theirs):
    torch = _torch()
    theirs.load_state_dict({k: torch.from_numpy(np.array(v.numpy(), copy=True))
                            for k, v in ours.state_dict().items()})


def _run_both(ours, theirs, a, rtol=1e-4, atol=1e-5, steps=1):
    """forward + backward on both, ``steps`` times; compare outputs, grads and buffers."""
    torch = _torch()
    for _ in range(steps):
        x = ember.tensor(a, requires_grad=True)
        t = torch.tensor(a, requires_grad=True)
        y, ref = ours(x), theirs(t)
        np.testing.assert_allclose(y.detach().numpy(), ref.detach().numpy(), rtol=rtol,
                                   atol=atol)
        g = np.cos(np.arange(ref.numel())).reshape(tuple(ref.shape)).astype(a.dtype)
        y.backward(ember.tensor(g))
        ref.backward(torch.from_numpy(g))
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=atol)
    for (n, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters(), strict=True):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=rtol, atol=atol,
                                   err_msg=n)
    ref_bufs = dict(theirs.named_buffers())
    for n, b in ours.named_buffers():
        np.testing.assert_allclose(b.numpy(), ref_bufs[n].numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=n)


BATCH_CASES = [
    ("BatchNorm1d", (6, 3), {}), ("BatchNorm1d", (4, 3, 5), {"momentum": None}),
    ("BatchNorm2d", (2, 3, 4, 5), {}), ("BatchNorm2d", (1, 3, 2, 2), {"affine": False}),
    ("BatchNorm3d", (2, 3, 2, 3, 2), {"track_running_stats": False}),
    ("BatchNorm2d", (2, 3, 4, 4), {"bias": False, "momentum": 0.3}),
]


@pytest.mark.parity
@pytest.mark.parametrize("kind,shape,kw", BATCH_CASES)
def test_batchnorm_train_then_eval_matches_torch(rng, kind, shape, kw):
    torch = _torch()
    ours, theirs = getattr(nn, kind)(3, **kw), getattr(torch.nn, kind)(3, **kw)
    _randomize(ours, rng)
    _sync(ours, theirs)
    a = (rng.standard_normal(shape) * 2 + 1).astype(np.float32)
    _run_both(ours, theirs, a, steps=3)  # running stats after three batches
    ours.eval(), theirs.eval()
    _run_both(ours, theirs, a)
    assert repr(ours) == repr(theirs)


@pytest.mark.parity
def test_batchnorm_noncontiguous_and_float64_match_torch(rng):
    torch = _torch()
    a = rng.standard_normal((3, 5, 4, 2))
    ours, theirs = nn.BatchNorm2d(4).double(), torch.nn.BatchNorm2d(4).double()
    x = ember.tensor(a).permute(0, 2, 1, 3)  # channels taken from a strided view
    assert not x.is_contiguous()
    ref = theirs(torch.tensor(a).permute(0, 2, 1, 3))
    np.testing.assert_allclose(ours(x).detach().numpy(), ref.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(ours.running_var.numpy(), theirs.running_var.numpy(),
                               rtol=1e-10)


def test_batchnorm_gradcheck_and_double_backward(rng):
    x = ember.tensor(rng.standard_normal((4, 3, 2)), requires_grad=True)
    w = ember.tensor(rng.uniform(0.5, 1.5, 3), requires_grad=True)
    b = ember.tensor(rng.standard_normal(3), requires_grad=True)

    def fn(x, w, b):
        return F.batch_norm(x, None, None, w, b, training=True)

    assert gradcheck(fn, (x, w, b))
    assert gradgradcheck(fn, (x, w, b))


def test_layer_and_group_norm_double_backward(rng):
    x = ember.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    w = ember.tensor(rng.uniform(0.5, 1.5, 4), requires_grad=True)
    b = ember.tensor(rng.standard_normal(4), requires_grad=True)
    assert gradcheck(lambda x, w, b: F.layer_norm(x, (4,), w, b), (x, w, b))
    assert gradgradcheck(lambda x, w, b: F.layer_norm(x, (4,), w, b), (x, w, b))
    y = ember.tensor(rng.standard_normal((2, 4, 3)), requires_grad=True)
    assert gradgradcheck(lambda t, w, b: F.group_norm(t, 2, w, b), (y, w, b))


def test_batchnorm_running_stats_formula():
    bn = nn.BatchNorm1d(2, momentum=0.5)
    a = np.array([[1.0, 2.0], [3.0, 6.0], [5.0, 10.0]], np.float32)
    bn(ember.tensor(a))
    np.testing.assert_allclose(bn.running_mean.numpy(), 0.5 * a.mean(0), rtol=1e-6)
    np.testing.assert_allclose(bn.running_var.numpy(), 0.5 + 0.5 * a.var(0, ddof=1), rtol=1e-5)
    assert bn.num_batches_tracked.item() == 1
    cumulative = nn.BatchNorm1d(1, momentum=None)
    for value in (1.0, 3.0):
        cumulative(ember.tensor([[value - 1], [value + 1]]))
    np.testing.assert_allclose(cumulative.running_mean.numpy(), [2.0], rtol=1e-6)
    bn.eval()
    before = bn.running_mean.numpy().copy()
    bn(ember.tensor(a))
    np.testing.assert_array_equal(bn.running_mean.numpy(), before)


def test_batchnorm_bad_input_errors():
    bn = nn.BatchNorm2d(4)
    with pytest.raises(RuntimeError, match=r"BatchNorm2d\(4, .*expected input with 4 channels"):
        bn(ember.randn(2, 3, 5, 5))
    with pytest.raises(ValueError, match="expected 4D input"):
        bn(ember.randn(2, 4, 5))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        nn.BatchNorm1d(4)(ember.randn(1, 4))
    nn.BatchNorm1d(4).eval()(ember.randn(1, 4))  # batch of one is fine in eval mode
    with pytest.raises(RuntimeError, match="running_mean should contain 3 elements not 4"):
        F.batch_norm(ember.randn(2, 3), ember.zeros(4), ember.ones(4))


def test_batchnorm_training_fast_path_rejects_the_same_inputs():
    # F.batch_norm checks the common training case on the arrays; anything else falls through
    # to the general path and its errors
    x = ember.randn(2, 3, 4)
    with pytest.raises(RuntimeError, match="running_mean should contain 3 elements not 4"):
        F.batch_norm(x, ember.zeros(4), ember.ones(3), training=True)
    with pytest.raises(RuntimeError, match="weight should contain 3 elements not 2"):
        F.batch_norm(x, None, None, ember.ones(2), training=True)
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        F.batch_norm(ember.randn(1, 3), None, None, training=True)
    # the same numbers either way: a float64 weight takes the general path (converted)
    w = ember.rand(3)
    fast = F.batch_norm(x, None, None, w, training=True)
    general = F.batch_norm(x, None, None, w.double(), training=True)
    np.testing.assert_array_equal(fast.numpy(), general.numpy())


LAYER_CASES = [
    ("LayerNorm", ((5,),), {}, (3, 4, 5)), ("LayerNorm", ([4, 5],), {"bias": False}, (2, 4, 5)),
    ("LayerNorm", (5,), {"elementwise_affine": False}, (1, 5)),
    ("GroupNorm", (2, 4), {}, (3, 4, 5)), ("GroupNorm", (4, 4), {"affine": False}, (2, 4, 2, 3)),
    ("GroupNorm", (1, 4), {"bias": False}, (1, 4, 6)),
    ("RMSNorm", ([5],), {}, (3, 5)), ("RMSNorm", ((2, 5),), {"eps": 1e-3}, (3, 2, 5)),
    ("LocalResponseNorm", (3,), {}, (2, 6, 4)), ("LocalResponseNorm", (2,), {"k": 2.0},
                                                (2, 5, 3, 3)),
    ("InstanceNorm1d", (3,), {}, (2, 3, 6)), ("InstanceNorm1d", (3,), {"affine": True},
                                              (3, 5)),
    ("InstanceNorm2d", (3,), {"affine": True, "track_running_stats": True}, (2, 3, 4, 4)),
]


@pytest.mark.parity
@pytest.mark.parametrize("kind,args,kw,shape", LAYER_CASES)
def test_norm_layers_match_torch(rng, kind, args, kw, shape):
    torch = _torch()
    ours, theirs = getattr(nn, kind)(*args, **kw), getattr(torch.nn, kind)(*args, **kw)
    _randomize(ours, rng)
    _sync(ours, theirs)
    a = (rng.standard_normal(shape) * 3 + 2).astype(np.float32)
    _run_both(ours, theirs, a, steps=2)
    ours.eval(), theirs.eval()
    _run_both(ours, theirs, a)
    assert repr(ours) == repr(theirs)


def test_layer_norm_large_mean_is_accurate():
    x = ember.tensor(np.array([[1e4 + 1, 1e4 - 1]], np.float32))
    np.testing.assert_allclose(F.layer_norm(x, (2,)).numpy(), [[1, -1]], rtol=1e-3)


def test_layer_norm_module_reads_what_attribute_access_reads(rng):
    # LayerNorm.forward reads weight and bias from the registry only on nn.LayerNorm itself
    # (NOTE [Registered reads]): a subclass's own lookup and a parametrization still count
    x = ember.tensor(rng.standard_normal((2, 3)))
    w, b = rng.standard_normal(3), rng.standard_normal(3)

    class Shifted(nn.LayerNorm):
        def __getattr__(self, name):
            value = super().__getattr__(name)
            return value + 1 if name == "bias" else value

    for layer, scale, shift in ((nn.LayerNorm(3).double(), w, b),
                                (Shifted(3).double(), w, b + 1)):
        with ember.no_grad():
            layer._parameters["weight"].copy_(ember.tensor(w))
            layer._parameters["bias"].copy_(ember.tensor(b))
        xn = (x.numpy() - x.numpy().mean(-1, keepdims=True)) / np.sqrt(
            x.numpy().var(-1, keepdims=True) + 1e-5)
        np.testing.assert_allclose(layer(x).detach().numpy(), xn * scale + shift, rtol=1e-10)

    class Doubled(nn.Module):
        def forward(self, t):
            return 2 * t

    layer = nn.LayerNorm(3).double()
    nn.utils.parametrize.register_parametrization(layer, "weight", Doubled())
    want = F.layer_norm(x, (3,), 2 * layer.parametrizations.weight.original, layer.bias)
    np.testing.assert_allclose(layer(x).detach().numpy(), want.detach().numpy(), rtol=1e-12)


def test_norm_bad_input_errors():
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[4\], expected input with "
                                           r"shape \[\*, 4\], but got input of size ?\[2, 3\]"):
        nn.LayerNorm(4)(ember.randn(2, 3))
    with pytest.raises(RuntimeError, match=r"^LayerNorm\(\(4,\), eps=1e-05.*normalized_shape"):
        with ember.no_grad():
            nn.LayerNorm(4)(ember.randn(1, 1, 3))
    with pytest.raises(RuntimeError, match="divisible by num_groups"):
        F.group_norm(ember.randn(2, 6, 3), 4)
    with pytest.raises(RuntimeError, match=r"GroupNorm\(2, 4.*expected input of shape"):
        nn.GroupNorm(2, 4)(ember.randn(2, 6, 3))
    with pytest.raises(ValueError, match="num_channels must be divisible"):
        nn.GroupNorm(3, 4)
    with pytest.raises(ValueError, match="expected 2D or 3D input"):
        nn.InstanceNorm1d(3)(ember.randn(2, 3, 4, 5))
    with pytest.raises(ValueError, match="Expected 3D or higher"):
        F.local_response_norm(ember.randn(2, 3), 2)
    with pytest.raises(RuntimeError, match="floating-point"):
        F.layer_norm(ember.tensor([[1, 2]]), (2,))


def test_norm_half_precision_and_empty():
    x = ember.randn(4, 3).half()
    assert nn.LayerNorm(3).half()(x).dtype == ember.float16
    assert nn.BatchNorm1d(3).half()(x).dtype == ember.float16
    assert F.layer_norm(ember.zeros(0, 3), (3,)).shape == ember.Size([0, 3])
