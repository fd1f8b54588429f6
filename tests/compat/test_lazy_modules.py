"""Lazy layers (nn.LazyLinear, LazyConv*, LazyBatchNorm*): shapes inferred at the first forward,
parameters materialized in place (an optimizer built before still trains them), the module
turned into its eager class, and values matching torch with the same parameters."""
from __future__ import annotations

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity

CASES = [
    ("LazyLinear", (4,), (2, 5), "Linear"),
    ("LazyConv1d", (3, 2), (2, 4, 6), "Conv1d"),
    ("LazyConv2d", (3, 3), (2, 2, 5, 5), "Conv2d"),
    ("LazyConv2d", (3, 3), (2, 5, 5), "Conv2d"),             # unbatched input
    ("LazyConvTranspose2d", (3, 2), (1, 2, 3, 3), "ConvTranspose2d"),
    ("LazyBatchNorm1d", (), (4, 3), "BatchNorm1d"),
    ("LazyBatchNorm2d", (), (4, 3, 2, 2), "BatchNorm2d"),
]


@pytest.mark.parametrize("name,args,shape,becomes", CASES)
def test_lazy_layer_infers_shapes_and_matches_torch(name, args, shape, becomes, rng):
    ours, ref = getattr(ember.nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(ours) == repr(ref).replace("torch", "ember")
    x = rng.standard_normal(shape).astype(np.float32)
    out = ours(ember.tensor(x))
    ref_out = ref(torch.tensor(x))
    assert type(ours).__name__ == becomes == type(ref).__name__
    assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in ref.state_dict().items()}
    with torch.no_grad():   # same parameters on both sides, then the same output
        for (_, p), (_, q) in zip(ours.named_parameters(), ref.named_parameters(), strict=True):
            q.copy_(torch.tensor(p.detach().numpy()))
    ours.eval()
    ref.eval()
    np.testing.assert_allclose(ours(ember.tensor(x)).detach().numpy(),
                               ref(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    assert tuple(out.shape) == tuple(ref_out.shape)


def test_lazy_parameters_stay_the_objects_an_optimizer_holds():
    net = ember.nn.Sequential(ember.nn.LazyLinear(3), ember.nn.ReLU(), ember.nn.LazyLinear(1))
    opt = ember.optim.SGD(net.parameters(), lr=0.1)
    held = list(opt.param_groups[0]["params"])
    x, y = ember.randn(8, 5), ember.randn(8, 1)
    loss0 = ((net(x) - y) ** 2).mean()
    assert [p is q for p, q in zip(held, net.parameters(), strict=True)] == [True] * 4
    for _ in range(20):
        opt.zero_grad()
        loss = ((net(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
    assert loss.item() < loss0.item()
    assert all(type(p) is ember.nn.Parameter for p in net.parameters())


def test_lazy_classes_live_where_torch_defines_them():
    from ember.nn.modules.batchnorm import LazyBatchNorm2d
    from ember.nn.modules.conv import LazyConv2d
    from ember.nn.modules.lazy import LazyModuleMixin
    from ember.nn.modules.linear import LazyLinear
    assert issubclass(LazyLinear, LazyModuleMixin) and LazyConv2d.cls_to_become is ember.nn.Conv2d
    assert LazyBatchNorm2d.cls_to_become is ember.nn.BatchNorm2d


def test_lazy_model_loads_a_checkpoint_before_its_first_forward(tmp_path):
    # d2l's read-write chapter: save a trained lazy MLP, build a fresh lazy one, load, compare
    def make():
        return ember.nn.Sequential(ember.nn.LazyLinear(4), ember.nn.ReLU(), ember.nn.LazyLinear(2))
    x = ember.randn(3, 5)
    trained = make()
    y = trained(x)
    ember.save(trained.state_dict(), tmp_path / "mlp.params")
    clone = make()
    clone.load_state_dict(ember.load(tmp_path / "mlp.params"))
    np.testing.assert_array_equal(clone(x).detach().numpy(), y.detach().numpy())
    assert type(clone[0]).__name__ == "Linear" and clone[0].in_features == 5


def test_uninitialized_parameter_repr_is_torchs_placeholder():
    """printing a lazy module's weight before its first forward (no values to show)."""
    m = ember.nn.LazyLinear(3)
    assert repr(m.weight) == str(m.weight) == "<UninitializedParameter>"
    assert repr(ember.nn.parameter.UninitializedBuffer()) == "<UninitializedBuffer>"
    m(ember.zeros(1, 2))
    assert repr(m.weight).startswith("Parameter containing:\ntensor(")
