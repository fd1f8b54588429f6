"""nn.init: distributions (moments and bounds), gains, fans, generators, structured inits, and
every layer's default initialization."""
from __future__ import annotations

import math

import numpy as np
import pytest

import ember
from ember import nn
from ember.nn import init


def test_calculate_gain_values():
    assert init.calculate_gain("linear") == 1 and init.calculate_gain("conv2d") == 1
    assert init.calculate_gain("sigmoid") == 1
    assert init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert init.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert init.calculate_gain("leaky_relu") == pytest.approx(math.sqrt(2 / (1 + 0.01 ** 2)))
    assert init.calculate_gain("leaky_relu", 0.2) == pytest.approx(math.sqrt(2 / 1.04))
    assert init.calculate_gain("selu") == 0.75
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        init.calculate_gain("swish")
    with pytest.raises(ValueError, match="not a valid number"):
        init.calculate_gain("leaky_relu", True)


@pytest.mark.parity
def test_calculate_gain_matches_torch():
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    for name, param in [("tanh", None), ("relu", None), ("leaky_relu", 0.3), ("selu", None),
                        ("conv_transpose2d", None)]:
        assert init.calculate_gain(name, param) == pytest.approx(
            torch.nn.init.calculate_gain(name, param))


def _moments(t):
    a = t.detach().numpy().astype(np.float64)
    return a.mean(), a.std(), a.min(), a.max()


def test_uniform_normal_constant_and_no_autograd_history():
    w = nn.Parameter(ember.empty(300, 200))
    out = init.uniform_(w, -2, 3)
    assert out is w and w.is_leaf and w.grad_fn is None
    mean, std, lo, hi = _moments(w)
    assert lo >= -2 and hi < 3 and abs(mean - 0.5) < 0.05
    init.normal_(w, 1.0, 0.5)
    mean, std, _, _ = _moments(w)
    assert abs(mean - 1) < 0.01 and abs(std - 0.5) < 0.01
    init.constant_(w, 0.3)
    assert np.all(w.detach().numpy() == np.float32(0.3))
    init.zeros_(w)
    assert not w.detach().numpy().any()
    init.ones_(w)
    assert w.detach().numpy().all()


def test_trunc_normal_bounds_and_moments():
    w = ember.empty(200000)
    init.trunc_normal_(w, mean=0.5, std=1.0, a=-1.0, b=2.0)
    mean, _, lo, hi = _moments(w)
    assert lo >= -1.0 and hi <= 2.0
    # mean of N(0.5, 1) truncated to [-1.5 sd, 1.5 sd] is 0.5 (symmetric)
    assert abs(mean - 0.5) < 0.01
    w2 = ember.empty(100000)
    init.trunc_normal_(w2)
    _, std, lo, hi = _moments(w2)
    assert lo >= -2 and hi <= 2 and abs(std - 0.8796) < 0.01  # std of N(0,1) cut at +-2


def test_xavier_and_kaiming_scales():
    w = ember.empty(500, 300)
    fan_in, fan_out = 300, 500
    init.xavier_uniform_(w, gain=2.0)
    bound = 2.0 * math.sqrt(6 / (fan_in + fan_out))
    _, std, lo, hi = _moments(w)
    assert -bound <= lo and hi <= bound and abs(std - bound / math.sqrt(3)) < 0.01 * bound
    init.xavier_normal_(w)
    assert abs(_moments(w)[1] - math.sqrt(2 / (fan_in + fan_out))) < 0.002
    init.kaiming_uniform_(w, nonlinearity="relu")
    bound = math.sqrt(2) * math.sqrt(3 / fan_in)
    assert _moments(w)[3] <= bound and _moments(w)[3] > 0.99 * bound
    init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    assert abs(_moments(w)[1] - math.sqrt(2 / fan_out)) < 0.002
    conv = ember.empty(16, 4, 3, 3)  # fan_in = 4 * 9
    init.kaiming_normal_(conv, a=0.0)
    assert abs(_moments(conv)[1] - math.sqrt(2 / 36)) < 0.02
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        init.kaiming_uniform_(w, mode="fan_avg")
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(ember.empty(5))
    with pytest.warns(UserWarning, match="zero-element"):
        init.kaiming_uniform_(ember.empty(0, 3))


def test_generator_makes_init_reproducible():
    g1 = ember.Generator().manual_seed(3)
    g2 = ember.Generator().manual_seed(3)
    a = init.kaiming_uniform_(ember.empty(4, 5), generator=g1)
    b = init.kaiming_uniform_(ember.empty(4, 5), generator=g2)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    c = init.trunc_normal_(ember.empty(6), generator=ember.Generator().manual_seed(1))
    d = init.trunc_normal_(ember.empty(6), generator=ember.Generator().manual_seed(1))
    np.testing.assert_array_equal(c.numpy(), d.numpy())


def test_structured_inits_eye_dirac_orthogonal_sparse():
    e = init.eye_(ember.empty(3, 5))
    np.testing.assert_array_equal(e.numpy(), np.eye(3, 5))
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions"):
        init.eye_(ember.empty(2, 2, 2))
    d = init.dirac_(ember.empty(4, 2, 3, 3), groups=2)
    arr = d.numpy()
    assert arr.sum() == 4 and arr[0, 0, 1, 1] == 1 and arr[1, 1, 1, 1] == 1
    assert arr[2, 0, 1, 1] == 1 and arr[3, 1, 1, 1] == 1
    x = ember.randn(1, 2, 5, 5)
    np.testing.assert_allclose(nn.functional.conv2d(x, init.dirac_(ember.empty(2, 2, 3, 3)),
                                                    padding=1).numpy(), x.numpy(), atol=1e-6)
    with pytest.raises(ValueError, match="3, 4, or 5 dimensions"):
        init.dirac_(ember.empty(2, 2))
    q = init.orthogonal_(ember.empty(4, 6), gain=2.0).numpy().astype(np.float64)
    np.testing.assert_allclose(q @ q.T, 4 * np.eye(4), atol=1e-5)
    tall = init.orthogonal_(ember.empty(6, 2, 2)).numpy().reshape(6, 4).astype(np.float64)
    np.testing.assert_allclose(tall.T @ tall, np.eye(4), atol=1e-5)
    s = init.sparse_(ember.empty(10, 7), sparsity=0.3).numpy()
    assert ((s == 0).sum(0) >= 3).all() and np.abs(s).max() < 0.1


def test_default_layer_initializations():
    ember.manual_seed(0)
    emb = nn.Embedding(2000, 50)
    mean, std, _, _ = _moments(emb.weight)
    assert abs(mean) < 0.01 and abs(std - 1) < 0.01  # N(0, 1)
    bn = nn.BatchNorm2d(5)
    assert (bn.weight.detach().numpy() == 1).all() and not bn.bias.detach().numpy().any()
    assert (bn.running_var.numpy() == 1).all() and bn.num_batches_tracked.item() == 0
    ln = nn.LayerNorm((2, 3))
    assert (ln.weight.detach().numpy() == 1).all() and ln.weight.shape == ember.Size([2, 3])
    assert (nn.PReLU(3, init=0.1).weight.detach().numpy() == np.float32(0.1)).all()
    assert (nn.GroupNorm(2, 4).weight.detach().numpy() == 1).all()
    assert (nn.RMSNorm(4).weight.detach().numpy() == 1).all()
    bil = nn.Bilinear(16, 3, 2)
    assert np.abs(bil.bias.detach().numpy()).max() <= 0.25


@pytest.mark.parametrize("dtype", [ember.int64, ember.bool, ember.complex64])
def test_orthogonal_refuses_non_floating_tensors(dtype):
    """An int64 weight was filled with the QR's values truncated (all zeros)."""
    with pytest.raises(NotImplementedError, match="orthogonal_: not implemented for"):
        ember.nn.init.orthogonal_(ember.zeros(4, 3, dtype=dtype))
