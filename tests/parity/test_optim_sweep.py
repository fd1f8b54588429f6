"""A differential sweep of torch.optim against torch 2.13: every optimizer over its flags
(SGD momentum/dampening/nesterov/maximize/weight_decay, Adam/AdamW amsgrad/maximize/foreach,
Adagrad, Adadelta, Adamax, NAdam decoupled_weight_decay/momentum_decay, RAdam decoupled,
RMSprop centered/momentum, Rprop, ASGD, LBFGS with and without line search, SparseAdam), and
the lr schedulers over ~20 steps.

An optimizer case runs several steps on the same float64 parameters in both libraries (float32,
complex and two-group variants too), one of them zero-size and one whose gradient stays None,
with gradients from NumPy (so both see the same ones), alternating step(closure) with step()
after the gradients are set, and compares: the parameters after every step; state_dict() (the
per-parameter state's keys in order and values, and param_groups' keys and values), defaults
and repr; a resume from torch's state_dict loaded into a fresh ember optimizer;
add_param_group and zero_grad. A scheduler case compares get_last_lr() and the lrs (and
momenta) the optimizer holds after every step, also when resumed halfway from torch's
scheduler state_dict. Constructor errors must raise torch's exception type. Divergences kept
on purpose are in KNOWN with a reason (and in docs/DEVIATIONS.md); PENDING lists those not yet
decided.
"""
from __future__ import annotations

import copy
import math

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

pytestmark = [pytest.mark.parity, pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::DeprecationWarning")]

SHAPES = ((3, 4), (5,), (0,), (2,))   # (0,): zero-size; the last never gets a gradient
_NO_GRAD = 3
STEPS = 6


def _problem(seed, steps=STEPS, shapes=SHAPES):
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s) for s in shapes]
    noise = [[rng.standard_normal(s) for s in shapes] for _ in range(steps)]
    return init, noise


def _closure(lib, params, noise, sparse=False):
    """loss = sum(n * p + p^2 / 4) over the parameters that get a gradient (n + p / 2)."""
    def closure():
        loss = 0.0
        for i, (p, n) in enumerate(zip(params, noise)):
            if i == _NO_GRAD:
                continue
            a = p.detach().numpy()
            loss += float(np.sum(n * a + 0.25 * a * a).real)
            g = lib.tensor((n + 0.5 * a).astype(a.dtype))
            p.grad = g.to_sparse() if sparse else g
        return lib.tensor(loss, dtype=lib.float64)
    return closure


def _to(lib, x):
    """A state_dict (nested dicts/lists of tensors and numbers) with tensors of lib."""
    if isinstance(x, dict):
        return {k: _to(lib, v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(_to(lib, v) for v in x)
    if hasattr(x, "detach"):   # (a sparse momentum buffer of SGD loads as a dense one)
        return lib.tensor((x.to_dense() if x.is_sparse else x).detach().numpy().copy())
    return x


def _state_difference(se, st, where):
    """How two optimizer state_dicts differ, or None."""
    if list(se) != list(st):
        return f"{where}: keys ember {list(se)}, torch {list(st)}"
    for i, (ge, gt) in enumerate(zip(se["param_groups"], st["param_groups"])):
        if list(ge) != list(gt):
            return f"{where}: param_groups[{i}] keys ember {list(ge)}, torch {list(gt)}"
        for k in gt:
            if not _same(ge[k], gt[k]):
                return f"{where}: param_groups[{i}][{k!r}] ember {ge[k]!r}, torch {gt[k]!r}"
    if list(se["state"]) != list(st["state"]):
        return f"{where}: state keys ember {list(se['state'])}, torch {list(st['state'])}"
    for i in st["state"]:
        ke, kt = list(se["state"][i]), list(st["state"][i])
        if ke != kt:
            return f"{where}: state[{i}] keys ember {ke}, torch {kt}"
        for k in kt:
            if not _same(se["state"][i][k], st["state"][i][k]):
                return (f"{where}: state[{i}][{k!r}] ember {se['state'][i][k]!r}, "
                        f"torch {st['state'][i][k]!r}")
    return None


def _value(x):
    if hasattr(x, "detach"):
        t = x.detach()
        return t.to_dense().numpy() if t.is_sparse else t.numpy()
    return x


def _same(a, b):
    if hasattr(a, "dtype") and hasattr(b, "dtype") and str(a.dtype)[6:] != str(b.dtype)[6:]:
        return False   # ("ember.float32"[6:] == "torch.float32"[6:])
    a, b = _value(a), _value(b)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        # float32: a few ulps (the order of float32 operations differs between the libraries)
        rtol, atol = (2e-6, 1e-7) if np.float32 in (a.dtype, b.dtype) else (1e-9, 1e-12)
        return a.shape == b.shape and np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not (
            isinstance(a, bool) or isinstance(b, bool)):   # (LBFGS's t: 1 in torch, 1.0 here)
        return a == b or (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-12 * abs(b)
    return type(a) is type(b) and a == b


# ============================================================================ optimizers
OPT_CASES: list = []


def ocase(name, what, kwargs, steps=STEPS, sparse=False, shapes=SHAPES):
    OPT_CASES.append((name, what, (kwargs, steps, sparse, shapes)))


for _what, _kw in (("plain", {"lr": 0.1}), ("momentum", {"lr": 0.1, "momentum": 0.9}),
                   ("dampening", {"lr": 0.1, "momentum": 0.9, "dampening": 0.3}),
                   ("nesterov", {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
                   ("maximize", {"lr": 0.1, "momentum": 0.5, "maximize": True}),
                   ("weight_decay", {"lr": 0.1, "weight_decay": 0.1, "momentum": 0.9}),
                   ("foreach", {"lr": 0.1, "momentum": 0.9, "foreach": True}),
                   ("foreach=False", {"lr": 0.1, "momentum": 0.9, "foreach": False}),
                   ("fused", {"lr": 0.1, "momentum": 0.9, "fused": True}),
                   ("default lr", {})):
    ocase("SGD", _what, _kw)
for _n in ("Adam", "AdamW"):
    for _what, _kw in (("default", {}), ("amsgrad", {"amsgrad": True}),
                       ("maximize", {"maximize": True}),
                       ("weight_decay", {"weight_decay": 0.1, "lr": 0.01}),
                       ("betas eps", {"betas": (0.8, 0.9), "eps": 1e-6}),
                       ("foreach", {"foreach": True}), ("foreach=False", {"foreach": False}),
                       ("fused", {"fused": True}), ("fused amsgrad", {"fused": True,
                                                                       "amsgrad": True}),
                       ("capturable=False", {"capturable": False}),
                       ("amsgrad maximize decay", {"amsgrad": True, "maximize": True,
                                                   "weight_decay": 0.05})):
        ocase(_n, _what, _kw)
for _what, _kw in (("default", {}), ("lr_decay", {"lr": 0.1, "lr_decay": 0.1}),
                   ("weight_decay", {"weight_decay": 0.1}),
                   ("initial_accumulator_value", {"initial_accumulator_value": 0.5}),
                   ("maximize", {"maximize": True}), ("foreach", {"foreach": True}),
                   ("fused", {"fused": True})):
    ocase("Adagrad", _what, _kw)
for _what, _kw in (("default", {}), ("rho eps", {"rho": 0.5, "eps": 1e-4, "lr": 0.5}),
                   ("weight_decay", {"weight_decay": 0.1}), ("maximize", {"maximize": True}),
                   ("foreach", {"foreach": True})):
    ocase("Adadelta", _what, _kw)
for _what, _kw in (("default", {}), ("weight_decay", {"weight_decay": 0.1}),
                   ("maximize", {"maximize": True}), ("foreach", {"foreach": True})):
    ocase("Adamax", _what, _kw)
for _what, _kw in (("default", {}), ("momentum_decay", {"momentum_decay": 0.01}),
                   ("weight_decay", {"weight_decay": 0.1}),
                   ("decoupled_weight_decay", {"weight_decay": 0.1,
                                               "decoupled_weight_decay": True}),
                   ("maximize", {"maximize": True}), ("foreach", {"foreach": True})):
    ocase("NAdam", _what, _kw)
for _what, _kw in (("default", {}), ("weight_decay", {"weight_decay": 0.1}),
                   ("decoupled_weight_decay", {"weight_decay": 0.1,
                                               "decoupled_weight_decay": True}),
                   ("maximize", {"maximize": True}), ("foreach", {"foreach": True})):
    ocase("RAdam", _what, _kw, steps=8)   # past the first 5 steps (the rectified ones)
for _what, _kw in (("default", {}), ("centered", {"centered": True}),
                   ("momentum", {"momentum": 0.9}),
                   ("centered momentum decay", {"centered": True, "momentum": 0.5,
                                                "weight_decay": 0.1, "alpha": 0.9}),
                   ("maximize", {"maximize": True}), ("foreach", {"foreach": True})):
    ocase("RMSprop", _what, _kw)
for _what, _kw in (("default", {}), ("etas step_sizes", {"etas": (0.3, 1.5),
                                                           "step_sizes": (1e-3, 0.5)}),
                   ("maximize", {"maximize": True}), ("foreach", {"foreach": True})):
    ocase("Rprop", _what, _kw)
for _what, _kw in (("default", {}), ("t0 lambd", {"t0": 2, "lambd": 1e-2, "alpha": 0.5}),
                   ("weight_decay", {"weight_decay": 0.1}), ("maximize", {"maximize": True}),
                   ("foreach", {"foreach": True})):
    ocase("ASGD", _what, _kw, steps=8)
# (max_iter 4: a step of 20 iterations reaches the minimum, where the curvature history is
# rounding noise)
for _what, _kw in (("default", {"lr": 0.5, "max_iter": 4}),
                   ("history_size", {"lr": 0.5, "history_size": 2, "max_iter": 5}),
                   ("strong_wolfe", {"line_search_fn": "strong_wolfe", "max_iter": 4}),
                   ("tolerance", {"lr": 0.5, "tolerance_grad": 1e-3, "max_iter": 4})):
    ocase("LBFGS", _what, _kw, steps=3, shapes=((3, 4), (5,), (0,)))
ocase("SparseAdam", "default", {"lr": 0.05}, sparse=True, shapes=((6, 3), (4,)))
ocase("SGD", "sparse grads momentum", {"lr": 0.1, "momentum": 0.9}, sparse=True,
      shapes=((6, 3), (4,)))
for _n, _kw in (("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
                ("Adam", {"amsgrad": True}), ("AdamW", {}), ("Adagrad", {}), ("Adadelta", {}),
                ("Adamax", {}), ("NAdam", {}), ("RAdam", {}), ("RMSprop", {"centered": True}),
                ("Rprop", {}), ("ASGD", {})):
    ocase(_n, "float32", dict(_kw, _float32=True))
    ocase(_n, "two groups", dict(_kw, _groups=True))
    ocase(_n, "complex", dict(_kw, _complex=True))
ocase("Adam", "tensor lr", {"lr": "tensor"})
ocase("SparseAdam", "betas eps", {"lr": 0.05, "betas": (0.5, 0.7), "eps": 1e-4}, sparse=True,
      shapes=((6, 3), (4,)))

# constructor errors: (optimizer, what, kwargs)
for _n, _what, _kw in (
        ("SGD", "negative lr", {"lr": -0.1}), ("SGD", "negative momentum", {"momentum": -0.5}),
        ("SGD", "negative weight_decay", {"weight_decay": -1.0}),
        ("SGD", "nesterov without momentum", {"nesterov": True}),
        ("SGD", "nesterov with dampening", {"nesterov": True, "momentum": 0.9,
                                            "dampening": 0.1}),
        ("Adam", "beta >= 1", {"betas": (1.0, 0.9)}), ("Adam", "negative eps", {"eps": -1.0}),
        ("Adam", "foreach and fused", {"foreach": True, "fused": True}),
        ("AdamW", "beta2 < 0", {"betas": (0.9, -0.1)}),
        ("Adagrad", "negative lr_decay", {"lr_decay": -1.0}),
        ("Adadelta", "rho > 1", {"rho": 1.5}), ("RMSprop", "negative alpha", {"alpha": -1.0}),
        ("Rprop", "bad etas", {"etas": (1.5, 1.2)}), ("NAdam", "negative momentum_decay",
                                                      {"momentum_decay": -1.0}),
        ("RAdam", "negative weight_decay", {"weight_decay": -0.1}),
        ("LBFGS", "bad line search", {"line_search_fn": "armijo"}),
        ("SparseAdam", "beta1 < 0", {"betas": (-0.1, 0.9)})):
    ocase(_n, _what, dict(_kw, _error=True))
ocase("SGD", "no parameters", {"_empty": True})
for _n in ("SGD", "Adam"):
    ocase(_n, "load_state_dict other group count", {"_bad_load": "groups"})
    ocase(_n, "load_state_dict other group size", {"_bad_load": "size"})


def _make(lib, name, kwargs, params):
    kwargs = {k: v for k, v in kwargs.items() if not k.startswith("_")}
    if kwargs.get("lr") == "tensor":
        kwargs["lr"] = lib.tensor(0.01)
    return getattr(lib.optim, name)(params, **kwargs)


def _params(lib, arrays, kwargs):
    """The parameters (float32 with _float32, complex with _complex), and what the optimizer
    is given: them, or two groups with _groups (the first with its own lr)."""
    if kwargs.get("_complex"):
        arrays = [a + 1j * np.cos(a) for a in arrays]
    params = [lib.tensor(a.astype(np.float32) if kwargs.get("_float32") else a,
                         requires_grad=True) for a in arrays]
    if not kwargs.get("_groups"):
        return params, params
    return params, [{"params": params[:2], "lr": 0.02}, {"params": params[2:]}]


def _run_opt(lib, name, kwargs, init, noise, sparse):
    """Every other step calls step() after the gradients are set (a training loop's form), the
    others step(closure); LBFGS always takes the closure."""
    params, given = _params(lib, init, kwargs)
    opt = _make(lib, name, kwargs, given)
    history = []
    for k, n in enumerate(noise):
        closure = _closure(lib, params, n, sparse and lib is torch)
        if k % 2 and name != "LBFGS":
            closure()
            opt.step()
        else:
            opt.step(closure)
        history.append([p.detach().numpy().copy() for p in params])
    return params, opt, history


def _history_difference(he, ht, where):
    for k, (se, st) in enumerate(zip(he, ht)):
        for i, (a, b) in enumerate(zip(se, st)):
            if not _same(a, b):
                worst = np.max(np.abs(a - b)) if a.shape == b.shape and a.size else "?"
                return f"{where}: step {k + 1} param {i} differs (max {worst})"
    return None


def _construct(name, kwargs):
    """The exception each library's constructor raises (None when both build)."""
    out = []
    for lib in (ember, torch):
        params = [] if kwargs.get("_empty") else [lib.zeros(2, requires_grad=True)]
        try:
            _make(lib, name, {k: v for k, v in kwargs.items() if not k.startswith("_")}, params)
            out.append(None)
        except Exception as exc:
            out.append(exc)
    return out


def _bad_load(name, kind):
    """The exception each library raises loading a state_dict that does not fit: another
    number of groups, or a group of another size."""
    out = []
    for lib in (ember, torch):
        ps = [lib.zeros(2, requires_grad=True) for _ in range(3)]
        saved = (_make(lib, name, {}, [{"params": ps[:1]}, {"params": ps[1:]}]) if kind == "groups"
                 else _make(lib, name, {}, ps[:2]))
        opt = _make(lib, name, {}, ps)
        try:
            opt.load_state_dict(saved.state_dict())
            out.append(None)
        except Exception as exc:
            out.append(exc)
    return out


def _opt_divergence(name, spec):
    kwargs, steps, sparse, shapes = spec
    if kwargs.get("_bad_load"):
        ee, et = _bad_load(name, kwargs["_bad_load"])
        if (ee is None) != (et is None) or (et is not None and not isinstance(ee, type(et))):
            return f"load_state_dict: ember {ee!r}, torch {et!r}"
        return None
    if kwargs.get("_error") or kwargs.get("_empty"):
        ee, et = _construct(name, kwargs)
        if (ee is None) != (et is None) or (et is not None and not isinstance(ee, type(et))):
            return f"constructor: ember {ee!r}, torch {et!r}"
        return None
    init, noise = _problem(sum(map(ord, name + str(kwargs))) % 1000, steps, shapes)
    try:
        pe, oe, he = _run_opt(ember, name, kwargs, init, noise, sparse)
    except Exception as exc:
        return f"ember raises {type(exc).__name__}: {str(exc)[:120]}"
    pt, ot, ht = _run_opt(torch, name, kwargs, init, noise, sparse)
    found = _history_difference(he, ht, "steps") or _state_difference(
        oe.state_dict(), ot.state_dict(), "state_dict")
    if found:
        return found
    if list(oe.defaults) != list(ot.defaults) or not all(
            _same(oe.defaults[k], ot.defaults[k]) for k in ot.defaults):
        return f"defaults: ember {oe.defaults}, torch {ot.defaults}"
    if repr(oe) != repr(ot):
        return f"repr: ember {repr(oe)!r}, torch {repr(ot)!r}"

    # resume: torch's state_dict into fresh optimizers of both libraries (their own lr replaced
    # by the dict's; the load casts state to the parameters' dtype, so torch resumes too)
    sd = ot.state_dict()
    params2, given2 = _params(ember, [p.detach().numpy().copy() for p in pt],
                              dict(kwargs, _complex=False))
    pt, given_t = _params(torch, [p.detach().numpy().copy() for p in pt],
                          dict(kwargs, _complex=False))
    ot = _make(torch, name, dict(kwargs, lr=123.0), given_t)
    ot.load_state_dict(sd)
    try:
        opt2 = _make(ember, name, dict(kwargs, lr=123.0), given2)
        opt2.load_state_dict(_to(ember, sd))
    except Exception as exc:
        return f"load_state_dict raises {type(exc).__name__}: {str(exc)[:120]}"
    more = _problem(7, 2, shapes)[1]
    h2, ht2 = [], []
    for n in more:
        opt2.step(_closure(ember, params2, n))
        ot.step(_closure(torch, pt, n, sparse))
        h2.append([p.detach().numpy().copy() for p in params2])
        ht2.append([p.detach().numpy().copy() for p in pt])
    found = _history_difference(h2, ht2, "after load_state_dict") or _state_difference(
        opt2.state_dict(), ot.state_dict(), "state_dict after load_state_dict")
    if found:
        return found

    # add_param_group, then zero_grad both ways
    extra = np.linspace(-1, 1, 4)
    for lib, opt in ((ember, opt2), (torch, ot)):
        opt.add_param_group({"params": [lib.tensor(extra, requires_grad=True)], "lr": 0.05})
    found = _state_difference(opt2.state_dict(), ot.state_dict(), "after add_param_group")
    if found:
        return found
    for set_to_none in (False, True):
        for lib, ps, opt in ((ember, params2, opt2), (torch, pt, ot)):
            _closure(lib, ps, more[0], sparse and lib is torch)()
            opt.zero_grad(set_to_none=set_to_none)
        ge = [None if p.grad is None else _value(p.grad) for p in params2]
        gt = [None if p.grad is None else _value(p.grad) for p in pt]
        if any((a is None) != (b is None) or (a is not None and not _same(a, b))
               for a, b in zip(ge, gt)):
            return f"zero_grad(set_to_none={set_to_none}): ember {ge}, torch {gt}"
    return None


# ============================================================================ lr schedulers
SCHED_CASES: list = []


def scase(what, make, opt_kw=None, metrics=None, steps=20):
    """make(lr_scheduler module, optimizer) -> scheduler; metrics: the values given to
    ReduceLROnPlateau.step."""
    SCHED_CASES.append(("lr_scheduler", what, (make, opt_kw or {}, metrics, steps)))


scase("StepLR", lambda S, o: S.StepLR(o, 3, gamma=0.5))
scase("MultiStepLR", lambda S, o: S.MultiStepLR(o, [2, 5, 5, 11], gamma=0.3))
scase("ExponentialLR", lambda S, o: S.ExponentialLR(o, 0.8))
scase("CosineAnnealingLR", lambda S, o: S.CosineAnnealingLR(o, 7, eta_min=0.01))
scase("CosineAnnealingWarmRestarts", lambda S, o: S.CosineAnnealingWarmRestarts(
    o, 3, T_mult=2, eta_min=1e-3))
scase("OneCycleLR", lambda S, o: S.OneCycleLR(o, max_lr=1.0, total_steps=21),
      {"momentum": 0.9})
scase("OneCycleLR linear three_phase", lambda S, o: S.OneCycleLR(
    o, max_lr=[1.0, 0.5], epochs=3, steps_per_epoch=7, anneal_strategy="linear",
    three_phase=True, div_factor=10.0, final_div_factor=100.0), {"momentum": 0.9})
scase("OneCycleLR Adam betas", lambda S, o: S.OneCycleLR(o, max_lr=0.1, total_steps=25,
                                                           pct_start=0.4), {"_adam": True})
scase("CyclicLR triangular", lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=4),
      {"momentum": 0.9})
scase("CyclicLR triangular2", lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=3,
                                                      step_size_down=2, mode="triangular2"),
      {"momentum": 0.9})
scase("CyclicLR exp_range", lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=3,
                                                    mode="exp_range", gamma=0.9,
                                                    cycle_momentum=False))
scase("ReduceLROnPlateau", lambda S, o: S.ReduceLROnPlateau(o, patience=2, factor=0.5),
      metrics=[1.0, 0.9, 0.9, 0.9, 0.9, 0.8, 0.8, 0.8, 0.8, 0.8] * 2)
scase("ReduceLROnPlateau max rel cooldown", lambda S, o: S.ReduceLROnPlateau(
    o, mode="max", patience=1, threshold=0.1, cooldown=2, min_lr=0.02),
    metrics=[1.0, 1.05, 1.2, 1.2, 1.2, 1.3, 1.31, 1.0, 1.0, 1.0] * 2)
scase("ReduceLROnPlateau abs eps", lambda S, o: S.ReduceLROnPlateau(
    o, threshold_mode="abs", threshold=0.05, patience=0, factor=0.9, eps=1e-3),
    metrics=[1.0 - 0.01 * i for i in range(20)])
scase("LambdaLR", lambda S, o: S.LambdaLR(o, lambda e: 1.0 / (e + 1)))
scase("LambdaLR per group", lambda S, o: S.LambdaLR(o, [lambda e: 0.9 ** e, lambda e: e + 1]))
scase("MultiplicativeLR", lambda S, o: S.MultiplicativeLR(o, lambda e: 0.95))
scase("LinearLR", lambda S, o: S.LinearLR(o, start_factor=0.25, total_iters=6))
scase("ConstantLR", lambda S, o: S.ConstantLR(o, factor=0.5, total_iters=4))
scase("SequentialLR", lambda S, o: S.SequentialLR(o, [S.LinearLR(o, 0.1, total_iters=4),
                                                      S.ExponentialLR(o, 0.9)], milestones=[5]))
scase("ChainedScheduler", lambda S, o: S.ChainedScheduler([S.ConstantLR(o, 0.5, total_iters=3),
                                                           S.ExponentialLR(o, 0.9)]))
scase("PolynomialLR", lambda S, o: S.PolynomialLR(o, total_iters=8, power=2.0))
scase("CosineAnnealingLR past T_max", lambda S, o: S.CosineAnnealingLR(o, 5), steps=25)
scase("two schedulers on one optimizer", lambda S, o: _Both(S.LinearLR(o, 0.5, total_iters=5),
                                                            S.StepLR(o, 4, 0.5)))
scase("CyclicLR scale_fn", lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=2,
                                                   scale_fn=_half_power, scale_mode="iterations",
                                                   cycle_momentum=False))
scase("ReduceLROnPlateau min_lr list", lambda S, o: S.ReduceLROnPlateau(
    o, patience=0, factor=0.3, min_lr=[0.01, 0.02]), metrics=[1.0] * 20)
scase("SequentialLR three", lambda S, o: S.SequentialLR(o, [
    S.ConstantLR(o, 0.1, total_iters=2), S.CosineAnnealingLR(o, 5),
    S.MultiplicativeLR(o, lambda e: 0.9)], milestones=[3, 9]))
scase("ChainedScheduler with optimizer", lambda S, o: S.ChainedScheduler(
    [S.LinearLR(o, 0.2, total_iters=4), S.MultiStepLR(o, [3, 6], 0.5)], optimizer=o))


# bad arguments and steps past the end
scase("OneCycleLR past total_steps", lambda S, o: S.OneCycleLR(o, 1.0, total_steps=10))
scase("OneCycleLR no length", lambda S, o: S.OneCycleLR(o, 1.0))
scase("OneCycleLR bad anneal", lambda S, o: S.OneCycleLR(o, 1.0, 30, anneal_strategy="exp"))
scase("OneCycleLR pct_start > 1", lambda S, o: S.OneCycleLR(o, 1.0, 30, pct_start=1.5))
scase("ReduceLROnPlateau factor 1", lambda S, o: S.ReduceLROnPlateau(o, factor=1.0),
      metrics=[1.0] * 20)
scase("ReduceLROnPlateau bad mode", lambda S, o: S.ReduceLROnPlateau(o, mode="avg"),
      metrics=[1.0] * 20)
scase("ReduceLROnPlateau bad threshold_mode", lambda S, o: S.ReduceLROnPlateau(
    o, threshold_mode="pct"), metrics=[1.0] * 20)
scase("ReduceLROnPlateau min_lr list length", lambda S, o: S.ReduceLROnPlateau(
    o, min_lr=[0.1]), metrics=[1.0] * 20)
scase("LambdaLR wrong count", lambda S, o: S.LambdaLR(o, [lambda e: 1.0] * 3))
scase("LinearLR start_factor 0", lambda S, o: S.LinearLR(o, start_factor=0.0))
scase("ConstantLR factor > 1", lambda S, o: S.ConstantLR(o, factor=1.5))
scase("SequentialLR milestones count", lambda S, o: S.SequentialLR(
    o, [S.ConstantLR(o, 0.5), S.ExponentialLR(o, 0.9)], milestones=[2, 4]))
scase("StepLR last_epoch without initial_lr", lambda S, o: S.StepLR(o, 2, last_epoch=3))
scase("CyclicLR bad mode", lambda S, o: S.CyclicLR(o, 0.01, 0.1, mode="sine"),
      {"momentum": 0.9})
scase("CosineAnnealingWarmRestarts T_0 0", lambda S, o: S.CosineAnnealingWarmRestarts(o, 0))
scase("CosineAnnealingWarmRestarts T_mult float", lambda S, o: S.CosineAnnealingWarmRestarts(
    o, 2, T_mult=1.5))


def _half_power(x):
    return 0.5 ** x


class _Both:
    """Two schedulers stepped together on one optimizer (a program's warm-up + decay)."""

    def __init__(self, a, b):
        self.a, self.b = a, b

    def step(self):
        self.a.step()
        self.b.step()

    def get_last_lr(self):
        return self.b.get_last_lr()

    def state_dict(self):
        return {"a": self.a.state_dict(), "b": self.b.state_dict()}

    def load_state_dict(self, sd):
        self.a.load_state_dict(sd["a"])
        self.b.load_state_dict(sd["b"])


def _sched_run(lib, make, opt_kw, metrics, steps, load=None):
    """The trace of lrs (and momenta) over the steps, the state_dict's keys, and the state_dict
    halfway; with load (torch's halfway state_dict), loaded there into this scheduler."""
    p = lib.tensor(np.ones(3), requires_grad=True)
    q = lib.tensor(np.ones(2), requires_grad=True)
    if opt_kw.get("_adam"):
        opt = lib.optim.Adam([p, q], lr=0.1)
    else:
        opt = lib.optim.SGD([{"params": [p]}, {"params": [q], "lr": 0.05}], lr=0.1, **opt_kw)
    sched = make(lib.optim.lr_scheduler, opt)
    trace = [("init", sched.get_last_lr(), [g["lr"] for g in opt.param_groups])]
    half = None
    for k in range(steps):
        if k == steps // 2:
            half = copy.deepcopy(sched.state_dict())
            if load is not None:
                sched.load_state_dict(copy.deepcopy(load))
        p.grad, q.grad = lib.ones(3, dtype=lib.float64), lib.ones(2, dtype=lib.float64)
        opt.step()
        sched.step(metrics[k]) if metrics is not None else sched.step()
        trace.append((k, list(sched.get_last_lr()), [g["lr"] for g in opt.param_groups],
                      [g.get("momentum", g.get("betas")) for g in opt.param_groups]))
    keys = [k for k, v in sched.state_dict().items() if not callable(v)]
    return trace, keys, half


def _sched_divergence(spec):
    make, opt_kw, metrics, steps = spec
    try:
        tt, kt, half = _sched_run(torch, make, opt_kw, metrics, steps)
    except Exception as et:   # a bad argument or a step too many: the same error type
        try:
            _sched_run(ember, make, opt_kw, metrics, steps)
        except Exception as ee:
            if isinstance(ee, type(et)):
                return None
            return f"ember raises {type(ee).__name__} ({ee}), torch {type(et).__name__} ({et})"
        return f"ember returns, torch raises {type(et).__name__} ({et})"
    for load in (None, half):   # then resumed halfway from torch's state_dict
        where = "" if load is None else "after loading torch's state_dict: "
        try:
            te, ke, _ = _sched_run(ember, make, opt_kw, metrics, steps, load)
        except Exception as exc:
            return f"{where}ember raises {type(exc).__name__}: {str(exc)[:120]}"
        for a, b in zip(te, tt):
            if not _same(list(a), list(b)):
                return f"{where}step {a[0]}: ember {a[1:]}, torch {b[1:]}"
        if ke != kt:
            return f"{where}state_dict keys: ember {ke}, torch {kt}"
    return None


# ============================================================================ the harness
# (group, case) -> why the difference is deliberate (docs/DEVIATIONS.md, Optimizers)
KNOWN: dict = {
    ("ASGD", "foreach"):
        "torch's foreach ASGD computes 1 - lambd * eta and the update in eta's float32 tensor "
        "arithmetic (its single-tensor path, which ember follows for every foreach value, in "
        "float64 via .item()), a ~1e-9 difference between torch's own two paths",
    ("LBFGS", "bad line search"):
        "ember refuses an unknown line_search_fn at construction (ValueError); torch keeps it "
        "and raises RuntimeError at the first step()",
}
KNOWN[("Adam", "tensor lr")] = (
    "with a Tensor lr, torch computes lr / bias_correction1 as a float32 tensor (a ~4e-8 "
    "relative difference in the step); ember reads the lr's value as a Python float")
for _what in ("default", "momentum_decay", "weight_decay", "decoupled_weight_decay", "maximize",
              "foreach", "two groups"):
    KNOWN[("NAdam", _what)] = (
        "NAdam's mu_product keeps its saved dtype on load_state_dict (torch casts it to the "
        "parameter's, so torch's resumed run departs from its uninterrupted one; ember's is "
        "bit-identical)")

# (group, case) -> found by this sweep and not yet decided: fix it and drop the entry, or move
# it to KNOWN with a reason. Each still diverges (checked like KNOWN).
PENDING: set = set()


def _verdict(found, key, label):
    if key in KNOWN or key in PENDING:
        assert found is not None, f"{label} agrees with torch now: drop it"
        return
    assert found is None, f"{label}: {found}"


@pytest.mark.parametrize("name,what,spec", OPT_CASES, ids=[f"{n}-{w}" for n, w, _ in OPT_CASES])
def test_optimizer_against_torch(name, what, spec):
    _verdict(_opt_divergence(name, spec), (name, what), f"optim.{name} ({what})")


@pytest.mark.parametrize("group,what,spec", SCHED_CASES, ids=[w for _, w, _ in SCHED_CASES])
def test_lr_scheduler_against_torch(group, what, spec):
    _verdict(_sched_divergence(spec), (group, what), f"lr_scheduler.{what}")
