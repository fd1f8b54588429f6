"""The generic module suite: every nn module in ember/testing/_module_table.py is constructed,
run forward, gradchecked and gradgradchecked (with respect to its inputs, float64), saved and
reloaded through its state_dict, and compared with torch 2.13 (outputs, input and parameter
gradients, state_dict keys and buffers, repr) with the same weights.

Parametrized by module name, so a failure reads ``test_module_gradcheck[LSTM]``.
"""
from __future__ import annotations

import importlib
import inspect
import zlib

import numpy as np
import pytest

import ember
from ember import nn
from ember.autograd import gradcheck, gradgradcheck
from ember.testing import assert_close
from ember.testing._module_table import MODULE_TABLE

NAMES = sorted(MODULE_TABLE)
RUNNABLE = [n for n in NAMES if MODULE_TABLE[n].forward]


def _xfail_once(names):
    return [pytest.param(n, marks=pytest.mark.xfail(
        strict=True, reason=MODULE_TABLE[n].once_differentiable))
        if MODULE_TABLE[n].once_differentiable else n for n in names]


def _rng(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def _arrays(name):
    rng = _rng(name)
    return [make(rng) for make in MODULE_TABLE[name].inputs]


def _module(lib, name, seed=0):
    lib.manual_seed(seed)
    spec = MODULE_TABLE[name]
    m = spec.make(lib).double()
    return m.train(spec.train)


def _tensors(lib, arrays):
    return [lib.tensor(a) for a in arrays]


def _float_outputs(out):
    """Module output flattened to its floating tensors ((out, (h, c)) -> [out, h, c])."""
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _float_outputs(o)]
    if out is None or not out.is_floating_point():
        return []
    return [out]


def _grad_positions(name, arrays):
    spec = MODULE_TABLE[name]
    floats = [i for i, a in enumerate(arrays) if a.dtype.kind == "f"]
    return floats if spec.grad_inputs is None else list(spec.grad_inputs)


def _as_function(module, name, arrays):
    """(f, leaves): f(*leaves) runs the module with the differentiable inputs replaced."""
    xs = _tensors(ember, arrays)
    pos = _grad_positions(name, arrays)
    leaves = [xs[i].requires_grad_() for i in pos]

    def f(*ls):
        args = list(xs)
        for i, leaf in zip(pos, ls, strict=True):
            args[i] = leaf
        return tuple(_float_outputs(module(*args, **MODULE_TABLE[name].kwargs)))

    return f, leaves


# ---------------------------------------------------------------------------------------------
# the table itself


def _public_modules():
    return sorted(n for n, c in vars(nn).items()
                  if inspect.isclass(c) and issubclass(c, nn.Module))


def test_every_public_module_has_a_table_line():
    missing = [n for n in _public_modules() if n not in MODULE_TABLE]
    assert not missing, f"nn modules without a line in ember/testing/_module_table.py: {missing}"


@pytest.mark.parametrize("name", NAMES)
def test_module_line_builds_its_class(name):
    assert type(_module(ember, name)).__name__ == name


# ---------------------------------------------------------------------------------------------
# ember alone


@pytest.mark.parametrize("name", RUNNABLE)
def test_module_forward_float64_and_float32(name):
    m = _module(ember, name)
    outs = _float_outputs(m(*_tensors(ember, _arrays(name)), **MODULE_TABLE[name].kwargs))
    assert outs, f"{name}: no floating output"
    assert all(o.dtype == ember.float64 for o in outs)
    m32 = _module(ember, name).float()
    args32 = [ember.tensor(a.astype(np.float32) if a.dtype.kind == "f" else a)
              for a in _arrays(name)]
    outs32 = _float_outputs(m32(*args32, **MODULE_TABLE[name].kwargs))
    assert all(o.dtype == ember.float32 for o in outs32)
    for o, o32 in zip(outs, outs32, strict=True):
        assert_close(o32.double(), o, rtol=1e-4, atol=1e-5, msg=f"{name} float32 vs float64")


@pytest.mark.parametrize("name", [n for n in RUNNABLE if _grad_positions(n, _arrays(n))])
def test_module_gradcheck(name):
    f, leaves = _as_function(_module(ember, name), name, _arrays(name))
    assert gradcheck(f, leaves), name


@pytest.mark.parametrize("name", _xfail_once(
    [n for n in RUNNABLE if _grad_positions(n, _arrays(n))]))
def test_module_gradgradcheck(name):
    f, leaves = _as_function(_module(ember, name), name, _arrays(name))
    assert gradgradcheck(f, leaves), name


@pytest.mark.parametrize("name", RUNNABLE)
def test_module_backward_reaches_inputs_and_every_parameter(name):
    m = _module(ember, name)
    arrays = _arrays(name)
    xs = _tensors(ember, arrays)
    pos = _grad_positions(name, arrays)
    for i in pos:
        xs[i].requires_grad_()
    outs = _float_outputs(m(*xs, **MODULE_TABLE[name].kwargs))
    if not pos and not list(m.parameters()):
        pytest.skip(f"{name} has neither parameters nor differentiable inputs")
    sum((o * (1.0 + ember.arange(o.numel(), dtype=ember.float64).reshape(o.shape))).sum()
        for o in outs).backward()
    for i in pos:
        assert xs[i].grad is not None and xs[i].grad.shape == xs[i].shape, f"{name} input {i}"
    for pname, p in m.named_parameters():
        assert p.grad is not None, f"{name}.{pname} got no gradient"
        assert p.grad.shape == p.shape and p.grad.dtype == p.dtype


@pytest.mark.parametrize("name", NAMES)
def test_module_state_dict_round_trip(name):
    a, b = _module(ember, name, seed=1), _module(ember, name, seed=2)
    sd = a.state_dict()
    result = b.load_state_dict(sd)
    assert not result.missing_keys and not result.unexpected_keys
    for k, v in b.state_dict().items():
        assert_close(v, sd[k], rtol=0, atol=0, msg=f"{name}: {k}")
    if MODULE_TABLE[name].forward:
        a.eval(), b.eval()  # eval: running statistics are not updated by the comparison
        args = _tensors(ember, _arrays(name))
        kw = MODULE_TABLE[name].kwargs
        assert_close(tuple(_float_outputs(b(*args, **kw))), tuple(_float_outputs(a(*args, **kw))),
                     rtol=0, atol=0, msg=name)


# ---------------------------------------------------------------------------------------------
# parity with torch


def _torch_twin(torch, name, ours):
    """torch's module built from the same line, holding our weights and buffers."""
    theirs = _module(torch, name)
    sd = {k: torch.from_numpy(np.array(v.numpy(), copy=True)) for k, v in
          ours.state_dict().items()}
    theirs.load_state_dict(sd)
    return theirs


@pytest.mark.parity
@pytest.mark.parametrize("name", NAMES)
def test_module_repr_and_state_dict_keys_match_torch(name):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    ours, theirs = _module(ember, name), _module(torch, name)
    assert repr(ours) == repr(theirs).replace("torch.", "ember.")
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for (k, v), (_, tv) in zip(ours.state_dict().items(), theirs.state_dict().items(),
                               strict=True):
        if torch.nn.parameter.is_lazy(tv):  # a lazy layer's shapes exist after its 1st forward
            continue
        assert tuple(v.shape) == tuple(tv.shape), f"{name}: {k}"
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]


@pytest.mark.parity
@pytest.mark.parametrize("name", NAMES)
def test_module_submodule_classes_are_the_ones_at_torchs_paths(name):
    """A module's children are instances of the very class found where torch defines theirs:
    a pickled model names each child's class, and torch.serialization.safe_globals lists the
    classes a program imports from torch's paths, so a same-named copy of a class defined in
    another file makes ember.load refuse the program's own checkpoint."""
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    ours, theirs = _module(ember, name), _module(torch, name)
    for (path, sub), (_, tsub) in zip(ours.named_modules(), theirs.named_modules(),
                                      strict=True):
        cls = type(tsub)
        if not cls.__module__.startswith("torch."):
            continue
        home = importlib.import_module("ember" + cls.__module__[len("torch"):])
        assert type(sub) is getattr(home, cls.__name__), (
            f"{name}: child {path!r} is {type(sub).__module__}.{type(sub).__name__}, torch's "
            f"is {cls.__module__}.{cls.__name__}")


@pytest.mark.parity
@pytest.mark.filterwarnings("ignore::UserWarning")  # torch's nested-tensor / enable_* notes
@pytest.mark.parametrize("name", RUNNABLE)
def test_module_forward_backward_match_torch(name):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    spec = MODULE_TABLE[name]
    ours = _module(ember, name)
    theirs = _torch_twin(torch, name, ours)
    arrays = _arrays(name)
    pos = _grad_positions(name, arrays)
    xs, txs = _tensors(ember, arrays), _tensors(torch, arrays)
    for i in pos:
        xs[i].requires_grad_(), txs[i].requires_grad_()
    outs = _float_outputs(ours(*xs, **spec.kwargs))
    touts = _float_outputs(theirs(*txs, **spec.kwargs))
    rtol, atol = spec.tol
    assert len(outs) == len(touts), name
    for o, t in zip(outs, touts, strict=True):
        assert_close(o, t.detach(), rtol=rtol, atol=atol, msg=f"{name} output")
    weights = [np.arange(1.0, o.numel() + 1).reshape(tuple(o.shape)) for o in outs]
    sum((o * ember.tensor(w)).sum() for o, w in zip(outs, weights, strict=True)).backward()
    sum((t * torch.tensor(w)).sum() for t, w in zip(touts, weights, strict=True)).backward()
    for i in pos if not spec.grad_parity else ():
        assert_close(xs[i].grad, txs[i].grad, rtol=rtol, atol=atol, msg=f"{name} input {i} grad")
    tparams = dict(theirs.named_parameters())
    for pname, p in ours.named_parameters():
        assert_close(p.grad, tparams[pname].grad, rtol=rtol, atol=atol,
                     msg=f"{name}.{pname} grad")
    tbufs = dict(theirs.named_buffers())
    for bname, b in ours.named_buffers():  # running statistics after a training forward
        assert_close(b, tbufs[bname], rtol=rtol, atol=atol, msg=f"{name}.{bname}")
