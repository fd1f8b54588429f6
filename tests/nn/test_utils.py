"""nn.utils: gradient clipping, parameter vectors, weight_norm, spectral_norm, fusion."""
from __future__ import annotations

import math

import numpy as np
import pytest

import ember
from ember import nn
from ember.nn import utils


def _torch():
    return pytest.importorskip("torch", reason="torch oracle not installed")


def _params_with_grads(rng, shapes):
    params = []
    for s in shapes:
        p = nn.Parameter(ember.zeros(*s))
        p.grad = ember.tensor(rng.standard_normal(s).astype(np.float32))
        params.append(p)
    return params


@pytest.mark.parity
@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf])
def test_clip_grad_norm_matches_torch(rng, norm_type):
    torch = _torch()
    shapes = [(3, 4), (5,), (2, 2, 2)]
    ours = _params_with_grads(rng, shapes)
    theirs = []
    for p in ours:
        t = torch.nn.Parameter(torch.zeros(*p.shape))
        t.grad = torch.from_numpy(p.grad.numpy().copy())
        theirs.append(t)
    total = utils.clip_grad_norm_(ours, 0.5, norm_type=norm_type)
    ref = torch.nn.utils.clip_grad_norm_(theirs, 0.5, norm_type=norm_type)
    np.testing.assert_allclose(total.item(), ref.item(), rtol=1e-5)
    for p, t in zip(ours, theirs):
        np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_clip_grad_norm_small_norm_unchanged_and_nonfinite(rng):
    params = _params_with_grads(rng, [(3,)])
    before = params[0].grad.numpy().copy()
    total = utils.clip_grad_norm_(params, 100.0)
    np.testing.assert_allclose(total.item(), np.linalg.norm(before), rtol=1e-6)
    np.testing.assert_allclose(params[0].grad.numpy(), before, rtol=1e-6)
    params[0].grad = ember.tensor([np.inf, 1.0, 0.0])
    with pytest.raises(RuntimeError, match="non-finite"):
        utils.clip_grad_norm_(params, 1.0, error_if_nonfinite=True)
    assert utils.clip_grad_norm_([nn.Parameter(ember.zeros(2))], 1.0).item() == 0.0
    single = _params_with_grads(rng, [(4,)])[0]
    assert utils.clip_grad_norm_(single, 1.0, foreach=True).item() > 0


def test_clip_grad_value(rng):
    params = _params_with_grads(rng, [(10,), (3, 3)])
    utils.clip_grad_value_(params, 0.3)
    for p in params:
        assert np.abs(p.grad.numpy()).max() <= 0.3 + 1e-7


def test_parameters_vector_round_trip():
    model = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    vec = utils.parameters_to_vector(model.parameters())
    assert vec.shape == ember.Size([3 * 2 + 2 + 2 + 1])
    new = ember.arange(float(vec.numel()))
    utils.vector_to_parameters(new, model.parameters())
    np.testing.assert_array_equal(model[0].weight.detach().numpy(),
                                  np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(model[1].bias.detach().numpy(), [10.0])
    assert isinstance(model[0].weight, nn.Parameter) and model[0].weight.requires_grad
    with pytest.raises(TypeError, match="expected torch.Tensor"):
        utils.vector_to_parameters([1.0], model.parameters())
    with pytest.raises(RuntimeError, match="expected a 1-D vector of at least 11 elements"):
        utils.vector_to_parameters(ember.zeros(3), model.parameters())


@pytest.mark.parity
@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_matches_torch(rng, dim):
    torch = _torch()
    ours = utils.weight_norm(nn.Linear(4, 3), dim=dim)
    theirs = torch.nn.utils.weight_norm(torch.nn.Linear(4, 3), dim=dim)
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    theirs.load_state_dict({k: torch.from_numpy(v.numpy().copy())
                            for k, v in ours.state_dict().items()})
    a = rng.standard_normal((5, 4)).astype(np.float32)
    y, ref = ours(ember.tensor(a)), theirs(torch.from_numpy(a))
    np.testing.assert_allclose(y.detach().numpy(), ref.detach().numpy(), rtol=1e-5, atol=1e-6)
    y.sum().backward()
    ref.sum().backward()
    for name in ("weight_g", "weight_v"):
        np.testing.assert_allclose(getattr(ours, name).grad.numpy(),
                                   getattr(theirs, name).grad.numpy(), rtol=1e-4, atol=1e-6)
    weight = ours.weight.detach().numpy().copy()
    utils.remove_weight_norm(ours)
    assert isinstance(ours.weight, nn.Parameter)
    np.testing.assert_allclose(ours.weight.detach().numpy(), weight, rtol=1e-6)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        utils.remove_weight_norm(ours)


def test_weight_norm_twice_raises():
    m = utils.weight_norm(nn.Linear(2, 2))
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
        utils.weight_norm(m)


@pytest.mark.parity
def test_spectral_norm_train_and_eval_match_torch(rng):
    torch = _torch()
    ours = utils.spectral_norm(nn.Linear(5, 4), n_power_iterations=2)
    theirs = torch.nn.utils.spectral_norm(torch.nn.Linear(5, 4), n_power_iterations=2)
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    theirs.load_state_dict({k: torch.from_numpy(v.numpy().copy())
                            for k, v in ours.state_dict().items()})
    a = rng.standard_normal((3, 5)).astype(np.float32)
    for mode in ("train", "eval"):
        getattr(ours, mode)(), getattr(theirs, mode)()
        y, ref = ours(ember.tensor(a)), theirs(torch.from_numpy(a))
        np.testing.assert_allclose(y.detach().numpy(), ref.detach().numpy(), rtol=1e-5,
                                   atol=1e-6, err_msg=mode)
        np.testing.assert_allclose(ours.weight_u.numpy(), theirs.weight_u.numpy(), rtol=1e-5,
                                   atol=1e-6)
    ours.train(), theirs.train()
    ours(ember.tensor(a)).sum().backward()
    theirs(torch.from_numpy(a)).sum().backward()
    np.testing.assert_allclose(ours.weight_orig.grad.numpy(), theirs.weight_orig.grad.numpy(),
                               rtol=1e-4, atol=1e-6)


def test_spectral_norm_converges_to_unit_spectral_norm():
    m = utils.spectral_norm(nn.Linear(6, 4), n_power_iterations=5)
    for _ in range(10):
        m(ember.zeros(1, 6))
    sigma = np.linalg.svd(m.weight.detach().numpy().astype(np.float64), compute_uv=False)[0]
    assert abs(sigma - 1) < 1e-3
    utils.remove_spectral_norm(m)
    assert isinstance(m.weight, nn.Parameter) and "weight_u" not in m._buffers
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found"):
        utils.remove_spectral_norm(m)


def test_fuse_conv_bn_eval_equals_sequential(rng):
    conv = nn.Conv2d(3, 4, 3, padding=1)
    bn = nn.BatchNorm2d(4)
    with ember.no_grad():
        bn.weight.copy_(ember.tensor(rng.uniform(0.5, 2, 4).astype(np.float32)))
        bn.bias.copy_(ember.tensor(rng.standard_normal(4).astype(np.float32)))
    x = ember.tensor(rng.standard_normal((2, 3, 5, 5)).astype(np.float32))
    bn(conv(x))  # give the running statistics non-trivial values
    conv.eval(), bn.eval()
    fused = utils.fuse_conv_bn_eval(conv, bn)
    np.testing.assert_allclose(fused(x).detach().numpy(), bn(conv(x)).detach().numpy(),
                               rtol=1e-4, atol=1e-5)
    assert fused is not conv and isinstance(fused.weight, nn.Parameter)
    no_bias = nn.Conv2d(3, 4, 1, bias=False).eval()
    fused2 = utils.fuse_conv_bn_eval(no_bias, bn)
    np.testing.assert_allclose(fused2(x).detach().numpy(), bn(no_bias(x)).detach().numpy(),
                               rtol=1e-4, atol=1e-5)
    bn.train()
    with pytest.raises(AssertionError, match="Fusion only for eval"):
        utils.fuse_conv_bn_eval(conv, bn)


def test_fuse_linear_bn_eval(rng):
    lin, bn = nn.Linear(3, 4), nn.BatchNorm1d(4)
    x = ember.tensor(rng.standard_normal((6, 3)).astype(np.float32))
    bn(lin(x))
    lin.eval(), bn.eval()
    fused = utils.fuse_linear_bn_eval(lin, bn)
    np.testing.assert_allclose(fused(x).detach().numpy(), bn(lin(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_weight_norm_is_deprecated_as_in_torch():
    """torch 2.13 warns that the hook form is deprecated (TCN's models call it)."""
    with pytest.warns(FutureWarning, match="weight_norm` is deprecated in favor of"):
        utils.weight_norm(nn.Linear(2, 3))


def test_vector_to_parameters_longer_vector_leaves_the_tail_unused():
    """As torch: the leading elements fill the parameters; a shorter vector is refused."""
    ps = [nn.Parameter(ember.zeros(2, 2)), nn.Parameter(ember.zeros(3))]
    utils.vector_to_parameters(ember.arange(10.0), ps)
    np.testing.assert_array_equal(ps[0].detach().numpy(), [[0.0, 1.0], [2.0, 3.0]])
    np.testing.assert_array_equal(ps[1].detach().numpy(), [4.0, 5.0, 6.0])
    with pytest.raises(RuntimeError, match=r"at least 7 elements.*got shape \(6,\)"):
        utils.vector_to_parameters(ember.arange(6.0), ps)


def test_parameters_to_vector_of_nothing_is_a_value_error():
    with pytest.raises(ValueError, match="parameters_to_vector: expected a non-empty list"):
        utils.parameters_to_vector([])


def test_channels_last_contiguity_only_at_its_rank():
    """A 1-D bias is never channels-last contiguous (torch's answer at any rank but 4 / 5)."""
    conv = utils.convert_conv2d_weight_memory_format(nn.Conv2d(3, 4, 2), ember.channels_last)
    assert conv.weight.is_contiguous(memory_format=ember.channels_last)
    assert not conv.bias.is_contiguous(memory_format=ember.channels_last)
    assert not ember.zeros(2, 3, 4, 5).is_contiguous(memory_format=ember.channels_last_3d)
    assert ember.zeros(2, 3, 4, 5, 6).is_contiguous(memory_format=ember.channels_last_3d)
