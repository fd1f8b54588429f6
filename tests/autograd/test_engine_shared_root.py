"""Regression: gradients of several outputs of one node (roots sharing a node)."""
from __future__ import annotations

import numpy as np

import ember


class _Two(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, ga, gb):
        return ga * 2 + gb * 3


def test_grad_of_two_outputs_of_one_node():
    x = ember.randn(3, requires_grad=True)
    a, b = _Two.apply(x)
    (g,) = ember.autograd.grad([a, b], [x], [ember.ones(3), ember.ones(3)])
    np.testing.assert_allclose(g.numpy(), np.full(3, 5.0))


def test_backward_of_two_outputs_of_one_node():
    x = ember.randn(3, requires_grad=True)
    a, b = _Two.apply(x)
    ember.autograd.backward([a, b], [ember.ones(3), ember.ones(3)])
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 5.0))
