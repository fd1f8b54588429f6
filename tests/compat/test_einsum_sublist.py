"""einsum's sublist form, einsum(a, [0, 1], b, [1, 2], [0, 2]), which torch takes as NumPy does
(found by a differential sweep of einsum forms while growing the corpus)."""
from __future__ import annotations

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


def _calls(lib, a, b, c):
    return {
        "matmul": lambda: lib.einsum(a, [0, 1], b, [1, 2], [0, 2]),
        "implicit_output": lambda: lib.einsum(a, [0, 1], b, [1, 2]),
        "ellipsis": lambda: lib.einsum(c, [Ellipsis, 0, 1], b, [1, 2], [Ellipsis, 0, 2]),
        "upper_letters": lambda: lib.einsum(a, [26, 51], b, [51, 0], [0, 26]),
        "tuples": lambda: lib.einsum(a, (0, 1), b, (1, 2), (0, 2)),
        "trace": lambda: lib.einsum(a[:, :2], [0, 0], []),
        "sum_out": lambda: lib.einsum(a, [0, 1], []),
        "three": lambda: lib.einsum(a, [0, 1], b, [1, 2], b.T, [2, 3], [0, 3]),
        "numpy_ints": lambda: lib.einsum(a, [np.int64(0), 1], b, [1, 2], [0, 2]),
    }


def _operands(lib, rng_state=0):
    r = np.random.default_rng(rng_state)
    a = lib.tensor(r.standard_normal((2, 3)))
    b = lib.tensor(r.standard_normal((3, 4)))
    c = lib.tensor(r.standard_normal((5, 2, 3)))
    return a, b, c


@pytest.mark.parametrize("form", sorted(_calls(ember, *_operands(ember))))
def test_einsum_sublist_form_matches_torch(form):
    got = _calls(ember, *_operands(ember))[form]()
    want = _calls(torch, *_operands(torch))[form]()
    assert got.shape == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


def test_einsum_sublist_form_is_differentiable():
    r = np.random.default_rng(1)
    a0, b0 = r.standard_normal((2, 3)), r.standard_normal((3, 4))
    a, b = ember.tensor(a0, requires_grad=True), ember.tensor(b0, requires_grad=True)
    ta, tb = torch.tensor(a0, requires_grad=True), torch.tensor(b0, requires_grad=True)
    ember.einsum(a, [0, 1], b, [1, 2], [0, 2]).pow(2).sum().backward()
    torch.einsum(ta, [0, 1], tb, [1, 2], [0, 2]).pow(2).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("bad", [[0, 52], [0, -1]])
def test_einsum_sublist_out_of_range_raises_value_error_like_torch(bad):
    with pytest.raises(ValueError, match=r"valid range \[0, 52\)"):
        torch.einsum(torch.ones(2, 3), bad, torch.ones(3, 3), [1, 2])
    with pytest.raises(ValueError, match=r"einsum\(\): subscript .*\[0, 52\); got"):
        ember.einsum(ember.ones(2, 3), bad, ember.ones(3, 3), [1, 2])


def test_einsum_sublist_float_subscript_raises_type_error_like_torch():
    with pytest.raises(TypeError):
        torch.einsum(torch.ones(2, 3), [0, 1.0], torch.ones(3, 3), [1, 2])
    with pytest.raises(TypeError):
        ember.einsum(ember.ones(2, 3), [0, 1.0], ember.ones(3, 3), [1, 2])
