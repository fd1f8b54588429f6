"""scatter_reduce with every reduction, include_self True and False: values and gradients
compared with torch 2.13, gradcheck in float64."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.testing import assert_close

REDUCES = ["sum", "prod", "mean", "amax", "amin"]


def _case(rng):
    x = rng.standard_normal((3, 5))
    src = rng.standard_normal((3, 4))
    index = np.array([[0, 0, 2, 4], [1, 1, 1, 1], [3, 0, 3, 0]])
    return x, src, index


@pytest.mark.parity
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCES)
def test_scatter_reduce_matches_torch(reduce, include_self):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    x, src, index = _case(np.random.default_rng(0))
    w = np.arange(1.0, 16.0).reshape(3, 5)
    results = []
    for lib in (ember, torch):
        X, S = lib.tensor(x, requires_grad=True), lib.tensor(src, requires_grad=True)
        out = X.scatter_reduce(1, lib.tensor(index), S, reduce, include_self=include_self)
        (out * lib.tensor(w)).sum().backward()
        results.append([out.detach().numpy(), X.grad.numpy(), S.grad.numpy()])
    for ours, theirs in zip(*results, strict=True):
        assert_close(ours, theirs)


@pytest.mark.parity
@pytest.mark.parametrize("reduce", REDUCES)
def test_scatter_reduce_integer_without_self_matches_torch(reduce):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    x = np.array([[1, 2, 3, 4]])
    src = np.array([[4, 7, -2, 9, 5]])
    index = np.array([[0, 0, 2, 2, 0]])
    for include_self in (True, False):
        ours = ember.tensor(x).scatter_reduce(1, ember.tensor(index), ember.tensor(src), reduce,
                                              include_self=include_self)
        theirs = torch.tensor(x).scatter_reduce(1, torch.tensor(index), torch.tensor(src),
                                                reduce, include_self=include_self)
        assert ours.dtype == ember.int64
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCES)
def test_scatter_reduce_gradcheck(reduce, include_self):
    x, src, index = _case(np.random.default_rng(1))
    X, S = ember.tensor(x, requires_grad=True), ember.tensor(src, requires_grad=True)
    idx = ember.tensor(index)

    def f(a, b):
        return a.scatter_reduce(1, idx, b, reduce, include_self=include_self)

    assert gradcheck(f, (X, S))
    if reduce in ("sum", "mean", "amax", "amin"):   # prod: second derivative (DEVIATIONS.md)
        assert gradgradcheck(f, (X, S))


def test_scatter_reduce_ties_share_the_gradient_and_prod_handles_zeros():
    x = ember.tensor([1.0, 2.0, 0.0], requires_grad=True)
    src = ember.tensor([2.0, 2.0, 0.0, 3.0], requires_grad=True)
    idx = ember.tensor([0, 0, 2, 2])
    out = x.scatter_reduce(0, idx, src, "amax", include_self=True)
    out.sum().backward()
    assert out.tolist() == [2.0, 2.0, 3.0]
    assert x.grad.tolist() == [0.0, 1.0, 0.0] and src.grad.tolist() == [0.5, 0.5, 0.0, 1.0]
    x.grad = src.grad = None
    out = x.scatter_reduce(0, idx, src, "prod", include_self=True)
    out.sum().backward()
    # position 2 holds 0 * 0 * 3: two zeros, every derivative 0; position 0: 1 * 2 * 2
    assert out.tolist() == [4.0, 2.0, 0.0]
    assert x.grad.tolist() == [4.0, 1.0, 0.0] and src.grad.tolist() == [2.0, 2.0, 0.0, 0.0]


def test_scatter_reduce_errors_and_0d():
    x = ember.zeros(3)
    with pytest.raises(RuntimeError, match="reduce argument must be one of"):
        # (not "max": torch takes it as amax)
        x.scatter_reduce(0, ember.tensor([0]), ember.ones(1), "mean_all")
    with pytest.raises(RuntimeError, match="Expected dtype int32/int64 for index"):
        x.scatter_reduce(0, ember.tensor([0.0]), ember.ones(1), "sum")
    out = ember.tensor(2.0).scatter_reduce(0, ember.tensor(0), ember.tensor(5.0), "amax",
                                           include_self=False)
    assert out.item() == 5.0 and out.shape == ()


@pytest.mark.parametrize("reduce", ["amax", "amin", "prod"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_gradient_with_an_index_smaller_than_the_input(reduce, include_self):
    # the index covers one row and two columns of a 3x4 input: the gradient's lookups must stay
    # within the index (they were broadcast to the input's 3 rows: a ValueError)
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    src = ember.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    index = ember.tensor([[3, 3]])

    def f(x, src):
        return x.clone().scatter_reduce_(1, index, src, reduce, include_self=include_self)

    assert gradcheck(f, (x, src))


def test_scatter_reduce_takes_max_and_min_as_torch():
    x, s, i = ember.tensor([[1.0, 5.0, 2.0]]), ember.tensor([[3.0, 4.0]]), ember.tensor([[0, 0]])
    assert x.scatter_reduce(1, i, s, "max").tolist() == [[4.0, 5.0, 2.0]]
    assert x.scatter_reduce(1, i, s, "min").tolist() == [[1.0, 5.0, 2.0]]
    with pytest.raises(RuntimeError, match="reduce argument must be one of"):
        x.scatter_reduce(1, i, s, "add")


def test_scatter_reduce_of_complex_means_and_refuses_an_order():
    x = ember.tensor([1 + 1j, 2 + 0j])
    out = x.scatter_reduce(0, ember.tensor([0, 0]), ember.tensor([3 + 1j, 5 + 4j]), "mean")
    assert out.tolist() == [3 + 2j, 2 + 0j]  # (1+1j + 3+1j + 5+4j) / 3, not a floor division
    for reduce in ("amax", "amin"):
        with pytest.raises(NotImplementedError, match=f"'{reduce}' is not implemented for "
                                                      "complex"):
            x.scatter_reduce(0, ember.tensor([0]), ember.tensor([3 + 1j]), reduce)
