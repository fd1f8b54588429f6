"""In-place writes into values a compiled call computes (``out += identity``, ``x.relu_()``,
``y[idx] = 0``) become functional: the tensor's slot is bound to a new value (NOTE [In-place
writes in a compiled call] in ember/_dynamo/writes.py). Each function compiles with
fullgraph=True, so a graph break fails the test; before, every such write was a break."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn
from ember._dynamo.exc import Unsupported
from ember.testing import assert_close


def _t(*shape, seed=0, dtype=np.float64, grad=False):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return ember.tensor(a, requires_grad=grad)


def _twice(fn, make, **kw):
    """fn compiled (fullgraph) vs eager on two calls with different values: outputs and the
    gradients of every input that requires grad."""
    cf = ember.compile(fn, fullgraph=True, **kw)
    for seed in (0, 1):
        a, b = make(seed), make(seed)
        got, want = cf(*a), fn(*b)
        assert_close(got, want)
        if want.requires_grad:
            assert got.requires_grad
            got.sum().backward()
            want.sum().backward()
            for x, y in zip(a, b, strict=True):
                if y.requires_grad:
                    assert_close(x.grad, y.grad)


def test_inplace_ops_on_op_outputs_without_grad():
    def f(a, b):
        y = a * 2
        y += b
        y.relu_()
        y.mul_(b)
        return y.sum(0) + y.clamp_(-0.5, 0.5).mean()
    _twice(f, lambda s: (_t(4, 5, seed=s), _t(4, 5, seed=s + 7)))


def test_inplace_ops_on_op_outputs_with_grad():
    def f(a, b):
        y = a @ b
        y.relu_()
        y *= 3
        z = y.sin()
        z += a.sum(1, keepdim=True)
        return z
    _twice(f, lambda s: (_t(3, 4, seed=s, grad=True), _t(4, 5, seed=s + 9, grad=True)))


def test_setitem_into_op_output():
    def f(a, idx):
        y = a.exp()
        y[idx] = 0.0
        y[:, 0] = y[:, 1]
        return y
    _twice(f, lambda s: (_t(5, 3, seed=s), ember.tensor([s, 3])))


def test_setitem_with_index_tensor_and_grad():
    def f(a, v, idx):
        y = a * 1.5
        y[idx] = v
        return y.sin()
    _twice(f, lambda s: (_t(4, 3, seed=s, grad=True), _t(3, seed=s + 3, grad=True),
                         ember.tensor([s, 2])))


def test_setitem_with_an_index_tensor_made_in_the_call():
    def f(a, v):
        y = a * 1.5
        y[ember.tensor([0, 2])] = v
        return y.sin()
    _twice(f, lambda s: (_t(4, 3, seed=s, grad=True), _t(3, seed=s + 3, grad=True)))


def test_view_made_before_the_write_sees_it():
    def f(a):
        y = a + 1
        v = y[0]
        y.mul_(2)
        return v * 1
    cf = ember.compile(f)
    for s in (0, 1):
        a = _t(3, 4, seed=s)
        assert_close(cf(a), f(a))


def test_view_made_after_the_write_and_written_again():
    def f(a):
        y = a - 0.3
        y.relu_()
        row = y[1]
        row.mul_(10)
        return y
    _twice(f, lambda s: (_t(3, 4, seed=s),))


def test_write_of_another_dtype_is_cast():
    def f(a, b):
        y = a * 2
        y.add_(b)
        return y
    cf = ember.compile(f, fullgraph=True)
    for s in (0, 1):
        a, b = _t(3, seed=s, dtype=np.float32), _t(3, seed=s + 1, dtype=np.float64)
        got = cf(a, b)
        assert got.dtype == ember.float32
        assert_close(got, f(a, b))


def test_inplace_on_a_saved_output_raises_as_eager():
    def f(a):
        y = a.exp()
        y.add_(1)
        return y
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        f(_t(3, grad=True)).sum().backward()
    cf = ember.compile(f)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        cf(_t(3, grad=True)).sum().backward()


def test_returned_value_is_not_shared_with_the_next_call():
    def f(a):
        y = a * 2
        y.add_(1)
        return y
    cf = ember.compile(f, fullgraph=True)
    a = _t(4)
    first = cf(a)
    keep = first.clone()
    second = cf(a)
    second.zero_()
    assert_close(first, keep)
    assert_close(first, f(a))


class Basic(nn.Module):
    """A residual block written as torchvision's: in-place ReLU, ``out += identity``."""

    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        return self.relu(out)


@pytest.mark.parametrize("train", [True, False])
def test_residual_block_with_inplace_relu_and_add(train):
    ember.manual_seed(0)
    net = Basic(4).double().train(train)
    ref = copy.deepcopy(net)
    cnet = ember.compile(net, fullgraph=True)
    for s in (0, 1, 2):
        x1, x2 = _t(2, 4, 5, 5, seed=s, grad=True), _t(2, 4, 5, 5, seed=s, grad=True)
        got, want = cnet(x1), ref(x2)
        assert_close(got, want)
        got.square().sum().backward()
        want.square().sum().backward()
        assert_close(x1.grad, x2.grad)
        for p, q in zip(net.parameters(), ref.parameters(), strict=True):
            assert_close(p.grad, q.grad)
        for p, q in zip(net.buffers(), ref.buffers(), strict=True):
            assert_close(p, q)


def test_dynamic_sizes():
    def f(a):
        y = F.gelu(a)
        y += a
        y[:, -1] = 0
        return y
    cf = ember.compile(f, dynamic=True, fullgraph=True)
    for n in (3, 5, 8):
        a = _t(n, n + 1, seed=n)
        assert_close(cf(a), f(a))


def test_write_into_a_value_with_a_view_still_breaks_under_fullgraph():
    def f(a):
        y = a * 2
        v = y.view(-1)
        y.add_(1)
        return v + 0
    with pytest.raises(Unsupported, match="in-place write"):
        ember.compile(f, fullgraph=True)(_t(2, 3))
