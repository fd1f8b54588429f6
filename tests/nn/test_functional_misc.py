"""Distances and normalize (vs torch, zero-norm gradients), cdist, the autocast hook of
F.linear, the ember.nn namespace and the paper's Listing 1 example."""
from __future__ import annotations

import pathlib
import runpy
import warnings

import numpy as np
import pytest

import ember
from ember import nn
from ember.autograd import gradcheck, gradgradcheck

F = nn.functional
ROOT = pathlib.Path(__file__).resolve().parents[2]


def _torch():
    return pytest.importorskip("torch", reason="torch oracle not installed")


def _both(fn_name, arrays, kwargs, diff=None, rtol=1e-10, atol=1e-12, torch_fn=None):
    torch = _torch()
    diff = range(len(arrays)) if diff is None else diff
    ours = [ember.tensor(a, requires_grad=i in diff) for i, a in enumerate(arrays)]
    theirs = [torch.tensor(a, requires_grad=i in diff) for i, a in enumerate(arrays)]
    y = getattr(F, fn_name)(*ours, **kwargs)
    ref = (torch_fn or getattr(torch.nn.functional, fn_name))(*theirs, **kwargs)
    np.testing.assert_allclose(y.detach().numpy(), ref.detach().numpy(), rtol=rtol, atol=atol)
    g = np.cos(np.arange(ref.numel())).reshape(tuple(ref.shape))
    y.backward(ember.tensor(g))
    ref.backward(torch.tensor(g))
    for i in diff:
        np.testing.assert_allclose(ours[i].grad.numpy(), theirs[i].grad.numpy(), rtol=1e-8,
                                   atol=1e-10, err_msg=f"{fn_name} arg {i}")


@pytest.mark.parity
def test_distances_and_normalize_match_torch(rng):
    torch = _torch()
    a, b = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    for p in (2.0, 1.0, 3.0, float("inf")):
        _both("normalize", [a], {"p": p, "dim": 1})
        _both("pairwise_distance", [a, b], {"p": p})
    _both("normalize", [rng.standard_normal((2, 3, 4))], {"dim": -1})
    _both("pairwise_distance", [a, b[:1]], {"keepdim": True, "eps": 1e-3})
    _both("cosine_similarity", [a, b], {"dim": 1})
    _both("cosine_similarity", [a[:, None], b[None]], {"dim": -1})
    tiny = np.array([[3e-9, 4e-9], [1.0, 2.0]])  # below eps: torch clamps each norm alone
    _both("cosine_similarity", [tiny, np.array([[1.0, 2.0], [2.0, 1.0]])], {}, rtol=1e-7)
    x1, x2 = rng.standard_normal((2, 6, 3)), rng.standard_normal((2, 4, 3))
    for p in (2.0, 1.0, 0.5, float("inf")):
        _both("cdist", [x1, x2], {"p": p}, torch_fn=torch.cdist, rtol=1e-7, atol=1e-9)
    _both("pdist", [a], {}, torch_fn=torch.nn.functional.pdist, rtol=1e-8)


def test_norm_grads_are_zero_not_nan_at_zero():
    x = ember.zeros(2, 3, requires_grad=True)
    F.normalize(x, dim=1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 1e12)  # 1 / eps, the norm itself adds 0 (not NaN)
    a = ember.tensor([[1.0, 2.0]], requires_grad=True)
    F.cdist(a, a.detach()).sum().backward()
    assert np.isfinite(a.grad.numpy()).all()
    d = ember.tensor([[1.0, 1.0]], requires_grad=True)
    F.pairwise_distance(d, d.detach(), eps=0.0).sum().backward()
    assert np.isfinite(d.grad.numpy()).all()


def test_cdist_gradcheck_and_double_backward(rng):
    a = ember.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    b = ember.tensor(rng.standard_normal((4, 2)), requires_grad=True)
    assert gradcheck(lambda x, y: F.cdist(x, y), (a, b))
    assert gradgradcheck(lambda x, y: F.cdist(x, y), (a, b))
    assert gradgradcheck(lambda x: F.normalize(x, dim=1), (a,))
    with pytest.raises(RuntimeError, match="same number of columns"):
        F.cdist(ember.zeros(2, 3), ember.zeros(2, 4))


def test_distance_modules():
    a, b = ember.randn(3, 4), ember.randn(3, 4)
    np.testing.assert_allclose(nn.PairwiseDistance(p=1.0)(a, b).numpy(),
                               F.pairwise_distance(a, b, 1.0).numpy())
    np.testing.assert_allclose(nn.CosineSimilarity(dim=0)(a, b).numpy(),
                               F.cosine_similarity(a, b, dim=0).numpy())
    with pytest.raises(RuntimeError, match="do not broadcast"):
        F.cosine_similarity(ember.zeros(3, 4), ember.zeros(2, 4))


def test_linear_consults_autocast_hook(monkeypatch):
    from ember.amp import _state
    seen = []

    def cast(op_name, tensors):
        seen.append((op_name, tuple(None if t is None else t.dtype for t in tensors)))
        return tuple(None if t is None else t.double() for t in tensors)

    monkeypatch.setattr(_state.state, "enabled", True)
    monkeypatch.setitem(_state._policy, "cast", cast)
    out = F.linear(ember.ones(2, 3), ember.ones(4, 3))
    assert seen == [("linear", (ember.float32, ember.float32, None))]
    assert out.dtype == ember.float64


def test_nn_namespace_exports():
    for name in ("Module", "Parameter", "Buffer", "Linear", "Sequential", "CrossEntropyLoss",
                 "BatchNorm2d", "Conv2d", "functional", "init", "utils", "parameter"):
        assert hasattr(nn, name), name
    assert nn.utils.rnn is not None
    assert F.relu is nn.functional.relu and hasattr(F, "conv2d")
    from ember.nn import Module  # noqa: F401  (the paper's import style)


def test_listing1_example_runs():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ns = runpy.run_path(str(ROOT / "examples" / "listing1.py"), run_name="listing1")
    probs = ns["main"]()
    assert probs.shape == ember.Size([4, 10])
    np.testing.assert_allclose(probs.sum(1).detach().numpy(), np.ones(4), rtol=1e-5)
    model = ns["FullBasicModel"]()
    assert [n for n, _ in model.named_parameters()] == ["conv.weight", "conv.bias", "fc.w",
                                                        "fc.b"]
