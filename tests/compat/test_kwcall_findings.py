"""Gaps found by the keyword-call sweep's hand-written inputs (test_keyword_calls.py), each
against torch 2.13."""
from __future__ import annotations

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


@pytest.mark.parametrize("indices", [[0, 1, 0], [-2], [4, 2, 7], [3, 1], [-9, 2], []])
def test_tensor_split_indices_are_python_slices(indices):
    """Each piece is x[prev:index]: negative indices count from the end and indices need not
    increase (ember used to cut consecutive pieces, or raised from narrow)."""
    x = np.arange(10.0).reshape(5, 2)
    got = ember.tensor_split(ember.tensor(x), indices)
    want = torch.tensor_split(torch.tensor(x), indices)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    as_tensor = ember.tensor(x).tensor_split(ember.tensor(indices, dtype=ember.int64), dim=0)
    assert [tuple(p.shape) for p in as_tensor] == [tuple(p.shape) for p in want]


def test_spmm_of_dense_operands_is_their_product():
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    np.testing.assert_allclose(ember.spmm(ember.tensor(a), ember.tensor(b)).numpy(),
                               torch.spmm(torch.tensor(a), torch.tensor(b)).numpy())


def _sparse(lib):
    return lib.sparse_coo_tensor(lib.tensor([[0, 1, 1], [2, 0, 2]]),
                                 lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64), (2, 3))


def test_sparse_smm_and_sspaddmm_methods():
    """Tensor.smm / Tensor.sspaddmm of a sparse tensor compute (they raised 'can only be called
    on sparse tensors' for every self)."""
    d = np.arange(6.0).reshape(3, 2)
    got = _sparse(ember).smm(mat2=ember.tensor(d))
    want = _sparse(torch).smm(torch.tensor(d))
    assert got.is_sparse
    np.testing.assert_allclose(got.to_dense().numpy(), want.to_dense().numpy())
    base = [[0, 1], [1, 0]]
    got = ember.tensor(base, dtype=ember.float64).to_sparse().sspaddmm(
        _sparse(ember), ember.tensor(d), beta=0.5, alpha=2.0)
    want = torch.tensor(base, dtype=torch.float64).to_sparse().sspaddmm(
        _sparse(torch), torch.tensor(d), beta=0.5, alpha=2.0)
    np.testing.assert_allclose(got.to_dense().numpy(), want.to_dense().numpy())
    with pytest.raises(RuntimeError, match="sspaddmm.*sparse"):
        ember.ones(2, 2).sspaddmm(_sparse(ember), ember.tensor(d))


_SPD = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])


@pytest.mark.parametrize("name, extra", [
    ("cholesky", {}), ("cholesky_ex", {}), ("eigh", {}), ("eigvalsh", {}), ("matrix_exp", {}),
    ("matrix_norm", {"ord": "nuc"}), ("matrix_power", {"n": 3}), ("matrix_rank", {}),
    ("pinv", {}), ("solve_triangular", {"B": np.eye(3), "upper": True}),
    ("lstsq", {"b": np.ones((3, 2))}),
])
def test_linalg_takes_the_parser_name_input(name, extra):
    """torch.linalg's parser takes input= (not the A= its docs write) for these; ember too,
    and A= is refused by both (NOTE [linalg parameter names])."""
    def call(lib, first):
        kw = {k: lib.tensor(v) if isinstance(v, np.ndarray) else v for k, v in extra.items()}
        return getattr(lib.linalg, name)(**{first: lib.tensor(_SPD)}, **kw)

    got, want = call(ember, "input"), call(torch, "input")
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g.numpy()), w.numpy(), rtol=1e-10, atol=1e-12)
    with pytest.raises(TypeError, match="unexpected keyword argument 'A'|missing"):
        call(ember, "A")


def test_embedding_bag_reads_the_old_argument_order_with_a_warning():
    """F.embedding_bag(weight, input) (a float table first, int64 indices second) is swapped
    with a UserWarning, as torch does; found by the sweep's trial, which tried it that way."""
    table, idx, offsets = np.arange(15.0).reshape(5, 3), np.array([0, 1, 2, 4]), np.array([0, 2])
    with pytest.warns(UserWarning, match="Argument order of nn.functional.embedding_bag"):
        got = ember.nn.functional.embedding_bag(ember.tensor(table), ember.tensor(idx),
                                                ember.tensor(offsets), mode="max")
    with pytest.warns(UserWarning, match="Argument order"):
        want = torch.nn.functional.embedding_bag(torch.tensor(table), torch.tensor(idx),
                                                 torch.tensor(offsets), mode="max")
    np.testing.assert_allclose(got.numpy(), want.numpy())
