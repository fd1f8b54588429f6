"""Custom autograd.Function: ctx API, materialize_grads, non-differentiable outputs."""
import numpy as np
import pytest

import ember
from ember.autograd import Function, gradcheck, gradgradcheck, once_differentiable


class Cube(Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.save_for_backward(x)
        ctx.k = k
        return x ** 3 * k

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x ** 2 * ctx.k, None


def test_custom_function_gradcheck_and_double_backward(rng):
    x = ember.tensor(rng.standard_normal(4), requires_grad=True)
    assert gradcheck(lambda a: Cube.apply(a, 2.0), (x,))
    assert gradgradcheck(lambda a: Cube.apply(a, 2.0), (x,))


def test_needs_input_grad_and_none_gradients():
    seen = {}

    class Mul(Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, g):
            seen["needs"] = ctx.needs_input_grad
            a, b = ctx.saved_tensors
            return g * b if ctx.needs_input_grad[0] else None, None

    a = ember.ones(2, requires_grad=True)
    b = ember.full((2,), 3.0)
    Mul.apply(a, b).sum().backward()
    assert seen["needs"] == (True, False)
    np.testing.assert_allclose(a.grad.numpy(), [3.0, 3.0])


def test_mark_non_differentiable_and_materialize_grads():
    class SortIdx(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            out = x * 1
            idx = ember.arange(x.shape[0]).float()
            ctx.mark_non_differentiable(idx)
            return out, idx

        @staticmethod
        def backward(ctx, g_out, g_idx):
            assert g_idx is None  # not materialised
            return g_out

    x = ember.ones(3, requires_grad=True)
    out, idx = SortIdx.apply(x)
    assert out.requires_grad and not idx.requires_grad
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.ones(3))


def test_once_differentiable_raises_on_double_backward():
    class Sq(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2 * x

    x = ember.tensor([1.0, 2.0], dtype=ember.float64, requires_grad=True)
    (g,) = ember.autograd.grad(Sq.apply(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), [2.0, 4.0])
    with pytest.raises(RuntimeError, match="once_differentiable"):
        g.sum().backward()


def test_saved_tensors_freed_after_backward():
    x = ember.ones(2, requires_grad=True)
    y = Cube.apply(x, 1.0)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="already been freed"):
        y.grad_fn.saved_tensors


def _custom(forward, backward):
    return type("Scale", (ember.autograd.Function,), {"forward": staticmethod(forward),
                                                     "backward": staticmethod(backward)})


def test_function_node_named_after_the_class_and_mark_dirty_counts_a_version():
    Scale = _custom(lambda ctx, x: (ctx.mark_dirty(x), x.mul_(2))[1], lambda ctx, g: g * 2)
    h = ember.ones(3, requires_grad=True) * 1
    out = Scale.apply(h)
    assert type(out.grad_fn).__name__ == "ScaleBackward" and out.grad_fn.name() == "ScaleBackward"
    assert h._version == 2  # mul_ and the mark


def test_function_misuse_errors():
    x = ember.ones(3, requires_grad=True)
    keeps_int = _custom(lambda ctx, x: (ctx.save_for_backward(x, 3), x * 2)[1], lambda ctx, g: g)
    with pytest.raises(TypeError, match="save_for_backward can only save variables.*argument 1 "
                                        "is of type int"):
        keeps_int.apply(x)
    scalar_grad = _custom(lambda ctx, x, k: x * k, lambda ctx, g: (g * 2, g))
    with pytest.raises(RuntimeError, match="gradient different than None at position 2"):
        scalar_grad.apply(x, 2.0).sum().backward()
    with pytest.raises(RuntimeError, match="call the class's static apply"):
        scalar_grad()(x, 2.0)


def test_mark_dirty_input_must_be_returned():
    returns_view = _custom(lambda ctx, x: (ctx.mark_dirty(x), x.mul_(2)[0])[1], lambda ctx, g: g)
    with pytest.raises(RuntimeError, match="marked as dirty during the forward method were not "
                                           "returned as output"):
        returns_view.apply(ember.ones(3, 4, requires_grad=True) * 1)
