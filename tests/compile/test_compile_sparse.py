"""Sparse COO tensors under ember.compile: replays hold dense arrays only, so a call with a
sparse input or output runs eagerly (a graph break named in explain; Unsupported under
fullgraph=True); sparse tensors made and consumed inside the call are ordinary ops."""
import numpy as np
import pytest

import ember
from ember._dynamo.exc import Unsupported


def _coo(values):
    return ember.sparse_coo_tensor(ember.tensor([[0, 1, 1], [2, 0, 2]]),
                                   ember.tensor(values), (2, 3)).coalesce()


def test_sparse_input_runs_eagerly_with_each_call_s_values():
    f = ember.compile(lambda s, d: ember.sparse.mm(s, d) * 2)
    d = ember.arange(6.0).reshape(3, 2)
    for values in ([1.0, 2.0, 3.0], [-4.0, 0.5, 7.0]):
        s = _coo(values)
        np.testing.assert_allclose(f(s, d).numpy(), 2 * s.to_dense().numpy() @ d.numpy())
    e = ember._dynamo.explain(f)(_coo([1.0, 2.0, 3.0]), d)
    assert e.graph_break_count == 1
    assert "sparse COO tensor is an input" in e.break_reasons[0].reason


def test_sparse_output_runs_eagerly():
    d = ember.ones(3, 2)
    f = ember.compile(lambda s: s.coalesce() * 3)
    for values in ([1.0, 2.0, 3.0], [5.0, 6.0, 7.0]):
        got = f(_coo(values))
        assert got.is_sparse
        np.testing.assert_allclose(got.to_dense().numpy(), 3 * _coo(values).to_dense().numpy())
    s = _coo([1.0, 2.0, 3.0])
    g = ember.compile(lambda d: s.smm(d))
    np.testing.assert_allclose(g(d).to_dense().numpy(), s.to_dense().numpy() @ d.numpy())


def test_sparse_made_inside_the_call_is_replayed_with_new_values():
    i = ember.tensor([[0, 1, 1], [2, 0, 2]])
    f = ember.compile(lambda v, d: ember.sparse.mm(ember.sparse_coo_tensor(i, v, (2, 3)), d))
    d = ember.arange(6.0).reshape(3, 2)
    for v in (ember.tensor([1.0, 2.0, 3.0]), ember.tensor([-1.0, 4.0, 0.25])):
        dense = ember.sparse_coo_tensor(i, v, (2, 3)).to_dense().numpy()
        np.testing.assert_allclose(f(v, d).numpy(), dense @ d.numpy())


def test_fullgraph_refuses_a_sparse_input():
    f = ember.compile(lambda s: ember.sparse.sum(s), fullgraph=True)
    with pytest.raises(Unsupported, match="sparse COO tensor is an input.*fullgraph=True"):
        f(_coo([1.0, 2.0, 3.0]))
