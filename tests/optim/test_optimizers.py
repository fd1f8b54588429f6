"""Optimizers: the Optimizer base-class API, state dicts, LBFGS specifics. Per-optimizer
trajectories against torch and state_dict round trips run from the optimizer table
(tests/optim/test_optim_db.py)."""
from __future__ import annotations

import copy
import io
import warnings

import numpy as np
import pytest

import ember
from ember import optim

SHAPES = [(3, 4), (5,), (), (2, 1, 3)]
STEPS = 50

def _make_problem(seed, shapes=SHAPES, steps=STEPS):
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s) for s in shapes]
    noise = [[rng.standard_normal(s) for s in shapes] for _ in range(steps)]
    return init, noise


def _grad(noise, param_array):
    # a quadratic bowl plus noise: the gradient feeds back the current parameters
    return noise + 0.5 * param_array


def _run_ember(name, kwargs, init, noise, dtype=ember.float64):
    params = [ember.tensor(a, dtype=dtype, requires_grad=True) for a in init]
    opt = getattr(optim, name)(params, **kwargs)
    history = []
    for k in range(len(noise)):
        for p, n in zip(params, noise[k]):
            p.grad = ember.tensor(_grad(n, p.detach().numpy()), dtype=dtype)
        opt.step()
        history.append([p.detach().numpy().copy() for p in params])
    return params, opt, history


@pytest.mark.parity
def test_sgd_tensor_lr_matches_float_lr():
    init, noise = _make_problem(3, steps=5)
    _, _, hist_float = _run_ember("SGD", dict(lr=0.1, momentum=0.9), init, noise)
    _, _, hist_tensor = _run_ember("SGD", dict(lr=ember.tensor(0.1, dtype=ember.float64),
                                                momentum=0.9), init, noise)
    for a, b in zip(hist_float[-1], hist_tensor[-1]):
        np.testing.assert_array_equal(a, b)


def _rosenbrock(x):
    return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


def test_lbfgs_converges_and_requires_closure():
    x = ember.tensor([3.0, -2.0], dtype=ember.float64, requires_grad=True)
    opt = optim.LBFGS([x], line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = ((x - 1.0) ** 2).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert float(loss) == pytest.approx(13.0)
    np.testing.assert_allclose(x.detach().numpy(), [1.0, 1.0], atol=1e-6)
    with pytest.raises(RuntimeError, match="closure"):
        opt.step(None)
    with pytest.raises(ValueError, match="line_search_fn"):
        optim.LBFGS([x], line_search_fn="backtracking")
    with pytest.raises(ValueError, match="per-parameter options"):
        optim.LBFGS([{"params": [x]}, {"params": [ember.zeros(1, requires_grad=True)]}])


# ---------------------------------------------------------------------------------------------
# dtypes and layouts


@pytest.mark.parametrize("name,kwargs", [("SGD", dict(lr=0.1, momentum=0.9)),
                                         ("Adam", dict(lr=0.01, amsgrad=True)),
                                         ("RMSprop", dict(centered=True, momentum=0.5))])
def test_float32_and_half_params_follow_float64(name, kwargs):
    init, noise = _make_problem(7, steps=10)
    _, _, ref = _run_ember(name, kwargs, init, noise)
    for dtype, rtol in [(ember.float32, 1e-4), (ember.float16, 2e-2), (ember.bfloat16, 1e-1)]:
        params, opt, hist = _run_ember(name, kwargs, init, noise, dtype=dtype)
        assert all(p.dtype == dtype for p in params)
        assert all(v.dtype == dtype for p in params for k, v in opt.state[p].items()
                   if k != "step")
        for a, b in zip(hist[-1], ref[-1]):
            np.testing.assert_allclose(a.astype(np.float64), b, rtol=rtol, atol=rtol)


def test_noncontiguous_param_and_grad_are_updated_in_place():
    base = np.arange(12.0).reshape(3, 4)
    p = ember.from_numpy(np.asfortranarray(base)).requires_grad_()
    assert not p.is_contiguous()
    q = ember.tensor(base, dtype=ember.float64, requires_grad=True)
    grad = np.linspace(-1, 1, 12).reshape(4, 3).T  # a transposed (non-contiguous) gradient
    p.grad = ember.from_numpy(grad)
    q.grad = ember.tensor(np.ascontiguousarray(grad))
    data_before = p._data
    v0 = p._version
    opt_p, opt_q = optim.Adam([p], lr=0.1), optim.Adam([q], lr=0.1)
    for _ in range(3):
        opt_p.step()
        opt_q.step()
    assert p._data is data_before and p._version == v0 + 3
    np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


def test_empty_and_zero_dim_params():
    e = ember.zeros(0, 3, requires_grad=True)
    s = ember.tensor(2.0, requires_grad=True)
    e.grad, s.grad = ember.zeros(0, 3), ember.tensor(1.0)
    opt = optim.Adam([e, s], lr=0.5)
    opt.step()
    assert e.shape == (0, 3)
    assert s.item() == pytest.approx(1.5)


def test_grad_shape_mismatch_raises():
    p = ember.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"size \[4\] to a tensor of size \[3\]"):
        p.grad = ember.zeros(4)  # refused where it is assigned (tests/compat)
    p._grad = ember.zeros(4)  # past that check: the step's own check still names both shapes
    with pytest.raises(RuntimeError, match=r"SGD.step: .*shape \(4,\).*\(3,\)"):
        optim.SGD([p], lr=0.1).step()


# ---------------------------------------------------------------------------------------------
# the Optimizer base class


def test_params_without_grad_are_skipped_and_get_no_state():
    a, b = ember.ones(2, requires_grad=True), ember.ones(2, requires_grad=True)
    a.grad = ember.ones(2)
    opt = optim.Adam([a, b], lr=0.1)
    opt.step()
    assert b.tolist() == [1.0, 1.0] and len(opt.state[b]) == 0
    assert a.tolist() != [1.0, 1.0]


def test_param_groups_have_their_own_options():
    a, b = ember.ones(1, requires_grad=True), ember.ones(1, requires_grad=True)
    opt = optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5}], lr=0.1, momentum=0.9)
    assert opt.param_groups[0]["lr"] == 0.1 and opt.param_groups[1]["lr"] == 0.5
    assert opt.param_groups[1]["momentum"] == 0.9
    a.grad, b.grad = ember.ones(1), ember.ones(1)
    opt.step()
    assert a.item() == pytest.approx(0.9) and b.item() == pytest.approx(0.5)
    c = ember.ones(1, requires_grad=True)
    opt.add_param_group({"params": [c], "lr": 1.0})
    c.grad = ember.ones(1)
    opt.step()
    assert c.item() == pytest.approx(0.0)
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})


def test_constructor_errors_match_torch():
    p = ember.zeros(1, requires_grad=True)
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        optim.Adam([p], lr=-1)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1: 1.0"):
        optim.Adam([p], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="Invalid epsilon value"):
        optim.RMSprop([p], eps=-1)
    with pytest.raises(ValueError, match="Nesterov momentum requires"):
        optim.SGD([p], nesterov=True)
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="iterable of Tensors"):
        optim.SGD(p, lr=0.1)
    with pytest.raises(TypeError, match="ordered collections"):
        optim.SGD([{"params": {p}}], lr=0.1)
    with pytest.raises(TypeError, match="can only optimize Tensors"):
        optim.SGD([1.0], lr=0.1)
    y = p * 2
    with pytest.raises(ValueError, match="non-leaf"):
        optim.SGD([y], lr=0.1)
    with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
        optim.Adam([p], lr=ember.ones(2))


def test_named_params_record_param_names():
    a, b = ember.zeros(1, requires_grad=True), ember.zeros(1, requires_grad=True)
    opt = optim.SGD([("w", a), ("b", b)], lr=0.1)
    assert opt.param_groups[0]["param_names"] == ["w", "b"]
    assert opt.param_groups[0]["params"][0] is a
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["w", "b"]


def test_zero_grad_set_to_none_and_to_zero():
    p = ember.ones(3, requires_grad=True)
    (p * 2).sum().backward()
    opt = optim.SGD([p], lr=0.1)
    opt.zero_grad(set_to_none=False)
    assert p.grad is not None and p.grad.tolist() == [0.0, 0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None


def test_step_runs_under_no_grad_and_closure_with_grad():
    p = ember.ones(2, requires_grad=True)
    opt = optim.SGD([p], lr=0.1)
    seen = {}

    def closure():
        seen["grad_enabled"] = ember.is_grad_enabled()
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert seen["grad_enabled"] and float(loss) == 2.0
    assert p.tolist() == pytest.approx([0.8, 0.8])
    assert ember.is_grad_enabled()


def test_step_hooks_run_in_order_and_can_be_removed():
    p = ember.ones(1, requires_grad=True)
    p.grad = ember.ones(1)
    opt = optim.SGD([p], lr=0.1)
    calls = []
    pre = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append(("pre", p.item())))
    post = opt.register_step_post_hook(lambda o, args, kwargs: calls.append(("post", p.item())))
    global_pre = optim.optimizer.register_optimizer_step_pre_hook(
        lambda o, args, kwargs: calls.append(("global", o is opt)))
    opt.step()
    assert calls[0] == ("global", True)
    assert calls[1] == ("pre", 1.0) and calls[2][0] == "post"
    assert calls[2][1] == pytest.approx(0.9)
    pre.remove()
    post.remove()
    global_pre.remove()
    calls.clear()
    opt.step()
    assert calls == []


def test_pre_hook_can_replace_arguments():
    p = ember.ones(1, requires_grad=True)
    opt = optim.SGD([p], lr=0.1)
    opt.register_step_pre_hook(lambda o, args, kwargs: ((), {"closure": lambda: 42.0}))
    assert opt.step() == 42.0
    opt2 = optim.SGD([p], lr=0.1)
    opt2.register_step_pre_hook(lambda o, args, kwargs: "bad")
    with pytest.raises(RuntimeError, match="must return None or a tuple"):
        opt2.step()


def test_subclass_calling_super_step_runs_hooks_once():
    class MySGD(optim.SGD):
        def step(self, closure=None):
            return super().step(closure)

    p = ember.ones(1, requires_grad=True)
    p.grad = ember.ones(1)
    opt = MySGD([p], lr=0.1)
    calls = []
    opt.register_step_pre_hook(lambda *a: calls.append(1))
    opt.step()
    assert calls == [1]


def test_wrapper_that_skips_optimizer_init_steps_unhooked():
    # accelerate's AcceleratedOptimizer: an Optimizer subclass that never calls
    # Optimizer.__init__ and forwards to the optimizer it wraps. torch 2.13 runs its step as
    # written: no hooks of its own, grad mode unchanged; the inner optimizer's hooks run once,
    # and a scheduler on the wrapper does not warn about the call order.
    class Wrap(optim.Optimizer):
        def __init__(self, inner):
            self.optimizer = inner

        @property
        def param_groups(self):
            return self.optimizer.param_groups

        @property
        def state(self):
            return self.optimizer.state

        @property
        def defaults(self):
            return self.optimizer.defaults

        def step(self, closure=None):
            self.grad_enabled = ember.is_grad_enabled()
            return self.optimizer.step(closure)

    p = ember.ones(1, requires_grad=True)
    p.grad = ember.ones(1)
    inner = optim.SGD([p], lr=0.1)
    calls = []
    inner.register_step_pre_hook(lambda *a: calls.append("inner"))
    handle = optim.optimizer.register_optimizer_step_pre_hook(
        lambda o, args, kwargs: calls.append(type(o).__name__))
    wrap = Wrap(inner)
    try:
        wrap.step()
    finally:
        handle.remove()
    assert calls == ["SGD", "inner"]
    assert wrap.grad_enabled is True
    assert p.item() == pytest.approx(0.9)
    sched = optim.lr_scheduler.StepLR(wrap, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wrap.step()
        sched.step()
    assert p.item() == pytest.approx(0.8)


def test_duplicate_params_warn():
    p = ember.zeros(1, requires_grad=True)
    with pytest.warns(UserWarning, match="duplicate parameters"):
        optim.SGD([p, p], lr=0.1)


# ---------------------------------------------------------------------------------------------
# state dicts


def _train(opt, params, noise):
    for n in noise:
        for p, g in zip(params, n):
            p.grad = ember.tensor(_grad(g, p.detach().numpy()), dtype=p.dtype)
        opt.step()


def test_state_dict_uses_integer_ids_like_torch():
    a, b, c = (ember.ones(2, requires_grad=True) for _ in range(3))
    opt = optim.Adam([{"params": [a, b]}, {"params": [c], "lr": 0.5}])
    for p in (a, c):
        p.grad = ember.ones(2)
    opt.step()
    sd = opt.state_dict()
    assert [g["params"] for g in sd["param_groups"]] == [[0, 1], [2]]
    assert sorted(sd["state"]) == [0, 2]
    assert sd["param_groups"][1]["lr"] == 0.5
    assert set(sd["state"][0]) == {"step", "exp_avg", "exp_avg_sq"}


@pytest.mark.parity
def test_state_dict_loads_torch_layout():
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    init, noise = _make_problem(5, steps=6)
    t_params = [torch.tensor(a, requires_grad=True) for a in init]
    t_opt = torch.optim.Adam(t_params, lr=0.01)
    for n in noise[:3]:
        for p, g in zip(t_params, n):
            p.grad = torch.tensor(_grad(g, p.detach().numpy()))
        t_opt.step()
    sd = t_opt.state_dict()
    converted = {"param_groups": copy.deepcopy(sd["param_groups"]),
                 "state": {k: {kk: ember.tensor(vv.numpy()) for kk, vv in v.items()}
                           for k, v in sd["state"].items()}}
    e_params = [ember.tensor(p.detach().numpy(), requires_grad=True) for p in t_params]
    e_opt = optim.Adam(e_params)
    e_opt.load_state_dict(converted)
    for n in noise[3:]:
        for p, g in zip(t_params, n):
            p.grad = torch.tensor(_grad(g, p.detach().numpy()))
        t_opt.step()
        for p, g in zip(e_params, n):
            p.grad = ember.tensor(_grad(g, p.detach().numpy()))
        e_opt.step()
    for a, b in zip(e_params, t_params):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)


def test_load_state_dict_casts_to_param_dtype_and_copies():
    p = ember.ones(2, dtype=ember.float32, requires_grad=True)
    p.grad = ember.ones(2)
    opt = optim.Adam([p])
    opt.step()
    sd = opt.state_dict()
    sd["state"][0]["exp_avg"] = sd["state"][0]["exp_avg"].double()
    opt2 = optim.Adam([p])
    opt2.load_state_dict(sd)
    st = opt2.state[p]
    assert st["exp_avg"].dtype == ember.float32
    assert st["step"].dtype == ember.float32
    assert st["exp_avg_sq"]._data is not opt.state[p]["exp_avg_sq"]._data


def test_load_state_dict_accepts_numeric_step():
    p = ember.ones(2, requires_grad=True)
    p.grad = ember.ones(2)
    opt = optim.Adam([p])
    opt.step()
    sd = opt.state_dict()
    sd["state"][0]["step"] = 1  # older checkpoints kept a plain number
    opt2 = optim.Adam([p])
    opt2.load_state_dict(sd)
    opt2.step()
    assert opt2.state[p]["step"].item() == 2.0


def test_load_state_dict_rejects_mismatched_groups():
    a, b = ember.ones(1, requires_grad=True), ember.ones(1, requires_grad=True)
    sd = optim.SGD([a, b], lr=0.1).state_dict()
    with pytest.raises(ValueError, match="doesn't match the size"):
        optim.SGD([a], lr=0.1).load_state_dict(sd)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        optim.SGD([{"params": [a]}, {"params": [b]}], lr=0.1).load_state_dict(sd)


def test_optimizer_deepcopy_and_repr():
    p = ember.ones(2, requires_grad=True)
    opt = optim.SGD([p], lr=0.1, momentum=0.9)
    assert "SGD (" in repr(opt) and "momentum: 0.9" in repr(opt)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clone = copy.deepcopy(opt)
    assert clone.param_groups[0]["lr"] == 0.1


@pytest.mark.parity
@pytest.mark.parametrize("name,kwargs", [("SGD", dict(lr=0.05, momentum=0.9, nesterov=True)),
                                         ("Adam", dict(lr=0.01, amsgrad=True)),
                                         ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5)),
                                         ("NAdam", dict(lr=0.01))])
def test_float32_trajectory_close_to_torch(name, kwargs):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    init, noise = _make_problem(21)
    init = [a.astype(np.float32) for a in init]
    e_params = [ember.tensor(a, requires_grad=True) for a in init]
    t_params = [torch.tensor(a, requires_grad=True) for a in init]
    e_opt = getattr(optim, name)(e_params, **kwargs)
    t_opt = getattr(torch.optim, name)(t_params, **kwargs)
    for n in noise:
        for p, q, g in zip(e_params, t_params, n):
            g32 = g.astype(np.float32)
            p.grad, q.grad = ember.tensor(g32), torch.tensor(g32)
        e_opt.step()
        t_opt.step()
    for p, q in zip(e_params, t_params):
        assert p.dtype == ember.float32
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=2e-5, atol=2e-6)


def test_whole_optimizer_pickles_through_ember_save():
    init, noise = _make_problem(8, steps=6)
    params = [ember.tensor(a, requires_grad=True) for a in init]
    opt = optim.Adam(params, lr=0.01)
    _train(opt, params, noise[:3])
    buf = io.BytesIO()
    ember.save(opt, buf)
    buf.seek(0)
    with pytest.warns(ember.serialization.UnsafeLoadWarning):
        clone = ember.load(buf, weights_only=False)
    clone_params = clone.param_groups[0]["params"]
    _train(opt, params, noise[3:])
    _train(clone, clone_params, noise[3:])
    for a, b in zip(params, clone_params):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_state_dict_resumes_bit_identically(line_search_fn):
    def make(x0):
        x = ember.tensor(x0, dtype=ember.float64, requires_grad=True)
        opt = optim.LBFGS([x], lr=0.5, max_iter=3, history_size=4,
                          line_search_fn=line_search_fn)

        def closure():
            opt.zero_grad()
            loss = _rosenbrock(x)
            loss.backward()
            return loss
        return x, opt, closure

    x, opt, closure = make([-1.2, 1.0, 0.3])
    for _ in range(3):
        opt.step(closure)
    buf = io.BytesIO()
    ember.save({"x": x.detach(), "opt": opt.state_dict()}, buf)
    for _ in range(3):
        opt.step(closure)
    buf.seek(0)
    ckpt = ember.load(buf)
    x2, opt2, closure2 = make(ckpt["x"].numpy())
    opt2.load_state_dict(ckpt["opt"])
    for _ in range(3):
        opt2.step(closure2)
    np.testing.assert_array_equal(x.detach().numpy(), x2.detach().numpy())


def _python_counter(base):
    """An optimizer of another library: counts steps in Python, marks groups in __setstate__."""

    class Counter(base):
        def __init__(self, params, lr=0.1):
            super().__init__(params, dict(lr=lr))

        def __setstate__(self, state):
            super().__setstate__(state)
            for group in self.param_groups:
                group["seen_by_setstate"] = True

        def step(self):
            for group in self.param_groups:
                for p in group["params"]:
                    st = self.state[p]
                    st["step"] = st.get("step", 0) + 1
                    p.data.add_(p.grad, alpha=-group["lr"] * (1 - 0.9 ** st["step"]))

    return Counter


@pytest.mark.parametrize("lib", ["ember", "torch"])
def test_load_state_dict_keeps_a_python_step_and_calls_setstate(lib):
    import torch

    mod = ember if lib == "ember" else torch
    cls = _python_counter(optim.Optimizer if lib == "ember" else torch.optim.Optimizer)
    p = mod.ones(2, requires_grad=True)
    p.grad = mod.ones(2)
    opt = cls([p])
    opt.step()
    opt2 = cls([p])
    opt2.load_state_dict(opt.state_dict())
    st = opt2.state[p]
    assert type(st["step"]) is int and st["step"] == 1
    assert opt2.param_groups[0]["seen_by_setstate"] is True
