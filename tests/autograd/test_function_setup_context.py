"""torch 2's form of a custom autograd.Function, forward(*args) without ctx plus
setup_context(ctx, inputs, output) (the form torch.func transforms require), and
autograd.grad(..., is_grads_batched=True); found by a differential sweep of autograd forms while
growing the corpus."""
from __future__ import annotations

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


def _power(lib):
    class Power(lib.autograd.Function):
        @staticmethod
        def forward(x, k=2):
            return x ** k

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, k = inputs  # defaults are bound into inputs
            ctx.save_for_backward(x)
            ctx.k = k

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * ctx.k * x ** (ctx.k - 1), None

    return Power


def _two_outputs(lib):
    class SinCos(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x.sin(), x.cos()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output[0], output[1])

        @staticmethod
        def backward(ctx, g_sin, g_cos):
            s, c = ctx.saved_tensors
            return g_sin * c - g_cos * s

    return SinCos


@pytest.mark.parametrize("call", ["positional", "default", "keyword"])
def test_setup_context_function_values_and_grads_match_torch(call):
    results = []
    for lib in (ember, torch):
        x = lib.tensor([0.5, 1.5, -2.0], dtype=lib.float64, requires_grad=True)
        fn = _power(lib)
        if call == "positional":
            y = fn.apply(x, 3)
        elif call == "default":
            y = fn.apply(x)
        else:
            y = fn.apply(x, k=3)
        assert y.grad_fn is not None
        y.sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0])
    np.testing.assert_allclose(results[0][1], results[1][1])


def test_setup_context_sees_the_outputs_of_a_tuple_forward():
    results = []
    for lib in (ember, torch):
        x = lib.tensor([0.3, -1.2], dtype=lib.float64, requires_grad=True)
        s, c = _two_outputs(lib).apply(x)
        (s * 2 + c).sum().backward()
        results.append(x.grad.numpy())
    np.testing.assert_allclose(results[0], results[1])


def test_setup_context_function_under_func_grad():
    got = ember.func.grad(lambda v: _power(ember).apply(v, 3).sum())(ember.tensor([1.0, 2.0]))
    want = torch.func.grad(lambda v: _power(torch).apply(v, 3).sum())(torch.tensor([1.0, 2.0]))
    np.testing.assert_allclose(got.numpy(), want.numpy())


def test_setup_context_gradcheck():
    x = ember.tensor([0.4, 1.1], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda v: _power(ember).apply(v, 3), (x,))


def test_function_without_setup_context_still_gets_ctx():
    class Double(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    x = ember.ones(2, requires_grad=True)
    Double.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_base_setup_context_raises_not_implemented_like_torch():
    with pytest.raises(NotImplementedError):
        torch.autograd.Function.setup_context(None, (), None)
    with pytest.raises(NotImplementedError, match="setup_context"):
        ember.autograd.Function.setup_context(None, (), None)


@pytest.mark.parametrize("create_graph", [False, True])
def test_grad_is_grads_batched_gives_jacobian_rows_like_torch(create_graph):
    results = []
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        y = (x ** 2).sum(0, keepdim=True) * x
        (jac,) = lib.autograd.grad(y, x, grad_outputs=lib.eye(3, dtype=lib.float64),
                                   is_grads_batched=True, create_graph=create_graph)
        assert jac.requires_grad == create_graph
        results.append(jac.detach().numpy())
    np.testing.assert_allclose(results[0], results[1])


def test_grad_is_grads_batched_two_inputs_and_outputs():
    results = []
    for lib in (ember, torch):
        a = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([0.5, -1.0], dtype=lib.float64, requires_grad=True)
        outs = (a * b, a.exp() + b)
        gos = (lib.ones(4, 2, dtype=lib.float64), lib.arange(8.0, dtype=lib.float64).view(4, 2))
        ga, gb = lib.autograd.grad(outs, (a, b), grad_outputs=gos, is_grads_batched=True)
        assert ga.shape == (4, 2) and gb.shape == (4, 2)
        results.append((ga.numpy(), gb.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0])
    np.testing.assert_allclose(results[0][1], results[1][1])


def test_grad_is_grads_batched_needs_grad_outputs():
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="is_grads_batched"):
        ember.autograd.grad(x * 2, x, is_grads_batched=True)
