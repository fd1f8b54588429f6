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
