"""Rprop, ASGD, SparseAdam, Adafactor and swa_utils against torch on identical problems."""

from __future__ import annotations

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

CASES = [
    ("Rprop", {}), ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.2)}),
    ("Rprop", {"maximize": True}),
    ("ASGD", {}), ("ASGD", {"lr": 0.05, "t0": 2, "weight_decay": 0.1, "lambd": 1e-2}),
    ("ASGD", {"maximize": True, "t0": 0}),
    ("Adafactor", {}), ("Adafactor", {"lr": 0.05, "weight_decay": 0.1, "d": 2.0}),
    ("Adafactor", {"maximize": True, "eps": (1e-20, 1e-2), "beta2_decay": -0.5}),
]


def _run(lib, name, kwargs, shapes, steps=6):
    rng = np.random.default_rng(0)
    params = [lib.tensor(rng.standard_normal(s), requires_grad=True) for s in shapes]
    opt = getattr(lib.optim, name)(params, **kwargs)
    for _ in range(steps):
        opt.zero_grad()
        loss = sum(((p - 0.3) ** 2 * (p + 1.5)).sum() for p in params)
        loss.backward()
        opt.step()
    return [p.detach().numpy() for p in params], opt


@pytest.mark.parity
@pytest.mark.parametrize("name, kwargs", CASES)
def test_matches_torch_over_steps(name, kwargs):
    shapes = [(3, 4), (5,), (2, 3, 2)]
    ours, _ = _run(ember, name, kwargs, shapes)
    ref, _ = _run(torch, name, kwargs, shapes)
    for a, b in zip(ours, ref, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


@pytest.mark.parity
@pytest.mark.parametrize("name, kwargs", CASES[::3])
def test_state_dict_keys_match_torch_and_round_trip(name, kwargs):
    _, ours = _run(ember, name, kwargs, [(2, 3)], steps=2)
    _, ref = _run(torch, name, kwargs, [(2, 3)], steps=2)
    assert sorted(ours.state_dict()["state"][0]) == sorted(ref.state_dict()["state"][0])
    p = ember.zeros(2, 3, requires_grad=True)
    fresh = getattr(ember.optim, name)([p], **kwargs)
    fresh.load_state_dict(ours.state_dict())
    assert float(fresh.state[p]["step"]) == 2.0


@pytest.mark.parametrize("name, bad, match", [
    ("Rprop", {"etas": (1.5, 1.2)}, "Invalid eta values"),
    ("Adafactor", {"d": 0.5}, "Clipping threshold"),
    ("Adafactor", {"beta2_decay": 0.5}, "beta2_decay"),
    ("ASGD", {"lr": -1.0}, "Invalid learning rate"),
])
def test_invalid_arguments_raise(name, bad, match):
    with pytest.raises(ValueError, match=match):
        getattr(ember.optim, name)([ember.zeros(2, requires_grad=True)], **bad)


@pytest.mark.parity
def test_sparse_adam_matches_torch_on_embedding_rows():
    rng = np.random.default_rng(1)
    table = rng.standard_normal((6, 3))
    batches = [np.array([0, 2, 2]), np.array([5, 1]), np.array([2, 4])]
    results = []
    for lib in (ember, torch):
        emb = lib.nn.Embedding(6, 3, sparse=True)
        with lib.no_grad():
            emb.weight.copy_(lib.tensor(table))
        opt = lib.optim.SparseAdam(emb.parameters(), lr=0.1)
        for idx in batches:
            opt.zero_grad()
            (emb(lib.tensor(idx)) ** 2).sum().backward()
            opt.step()
        results.append(emb.weight.detach().numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6)


@pytest.mark.parity
@pytest.mark.parametrize("strategy", ["cos", "linear"])
def test_swalr_matches_torch(strategy):
    lrs = []
    for lib in (ember, torch):
        opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.5)
        sched = lib.optim.swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=3,
                                          anneal_strategy=strategy)
        seq = []
        for _ in range(6):
            opt.step()
            sched.step()
            seq.append(sched.get_last_lr()[0])
        lrs.append(seq)
    np.testing.assert_allclose(lrs[0], lrs[1], rtol=1e-12)


@pytest.mark.parity
def test_averaged_model_swa_and_ema_match_torch():
    rng = np.random.default_rng(2)
    snapshots = [rng.standard_normal((2, 3)) for _ in range(4)]
    out = {}
    for lib in (ember, torch):
        model = lib.nn.Linear(3, 2, bias=False)
        swa = lib.optim.swa_utils.AveragedModel(model)
        ema = lib.optim.swa_utils.AveragedModel(
            model, multi_avg_fn=lib.optim.swa_utils.get_ema_multi_avg_fn(0.9))
        for w in snapshots:
            with lib.no_grad():
                model.weight.copy_(lib.tensor(w, dtype=lib.float32))
            swa.update_parameters(model)
            ema.update_parameters(model)
        out[lib.__name__] = (swa.module.weight.detach().numpy(), ema.module.weight.detach().numpy(),
                             int(swa.n_averaged))
    np.testing.assert_allclose(out["ember"][0], np.mean(snapshots, 0), rtol=1e-6)
    for a, b in zip(out["ember"], out["torch"], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_update_bn_recomputes_running_statistics():
    ember.manual_seed(0)
    model = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4))
    data = [ember.randn(8, 3) * 2 + 1 for _ in range(3)]
    ember.optim.swa_utils.update_bn(data, model)
    feats = model[0](ember.cat(data)).detach().numpy()
    np.testing.assert_allclose(model[1].running_mean.numpy(), feats.mean(0), rtol=1e-5,
                               atol=1e-6)
    assert model[1].momentum == 0.1
