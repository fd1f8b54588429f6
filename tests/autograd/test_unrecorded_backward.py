"""Backward formulas taken on arrays when nothing records or watches them (NOTE [Unrecorded matrix
backward] in ember/ops/products.py, NOTE [Unrecorded product backward] in ops/elementwise.py,
NOTE [A loss's broadcast gradient] in ops/reduce.py):
the same bits as the formulas taken as ember ops (create_graph=True records them), the
gradients torch gives, and the ops still seen by the profiler."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck


def _grads(op, arrays, create_graph):
    xs = [ember.tensor(a, requires_grad=True) for a in arrays]
    out = op(*xs)
    g = ember.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape).astype(arrays[0].dtype))
    return [t.detach().numpy()
            for t in ember.autograd.grad(out, xs, g, create_graph=create_graph)]


LAYOUTS = {  # (a, b) makers: plain, transposed operands, an outer product (K = 1), a row
    "plain": lambda r, dt: (r.standard_normal((5, 3)), r.standard_normal((3, 4))),
    "transposed": lambda r, dt: (r.standard_normal((3, 5)).T, r.standard_normal((4, 3)).T),
    "outer": lambda r, dt: (r.standard_normal((5, 1)), r.standard_normal((1, 4))),
    "one row": lambda r, dt: (r.standard_normal((1, 6)), r.standard_normal((6, 4))),
    "strided": lambda r, dt: (r.standard_normal((10, 3))[::2], r.standard_normal((3, 8))[:, ::2]),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_matrix_backward_on_arrays_gives_the_ops_bits(rng, layout, dtype):
    a, b = (x.astype(dtype) for x in LAYOUTS[layout](rng, dtype))
    if np.dtype(dtype).kind == "c":
        a, b = a + 0.5j * a[::-1] if a.shape[0] > 1 else a + 0.5j, b - 0.25j
    fast = _grads(lambda x, y: x @ y, (a, b), create_graph=False)
    ops = _grads(lambda x, y: x @ y, (a, b), create_graph=True)
    for f, o in zip(fast, ops, strict=True):
        assert f.dtype == o.dtype and f.shape == o.shape
        np.testing.assert_array_equal(f, o)


def test_matrix_backward_matches_torch_and_gradcheck(rng):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    a, b = rng.standard_normal((5, 3)), rng.standard_normal((3, 4))
    ours = [ember.tensor(x, requires_grad=True) for x in (a, b)]
    theirs = [torch.tensor(x, requires_grad=True) for x in (a, b)]
    (ours[0] @ ours[1]).square().sum().backward()
    (theirs[0] @ theirs[1]).square().sum().backward()
    for o, t in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-12)
    assert gradcheck(lambda x, y: x @ y, tuple(ember.tensor(x, requires_grad=True)
                                                for x in (a, b)))


@pytest.mark.parametrize("shapes", [((4, 3), (4, 3)), ((), ()), ((4, 3), (3,)), ((0, 3), (0, 3))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_product_backward_on_arrays_gives_the_ops_bits(rng, shapes, dtype):
    a, b = (np.asarray(rng.standard_normal(s)).astype(dtype) for s in shapes)
    fast = _grads(lambda x, y: x * y, (a, b), create_graph=False)
    ops = _grads(lambda x, y: x * y, (a, b), create_graph=True)
    for f, o, s in zip(fast, ops, shapes, strict=True):
        assert type(f) is np.ndarray and f.shape == s and f.dtype == dtype
        np.testing.assert_array_equal(f, o)
    out_shape = np.broadcast_shapes(*shapes)
    g = np.linspace(-1, 1, int(np.prod(out_shape))).reshape(out_shape).astype(dtype)
    assert shapes[0] == out_shape  # a takes the gradient's shape in every case here
    np.testing.assert_allclose(fast[0], g * b, rtol=1e-6)
    np.testing.assert_allclose(fast[1], (g * a).sum(axis=0) if shapes[1] != out_shape
                               else g * a, rtol=1e-6)


def test_backward_products_are_still_seen_by_the_profiler():
    a = ember.randn(3, 4, requires_grad=True)
    b = ember.randn(4, 2, requires_grad=True)
    c = ember.randn(3, 2, requires_grad=True)
    with ember.profiler.profile() as prof:
        ((a @ b) * c).sum().backward()
    counts = {e.key: e.count for e in prof.key_averages()}
    assert counts["matmul"] == 3  # the forward's and the backward's two
    assert counts["mul"] == 3
    assert counts["MmBackward0"] == counts["MulBackward0"] == 1
    assert counts["expand"] == 1  # the sum's backward


_REDUCTIONS = {"sum": lambda x: x.sum(), "mean": lambda x: x.mean()}


@pytest.mark.parametrize("shape", [(4, 3), (2, 0, 3), (5,)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.complex64])
@pytest.mark.parametrize("reduction", sorted(_REDUCTIONS))
def test_full_reduction_backward_on_arrays_gives_the_ops_bits(rng, reduction, shape, dtype):
    a = rng.standard_normal(shape).astype(dtype)
    if np.dtype(dtype).kind == "c":
        a = a + 0.5j
    fast = _grads(_REDUCTIONS[reduction], (a,), create_graph=False)[0]
    ops = _grads(_REDUCTIONS[reduction], (a,), create_graph=True)[0]
    assert fast.shape == shape and fast.dtype == ops.dtype == dtype
    np.testing.assert_array_equal(fast, ops)


@pytest.mark.parametrize("reduction", sorted(_REDUCTIONS))
def test_full_reduction_backward_matches_torch(rng, reduction):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    a = rng.standard_normal((3, 7)).astype(np.float32)
    ours, theirs = ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    (_REDUCTIONS[reduction](ours) * 3).backward()
    (_REDUCTIONS[reduction](theirs) * 3).backward()
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())
    ours.grad.add_(1)  # the accumulated gradient is its own writable memory, not a broadcast
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy() + 1)
    assert gradcheck(_REDUCTIONS[reduction], (ember.tensor(a.astype(np.float64),
                                                           requires_grad=True),))
