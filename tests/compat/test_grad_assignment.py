"""Assigning ``.grad`` (pytorch/tutorials' polynomial_autograd at 02e5a75 "zeroes" its weights'
gradients with ``a.grad, b.grad = 0., 0.``): torch refuses anything but a Tensor or None with a
TypeError; ember stored the float silently, and the next accumulation then added tensors to it.
"""
import pytest

import ember


def _torch():
    return pytest.importorskip("torch")


_VALUES = {"float": 0.0, "int": 0, "list": [1.0, 2.0], "str": "0"}


@pytest.mark.parity
@pytest.mark.parametrize("kind", sorted(_VALUES))
def test_non_tensor_grad_is_a_type_error_as_in_torch(kind):
    torch = _torch()
    for lib in (torch, ember):
        a = lib.randn(2, requires_grad=True)
        with pytest.raises(TypeError, match="assigned grad expected to be a Tensor or None"):
            a.grad = _VALUES[kind]
        assert a.grad is None


def test_tensor_none_and_del_are_accepted():
    a = ember.randn(3, requires_grad=True)
    g = ember.ones(3)
    a.grad = g
    assert a.grad is g
    (a * 2).sum().backward()   # accumulates into the assigned gradient
    assert a.grad.tolist() == [3.0, 3.0, 3.0]
    a.grad = None
    assert a.grad is None
    a.grad = g
    del a.grad
    assert a.grad is None


def test_parameter_grad_is_checked_too():
    p = ember.nn.Parameter(ember.zeros(2))
    with pytest.raises(TypeError, match="got grad of type float"):
        p.grad = 1.5


@pytest.mark.parity
@pytest.mark.parametrize("shape, dtype, what", [
    ((4,), "float32", "size"), ((3, 1), "float32", "size"), ((), "float32", "size"),
    ((3,), "float64", "dtype"), ((3,), "int64", "dtype")])
def test_grad_of_another_size_or_dtype_is_a_runtime_error_as_in_torch(shape, dtype, what):
    torch = _torch()
    for lib in (torch, ember):
        a = lib.zeros(3, requires_grad=True)
        with pytest.raises(RuntimeError, match=what):
            a.grad = lib.zeros(shape, dtype=getattr(lib, dtype))
        assert a.grad is None
        b = lib.zeros(2, 3)  # a tensor without requires_grad is checked the same way
        with pytest.raises(RuntimeError, match="size"):
            b.grad = lib.zeros(3)


def test_engine_accumulation_is_not_the_assignment_check():
    # backward writes the gradient itself: a float32 leaf used in float64 arithmetic still gets
    # its float32 gradient
    a = ember.ones(3, requires_grad=True)
    (a * ember.ones(3, dtype=ember.float64)).sum().backward()
    assert a.grad.dtype == ember.float32 and a.grad.tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parity
@pytest.mark.parametrize("retain", [False, True])
def test_backward_inputs_fill_a_non_leaf_grad_once_as_torch(retain):
    # autograd.backward(..., inputs=[x, y]) with y non-leaf: y.grad once, also when y retains
    # its grad (ember added it twice: the retain_grad hook and the inputs capture)
    torch = _torch()
    for lib in (torch, ember):
        x = lib.ones(2, requires_grad=True)
        y = x * 3
        if retain:
            y.retain_grad()
        lib.autograd.backward((y * y).sum(), inputs=[x, y])
        assert x.grad.tolist() == [18.0, 18.0] and y.grad.tolist() == [6.0, 6.0], lib.__name__
