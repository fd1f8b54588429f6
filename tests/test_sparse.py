"""Sparse COO tensors: construction, coalesce, to_dense, sparse x dense products with gradients,
sparse.sum / softmax; checked against dense computations and torch.sparse."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck

IDX = [[0, 1, 1, 0], [2, 0, 2, 2]]  # (0, 2) appears twice: an uncoalesced tensor
VAL = [3.0, 4.0, 5.0, 1.0]
DENSE = np.array([[0.0, 0.0, 4.0], [4.0, 0.0, 5.0]])


def _random_sparse(rng, shape=(5, 4), nnz=7, dtype=ember.float64):
    idx = np.stack([rng.integers(0, n, nnz) for n in shape])
    vals = rng.standard_normal(nnz)
    return idx, vals, ember.sparse_coo_tensor(idx, ember.tensor(vals, dtype=dtype), shape)


def test_sparse_coo_tensor_metadata():
    s = ember.sparse_coo_tensor(IDX, VAL, (2, 3))
    assert s.is_sparse and isinstance(s, ember.Tensor) and ember.is_tensor(s)
    assert s.layout == ember.sparse_coo and s.layout != ember.strided
    assert ember.ones(1).layout == ember.strided
    assert s.shape == (2, 3) and s.size(-1) == 3 and s.dim() == 2 and s.numel() == 6
    assert s.sparse_dim() == 2 and s.dense_dim() == 0 and s._nnz() == 4
    assert s.dtype is ember.float32 and not s.is_coalesced()
    assert ember.sparse_coo_tensor([[0, 1]], [1, 2]).dtype is ember.int64
    assert ember.sparse_coo_tensor(IDX, VAL).shape == (2, 3)  # size inferred
    assert s.type() == "ember.sparse.FloatTensor"


def test_coalesce_sums_duplicates_and_sorts():
    s = ember.sparse_coo_tensor(IDX, VAL, (2, 3))
    with pytest.raises(RuntimeError, match="uncoalesced"):
        s.indices()
    c = s.coalesce()
    assert c.is_coalesced() and c.coalesce() is c
    np.testing.assert_array_equal(c.indices().numpy(), [[0, 1, 1], [2, 0, 2]])
    np.testing.assert_allclose(c.values().numpy(), [4.0, 4.0, 5.0])
    np.testing.assert_allclose(s.to_dense().numpy(), DENSE)
    np.testing.assert_allclose(c.to_dense().numpy(), DENSE)


def test_to_sparse_roundtrip_and_hybrid(rng):
    d = np.where(rng.random((4, 5)) < 0.4, rng.standard_normal((4, 5)), 0.0)
    s = ember.tensor(d).to_sparse()
    assert s.is_coalesced() and s._nnz() == int((d != 0).sum())
    np.testing.assert_array_equal(s.to_dense().numpy(), d)
    h = ember.tensor(d).to_sparse(1)  # rows sparse, columns dense
    assert h.sparse_dim() == 1 and h.dense_dim() == 1
    assert h._nnz() == int((d != 0).any(axis=1).sum())
    np.testing.assert_array_equal(h.to_dense().numpy(), d)
    z = ember.tensor(0.0).to_sparse()
    assert z._nnz() == 0 and z.shape == () and z.to_dense().item() == 0.0
    e = ember.zeros(0, 3).to_sparse()
    assert e._nnz() == 0 and e.to_dense().shape == (0, 3)


def test_hybrid_sparse_coo_tensor():
    s = ember.sparse_coo_tensor([[0, 2]], ember.ones(2, 3), (4, 3))
    assert s.sparse_dim() == 1 and s.dense_dim() == 1
    expected = np.zeros((4, 3))
    expected[[0, 2]] = 1
    np.testing.assert_array_equal(s.to_dense().numpy(), expected)


def test_construction_errors():
    with pytest.raises(RuntimeError, match="same nnz"):
        ember.sparse_coo_tensor([[0, 1]], [1.0, 2.0, 3.0], (3,))
    with pytest.raises(RuntimeError, match="size is inconsistent with indices"):
        ember.sparse_coo_tensor([[0, 5]], [1.0, 2.0], (3,))
    with pytest.raises(RuntimeError, match="negative index"):
        ember.sparse_coo_tensor([[0, -1]], [1.0, 2.0], (3,))
    with pytest.raises(RuntimeError, match="len\\(size\\) == sparse_dim \\+ dense_dim"):
        ember.sparse_coo_tensor([[0, 1]], [1.0, 2.0], (3, 4))
    with pytest.raises(RuntimeError, match="2-D"):
        ember.sparse_coo_tensor([0, 1], [1.0, 2.0], (3,))
    with pytest.raises(RuntimeError, match="no CUDA"):
        ember.sparse_coo_tensor([[0]], [1.0], (2,), device="cuda")


def test_dense_ops_reject_sparse_clearly():
    s = ember.sparse_coo_tensor(IDX, VAL, (2, 3))
    with pytest.raises(RuntimeError, match="to_dense"):
        ember.exp(s)
    with pytest.raises(RuntimeError, match="to_dense"):
        s.numpy()


def test_sparse_mm_all_spellings_match_dense(rng):
    s = ember.sparse_coo_tensor(IDX, VAL, (2, 3))
    m = ember.tensor(rng.standard_normal((3, 4)), dtype=ember.float32)
    expected = DENSE @ m.numpy()
    for out in (ember.sparse.mm(s, m), ember.spmm(s, m), ember.mm(s, m), s @ m,
                ember.matmul(s, m), s.mm(m)):
        assert out.dtype is ember.float32 and not out.is_sparse
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)
    v = ember.tensor([1.0, 2.0, 3.0])
    np.testing.assert_allclose((s @ v).numpy(), DENSE @ v.numpy(), rtol=1e-6)
    dense_left = ember.tensor(rng.standard_normal((4, 2)), dtype=ember.float32)
    np.testing.assert_allclose(ember.sparse.mm(dense_left, s).numpy(),
                               dense_left.numpy() @ DENSE, rtol=1e-5)


def test_sparse_mm_errors():
    s = ember.sparse_coo_tensor(IDX, VAL, (2, 3))
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        ember.sparse.mm(s, ember.ones(4, 2))
    with pytest.raises(RuntimeError, match="dtype"):
        ember.sparse.mm(s, ember.ones(3, 2, dtype=ember.float64))
    hybrid = ember.sparse_coo_tensor([[0, 1]], ember.ones(2, 3), (4, 3))
    with pytest.raises(RuntimeError, match="dense dims"):
        ember.sparse.mm(hybrid, ember.ones(3, 2))
    with pytest.raises(TypeError, match="Tensor"):
        ember.sparse.mm(s, [[1.0]])


def test_sparse_mm_grads_for_values_and_dense(rng):
    idx, vals, _ = _random_sparse(rng)
    v = ember.tensor(vals, requires_grad=True)
    d = ember.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    out = ember.sparse.mm(ember.sparse_coo_tensor(idx, v, (5, 4)), d)
    g = rng.standard_normal((5, 3))
    out.backward(ember.tensor(g))
    a = np.zeros((5, 4))
    np.add.at(a, tuple(idx), vals)
    np.testing.assert_allclose(d.grad.numpy(), a.T @ g, rtol=1e-12)   # d dense = A^T G
    per_nnz = (g[idx[0]] * d.detach().numpy()[idx[1]]).sum(-1)        # d values
    np.testing.assert_allclose(v.grad.numpy(), per_nnz, rtol=1e-12)


def test_sparse_mm_gradcheck_and_gradgradcheck(rng):
    idx, vals, _ = _random_sparse(rng, shape=(4, 3), nnz=5)
    v = ember.tensor(vals, requires_grad=True)
    d = ember.tensor(rng.standard_normal((3, 2)), requires_grad=True)

    def f(values, dense):
        return ember.sparse.mm(ember.sparse_coo_tensor(idx, values, (4, 3)), dense)

    assert gradcheck(f, (v, d))
    # double backward: the backward is built from ember ops and the same product
    out = f(v, d)
    (gv, gd) = ember.autograd.grad(out.pow(2).sum(), (v, d), create_graph=True)
    (gv.sum() + gd.sum()).backward()
    assert v.grad is not None and d.grad is not None


def test_leaf_sparse_tensor_gets_sparse_grad(rng):
    s = ember.sparse_coo_tensor(IDX, VAL, (2, 3), requires_grad=True)
    assert s.requires_grad and s.is_leaf
    d = ember.ones(3, 2)
    (s @ d).sum().backward()
    g = s.grad
    assert g.is_sparse and g._nnz() == 4
    np.testing.assert_allclose(g._values().numpy(), [2.0, 2.0, 2.0, 2.0])


def test_to_dense_and_coalesce_are_differentiable():
    v = ember.tensor(VAL, requires_grad=True)
    ember.sparse_coo_tensor(IDX, v, (2, 3)).to_dense().pow(2).sum().backward()
    np.testing.assert_allclose(v.grad.numpy(), [8.0, 8.0, 10.0, 8.0])  # duplicates summed first
    v.grad = None
    ember.sparse_coo_tensor(IDX, v, (2, 3)).coalesce().values().sum().backward()
    np.testing.assert_allclose(v.grad.numpy(), [1.0] * 4)


def test_sparse_sum():
    v = ember.tensor(VAL, requires_grad=True)
    s = ember.sparse_coo_tensor(IDX, v, (2, 3))
    total = ember.sparse.sum(s)
    assert total.item() == 13.0 and not total.is_sparse
    total.backward()
    np.testing.assert_allclose(v.grad.numpy(), [1.0] * 4)
    rows = ember.sparse.sum(s, dim=1)
    assert rows.is_sparse and rows.is_coalesced()
    np.testing.assert_allclose(rows.to_dense().detach().numpy(), DENSE.sum(1))
    cols = ember.sparse.sum(s, dim=0)
    np.testing.assert_allclose(cols.to_dense().detach().numpy(), DENSE.sum(0))
    both = ember.sparse.sum(s, dim=(0, -1))
    assert not both.is_sparse and both.item() == 13.0
    h = ember.sparse_coo_tensor([[0, 2]], ember.tensor([[1.0, 2.0], [3.0, 4.0]]), (4, 2))
    np.testing.assert_allclose(ember.sparse.sum(h, dim=0).numpy(), [4.0, 6.0])  # dense result
    np.testing.assert_allclose(ember.sparse.sum(h, dim=1).to_dense().numpy(), [3, 0, 7, 0])
    with pytest.raises(TypeError, match="sparse"):
        ember.sparse.sum(ember.ones(2))


def test_sparse_softmax_matches_masked_dense(rng):
    idx, vals, s = _random_sparse(rng, shape=(4, 6), nnz=10)
    c = s.coalesce()
    out = ember.sparse.softmax(s, dim=1).to_dense().numpy()
    dense = np.full((4, 6), -np.inf)
    dense[tuple(c.indices().numpy())] = c.values().numpy()
    with np.errstate(invalid="ignore"):
        ex = np.exp(dense - dense.max(1, keepdims=True))
        expected = np.nan_to_num(ex / ex.sum(1, keepdims=True))
    np.testing.assert_allclose(out, expected, rtol=1e-12)
    lp = ember.sparse.log_softmax(s, dim=1)
    np.testing.assert_allclose(lp.coalesce().values().exp().numpy(),
                               expected[tuple(c.indices().numpy())], rtol=1e-12)
    v = ember.tensor(vals, requires_grad=True)
    assert gradcheck(lambda x: ember.sparse.softmax(
        ember.sparse_coo_tensor(idx, x, (4, 6)), 0).to_dense(), (v,))


def test_sparse_arithmetic_and_transpose():
    s = ember.sparse_coo_tensor(IDX, VAL, (2, 3))
    np.testing.assert_allclose((s * 2).to_dense().numpy(), DENSE * 2)
    np.testing.assert_allclose((-s).to_dense().numpy(), -DENSE)
    np.testing.assert_allclose((s + s).to_dense().numpy(), DENSE * 2)
    np.testing.assert_allclose((s + ember.ones(2, 3)).numpy(), DENSE + 1)
    np.testing.assert_allclose(s.t().to_dense().numpy(), DENSE.T)
    np.testing.assert_allclose(s.double().to_dense().numpy(), DENSE)
    assert s.double().dtype is ember.float64


def test_sparse_pickle_and_repr():
    s = ember.sparse_coo_tensor(IDX, VAL, (2, 3))
    r = pickle.loads(pickle.dumps(s))
    assert r.is_sparse and not r.is_coalesced()
    np.testing.assert_array_equal(r.to_dense().numpy(), DENSE)
    text = repr(s.coalesce())
    assert text.startswith("tensor(indices=tensor([[0, 1, 1],")
    assert "size=(2, 3), nnz=3, layout=ember.sparse_coo" in text


@pytest.mark.parity
def test_sparse_matches_torch(rng):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    idx, vals, _ = _random_sparse(rng, shape=(6, 5), nnz=9)
    dense = rng.standard_normal((5, 3))
    tv = torch.tensor(vals, requires_grad=True)
    td = torch.tensor(dense, requires_grad=True)
    ts = torch.sparse_coo_tensor(torch.tensor(idx), tv, (6, 5), check_invariants=True)
    ev = ember.tensor(vals, requires_grad=True)
    ed = ember.tensor(dense, requires_grad=True)
    es = ember.sparse_coo_tensor(idx, ev, (6, 5))
    assert es.is_coalesced() == ts.is_coalesced()
    tc, ec = ts.coalesce(), es.coalesce()
    np.testing.assert_array_equal(ec.indices().numpy(), tc.indices().numpy())
    np.testing.assert_allclose(ec.values().detach().numpy(), tc.values().detach().numpy())
    g = rng.standard_normal((6, 3))
    torch.sparse.mm(ts, td).backward(torch.tensor(g))
    ember.sparse.mm(es, ed).backward(ember.tensor(g))
    np.testing.assert_allclose(ed.grad.numpy(), td.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(ev.grad.numpy(), tv.grad.numpy(), rtol=1e-12)
    for dim in (0, 1):
        ref = torch.sparse.sum(ts.detach(), dim=dim).to_dense().numpy()
        np.testing.assert_allclose(ember.sparse.sum(es.detach(), dim=dim).to_dense().numpy(),
                                   ref, rtol=1e-12)
        ref = torch.sparse.softmax(ts.detach(), dim).to_dense().numpy()
        np.testing.assert_allclose(ember.sparse.softmax(es.detach(), dim).to_dense().numpy(),
                                   ref, rtol=1e-12)
    d = np.where(rng.random((3, 4)) < 0.5, rng.standard_normal((3, 4)), 0.0)
    te, ee = torch.tensor(d).to_sparse(), ember.tensor(d).to_sparse()
    np.testing.assert_array_equal(ee.indices().numpy(), te.indices().numpy())
    np.testing.assert_array_equal(ee.values().numpy(), te.values().numpy())
    with pytest.raises(RuntimeError):
        torch.sparse_coo_tensor(torch.tensor([[0, 1]]), torch.ones(3), (3,),
                                check_invariants=True)
    with pytest.raises(RuntimeError):
        ember.sparse_coo_tensor([[0, 1]], ember.ones(3), (3,))
