"""The unrolled recording of one-output ops (function._finish1 / _pack_plain) keeps what the
general `_finish` does: version checks of saved inputs and outputs, saved-tensor hooks, anomaly
traces, non-tensor saved arguments, non-differentiable outputs."""

import numpy as np
import pytest

import ember
from ember.autograd import function as fn


def test_saved_input_and_output_are_version_checked():
    x = ember.randn(3, 4, requires_grad=True)
    a = x * 1
    y = a.exp()  # saves its output
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace.*output 0 of ExpBackward0"):
        y.sum().backward()
    b = x * 1
    z = b.sin()  # saves its input
    b.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_saved_tensor_hooks_see_one_output_ops():
    packed = []

    def pack(t):
        packed.append(tuple(t.shape))
        return t

    x = ember.randn(5, 3, requires_grad=True)
    w = ember.randn(4, 3, requires_grad=True)
    with ember.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = ember.nn.functional.linear(x, w).relu()
    assert (5, 3) in packed and (4, 3) in packed and (5, 4) in packed
    y.sum().backward()
    xs, ws = x.detach().numpy(), w.detach().numpy()
    mask = (xs @ ws.T > 0).astype(np.float32)
    np.testing.assert_allclose(w.grad.numpy(), mask.T @ xs, rtol=1e-5, atol=1e-6)


def test_anomaly_mode_keeps_the_forward_trace():
    x = ember.randn(3, requires_grad=True)
    with ember.autograd.detect_anomaly():
        y = x.sin()
    assert "test_anomaly_mode_keeps_the_forward_trace" in y.grad_fn._trace


def test_non_tensor_saved_argument_and_integer_output():
    x = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x ** 3  # the exponent is saved as it was
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * x.detach().numpy() ** 2)
    idx = x.argmax()  # an integer output takes no grad_fn
    assert idx.grad_fn is None and not idx.requires_grad


def test_one_output_edges_follow_needs_input_grad():
    x = ember.randn(2, 3, requires_grad=True)
    c = ember.randn(2, 3)
    y = x * c
    (nxt_x, _), (nxt_c, _) = y.grad_fn.next_functions
    assert type(nxt_x).__name__ == "AccumulateGrad" and nxt_c is None
    assert y.grad_fn.needs_input_grad == (True, False)


def test_finish1_runs_for_single_array_outputs(monkeypatch):
    calls = []
    real = fn._finish1
    monkeypatch.setattr(fn, "_finish1", lambda *a: calls.append(a[1].__name__) or real(*a))
    ember.randn(2, requires_grad=True).exp()
    assert calls == ["Exp"]


@pytest.mark.parametrize("name", [None, "NamedByOperandsBackward0"])
def test_ops_naming_their_node_from_operands_keep_the_one_output_finish(monkeypatch, name):
    calls = []
    real = fn._finish1
    monkeypatch.setattr(fn, "_finish1", lambda *a: calls.append(a[1].__name__) or real(*a))

    class Named(fn.Op):
        grad_name_for = staticmethod(lambda arrays: name if arrays[0].ndim == 1 else None)

        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    x = ember.ones(3, requires_grad=True)
    y = Named.apply(x)
    assert calls == ["Named"]
    assert type(y.grad_fn).__name__ == (name or "NamedBackward0")
    assert y.grad_fn.name() == (name or "NamedBackward0")
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])


def test_matrix_product_node_is_named_as_torch_names_it():
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    for shapes in [((2, 3), (3, 4)), ((5, 2, 3), (3, 4)), ((5, 2, 3), (5, 3, 4))]:
        ours = [ember.ones(s, requires_grad=True) for s in shapes]
        theirs = [torch.ones(s, requires_grad=True) for s in shapes]
        assert (type((ours[0] @ ours[1]).grad_fn).__name__
                == type((theirs[0] @ theirs[1]).grad_fn).__name__)
