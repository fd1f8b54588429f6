"""Op._run's unrolled three-argument path (Linear's input, weight, bias) records what the
general path records, and the engine's checks of a gradient that reaches a leaf."""
import numpy as np
import pytest

import ember
from ember.autograd.function import Function, Op


class _Axpb(Op):
    """a * x + b, three arguments (the unrolled path)."""

    @staticmethod
    def forward(ctx, a, x, b):
        ctx.save_for_backward(a, x)
        return a * x + b

    @staticmethod
    def backward(ctx, grad):
        a, x = ctx.saved_tensors
        return grad * x, grad * a, grad


class _Axpb4(Op):
    """The same with a fourth (ignored) argument: the general path."""

    @staticmethod
    def forward(ctx, a, x, b, unused):
        ctx.save_for_backward(a, x)
        return a * x + b

    @staticmethod
    def backward(ctx, grad):
        a, x = ctx.saved_tensors
        return grad * x, grad * a, grad, None


@pytest.mark.parametrize("needs", [(True, True, True), (False, True, False),
                                   (True, False, False), (False, False, False)])
def test_three_argument_op_records_as_the_general_path(rng, needs):
    vals = [rng.standard_normal(4) for _ in range(3)]
    results = []
    for op, extra in ((_Axpb, ()), (_Axpb4, (None,))):
        ts = [ember.tensor(v, requires_grad=n) for v, n in zip(vals, needs)]
        y = op.apply(*ts, *extra)
        assert y.requires_grad is any(needs)
        if any(needs):
            assert tuple(y.grad_fn.needs_input_grad[:3]) == needs
            y.sum().backward()
        results.append((y.detach().numpy(), [t.grad for t in ts]))
        with ember.no_grad():
            assert not op.apply(*ts, *extra).requires_grad
    (y3, g3), (y4, g4) = results
    np.testing.assert_array_equal(y3, y4)
    for a, b in zip(g3, g4):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_three_argument_op_with_plain_numbers(rng):
    x = ember.tensor(rng.standard_normal(3), requires_grad=True)
    y = _Axpb.apply(2.0, x, 1.0)
    assert y.grad_fn.needs_input_grad == (False, True, False)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full(3, 2.0))


def _returning(grad_of):
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad_of(grad)
    return Bad


def test_leaf_gradient_of_another_shape_raises():
    x = ember.ones(2, requires_grad=True)
    bad = _returning(lambda g: ember.ones(3))
    with pytest.raises(RuntimeError, match=r"returned an invalid gradient at index 0 - got \[3\]"):
        bad.apply(x).sum().backward()


def test_leaf_gradient_of_one_element_is_reshaped_and_cast():
    x = ember.ones(1, requires_grad=True)
    three = _returning(lambda g: ember.ones(1, 1, dtype=ember.float64) * 3)
    three.apply(x).sum().backward()
    assert x.grad.shape == (1,) and x.grad.dtype == ember.float32
    np.testing.assert_array_equal(x.grad.numpy(), [3.0])
