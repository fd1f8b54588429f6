"""Property tests: broadcasting binary ops vs NumPy, view round trips (values, shared memory,
writes through views, version counters) and indexing (getitem / setitem) vs NumPy."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ember

FAST = settings(max_examples=50, deadline=None)

# ---------------------------------------------------------------------------------------------
# broadcasting

BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum,
    "minimum": np.minimum, "eq": np.equal, "lt": np.less, "ge": np.greater_equal,
    "atan2": np.arctan2, "hypot": np.hypot,
}


@st.composite
def broadcast_pair(draw, dtype=np.float64):
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=3))
    elems = st.floats(-10, 10, allow_nan=False, width=64) if dtype == np.float64 else \
        st.integers(-20, 20)
    a = draw(hnp.arrays(dtype, shapes.input_shapes[0], elements=elems))
    b = draw(hnp.arrays(dtype, shapes.input_shapes[1], elements=elems))
    return a, b, shapes.result_shape


@FAST
@given(pair=broadcast_pair(), name=st.sampled_from(sorted(BINARY)))
def test_binary_broadcasting_matches_numpy(pair, name):
    a, b, shape = pair
    got = getattr(ember, name)(ember.tensor(a), ember.tensor(b))
    assert tuple(got.shape) == shape
    np.testing.assert_allclose(got.numpy(), BINARY[name](a, b), rtol=1e-12, atol=1e-12)


@FAST
@given(pair=broadcast_pair(np.int64), name=st.sampled_from(["add", "sub", "mul", "maximum",
                                                            "eq", "lt"]))
def test_integer_broadcasting_matches_numpy(pair, name):
    a, b, _ = pair
    got = getattr(ember, name)(ember.tensor(a), ember.tensor(b))
    np.testing.assert_array_equal(got.numpy(), BINARY[name](a, b))
    assert got.dtype == (ember.bool if name in ("eq", "lt") else ember.int64)


@FAST
@given(pair=broadcast_pair())
def test_broadcast_gradient_sums_over_expanded_dims(pair):
    a, b, _ = pair
    x, y = ember.tensor(a, requires_grad=True), ember.tensor(b, requires_grad=True)
    (x * y).sum().backward()
    full_b = np.broadcast_to(b, np.broadcast_shapes(a.shape, b.shape))
    # d sum(x * y) / dx = y summed over the dims x was broadcast along
    lead = full_b.ndim - a.ndim
    gx = full_b.sum(axis=tuple(range(lead))) if lead else full_b
    gx = gx.sum(axis=tuple(i for i, s in enumerate(a.shape) if s == 1), keepdims=True)
    np.testing.assert_allclose(x.grad.numpy(), gx.reshape(a.shape), rtol=1e-12, atol=1e-12)
    assert tuple(y.grad.shape) == b.shape


@FAST
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=3,
                                                max_side=3))
def test_non_broadcastable_shapes_raise_runtime_error(shapes):
    a_shape = shapes.input_shapes[0]
    bad = tuple(s + 2 if i == len(a_shape) - 1 else s for i, s in enumerate(a_shape))
    if a_shape[-1] in (1,):
        return  # size 1 broadcasts against anything
    with pytest.raises(RuntimeError, match="add.*must match"):
        ember.add(ember.zeros(a_shape), ember.zeros(bad))


# ---------------------------------------------------------------------------------------------
# views


shapes = hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=4)


def _base(shape):
    return ember.arange(int(np.prod(shape)), dtype=ember.float64).reshape(shape)


def _assert_view_writes_through(base, view):
    """A write into the view is visible in the base and bumps the shared version counter."""
    before = base._version
    expected = base.numpy().copy()
    view.add_(100.0)
    assert base._version > before and view._version == base._version
    changed = base.numpy() != expected
    assert changed.sum() == view.numel()  # exactly the viewed elements moved
    assert (base.numpy()[changed] - expected[changed] == 100.0).all()


@FAST
@given(shape=shapes, data=st.data())
def test_permute_transpose_are_views(shape, data):
    base = _base(shape)
    perm = data.draw(st.permutations(range(len(shape))))
    v = base.permute(*perm)
    np.testing.assert_array_equal(v.numpy(), np.transpose(base.numpy(), perm))
    _assert_view_writes_through(base, v)
    d0, d1 = data.draw(st.integers(-len(shape), len(shape) - 1)), data.draw(
        st.integers(-len(shape), len(shape) - 1))
    t = base.transpose(d0, d1)
    np.testing.assert_array_equal(t.numpy(), np.swapaxes(base.numpy(), d0, d1))
    _assert_view_writes_through(base, t)
    back = t.transpose(d0, d1)
    np.testing.assert_array_equal(back.numpy(), base.numpy())


@FAST
@given(shape=shapes, data=st.data())
def test_reshape_flatten_unflatten_round_trip(shape, data):
    base = _base(shape)
    n = base.numel()
    flat = base.reshape(-1)
    np.testing.assert_array_equal(flat.numpy(), base.numpy().reshape(-1))
    _assert_view_writes_through(base, flat)  # contiguous input: reshape is a view
    start = data.draw(st.integers(0, len(shape) - 1))
    end = data.draw(st.integers(start, len(shape) - 1))
    f = base.flatten(start, end)
    expected = base.numpy().reshape(shape[:start] + (-1,) + shape[end + 1:])
    np.testing.assert_array_equal(f.numpy(), expected)
    u = f.unflatten(start, shape[start:end + 1])
    np.testing.assert_array_equal(u.numpy(), base.numpy())
    _assert_view_writes_through(base, u)
    assert flat.reshape(shape).shape == base.shape and n == flat.numel()


@FAST
@given(shape=shapes, data=st.data())
def test_reshape_of_noncontiguous_copies(shape, data):
    base = _base(shape)
    if len(shape) < 2 or shape[0] == 1 or shape[-1] == 1:
        return
    t = base.transpose(0, -1)
    r = t.reshape(-1)
    np.testing.assert_array_equal(r.numpy(), t.numpy().reshape(-1))
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        t.view(-1)


@FAST
@given(shape=shapes, data=st.data())
def test_narrow_is_a_view(shape, data):
    base = _base(shape)
    dim = data.draw(st.integers(0, len(shape) - 1))
    start = data.draw(st.integers(0, shape[dim] - 1))
    length = data.draw(st.integers(0, shape[dim] - start))
    v = base.narrow(dim, start, length)
    np.testing.assert_array_equal(v.numpy(), np.take(base.numpy(), range(start, start + length),
                                                     axis=dim))
    _assert_view_writes_through(base, v)


@FAST
@given(shape=shapes, data=st.data())
def test_expand_values_and_read_only(shape, data):
    small = tuple(data.draw(st.sampled_from([1, s])) for s in shape)
    lead = tuple(data.draw(st.lists(st.integers(1, 3), max_size=2)))
    src = _base(small)
    e = src.expand(*(lead + shape))
    np.testing.assert_array_equal(e.numpy(), np.broadcast_to(src.numpy(), lead + shape))
    assert e.data_ptr() == src.data_ptr()  # no copy
    if e.numel() > src.numel():  # elements share memory: writing must be refused
        with pytest.raises(RuntimeError, match="read-only|expanded"):
            e.add_(1.0)


@FAST
@given(shape=shapes, data=st.data())
def test_squeeze_unsqueeze_round_trip(shape, data):
    base = _base(shape)
    d = data.draw(st.integers(-len(shape) - 1, len(shape)))
    u = base.unsqueeze(d)
    np.testing.assert_array_equal(u.numpy(), np.expand_dims(base.numpy(), d))
    np.testing.assert_array_equal(u.squeeze(d).numpy(), base.numpy())
    _assert_view_writes_through(base, u)


# ---------------------------------------------------------------------------------------------
# indexing


@st.composite
def basic_index(draw, shape):
    """ints, positive-step slices, None and at most one Ellipsis, for a tensor of shape."""
    parts = []
    dims = list(shape)
    n_used = draw(st.integers(0, len(dims)))
    for size in dims[:n_used]:
        kind = draw(st.sampled_from(["int", "slice", "slice", "none"]))
        if kind == "none":  # a new axis, then a slice for this dim
            parts.append(None)
        if kind == "int":
            parts.append(draw(st.integers(-size, size - 1)))
        else:
            start = draw(st.one_of(st.none(), st.integers(-size - 1, size + 1)))
            stop = draw(st.one_of(st.none(), st.integers(-size - 1, size + 1)))
            step = draw(st.one_of(st.none(), st.integers(1, 3)))
            parts.append(slice(start, stop, step))
    if draw(st.booleans()):
        # the parts index the leading dims; "..." may go anywhere only when it stands for none
        at = draw(st.integers(0, len(parts))) if n_used == len(dims) else len(parts)
        parts.insert(at, Ellipsis)
    return tuple(parts)


@FAST
@given(shape=shapes, data=st.data())
def test_basic_getitem_matches_numpy_and_is_a_view(shape, data):
    base = _base(shape)
    idx = data.draw(basic_index(shape))
    v = base[idx]
    expected = base.numpy()[idx]
    np.testing.assert_array_equal(v.numpy(), expected)
    if v.numel():
        _assert_view_writes_through(base, v)


@FAST
@given(shape=shapes, data=st.data())
def test_basic_setitem_matches_numpy(shape, data):
    base = _base(shape)
    idx = data.draw(basic_index(shape))
    ref = base.numpy().copy()
    target_shape = ref[idx].shape
    # a value that broadcasts to the target: some dims set to 1, some leading dims dropped
    vshape = tuple(data.draw(st.sampled_from([1, n])) for n in target_shape)
    vshape = vshape[data.draw(st.integers(0, len(vshape))):]
    value = data.draw(st.one_of(st.floats(-5, 5), hnp.arrays(np.float64, vshape,
                                                             elements=st.floats(-5, 5))))
    before = base._version
    base[idx] = ember.tensor(value) if isinstance(value, np.ndarray) else value
    ref[idx] = value
    np.testing.assert_array_equal(base.numpy(), ref)
    assert base._version > before


@FAST
@given(shape=shapes, data=st.data())
def test_integer_array_indexing_matches_numpy(shape, data):
    base = _base(shape)
    idx = data.draw(hnp.integer_array_indices(shape, result_shape=hnp.array_shapes(
        min_dims=0, max_dims=2, max_side=3)))
    key = tuple(ember.tensor(i.astype(np.int64)) for i in idx)
    np.testing.assert_array_equal(base[key].numpy(), base.numpy()[idx])
    # advanced indexing copies: writing to the result leaves the base alone; 0-d integer
    # tensors index like Python ints (torch returns a view then, and so does ember)
    before = base.numpy().copy()
    base[key].add_(1.0)
    if any(i.ndim > 0 for i in idx):
        np.testing.assert_array_equal(base.numpy(), before)
    else:
        before[idx] += 1.0
        np.testing.assert_array_equal(base.numpy(), before)
    # setitem with the same index
    ref = base.numpy().copy()
    ref[idx] = -1.0
    base[key] = -1.0
    np.testing.assert_array_equal(base.numpy(), ref)


@FAST
@given(shape=shapes, data=st.data())
def test_bool_mask_indexing_matches_numpy(shape, data):
    base = _base(shape)
    k = data.draw(st.integers(1, len(shape)))
    mask = data.draw(hnp.arrays(np.bool_, shape[:k]))
    got = base[ember.tensor(mask)]
    np.testing.assert_array_equal(got.numpy(), base.numpy()[mask])
    ref = base.numpy().copy()
    ref[mask] = 7.0
    base[ember.tensor(mask)] = 7.0
    np.testing.assert_array_equal(base.numpy(), ref)


@FAST
@given(shape=shapes, data=st.data())
def test_mixed_slice_and_array_index_matches_numpy(shape, data):
    base = _base(shape)
    i = data.draw(hnp.arrays(np.int64, st.integers(0, 3),
                             elements=st.integers(-shape[-1], shape[-1] - 1)))
    idx = (Ellipsis, slice(None, None, 2), i) if len(shape) >= 2 else (i,)
    got = base[tuple(ember.tensor(x) if isinstance(x, np.ndarray) else x for x in idx)]
    np.testing.assert_array_equal(got.numpy(), base.numpy()[idx])


@FAST
@given(shape=shapes, data=st.data())
def test_index_out_of_range_raises_index_error(shape, data):
    base = _base(shape)
    dim = data.draw(st.integers(0, len(shape) - 1))
    bad = data.draw(st.sampled_from([shape[dim], -shape[dim] - 1]))
    idx = (slice(None),) * dim + (bad,)
    with pytest.raises(IndexError, match="index"):
        base[idx]
