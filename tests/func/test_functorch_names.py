"""ember._functorch: the modules functorch's package imports (its old transform names and
make_functional API), so `import functorch` works with ember standing in for torch."""
import numpy as np
import pytest

import ember
from ember import nn
from ember._functorch import deprecated as ft
from ember._functorch.make_functional import FunctionalModuleWithBuffers


def _net():
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))


def test_make_functional_with_buffers_runs_a_copy():
    net = _net().eval()
    x = ember.randn(5, 3)
    with pytest.warns(FutureWarning, match="make_functional_with_buffers is deprecated"):
        fmodel, params, buffers = ft.make_functional_with_buffers(net)
    assert isinstance(fmodel, FunctionalModuleWithBuffers)
    assert len(params) == 6 and len(buffers) == 3
    assert all(p.requires_grad for p in params)
    assert not any(p is q for p in params for q in net.parameters())
    np.testing.assert_allclose(fmodel(params, buffers, x).detach().numpy(),
                               net(x).detach().numpy(), rtol=1e-6)
    doubled = [p * 2 for p in params]
    np.testing.assert_allclose(fmodel(doubled, buffers, x).detach().numpy(),
                               ember.func.functional_call(
                                   net, dict(zip([n for n, _ in net.named_parameters()],
                                                 doubled, strict=True)), (x,)).detach().numpy(),
                               rtol=1e-6)
    with pytest.raises(RuntimeError, match="expected 6 params"):
        fmodel(params[:2], buffers, x)


def test_make_functional_refuses_buffers_and_can_disable_tracking():
    with pytest.warns(FutureWarning), pytest.raises(RuntimeError, match="has buffers"):
        ft.make_functional(_net())
    with pytest.warns(FutureWarning):
        fmodel, params = ft.make_functional(nn.Linear(3, 2), disable_autograd_tracking=True)
    assert not any(p.requires_grad for p in params)
    assert fmodel(params, ember.ones(1, 3)).shape == (1, 2)


def test_jvp_through_functional_model_matches_the_linear_map():
    model = nn.Linear(5, 5)
    x = ember.randn(16, 5)
    tangents = tuple(ember.rand_like(p) for p in model.parameters())
    with pytest.warns(FutureWarning):
        func, params, buffers = ft.make_functional_with_buffers(model)
        out, jvp_out = ft.jvp(lambda ps: func(ps, buffers, x), (params,), (tangents,))
    np.testing.assert_allclose(jvp_out.numpy(), (x @ tangents[0].T + tangents[1]).numpy(),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out.detach().numpy(), model(x).detach().numpy(), rtol=1e-6)


def test_combine_state_for_ensemble_vmaps_like_a_loop():
    models = [nn.Linear(3, 2) for _ in range(4)]
    x = ember.randn(6, 3)
    with pytest.warns(FutureWarning):
        fmodel, params, buffers = ft.combine_state_for_ensemble(models)
        out = ft.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x)
    assert [tuple(p.shape) for p in params] == [(4, 2, 3), (4, 2)]
    want = ember.stack([m(x) for m in models]).detach()
    np.testing.assert_allclose(out.detach().numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    with pytest.warns(FutureWarning), pytest.raises(RuntimeError, match="same class"):
        ft.combine_state_for_ensemble([nn.Linear(3, 2), nn.Tanh()])


def test_make_fx_is_the_proxy_tensor_one():
    from ember._functorch.python_key import make_fx
    from ember.fx.experimental.proxy_tensor import make_fx as fx_make_fx
    assert make_fx is fx_make_fx
    gm = make_fx(lambda x: x * 3)(ember.ones(2))
    np.testing.assert_array_equal(gm(ember.tensor([1.0, 2.0])).numpy(), [3.0, 6.0])


@pytest.mark.parity
def test_functorch_names_match_torch():
    pytest.importorskip("torch")
    import torch._functorch.deprecated as tft
    import torch._functorch.make_functional as tmf
    import torch._functorch.python_key as tpk

    import ember._functorch.make_functional as emf
    import ember._functorch.python_key as epk
    for mine, theirs in ((ft, tft), (emf, tmf), (epk, tpk)):
        wanted = {"vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian",
                  "functionalize", "make_functional", "make_functional_with_buffers",
                  "combine_state_for_ensemble", "FunctionalModule",
                  "FunctionalModuleWithBuffers", "make_fx"}
        for name in wanted & set(dir(theirs)):
            assert hasattr(mine, name), name
