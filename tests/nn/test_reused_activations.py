"""Transformer activations and gradients from the reuse pool (NOTE [Reused buffers] in
_backend.py): Linear, LayerNorm, attention, same-shape add, cross-entropy and the engine's
gradient sums take big results from the pool; a result someone still holds is never handed out
again, one nobody holds is."""
from __future__ import annotations

import numpy as np

import ember
import ember.nn.functional as F
from ember._backend import is_reused


def _block(x, lin, ln, n_heads=2):
    b, t, d = x.shape
    q, k, v = lin(ln(x)).view(b, t, 3, n_heads, d // n_heads).permute(2, 0, 3, 1, 4).unbind(0)
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return x + y.transpose(1, 2).reshape(b, t, d)


def test_held_results_survive_later_steps_and_freed_ones_are_reused():
    ember.manual_seed(0)
    lin, ln = ember.nn.Linear(64, 192), ember.nn.LayerNorm(64)
    x1 = ember.randn(4, 128, 64, requires_grad=True)  # (4, 128, 64) float32: 128 KiB, pooled
    out1 = _block(x1, lin, ln)
    out1.square().sum().backward()
    kept_out, kept_grad = out1.detach().numpy().copy(), x1.grad.numpy().copy()
    assert is_reused(out1._data)  # the residual sum came from the pool
    for _ in range(3):  # later steps must not write into what the first one returned
        x2 = ember.randn(4, 128, 64, requires_grad=True)
        _block(x2, lin, ln).square().sum().backward()
    np.testing.assert_array_equal(out1.detach().numpy(), kept_out)
    np.testing.assert_array_equal(x1.grad.numpy(), kept_grad)
    # a step's result that nobody holds is handed out again by the next step
    first = id(_block(x1, lin, ln).detach()._data)
    seen = {id(_block(x1, lin, ln).detach()._data) for _ in range(3)}
    assert first in seen


def test_pooled_linear_and_cross_entropy_match_numpy(rng):
    w = rng.standard_normal((96, 48)).astype(np.float32)
    x = rng.standard_normal((3, 256, 48)).astype(np.float32)
    target = rng.integers(0, 96, 3 * 256)
    lin = ember.nn.Linear(48, 96, bias=False)
    with ember.no_grad():
        lin.weight.copy_(ember.from_numpy(w))
    xt = ember.tensor(x, requires_grad=True)
    logits = lin(xt)
    assert is_reused(logits._data)
    np.testing.assert_allclose(logits.detach().numpy(), x @ w.T, rtol=1e-5, atol=1e-5)
    F.cross_entropy(logits.reshape(-1, 96), ember.from_numpy(target)).backward()
    z = (x @ w.T).reshape(-1, 96).astype(np.float64)
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    p[np.arange(len(target)), target] -= 1
    np.testing.assert_allclose(xt.grad.numpy(), (p / len(target) @ w).reshape(x.shape),
                               rtol=1e-4, atol=1e-6)
