"""ember.utils.checkpoint: same values and gradients as running the segment directly, the
dropout mask replayed, memory actually saved, and torch's argument errors."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import ember
from ember import nn
from ember.utils.checkpoint import checkpoint, checkpoint_sequential


def _model():
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Dropout(0.3), nn.Linear(16, 4))


def _grads(model, x):
    return [x.grad.numpy().copy()] + [p.grad.numpy().copy() for p in model.parameters()]


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_gives_the_direct_gradients_with_dropout(use_reentrant):
    model = _model()
    x = ember.randn(5, 8, requires_grad=True)
    ember.manual_seed(7)
    direct = model(x)
    direct.pow(2).sum().backward()
    expected = _grads(model, x)
    model.zero_grad()
    x.grad = None
    ember.manual_seed(7)
    out = checkpoint(model, x, use_reentrant=use_reentrant)
    np.testing.assert_allclose(out.detach().numpy(), direct.detach().numpy(), rtol=1e-6)
    out.pow(2).sum().backward()
    for got, want in zip(_grads(model, x), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


def test_checkpoint_sequential_matches_direct():
    model = _model().eval()
    x = ember.randn(3, 8, requires_grad=True)
    model(x).sum().backward()
    expected = _grads(model, x)
    model.zero_grad()
    x.grad = None
    checkpoint_sequential(model, 2, x, use_reentrant=False).sum().backward()
    for got, want in zip(_grads(model, x), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


def test_checkpoint_keeps_less_memory_until_backward():
    layers = nn.Sequential(*[nn.Sequential(nn.Linear(256, 256), nn.Tanh()) for _ in range(8)])
    x = ember.randn(512, 256, requires_grad=True)

    def held_after_forward(run):
        tracemalloc.start()
        out = run()
        held = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        out.sum().backward()
        return held

    direct = held_after_forward(lambda: layers(x))
    saved = held_after_forward(lambda: checkpoint(layers, x, use_reentrant=False))
    assert saved < direct / 3  # 8 layers' activations vs the segment's input and output


def test_checkpoint_arguments_and_warnings():
    f = nn.Linear(2, 2)
    x = ember.randn(1, 2, requires_grad=True)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed"):
        checkpoint(f, x)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
        checkpoint(lambda v, scale: v * scale, x, use_reentrant=True, scale=2.0)
    y = checkpoint(lambda v, scale: v * scale, x, use_reentrant=False, scale=2.0)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2.0)
    with ember.no_grad():
        assert checkpoint(f, x, use_reentrant=False).grad_fn is None


def _segment(x, w):
    return (x.matmul(w).tanh() * x.exp()).sin()


def test_non_reentrant_double_backward_and_grad_match_direct():
    rng = np.random.default_rng(0)
    x0, w0 = rng.standard_normal((3, 4)), rng.standard_normal((4, 4))
    results = []
    for run in (lambda x, w: _segment(x, w),
                lambda x, w: checkpoint(_segment, x, w, use_reentrant=False)):
        x = ember.tensor(x0, requires_grad=True)
        w = ember.tensor(w0, requires_grad=True)
        (gx,) = ember.autograd.grad(run(x, w).pow(2).sum(), x, create_graph=True)
        results.append([gx.detach().numpy()] + [
            g.numpy() for g in ember.autograd.grad(gx.pow(2).sum(), [x, w])])
    for direct, ckpt in zip(*results):
        np.testing.assert_allclose(ckpt, direct, rtol=1e-12, atol=1e-12)


def test_non_reentrant_recompute_that_differs_raises():
    calls = []

    def changing(x):
        calls.append(1)
        return x.exp() if len(calls) == 1 else x.exp().sin().cos()

    x = ember.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="recomputed forward saved 3 tensors.*original 1"):
        checkpoint(changing, x, use_reentrant=False).sum().backward()
