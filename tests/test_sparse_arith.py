"""Sparse COO arithmetic that sparse-gradient optimizers use (pytorch_optimizer's MADGRAD,
D-Adaptation AdaGrad and SM3 steps, found by the compatibility corpus), and the legacy
``torch.sparse.FloatTensor`` constructors (Kipf's pygcn): dense +/- sparse and in place, sparse +
sparse (merged when both are coalesced), sparse * sparse, in-place ops on sparse tensors,
zeros_like / new / resize_as_. Values, layouts and coalesced flags are checked against torch."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


def _pair(indices, values, size):
    return (ember.sparse_coo_tensor(indices, ember.tensor(values), size),
            torch.sparse_coo_tensor(indices, torch.tensor(values), size))


def _dense(x):
    x = x.to_dense() if x.is_sparse else x
    return x.detach().numpy()


def _same(got, want, structure=True):
    """Equal layout, shape and values; with ``structure`` also equal nnz and coalesced flag
    (only asked for coalesced operands: torch's merge of uncoalesced index lists keeps
    duplicates and order in ways of its own, the values are what they mean)."""
    assert got.is_sparse == want.is_sparse
    if got.is_sparse and structure:
        assert got.is_coalesced() == want.is_coalesced()
        assert got._nnz() == want._nnz()
        assert got.sparse_dim() == want.sparse_dim()
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(_dense(got), _dense(want), rtol=1e-12, atol=1e-12)


A = ([[0, 2, 4]], [1.0, -2.0, 0.5], (5,))
B = ([[0, 3, 4]], [3.0, 1.0, -1.0], (5,))
HYBRID = ([[0, 2]], np.arange(6.0).reshape(2, 3), (4, 3))     # one sparse dim, one dense


@pytest.mark.parametrize("coalesce", [True, False])
def test_sparse_plus_sparse_merges_coalesced_operands(coalesce):
    (ea, ta), (eb, tb) = _pair(*A), _pair(*B)
    if coalesce:
        ea, ta, eb, tb = ea.coalesce(), ta.coalesce(), eb.coalesce(), tb.coalesce()
    _same(ea + eb, ta + tb, coalesce)
    _same(ea.add(eb, alpha=2.5), ta.add(tb, alpha=2.5), coalesce)
    _same(ea.sub(eb), ta.sub(tb), coalesce)
    assert (ea + eb).is_coalesced() == coalesce


@pytest.mark.parametrize("coalesce", [True, False])
def test_sparse_times_sparse_keeps_the_common_entries(coalesce):
    (ea, ta), (eb, tb) = _pair(*A), _pair(*B)
    if coalesce:
        ea, ta, eb, tb = ea.coalesce(), ta.coalesce(), eb.coalesce(), tb.coalesce()
    _same(ea * eb, ta * tb, coalesce)
    _same(ea * ea, ta * ta, coalesce)         # grad * grad, MADGRAD's sparse step
    _same(ea.mul(eb), ta.mul(tb), coalesce)


def test_sparse_times_sparse_gradient_reaches_both_values():
    va = ember.tensor([1.0, -2.0, 0.5], dtype=ember.float64, requires_grad=True)
    vb = ember.tensor([3.0, 1.0, -1.0], dtype=ember.float64, requires_grad=True)

    def f(va, vb):
        a = ember.sparse_coo_tensor([[0, 2, 4]], va, (5,))
        b = ember.sparse_coo_tensor([[0, 3, 4]], vb, (5,))
        return (a * b).to_dense()
    assert ember.autograd.gradcheck(f, (va, vb))


@pytest.mark.parametrize("case", [A, HYBRID], ids=["1d", "hybrid"])
def test_dense_plus_and_minus_sparse(case):
    es, ts = _pair(*case)
    base = np.linspace(-1, 1, int(np.prod(case[2]))).reshape(case[2])
    ed, td = ember.tensor(base), torch.tensor(base)
    _same(ed + es, td + ts)
    _same(ed - es, td - ts)
    _same(ember.add(ed, es, alpha=-0.5), torch.add(td, ts, alpha=-0.5))
    _same(ed.sub(es, alpha=3), td.sub(ts, alpha=3))
    ed.add_(es, alpha=2)
    td.add_(ts, alpha=2)
    _same(ed, td)
    ed.sub_(es)
    td.sub_(ts)
    _same(ed, td)


def test_dense_plus_sparse_is_differentiable_in_both():
    w = ember.tensor([0.5, -1.0, 2.0, 0.25], dtype=ember.float64, requires_grad=True)
    v = ember.tensor([1.5, -0.5], dtype=ember.float64, requires_grad=True)

    def f(w, v):
        s = ember.sparse_coo_tensor([[3, 1]], v, (4,))
        return (w + s) * (w - 2 * s)
    assert ember.autograd.gradcheck(f, (w, v))


def test_dense_plus_sparse_of_another_shape_raises():
    s = ember.sparse_coo_tensor([[0]], [1.0], (3,))
    with pytest.raises(RuntimeError, match=r"add: a dense tensor of shape \[4\] and a sparse "
                                           r"tensor of size \[3\]"):
        ember.ones(4).add_(s)


def test_in_place_ops_on_a_sparse_tensor():
    (ea, ta), (eb, tb) = _pair(*A), _pair(*B)
    ea, ta, eb, tb = ea.coalesce(), ta.coalesce(), eb.coalesce(), tb.coalesce()
    for e, t in ((ea.clone(), ta.clone()),):
        assert e.add_(eb, alpha=2) is e
        t.add_(tb, alpha=2)
        _same(e, t)
        e.sub_(eb)
        t.sub_(tb)
        _same(e, t)
        e.mul_(3.0)
        t.mul_(3.0)
        np.testing.assert_allclose(_dense(e), _dense(t))
        e.div_(2.0)
        t.div_(2.0)
        np.testing.assert_allclose(_dense(e), _dense(t))
        e.zero_()
        t.zero_()
        assert e._nnz() == t._nnz() == 0 and tuple(e.shape) == tuple(t.shape)


def test_sparse_add_dense_in_place_is_refused():
    s = ember.sparse_coo_tensor([[0]], [1.0], (3,))
    with pytest.raises(RuntimeError, match="add_: a sparse COO tensor can add only a sparse"):
        s.add_(ember.ones(3))
    with pytest.raises(RuntimeError):
        torch.sparse_coo_tensor([[0]], [1.0], (3,)).add_(torch.ones(3))


def test_zeros_like_new_and_resize_as_of_a_sparse_tensor():
    (es, ts) = _pair(*HYBRID)
    _same(ember.zeros_like(es), torch.zeros_like(ts))
    assert ember.zeros_like(es, dtype=ember.float32).dtype == ember.float32
    _same(es.new(), ts.new())
    _same(es.new(es._indices(), es._values() * 2, es.size()),
          ts.new(ts._indices(), ts._values() * 2, ts.size()))
    _same(es.new().resize_as_(es), ts.new().resize_as_(ts))
    with pytest.raises(RuntimeError, match="ones_like: a sparse COO input"):
        ember.ones_like(es)


def test_momentum_buffer_of_sparse_updates():
    """SM3's form: m = zeros_like(update); m.mul_(beta).add_(update, alpha=1 - beta)."""
    (eu, tu) = _pair(*A)
    em, tm = ember.zeros_like(eu), torch.zeros_like(tu)
    for _ in range(3):
        em.mul_(0.9).add_(eu, alpha=0.1)
        tm.mul_(0.9).add_(tu, alpha=0.1)
    np.testing.assert_allclose(_dense(em), _dense(tm), rtol=1e-12)
    p_e, p_t = ember.ones(5, dtype=ember.float64), torch.ones(5, dtype=torch.float64)
    p_e.add_(em, alpha=-0.1)
    p_t.add_(tm, alpha=-0.1)
    _same(p_e, p_t)


def test_sparse_mask_of_a_coalesced_mask_is_coalesced():
    e = ember.arange(5.0).sparse_mask(ember.sparse_coo_tensor([[3, 1]], [1.0, 1.0], (5,))
                                      .coalesce())
    t = torch.arange(5.0).sparse_mask(torch.sparse_coo_tensor([[3, 1]], [1.0, 1.0], (5,))
                                      .coalesce())
    _same(e, t)


# ---------------------------------------------------------------- legacy constructors
@pytest.mark.parametrize("name", ["FloatTensor", "DoubleTensor", "LongTensor"])
def test_legacy_sparse_constructors(name):
    i, v = [[0, 1], [1, 0]], [1.0, 2.0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        e = getattr(ember.sparse, name)(ember.tensor(i), ember.tensor(v), ember.Size([2, 2]))
    assert any("deprecated" in str(w.message) for w in caught)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = getattr(torch.sparse, name)(torch.tensor(i), torch.tensor(v), torch.Size([2, 2]))
        _same(e, t)
        assert e.dtype == ember.float32 and t.dtype == torch.float32   # the values' dtype
        _same(getattr(ember.sparse, name)(ember.tensor(i), ember.tensor(v)),
              getattr(torch.sparse, name)(torch.tensor(i), torch.tensor(v)))
    for args in ((2, 3), (ember.Size([2, 3]),)):
        e = getattr(ember.sparse, name)(*args)
        t = getattr(torch.sparse, name)(*[torch.Size(a) if isinstance(a, ember.Size) else a
                                          for a in args])
        _same(e, t)
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]


def test_legacy_sparse_isinstance_and_bad_arguments():
    s = ember.sparse_coo_tensor([[0]], [1.0], (2,))
    assert isinstance(s, ember.sparse.FloatTensor)
    assert not isinstance(s, ember.sparse.DoubleTensor)
    assert not isinstance(ember.ones(2), ember.sparse.FloatTensor)
    assert not isinstance(s, ember.FloatTensor)     # the dense type stays dense-only
    with pytest.raises(TypeError, match=r"ember.sparse.FloatTensor\(\): expected"):
        ember.sparse.FloatTensor("abc")
