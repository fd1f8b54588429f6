"""nn.utils.parametrize and nn.utils.parametrizations against torch."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember import nn
from ember.nn.utils import parametrizations as P
from ember.nn.utils import parametrize

torch = pytest.importorskip("torch")


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).mT


class Scale(nn.Module):
    def forward(self, X):
        return 2 * X

    def right_inverse(self, X):
        return X / 2


def test_register_chain_assign_and_remove():
    layer = nn.Linear(3, 3)
    original = layer.weight.detach().clone()
    parametrize.register_parametrization(layer, "weight", Scale())
    np.testing.assert_allclose(layer.weight.detach().numpy(), original.numpy(), rtol=1e-6)
    np.testing.assert_allclose(layer.parametrizations.weight.original.detach().numpy(),
                               original.numpy() / 2, rtol=1e-6)
    parametrize.register_parametrization(layer, "weight", Symmetric())
    w = layer.weight
    assert bool((w == w.mT).all())
    assert parametrize.is_parametrized(layer) and parametrize.is_parametrized(layer, "weight")
    assert not parametrize.is_parametrized(layer, "bias")
    assert parametrize.type_before_parametrizations(layer) is nn.Linear
    assert type(nn.Linear(2, 2)) is nn.Linear  # other instances untouched
    layer.parametrizations.weight.original.grad = None
    layer(ember.randn(4, 3)).sum().backward()
    assert layer.parametrizations.weight.original.grad.shape == (3, 3)
    parametrize.remove_parametrizations(layer, "weight")
    assert type(layer) is nn.Linear and isinstance(layer.weight, nn.Parameter)
    assert bool((layer.weight == layer.weight.mT).all())


def test_assignment_goes_through_right_inverse_and_cached_reuses():
    layer = parametrize.register_parametrization(nn.Linear(2, 2), "weight", Scale())
    layer.weight = ember.ones(2, 2)
    np.testing.assert_allclose(layer.parametrizations.weight.original.detach().numpy(), 0.5)
    with parametrize.cached():
        assert layer.weight is layer.weight
    assert layer.weight is not layer.weight


def test_errors():
    with pytest.raises(ValueError, match="does not have a parameter, a buffer"):
        parametrize.register_parametrization(nn.Linear(2, 2), "nope", Scale())
    with pytest.raises(ValueError, match="does not have a parametrization"):
        parametrize.remove_parametrizations(nn.Linear(2, 2), "weight")

    class Shrink(nn.Module):
        def forward(self, X):
            return X[:1]
    with pytest.raises(ValueError, match="may not change the dtype or shape"):
        parametrize.register_parametrization(nn.Linear(2, 2), "weight", Shrink())


@pytest.mark.parity
@pytest.mark.parametrize("shape, omap", [((4, 4), None), ((5, 3), None), ((3, 5), None),
                                         ((4, 4), "cayley"), ((4, 4), "householder")])
def test_orthogonal_matches_torch_at_registration(shape, omap):
    w = np.random.default_rng(0).standard_normal(shape)
    results = []
    for lib, mod in ((ember, P), (torch, torch.nn.utils.parametrizations)):
        layer = lib.nn.Linear(shape[1], shape[0]).double()
        with lib.no_grad():
            layer.weight.copy_(lib.tensor(w))
        mod.orthogonal(layer, orthogonal_map=omap)
        results.append(layer.weight.detach().numpy())
    ours, ref = results
    k = min(shape)
    gram = ours @ ours.T if shape[0] <= shape[1] else ours.T @ ours
    np.testing.assert_allclose(gram, np.eye(k), atol=1e-10)
    if shape[0] >= shape[1]:  # torch completes wide matrices with a random block
        np.testing.assert_allclose(ours, ref, atol=1e-8)


def test_orthogonal_stays_orthogonal_while_training():
    ember.manual_seed(0)
    layer = P.orthogonal(nn.Linear(4, 4))
    opt = ember.optim.SGD(layer.parameters(), lr=0.1)
    for _ in range(5):
        opt.zero_grad()
        (layer(ember.randn(8, 4)) - 1).pow(2).sum().backward()
        opt.step()
    w = layer.weight.detach().numpy()
    np.testing.assert_allclose(w @ w.T, np.eye(4), atol=1e-5)


@pytest.mark.parity
def test_weight_norm_matches_torch():
    w = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    x = np.random.default_rng(2).standard_normal((2, 4)).astype(np.float32)
    outs = []
    for lib, mod in ((ember, P), (torch, torch.nn.utils.parametrizations)):
        layer = lib.nn.Linear(4, 3)
        with lib.no_grad():
            layer.weight.copy_(lib.tensor(w))
        mod.weight_norm(layer, dim=0)
        assert sorted(layer.state_dict()) == ["bias", "parametrizations.weight.original0",
                                              "parametrizations.weight.original1"]
        y = layer(lib.tensor(x))
        y.sum().backward()
        outs.append((layer.parametrizations.weight.original0.detach().numpy(),
                     layer.parametrizations.weight.original0.grad.numpy(),
                     layer.weight.detach().numpy()))
    for a, b in zip(*outs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_spectral_norm_normalises_the_largest_singular_value():
    ember.manual_seed(0)
    layer = P.spectral_norm(nn.Linear(6, 5))
    for _ in range(20):
        layer(ember.randn(2, 6))
    sigma = np.linalg.svd(layer.weight.detach().numpy(), compute_uv=False)[0]
    assert abs(sigma - 1) < 1e-3
    layer.eval()
    w1 = layer.weight.detach().numpy()
    layer(ember.randn(2, 6))
    np.testing.assert_array_equal(layer.weight.detach().numpy(), w1)  # no iteration in eval
    with pytest.raises(ValueError, match="n_power_iterations to be positive"):
        P.spectral_norm(nn.Linear(2, 2), n_power_iterations=0)


def test_orthogonal_without_trivialization():
    layer = P.orthogonal(nn.Linear(3, 5), orthogonal_map="householder", use_trivialization=False)
    w = layer.weight.detach().numpy()
    np.testing.assert_allclose(w.T @ w, np.eye(3), atol=1e-5)
    # registering takes the raising right_inverse as the identity (as torch): the original
    # is the weight, the parametrized weight orthogonal; assigning to it later raises
    lin = nn.Linear(4, 4)
    w0 = lin.weight.detach().numpy().copy()
    P.orthogonal(lin, orthogonal_map="cayley", use_trivialization=False)
    np.testing.assert_array_equal(lin.parametrizations.weight.original.detach().numpy(), w0)
    w = lin.weight.detach().numpy()
    np.testing.assert_allclose(w.T @ w, np.eye(4), atol=1e-5)
    with pytest.raises(NotImplementedError, match="use_trivialization=False"):
        lin.weight = ember.eye(4)
    with pytest.raises(ValueError, match="Expected a matrix or batch of matrices"):
        P.orthogonal(nn.Linear(4, 4), name="bias")


def test_transfer_parametrizations_shares_the_originals():
    """As torch: the target module's originals are the source's Parameter objects, so
    training either trains both (they were copies before)."""
    src = P.weight_norm(nn.Linear(3, 2))
    dst = parametrize.transfer_parametrizations_and_params(src, nn.Linear(3, 2))
    for i in (0, 1):
        assert (getattr(dst.parametrizations.weight, f"original{i}")
                is getattr(src.parametrizations.weight, f"original{i}"))
    with ember.no_grad():
        src.parametrizations.weight.original1.mul_(2.0)
    np.testing.assert_allclose(dst.weight.detach().numpy(), src.weight.detach().numpy())


def test_weight_norm_parametrization_loads_a_hook_checkpoint():
    """A state_dict saved with the hook-based nn.utils.weight_norm (weight_g, weight_v) loads
    into the parametrized module (torch's compatibility hook); it was refused as missing and
    unexpected keys."""
    old = nn.utils.weight_norm(nn.Linear(3, 2))
    new = P.weight_norm(nn.Linear(3, 2))
    new.load_state_dict(old.state_dict())
    assert list(new.state_dict()) == ["bias", "parametrizations.weight.original0",
                                      "parametrizations.weight.original1"]
    np.testing.assert_allclose(new.weight.detach().numpy(), old.weight.detach().numpy(),
                               rtol=1e-6)
