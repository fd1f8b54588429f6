"""Shape and view ops: which results are views (shared storage and version counter), error
types and messages, cat/stack rules, and regression tests for fixed bugs."""
from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck


def _base():
    return ember.arange(6.0).reshape(2, 3).clone()  # a root tensor, not a view


@pytest.mark.parametrize("make", [
    lambda x: x.view(3, 2), lambda x: x.reshape(6), lambda x: x.t(), lambda x: x.transpose(0, 1),
    lambda x: x.permute(1, 0), lambda x: x.unsqueeze(0), lambda x: x[:, 1:],
    lambda x: x.narrow(1, 1, 2), lambda x: x.select(0, 1), lambda x: x.flatten(),
    lambda x: x.unflatten(1, (3, 1)), lambda x: x.split(1, 0)[1], lambda x: x.chunk(3, 1)[2],
    lambda x: x.unbind(1)[0], lambda x: x.movedim(0, 1), lambda x: x.squeeze(),
    lambda x: x.as_strided((2, 2), (1, 2)),
])
def test_views_share_storage_and_version(make):
    x = _base()
    v = make(x)
    assert v._base is x
    v0 = x._version
    v.mul_(10.0)
    assert x._version > v0 and v._version == x._version
    assert x.numpy().sum() > 15.0  # the write reached the base


@pytest.mark.parametrize("make", [lambda x: x.clone(), lambda x: x.t().reshape(6),
                                  lambda x: x.t().contiguous(), lambda x: x.flatten().clone()])
def test_copies_do_not_share(make):
    x = _base()
    c = make(x)
    c.add_(100.0)
    np.testing.assert_array_equal(x.numpy(), np.arange(6.0).reshape(2, 3))


def test_expand_is_a_read_only_view():
    x = ember.tensor([[1.0], [2.0]])
    e = x.expand(2, 3)
    assert e.data_ptr() == x.data_ptr() and e.stride() == (1, 0)
    with pytest.raises(RuntimeError, match="read-only|expanded"):
        e.add_(1.0)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_expand_of_0d_matches_torch(dtype):
    torch = pytest.importorskip("torch")
    src = np.arange(5, dtype=dtype)
    # a 0-d view at an offset into its storage: the zero-stride result must read that element
    x, ref = ember.from_numpy(src.copy())[3], torch.from_numpy(src.copy())[3]
    e, r = x.expand(2, 3), ref.expand(2, 3)
    np.testing.assert_array_equal(e.numpy(), r.numpy())
    assert e.stride() == r.stride() == (0, 0) and e.data_ptr() == x.data_ptr()
    with pytest.raises(RuntimeError, match="read-only|expanded"):
        e.add_(1.0)
    x.fill_(7.0)  # a view: it sees later writes to the element
    assert e.numpy().tolist() == [[7.0] * 3] * 2


def test_sum_backward_expands_the_0d_gradient_as_torch():
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(0).standard_normal((3, 4))
    x, ref = ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    for _ in range(2):  # the first gradient is copied out of the expanded view, then added
        (x.sum() * 3).backward()
        (ref.sum() * 3).backward()
        np.testing.assert_array_equal(x.grad.numpy(), ref.grad.numpy())
        assert x.grad.is_contiguous() and x.grad.stride() == ref.grad.stride()
    assert gradcheck(lambda t: t.sum(), (ember.tensor(a, requires_grad=True),))
    # double backward through the expanded gradient
    g, = ember.autograd.grad(x.sum() ** 2, x, create_graph=True)
    gref, = torch.autograd.grad(ref.sum() ** 2, ref, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), gref.detach().numpy())
    (gh,) = ember.autograd.grad(g.sum(), x)
    (ghref,) = torch.autograd.grad(gref.sum(), ref)
    np.testing.assert_allclose(gh.numpy(), ghref.numpy())


def test_contiguous_returns_self_when_contiguous():
    x = _base()
    assert x.contiguous() is x
    t = x.t()
    assert not t.is_contiguous() and t.contiguous().is_contiguous()


# ---------------------------------------------------------------------------------------------
# errors


@pytest.mark.parametrize("call,match", [
    (lambda x: x.transpose(0, 2), "transpose"), (lambda x: x.squeeze(3), "squeeze"),
    (lambda x: x.unsqueeze(4), "unsqueeze"), (lambda x: x.permute(0, 5), "permute"),
    (lambda x: x.narrow(2, 0, 1), "narrow"), (lambda x: x.select(-3, 0), "select"),
    (lambda x: x.flatten(0, 3), "flatten"), (lambda x: x.movedim(0, 2), "movedim"),
    (lambda x: x.unbind(2), "unbind"), (lambda x: x.split(1, 2), "split"),
    (lambda x: ember.cat([x, x], 2), "cat"), (lambda x: ember.stack([x, x], 4), "stack"),
])
def test_out_of_range_dims_raise_index_error(call, match):
    with pytest.raises(IndexError, match=f"{match}.*Dimension out of range"):
        call(_base())


@pytest.mark.parametrize("call,err,match", [
    (lambda x: x.view(4), RuntimeError, r"view: shape '\[4\]' is invalid for input of size 6"),
    (lambda x: x.t().view(6), RuntimeError, r"view size is not compatible.*\[3, 2\]"),
    (lambda x: x.reshape(-1, -1), RuntimeError, "only one dimension can be inferred"),
    (lambda x: x.expand(3, 3), RuntimeError, r"expand: The expanded size.*\[3, 3\].*\[2, 3\]"),
    (lambda x: x.expand(3), RuntimeError, "expand: the number of sizes provided"),
    (lambda x: x.permute(0, 0), RuntimeError, "permute.*duplicate dims"),
    (lambda x: x.permute(0), RuntimeError, "permute.*does not match the length"),
    (lambda x: x.narrow(1, 2, 2), RuntimeError, r"narrow.*start \(2\) \+ length \(2\) exceeds"),
    (lambda x: x.narrow(1, 5, 0), IndexError, "narrow.*start out of range"),
    (lambda x: x.select(0, 2), IndexError, r"select.*index 2 out of range.*\[2, 3\]"),
    (lambda x: x.split([1, 1], 1), RuntimeError, "split_with_sizes.*sum exactly to 3"),
    (lambda x: x.chunk(0), RuntimeError, "chunk expects `chunks` to be greater than 0"),
    (lambda x: x.unflatten(1, (2, 2)), RuntimeError, "unflatten.*invalid for input of size 3"),
    (lambda x: x.flatten(1, 0), RuntimeError, "flatten.*start_dim cannot come after end_dim"),
    (lambda x: x.as_strided((4, 4), (1, 1)), RuntimeError, "as_strided.*too small"),
    (lambda x: ember.ones(2, 2, 2).t(), RuntimeError, "t\\(\\) expects a tensor with <= 2"),
])
def test_bad_shapes_raise_with_clear_messages(call, err, match):
    with pytest.raises(err, match=match):
        call(_base())


@pytest.mark.parametrize("tensors,dim,match", [
    ([ember.ones(2, 3), ember.ones(2, 2)], 0,
     r"cat.*Sizes of tensors must match except in dimension 0.*\[2, 3\].*\[2, 2\]"),
    ([ember.ones(2, 3), ember.ones(3)], 0, r"cat.*same number of dimensions.*\[2, 3\].*\[3\]"),
    ([ember.tensor(1.0)], 0, "cat.*zero-dimensional tensor"),
])
def test_cat_errors(tensors, dim, match):
    with pytest.raises(RuntimeError, match=match):
        ember.cat(tensors, dim)
    with pytest.raises(ValueError, match="cat.*non-empty"):  # (torch's type for this one)
        ember.cat([], dim)


def test_cat_rejects_a_bare_tensor():
    with pytest.raises(TypeError, match="cat.*tuple or list"):
        ember.cat(ember.ones(2))


def test_stack_errors():
    with pytest.raises(RuntimeError, match=r"stack expects each tensor to be equal size.*\[2\].*"
                                           r"\[3\]"):
        ember.stack([ember.ones(2), ember.ones(3)])
    with pytest.raises(RuntimeError, match="stack expects a non-empty"):
        ember.stack([])


@pytest.mark.parity
@pytest.mark.parametrize("name,call", [
    ("view", lambda L, x: x.view(4)), ("expand", lambda L, x: x.expand(3, 3)),
    ("permute", lambda L, x: x.permute(0, 0)), ("narrow", lambda L, x: x.narrow(1, 2, 2)),
    ("narrow start", lambda L, x: x.narrow(1, 5, 0)), ("select", lambda L, x: x.select(0, 2)),
    ("transpose", lambda L, x: x.transpose(0, 2)), ("cat", lambda L, x: L.cat([x, L.ones(3)])),
    ("stack", lambda L, x: L.stack([x, L.ones(3)])), ("split", lambda L, x: x.split([1, 1], 1)),
    ("unsqueeze", lambda L, x: x.unsqueeze(3)), ("t_view", lambda L, x: x.t().view(6)),
])
def test_error_types_match_torch(name, call):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    with pytest.raises(Exception) as theirs:
        call(torch, torch.ones(2, 3))
    with pytest.raises(type(theirs.value)):
        call(ember, ember.ones(2, 3))


# ---------------------------------------------------------------------------------------------
# semantics


def test_cat_promotes_and_skips_legacy_empty():
    out = ember.cat([ember.tensor([1], dtype=ember.int32), ember.tensor([2.5])])
    assert out.dtype == ember.float32 and out.tolist() == [1.0, 2.5]
    assert ember.cat([ember.ones(2, 3), ember.ones(0)]).shape == (2, 3)


def test_cat_out_argument():
    out = ember.empty(0)
    res = ember.cat([ember.ones(2), ember.zeros(1)], out=out)
    assert res is out and out.tolist() == [1.0, 1.0, 0.0]


def test_split_chunk_tensor_split_sizes():
    x = ember.arange(5)
    assert [t.numel() for t in x.split(2)] == [2, 2, 1]
    assert [t.numel() for t in x.chunk(3)] == [2, 2, 1]
    assert [t.numel() for t in x.chunk(6)] == [1, 1, 1, 1, 1]
    assert [t.numel() for t in ember.tensor_split(x, 3)] == [2, 2, 1]
    assert [t.tolist() for t in ember.tensor_split(x, [1, 4])] == [[0], [1, 2, 3], [4]]


def test_stack_variants_match_numpy():
    a, b = ember.tensor([1, 2]), ember.tensor([3, 4])
    for name in ("hstack", "vstack", "dstack", "column_stack"):
        np.testing.assert_array_equal(getattr(ember, name)([a, b]).numpy(),
                                      getattr(np, name)([a.numpy(), b.numpy()]))


def test_view_as_reshape_as_expand_as():
    x, y = ember.arange(6.0), ember.ones(2, 3)
    assert x.view_as(y).shape == (2, 3) and x.reshape_as(y).shape == (2, 3)
    assert ember.ones(1, 3).expand_as(y).shape == (2, 3)


def test_cat_gradient_splits_back():
    a = ember.ones(2, 3, dtype=ember.float64, requires_grad=True)
    b = ember.ones(1, 3, dtype=ember.float64, requires_grad=True)
    assert gradcheck(lambda p, q: ember.cat([p, q * 2], 0), (a, b))


def test_as_strided_gradient_with_overlap():
    x = ember.arange(6.0, dtype=ember.float64).requires_grad_()
    assert gradcheck(lambda t: t.as_strided((2, 2), (1, 2)), (x,))
    assert gradcheck(lambda t: t.as_strided((2, 2), (1, 2), 1), (x,))


def test_narrow_accepts_negative_start():
    assert _base().narrow(1, -2, 2).tolist() == [[1.0, 2.0], [4.0, 5.0]]


def test_unfold_of_a_transposed_tensor_is_a_view_with_its_gradient():
    x = ember.arange(12.0, dtype=ember.float64).reshape(4, 3).t()  # not contiguous
    w = x.unfold(1, 2, 1)
    assert w.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    assert w.stride() == (1, 3, 3) and w[1, 2].tolist() == [7.0, 10.0]
    leaf = ember.randn(5, 3, dtype=ember.float64, requires_grad=True)
    assert gradcheck(lambda a: a.t().unfold(1, 3, 2), (leaf,))


def test_as_strided_reports_its_storage_offset():
    x = ember.arange(24.0)
    y = x.as_strided((3, 2), (1, 3), 2)
    assert y.storage_offset() == 2 and y.untyped_storage().data_ptr() == x.data_ptr()


@pytest.mark.parametrize("make, strides", [
    (lambda: ember.zeros(3, 4).t(), (1, 4)),                             # dense: kept
    (lambda: ember.zeros(3, 1, 4).expand(3, 5, 4), (20, 4, 1)),          # overlapping: row-major
    (lambda: ember.zeros(4, 6).t()[:, ::2], (1, 6)),                     # gaps: the dims' order
])
def test_clone_layout_follows_torch_preserve_format(make, strides):
    # NOTE [Layout of a preserve_format copy]
    assert make().clone().stride() == strides
    assert make().clone(memory_format=ember.contiguous_format).is_contiguous()


def test_layout_of_copies_roll_tril_and_flip():
    x = ember.zeros(3, 4).t()
    assert x.roll(1, 0).is_contiguous() and x.tril().is_contiguous()
    assert x.flip(0).stride() == (1, 4)   # flip keeps a permuted input's layout


def test_channels_last_formats_check_the_rank():
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last"):
        ember.zeros(2, 3, 4).contiguous(memory_format=ember.channels_last)
    with pytest.raises(RuntimeError, match="required rank 5 tensor to use channels_last_3d"):
        ember.zeros(2, 3, 4, 5).clone(memory_format=ember.channels_last_3d)


def test_cat_promotes_with_legacy_empty_and_checks_out():
    assert ember.cat([ember.tensor([True]), ember.zeros(0)]).dtype is ember.float32
    x = ember.zeros(2, 3)
    with pytest.raises(TypeError, match="cat\\(\\): input types can't be cast"):
        ember.cat([x, x], out=ember.zeros(0, dtype=ember.int32))
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        ember.cat([x, x], out=x)
    with pytest.raises(TypeError, match="expected Tensor as element 1"):
        ember.cat([x, 1])
    with pytest.raises(RuntimeError, match="hstack expects a non-empty TensorList"):
        ember.hstack([])


def test_zero_dim_and_empty_split_family():
    with pytest.raises(RuntimeError, match="chunk expects at least a 1-dimensional"):
        ember.tensor(1.0).chunk(1)
    assert [tuple(c.shape) for c in ember.zeros(0, 4).chunk(3)] == [(0, 4)] * 3
    with pytest.raises(RuntimeError, match="number of sections must be larger than 0"):
        ember.zeros(4).tensor_split(0)
    out = ember.zeros(1, 3).repeat_interleave(2, dim=0)  # a copy, not a stride-0 view
    assert out.is_contiguous() and out.untyped_storage().data_ptr() != 0


def test_as_strided_of_a_column_major_clone_and_its_gradient():
    # the clone of x.t() keeps x.t()'s layout: as_strided reads its storage in memory order,
    # and the gradient goes back to the input element that each storage element holds
    x = ember.arange(12.0, dtype=ember.float64).reshape(3, 4).requires_grad_()
    y = x.t().clone().as_strided((2, 3), (1, 4), 1)
    assert y.tolist() == [[1.0, 5.0, 9.0], [2.0, 6.0, 10.0]]
    (y * ember.arange(6.0, dtype=ember.float64).reshape(2, 3)).sum().backward()
    assert x.grad.tolist() == [[0, 0, 3, 0], [0, 1, 4, 0], [0, 2, 5, 0]]
    leaf = ember.randn(4, 3, dtype=ember.float64, requires_grad=True)
    assert gradcheck(lambda a: a.t().clone().as_strided((2, 2), (1, 3), 2), (leaf,))


def test_argument_kinds_of_narrow_select_split():
    x = ember.arange(6.0).reshape(2, 3)
    with pytest.raises(TypeError, match="narrow\\(\\): argument 'start' must be int or Tensor"):
        x.narrow(1, 1.0, 1)
    with pytest.raises(TypeError, match="select\\(\\): argument 'index'"):
        x.select(1, 1.0)
    assert [tuple(p.shape) for p in x.split(ember.tensor(2), 1)] == [(2, 2), (2, 1)]
    assert x.narrow(1, ember.tensor(1), 2).tolist() == [[1.0, 2.0], [4.0, 5.0]]
