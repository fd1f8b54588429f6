"""SGD's one kernel call for many parameters (NOTE [One SGD call for many parameters] in
ember/optim/sgd.py) gives the same bits, states and version counts as the per-parameter path."""
import numpy as np
import pytest

import ember
from ember.optim import sgd as sgd_mod


def _run(seed, n_params, dtype, kwargs):
    rng = np.random.default_rng(seed)
    shapes = [(5, 3), (7,), (2, 2, 2), (1,)] * 3
    ps = [ember.nn.Parameter(ember.tensor(rng.standard_normal(s)).to(dtype))
          for s in shapes[:n_params]]
    opt = ember.optim.SGD(ps, **kwargs)
    for step in range(5):
        for i, p in enumerate(ps):
            # parameter 1 starts at step 1 and skips step 3: its momentum buffer starts a step
            # later than the others' (a first-step batch beside a later-step one)
            p.grad = None if (i == 1 and step in (0, 3)) else \
                ember.tensor(rng.standard_normal(tuple(p.shape))).to(dtype)
        opt.step()
    bufs = [opt.state[p]["momentum_buffer"].numpy().copy() for p in ps
            if "momentum_buffer" in opt.state[p]]
    return [p.detach().numpy().copy() for p in ps] + bufs, [p._version for p in ps]


@pytest.mark.parametrize("n_params", [3, 8, 11])
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
@pytest.mark.parametrize("kwargs", [
    dict(lr=0.1), dict(lr=0.1, momentum=0.9),
    dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-2),
    dict(lr=0.1, momentum=0.5, dampening=0.3, maximize=True)])
def test_sgd_one_call_for_many_parameters_matches_general_path(monkeypatch, dtype, kwargs,
                                                               n_params):
    calls = []
    real = sgd_mod.K._k_sgd_multi
    monkeypatch.setattr(sgd_mod.K, "_k_sgd_multi", lambda *a: calls.append(a) or real(*a))
    batched, versions = _run(1, n_params, dtype, kwargs)
    # every update went through the many-parameter kernel, at most _MULTI per call
    assert sum(sum(a.size > 0 for a in c[0]) for c in calls) == 5 * n_params - 2
    assert all(len(c[0]) == sgd_mod.K._MULTI for c in calls)
    monkeypatch.setattr(sgd_mod, "_kernel_arrays", lambda *a: None)
    calls.clear()
    general, general_versions = _run(1, n_params, dtype, kwargs)
    assert not calls
    for a, b in zip(batched, general, strict=True):
        np.testing.assert_array_equal(a, b)
    assert versions == general_versions


def test_sgd_batch_beside_parameters_that_need_copies(rng):
    # a non-contiguous gradient and a float16 parameter take the per-parameter path, the
    # others the batch; all follow torch's documented update
    p = ember.nn.Parameter(ember.tensor(rng.standard_normal((4, 6)).astype(np.float32)))
    q = ember.nn.Parameter(ember.tensor(rng.standard_normal(3)).half())
    r = ember.nn.Parameter(ember.tensor(rng.standard_normal(5).astype(np.float32)))
    x0 = [t.detach().numpy().astype(np.float64) for t in (p, r)]
    v0 = [t._version for t in (p, q, r)]
    opt = ember.optim.SGD([p, q, r], lr=0.5, momentum=0.9)
    grads = []
    for _ in range(2):
        gp = rng.standard_normal((6, 4)).astype(np.float32)
        gr = rng.standard_normal(5).astype(np.float32)
        grads.append((gp.T.astype(np.float64), gr.astype(np.float64)))
        p.grad = ember.tensor(gp).t()  # non-contiguous
        q.grad = ember.ones(3).half()
        r.grad = ember.tensor(gr)
        opt.step()
    # momentum 0.9 from buf = g0: x2 = x0 - lr * g0 - lr * (0.9 g0 + g1)
    for k, t in enumerate((p, r)):
        g0, g1 = grads[0][k], grads[1][k]
        np.testing.assert_allclose(t.detach().numpy(), x0[k] - 0.5 * g0 - 0.5 * (0.9 * g0 + g1),
                                   rtol=1e-5, atol=1e-6)
    assert q.dtype == ember.float16
    assert [t._version - v for t, v in zip((p, q, r), v0)] == [2, 2, 2]
