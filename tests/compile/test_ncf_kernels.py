"""Kernels behind the NCF training step (issue 19/21): the embedding gradient in a pooled
buffer, the one-output Linear's input gradient, Adam over many parameters at once."""
import numpy as np
import pytest

import ember
from ember.ops.nn.embedding import dense_grad


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_embedding_dense_grad_equals_add_at_and_reuses_only_free_buffers(dtype):
    rng = np.random.default_rng(0)
    idx = rng.integers(0, 300, 1000)
    rows = rng.standard_normal((1000, 64)).astype(dtype)
    want = np.zeros((300, 64), dtype)
    np.add.at(want, idx, rows)
    first = dense_grad(300, idx, rows)
    np.testing.assert_array_equal(first, want)  # same order of additions: the same bits
    first_copy = first.copy()
    second = dense_grad(300, idx[:10], rows[:10])  # `first` is still held: a new buffer
    assert second is not first
    np.testing.assert_array_equal(first, first_copy)
    del first
    third = dense_grad(300, idx[:10], rows[:10])  # zeroed before the scatter
    np.testing.assert_array_equal(third, second)


def test_embedding_dense_grad_bad_index_raises():
    rows = np.ones((3, 32), np.float32)
    with pytest.raises(IndexError, match="index 7 is out of range for 5 rows"):
        dense_grad(5, np.array([0, 7, 1]), rows)


def test_embedding_weight_grad_kept_across_backwards_is_not_overwritten():
    emb = ember.nn.Embedding(2000, 32)
    idx = ember.tensor([1, 5, 5, 7])
    emb(idx).sum().backward()
    kept = emb.weight.grad
    emb.weight.grad = None
    (2 * emb(ember.tensor([3]))).sum().backward()
    assert float(kept[5].sum()) == 64.0 and float(kept[3].sum()) == 0.0
    assert float(emb.weight.grad[3].sum()) == 64.0 and float(emb.weight.grad[5].sum()) == 0.0


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_linear_one_output_input_grad_is_the_outer_product(dtype):
    rng = np.random.default_rng(1)
    lin = ember.nn.Linear(48, 1).to(dtype)
    x = ember.tensor(rng.standard_normal((300, 48))).to(dtype).requires_grad_()
    g = rng.standard_normal((300, 1))
    lin(x).backward(ember.tensor(g).to(dtype))
    w = lin.weight.detach().numpy()
    want = (g.astype(w.dtype) * w)
    np.testing.assert_array_equal(x.grad.numpy(), want)
    assert x.grad.dtype == dtype


def test_linear_one_output_gradcheck_float64():
    rng = np.random.default_rng(2)
    x = ember.tensor(rng.standard_normal((5, 4))).requires_grad_()
    w = ember.tensor(rng.standard_normal((4, 1))).t().requires_grad_()  # non-contiguous
    b = ember.tensor(rng.standard_normal(1)).requires_grad_()
    assert ember.autograd.gradcheck(ember.nn.functional.linear, (x, w, b))
