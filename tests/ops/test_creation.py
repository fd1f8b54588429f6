"""Creation ops (tensor, as_tensor, from_numpy, zeros/ones/full/empty, *_like, new_*, arange,
linspace, logspace, eye) and tensor repr, checked against NumPy and torch."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import ember
from ember.testing import assert_close

# ---------------------------------------------------------------------------------------------
# tensor / as_tensor / from_numpy


@pytest.mark.parametrize("data,dtype", [
    ([1, 2, 3], ember.int64), ([1.0, 2.0], ember.float32), ([True, False], ember.bool),
    ([1, 2.5], ember.float32), ([True, 1], ember.int64), ([[1, 2], [3, 4]], ember.int64),
    (3.5, ember.float32), (7, ember.int64), ([], ember.float32),
    (np.float64(2.0), ember.float64), (np.arange(3, dtype=np.int16), ember.int16),
])
def test_tensor_infers_dtype_like_torch(data, dtype):
    assert ember.tensor(data).dtype == dtype


def test_tensor_copies_its_data(rng):
    a = rng.standard_normal(3)
    t = ember.tensor(a)
    a[0] = 100.0
    assert t[0].item() != 100.0


def test_tensor_of_ragged_lists_raises():
    with pytest.raises((ValueError, TypeError), match="tensor"):
        ember.tensor([[1, 2], [3]])


def test_tensor_requires_grad_needs_floating_dtype():
    assert ember.tensor([1.0], requires_grad=True).requires_grad
    with pytest.raises(RuntimeError, match="floating point.*int64"):
        ember.tensor([1, 2], requires_grad=True)


def test_from_numpy_shares_memory_both_ways(rng):
    a = rng.standard_normal((2, 3))
    t = ember.from_numpy(a)
    a[0, 0] = 42.0
    assert t[0, 0].item() == 42.0
    v0 = t._version
    t.add_(1.0)
    assert a[0, 0] == 43.0 and t._version > v0
    t[1, 2] = -7.0
    assert a[1, 2] == -7.0


def test_from_numpy_keeps_strided_views(rng):
    a = rng.standard_normal((4, 6))
    t = ember.from_numpy(a[::2, 1::3])
    assert not t.is_contiguous()
    np.testing.assert_array_equal(t.numpy(), a[::2, 1::3])
    t.mul_(0.0)
    assert (a[::2, 1::3] == 0).all() and (a[1::2] != 0).all()


def test_from_numpy_read_only_array_stays_read_only():
    a = np.arange(3.0)
    a.flags.writeable = False
    t = ember.from_numpy(a)
    with pytest.raises(RuntimeError, match="add_.*read-only"):
        t.add_(1.0)
    with pytest.raises(RuntimeError, match="read-only"):
        t[0] = 5.0
    np.testing.assert_array_equal(a, [0.0, 1.0, 2.0])
    assert_close(t + 1, ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64))  # reads still work


@pytest.mark.parametrize("bad,err", [(np.array([1 + 2j], np.complex256), TypeError),
                                     (np.arange(3.0)[::-1], ValueError), ([1.0], TypeError)])
def test_from_numpy_rejects_what_torch_rejects(bad, err):
    with pytest.raises(err):
        ember.from_numpy(bad)


def test_as_tensor_shares_when_it_can(rng):
    a = rng.standard_normal(3)
    same = ember.as_tensor(a)
    assert same.data_ptr() == a.ctypes.data
    copied = ember.as_tensor(a, dtype=ember.float32)
    assert copied.dtype == ember.float32 and copied.data_ptr() != a.ctypes.data
    t = ember.ones(2)
    assert ember.as_tensor(t) is t
    assert ember.as_tensor([1, 2]).dtype == ember.int64


def test_numpy_shares_memory_with_tensor():
    t = ember.zeros(3)
    t.numpy()[1] = 5.0
    assert t[1].item() == 5.0
    with pytest.raises(RuntimeError, match="requires grad.*detach"):
        ember.zeros(2, requires_grad=True).numpy()


# ---------------------------------------------------------------------------------------------
# filled tensors


@pytest.mark.parametrize("fn,fill", [(ember.zeros, 0), (ember.ones, 1), (ember.empty, None)])
def test_filled_shapes_and_dtypes(fn, fill):
    for size in [(2, 3), ((2, 3),), ([2, 3],), (0,), ()]:
        t = fn(*size)
        shape = size[0] if size and isinstance(size[0], (tuple, list)) else size
        assert tuple(t.shape) == tuple(shape) and t.dtype == ember.float32
        if fill is not None:
            assert (t.numpy() == fill).all()
    assert fn(2, dtype=ember.int32).dtype == ember.int32
    assert fn(2, requires_grad=True).requires_grad


def test_negative_size_raises():
    with pytest.raises(RuntimeError, match="negative dimension -1"):
        ember.zeros(2, -1)


@pytest.mark.parametrize("value,dtype", [(3, ember.int64), (2.5, ember.float32),
                                         (True, ember.bool)])
def test_full_infers_dtype_from_value(value, dtype):
    t = ember.full((2, 2), value)
    assert t.dtype == dtype and (t.numpy() == value).all()
    assert ember.full((2,), 1, dtype=ember.float64).dtype == ember.float64


def test_like_and_new_functions_follow_the_source():
    x = ember.ones(2, 3, dtype=ember.int32)
    for fn, fill in ((ember.zeros_like, 0), (ember.ones_like, 1), (ember.empty_like, None)):
        t = fn(x)
        assert tuple(t.shape) == (2, 3) and t.dtype == ember.int32
        if fill is not None:
            assert (t.numpy() == fill).all()
    assert ember.full_like(x, 7).numpy().tolist() == [[7] * 3] * 2
    assert ember.ones_like(x, dtype=ember.float64).dtype == ember.float64
    assert x.new_zeros(4).dtype == ember.int32 and tuple(x.new_ones((1, 2)).shape) == (1, 2)
    assert x.new_empty(3).shape == (3,)
    assert x.new_full((2,), 1.5).tolist() == [1, 1]  # cast to the source's dtype, like torch
    assert x.new_tensor([1.5, 2.5]).dtype == ember.int32
    assert ember.zeros(1, dtype=ember.float64).new_ones(2).dtype == ember.float64


# ---------------------------------------------------------------------------------------------
# ranges


@pytest.mark.parametrize("args,kwargs", [
    ((5,), {}), ((1, 4), {}), ((0, 1, 0.25), {}), ((10, 0, -3), {}), ((1.0, 2.5, 0.5), {}),
    ((0, 5), {"dtype": ember.float64}), ((3,), {"dtype": ember.int32}), ((0,), {}),
])
def test_arange_matches_numpy(args, kwargs):
    t = ember.arange(*args, **kwargs)
    expected = np.arange(*args)
    np.testing.assert_allclose(t.numpy(), expected, rtol=1e-6)
    if "dtype" in kwargs:
        assert t.dtype == kwargs["dtype"]
    else:
        floaty = any(isinstance(a, float) for a in args)
        assert t.dtype == (ember.float32 if floaty else ember.int64)


def test_arange_bad_arguments():
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        ember.arange(0, 5, 0)
    with pytest.raises(RuntimeError, match="inconsistent with step sign"):
        ember.arange(5, 0, 1)


@pytest.mark.parametrize("start,end,steps", [(0, 1, 5), (-2, 3, 1), (1, 1, 3), (0, 10, 0)])
def test_linspace_and_logspace_match_numpy(start, end, steps):
    np.testing.assert_allclose(ember.linspace(start, end, steps).numpy(),
                               np.linspace(start, end, steps), rtol=1e-6)
    np.testing.assert_allclose(ember.logspace(start, end, steps).numpy(),
                               np.logspace(start, end, steps), rtol=1e-5)
    np.testing.assert_allclose(ember.logspace(start, end, steps, base=2.0).numpy(),
                               np.logspace(start, end, steps, base=2.0), rtol=1e-5)
    assert ember.linspace(start, end, steps).dtype == ember.float32
    assert ember.linspace(start, end, steps, dtype=ember.float64).dtype == ember.float64


def test_linspace_negative_steps_raises():
    with pytest.raises(RuntimeError, match="steps"):
        ember.linspace(0, 1, -1)


@pytest.mark.parametrize("n,m", [(3, None), (2, 4), (4, 2), (0, None), (1, 0)])
def test_eye_matches_numpy(n, m):
    np.testing.assert_array_equal(ember.eye(n, m).numpy(), np.eye(n, m))
    assert ember.eye(n, m, dtype=ember.int64).dtype == ember.int64


@pytest.mark.parity
@pytest.mark.parametrize("name,args,kwargs", [
    ("arange", (5,), {}), ("arange", (0, 1, 0.1), {}), ("arange", (-3, 7, 2), {}),
    ("arange", (0.5, 3), {"dtype": "float64"}), ("linspace", (0, 1, 7), {}),
    ("linspace", (0, 10, 5), {"dtype": "int64"}), ("linspace", (-1, 1, 7), {"dtype": "int64"}),
    ("logspace", (0, 3, 4), {}), ("logspace", (-2, 2, 5), {"base": 2.0}), ("eye", (3,), {}),
    ("eye", (2, 3), {"dtype": "int32"}), ("full", ((2,), 3), {}), ("full", ((2,), 0.5), {}),
    ("zeros", (2, 3), {"dtype": "int16"}), ("ones", (3,), {"dtype": "bool"}),
])
def test_creation_matches_torch(name, args, kwargs):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    ours = getattr(ember, name)(*args, **{k: getattr(ember, v) if k == "dtype" else v
                                           for k, v in kwargs.items()})
    theirs = getattr(torch, name)(*args, **{k: getattr(torch, v) if k == "dtype" else v
                                             for k, v in kwargs.items()})
    assert_close(ours, theirs)


@pytest.mark.parity
@pytest.mark.parametrize("name,args,out_shape,out_dtype", [
    ("arange", (3,), (3,), "float32"), ("zeros", (2,), (3,), "float32"),
    ("linspace", (0, 1, 3), (3,), "int64"), ("full", ((3,), 7), (3,), "float32"),
    ("eye", (2,), (2, 2), "float64"), ("ones", ((2, 2),), (4,), "int32"),
])
def test_factory_out_keeps_out_dtype_and_memory_like_torch(name, args, out_shape, out_dtype):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    ours = ember.zeros(out_shape, dtype=getattr(ember, out_dtype))
    theirs = torch.zeros(out_shape, dtype=getattr(torch, out_dtype))
    view = ours.view(-1)
    getattr(ember, name)(*args, out=ours)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns when it resizes a non-empty out
        getattr(torch, name)(*args, out=theirs)
    assert ours.dtype == getattr(ember, out_dtype)
    assert_close(ours, theirs)
    if ours.shape == out_shape:  # written in place: a view of out sees the values
        assert_close(view, theirs.reshape(-1))


# ---------------------------------------------------------------------------------------------
# repr

REPR_CASES = [
    ("[1, 2, 3]", {}, "tensor([1, 2, 3])"),
    ("[1., 2.]", {}, "tensor([1., 2.])"),
    ("[1.5, 2.25, -3.125]", {}, "tensor([ 1.5000,  2.2500, -3.1250])"),
    ("[0.1, 0.2]", {}, "tensor([0.1000, 0.2000])"),
    ("[1e-5, 1.0]", {}, "tensor([1.0000e-05, 1.0000e+00])"),
    ("[1e10, 1.0]", {}, "tensor([1.0000e+10, 1.0000e+00])"),
    ("[123456.0, 1.0]", {}, "tensor([1.2346e+05, 1.0000e+00])"),
    ("[100.0, 2.5]", {}, "tensor([100.0000,   2.5000])"),
    ("[True, False]", {}, "tensor([ True, False])"),
    ("[]", {}, "tensor([])"),
    ("3.5", {}, "tensor(3.5000)"),
    ("7", {}, "tensor(7)"),
    ("True", {}, "tensor(True)"),
    ("[[1., 2.], [3., 4.]]", {}, "tensor([[1., 2.],\n        [3., 4.]])"),
    ("[1., float('nan'), float('inf')]", {}, "tensor([1., nan, inf])"),
    ("[1., 2.]", {"requires_grad": True}, "tensor([1., 2.], requires_grad=True)"),
    ("[1., 2.]", {"dtype": "float64"}, "tensor([1., 2.], dtype=ember.float64)"),
    ("[1, 2]", {"dtype": "int32"}, "tensor([1, 2], dtype=ember.int32)"),
    ("[1., 2.5]", {"dtype": "float16"}, "tensor([1.0000, 2.5000], dtype=ember.float16)"),
    ("[-1.0, 0.0]", {}, "tensor([-1.,  0.])"),
    ("[[]]", {}, "tensor([], size=(1, 0))"),
    ("[[1, 2, 3], [40, 50, 60]]", {}, "tensor([[ 1,  2,  3],\n        [40, 50, 60]])"),
    ("list(range(2000))", {}, "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"),
    ("[x * 0.1 for x in range(1500)]", {},
     ("tensor([0.0000e+00, 1.0000e-01, 2.0000e-01,  ..., 1.4970e+02, 1.4980e+02,\n"
      "        1.4990e+02])")),
]


def _build(lib, src, kwargs):
    kw = {k: getattr(lib, v) if k == "dtype" else v for k, v in kwargs.items()}
    return lib.tensor(eval(src), **kw)  # the fixed literals above


@pytest.mark.parametrize("src,kwargs,expected", REPR_CASES, ids=[c[0][:30] for c in REPR_CASES])
def test_repr_matches_torch_text(src, kwargs, expected):
    assert repr(_build(ember, src, kwargs)) == expected


@pytest.mark.parity
@pytest.mark.parametrize("src,kwargs,expected", REPR_CASES, ids=[c[0][:30] for c in REPR_CASES])
def test_repr_parity_with_torch(src, kwargs, expected):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    theirs = repr(_build(torch, src, kwargs)).replace("torch.", "ember.")
    assert repr(_build(ember, src, kwargs)) == theirs


@pytest.mark.parity
@pytest.mark.parametrize("make", [
    lambda lib: lib.arange(24.0).reshape(2, 3, 4), lambda lib: lib.arange(2000).reshape(40, 50),
    lambda lib: lib.arange(5000.0).reshape(10, 10, 50), lambda lib: lib.linspace(-1, 1, 20),
    lambda lib: lib.tensor([1e-8, 1e-9]), lambda lib: lib.arange(20.0) * 1e7,
    lambda lib: lib.tensor(float("nan")), lambda lib: lib.tensor([float("inf"), -float("inf")]),
    lambda lib: lib.zeros(0, 3, dtype=lib.int32), lambda lib: lib.tensor([0.5, 100000.5]),
])
def test_repr_parity_larger_tensors(make):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    assert repr(make(ember)) == repr(make(torch)).replace("torch.", "ember.")


def test_repr_shows_grad_fn():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    assert repr(x * 2) == "tensor([2., 4.], grad_fn=<MulBackward0>)"
    assert repr((x * 2).sum()) == "tensor(6., grad_fn=<SumBackward0>)"
