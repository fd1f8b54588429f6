"""Learning-rate schedulers: 50-step parity with torch, state dicts, warnings and errors."""
from __future__ import annotations

import io
import warnings

import numpy as np
import pytest

import ember
from ember import optim
from ember.optim import lr_scheduler as sched_mod

STEPS = 50


def _metric(k):
    # a loss that improves, plateaus, then improves again (exercises ReduceLROnPlateau)
    return [1.0, 0.9, 0.8, 0.8, 0.8, 0.8, 0.79, 0.7][k % 8] + (0.0 if k < 20 else -0.01 * k)


# (id, optimizer name, optimizer kwargs, factory(lr_scheduler module, optimizer))
CASES = [
    ("lambda", "SGD", {}, lambda m, o: m.LambdaLR(o, lambda e: 0.95 ** e)),
    ("lambda-list", "SGD", {}, lambda m, o: m.LambdaLR(o, [lambda e: 1 / (e + 1),
                                                            lambda e: 0.9 ** e])),
    ("multiplicative", "SGD", {}, lambda m, o: m.MultiplicativeLR(o, lambda e: 0.9)),
    ("step", "SGD", {}, lambda m, o: m.StepLR(o, step_size=7, gamma=0.5)),
    ("multistep", "SGD", {}, lambda m, o: m.MultiStepLR(o, [5, 12, 12, 30], gamma=0.3)),
    ("constant", "SGD", {}, lambda m, o: m.ConstantLR(o, factor=0.25, total_iters=8)),
    ("linear", "SGD", {}, lambda m, o: m.LinearLR(o, start_factor=0.2, end_factor=0.9,
                                                    total_iters=13)),
    ("exponential", "SGD", {}, lambda m, o: m.ExponentialLR(o, gamma=0.93)),
    ("polynomial", "SGD", {}, lambda m, o: m.PolynomialLR(o, total_iters=30, power=2.0)),
    ("cosine", "SGD", {}, lambda m, o: m.CosineAnnealingLR(o, T_max=10, eta_min=0.001)),
    ("warm-restarts", "SGD", {}, lambda m, o: m.CosineAnnealingWarmRestarts(
        o, T_0=7, T_mult=2, eta_min=0.01)),
    ("warm-restarts-1", "SGD", {}, lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=6)),
    ("cyclic-triangular", "SGD", {}, lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=5)),
    ("cyclic-triangular2", "SGD", {}, lambda m, o: m.CyclicLR(
        o, [0.01, 0.02], [0.1, 0.2], step_size_up=4, step_size_down=3, mode="triangular2")),
    ("cyclic-exp-range-adam", "Adam", {}, lambda m, o: m.CyclicLR(
        o, 0.001, 0.01, step_size_up=6, mode="exp_range", gamma=0.97, base_momentum=0.8,
        max_momentum=0.95)),
    ("cyclic-no-momentum", "SGD", {}, lambda m, o: m.CyclicLR(
        o, 0.01, 0.1, step_size_up=3, cycle_momentum=False, scale_fn=lambda x: 0.8 ** x,
        scale_mode="iterations")),
    ("onecycle-cos", "SGD", {}, lambda m, o: m.OneCycleLR(o, max_lr=0.5, total_steps=STEPS)),
    ("onecycle-linear-adam", "Adam", {}, lambda m, o: m.OneCycleLR(
        o, max_lr=[0.01, 0.02], epochs=5, steps_per_epoch=10, anneal_strategy="linear")),
    ("onecycle-three-phase", "SGD", {}, lambda m, o: m.OneCycleLR(
        o, max_lr=0.3, total_steps=STEPS, pct_start=0.25, three_phase=True, div_factor=10.0,
        final_div_factor=100.0)),
    ("plateau-min-rel", "SGD", {}, lambda m, o: m.ReduceLROnPlateau(
        o, patience=2, factor=0.5, threshold=0.05, cooldown=1, min_lr=0.004)),
    ("plateau-max-abs", "SGD", {}, lambda m, o: m.ReduceLROnPlateau(
        o, mode="max", threshold_mode="abs", patience=1, factor=0.7, min_lr=[0.01, 0.0],
        eps=1e-3)),
    ("sequential", "SGD", {}, lambda m, o: m.SequentialLR(
        o, [m.LinearLR(o, start_factor=0.1, total_iters=10), m.ExponentialLR(o, gamma=0.9),
            m.StepLR(o, step_size=4)], milestones=[10, 30])),
    ("chained", "SGD", {}, lambda m, o: m.ChainedScheduler(
        [m.ConstantLR(o, factor=0.5, total_iters=5), m.ExponentialLR(o, gamma=0.95),
         m.CosineAnnealingLR(o, T_max=12)])),
]


def _optimizer(lib, name, kwargs):
    params = [lib.zeros(2, requires_grad=True), lib.zeros(3, requires_grad=True)]
    groups = [{"params": params[:1], "lr": 0.1}, {"params": params[1:], "lr": 0.05}]
    if name == "SGD":
        kwargs = dict(kwargs, momentum=0.9)
    return getattr(lib.optim, name)(groups, **kwargs)


def _trajectory(lib, name, opt_kwargs, factory, steps=STEPS):
    opt = _optimizer(lib, name, opt_kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sched = factory(lib.optim.lr_scheduler, opt)
        rows = []
        for k in range(steps):
            opt.step()
            if isinstance(sched, lib.optim.lr_scheduler.ReduceLROnPlateau):
                sched.step(_metric(k))
            else:
                sched.step()
            row = [float(lr) for lr in sched.get_last_lr()]
            row += [float(g["lr"]) for g in opt.param_groups]
            for g in opt.param_groups:
                row.append(float(g["betas"][0]) if "betas" in g else float(g["momentum"]))
            rows.append(row)
    return np.array(rows)


@pytest.mark.parity
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_scheduler_matches_torch(case):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    _, name, opt_kwargs, factory = case
    ours = _trajectory(ember, name, opt_kwargs, factory)
    ref = _trajectory(torch, name, opt_kwargs, factory)
    np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=1e-15)
    assert not np.allclose(ours[:, 0], ours[0, 0]) or "plateau" in case[0]


@pytest.mark.parity
@pytest.mark.parametrize("case", [c for c in CASES if c[0] in (
    "step", "multistep", "constant", "linear", "exponential", "polynomial", "cosine")],
    ids=lambda c: c[0])
def test_closed_form_with_epoch_matches_torch(case):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    _, name, opt_kwargs, factory = case

    def run(lib):
        opt = _optimizer(lib, name, opt_kwargs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sched = factory(lib.optim.lr_scheduler, opt)
            out = []
            for epoch in (3, 9, 14, 40):
                sched.step(epoch)
                out.append([float(x) for x in sched.get_last_lr()])
        return np.array(out)

    np.testing.assert_allclose(run(ember), run(torch), rtol=1e-12)


@pytest.mark.parametrize("case", [c for c in CASES if c[0] in (
    "multistep", "cosine", "cyclic-exp-range-adam", "onecycle-cos", "plateau-min-rel",
    "sequential", "chained", "warm-restarts", "lambda")], ids=lambda c: c[0])
def test_state_dict_round_trip_continues_schedule(case):
    _, name, opt_kwargs, factory = case
    full = _trajectory(ember, name, opt_kwargs, factory)

    opt = _optimizer(ember, name, opt_kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sched = factory(sched_mod, opt)
        plateau = isinstance(sched, sched_mod.ReduceLROnPlateau)
        for k in range(20):
            opt.step()
            sched.step(_metric(k)) if plateau else sched.step()
        buf = io.BytesIO()
        ember.save({"opt": opt.state_dict(), "sched": sched.state_dict()}, buf)
        buf.seek(0)
        ckpt = ember.load(buf)

        opt2 = _optimizer(ember, name, opt_kwargs)
        opt2.load_state_dict(ckpt["opt"])
        sched2 = factory(sched_mod, opt2)
        sched2.load_state_dict(ckpt["sched"])
        opt2.load_state_dict(ckpt["opt"])  # the new scheduler's initial step changed the lrs
        for k in range(20, STEPS):
            opt2.step()
            sched2.step(_metric(k)) if plateau else sched2.step()
            np.testing.assert_allclose(sched2.get_last_lr(), full[k, :2], rtol=1e-12)


def test_initial_lr_and_base_lrs():
    opt = _optimizer(ember, "SGD", {})
    sched = sched_mod.StepLR(opt, step_size=2)
    assert [g["initial_lr"] for g in opt.param_groups] == [0.1, 0.05]
    assert sched.base_lrs == [0.1, 0.05] and sched.last_epoch == 0
    fresh = _optimizer(ember, "SGD", {})
    with pytest.raises(KeyError, match="initial_lr"):
        sched_mod.StepLR(fresh, step_size=2, last_epoch=5)


def test_tensor_lr_is_updated_in_place():
    lr = ember.tensor(0.1, dtype=ember.float64)
    opt = optim.SGD([ember.zeros(1, requires_grad=True)], lr=lr)
    sched = sched_mod.ExponentialLR(opt, gamma=0.5)
    opt.step()
    sched.step()
    assert opt.param_groups[0]["lr"] is lr and lr.item() == pytest.approx(0.05)


def test_warnings_for_call_order_and_get_lr():
    opt = _optimizer(ember, "SGD", {})
    sched = sched_mod.StepLR(opt, step_size=2)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        sched.step()
    with pytest.warns(UserWarning, match="get_last_lr"):
        sched.get_lr()
    opt2 = _optimizer(ember, "SGD", {})
    sched2 = sched_mod.StepLR(opt2, step_size=2)
    opt2.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched2.step()


def test_scheduler_errors():
    opt = _optimizer(ember, "SGD", {})
    with pytest.raises(TypeError, match="is not an Optimizer"):
        sched_mod.StepLR(object(), step_size=1)
    with pytest.raises(ValueError, match="between 0 and 1"):
        sched_mod.ConstantLR(opt, factor=2.0)
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas"):
        sched_mod.LambdaLR(opt, [lambda e: 1.0])
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        sched_mod.ReduceLROnPlateau(opt, factor=1.5)
    with pytest.raises(ValueError, match="mode max2 is unknown"):
        sched_mod.ReduceLROnPlateau(opt, mode="max2")
    with pytest.raises(ValueError, match="positive integer T_0"):
        sched_mod.CosineAnnealingWarmRestarts(opt, T_0=0)
    with pytest.raises(ValueError, match="total_steps OR"):
        sched_mod.OneCycleLR(opt, max_lr=0.1)
    rms = optim.Adagrad([ember.zeros(1, requires_grad=True)])
    with pytest.raises(ValueError, match="must support momentum"):
        sched_mod.CyclicLR(rms, 0.01, 0.1)
    one = sched_mod.OneCycleLR(opt, max_lr=0.1, total_steps=2)
    opt.step()
    one.step()
    one.step()
    with pytest.raises(ValueError, match="Tried to step 3 times"):
        one.step()
    other = _optimizer(ember, "SGD", {})
    with pytest.raises(ValueError, match="same optimizer"):
        sched_mod.SequentialLR(opt, [sched_mod.StepLR(other, 2)], milestones=[])
