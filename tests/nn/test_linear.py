"""Identity, Linear, Bilinear, Flatten, Unflatten: forward and gradients vs torch, errors,
initialization."""
from __future__ import annotations

import math

import numpy as np
import pytest

import ember
from ember import nn
from ember.autograd import gradcheck, gradgradcheck


def _torch():
    return pytest.importorskip("torch", reason="torch oracle not installed")


def _copy_to_torch(ours, theirs):
    torch = _torch()
    theirs.load_state_dict({k: torch.from_numpy(v.numpy().copy())
                            for k, v in ours.state_dict().items()})


def _grads(module):
    return {n: p.grad.numpy() for n, p in module.named_parameters()}


def _check_parity(ours, theirs, *inputs, rtol=1e-5, atol=1e-6):
    """Forward and all gradients (inputs and parameters) of ours vs theirs on the same data."""
    torch = _torch()
    _copy_to_torch(ours, theirs)
    xs = [ember.tensor(a, requires_grad=True) for a in inputs]
    ts = [torch.tensor(a, requires_grad=True) for a in inputs]
    out, ref = ours(*xs), theirs(*ts)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=rtol, atol=atol)
    g = np.cos(np.arange(ref.numel())).reshape(tuple(ref.shape)).astype(inputs[0].dtype)
    out.backward(ember.tensor(g))
    ref.backward(torch.tensor(g))
    for x, t in zip(xs, ts):
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=atol)
    ref_grads = {n: p.grad.numpy() for n, p in theirs.named_parameters()}
    for name, grad in _grads(ours).items():
        np.testing.assert_allclose(grad, ref_grads[name], rtol=rtol, atol=atol, err_msg=name)


@pytest.mark.parity
@pytest.mark.parametrize("shape", [(4, 3), (2, 5, 3), (3,), (1, 3)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_matches_torch(rng, shape, bias):
    torch = _torch()
    _check_parity(nn.Linear(3, 2, bias=bias), torch.nn.Linear(3, 2, bias=bias),
                  rng.standard_normal(shape).astype(np.float32))


@pytest.mark.parity
@pytest.mark.parametrize("rows,n_in,n_out", [(300, 5, 1), (300, 7, 4), (3, 7, 1), (70, 3, 2)])
def test_linear_backward_fast_paths_match_torch(rng, rows, n_in, n_out):
    # n_out == 1: the input gradient as a broadcast multiply; >= 64 rows: the bias gradient as a
    # product with ones (linear._column_sums); a 3-D input takes the same 2-D view
    torch = _torch()
    for shape in ((rows, n_in), (2, rows, n_in)):
        _check_parity(nn.Linear(n_in, n_out), torch.nn.Linear(n_in, n_out),
                      rng.standard_normal(shape).astype(np.float32), rtol=1e-5, atol=1e-5)


def test_linear_bias_gradient_is_the_column_sum_in_float64(rng):
    lin = nn.Linear(3, 5).double()
    x = ember.tensor(rng.standard_normal((100, 3)), requires_grad=True)
    g = rng.standard_normal((100, 5))
    lin(x).backward(ember.tensor(g))
    np.testing.assert_allclose(lin.bias.grad.numpy(), g.sum(0), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), g @ lin.weight.detach().numpy(), rtol=1e-12)
    assert gradcheck(lambda a: nn.functional.linear(a, lin.weight, lin.bias),
                     (ember.tensor(rng.standard_normal((70, 3)), requires_grad=True),))


@pytest.mark.parity
def test_linear_noncontiguous_input_matches_torch(rng):
    torch = _torch()
    ours, theirs = nn.Linear(4, 3), torch.nn.Linear(4, 3)
    _copy_to_torch(ours, theirs)
    a = rng.standard_normal((4, 6)).astype(np.float32)
    x = ember.tensor(a).t()[::2]  # (3, 4) strided view
    assert not x.is_contiguous()
    np.testing.assert_allclose(ours(x).detach().numpy(),
                               theirs(torch.tensor(a).t()[::2]).detach().numpy(), rtol=1e-5)


@pytest.mark.parity
@pytest.mark.parametrize("perm", [(0, 1, 2, 3), (1, 0, 2, 3), (2, 0, 1, 3), (1, 2, 0, 3)])
def test_linear_batched_permuted_input_matches_torch(rng, perm):
    # (*, in) inputs run as one GEMM over their rows in memory order; a permuted batch (time-
    # major sequences, attention) must give torch's values and gradients
    torch = _torch()
    ours, theirs = nn.Linear(4, 3), torch.nn.Linear(4, 3)
    _copy_to_torch(ours, theirs)
    a = rng.standard_normal((5, 2, 3, 4)).astype(np.float32)
    x = ember.tensor(a).permute(*perm).requires_grad_()
    t = torch.tensor(a).permute(*perm).requires_grad_()
    y, ty = ours(x), theirs(t)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-6)
    y.pow(2).sum().backward()
    ty.pow(2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(),
                               rtol=1e-5, atol=1e-5)


def test_linear_batched_gradcheck(rng):
    F = nn.functional
    x = ember.tensor(rng.standard_normal((2, 3, 4)), requires_grad=True)
    w = ember.tensor(rng.standard_normal((5, 4)), requires_grad=True)
    b = ember.tensor(rng.standard_normal(5), requires_grad=True)

    def fn(x, w, b):
        return F.linear(x.permute(1, 0, 2), w, b)

    assert gradcheck(fn, (x, w, b))
    assert gradgradcheck(fn, (x, w, b))


@pytest.mark.parity
def test_bilinear_matches_torch(rng):
    torch = _torch()
    _check_parity(nn.Bilinear(3, 2, 4), torch.nn.Bilinear(3, 2, 4),
                  rng.standard_normal((5, 3)).astype(np.float32),
                  rng.standard_normal((5, 2)).astype(np.float32))


def test_linear_gradcheck_double_backward(rng):
    x = ember.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    w = ember.tensor(rng.standard_normal((2, 4)), requires_grad=True)
    b = ember.tensor(rng.standard_normal(2), requires_grad=True)
    F = nn.functional
    assert gradcheck(lambda x, w, b: F.linear(x, w, b), (x, w, b))
    assert gradgradcheck(lambda x, w, b: F.linear(x, w, b), (x, w, b))
    x1 = ember.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    x2 = ember.tensor(rng.standard_normal((3, 3)), requires_grad=True)
    wb = ember.tensor(rng.standard_normal((4, 2, 3)), requires_grad=True)
    assert gradcheck(lambda a, b, w: F.bilinear(a, b, w), (x1, x2, wb))


def test_linear_wrong_in_features_names_layer_and_shapes():
    layer = nn.Linear(4, 5)
    with pytest.raises(RuntimeError) as info:
        layer(ember.zeros(2, 3))
    msg = str(info.value)
    assert "Linear(in_features=4, out_features=5, bias=True)" in msg
    assert "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)" in msg
    with pytest.raises(RuntimeError, match=r"shapes cannot be multiplied \(2x3 and 4x5\)"):
        nn.functional.linear(ember.zeros(2, 3), ember.zeros(5, 4))
    with pytest.raises(RuntimeError, match="same dtype"):
        nn.functional.linear(ember.zeros(2, 4, dtype=ember.float64), ember.zeros(5, 4))
    with pytest.raises(RuntimeError, match="input1 size does not match"):
        nn.Bilinear(2, 3, 4)(ember.zeros(1, 3), ember.zeros(1, 3))


def test_linear_forward_reads_what_attribute_access_reads(rng):
    # Linear.forward reads weight and bias from the registry only on nn.Linear itself while both
    # are registered: a subclass's own lookup, a pruned (plain-attribute) weight and a
    # parametrization must still be what the layer multiplies by
    x = ember.tensor(rng.standard_normal((3, 4)))
    w = ember.tensor(rng.standard_normal((5, 4)))

    class Doubled(nn.Linear):  # a subclass that intercepts the registered weight's lookup
        def __getattr__(self, name):
            value = super().__getattr__(name)
            return value * 2 if name == "weight" else value

    layer = Doubled(4, 5).double()
    with ember.no_grad():
        layer._parameters["weight"].copy_(w)
    expect = (x @ (2 * w).T + layer.bias).detach().numpy()
    np.testing.assert_allclose(layer(x).detach().numpy(), expect, rtol=1e-12)

    layer = nn.Linear(4, 5, bias=False).double()
    with ember.no_grad():
        layer.weight.copy_(w)
    nn.utils.prune.custom_from_mask(layer, "weight", ember.tensor(rng.random((5, 4)) > 0.5))
    np.testing.assert_allclose(layer(x).detach().numpy(), (x @ layer.weight.T).detach().numpy(),
                               rtol=1e-12)
    assert "weight" not in layer._parameters

    class Negate(nn.Module):
        def forward(self, t):
            return -t

    layer = nn.Linear(4, 5).double()
    nn.utils.parametrize.register_parametrization(layer, "weight", Negate())
    expect = (x @ -layer.parametrizations.weight.original.T + layer.bias).detach().numpy()
    np.testing.assert_allclose(layer(x).detach().numpy(), expect, rtol=1e-12)


def test_linear_default_init_distribution():
    ember.manual_seed(1)
    layer = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)  # kaiming_uniform_(a=sqrt(5)) gives U(-1/sqrt(fan_in), ...)
    w = layer.weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    np.testing.assert_allclose(w.std(), bound / math.sqrt(3), rtol=0.02)
    b = layer.bias.detach().numpy()
    assert np.abs(b).max() <= bound and abs(b.mean()) < 0.2 * bound
    bil = nn.Bilinear(100, 3, 50)
    assert np.abs(bil.weight.detach().numpy()).max() <= 1 / math.sqrt(100)


def test_linear_dtype_and_zero_features():
    layer = nn.Linear(3, 2, dtype=ember.float64)
    assert layer.weight.dtype == ember.float64
    assert layer(ember.zeros(1, 3, dtype=ember.float64)).dtype == ember.float64
    with pytest.warns(UserWarning, match="zero-element"):  # as torch warns
        empty = nn.Linear(0, 2)
    np.testing.assert_array_equal(empty(ember.zeros(3, 0)).detach().numpy(),
                                  np.broadcast_to(empty.bias.detach().numpy(), (3, 2)))
    assert nn.Linear(3, 2)(ember.zeros(0, 3)).shape == ember.Size([0, 2])


def test_identity_flatten_unflatten():
    x = ember.randn(2, 3, 4)
    assert nn.Identity(1, key=2)(x) is x
    assert nn.Flatten()(x).shape == ember.Size([2, 12])
    assert nn.Flatten(0, 1)(x).shape == ember.Size([6, 4])
    assert nn.Unflatten(2, (2, 2))(x).shape == ember.Size([2, 3, 2, 2])
    y = ember.randn(2, 12, requires_grad=True)
    nn.Unflatten(1, (3, 4))(y).sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), np.ones((2, 12)))
    assert repr(nn.Unflatten(1, [2, 5])) == "Unflatten(dim=1, unflattened_size=[2, 5])"
    assert nn.Unflatten(1, [2, 5])(ember.zeros(3, 10)).shape == (3, 2, 5)
    with pytest.raises(TypeError, match="tuple of ints"):
        nn.Unflatten(1, 5)
