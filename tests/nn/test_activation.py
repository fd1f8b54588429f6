"""Activation functions and layers: values and gradients vs torch, double backward, in-place
variants, numerical stability, bad input."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import ember
from ember import nn
from ember.autograd import gradcheck, gradgradcheck

F = nn.functional

# (ember layer, torch layer factory name and args)
LAYERS = [
    ("ReLU", ()), ("ReLU6", ()), ("LeakyReLU", (0.2,)), ("ELU", (0.7,)), ("SELU", ()),
    ("CELU", (2.0,)), ("GELU", ()), ("SiLU", ()), ("Mish", ()), ("Sigmoid", ()), ("Tanh", ()),
    ("Hardtanh", (-0.5, 1.5)), ("Hardswish", ()), ("Hardsigmoid", ()), ("Softplus", (2.0, 3.0)),
    ("Softsign", ()), ("Softmax", (1,)), ("LogSoftmax", (0,)), ("Softmin", (-1,)),
    ("GLU", (1,)), ("Threshold", (0.1, -2.0)), ("LogSigmoid", ()), ("Tanhshrink", ()),
    ("Softshrink", (0.3,)), ("Hardshrink", (0.3,)), ("PReLU", ()), ("Softmax2d", ()),
]


def _torch():
    return pytest.importorskip("torch", reason="torch oracle not installed")


def _inputs(rng, name):
    shape = (3, 4, 2, 2) if name == "Softmax2d" else (5, 4)
    x = rng.standard_normal(shape) * 3
    return x.astype(np.float64)


@pytest.mark.parity
@pytest.mark.parametrize("name,args", LAYERS, ids=[n for n, _ in LAYERS])
def test_activation_layer_matches_torch(rng, name, args):
    torch = _torch()
    a = _inputs(rng, name)
    ours = getattr(nn, name)(*args).double()
    theirs = getattr(torch.nn, name)(*args).double()
    assert repr(ours) == repr(theirs)
    x = ember.tensor(a, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    y, ref = ours(x), theirs(t)
    np.testing.assert_allclose(y.detach().numpy(), ref.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    g = np.sin(np.arange(ref.numel())).reshape(tuple(ref.shape))
    y.backward(ember.tensor(g))
    ref.backward(torch.tensor(g))
    # rtol 1e-7: torch's CPU kernels use float32 constants (1/6, 1/alpha) in a few backwards
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-7, atol=1e-12)
    for (n, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-9, err_msg=n)


@pytest.mark.parity
def test_gelu_tanh_rrelu_eval_and_prelu_channels_match_torch(rng):
    torch = _torch()
    a = rng.standard_normal((2, 3, 4))
    cases = [(lambda m: m.GELU(approximate="tanh"), a),
             (lambda m: m.RReLU(0.1, 0.3).eval(), a),
             (lambda m: m.PReLU(3, init=0.1), a)]
    for make, arr in cases:
        ours, theirs = make(nn).double(), make(torch.nn).double()
        x, t = ember.tensor(arr, requires_grad=True), torch.tensor(arr, requires_grad=True)
        ours(x).sum().backward()
        theirs(t).sum().backward()
        np.testing.assert_allclose(ours(x).detach().numpy(), theirs(t).detach().numpy(),
                                   rtol=1e-10)
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-9, atol=1e-12)


FUNCS = [
    ("relu", {}), ("leaky_relu", {"negative_slope": 0.1}), ("elu", {"alpha": 0.5}),
    ("selu", {}), ("celu", {"alpha": 2.0}), ("silu", {}), ("mish", {}),
    ("hardswish", {}), ("hardsigmoid", {}), ("softplus", {"beta": 0.5, "threshold": 4.0}),
    ("logsigmoid", {}), ("softsign", {}), ("softmax", {"dim": 1}),
    ("log_softmax", {"dim": 0}), ("softmin", {"dim": 1}), ("glu", {"dim": 0}),
    ("hardtanh", {"min_val": -0.5, "max_val": 0.5}), ("softshrink", {"lambd": 0.2}),
]


@pytest.mark.parametrize("name,kw", FUNCS, ids=[n for n, _ in FUNCS])
def test_functional_gradcheck_and_gradgradcheck(rng, name, kw):
    # keep away from the kinks where finite differences are meaningless
    a = rng.uniform(0.2, 2.0, (4, 3)) * rng.choice([-1, 1], (4, 3))
    a[np.abs(np.abs(a) - 3) < 0.1] += 0.3
    x = ember.tensor(a, requires_grad=True)
    fn = getattr(F, name)
    assert gradcheck(lambda t: fn(t, **kw), (x,))
    assert gradgradcheck(lambda t: fn(t, **kw), (x,))


def test_softmax_stable_for_large_inputs():
    x = ember.tensor([[1000.0, 1000.0, -1000.0], [-1e30, 0.0, 1e30]], requires_grad=True)
    y = F.softmax(x, dim=1)
    np.testing.assert_allclose(y.detach().numpy(), [[0.5, 0.5, 0.0], [0.0, 0.0, 1.0]])
    ls = F.log_softmax(x, dim=1)
    assert np.isfinite(ls.detach().numpy()[0, :2]).all()
    np.testing.assert_allclose(ls.detach().numpy()[0, :2], np.log(0.5))
    (ls[0, 0] + y.sum()).backward()
    assert np.isfinite(x.grad.numpy()).all()
    big = F.softplus(ember.tensor([1e4, -1e4]))
    np.testing.assert_allclose(big.numpy(), [1e4, 0.0])
    assert np.isfinite(F.logsigmoid(ember.tensor([-1e4, 1e4])).numpy()).all()
    e = ember.tensor([1e4], requires_grad=True)
    F.elu(e).sum().backward()
    assert e.grad.item() == 1.0  # no inf * 0 from the unused exponential branch


def test_softmax_implicit_dim_warns_and_picks_torch_dim():
    x = ember.randn(2, 3)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        y = F.softmax(x)
    np.testing.assert_allclose(y.sum(1).numpy(), [1, 1], rtol=1e-6)
    with pytest.warns(UserWarning):
        z = F.log_softmax(ember.randn(4))
    np.testing.assert_allclose(z.exp().sum().item(), 1.0, rtol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.Softmax(dim=1)(x)


def test_softmax_dtype_half_noncontiguous_and_edge_shapes():
    x = ember.randn(3, 4)
    y = F.softmax(x, dim=1, dtype=ember.float64)
    assert y.dtype == ember.float64
    h = F.softmax(x.half(), dim=0)
    assert h.dtype == ember.float16
    np.testing.assert_allclose(h.float().sum(0).numpy(), np.ones(4), rtol=1e-3)
    xt = x.t()
    np.testing.assert_allclose(F.softmax(xt, -1).numpy(),
                               F.softmax(xt.contiguous(), -1).numpy(), rtol=1e-6)
    assert F.softmax(ember.tensor(3.0), 0).item() == 1.0
    assert F.softmax(ember.zeros(0, 3), 1).shape == ember.Size([0, 3])
    with pytest.raises(IndexError, match="Dimension out of range"):
        F.softmax(x, 2)
    with pytest.raises(RuntimeError, match="floating-point"):
        F.softmax(ember.tensor([1, 2]), 0)


def test_inplace_variants_modify_input_and_keep_gradients(rng):
    for name in ("relu", "leaky_relu", "elu", "selu", "celu", "silu", "mish", "hardtanh",
                 "hardswish", "hardsigmoid", "relu6", "threshold"):
        a = rng.standard_normal((3, 4))
        args = (0.1, 5.0) if name == "threshold" else ()
        fn = getattr(F, name)
        x = ember.tensor(a)
        out = fn(x, *args, inplace=True)
        assert out is x
        np.testing.assert_allclose(x.numpy(), fn(ember.tensor(a), *args).numpy())
        leaf = ember.tensor(a, requires_grad=True)
        ref = ember.tensor(a, requires_grad=True)
        fn(leaf * 1, *args, inplace=True).sum().backward()
        fn(ref, *args).sum().backward()
        np.testing.assert_allclose(leaf.grad.numpy(), ref.grad.numpy(), err_msg=name)
    leaf = ember.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        F.relu(leaf, inplace=True)
    layer = nn.ReLU(inplace=True)
    assert repr(layer) == "ReLU(inplace=True)"


def test_rrelu_training_random_slopes_within_bounds():
    x = -ember.ones(1000)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    slopes = -y.numpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and slopes.std() > 0.03
    np.testing.assert_allclose(F.rrelu(x, 0.1, 0.3).numpy(), -0.2 * np.ones(1000), rtol=1e-6)
    m = nn.RReLU(0.1, 0.3)
    assert not np.allclose(m(x).numpy(), m.eval()(x).numpy())


def test_activation_bad_input():
    with pytest.raises(RuntimeError, match="glu: Halving dimension must be even"):
        F.glu(ember.zeros(2, 3))
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers"):
        nn.PReLU(3)(ember.zeros(2, 4))
    with pytest.raises(RuntimeError, match="elu: expected a floating-point input"):
        F.elu(ember.tensor([1, 2]))
    with pytest.raises(ValueError, match="Softmax2d"):
        nn.Softmax2d()(ember.zeros(2, 3))
    with pytest.raises(RuntimeError, match="lambda must be greater or equal to 0"):
        F.softshrink(ember.zeros(1), -1.0)
    with pytest.raises(TypeError, match="must be Tensor"):
        F.silu([1.0])


def test_activations_on_empty_zero_dim_and_batch_one():
    for name in ("relu", "elu", "gelu", "silu", "softplus", "hardswish", "logsigmoid"):
        fn = getattr(F, name)
        assert fn(ember.zeros(0, 3)).shape == ember.Size([0, 3])
        assert fn(ember.tensor(0.5)).shape == ember.Size([])
        assert fn(ember.zeros(1, 3)).shape == ember.Size([1, 3])
