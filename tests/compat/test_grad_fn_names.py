"""Backward node names, as programs print and compare them (``grad_fn=<MmBackward0>``,
``y.grad_fn.name()``, ``type(y.grad_fn).__name__``). torch names a node after the ATen op that
ran, so its name depends on how the op was called: ``a.max()`` is MaxBackward1 and
``a.max(1)`` MaxBackward0 (ember: one amax op, one max-over-dim op), a product of two matrices is
MmBackward0 and of batches UnsafeViewBackward0 (ember: one matmul op); ``t()`` is TBackward0
and ``transpose`` TransposeBackward0 (ember: one permute op). Found by the
nn-zero-to-hero backprop notebook, which prints ``(a - b).abs().max()``."""
import math

import numpy as np
import pytest

import ember

# (label, code building y from a (3, 4), v (4,), b3 (2, 3, 4), b4 (2, 2, 3, 4)), all leaves
CASES = [
    ("max()", "a.max()"), ("min()", "a.min()"), ("torch.max(a)", "lib.max(a)"),
    ("max(dim)", "a.max(1)[0]"), ("min(dim)", "a.min(dim=0).values"),
    ("max(dim, keepdim)", "lib.max(a, -1, keepdim=True)[0]"),
    ("amax()", "a.amax()"), ("amax(dim)", "a.amax(1)"), ("amin(dim)", "a.amin(0)"),
    ("max(a, b)", "lib.max(a, a * 2)"), ("maximum", "lib.maximum(a, a * 2)"),
    ("2-D @ 2-D", "a @ a.t()"), ("matmul", "lib.matmul(a, a.t())"), ("mm", "lib.mm(a, a.t())"),
    ("2-D @ 2-D, other constant", "a @ lib.ones(4, 2)"),
    ("constant @ 2-D", "lib.ones(2, 3) @ a"),
    ("bmm", "lib.bmm(b3, b3.transpose(1, 2))"),
    ("3-D @ 2-D", "b3 @ a.t()"), ("3-D @ 3-D", "b3 @ b3.transpose(1, 2)"),
    ("4-D @ 4-D", "b4 @ b4.transpose(-1, -2)"), ("4-D @ 2-D", "b4 @ a.t()"),
    ("mv", "lib.mv(a, v)"), ("2-D @ 1-D", "a @ v"), ("dot", "v @ v"),
    ("sum", "a.sum()"), ("exp", "a.exp()"), ("mul", "a * 2"),
    # views and copies named by the entry point (ember: permute, view, where, cat underneath)
    ("t", "a.t()"), ("transpose", "a.transpose(0, 1)"), ("swapaxes", "a.swapaxes(0, 1)"),
    ("mT", "b3.mT"), ("T", "a.T"), ("permute", "b3.permute(2, 0, 1)"),
    ("unsqueeze", "a.unsqueeze(0)"), ("squeeze()", "a[None].squeeze()"),
    ("squeeze(dim)", "a[None].squeeze(0)"), ("squeeze(dims)", "b4[:1, :1].squeeze((0, 1))"),
    ("stack", "lib.stack([a, a], 1)"), ("masked_fill", "a.masked_fill(a > 0, 0.0)"),
    ("contiguous", "a.t().contiguous()"), ("to(float64)", "a.to(lib.float64)"),
    ("double", "a.double()"), ("index by list", "a[[0, 2]]"), ("index by mask", "a[a > 0]"),
]


def _leaves(lib):
    g = np.random.default_rng(0)
    return {name: lib.tensor(g.standard_normal(shape).astype(np.float32), requires_grad=True)
            for name, shape in [("a", (3, 4)), ("v", (4,)), ("b3", (2, 3, 4)),
                                ("b4", (2, 2, 3, 4))]}


def _node(lib, code):
    return eval(code, {"lib": lib, **_leaves(lib)}).grad_fn


@pytest.mark.parity
@pytest.mark.parametrize("label,code", CASES)
def test_node_names_match_torch(label, code):
    torch = pytest.importorskip("torch")
    mine, theirs = _node(ember, code), _node(torch, code)
    assert mine.name() == theirs.name(), label
    assert type(mine).__name__ == type(theirs).__name__, label
    assert repr(mine).startswith(f"<{theirs.name()} object at "), label


def test_printed_grad_fn_of_a_full_max():
    a = ember.tensor([1.0, -4.0, 2.0], requires_grad=True)
    b = ember.tensor([0.5, 0.0, 2.0])
    assert "grad_fn=<MaxBackward1>" in repr((a - b).abs().max())
    assert "grad_fn=<MmBackward0>" in repr(a.reshape(1, 3) @ b.reshape(3, 1))


def test_renamed_nodes_compute_the_same_gradients():
    # only the name differs from amax/amin and the generic matmul: ties share the gradient
    a = ember.tensor([[3.0, 1.0, 3.0], [0.0, 3.0, -1.0]], requires_grad=True)
    a.max().backward()
    np.testing.assert_allclose(a.grad.numpy(), [[1 / 3, 0, 1 / 3], [0, 1 / 3, 0]])
    a.grad = None
    a.min().backward()
    np.testing.assert_allclose(a.grad.numpy(), [[0, 0, 0], [0, 0, 1]])
    x = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)
    w = ember.randn(4, 2, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda x, w: (x @ w).max(), (x, w))
    b = ember.randn(2, 3, 4, dtype=ember.float64, requires_grad=True)
    c = ember.randn(2, 4, 5, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda b, c: ember.bmm(b, c), (b, c))
    assert ember.autograd.gradcheck(lambda x, v: ember.mv(x, v), (x, w[:, 0].detach()))


def test_double_backward_through_a_renamed_node():
    x = ember.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=ember.float64, requires_grad=True)
    y = (x @ x).sum()
    assert y.grad_fn.next_functions[0][0].name() == "MmBackward0"
    (g,) = ember.autograd.grad(y, x, create_graph=True)
    (h,) = ember.autograd.grad(g.sum(), x)
    # d/dx of sum(x @ x) is 1 x^T + x^T 1; its sum's gradient is 2 * (column + row counts)
    np.testing.assert_allclose(h.numpy(), np.full((2, 2), 4.0))


def test_saved_values_of_renamed_nodes_use_torch_schema_names():
    a = ember.randn(3, 4, requires_grad=True)
    b = ember.randn(4, 2, requires_grad=True)
    node = (a @ b).grad_fn
    assert node._saved_self is a and node._saved_mat2 is b
    m = a.max()
    assert m.grad_fn.name() == "MaxBackward1"
    assert math.isclose(float(m), float(a.detach().numpy().max()))


def test_renamed_views_keep_their_gradients():
    a = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)
    for fn in (lambda x: x.t(), lambda x: x.transpose(0, 1), lambda x: x.unsqueeze(1),
               lambda x: x[None].squeeze(0), lambda x: ember.stack([x, x * 2], 1),
               lambda x: x.masked_fill(x > 0, 0.5), lambda x: x.t().contiguous(),
               lambda x: x[[2, 0]]):
        assert ember.autograd.gradcheck(fn, (a,))


def test_no_node_without_grad():
    a = ember.randn(2, 2)
    assert (a @ a).grad_fn is None and a.max().grad_fn is None
    with ember.no_grad():
        w = ember.randn(2, 2, requires_grad=True)
        assert (w @ w).grad_fn is None and ember.bmm(w[None], w[None]).grad_fn is None
