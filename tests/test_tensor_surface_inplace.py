"""Tensor methods from ember/_tensor_surface.py: in-place forms of out-of-place ops, in-place
view ops, Python element maps, as_subclass/set_, and torch's answers for dense tensors to the
sparse and device-specific methods."""
from __future__ import annotations

import numpy as np
import pytest

import ember


@pytest.mark.parity
def test_inplace_forms_match_torch_and_bump_version():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x, y = rng.random((3, 4)) + 0.5, rng.random((3, 4)) + 0.5
    for name, args in [("heaviside_", (0.5,)), ("nextafter_", (1.0,)), ("float_power_", (2.0,)),
                       ("renorm_", (2, 0, 1.0)), ("mvlgamma_", (2,)), ("ldexp_", (2.0,))]:
        a, b = ember.tensor(x), torch.tensor(x)
        eargs = [ember.tensor(y) * v if isinstance(v, float) and name in (
            "heaviside_", "nextafter_", "ldexp_") else v for v in args]
        targs = [torch.tensor(y) * v if isinstance(v, float) and name in (
            "heaviside_", "nextafter_", "ldexp_") else v for v in args]
        version = a._version
        assert getattr(a, name)(*eargs) is a and a._version > version
        getattr(b, name)(*targs)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, err_msg=name)
    ints = np.array([12, 18, 7])
    for name in ("gcd_", "lcm_"):
        a, b = ember.tensor(ints), torch.tensor(ints)
        getattr(a, name)(ember.tensor([8, 12, 3]))
        getattr(b, name)(torch.tensor([8, 12, 3]))
        assert a.tolist() == b.tolist()
        assert getattr(ember, name)(ember.tensor(ints), ember.tensor([8, 12, 3])).tolist() == \
            b.tolist()


def test_inplace_forms_follow_torch_dtype_rules():
    with pytest.raises(RuntimeError, match="float_power_ has dtype ember.float32"):
        ember.ones(2).float_power_(2)
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        ember.tensor([4, 6]).gcd_(ember.tensor([2.0, 3.0]))


def test_inplace_form_records_autograd():
    x = ember.tensor([0.5, 2.0], dtype=ember.float64, requires_grad=True)
    y = x * 1.0
    y.float_power_(3)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * np.array([0.5, 2.0]) ** 2)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x.renorm_(2, 0, 1.0)


@pytest.mark.parity
def test_view_inplace_ops_match_torch():
    torch = pytest.importorskip("torch")
    data = np.arange(24.0).reshape(2, 3, 4)
    for name, args in [("transpose_", (0, 2)), ("swapaxes_", (1, 2)), ("swapdims_", (0, 1)),
                       ("unsqueeze_", (-1,)), ("as_strided_", ((3, 2), (1, 3), 2))]:
        a, b = ember.tensor(data), torch.tensor(data)
        assert getattr(a, name)(*args) is a
        getattr(b, name)(*args)
        assert tuple(a.shape) == tuple(b.shape) and a.stride() == b.stride(), name
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    a = ember.ones(1, 3, 1)
    a.squeeze_()
    assert tuple(a.shape) == (3,)
    a = ember.ones(1, 3, 1)
    a.squeeze_(0)
    assert tuple(a.shape) == (3, 1)
    m = ember.arange(6.0).reshape(2, 3)
    m.t_()
    assert m.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]


def test_view_inplace_autograd_and_leaf_error():
    x = ember.arange(6.0, requires_grad=True)
    y = (x * 2).reshape(2, 3)
    y.t_()
    assert tuple(y.shape) == (3, 2)
    (y * ember.tensor([[1.0, 10.0]])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2, 2, 2, 20, 20, 20])
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        ember.ones(2, 3, requires_grad=True).t_()


def test_python_element_maps():
    y = ember.tensor([1.0, 2.0])
    assert y.apply_(lambda v: v * 10) is y and y.tolist() == [10.0, 20.0]
    y.map_(ember.tensor([1.0, 2.0]), lambda a, b: a + b)
    y.map2_(ember.ones(2), ember.tensor(3.0), lambda a, b, c: a + b + c)
    assert y.tolist() == [15.0, 26.0]
    assert ember.tensor([1, 2]).apply_(lambda v: v * 2.7).tolist() == [2, 5]
    nc = ember.arange(6.0).reshape(2, 3).t()
    nc.apply_(lambda v: -v)
    assert nc.tolist() == [[-0.0, -3.0], [-1.0, -4.0], [-2.0, -5.0]]
    with pytest.raises(RuntimeError, match="Can't call apply_\\(\\) on Variable that requires"):
        ember.ones(1, requires_grad=True).apply_(abs)


def test_as_subclass_shares_memory_and_history():
    class Tagged(ember.Tensor):
        pass

    x = ember.ones(2, requires_grad=True)
    y = x * 3
    t = y.as_subclass(Tagged)
    assert type(t) is Tagged and t.data_ptr() == y.data_ptr() and t.grad_fn is y.grad_fn
    t.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    with pytest.raises(TypeError, match="subclass of ember.Tensor"):
        y.as_subclass(int)


def test_set_shares_another_tensors_memory():
    a, src = ember.zeros(2), ember.arange(6.0)
    a.set_(src)
    assert a.data_ptr() == src.data_ptr() and tuple(a.shape) == (6,)
    b = ember.zeros(1)
    b.set_(src, 1, (2, 2), (2, 1))
    assert b.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    src[1] = 100.0
    assert b[0, 0].item() == 100.0
    c = ember.ones(3)
    c.set_()
    assert c.numel() == 0
    with pytest.raises(RuntimeError, match="expected source of dtype"):
        ember.zeros(2).set_(ember.arange(3))


@pytest.mark.parity
def test_small_queries_match_torch():
    torch = pytest.importorskip("torch")
    for lib in (ember, torch):
        t = lib.ones(2, 3, 4).permute(2, 0, 1)
        assert t.dim_order() == (1, 2, 0)
        assert t.const_data_ptr() == t.data_ptr()
        assert lib.ones(2).name is None
        p = lib.zeros(2)
        out = p.module_load(lib.ones(2))
        assert out.tolist() == [1.0, 1.0] and p.tolist() == [1.0, 1.0]
        assert p.module_load(lib.full((2,), 5.0), assign=True).tolist() == [5.0, 5.0]
        assert t.sparse_dim() == 0 and t.dense_dim() == 3
        assert lib.ones(2).grad_dtype == lib.float32
        w = lib.tensor([0.25])
        np.testing.assert_allclose(lib.tensor([-2.0, 3.0]).prelu(w).tolist(), [-0.5, 3.0])
        hist = lib.tensor([0.0, 1.0, 1.0, 3.0]).histogram(3)
        assert hist.hist.tolist() == [1.0, 2.0, 1.0]
    with pytest.raises(RuntimeError, match="unique dim order"):
        ember.ones(1, 3).dim_order(ambiguity_check=True)


def test_dense_tensor_sparse_and_device_methods_fail_like_torch():
    t = ember.ones(2, 3)
    for name, msg in [("indices", "sparse coordinate tensor layout but got Strided"),
                      ("values", "values expected sparse tensor layout"),
                      ("coalesce", "coalesce expected sparse coordinate"),
                      ("is_coalesced", "is_coalesced expected"),
                      ("crow_indices", "sparse row compressed"),
                      ("ccol_indices", "sparse column compressed")]:
        with pytest.raises(RuntimeError, match=msg):
            getattr(t, name)()
    with pytest.raises(NotImplementedError, match="sparse_resize_"):
        t.sparse_resize_((2, 3), 2, 0)
    with pytest.raises(RuntimeError, match="can only be called on sparse tensors"):
        t.smm(t)
    with pytest.raises(AssertionError, match="XPU"):
        t.xpu()
    with pytest.raises(RuntimeError, match="IPU"):
        t.ipu()
    with pytest.raises(RuntimeError, match="reinforce\\(\\) was removed"):
        t.reinforce(1.0)
    with pytest.warns(UserWarning, match="volatile was removed"):
        assert t.volatile is False
    with pytest.raises(RuntimeError, match="grad_dtype can only be accessed on leaf"):
        (ember.ones(1, requires_grad=True) * 2).grad_dtype


def test_sparse_mask_takes_values_at_mask_positions():
    dense = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
    mask = ember.tensor([[0.0, 1.0], [1.0, 0.0]]).to_sparse()
    out = dense.sparse_mask(mask)
    assert out.is_sparse and out.to_dense().tolist() == [[0.0, 2.0], [3.0, 0.0]]
    with pytest.raises(RuntimeError, match="mask to be sparse"):
        dense.sparse_mask(dense)
