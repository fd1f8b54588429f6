"""ember.compile with dynamic shapes: one capture replayed at other sizes (NOTE [Size
generalisation] in ember/_dynamo/symbolic.py), results and gradients equal to eager."""
from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.testing import assert_close


@pytest.fixture(autouse=True)
def _fresh():
    ember._dynamo.reset()
    yield


def _t(*shape, rg=False, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return ember.from_numpy(a).requires_grad_(rg)


class Block(nn.Module):
    """LayerNorm, multi-head attention with reshapes of (batch, seq), GELU MLP."""

    def __init__(self, d=16, heads=4):
        super().__init__()
        self.d, self.heads = d, heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 2 * d), nn.Linear(2 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        h = self.heads
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (z.reshape(b, t, h, d // h).transpose(1, 2) for z in (q, k, v))
        att = ((q @ k.transpose(-2, -1)) * (d // h) ** -0.5).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b * t, d)
        x = x + self.proj(y).view(b, t, d)
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


def _grads(model, x, out):
    seed = _t(*out.shape, seed=7)
    params = [p for p in model.parameters()]
    return ember.autograd.grad(out, [x, *params], seed)


def _assert_same_as_eager(model, compiled, x):
    got = compiled(x)
    want = model(x)
    assert_close(got, want, rtol=1e-5, atol=1e-5)
    for g, w in zip(_grads(model, x, got), _grads(model, x, want), strict=True):
        assert_close(g, w, rtol=1e-4, atol=1e-5)


def test_dynamic_true_captures_once_across_batch_and_sequence_sizes():
    ember.manual_seed(0)
    m = Block()
    c = ember.compile(m, dynamic=True)
    # batch 4 equals the number of heads: the shadow capture tells the two apart
    for b, t in [(4, 5), (3, 5), (2, 7), (6, 9), (4, 5), (8, 3)]:
        _assert_same_as_eager(m, c, _t(b, t, 16, rg=True, seed=b * t))
    st = c.dynamo_ctx.stats
    assert st["captures"] == 1 and st["recompiles"] == 0, st
    assert st["generalised"] == 4, st      # (4, 5) again is a cache hit of the capture


def test_feature_dim_stays_static_and_a_new_one_records_again():
    ember.manual_seed(0)
    m = nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 2))
    f = ember.compile(lambda x: m(x).softmax(-1).sum(0), dynamic=True)
    for n in (3, 4, 9):
        x = _t(n, 6, seed=n)
        assert_close(f(x), m(x).softmax(-1).sum(0))
    assert f.stats["captures"] == 1 and f.stats["generalised"] == 2
    g = ember.compile(lambda x: x.sum(-1) * 2, dynamic=True)
    for n in (3, 4):
        g(_t(2, n))
    assert g.stats["captures"] == 1 and g.stats["generalised"] == 1  # both dims dynamic


def test_size_one_is_specialised():
    f = ember.compile(lambda x: (x * 2).sum(0), dynamic=True)
    for n in (3, 5, 1, 7):
        x = _t(n, 4, seed=n)
        assert_close(f(x), (x * 2).sum(0))
    assert f.stats["captures"] == 2 and f.stats["recompiles"] == 0


def test_embedding_model_training_steps_at_varying_batch():
    ember.manual_seed(0)
    emb, lin = nn.Embedding(50, 8), nn.Linear(16, 1)
    params = [*emb.parameters(), *lin.parameters()]

    def loss(u, i, y):
        z = ember.cat([emb(u), emb(i)], dim=1)
        return F.binary_cross_entropy_with_logits(lin(z).squeeze(1), y)

    f = ember.compile(loss, dynamic=True)
    rng = np.random.default_rng(0)
    for n in (6, 10, 7):
        u, i = (ember.from_numpy(rng.integers(0, 50, n)) for _ in range(2))
        y = ember.from_numpy(rng.integers(0, 2, n).astype(np.float32))
        got = f(u, i, y)
        gg = ember.autograd.grad(got, params)
        want = loss(u, i, y)
        gw = ember.autograd.grad(want, params)
        assert_close(got, want)
        for a, b in zip(gg, gw, strict=True):
            assert_close(a, b, rtol=1e-5, atol=1e-6)
    assert f.stats["captures"] == 1 and f.stats["generalised"] == 2


def test_dropout_masks_follow_eager_random_stream():
    drop = nn.Dropout(0.5)
    f = ember.compile(lambda x: drop(x) * 3, dynamic=True)
    for n in (4, 6, 9):
        x = _t(n, 5, seed=n)
        ember.manual_seed(n)
        got = f(x)
        ember.manual_seed(n)
        assert_close(got, drop(x) * 3)
    assert f.stats["captures"] == 1 and f.stats["generalised"] == 2


def test_automatic_dynamic_generalises_after_the_first_change():
    f = ember.compile(lambda x, y: (x @ y).relu().mean(0))
    y = _t(4, 3)
    for n in (2, 3, 5, 8):
        x = _t(n, 4, seed=n)
        assert_close(f(x, y), (x @ y).relu().mean(0))
    assert f.stats["recompiles"] == 1 and f.stats["captures"] == 2
    assert f.stats["generalised"] == 2


def test_mark_dynamic_limits_the_dynamic_dims():
    f = ember.compile(lambda x: x.reshape(x.shape[0], -1).sum(1))
    x = _t(3, 4, 5)
    ember._dynamo.mark_dynamic(x, 0)
    f(x)
    z = _t(6, 4, 5)
    ember._dynamo.mark_dynamic(z, 0)
    assert_close(f(z), z.reshape(6, -1).sum(1))
    assert f.stats["generalised"] == 1 and f.stats["captures"] == 1


def test_batchnorm_training_is_not_generalised_but_correct():
    ember.manual_seed(0)
    bn = nn.BatchNorm1d(3)
    ref = nn.BatchNorm1d(3)
    c = ember.compile(bn, dynamic=True)
    for n in (4, 6, 5):
        x = _t(n, 3, seed=n)
        assert_close(c(x), ref(x))
    assert_close(bn.running_mean, ref.running_mean)
    assert_close(bn.running_var, ref.running_var)
    assert c.dynamo_ctx.stats["generalised"] == 0


def test_python_size_outputs_follow_the_sizes():
    f = ember.compile(lambda x: (x.sum(), x.shape[0] * 2), dynamic=True)
    for n in (3, 5, 6):
        s, k = f(_t(n, 2))
        assert k == 2 * n
    assert f.stats["captures"] == 1
