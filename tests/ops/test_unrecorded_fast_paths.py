"""Calls of a decoding step that skip Op._run when nothing records or watches them (NOTE
[Unrecorded same-shape ops] in ember/ops/elementwise.py, the one-row product of small_linear in
ember/ops/nn/linear.py): values, dtypes and storage as torch's, graphs where grad mode records,
and every hook that watches op calls still sees them."""
from __future__ import annotations

import operator

import numpy as np
import pytest
import torch

import ember
import ember.autograd.forward_ad as fwAD
from ember.ops import registry
from ember.ops.nn import linear

BINARY = [("add", operator.add), ("mul", operator.mul)]
DTYPES = [np.float32, np.float64, np.int64, np.bool_]


def _pair(shape, dtype, seed):
    a = np.asarray((np.random.default_rng(seed).standard_normal(shape) * 3).astype(dtype))
    return ember.from_numpy(a.copy()), torch.from_numpy(a.copy())


@pytest.mark.parametrize("grad_mode", [False, True], ids=["no_grad", "grad_mode"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name,op", BINARY, ids=[b[0] for b in BINARY])
def test_same_shape_binary_matches_torch(name, op, dtype, grad_mode):
    (ea, ta), (eb, tb) = _pair((3, 4), dtype, 0), _pair((3, 4), dtype, 1)
    with ember.set_grad_enabled(grad_mode):
        got = op(ea, eb)
        method = getattr(ea, name)(eb)
        fn = getattr(ember, name)(ea, eb)
    want = op(ta, tb)
    for g in (got, method, fn):
        np.testing.assert_array_equal(g.numpy(), want.numpy())
        assert g.dtype is getattr(ember, str(want.dtype).split(".")[1])
        assert g.grad_fn is None and not g.requires_grad and g._base is None
        assert g._version == 0 and g.shape == (3, 4)
    got.zero_()  # its own storage: the operands are untouched
    np.testing.assert_array_equal(ea.numpy(), ta.numpy())
    assert ea._version == eb._version == 0


@pytest.mark.parametrize("name,op", BINARY, ids=[b[0] for b in BINARY])
def test_other_binary_forms_still_take_the_op(name, op):
    # broadcasting, 0-d operands, non-contiguous operands and alpha= give torch's results
    a, ta = _pair((2, 3), np.float32, 0)
    r, tr = _pair((3,), np.float32, 1)
    s, ts = _pair((), np.float32, 2)
    with ember.no_grad():
        cases = [(op(a, r), op(ta, tr)), (op(s, s), op(ts, ts)),
                 (op(a.t(), a.t()), op(ta.t(), ta.t()))]
        if name == "add":
            cases.append((ember.add(a, a, alpha=2), torch.add(ta, ta, alpha=2)))
    for got, want in cases:
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
        assert got.shape == tuple(want.shape) and got.stride() == want.stride()
    with pytest.raises(RuntimeError, match=rf"{name}: The size of tensor a \(2\) must match"):
        op(ember.ones(2, 3), ember.ones(4, 3))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name,op", BINARY, ids=[b[0] for b in BINARY])
def test_unrecorded_broadcasts_match_torch(name, op, dtype):
    # no-grad broadcasts of one dtype: small results straight from NumPy, big ones (a (300, 1)
    # column against a (1, 300) row: 90000 elements) and empty ones through the Op, a shape
    # mismatch with the op's message either way
    shapes = [((1, 1, 256), (1, 256)), ((), (2, 3)), ((2, 3), ()), ((4, 1), (1, 5)),
              ((300, 1), (1, 300)), ((0, 3), (1, 3)), ((2, 1, 3), (4, 1))]
    with ember.no_grad():
        for i, (sa, sb) in enumerate(shapes):
            (ea, ta), (eb, tb) = _pair(sa, dtype, i), _pair(sb, dtype, i + 10)
            got, want = op(ea, eb), op(ta, tb)
            np.testing.assert_array_equal(got.numpy(), want.numpy())
            assert got.dtype is getattr(ember, str(want.dtype).split(".")[1])
            assert got.shape == tuple(want.shape)
            # (an empty result's strides are NumPy's zeros: not this path's business)
            assert got.stride() == want.stride() or not want.numel()
            assert got.grad_fn is None and got._base is None
        with pytest.raises(RuntimeError, match=rf"{name}: The size of tensor a \(3\) must match"):
            op(ember.ones(2, 3, dtype=ember.float32), ember.ones(4, dtype=ember.float32))


@pytest.mark.parametrize("name,op", BINARY, ids=[b[0] for b in BINARY])
def test_same_shape_binary_records_when_grad_mode_needs_it(name, op):
    a = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)
    b = ember.randn(3, 4, dtype=ember.float64)
    out = op(a, b)
    assert out.requires_grad and out.grad_fn.name() == f"{name.capitalize()}Backward0"
    assert ember.autograd.gradcheck(lambda x: op(x, b), (a,))
    with ember.no_grad():
        assert op(a, b).grad_fn is None and not op(a, b).requires_grad


@pytest.mark.parametrize("name,op", BINARY, ids=[b[0] for b in BINARY])
def test_same_shape_binary_is_seen_by_hooks(name, op):
    x, y = ember.randn(2, 3), ember.randn(2, 3)
    assert registry.unwatched()
    with ember.profiler.profile() as prof:
        op(x, y)
    assert name in {e.key.split("::")[-1] for e in prof.key_averages()}
    with fwAD.dual_level():
        d = fwAD.make_dual(x, ember.ones(2, 3))
        tangent = fwAD.unpack_dual(op(d, y)).tangent
    want = np.ones((2, 3)) if name == "add" else y.numpy()
    np.testing.assert_allclose(tangent.numpy(), want, rtol=1e-6)
    out = ember.vmap(lambda r, s: op(r, s))(x, y)
    np.testing.assert_allclose(out.numpy(), op(x.numpy(), y.numpy()), rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("n_in,n_out", [(16, 48), (256, 768), (1024, 256), (33, 7)])
@pytest.mark.parametrize("shape", [(1, 1), (1,), ()], ids=["1x1", "1", "2-D"])
def test_one_row_linear_is_numpys_row_product(shape, n_in, n_out, dtype, monkeypatch):
    # the one-row form (np.dot on the row as a vector) gives the bits of the (1, in) @ W^T
    # product of np.matmul that the general form computes, plus the bias (with the products
    # in parts off: tests/ops/test_gemv_parts.py tests those)
    monkeypatch.setattr(linear, "_GEMV_PARTS", [False])
    rng = np.random.default_rng(n_in)
    lin = ember.nn.Linear(n_in, n_out, dtype=ember.float32 if dtype == np.float32
                          else ember.float64)
    row = rng.standard_normal((1, n_in)).astype(dtype)
    x = ember.from_numpy(row.reshape(*shape, 1, n_in) if shape else row)
    with ember.no_grad():
        got = lin(x)
    w, b = lin.weight.detach().numpy(), lin.bias.detach().numpy()
    want = np.matmul(row, w.T) + b
    assert got.shape == x.shape[:-1] + (n_out,) and got.dtype is x.dtype
    np.testing.assert_array_equal(got.numpy().reshape(1, n_out), want)
    tl = torch.nn.functional.linear(torch.from_numpy(row), torch.from_numpy(w),
                                    torch.from_numpy(b))
    np.testing.assert_allclose(got.numpy().reshape(1, n_out), tl.numpy(), rtol=1e-5, atol=1e-5)
    got.zero_()  # a fresh array: the parameters are untouched
    assert lin.bias.detach().numpy().any() or not b.any()


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("n_query", [1, 5])
def test_unrecorded_attention_matches_the_recorded_path(n_query, causal):
    rng = np.random.default_rng(n_query)
    q, k, v = (rng.standard_normal(s).astype(np.float32)
               for s in ((1, 4, n_query, 8), (1, 4, 7, 8), (1, 4, 7, 8)))
    F = ember.nn.functional
    eq, ek, ev = ember.from_numpy(q), ember.from_numpy(k), ember.from_numpy(v)
    with ember.no_grad():
        fast = F.scaled_dot_product_attention(eq, ek, ev, is_causal=causal)
    slow = F.scaled_dot_product_attention(eq.clone().requires_grad_(), ek, ev, is_causal=causal)
    assert fast.grad_fn is None and slow.grad_fn is not None
    np.testing.assert_array_equal(fast.numpy(), slow.detach().numpy())  # one kernel
    want = torch.nn.functional.scaled_dot_product_attention(
        torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(v), is_causal=causal)
    np.testing.assert_allclose(fast.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    assert fast.shape == tuple(want.shape) and fast.stride() == want.stride()
    with ember.no_grad(), ember.profiler.profile() as prof:
        F.scaled_dot_product_attention(eq, ek, ev, is_causal=causal)
    assert any("attention" in e.key.lower() for e in prof.key_averages())
    with pytest.raises(RuntimeError, match="scaled_dot_product_attention: expected query"):
        F.scaled_dot_product_attention(eq, ek[..., :4], ev)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_unrecorded_layer_norm_takes_strided_parameters(dtype):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 8)).astype(dtype)
    wb = rng.standard_normal(16).astype(dtype)  # every other element: strided weight and bias
    F = ember.nn.functional
    ew = ember.from_numpy(wb)[::2]
    assert not ew.is_contiguous()
    with ember.no_grad():
        got = F.layer_norm(ember.from_numpy(x), (8,), ew, ew, eps=1e-3)
        no_bias = F.layer_norm(ember.from_numpy(x), 8, ew)
    tw = torch.from_numpy(wb)[::2]
    want = torch.nn.functional.layer_norm(torch.from_numpy(x), (8,), tw, tw, eps=1e-3)
    want_nb = torch.nn.functional.layer_norm(torch.from_numpy(x), (8,), tw)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(no_bias.numpy(), want_nb.numpy(), rtol=tol, atol=tol)
    assert got.dtype is no_bias.dtype is ember.from_numpy(x).dtype and got.grad_fn is None
    with pytest.raises(RuntimeError, match=r"layer_norm: Expected weight to be of same shape"):
        F.layer_norm(ember.from_numpy(x), (8,), ember.ones(4))


@pytest.mark.parametrize("layout", ["transposed", "strided"])
def test_one_row_linear_with_other_weight_layouts(layout):
    # an F-contiguous weight takes the one-row form, a strided one the general product: both
    # give np.matmul's bits for the (1, in) row
    rng = np.random.default_rng(7)
    if layout == "transposed":
        w = np.asfortranarray(rng.standard_normal((65, 33)).astype(np.float32))
    else:
        w = rng.standard_normal((65, 66)).astype(np.float32)[:, ::2]
    row = rng.standard_normal((1, 33)).astype(np.float32)
    with ember.no_grad():
        got = ember.nn.functional.linear(ember.from_numpy(row), ember.from_numpy(w))
    np.testing.assert_array_equal(got.numpy(), np.matmul(row, w.T))


def test_one_row_linear_restores_blas_threads(monkeypatch):
    # NOTE [One thread for a one-row product]: one thread for the call, the count restored,
    # and the bits of OpenBLAS's two-thread gemv
    from ember._kernel_threads import _openblas, blas_threads_enter, blas_threads_exit
    monkeypatch.setattr(linear, "_GEMV_PARTS", [False])  # NOTE [One-row products in parts]
    funcs = _openblas()
    if not funcs:
        pytest.skip("numpy's OpenBLAS is not reachable through threadpoolctl here")
    get = funcs[0]
    before = blas_threads_enter(2)
    try:
        lin = ember.nn.Linear(256, 768)
        x = ember.randn(1, 1, 256)
        monkeypatch.setattr(linear, "_GEMV_ONE_THREAD", [False])
        with ember.no_grad():
            two = lin(x)  # OpenBLAS's own two-thread gemv
        monkeypatch.setattr(linear, "_GEMV_ONE_THREAD", [True])
        with ember.no_grad():
            one = lin(x)
        assert get() == 2
        np.testing.assert_array_equal(one.numpy(), two.numpy())
    finally:
        blas_threads_exit(before)
