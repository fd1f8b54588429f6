"""ember.autograd.graph.saved_tensors_hooks, save_on_cpu and disable_saved_tensors_hooks."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.autograd import graph


def test_hooks_see_every_saved_tensor_and_gradients_stay_exact(rng):
    a = rng.standard_normal(5)
    x = ember.tensor(a, requires_grad=True)
    packed = []
    with graph.saved_tensors_hooks(lambda t: packed.append(t.clone()) or len(packed) - 1,
                                   lambda i: packed[i]):
        y = (x.exp() * x).sum()
    assert len(packed) == 3  # exp keeps its output, mul both operands
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(a) * (1 + a))


def test_hooked_values_are_not_version_checked_like_torch():
    leaf = ember.ones(2, requires_grad=True)
    a = leaf * 1
    with graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
        y = a * a
    a.add_(1)  # the hook kept a copy: backward uses the values at save time
    g, = ember.autograd.grad(y.sum(), leaf)
    np.testing.assert_allclose(g.numpy(), [2.0, 2.0])


def test_unpack_hook_must_return_a_tensor():
    x = ember.ones(2, requires_grad=True)
    with graph.saved_tensors_hooks(lambda t: 5, lambda p: 7):
        y = x * x
    with pytest.raises(TypeError, match="unpack_hook expected to be a Tensor"):
        y.sum().backward()


def test_double_backward_through_a_hooked_output(rng):
    a = rng.standard_normal(4)
    x = ember.tensor(a, requires_grad=True)
    with graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
        y = x.exp()
    g, = ember.autograd.grad(y.sum(), x, create_graph=True)
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(a))


def test_disable_saved_tensors_hooks_refuses_hooks():
    with graph.disable_saved_tensors_hooks("no hooks here"):
        with pytest.raises(RuntimeError, match="no hooks here"):
            with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        with pytest.raises(RuntimeError, match="already active"):
            with graph.disable_saved_tensors_hooks("already active"):
                pass


def test_save_on_cpu_keeps_gradients(rng):
    a = rng.standard_normal((3, 3))
    x = ember.tensor(a, requires_grad=True)
    with graph.save_on_cpu(pin_memory=True):
        (x @ x).sum().backward()
    want = np.ones((3, 3)) @ a.T + a.T @ np.ones((3, 3))
    np.testing.assert_allclose(x.grad.numpy(), want)


@pytest.mark.parity
def test_saved_hooks_calls_match_torch(rng):
    torch = pytest.importorskip("torch")
    a = rng.standard_normal((2, 3))

    def run(lib):
        x = lib.tensor(a, requires_grad=True)
        shapes = []
        with lib.autograd.graph.saved_tensors_hooks(
                lambda t: shapes.append(tuple(t.shape)) or t, lambda t: t):
            y = (x.tanh() * x).sum()
        y.backward()
        return sorted(shapes), x.grad.numpy()

    (s1, g1), (s2, g2) = run(ember), run(torch)
    assert s1 == s2
    np.testing.assert_allclose(g1, g2)


@pytest.mark.parity
def test_ops_inside_a_pack_hook_are_not_hooked_again():
    # a pack hook that itself runs ops saving tensors (x * 4, t * w) used to recurse without
    # end; torch hooks only the tensors the outer op saves (2 for x * x)
    torch = pytest.importorskip("torch")

    def count(mod):
        calls = []
        w = mod.ones(5, requires_grad=True)

        def pack(t):
            calls.append(1)
            return t * w * 4

        x = mod.full((5,), 3.0, requires_grad=True)
        with mod.autograd.graph.saved_tensors_hooks(pack, lambda p: p / 4):
            y = x * x
        y.sum().backward()
        return len(calls), x.grad.tolist()

    assert count(ember) == count(torch) == (2, [6.0] * 5)
