"""Muon's pieces (Newton-Schulz in bfloat16, lr adjustment, argument checks) and
optim.swap_in_optimizer_params_and_state, against torch 2.13."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.optim.muon import zeropower_via_newtonschulz


def test_newton_schulz_orthogonalises():
    rng = np.random.default_rng(0)
    g = rng.standard_normal((6, 4))
    o = zeropower_via_newtonschulz(g, (3.4445, -4.775, 2.0315), 5, 1e-7)
    assert o.shape == (6, 4)
    sv = np.linalg.svd(o, compute_uv=False)
    assert np.all((sv > 0.5) & (sv < 1.5))  # singular values pushed towards 1
    u, _, vt = np.linalg.svd(g, full_matrices=False)
    assert np.trace(o.T @ (u @ vt)) > 3.0   # and the singular vectors kept


@pytest.mark.parity
def test_newton_schulz_matches_torch_bfloat16():
    torch = pytest.importorskip("torch")
    from torch.optim._muon import _zeropower_via_newtonschulz as reference
    rng = np.random.default_rng(1)
    same = 0
    for i in range(60):
        g = rng.standard_normal([(4, 3), (5, 2), (2, 6)][i % 3]) * 10.0 ** rng.uniform(-3, 1)
        ref = reference(torch.tensor(g), (3.4445, -4.775, 2.0315), 5, 1e-7).float().numpy()
        ours = zeropower_via_newtonschulz(g, (3.4445, -4.775, 2.0315), 5, 1e-7)
        np.testing.assert_allclose(ours, ref, rtol=2 ** -7, atol=2 ** -9)
        same += np.array_equal(ours.astype(np.float32), ref)
    assert same >= 58  # bit-identical but for rare accumulation-order roundings


def test_muon_argument_errors():
    w = ember.zeros(2, 2, requires_grad=True)
    with pytest.raises(ValueError, match="only supports 2D parameters"):
        ember.optim.Muon([ember.zeros(3, requires_grad=True)])
    with pytest.raises(ValueError, match="Adjust learning rate function nope"):
        ember.optim.Muon([w], adjust_lr_fn="nope")
    with pytest.raises(ValueError, match="momentum should be >= 0"):
        ember.optim.Muon([w], momentum=-1)
    with pytest.raises(ValueError, match="weight decay should be >= 0"):
        ember.optim.Muon([w], weight_decay=-1)
    with pytest.raises(ValueError, match="less than 100"):
        zeropower_via_newtonschulz(np.ones((2, 2)), (1, 1, 1), 100, 1e-7)
    with pytest.raises(ValueError, match="2D matrix"):
        zeropower_via_newtonschulz(np.ones(2), (1, 1, 1), 5, 1e-7)


def _sgd(lib):
    w = lib.nn.Parameter(lib.ones(2, dtype=lib.float64))
    opt = lib.optim.SGD([w], lr=0.5, momentum=0.9)
    w.grad = lib.ones(2, dtype=lib.float64)
    opt.step()
    return w, opt


@pytest.mark.parity
def test_swap_in_matches_torch():
    torch = pytest.importorskip("torch")
    results = []
    for lib in (ember, torch):
        w, opt = _sgd(lib)
        copy = w.detach().clone()
        copy.grad = lib.full((2,), 2.0, dtype=lib.float64)
        sd = opt.state_dict()
        sd["param_groups"][0]["lr"] = 0.1
        with lib.optim.swap_in_optimizer_params_and_state(opt, {"w": copy}, sd):
            assert opt.param_groups[0]["lr"] == 0.1 and opt.param_groups[0]["params"][0] is copy
            opt.step()
        assert opt.param_groups[0]["lr"] == 0.5 and opt.param_groups[0]["params"][0] is w
        results.append((w.tolist(), copy.tolist(),
                        sd["state"][0]["momentum_buffer"].tolist(),
                        opt.state[w]["momentum_buffer"].tolist()))
    np.testing.assert_allclose(np.array(results[0]), np.array(results[1]), rtol=1e-15)


def test_swap_in_errors():
    w = ember.nn.Parameter(ember.ones(2))
    opt = ember.optim.SGD([w], lr=0.5, momentum=0.9)
    swap = ember.optim.swap_in_optimizer_params_and_state
    with pytest.raises(RuntimeError, match="initialized optimizer state"):
        with swap(opt, {"w": w}, opt.state_dict()):
            pass
    w.grad = ember.ones(2)
    opt.step()
    sd = opt.state_dict()
    with pytest.raises(RuntimeError, match="match optimizer.param_groups ordering"):
        with swap(opt, {}, sd):
            pass
    sd["state"][7] = {}
    with pytest.raises(RuntimeError, match="extra keys \\[7\\]"):
        with swap(opt, {"w": w}, sd):
            pass
    with pytest.raises(RuntimeError, match="state_dict-shaped"):
        with swap(opt, {"w": w}, [1]):
            pass


def test_lr_scheduler_exports_inf():
    import math
    assert ember.optim.lr_scheduler.inf == math.inf
