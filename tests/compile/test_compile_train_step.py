"""ember.compile of a whole training step (zero_grad, forward, loss.backward(), optimizer.step()
inside the compiled function; NOTE [Training-step capture] in ember/_dynamo/train_step.py):
parameters after several steps equal eager's, with one capture and no graph break; the forms
that cannot be replayed fall back to eager with an explained break."""
from __future__ import annotations

import copy
import os
import sys

import numpy as np
import pytest

import ember
from ember import nn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from examples.models.table1 import WORKLOADS


def _mlp():
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))


def _data(n=4, batch=5):
    rng = np.random.default_rng(1)
    return [(ember.from_numpy(rng.standard_normal((batch, 6)).astype(np.float32)),
             ember.from_numpy(rng.integers(0, 3, batch).astype(np.int64))) for _ in range(n)]


def _twins(make_opt):
    model = _mlp()
    twin = copy.deepcopy(model)
    return (model, make_opt(model.parameters())), (twin, make_opt(twin.parameters()))


def _step_fn(model, opt, sched=None):
    def train_step(x, y):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        if sched is not None:
            sched.step()
        return loss
    return train_step


def _assert_same_params(a, b):
    for p, q in zip(a.parameters(), b.parameters(), strict=True):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("make_opt", [
    lambda ps: ember.optim.Adam(ps, lr=0.05),
    lambda ps: ember.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True),
    lambda ps: ember.optim.AdamW(ps, lr=0.05, weight_decay=0.1),
], ids=["adam", "sgd_nesterov", "adamw"])
def test_full_step_compiled_equals_eager(make_opt):
    (model, opt), (twin, opt_e) = _twins(make_opt)
    compiled = ember.compile(_step_fn(model, opt))
    eager = _step_fn(twin, opt_e)
    for x, y in _data():
        lc, le = compiled(x, y), eager(x, y)
        np.testing.assert_allclose(lc.item(), le.item(), rtol=1e-6)
        _assert_same_params(model, twin)
        for p, q in zip(model.parameters(), twin.parameters(), strict=True):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6, atol=1e-7)
    assert compiled.stats["captures"] == 1 and compiled.stats["recompiles"] == 0
    assert compiled.stats["hits"] == 3 and compiled.last_breaks == []


def test_full_step_ncf_spec_model_equals_eager_after_steps():
    ember.manual_seed(0)
    model, _, _, loss_fn, _ = WORKLOADS["ncf"](ember)
    twin = copy.deepcopy(model)
    opt_c = ember.optim.Adam(model.parameters(), lr=1e-2)
    opt_e = ember.optim.Adam(twin.parameters(), lr=1e-2)
    rng = np.random.default_rng(0)
    batches = [((ember.from_numpy(rng.integers(0, 10000, 64)),
                 ember.from_numpy(rng.integers(0, 10000, 64))),
                ember.from_numpy(rng.integers(0, 2, 64).astype(np.float32))) for _ in range(5)]

    def make(m, o):
        def train_step(u, i, y):
            o.zero_grad()
            loss = loss_fn(m(u, i), y)
            loss.backward()
            o.step()
            return loss
        return train_step

    compiled, eager = ember.compile(make(model, opt_c)), make(twin, opt_e)
    for (u, i), y in batches:
        np.testing.assert_allclose(compiled(u, i, y).item(), eager(u, i, y).item(), rtol=1e-6)
    _assert_same_params(model, twin)
    assert compiled.stats == {"captures": 1, "recompiles": 0, "hits": 4, "eager": 0,
                              "generalised": 0}


def test_gradient_accumulation_across_calls_and_scheduler_inside():
    # zero_grad outside the compiled function every other call: .grad accumulates (the
    # replay adds into an existing .grad as the engine does); the scheduler runs inside
    (model, opt), (twin, opt_e) = _twins(lambda ps: ember.optim.SGD(ps, lr=0.1, momentum=0.5))
    sched = ember.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    sched_e = ember.optim.lr_scheduler.StepLR(opt_e, step_size=1, gamma=0.5)

    def make(m, o, s):
        def fwd_bwd_step(x, y):
            loss = nn.functional.cross_entropy(m(x), y)
            loss.backward()
            o.step()
            s.step()
            return loss
        return fwd_bwd_step

    compiled, eager = ember.compile(make(model, opt, sched)), make(twin, opt_e, sched_e)
    for k, (x, y) in enumerate(_data(6)):
        if k % 2 == 0:
            opt.zero_grad()
            opt_e.zero_grad()
        compiled(x, y)
        eager(x, y)
        _assert_same_params(model, twin)
    assert opt.param_groups[0]["lr"] == opt_e.param_groups[0]["lr"] == 0.1 * 0.5 ** 6
    assert compiled.stats["recompiles"] == 0 and compiled.last_breaks == []


def test_loss_returned_by_a_compiled_step_cannot_backward_again():
    (model, opt), _ = _twins(lambda ps: ember.optim.SGD(ps, lr=0.1))
    compiled = ember.compile(_step_fn(model, opt))
    x, y = _data(1)[0]
    for _ in range(2):  # the capture, then a replay
        loss = compiled(x, y)
        assert loss.requires_grad
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            loss.backward()


def test_backward_with_retain_graph_falls_back_to_eager_with_a_reason():
    (model, opt), (twin, opt_e) = _twins(lambda ps: ember.optim.SGD(ps, lr=0.1))

    def make(m, o):
        def step(x, y):
            o.zero_grad()
            loss = nn.functional.cross_entropy(m(x), y)
            loss.backward(retain_graph=True)
            o.step()
            return loss
        return step

    compiled, eager = ember.compile(make(model, opt)), make(twin, opt_e)
    for x, y in _data(2):
        compiled(x, y)
        eager(x, y)
    _assert_same_params(model, twin)
    assert any("retain_graph" in reason for reason, _ in compiled.last_breaks)
    with pytest.raises(ember._dynamo.exc.Unsupported, match="retain_graph"):
        ember.compile(make(model, opt), fullgraph=True)(*_data(1)[0])


def test_step_with_closure_is_a_graph_break():
    (model, opt), _ = _twins(lambda ps: ember.optim.SGD(ps, lr=0.1))
    x, y = _data(1)[0]

    def step(x, y):
        def closure():
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            return loss
        return opt.step(closure)

    explanation = ember._dynamo.explain(step)(x, y)
    assert explanation.graph_break_count >= 1
    assert any("closure" in str(r) for r in explanation.break_reasons)


@pytest.mark.parametrize("padding_idx", [None, 0])
def test_replayed_array_level_backwards_equal_eager(padding_idx):
    # Linear and Embedding backwards replay as array-level kernel calls (raw_backward.py);
    # padding_idx takes the op's own backward. Gradients must equal eager's bit for bit.
    ember.manual_seed(0)
    model = nn.Sequential(nn.Embedding(20, 4, padding_idx=padding_idx), nn.Flatten(),
                          nn.Linear(12, 1))
    twin = copy.deepcopy(model)
    rng = np.random.default_rng(0)
    batches = [ember.from_numpy(rng.integers(0, 20, (7, 3))) for _ in range(3)]

    def make(m):
        def step(ids):
            m.zero_grad()
            loss = m(ids).square().mean()
            loss.backward()
            return loss
        return step

    compiled, eager = ember.compile(make(model)), make(twin)
    for ids in batches:
        compiled(ids)
        eager(ids)
        for p, q in zip(model.parameters(), twin.parameters(), strict=True):
            np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
    assert compiled.stats["hits"] == 2 and compiled.last_breaks == []


def test_dynamic_shapes_never_rerun_a_backward_inside():
    # a capture at new sizes re-runs the function at enlarged sizes to generalise; with a
    # backward inside that would add into .grad a second time, so it is not done
    model = _mlp()
    twin = copy.deepcopy(model)

    def make(m):
        def fwd_bwd(x, y):
            loss = nn.functional.cross_entropy(m(x), y)
            loss.backward()
            return loss
        return fwd_bwd

    compiled, eager = ember.compile(make(model), dynamic=True), make(twin)
    for batch in (5, 7, 9):
        x, y = _data(1, batch)[0]
        compiled(x, y)
        eager(x, y)
        for p, q in zip(model.parameters(), twin.parameters(), strict=True):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert compiled.stats["recompiles"] == 0


@pytest.mark.parametrize("backend", ["eager", lambda gm, example: gm.forward])
def test_training_step_with_a_graph_module_backend_runs_eagerly(backend):
    (model, opt), (twin, opt_e) = _twins(lambda ps: ember.optim.SGD(ps, lr=0.1))
    compiled = ember.compile(_step_fn(model, opt), backend=backend)
    eager = _step_fn(twin, opt_e)
    for x, y in _data(3):
        compiled(x, y)
        eager(x, y)
        _assert_same_params(model, twin)
    assert any("backend=" in reason for reason, _ in compiled.last_breaks)
    assert compiled.stats["eager"] == 2


def test_relu_backward_of_a_strided_gradient_equals_eager_bitwise():
    # relu's input gradient is a column slice of cat's gradient (strided): the replay makes it
    # contiguous for the fused mask kernel; values must be eager's exactly
    ember.manual_seed(0)
    lin1, lin2 = nn.Linear(6, 5), nn.Linear(11, 1)
    twin1, twin2 = copy.deepcopy(lin1), copy.deepcopy(lin2)

    def make(a, b):
        def step(x):
            a.zero_grad()
            b.zero_grad()
            z = ember.cat([ember.relu(a(x)), x], dim=1)
            loss = b(z).square().sum()
            loss.backward()
            return loss
        return step

    compiled, eager = ember.compile(make(lin1, lin2)), make(twin1, twin2)
    for x, _ in _data(3, batch=9):
        compiled(x)
        eager(x)
        for p, q in zip(list(lin1.parameters()) + list(lin2.parameters()),
                        list(twin1.parameters()) + list(twin2.parameters()), strict=True):
            np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
    assert compiled.stats["hits"] == 2 and compiled.last_breaks == []


def test_step_with_closure_none_keyword_is_captured():
    (model, opt), (twin, opt_e) = _twins(lambda ps: ember.optim.Adam(ps, lr=0.05))

    def make(m, o):
        def step(x, y):
            o.zero_grad(set_to_none=True)
            loss = nn.functional.cross_entropy(m(x), y)
            loss.backward()
            o.step(closure=None)
            return loss
        return step

    compiled, eager = ember.compile(make(model, opt)), make(twin, opt_e)
    for x, y in _data(3):
        compiled(x, y)
        eager(x, y)
    _assert_same_params(model, twin)
    assert compiled.stats["hits"] == 2 and compiled.last_breaks == []
