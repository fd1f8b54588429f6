"""The generic optimizer suite: every optimizer in ember/testing/_optim_table.py, for each of its
option combinations: the trajectory and state buffers against torch 2.13 (float64), a state_dict
round trip that resumes bit-identically, float32 parameters, parameters without gradients, and
repr. Every step goes through ``step(closure)``, which all optimizers accept (LBFGS needs it).

The problem is a noisy quadratic bowl: loss_k(p) = sum(n_k * p + p^2 / 4), so the gradient
n_k + p / 2 feeds the current parameters back; values and gradients come from NumPy, so both
libraries see bit-identical gradients.
"""
from __future__ import annotations

import inspect
import io

import numpy as np
import pytest

import ember
from ember import optim
from ember.testing._optim_table import OPTIM_TABLE

SHAPES = [(3, 4), (5,), (), (2, 1, 3)]
CASES = [(name, i) for name in sorted(OPTIM_TABLE) for i in range(len(OPTIM_TABLE[name].configs))]
IDS = [f"{name}-{i}" for name, i in CASES]


def _problem(seed, steps, shapes):
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s) for s in shapes]
    noise = [[rng.standard_normal(s) for s in shapes] for _ in range(steps)]
    return init, noise


def _closure(lib, opt, params, noise, sparse=False):
    def closure():
        loss = 0.0
        for p, n in zip(params, noise, strict=True):
            a = p.detach().numpy()
            loss += float(np.sum(n * a + 0.25 * a * a))
            g = lib.tensor(n + 0.5 * a, dtype=p.dtype)
            p.grad = g.to_sparse() if sparse else g
        return lib.tensor(loss, dtype=lib.float64)
    return closure


def _run(lib, name, kwargs, init, noise, dtype=None):
    """Parameters, optimizer and the parameter values after every step."""
    dtype = dtype or lib.float64
    sparse = OPTIM_TABLE[name].sparse_grad and lib is not ember
    params = [lib.tensor(a, dtype=dtype, requires_grad=True) for a in init]
    opt = getattr(lib.optim, name)(params, **kwargs)
    history = []
    for n in noise:
        opt.step(_closure(lib, opt, params, n, sparse))
        history.append([p.detach().numpy().copy() for p in params])
    return params, opt, history


def _case(name, i):
    spec = OPTIM_TABLE[name]
    return spec.configs[i], _problem(sum(name.encode()) + i, spec.steps, spec.shapes or SHAPES)


# ---------------------------------------------------------------------------------------------
# the table itself


def test_every_optimizer_has_a_table_line():
    public = sorted(n for n, c in vars(optim).items() if inspect.isclass(c)
                    and issubclass(c, optim.Optimizer) and c is not optim.Optimizer)
    missing = [n for n in public if n not in OPTIM_TABLE]
    assert not missing, f"optimizers without a line in ember/testing/_optim_table.py: {missing}"


# ---------------------------------------------------------------------------------------------
# ember alone


@pytest.mark.parametrize("name,i", CASES, ids=IDS)
def test_optimizer_state_dict_round_trip_resumes(name, i):
    kwargs, (init, noise) = _case(name, i)
    half = len(noise) // 2
    params, opt, _ = _run(ember, name, kwargs, init, noise[:half])
    buf = io.BytesIO()
    ember.save({"params": [p.detach() for p in params], "opt": opt.state_dict()}, buf)
    for n in noise[half:]:
        opt.step(_closure(ember, opt, params, n))

    buf.seek(0)
    ckpt = ember.load(buf)
    params2 = [t.clone().requires_grad_() for t in ckpt["params"]]
    opt2 = getattr(optim, name)(params2, **dict(kwargs, lr=123.0))  # lr comes back from the dict
    opt2.load_state_dict(ckpt["opt"])
    assert opt2.param_groups[0]["lr"] == opt.param_groups[0]["lr"]
    for n in noise[half:]:
        opt2.step(_closure(ember, opt2, params2, n))
    rtol = 0 if OPTIM_TABLE[name].resume_exact else 1e-5
    for a, b in zip(params, params2, strict=True):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=0)


@pytest.mark.parametrize("name", sorted(OPTIM_TABLE))
def test_optimizer_float32_params_keep_their_dtype_and_follow_float64(name):
    kwargs, (init, noise) = _case(name, 0)
    noise = noise[:10]
    _, _, ref = _run(ember, name, kwargs, init, noise)
    params, opt, hist = _run(ember, name, kwargs, init, noise, dtype=ember.float32)
    assert all(p.dtype == ember.float32 for p in params)
    for p in params:
        for key, v in opt.state[p].items():
            if isinstance(v, ember.Tensor) and key != "step" and v.is_floating_point():
                assert v.dtype == ember.float32, f"{name} state {key!r} is {v.dtype}"
    for a, b in zip(hist[-1], ref[-1], strict=True):
        np.testing.assert_allclose(a.astype(np.float64), b, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("name", sorted(OPTIM_TABLE))
def test_optimizer_skips_params_without_grad(name):
    kwargs, _ = _case(name, 0)
    used = ember.tensor([[1.0, -2.0]], dtype=ember.float64, requires_grad=True)
    idle = ember.tensor([[3.0, 4.0]], dtype=ember.float64, requires_grad=True)
    opt = getattr(optim, name)([used, idle], **kwargs)

    def closure():
        used.grad = ember.tensor([[0.5, -0.5]], dtype=ember.float64)
        return ember.tensor(1.0, dtype=ember.float64)

    opt.step(closure)
    np.testing.assert_array_equal(idle.detach().numpy(), [[3.0, 4.0]])
    assert not np.array_equal(used.detach().numpy(), [[1.0, -2.0]])


# ---------------------------------------------------------------------------------------------
# parity with torch


@pytest.mark.parity
@pytest.mark.parametrize("name,i", CASES, ids=IDS)
def test_optimizer_trajectory_and_state_match_torch(name, i):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    kwargs, (init, noise) = _case(name, i)
    e_params, e_opt, e_hist = _run(ember, name, kwargs, init, noise)
    t_params, t_opt, t_hist = _run(torch, name, kwargs, init, noise)
    for k, (ours, ref) in enumerate(zip(e_hist, t_hist, strict=True)):
        for a, b in zip(ours, ref, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=f"step {k + 1}")
    # the state carries torch's names, values and (for step counters) dtypes
    for ep, tp in zip(e_params, t_params, strict=True):
        e_state, t_state = e_opt.state[ep], t_opt.state[tp]
        assert sorted(e_state) == sorted(t_state)
        for key, value in t_state.items():
            if isinstance(value, torch.Tensor):
                # LBFGS's direction d is a two-loop recursion over the history: a few ulps
                np.testing.assert_allclose(e_state[key].numpy(), value.detach().numpy(),
                                           rtol=1e-9, atol=1e-12, err_msg=key)
                assert str(e_state[key].dtype) == str(value.dtype).replace("torch", "ember")
            elif not isinstance(value, (list, tuple)):  # LBFGS keeps Python numbers too
                assert e_state[key] == pytest.approx(value, rel=1e-10), key


@pytest.mark.parity
@pytest.mark.parametrize("name,i", CASES, ids=IDS)
def test_optimizer_repr_matches_torch(name, i):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    kwargs, _ = _case(name, i)
    ours = getattr(optim, name)([ember.zeros(2, 2, requires_grad=True)], **kwargs)
    theirs = getattr(torch.optim, name)([torch.zeros(2, 2, requires_grad=True)], **kwargs)
    assert repr(ours) == repr(theirs)
