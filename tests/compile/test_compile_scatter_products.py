"""Embedding gradients of products scattered without writing the product (NOTE [Products
scattered into embedding gradients] in ember/_dynamo/scatter.py): the compiled gradients equal
eager's bit for bit, and the rewrite stays out of the cases it does not cover."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import ember
from ember import nn
from ember.ops.nn.embedding import dense_grad, dense_grad_of_product

MARK = "Embedding backward of a product"


class GMF(nn.Module):
    """NCF's generalized matrix factorisation branch and a head."""

    def __init__(self, n=40, d=6, padding_idx=None):
        super().__init__()
        self.u = nn.Embedding(n, d, padding_idx=padding_idx)
        self.i = nn.Embedding(n, d)
        self.head = nn.Linear(2 * d, 1)

    def forward(self, u, i):
        g = self.u(u) * self.i(i)
        return self.head(ember.cat([g, g.relu()], dim=-1)).squeeze(-1)


def _batches(n=4, shape=(16,), high=40):
    rng = np.random.default_rng(3)
    return [(ember.from_numpy(rng.integers(0, high, shape)),
             ember.from_numpy(rng.integers(0, high, shape)),
             ember.from_numpy(rng.integers(0, 2, shape).astype(np.float32))) for _ in range(n)]


def _train_step(model, opt):
    loss_fn = nn.BCEWithLogitsLoss()

    def step(u, i, y):
        opt.zero_grad()
        loss = loss_fn(model(u, i), y)
        loss.backward()
        opt.step()
        return loss
    return step


def _assert_bitwise(a, b):
    for p, q in zip(a.parameters(), b.parameters(), strict=True):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())


@pytest.mark.parametrize("shape", [(16,), (3, 5)], ids=["flat", "batched_indices"])
def test_train_step_gradients_equal_eager_bitwise(shape):
    ember.manual_seed(0)
    model = GMF()
    twin = copy.deepcopy(model)
    opt, opt_e = (ember.optim.Adam(m.parameters(), lr=1e-2) for m in (model, twin))
    compiled, eager = ember.compile(_train_step(model, opt)), _train_step(twin, opt_e)
    for u, i, y in _batches(shape=shape):
        assert compiled(u, i, y).item() == eager(u, i, y).item()
        _assert_bitwise(model, twin)
    # g is read twice, but each lookup's gradient is still one product (the summed gradient
    # of g times the other lookup)
    assert compiled.sources[0].count(MARK) == 2
    assert compiled.stats["recompiles"] == 0


def test_product_read_elsewhere_is_not_scattered():
    ember.manual_seed(0)
    emb_u, emb_i = nn.Embedding(30, 5), nn.Embedding(30, 5)

    def f(u, i):
        a = emb_u(u)
        return (a * emb_i(i)).sum() + (a * a).sum()  # a's gradient: a product plus 2a

    c = ember.compile(f)
    u, i, _ = _batches(1, high=30)[0]
    c(u, i).backward()
    got = [emb_u.weight.grad.numpy().copy(), emb_i.weight.grad.numpy().copy()]
    emb_u.weight.grad = emb_i.weight.grad = None
    f(u, i).backward()
    np.testing.assert_array_equal(got[0], emb_u.weight.grad.numpy())
    np.testing.assert_array_equal(got[1], emb_i.weight.grad.numpy())
    # the fused group that writes emb_i's product also writes one the add reads: kept whole
    assert c.sources[1].count(MARK) == 0 and "Embedding backward" in c.sources[1]


class Dot(nn.Module):
    def __init__(self, n=40, d=6, padding_idx=None):
        super().__init__()
        self.u = nn.Embedding(n, d, padding_idx=padding_idx)
        self.i = nn.Embedding(n, d)

    def forward(self, u, i):
        return (self.u(u) * self.i(i)).sum(-1)


@pytest.mark.parametrize("shape", [(16,), (3, 5)], ids=["flat", "batched_indices"])
def test_products_read_only_by_embedding_backwards_are_scattered(shape):
    ember.manual_seed(0)
    model = Dot()
    twin = copy.deepcopy(model)
    opt, opt_e = (ember.optim.Adam(m.parameters(), lr=1e-2) for m in (model, twin))
    compiled, eager = ember.compile(_train_step(model, opt)), _train_step(twin, opt_e)
    for u, i, y in _batches(shape=shape):
        assert compiled(u, i, y).item() == eager(u, i, y).item()
        _assert_bitwise(model, twin)
    assert compiled.sources[0].count(MARK) == 2
    assert compiled.stats == {"captures": 1, "recompiles": 0, "hits": 3, "eager": 0,
                              "generalised": 0}


def test_separate_backward_is_scattered_and_equals_eager():
    ember.manual_seed(0)
    model = Dot()
    twin = copy.deepcopy(model)
    compiled = ember.compile(model)
    for u, i, _ in _batches(3):
        for m in (model, twin):
            m.zero_grad()
        (compiled(u, i) ** 2).sum().backward()
        (twin(u, i) ** 2).sum().backward()
        _assert_bitwise(model, twin)
    assert compiled.dynamo_ctx.sources[1].count(MARK) == 2


def test_padding_idx_keeps_the_op_by_op_backward():
    ember.manual_seed(0)
    model = Dot(padding_idx=0)
    twin = copy.deepcopy(model)
    opt, opt_e = (ember.optim.SGD(m.parameters(), lr=0.1) for m in (model, twin))
    compiled, eager = ember.compile(_train_step(model, opt)), _train_step(twin, opt_e)
    for u, i, y in _batches(3):
        u = ember.from_numpy(np.where(u.numpy() % 3 == 0, 0, u.numpy()))  # some padding rows
        assert compiled(u, i, y).item() == eager(u, i, y).item()
        _assert_bitwise(model, twin)
    # one fused group writes both products; the padded table's backward keeps its own path
    # (it scales rows by the padding mask), so the group stays and neither is rewritten
    assert compiled.sources[0].count(MARK) == 0
    assert compiled.sources[0].count("# Embedding backward") == 2


def test_compiled_gradients_pass_gradcheck_float64():
    rng = np.random.default_rng(0)
    u = ember.from_numpy(rng.integers(0, 7, 9))
    i = ember.from_numpy(rng.integers(0, 7, 9))

    def f(a, b):
        return (nn.functional.embedding(u, a) * nn.functional.embedding(i, b)).sum(-1)

    a = ember.from_numpy(rng.standard_normal((7, 4))).requires_grad_()
    b = ember.from_numpy(rng.standard_normal((7, 4))).requires_grad_()
    c = ember.compile(f)
    assert ember.autograd.gradcheck(c, (a, b))
    ga, gb = ember.autograd.grad(c(a, b).sum(), (a, b))
    ea, eb = ember.autograd.grad(f(a, b).sum(), (a, b))
    np.testing.assert_array_equal(ga.numpy(), ea.numpy())
    np.testing.assert_array_equal(gb.numpy(), eb.numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dense_grad_of_product_equals_product_then_dense_grad(dtype):
    rng = np.random.default_rng(1)
    idx = rng.integers(0, 50, (8, 25))
    wide = rng.standard_normal((200, 21)).astype(dtype)
    a = wide[:, 3:10]  # a column slice read in place, as cat's backward hands it over
    b = rng.standard_normal((8, 25, 7)).astype(dtype)
    got = dense_grad_of_product(50, idx, a.reshape(8, 25, 7), b)
    want = dense_grad(50, idx.reshape(-1), (a.reshape(8, 25, 7) * b).reshape(-1, 7))
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got, _add_at(idx, a, b, dtype), rtol=1e-6)  # vs NumPy


def _add_at(idx, a, b, dtype):
    out = np.zeros((50, 7), dtype)
    np.add.at(out, idx.reshape(-1), a.reshape(-1, 7) * b.reshape(-1, 7))
    return out


def test_dense_grad_of_product_broadcast_operand_and_bad_index():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((6, 3)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)  # off the common path: product, then scatter
    idx = np.array([0, 2, 2, 4, 1, 0])
    np.testing.assert_array_equal(dense_grad_of_product(5, idx, a, b),
                                  _scatter(idx, a * b, 5))
    with pytest.raises(IndexError, match="index 7 is out of range for 5 rows"):
        dense_grad_of_product(5, np.array([0, 7, 1, 2, 3, 4]), a, a)


def _scatter(idx, rows, n):
    out = np.zeros((n, rows.shape[1]), rows.dtype)
    for k, r in enumerate(idx):
        out[r] += rows[k]
    return out
