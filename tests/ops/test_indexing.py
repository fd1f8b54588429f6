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
    with pytest.raises(RuntimeError, match="Index to scalar can have only 1 value"):
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


# masked_* found by tests/parity/test_indexing_sweep.py: torch's out-of-place forms broadcast
# input and mask; masked_select/masked_scatter take bool masks only
def test_masked_fill_and_scatter_broadcast_to_a_larger_mask():
    x = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
    mask = ember.tensor([[[True, False], [False, True]], [[False, False], [True, True]]])
    filled = ember.masked_fill(x, mask, 0.0)
    assert filled.tolist() == [[[0.0, 2.0], [3.0, 0.0]], [[1.0, 2.0], [0.0, 0.0]]]
    scattered = ember.masked_scatter(x, mask, ember.tensor([10.0, 20.0, 30.0, 40.0]))
    assert scattered.tolist() == [[[10.0, 2.0], [3.0, 20.0]], [[1.0, 2.0], [30.0, 40.0]]]
    assert ember.tensor(5.0).masked_fill(mask[0], -1.0).tolist() == [[-1.0, 5.0], [5.0, -1.0]]
    with pytest.raises(RuntimeError):
        x.clone().masked_fill_(mask, 0.0)  # in place the result cannot grow


@pytest.mark.parametrize("name", ["masked_select", "masked_scatter"])
def test_masked_select_and_scatter_want_a_bool_mask(name):
    x = ember.ones(2, 2)
    args = (ember.ones(4),) if name == "masked_scatter" else ()
    with pytest.raises(RuntimeError, match=f"{name}: expected a bool tensor for mask; got "
                                           "ember.uint8"):
        getattr(ember, name)(x, ember.tensor([[1, 0], [0, 1]]).to(ember.uint8), *args)
    with pytest.raises(RuntimeError, match=rf"{name}: the mask of shape \[3\] and the input of "
                                           r"shape \[2, 2\] do not broadcast"):
        getattr(ember, name)(x, ember.tensor([True, False, True]), *args)


def test_masked_fill_refuses_nan_into_integers_and_scatter_another_dtype():
    with pytest.raises(RuntimeError, match="masked_fill: value nan cannot be converted to type "
                                           "ember.int64"):
        ember.tensor([1, 2]).masked_fill(ember.tensor([True, False]), float("nan"))
    assert ember.tensor([1, 2]).masked_fill(ember.tensor([True, False]), 2.7).tolist() == [2, 2]
    with pytest.raises(RuntimeError, match="masked_scatter: expected self and source to have "
                                           "the same dtype; got ember.float32 and ember.float64"):
        ember.ones(2).masked_scatter(ember.tensor([True, False]), ember.ones(2).double())


# index_* checks found by tests/parity/test_indexing_sweep.py: torch's exception types, which
# differ between index_add and index_copy
@pytest.mark.parametrize("name, count_error", [("index_add", RuntimeError),
                                               ("index_copy", IndexError)])
def test_index_add_and_copy_check_index_and_source(name, count_error):
    fn = getattr(ember, name)
    x = ember.zeros(3, 4)
    with pytest.raises(IndexError, match=rf"{name}\(\): Index is supposed to be a vector"):
        fn(x, 0, ember.tensor([[0]]), ember.ones(1, 4))
    with pytest.raises(RuntimeError, match=rf"{name}\(\): self \(ember.float32\) and source "
                                           r"\(ember.float64\) must have the same dtype"):
        fn(x, 0, ember.tensor([0]), ember.ones(1, 4, dtype=ember.float64))
    with pytest.raises(count_error, match=rf"{name}\(\): Number of indices \(2\) should be "
                                          r"equal to source.size\(dim\) \(1\), for dim 0"):
        fn(x, 0, ember.tensor([0, 1]), ember.ones(1, 4))
    # a 0-d input indexes like a 1-element 1-d one and stays 0-d
    assert fn(ember.tensor(1.0), 0, ember.tensor([0]), ember.tensor(2.0)).shape == ()


def test_index_copy_wants_int64_and_index_add_checks_source_shape():
    with pytest.raises(RuntimeError, match="index_copy.*Expected a long tensor for index"):
        ember.zeros(3).index_copy(0, ember.tensor([0]).int(), ember.ones(1))
    with pytest.raises(RuntimeError, match="index_add.*source tensor shape must match self"):
        ember.tensor(1.0).index_add(0, ember.tensor([0]), ember.ones(1))
    assert ember.tensor(1.0).index_add(0, ember.tensor([0]), ember.tensor(2.0)).item() == 3.0
    # an integer input converts alpha first: 0.5 -> 0, nothing is added (as torch)
    x = ember.tensor([[3, -1]])
    assert x.index_add(0, ember.tensor([0]), ember.tensor([[10, 20]]), alpha=0.5).tolist() \
        == [[3, -1]]


def test_index_fill_counts_negative_indices_and_checks_value_and_index():
    x = ember.zeros(3, 2)
    assert x.index_fill(0, ember.tensor([-1]), 5.0).tolist() == [[0, 0], [0, 0], [5, 5]]
    with pytest.raises(IndexError, match="out of bounds"):
        x.index_fill(0, ember.tensor([-4]), 5.0)
    with pytest.raises(RuntimeError, match="index_fill_ only supports a 0-dimensional value"):
        x.index_fill(0, ember.tensor([0]), ember.tensor([1.0]))
    with pytest.raises(RuntimeError, match=r"index_fill\(\): Index has to be a vector/scalar"):
        x.index_fill(0, ember.tensor([[0]]), 1.0)
    assert ember.tensor(2.0).index_fill(0, ember.tensor([0]), True).item() == 1.0


def test_scatter_gather_take_and_put_checks():
    x = ember.zeros(3, 4)
    with pytest.raises(RuntimeError, match=r"scatter\(\): Expected self.dtype to be equal to "
                                           "src.dtype"):
        x.scatter(1, ember.tensor([[0]]), ember.ones(1, 1, dtype=ember.float64))
    empty = ember.zeros(0, 4)  # an empty index selects nothing, whatever its other sizes
    assert empty.gather(1, ember.zeros(3, 0, dtype=ember.int64)).shape == (3, 0)
    assert empty.scatter(1, ember.zeros(3, 0, dtype=ember.int64), x).shape == (0, 4)
    with pytest.raises(RuntimeError, match="take.*Expected a long tensor for index"):
        x.take(ember.tensor([1.0]))
    with pytest.raises(RuntimeError, match="take_along_dim.*same number of dimensions"):
        ember.take_along_dim(x, ember.tensor([0]), 1)
    with pytest.raises(IndexError, match=r"put_\(\): Expected source and index to have the same "
                                         "number of elements; got 1 and 2"):
        x.put_(ember.tensor([0, 1]), ember.tensor([1.0]))
    with pytest.raises(RuntimeError, match=r"put_\(\): self and source expected to have the same "
                                           "dtype"):
        x.put_(ember.tensor([0]), ember.tensor([1]))


def test_index_select_of_a_scalar_or_an_empty_dim_is_a_runtime_error():
    with pytest.raises(RuntimeError, match="Index to scalar can have only 1 value, got 0"):
        ember.tensor(1.0).index_select(0, ember.tensor([], dtype=ember.int64))
    with pytest.raises(RuntimeError, match="self indexing axis dim should be positive"):
        ember.zeros(0, 4).index_select(0, ember.tensor([0]))


def test_index_put_reports_a_bad_index_before_a_bad_value():
    with pytest.raises(IndexError):
        ember.tensor(1.0).index_put((ember.tensor([0]),), ember.tensor(1.0, dtype=ember.float64))
    with pytest.raises(IndexError):
        ember.zeros(0, 4).index_put((ember.tensor([0, 1]),), ember.ones(3))
