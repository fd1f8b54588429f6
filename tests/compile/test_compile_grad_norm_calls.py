"""get_total_norm + clip_grads_with_norm_ inside a compiled training step (issue 19): recorded as
calls whose gradient arguments are read again at each replay (NOTE [Gradient-norm calls in a
captured step] in ember/_dynamo/grad_calls.py)."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import ember
from ember import nn
from ember.nn.utils import clip_grads_with_norm_, get_total_norm


def _model():
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))


def _make_step(model, opt, norm_type):
    def step(x, y):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        grads = [p.grad for p in model.parameters() if p.grad is not None]
        norm = get_total_norm(grads, norm_type, error_if_nonfinite=True)
        clip_grads_with_norm_(model.parameters(), max_norm=0.2, total_norm=norm)
        opt.step()
        return loss, norm
    return step


@pytest.mark.parametrize("norm_type", [2.0, float("inf")])
@pytest.mark.parametrize("opt_name", ["sgd", "adam"])
def test_compiled_step_with_norm_halves_equals_eager(opt_name, norm_type):
    make_opt = {"sgd": lambda ps: ember.optim.SGD(ps, lr=0.5, momentum=0.9),
                "adam": lambda ps: ember.optim.Adam(ps, lr=0.05)}[opt_name]
    model = _model()
    twin = copy.deepcopy(model)
    compiled = ember.compile(_make_step(model, make_opt(model.parameters()), norm_type))
    eager = _make_step(twin, make_opt(twin.parameters()), norm_type)
    rng = np.random.default_rng(1)
    norms = []
    for _ in range(5):
        x = ember.from_numpy(rng.standard_normal((6, 4)).astype(np.float32))
        y = ember.from_numpy(rng.integers(0, 3, 6).astype(np.int64))
        (loss_c, norm_c), (loss_e, norm_e) = compiled(x, y), eager(x, y)
        assert loss_c.item() == pytest.approx(loss_e.item(), rel=1e-6)
        assert norm_c.item() == pytest.approx(norm_e.item(), rel=1e-6)
        norms.append(norm_c.item())
        for p, q in zip(model.parameters(), twin.parameters(), strict=True):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5,
                                       atol=1e-7)
    assert len(set(norms)) == 5  # each replay computes this step's norm
    assert compiled.last_breaks == [] and compiled.stats["hits"] == 4
    assert compiled.stats["recompiles"] == 0 and compiled.stats["eager"] == 0


def test_norm_arguments_computed_in_the_call_replay_and_others_break():
    model = _model()

    def of_values(x):
        h = model(x)
        return get_total_norm([h, h * 2], 1.0)  # values of the call: read at each replay

    compiled = ember.compile(of_values)
    for seed in range(3):
        x = ember.from_numpy(np.random.default_rng(seed).standard_normal((2, 4)).astype(
            np.float32))
        assert compiled(x).item() == pytest.approx(of_values(x).item(), rel=1e-6)
    assert compiled.stats["hits"] == 2 and compiled.last_breaks == []

    def made_by_numpy(x):
        model(x).sum().backward()
        return get_total_norm([ember.from_numpy(np.ones(3, np.float32))])

    report = ember._dynamo.explain(made_by_numpy)(ember.randn(2, 4))
    assert report.graph_break_count == 1
    assert "get_total_norm() with arguments the replay cannot rebuild" in \
        report.break_reasons[0].reason
