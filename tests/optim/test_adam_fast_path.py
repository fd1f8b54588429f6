"""Adam's direct kernel calls (NOTE [Adam's per-parameter cost], NOTE [One Adam call for many
parameters], NOTE [One Adam hand-off for many parameters]) give the same bits as the general
_elementwise_update path, including parameters at different step counts."""
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
def test_adam_on_kernel_threads_matches_general_path(monkeypatch, dtype, kwargs, pool_off):
    # with the kernel threads on, the queued parameters laid end to end are split by one
    # parallel_range (NOTE [One Adam hand-off for many parameters]); parts of 4 elements cut
    # through the parameters' boundaries
    monkeypatch.setattr(adam_mod, "_GRAIN", 4)
    spans = []
    real = adam_mod.K._k_adam_multi_span
    monkeypatch.setattr(adam_mod.K, "_k_adam_multi_span",
                        lambda *a: spans.append(a[5:7]) or real(*a))
    ember.set_num_threads(2)
    fast, opt = _run(0, kwargs, False, dtype)
    # the steps where all three share one step count (15 + 7 + 8 elements) ran in parts
    assert len(spans) >= 3 * 2 and all(0 <= lo < hi <= 30 for lo, hi in spans)
    monkeypatch.setattr(adam_mod, "_batchable", lambda *a: False)
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


@pytest.mark.parametrize("n_params", [3, 8, 11])
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
@pytest.mark.parametrize("kwargs", [
    dict(lr=1e-2), dict(lr=1e-2, weight_decay=0.1, amsgrad=True),
    dict(lr=1e-2, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)])
def test_adam_one_call_for_many_parameters_matches_general_path(monkeypatch, dtype, kwargs,
                                                                n_params):
    calls = []
    real = adam_mod.K._k_adam_multi
    monkeypatch.setattr(adam_mod.K, "_k_adam_multi", lambda *a: calls.append(a) or real(*a))

    def run(seed):
        rng = np.random.default_rng(seed)
        shapes = [(5, 3), (7,), (2, 2, 2), (1,)] * 3
        ps = [ember.nn.Parameter(ember.tensor(rng.standard_normal(s)).to(dtype))
              for s in shapes[:n_params]]
        opt = ember.optim.Adam(ps, **kwargs)
        for step in range(5):
            for i, p in enumerate(ps):
                # parameter 1 skips odd steps: two step counts, two batches of scalars
                p.grad = None if (i == 1 and step % 2) else \
                    ember.tensor(rng.standard_normal(tuple(p.shape))).to(dtype)
            opt.step()
        state = [opt.state[p][k].numpy().copy() for p in ps for k in ("exp_avg", "exp_avg_sq")]
        return [p.detach().numpy().copy() for p in ps] + state, ps, opt

    batched, ps, opt = run(1)
    # every update went through the many-parameter kernel, at most _MULTI per call
    assert sum(sum(a.size > 0 for a in c[0]) for c in calls) == 5 * n_params - 2
    assert all(len(c[0]) == adam_mod.K._MULTI for c in calls)
    assert all(p._version >= 5 for p in ps if p is not ps[1])
    monkeypatch.setattr(adam_mod, "_batchable", lambda *a: False)
    general, _, _ = run(1)
    for a, b in zip(batched, general, strict=True):
        np.testing.assert_array_equal(a, b)
    assert [float(opt.state[p]["step"]) for p in ps][:2] == [5.0, 3.0]


def test_adamw_spec_gpt_groups_one_call_matches_torch_formula():
    # AdamW with a decayed and an undecayed group (GPT-S's set-up), float32, against the
    # update written out in NumPy (float64 reference, float32 tolerance)
    rng = np.random.default_rng(3)
    w = ember.nn.Parameter(ember.tensor(rng.standard_normal((4, 3)).astype(np.float32)))
    b = ember.nn.Parameter(ember.tensor(rng.standard_normal(3).astype(np.float32)))
    opt = ember.optim.AdamW([{"params": [w], "weight_decay": 0.1},
                             {"params": [b], "weight_decay": 0.0}],
                            lr=3e-4, betas=(0.9, 0.95), eps=1e-8)
    ref = {}
    for step in range(1, 4):
        for p in (w, b):
            p.grad = ember.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32))
        for p, wd in ((w, 0.1), (b, 0.0)):
            x = p.detach().numpy().astype(np.float64)
            g = p.grad.numpy().astype(np.float64)
            m, v = ref.get(id(p), (np.zeros_like(x), np.zeros_like(x)))
            x = x * (1 - 3e-4 * wd)
            m = 0.9 * m + 0.1 * g
            v = 0.95 * v + 0.05 * g * g
            den = np.sqrt(v) / np.sqrt(1 - 0.95 ** step) + 1e-8
            ref[id(p)] = (m, v)
            ref[(id(p), "x")] = x - 3e-4 / (1 - 0.9 ** step) * m / den
        opt.step()
        for p in (w, b):
            np.testing.assert_allclose(p.detach().numpy(), ref[(id(p), "x")], rtol=1e-5,
                                       atol=1e-7)
