"""A custom Function's backward returning more gradients than its forward got inputs, the extra
ones None (pytorch/tutorials' custom_function_conv_bn returns seven for an apply(X, weight)):
torch drops the Nones; ember raised "incorrect number of gradients". More than that, or extra
gradients that are not None, or too few, stay errors under both.
"""
import pytest

import ember


def _torch():
    return pytest.importorskip("torch")


def _scale(lib, extra):
    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, k=2.0, shift=None):
            ctx.k = k
            return x * k

        @staticmethod
        def backward(ctx, grad):
            return (grad * ctx.k, *extra(lib))

    return Scale


@pytest.mark.parity
@pytest.mark.parametrize("n_none", [1, 2, 5])
def test_extra_none_gradients_are_dropped_as_in_torch(n_none):
    torch = _torch()
    for lib in (torch, ember):
        scale = _scale(lib, lambda lib: (None,) * n_none)
        x = lib.ones(3, requires_grad=True)
        scale.apply(x).sum().backward()
        assert x.grad.tolist() == [2.0, 2.0, 2.0], lib.__name__
        x2 = lib.ones(3, requires_grad=True)
        g, = lib.autograd.grad(scale.apply(x2, 3.0).sum(), x2)
        assert g.tolist() == [3.0, 3.0, 3.0], lib.__name__


@pytest.mark.parity
@pytest.mark.parametrize("extra, got", [
    (lambda lib: (None, lib.ones(1)), 3),     # an extra gradient that is not None
    (lambda lib: (lib.ones(1), None), 3),
])
def test_extra_gradients_that_are_not_none_are_errors_as_in_torch(extra, got):
    torch = _torch()
    for lib in (torch, ember):
        scale = _scale(lib, extra)
        x = lib.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match=rf"incorrect number of gradients \(expected 1, "
                                               rf"got {got}\)"):
            scale.apply(x).sum().backward()


@pytest.mark.parity
def test_too_few_gradients_are_an_error_as_in_torch():
    torch = _torch()
    for lib in (torch, ember):
        class Pair(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                return a * b

            @staticmethod
            def backward(ctx, grad):
                return (grad,)

        a, b = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match=r"expected 2, got 1"):
            Pair.apply(a, b).sum().backward()


def test_gradcheck_passes_with_extra_nones():
    scale = _scale(ember, lambda lib: (None, None, None))
    x = ember.rand(4, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(scale.apply, (x,))
