"""Every optimizer of the optimizer table (ember/testing/_optim_table.py), for each option
combination, inside a compiled training step (zero_grad, a loss through ember ops, backward,
step; LBFGS with its closure): the parameters after each of six steps with different inputs
equal eager's (float64). The replays must apply the update with the live state (step counts,
moments, learning rates) of every step."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import ember
from ember.testing._optim_table import OPTIM_TABLE

SHAPES = [(3, 4), (5,), (), (2, 1, 3)]
CASES = [(name, i) for name in sorted(OPTIM_TABLE) for i in range(len(OPTIM_TABLE[name].configs))]


def _trajectory(name, options, init, noise, compiled):
    params = [ember.tensor(a, requires_grad=True) for a in init]
    opt = getattr(ember.optim, name)(params, **options)

    def step(*ns):
        def closure():
            opt.zero_grad()
            loss = sum((n * p + p * p / 4).sum() for n, p in zip(ns, params, strict=True))
            loss.backward()
            return loss
        if name == "LBFGS":
            return opt.step(closure)
        loss = closure()
        opt.step()
        return loss
    f = ember.compile(step) if compiled else step
    out = []
    for ns in noise:
        f(*[ember.tensor(a) for a in ns])
        out.append([p.detach().numpy().copy() for p in params])
    return out


@pytest.mark.parametrize("name,i", CASES, ids=[f"{n}-{i}" for n, i in CASES])
def test_compiled_step_matches_eager(name, i):
    spec = OPTIM_TABLE[name]
    rng = np.random.default_rng(i)
    shapes = spec.shapes or SHAPES
    init = [rng.standard_normal(s) for s in shapes]
    noise = [[rng.standard_normal(s) for s in shapes] for _ in range(6)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = _trajectory(name, spec.configs[i], init, noise, False)
        got = _trajectory(name, spec.configs[i], init, noise, True)
    for k, (a, b) in enumerate(zip(expected, got, strict=True)):
        for j, (x, y) in enumerate(zip(a, b, strict=True)):
            np.testing.assert_allclose(y, x, rtol=1e-10, atol=1e-12,
                                       err_msg=f"step {k + 1}, parameter {j}")
