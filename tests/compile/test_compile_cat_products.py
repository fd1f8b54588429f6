"""Products written straight into the columns of the cat that joins them (NOTE [Products
written into a cat] in ember/_dynamo/catwrite.py): values and gradients equal eager's bit for
bit, gradcheck in float64, and the rewrite stays out of the cases it does not cover."""
from __future__ import annotations

import copy
import os
import sys

import numpy as np
import pytest

import ember
from ember import nn
from ember._dynamo.catwrite import cat_with_products

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from examples.models.table1 import _ncf_module

MARK = "# Mul + Cat"


class _Ctx:
    def save_for_backward(self, *values):
        self.saved = values


def test_ncf_train_step_equals_eager_bitwise():
    ember.manual_seed(0)
    model = _ncf_module(ember)(users=300, items=200)
    twin = copy.deepcopy(model)
    opt, opt_e = (ember.optim.Adam(m.parameters(), lr=1e-2) for m in (model, twin))
    loss_fn = nn.BCEWithLogitsLoss()

    def make(m, o):
        def step(u, i, y):
            o.zero_grad()
            loss = loss_fn(m(u, i), y)
            loss.backward()
            o.step()
            return loss
        return step

    compiled, eager = ember.compile(make(model, opt)), make(twin, opt_e)
    rng = np.random.default_rng(0)
    for _ in range(4):
        u = ember.from_numpy(rng.integers(0, 300, 256))
        i = ember.from_numpy(rng.integers(0, 200, 256))
        y = ember.from_numpy(rng.integers(0, 2, 256).astype(np.float32))
        assert compiled(u, i, y).item() == eager(u, i, y).item()
        for p, q in zip(model.parameters(), twin.parameters(), strict=True):
            np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
            np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
    src = compiled.sources[0]
    assert MARK in src and "Embedding backward of a product" in src and "# Linear + Relu" in src
    assert compiled.stats["recompiles"] == 0


def test_product_read_twice_is_not_written_into_the_cat():
    def f(a, b, c):
        p = a * b
        return ember.cat([p, c], dim=1) + p.sum()

    g = ember.compile(f)
    rng = np.random.default_rng(1)
    a, b, c = (ember.from_numpy(rng.standard_normal((5, 3)).astype(np.float32)) for _ in "abc")
    np.testing.assert_array_equal(g(a, b, c).numpy(), f(a, b, c).numpy())
    assert MARK not in g.sources[0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cat_with_products_equals_concatenate_of_products(dtype):
    rng = np.random.default_rng(2)
    a, b = (rng.standard_normal((2, 4, 3)).astype(dtype) for _ in "ab")
    c = rng.standard_normal((2, 4, 5)).astype(dtype)
    a[0, 0, 0], b[0, 0, 1], a[1, 2, 2], b[1, 2, 2] = np.nan, np.inf, -0.0, 2.0
    cat, m = _Ctx(), _Ctx()
    got = cat_with_products(cat, (m,), 2, (2, 4, 11), np.dtype(dtype), (c, (a, b), c))
    want = np.concatenate([c, a * b, c], axis=2)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))
    assert cat.sizes == [5, 3, 5] and cat.dim == 2 and m.saved[0] is a and m.saved[1] is b


def test_cat_with_products_strided_parts_take_numpy_loops():
    rng = np.random.default_rng(4)
    wide = rng.standard_normal((6, 10)).astype(np.float32)
    a, b, c = wide[:, :3], wide[:, 3:6], wide[:, ::3]  # rows with gaps: not C-contiguous
    cat, m = _Ctx(), _Ctx()
    got = cat_with_products(cat, (m,), 1, (6, 7), np.dtype(np.float32), ((a, b), c))
    np.testing.assert_array_equal(got, np.concatenate([a * b, c], axis=1))


def test_cat_with_products_falls_back_for_a_broadcast_pair():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.array([1.5, -2.0, 0.5], np.float32)
    cat, m = _Ctx(), _Ctx()
    got = cat_with_products(cat, (m,), 1, (2, 5), np.dtype(np.float32), ((a, b), a[:, :2]))
    np.testing.assert_array_equal(got, np.concatenate([a * b, a[:, :2]], axis=1))


def test_compiled_cat_of_products_gradcheck_float64():
    rng = np.random.default_rng(3)
    a, b, c = (ember.from_numpy(rng.standard_normal((4, 3))).requires_grad_() for _ in "abc")

    def f(a, b, c):
        return ember.cat([a * b, c.tanh()], dim=-1) * 1.5

    g = ember.compile(f)
    assert ember.autograd.gradcheck(g, (a, b, c))
    assert MARK in g.sources[0]
    got = ember.autograd.grad(g(a, b, c).sum(), (a, b, c))
    want = ember.autograd.grad(f(a, b, c).sum(), (a, b, c))
    for x, y in zip(got, want, strict=True):
        np.testing.assert_array_equal(x.numpy(), y.numpy())
