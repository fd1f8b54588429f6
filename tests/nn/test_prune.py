"""nn.utils.prune against torch: masks, reparametrization, combination, removal."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.nn.utils import prune

torch = pytest.importorskip("torch")
tprune = pytest.importorskip("torch.nn.utils.prune")

W = np.random.default_rng(0).standard_normal((6, 5)).astype(np.float32)


def _pair():
    layers = []
    for lib in (ember, torch):
        layer = lib.nn.Linear(5, 6)
        with lib.no_grad():
            layer.weight.copy_(lib.tensor(W))
        layers.append(layer)
    return layers


def _same_mask(ours, ref):
    np.testing.assert_array_equal(ours.weight_mask.numpy(), ref.weight_mask.numpy())
    np.testing.assert_allclose(ours.weight.detach().numpy(), ref.weight.detach().numpy())


@pytest.mark.parity
@pytest.mark.parametrize("steps", [
    [("l1_unstructured", dict(amount=0.3))],
    [("l1_unstructured", dict(amount=7))],
    [("ln_structured", dict(amount=2, n=2, dim=0))],
    [("ln_structured", dict(amount=0.4, n=1, dim=1))],
    [("l1_unstructured", dict(amount=0.3)), ("ln_structured", dict(amount=1, n=2, dim=0))],
    [("ln_structured", dict(amount=1, n=2, dim=1)), ("l1_unstructured", dict(amount=5))],
])
def test_deterministic_methods_match_torch(steps):
    ours, ref = _pair()
    for name, kwargs in steps:
        getattr(prune, name)(ours, "weight", **kwargs)
        getattr(tprune, name)(ref, "weight", **kwargs)
        _same_mask(ours, ref)
    assert sorted(ours.state_dict()) == sorted(ref.state_dict())


@pytest.mark.parity
def test_global_and_custom_mask_match_torch():
    ours, ref = _pair()
    ours2, ref2 = _pair()
    prune.global_unstructured([(ours, "weight"), (ours2, "weight")],
                              pruning_method=prune.L1Unstructured, amount=0.5)
    tprune.global_unstructured([(ref, "weight"), (ref2, "weight")],
                                             pruning_method=tprune.L1Unstructured,
                                             amount=0.5)
    _same_mask(ours, ref)
    mask = (np.arange(30).reshape(6, 5) % 3 == 0).astype(np.float32)
    a, b = _pair()
    prune.custom_from_mask(a, "weight", ember.tensor(mask))
    tprune.custom_from_mask(b, "weight", torch.tensor(mask))
    _same_mask(a, b)


def test_forward_uses_mask_gradient_flows_to_orig_and_remove_is_permanent():
    layer = prune.l1_unstructured(ember.nn.Linear(5, 6), "weight", amount=0.5)
    layer(ember.randn(3, 5)).sum().backward()
    grad = layer.weight_orig.grad.numpy()
    assert (grad[layer.weight_mask.numpy() == 0] == 0).all()
    assert prune.is_pruned(layer)
    prune.remove(layer, "weight")
    assert not prune.is_pruned(layer)
    assert isinstance(layer.weight, ember.nn.Parameter)
    assert int((layer.weight == 0).sum()) == 15
    with pytest.raises(ValueError, match="has to be pruned before"):
        prune.remove(layer, "weight")


def test_random_methods_prune_the_right_amount():
    ember.manual_seed(0)
    layer = prune.random_unstructured(ember.nn.Linear(5, 6), "weight", amount=0.4)
    assert int((layer.weight_mask == 0).sum()) == 12
    layer = prune.random_structured(ember.nn.Linear(5, 6), "weight", amount=2, dim=0)
    assert (layer.weight_mask.numpy().sum(1) == 0).sum() == 2
    layer = prune.identity(ember.nn.Linear(5, 6), "weight")
    assert bool((layer.weight_mask == 1).all())


def test_invalid_amounts():
    with pytest.raises(ValueError, match="should either be a float in the range"):
        prune.l1_unstructured(ember.nn.Linear(2, 2), "weight", amount=1.5)
    with pytest.raises(ValueError, match="should be smaller than the number"):
        prune.l1_unstructured(ember.nn.Linear(2, 2), "weight", amount=5)
    with pytest.raises(TypeError, match="Invalid type for amount"):
        prune.l1_unstructured(ember.nn.Linear(2, 2), "weight", amount="half")


def test_structured_pruning_checks_its_tensor_and_takes_any_norm_order():
    """ln_structured takes every torch.norm order ('fro', 'nuc' too); structured methods
    refuse a 1-D tensor (ValueError) and a dim outside it (IndexError), as torch does."""
    conv = ember.nn.Conv1d(3, 4, 2)
    with ember.no_grad():
        conv.weight.copy_(ember.arange(24.0).reshape(4, 3, 2))
    prune.ln_structured(conv, "weight", amount=1, n="fro", dim=0)
    np.testing.assert_array_equal(conv.weight_mask.sum((1, 2)).numpy(), [0.0, 6.0, 6.0, 6.0])
    lin = ember.nn.Linear(3, 2)
    with pytest.raises(ValueError, match="ln_structured: Structured pruning .* 1 dims"):
        prune.ln_structured(lin, "bias", amount=1, n=2, dim=0)
    with pytest.raises(IndexError, match=r"random_structured: Invalid index 2 .*\[-2, 1\]"):
        prune.random_structured(lin, "weight", amount=1, dim=2)
