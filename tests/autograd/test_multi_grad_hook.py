"""autograd.graph: register_multi_grad_hook ('all' and 'any'), GradientEdge and
get_gradient_edge (also as an input of autograd.grad), compared with torch 2.13."""
from __future__ import annotations

import pytest

import ember
from ember.autograd.graph import GradientEdge, get_gradient_edge, register_multi_grad_hook


def _lists(grads):
    return [None if g is None else g.tolist() for g in grads]


def _all_mode_calls(lib):
    from_graph = lib.autograd.graph
    a = lib.ones(2, requires_grad=True)
    b = lib.ones(2, requires_grad=True)
    calls = []
    handle = from_graph.register_multi_grad_hook((a, b), lambda gs: calls.append(_lists(gs)))
    (a * 2).sum().backward()                 # b is not reached: None
    (a * 3 + b * 4).sum().backward()
    y = a * 5
    (y * b).sum().backward()
    handle.remove()
    (a * 3 + b).sum().backward()             # removed: no call
    return calls


def test_multi_grad_hook_all_mode():
    assert _all_mode_calls(ember) == [[[2.0, 2.0], None], [[3.0, 3.0], [4.0, 4.0]],
                                      [[5.0, 5.0], [5.0, 5.0]]]


@pytest.mark.parity
def test_multi_grad_hook_all_mode_matches_torch():
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    assert _all_mode_calls(ember) == _all_mode_calls(torch)


def test_multi_grad_hook_all_mode_sees_intermediate_tensors_once_per_backward():
    x = ember.ones(3, requires_grad=True)
    y, z = x * 2, x * 3
    calls = []
    register_multi_grad_hook((y, z), lambda gs: calls.append(_lists(gs)))
    (y * 5 + z * 7).sum().backward(retain_graph=True)
    assert calls == [[[5.0] * 3, [7.0] * 3]]
    (y * 1).sum().backward()
    assert calls[-1] == [[1.0] * 3, None]
    assert x.grad.tolist() == [33.0, 33.0, 33.0]


def test_multi_grad_hook_any_mode_fires_once_with_one_gradient():
    a = ember.ones(2, requires_grad=True)
    b = ember.ones(2, requires_grad=True)
    calls = []
    with register_multi_grad_hook((a, b), lambda g: calls.append(g.tolist()), mode="any"):
        (a * 2 + b * 5).sum().backward()
        (b * 7).sum().backward()
    (b * 7).sum().backward()                  # the with-block removed the hook
    assert len(calls) == 2
    assert calls[0] in ([2.0, 2.0], [5.0, 5.0]) and calls[1] == [7.0, 7.0]


def test_multi_grad_hook_errors():
    a = ember.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match=r"Expects mode to be one of \('all', 'any'\) but got x"):
        register_multi_grad_hook((a,), lambda gs: None, mode="x")
    with pytest.raises(AssertionError, match="require grad"):
        register_multi_grad_hook((a, ember.ones(2)), lambda gs: None)


@pytest.mark.parity
def test_gradient_edge_matches_torch_and_feeds_autograd_grad():
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    for lib in (ember, torch):
        a = lib.ones(2, requires_grad=True)
        leaf_edge = lib.autograd.graph.get_gradient_edge(a)
        assert leaf_edge.output_nr == 0 and type(leaf_edge.node).__name__ == "AccumulateGrad"
        y = a * 2
        edge = lib.autograd.graph.get_gradient_edge(y)
        assert edge.node is y.grad_fn and edge.output_nr == 0
        assert edge._fields == ("node", "output_nr", "ownership_token")
        (g,) = lib.autograd.grad((y * y).sum(), edge, retain_graph=True)
        assert g.tolist() == [4.0, 4.0]
        (g,) = lib.autograd.grad((y * y).sum(), [leaf_edge])
        assert g.tolist() == [8.0, 8.0]
    assert isinstance(get_gradient_edge(ember.ones(1, requires_grad=True)), GradientEdge)
    with pytest.raises(RuntimeError, match="does not require gradients"):
        get_gradient_edge(ember.ones(2))
