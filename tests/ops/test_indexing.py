"""Indexing: getitem/setitem rules, gather/scatter/index_* bounds and dtypes, where/masks, and
regression tests for fixed bugs (0-d inputs, int32 indices, torch's exception types)."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck


def _x():
    return ember.arange(6.0).reshape(2, 3).clone()


# ---------------------------------------------------------------------------------------------
# getitem / setitem


def test_float_index_raises_index_error():
    with pytest.raises(IndexError, match="tensors used as indices must be long, int, byte or "
                                         "bool tensors; got ember.float32"):
        _x()[ember.tensor([0.0])]
    with pytest.raises(IndexError, match="tensors used as indices"):
        _x()[[0.5]]


@pytest.mark.parametrize("key", [5, -3, (0, 3), (slice(None), -4), ember.tensor([0, 2])])
def test_index_out_of_range_raises_index_error(key):
    with pytest.raises(IndexError, match=r"index.*out of bounds.*\(tensor of shape \[2, 3\]\)"):
        _x()[key]


def test_too_many_indices_raises_index_error():
    with pytest.raises(IndexError, match="too many indices"):
        _x()[0, 0, 0]


def test_negative_step_raises_value_error():
    with pytest.raises(ValueError, match="step must be greater than zero"):
        _x()[::-1]


def test_uint8_index_is_a_mask():
    x = _x()
    np.testing.assert_array_equal(x[ember.tensor([1, 0], dtype=ember.uint8)].numpy(),
                                  [[0.0, 1.0, 2.0]])


def test_int_index_gives_a_0d_view():
    x = _x()
    v = x[1, 2]
    assert v.ndim == 0 and v._base is x
    v.fill_(-1.0)
    assert x[1, 2].item() == -1.0


def test_setitem_broadcasts_casts_and_bumps_version():
    x = _x()
    v0 = x._version
    x[0] = ember.tensor([7, 8, 9])  # int values into a float tensor
    x[:, 0] = 5
    assert x.tolist() == [[5.0, 8.0, 9.0], [5.0, 4.0, 5.0]]
    assert x._version > v0
    with pytest.raises(RuntimeError, match=r"__setitem__: shape mismatch.*\[4\]"):
        x[0] = ember.ones(4)


def test_setitem_on_leaf_requiring_grad_raises():
    w = ember.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w[0] = 2.0


def test_setitem_records_gradient():
    x = ember.zeros(3, dtype=ember.float64)
    v = ember.tensor(2.0, dtype=ember.float64, requires_grad=True)
    x[1] = v
    (x * ember.tensor([1.0, 3.0, 5.0], dtype=ember.float64)).sum().backward()
    assert v.grad.item() == 3.0


def test_index_gradients():
    x = ember.arange(6.0, dtype=ember.float64).reshape(2, 3).requires_grad_()
    assert gradcheck(lambda t: t[:, ::2], (x,))
    assert gradcheck(lambda t: t[ember.tensor([1, 1, 0])], (x,))  # repeats accumulate
    assert gradcheck(lambda t: t[t > 2.5], (x,))
    assert gradgradcheck(lambda t: t[ember.tensor([0, 0]), ember.tensor([2, 2])] ** 2, (x,))


# ---------------------------------------------------------------------------------------------
# gather / scatter / index_*


# torch raises IndexError for index_select/index_copy/index_fill, RuntimeError for the others
@pytest.mark.parametrize("call,error", [
    (lambda x: x.gather(1, ember.tensor([[3]])), RuntimeError),
    (lambda x: x.gather(1, ember.tensor([[-1]])), RuntimeError),
    (lambda x: x.scatter(1, ember.tensor([[3]]), 1.0), RuntimeError),
    (lambda x: x.scatter_add(0, ember.tensor([[2, 0, 0]]), ember.ones(1, 3)), RuntimeError),
    (lambda x: x.index_select(1, ember.tensor([3])), IndexError),
    (lambda x: x.index_select(1, ember.tensor([-1])), IndexError),
    (lambda x: x.index_add(1, ember.tensor([5]), ember.ones(2, 1)), RuntimeError),
    (lambda x: x.index_copy(0, ember.tensor([2]), ember.ones(1, 3)), IndexError),
    (lambda x: x.index_fill(1, ember.tensor([3]), 0.0), IndexError),
])
def test_out_of_bounds_indices_raise_like_torch(call, error):
    with pytest.raises(error, match=r"index -?\d+ is out of bounds for dimension \d with "
                                    r"size \d"):
        call(_x())


@pytest.mark.parametrize("call,err,match", [
    (lambda x: x.gather(1, ember.tensor([[0.0]])), RuntimeError, "gather.*int32/int64.*float32"),
    (lambda x: x.gather(1, ember.tensor([0])), RuntimeError,
     "gather.*same number of dimensions"),
    (lambda x: x.gather(2, ember.tensor([[0]])), IndexError, "gather.*Dimension out of range"),
    (lambda x: x.index_select(0, ember.tensor([[0]])), IndexError, "index_select.*vector"),
    (lambda x: x.index_select(0, ember.tensor([0.0])), RuntimeError, "index_select.*int"),
    (lambda x: x.masked_fill(ember.ones(2, 3), 0.0), RuntimeError, "only supports boolean"),
    (lambda x: x.masked_fill(ember.ones(4, dtype=ember.bool), 0.0), RuntimeError,
     r"masked_fill.*\[4\].*\[2, 3\]"),
    (lambda x: x.masked_fill(ember.ones(3, dtype=ember.bool), ember.ones(2)), RuntimeError,
     "0-dimensional value tensor"),
    (lambda x: ember.where(ember.ones(3), x, x), RuntimeError, "where expected condition.*bool"),
    (lambda x: ember.where(ember.ones(4, dtype=ember.bool), x, 0.0), RuntimeError,
     r"where.*\[4\].*\[2, 3\]"),
])
def test_bad_index_arguments(call, err, match):
    with pytest.raises(err, match=match):
        call(_x())


def test_int32_indices_are_accepted_like_torch():
    x = _x()
    i32 = ember.tensor([[2, 0]], dtype=ember.int32)
    assert x.gather(1, i32).tolist() == [[2.0, 0.0]]
    assert x.scatter(1, i32, 0.0).tolist()[0] == [0.0, 1.0, 0.0]
    assert x.index_select(1, ember.tensor([1], dtype=ember.int32)).tolist() == [[1.0], [4.0]]


def test_0d_gather_scatter_index_select():
    s = ember.tensor(3.0)
    assert ember.gather(s, 0, ember.tensor(0)).item() == 3.0
    assert ember.scatter(s, 0, ember.tensor(0), ember.tensor(5.0)).item() == 5.0
    assert ember.scatter_add(s, 0, ember.tensor(0), ember.tensor(5.0)).item() == 8.0
    out = ember.index_select(s, 0, ember.tensor([0]))
    assert out.ndim == 0 and out.item() == 3.0
    with pytest.raises(IndexError, match="Index to scalar can have only 1 value"):
        ember.index_select(s, 0, ember.tensor([0, 0]))
    x = ember.tensor(3.0, dtype=ember.float64, requires_grad=True)
    assert gradcheck(lambda t: ember.gather(t, 0, ember.tensor(0)) * 2, (x,))


def test_scatter_reduce_mean_keeps_integer_dtype():
    x = ember.tensor([[-7]])
    out = ember.scatter_reduce(x, 1, ember.tensor([[0]]), ember.tensor([[0]]), "mean")
    assert out.dtype == ember.int64 and out.item() == -4  # floor((-7 + 0) / 2), like torch


def test_scatter_gradient_src_larger_than_index():
    x = ember.zeros(2, 3, dtype=ember.float64, requires_grad=True)
    src = ember.arange(6.0, dtype=ember.float64).reshape(2, 3).requires_grad_()
    assert gradcheck(lambda a, b: a.scatter(0, ember.tensor([[1, 0, 1]]), b), (x, src))


def test_masked_scatter_gradient():
    x = ember.zeros(2, 3, dtype=ember.float64, requires_grad=True)
    src = ember.arange(6.0, dtype=ember.float64).requires_grad_()
    mask = ember.tensor([[True, False, True], [False, True, False]])
    assert gradcheck(lambda a, b: a.masked_scatter(mask, b), (x, src))


def test_where_gradient_does_not_leak_nan_from_the_other_branch():
    x = ember.tensor([-1.0, 4.0], dtype=ember.float64, requires_grad=True)
    y = ember.where(x > 0, x.clamp(min=1e-12).sqrt(), ember.zeros(2, dtype=ember.float64))
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.25])


def test_nonzero_forms():
    x = ember.tensor([[0, 1], [2, 0]])
    assert x.nonzero().tolist() == [[0, 1], [1, 0]]
    rows, cols = ember.nonzero(x, as_tuple=True)
    assert rows.tolist() == [0, 1] and cols.tolist() == [1, 0]
    assert ember.where(x > 0)[1].tolist() == [1, 0]
    assert ember.tensor(5).nonzero().shape == (1, 0)


def test_where_out_resizes_an_empty_out_to_a_0d_result():
    out = ember.empty(0, dtype=ember.bool)
    res = ember.where(ember.tensor(True), ember.tensor(False), ember.tensor(True), out=out)
    assert res is out and tuple(out.shape) == () and out.item() is False
