"""Adam's direct kernel call (NOTE [Adam's per-parameter cost]) gives the same bits as the
general _elementwise_update path, including parameters at different step counts."""
import numpy as np
import pytest

import ember
from ember.optim import adam as adam_mod


def _run(rng_seed, kwargs, slow, dtype):
    rng = np.random.default_rng(rng_seed)
    ps = [ember.nn.Parameter(ember.tensor(rng.standard_normal(s)).to(dtype))
          for s in ((5, 3), (7,), (2, 2, 2))]
    opt = ember.optim.Adam(ps, **kwargs)
    for step in range(6):
        for i, p in enumerate(ps):
            # the second parameter skips every other step: its step count falls behind
            p.grad = None if (i == 1 and step % 2) else \
                ember.tensor(rng.standard_normal(tuple(p.shape))).to(dtype)
        opt.step()
    return [p.detach().numpy().copy() for p in ps], opt


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
@pytest.mark.parametrize("kwargs", [
    dict(lr=1e-2), dict(lr=1e-2, weight_decay=0.1, amsgrad=True),
    dict(lr=1e-2, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)])
def test_adam_direct_kernel_call_matches_general_path(monkeypatch, dtype, kwargs):
    taken = []
    real = adam_mod._adam_fast
    monkeypatch.setattr(adam_mod, "_adam_fast", lambda *a: taken.append(real(*a)) or taken[-1])
    fast, opt = _run(0, kwargs, False, dtype)
    assert len(taken) == 15 and all(taken)  # every update took the direct call
    monkeypatch.setattr(adam_mod, "_adam_fast", lambda *a: False)
    slow, _ = _run(0, kwargs, True, dtype)
    for a, b in zip(fast, slow, strict=True):
        np.testing.assert_array_equal(a, b)
    steps = [float(opt.state[p]["step"]) for p in opt.param_groups[0]["params"]]
    assert steps == [6.0, 3.0, 6.0]


def test_adam_noncontiguous_and_half_params_take_general_path(rng):
    base = ember.tensor(rng.standard_normal((4, 6)))
    p = ember.nn.Parameter(base)
    q = ember.nn.Parameter(ember.tensor(rng.standard_normal(3)).half())
    opt = ember.optim.Adam([p, q], lr=0.1)
    p.grad = ember.tensor(rng.standard_normal((6, 4))).t()  # a non-contiguous gradient
    q.grad = ember.ones(3).half()
    before = p.detach().numpy().copy()
    v0 = p._version
    opt.step()
    # first Adam step moves every element by lr against the gradient's sign
    np.testing.assert_allclose(p.detach().numpy(), before - 0.1 * np.sign(p.grad.numpy()),
                               rtol=1e-6)
    assert p._version > v0 and q.dtype == ember.float16
