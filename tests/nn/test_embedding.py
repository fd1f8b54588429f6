"""Embedding and EmbeddingBag: lookups and gradients vs torch, padding_idx, max_norm,
from_pretrained, bag modes and offsets, one_hot."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from ember import nn
from ember.autograd import gradcheck, gradgradcheck

F = nn.functional


def _torch():
    return pytest.importorskip("torch", reason="torch oracle not installed")


def _pair(rng, kind, *args, **kwargs):
    torch = _torch()
    ours = getattr(nn, kind)(*args, **kwargs)
    theirs = getattr(torch.nn, kind)(*args, **kwargs)
    w = rng.standard_normal(tuple(ours.weight.shape)).astype(np.float32)
    if kwargs.get("padding_idx") is not None:
        w[kwargs["padding_idx"]] = 0
    with ember.no_grad():
        ours.weight.copy_(ember.tensor(w))
    theirs.load_state_dict({"weight": torch.from_numpy(w.copy())})
    return ours, theirs


@pytest.mark.parity
@pytest.mark.parametrize("kwargs", [{}, {"padding_idx": 1}, {"scale_grad_by_freq": True},
                                    {"max_norm": 1.0}, {"max_norm": 0.5, "norm_type": 1.0}])
def test_embedding_matches_torch(rng, kwargs):
    torch = _torch()
    ours, theirs = _pair(rng, "Embedding", 7, 3, **kwargs)
    idx = np.array([[1, 2, 4, 1], [6, 1, 0, 2]])
    y = ours(ember.tensor(idx))
    ref = theirs(torch.from_numpy(idx))
    np.testing.assert_allclose(y.detach().numpy(), ref.detach().numpy(), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(),
                               rtol=1e-5, atol=1e-7)  # max_norm renormalizes in place
    g = np.cos(np.arange(24)).reshape(2, 4, 3).astype(np.float32)
    y.backward(ember.tensor(g))
    ref.backward(torch.from_numpy(g))
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-5,
                               atol=1e-7)
    assert repr(ours) == repr(theirs)


def test_embedding_padding_row_zero_and_no_grad():
    emb = nn.Embedding(5, 2, padding_idx=-1)
    assert emb.padding_idx == 4
    np.testing.assert_array_equal(emb.weight.detach().numpy()[4], [0, 0])
    emb(ember.tensor([4, 4, 0])).sum().backward()
    np.testing.assert_array_equal(emb.weight.grad.numpy()[4], [0, 0])
    np.testing.assert_array_equal(emb.weight.grad.numpy()[0], [1, 1])


def test_embedding_gradcheck_and_double_backward(rng):
    w = ember.tensor(rng.standard_normal((5, 3)), requires_grad=True)
    idx = ember.tensor([[0, 2], [2, 4]])
    assert gradcheck(lambda t: F.embedding(idx, t), (w,))
    assert gradgradcheck(lambda t: F.embedding(idx, t) ** 2, (w,))


def test_from_pretrained_frozen_and_shared():
    table = ember.arange(6.0).reshape(3, 2)
    emb = nn.Embedding.from_pretrained(table)
    assert not emb.weight.requires_grad
    np.testing.assert_array_equal(emb(ember.tensor([2])).numpy(), [[4, 5]])
    trainable = nn.Embedding.from_pretrained(table, freeze=False, padding_idx=0)
    assert trainable.weight.requires_grad and trainable.padding_idx == 0
    with pytest.raises(ValueError, match="2-dimensional"):
        nn.Embedding.from_pretrained(ember.zeros(3))
    bag = nn.EmbeddingBag.from_pretrained(table, mode="sum")
    np.testing.assert_array_equal(bag(ember.tensor([[0, 1]])).numpy(), [[2, 4]])


def test_embedding_bad_indices():
    emb = nn.Embedding(3, 2)
    with pytest.raises(IndexError, match="index out of range in self"):
        emb(ember.tensor([3]))
    with pytest.raises(IndexError, match="index out of range"):
        emb(ember.tensor([-1]))
    with pytest.raises(RuntimeError, match="Long, Int"):
        emb(ember.tensor([1.0]))
    with pytest.raises(AssertionError, match="Embedding: padding_idx must be within num_embed"):
        nn.Embedding(3, 2, padding_idx=5)


@pytest.mark.parity
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_offsets_match_torch(rng, mode):
    torch = _torch()
    ours, theirs = _pair(rng, "EmbeddingBag", 8, 3, mode=mode)
    idx = np.array([1, 2, 4, 5, 4, 3, 2, 7])
    offsets = np.array([0, 2, 2, 5])  # the third bag is empty
    y = ours(ember.tensor(idx), ember.tensor(offsets))
    ref = theirs(torch.from_numpy(idx), torch.from_numpy(offsets))
    np.testing.assert_allclose(y.detach().numpy(), ref.detach().numpy(), rtol=1e-5, atol=1e-7)
    g = np.cos(np.arange(12)).reshape(4, 3).astype(np.float32)
    y.backward(ember.tensor(g))
    ref.backward(torch.from_numpy(g))
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-5,
                               atol=1e-7)
    assert repr(ours) == repr(theirs)


@pytest.mark.parity
def test_embedding_bag_2d_weights_padding_last_offset_match_torch(rng):
    torch = _torch()
    ours, theirs = _pair(rng, "EmbeddingBag", 6, 2, mode="mean", padding_idx=0)
    idx = np.array([[1, 0, 3], [0, 0, 5]])
    np.testing.assert_allclose(ours(ember.tensor(idx)).detach().numpy(),
                               theirs(torch.from_numpy(idx)).detach().numpy(), rtol=1e-6)
    ours, theirs = _pair(rng, "EmbeddingBag", 6, 2, mode="sum", include_last_offset=True)
    idx, off = np.array([1, 2, 3, 4]), np.array([0, 1, 4])
    psw = rng.standard_normal(4).astype(np.float32)
    p = ember.tensor(psw, requires_grad=True)
    tp = torch.tensor(psw, requires_grad=True)
    y = ours(ember.tensor(idx), ember.tensor(off), per_sample_weights=p)
    ref = theirs(torch.from_numpy(idx), torch.from_numpy(off), per_sample_weights=tp)
    np.testing.assert_allclose(y.detach().numpy(), ref.detach().numpy(), rtol=1e-5, atol=1e-7)
    y.sum().backward()
    ref.sum().backward()
    np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-5)


def test_embedding_bag_errors():
    bag = nn.EmbeddingBag(5, 2, mode="max")
    with pytest.raises(NotImplementedError, match="per_sample_weights"):
        bag(ember.tensor([[1, 2]]), per_sample_weights=ember.ones(1, 2))
    with pytest.raises(ValueError, match="offsets has to be None"):
        bag(ember.tensor([[1, 2]]), ember.tensor([0]))
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        bag(ember.tensor([1, 2]))
    with pytest.raises(ValueError, match="mode has to be one of"):
        F.embedding_bag(ember.tensor([[1]]), ember.zeros(3, 2), mode="prod")


def test_one_hot():
    out = F.one_hot(ember.tensor([[0, 2], [1, 1]]), 4)
    assert out.dtype == ember.int64 and out.shape == ember.Size([2, 2, 4])
    np.testing.assert_array_equal(out.numpy()[0, 1], [0, 0, 1, 0])
    assert F.one_hot(ember.tensor([3])).shape == ember.Size([1, 4])
    with pytest.raises(RuntimeError, match="LongTensor"):
        F.one_hot(ember.tensor([1.0]))
    with pytest.raises(RuntimeError, match="smaller than num_classes"):
        F.one_hot(ember.tensor([3]), 2)
    with pytest.raises(RuntimeError, match="non-negative"):
        F.one_hot(ember.tensor([-1]), 2)
