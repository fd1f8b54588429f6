"""Reductions: dims, keepdim, empty and 0-d inputs, NaN handling, error types and messages, and
regression tests for fixed bugs (the generic suite covers values and gradients per sample)."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

DIM_OPS = ["sum", "mean", "prod", "amax", "amin", "max", "min", "argmax", "argmin", "var",
           "std", "logsumexp", "cumsum", "cumprod", "all", "any", "count_nonzero", "nansum",
           "nanmean"]


@pytest.mark.parametrize("name", DIM_OPS)
@pytest.mark.parametrize("dim", [2, -3, 5])
def test_out_of_range_dim_raises_index_error(name, dim):
    x = ember.ones(2, 3)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of "
                                         rf"\[-2, 1\], but got {dim}\)"):
        getattr(ember, name)(x, dim)


@pytest.mark.parametrize("name", ["sum", "mean", "amax", "var", "logsumexp"])
def test_repeated_dim_raises(name):
    with pytest.raises(RuntimeError, match=f"{name}: dim -?1 appears multiple times"):
        getattr(ember, name)(ember.ones(2, 3), (1, -1))


def test_sum_and_mean_of_empty():
    assert ember.ones(0, 3).sum().item() == 0.0
    assert ember.ones(0, 3).sum(0).tolist() == [0.0, 0.0, 0.0]
    assert ember.ones(0, 3).prod().item() == 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torch returns NaN silently; so does ember
        assert np.isnan(ember.ones(0).mean().item())


@pytest.mark.parametrize("name", ["max", "min", "argmax", "argmin"])
def test_full_reduction_of_empty_needs_a_dim(name):
    with pytest.raises((RuntimeError, IndexError), match=f"{name}.*numel\\(\\) == 0"):
        getattr(ember, name)(ember.ones(0))


@pytest.mark.parametrize("name", ["amax", "amin", "argmax", "max"])
def test_reducing_an_empty_dim_raises_index_error(name):
    with pytest.raises(IndexError, match=f"{name}.*non-zero size"):
        getattr(ember, name)(ember.ones(0, 3), 0)


@pytest.mark.parametrize("name", ["mean", "var", "std"])
def test_float_only_reductions_reject_ints(name):
    with pytest.raises(RuntimeError, match=f"{name}.*floating point.*int64"):
        getattr(ember, name)(ember.tensor([1, 2, 3]))


def test_mean_with_dtype_accepts_ints():
    assert ember.tensor([1, 2]).mean(dtype=ember.float64).item() == 1.5


def test_max_nan_wins_and_indices_point_at_it():
    for dt in (ember.float32, ember.bfloat16):
        x = ember.tensor([[1.0, float("nan"), 3.0], [4.0, 5.0, 6.0]], dtype=dt)
        values, indices = x.max(1)
        assert np.isnan(values.float().numpy()[0]) and values.float().numpy()[1] == 6.0
        assert indices.tolist() == [1, 2]
        assert np.isnan(x.amax().float().item())


def test_max_with_dim_returns_named_tuple():
    x = ember.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]])
    res = ember.max(x, dim=1, keepdim=True)
    assert res.values.tolist() == [[5.0], [7.0]] and res.indices.tolist() == [[1], [0]]
    v, i = ember.min(x, 0)
    assert v.tolist() == [1.0, 0.0, 2.0] and i.tolist() == [0, 1, 0]


def test_amax_gradient_is_shared_between_ties():
    x = ember.tensor([1.0, 3.0, 3.0], dtype=ember.float64, requires_grad=True)
    x.amax().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.5, 0.5])
    y = ember.tensor([1.0, 3.0, 3.0], dtype=ember.float64, requires_grad=True)
    y.max(0).values.backward()  # max(dim) sends the gradient to the index it returned
    np.testing.assert_allclose(y.grad.numpy(), [0.0, 1.0, 0.0])


def test_var_std_correction_and_unbiased():
    a = np.array([[1.0, 2.0, 4.0], [3.0, 5.0, 9.0]])
    x = ember.tensor(a)
    np.testing.assert_allclose(x.var().item(), a.var(ddof=1))
    np.testing.assert_allclose(x.var(1, unbiased=False).numpy(), a.var(1))
    np.testing.assert_allclose(x.std(0, correction=0, keepdim=True).numpy(),
                               a.std(0, keepdims=True))
    np.testing.assert_allclose(x.var(False).item(), a.var())  # var(input, unbiased) form
    v, m = ember.var_mean(x, 1)
    np.testing.assert_allclose(v.numpy(), a.var(1, ddof=1))
    np.testing.assert_allclose(m.numpy(), a.mean(1))


def test_logsumexp_is_stable_and_handles_infinities():
    x = ember.tensor([1000.0, 1000.0])
    np.testing.assert_allclose(ember.logsumexp(x, 0).item(), 1000.0 + np.log(2.0), rtol=1e-6)
    assert ember.logsumexp(ember.tensor([-float("inf"), -float("inf")]), 0).item() == \
        -float("inf")
    assert ember.logsumexp(ember.tensor([float("inf"), 1.0]), 0).item() == float("inf")
    assert ember.logsumexp(ember.tensor([1, 2]), 0).dtype == ember.float32


def test_cumsum_cumprod_dtypes():
    assert ember.tensor([True, True]).cumsum(0).tolist() == [1, 2]
    assert ember.tensor([1, 2], dtype=ember.int8).cumsum(0).dtype == ember.int64
    assert ember.tensor([1.0, 2.0]).cumsum(0, dtype=ember.float64).dtype == ember.float64


def test_cumprod_gradient_with_zeros():
    x = ember.tensor([2.0, 0.0, 3.0, 0.0], dtype=ember.float64, requires_grad=True)
    assert gradcheck(lambda t: t.cumprod(0), (x,))


def test_prod_gradient_with_zeros():
    x = ember.tensor([[2.0, 0.0, 3.0], [1.0, 4.0, 5.0]], dtype=ember.float64, requires_grad=True)
    assert gradcheck(lambda t: t.prod(1), (x,))
    assert gradcheck(lambda t: t.prod(), (x,))


def test_all_any_dtypes():
    assert ember.tensor([1, 0]).all().dtype == ember.bool
    assert ember.tensor([1, 0], dtype=ember.uint8).any().dtype == ember.uint8
    assert ember.ones(0).all().item() is True and ember.ones(0).any().item() is False


def test_count_nonzero_dims():
    x = ember.tensor([[0, 1, 2], [0, 0, 3]])
    assert x.count_nonzero().item() == 3
    assert ember.count_nonzero(x, 0).tolist() == [0, 1, 2]
    assert ember.count_nonzero(x, (0, 1)).item() == 3


# ---------------------------------------------------------------------------------------------
# regression tests for fixed bugs


def test_std_gradient_is_zero_where_std_is_zero():
    x = ember.tensor([2.0, 2.0, 2.0], dtype=ember.float64, requires_grad=True)
    x.std().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 0.0])  # torch's rule, not NaN
    y = ember.tensor([[1.0, 1.0], [1.0, 3.0]], dtype=ember.float64, requires_grad=True)
    assert gradcheck(lambda t: t.std(1), (y,))  # row 0 has std 0: gradient 0 there
    z = ember.tensor([[1.0, 2.0], [1.0, 3.0]], dtype=ember.float64, requires_grad=True)
    assert gradgradcheck(lambda t: t.std(1), (z,))


def test_std_of_nan_stays_nan():
    assert np.isnan(ember.tensor([1.0, float("nan")]).std().item())


@pytest.mark.parametrize("fn", [lambda t: t.amax(), lambda t: ember.logsumexp(t, 0),
                                lambda t: t.max(), lambda t: t.amin(0)])
def test_double_backward_on_0d_inputs(fn):
    # saved outputs of 0-d reductions came back from NumPy as scalars and were treated as
    # constants, so the second derivative of logsumexp(0-d) was -1 instead of 0
    x = ember.tensor(0.3, dtype=ember.float64, requires_grad=True)
    assert gradgradcheck(fn, (x,))


def test_argmax_empty_raises_index_error_like_torch():
    with pytest.raises(IndexError, match="argmax"):
        ember.ones(0).argmax()
    assert ember.ones(0, 3).argmax(1).shape == (0,)


@pytest.mark.parity
@pytest.mark.parametrize("name,args", [("sum", ((0, 2),)), ("mean", (1,)), ("var", (2,)),
                                       ("std", ()), ("amax", ((1, 2),)), ("logsumexp", (0,)),
                                       ("prod", (2,)), ("cumsum", (1,))])
def test_reduction_grads_match_torch_on_noncontiguous(rng, name, args):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    a = rng.standard_normal((3, 2, 4))
    ours = ember.tensor(a, requires_grad=True)
    ref = torch.tensor(a, requires_grad=True)
    w = rng.standard_normal(np.shape(getattr(torch, name)(ref.transpose(0, 2), *args).detach()))
    (getattr(ember, name)(ours.transpose(0, 2), *args) * ember.tensor(w)).sum().backward()
    (getattr(torch, name)(ref.transpose(0, 2), *args) * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), ref.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shape, dims", [((4, 5, 3, 2), (0, 2, 3)), ((4, 5, 3, 2), (3, 0, 2)),
                                         ((6, 7, 9), (0, 2)), ((2, 3, 1, 1), (0, 2, 3))])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_per_channel_sum_matches_numpy(rng, shape, dims, keepdim, dtype):
    # sums over every axis but 1 take a two-stage path (batch first); same values and shapes
    x = rng.standard_normal(shape).astype(dtype)
    got = ember.from_numpy(x).sum(dim=dims, keepdim=keepdim).numpy()
    want = x.astype(np.float64).sum(axis=dims, keepdims=keepdim)
    assert got.dtype == dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_cumsum_inplace_on_bool_raises_not_implemented_as_torch():
    x = ember.tensor([True, False])
    with pytest.raises(NotImplementedError, match="cumsum_: not implemented for bool"):
        x.cumsum_(0)
    y = ember.tensor([1, 2, 3])
    assert y.cumsum_(0).tolist() == [1, 3, 6]


def test_trace_of_bool_and_median_out_without_dim_raise_as_torch():
    with pytest.raises(NotImplementedError, match="trace: not implemented for bool"):
        ember.trace(ember.ones(2, 2, dtype=ember.bool))
    with pytest.raises(TypeError, match=r"median\(\): out= needs the form with dim"):
        ember.median(ember.ones(2, 3), out=ember.empty(0))


# x.sum()'s fast path (dtypes NumPy accumulates in themselves) and the general path must agree
# with torch on result dtype, shape and value for every input dtype, including 0-d inputs and
# one-dim reductions that end 0-d (both return 0-d arrays, never NumPy scalars)
@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64", "complex128",
                                   "int8", "uint8", "int32", "int64", "bool"])
@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (2, 0)])
@pytest.mark.parametrize("kwargs", [{}, {"dim": None, "keepdim": True}, {"dim": 0},
                                    {"dim": -1, "keepdim": True}, {"dtype": "float64"}])
def test_sum_dtype_shape_value_match_torch(rng, dtype, shape, kwargs):
    torch = pytest.importorskip("torch")
    if "dim" in kwargs and shape == ():
        kwargs = {**kwargs, "dim": 0}  # a 0-d input takes dim 0 or -1 as torch does
    arr = np.asarray(rng.standard_normal(shape) * 3).astype(dtype)
    e_kw = {k: getattr(ember, v) if k == "dtype" else v for k, v in kwargs.items()}
    t_kw = {k: getattr(torch, v) if k == "dtype" else v for k, v in kwargs.items()}
    got = ember.from_numpy(arr.copy()).sum(**e_kw)
    want = torch.from_numpy(arr.copy()).sum(**t_kw)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(want.shape)
    assert isinstance(got._data, np.ndarray)
    tol = 1e-2 if dtype == "float16" else 1e-5
    np.testing.assert_allclose(got.numpy().astype(np.complex128),
                               want.numpy().astype(np.complex128), rtol=tol, atol=tol)


def test_full_sum_result_is_a_fresh_tensor_with_a_gradient():
    x = ember.arange(6.0).reshape(2, 3).requires_grad_()
    s = x.sum()
    s2 = x.sum(dim=None, keepdim=True)
    assert s.shape == () and s2.shape == (1, 1) and s.item() == 15.0
    assert s._version == 0 and s.grad_fn.name() == "SumBackward0"
    (s + s2.sum()).backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 3), 2.0))
    s.add_(1)  # the 0-d result owns its memory: x is untouched
    assert s.item() == 16.0 and x.sum().item() == 15.0
    assert gradcheck(lambda t: t.sum(), (ember.rand(3, 2, dtype=ember.float64,
                                                    requires_grad=True),))


@pytest.mark.parametrize("name", ["max", "min", "median", "nanmedian", "prod"])
def test_keepdim_without_dim_is_a_type_error(name):
    # torch rejects keepdim=True with no dim for these (sum and mean accept dim=None)
    x = ember.ones(2, 3)
    with pytest.raises(TypeError, match=rf"{name}\(\): keepdim=True needs a dim"):
        getattr(x, name)(keepdim=True)
    with pytest.raises(TypeError, match=rf"{name}\(\): keepdim=True needs a dim"):
        getattr(ember, name)(x, keepdim=True)
    # with a dim, keepdim keeps it; without keepdim the whole tensor is reduced
    r = getattr(x, name)(1, keepdim=True)
    assert tuple((r if name == "prod" else r.values).shape) == (2, 1)
    assert getattr(x, name)().shape == ()


@pytest.mark.parity
@pytest.mark.parametrize("name", ["max", "min", "median", "nanmedian", "prod"])
def test_keepdim_without_dim_matches_torch(name):
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError):
        getattr(torch.ones(2, 3), name)(keepdim=True)


def test_mean_leaves_once_per_location_warnings_printed_once():
    # a mean must not reset Python's warning registries: softmax's implicit-dim UserWarning
    # (the "default" action: once per location) prints once over a loop, as under torch
    torch = pytest.importorskip("torch")
    seen = {}
    for lib in (ember, torch):
        x = lib.ones(3, 4)
        with warnings.catch_warnings(record=True) as caught:
            warnings.resetwarnings()
            warnings.simplefilter("default")
            for _ in range(3):
                lib.nn.functional.softmax(x)  # the same source line each time
                x.mean()
                x.mean(dim=0)
        seen[lib.__name__] = [str(w.message) for w in caught if w.category is UserWarning]
    assert len(seen["ember"]) == len(seen["torch"]) == 1, seen
    assert "Implicit dimension" in seen["ember"][0]


def test_mean_of_nothing_is_nan_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(ember.empty(0).mean().item())
        assert ember.empty(2, 0).mean(dim=1).isnan().all().item()


# a bad dim or an empty reduced dim is the error torch reports before the dtype or a repeated
# dim (the reduction sweep found these checks in the other order)
@pytest.mark.parametrize("name", ["amax", "amin"])
def test_amax_of_an_empty_dim_is_reported_before_a_repeated_dim(name):
    with pytest.raises(IndexError, match=rf"{name}\(\): Expected reduction dim 0 to have "
                                         r"non-zero size; got input of shape \[0, 3\]"):
        getattr(ember, name)(ember.zeros(0, 3), (0, 0))
    with pytest.raises(RuntimeError, match="dim 1 appears multiple times"):
        getattr(ember, name)(ember.zeros(2, 3), (1, 1))


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmax_of_bool_with_a_tuple_dim_is_a_type_error(name):
    with pytest.raises(TypeError, match=rf"{name}\(\): argument 'dim' must be int, not tuple"):
        getattr(ember, name)(ember.tensor([[True, False]]), (0, 1))
    with pytest.raises(RuntimeError, match=rf"{name}\(\): does not support bool input"):
        getattr(ember, name)(ember.tensor([[True, False]]), 1)


def test_logcumsumexp_of_ints_checks_the_dim_first():
    with pytest.raises(IndexError, match="Dimension out of range"):
        ember.logcumsumexp(ember.tensor([[1, 2]]), 5)
    with pytest.raises(NotImplementedError, match="logcumsumexp: not implemented for "
                                                  "ember.int64"):
        ember.logcumsumexp(ember.tensor([[1, 2]]), 1)


@pytest.mark.parametrize("name", ["std_mean", "var_mean"])
def test_std_mean_takes_unbiased_positionally(name):
    x = np.array([[1.0, 2.0, 4.0], [3.0, 5.0, 9.0]])
    spread, mean = getattr(ember, name)(ember.tensor(x), False)  # every dim, biased
    want = x.std() if name == "std_mean" else x.var()
    np.testing.assert_allclose(spread.numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(mean.numpy(), x.mean(), rtol=1e-12)
    assert spread.shape == mean.shape == ()


@pytest.mark.parametrize("name", ["std", "var", "std_mean", "var_mean"])
def test_std_refuses_unbiased_and_correction_together(name):
    with pytest.raises(TypeError, match=rf"{name}\(\): pass unbiased or correction, not both; "
                                        "got unbiased=True, correction=1"):
        getattr(ember, name)(ember.ones(3), unbiased=True, correction=1)


def test_var_gradient_past_zero_degrees_of_freedom_keeps_the_negative_denominator():
    # correction 3 on 2 values: the value is inf, torch's gradient 2 (x - mean) / (n - c) is
    # finite (and std's, that over 2 * inf, is 0); n == c still divides by zero
    x = ember.tensor([[1.0, 2.0], [3.0, 5.0]], requires_grad=True)
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        v = ember.var(x, 0, correction=3)
    assert np.isinf(v.detach().numpy()).all()
    (g,) = ember.autograd.grad(v.sum(), x)
    np.testing.assert_allclose(g.numpy(), [[2.0, 3.0], [-2.0, -3.0]])
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        s = ember.std(x, 0, correction=3)
    (g,) = ember.autograd.grad(s.sum(), x)
    assert not g.numpy().any()
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        v = ember.var(x, 0, correction=2)
    (g,) = ember.autograd.grad(v.sum(), x)
    assert np.isinf(g.numpy()).all()
