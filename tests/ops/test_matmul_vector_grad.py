"""The backward of a big (..., K) @ (K,) product in one pass (NOTE [Matrix-vector backward in
one pass] in ember/ops/_kernels/reduce.py)."""
import numpy as np
import pytest

import ember
import ember.ops.products as P
from ember.ops._kernels import reduce as R

# the one-pass backward runs with the pool off (with it on, the pool's GEMMs do)
pytestmark = pytest.mark.usefixtures("pool_off")


def _grads(a, v, g, fast, permute=None):
    old = P._FUSED_MV_BWD[0]
    P._FUSED_MV_BWD[0] = fast
    try:
        ta = ember.tensor(a, requires_grad=True)
        tv = ember.tensor(v, requires_grad=True)
        x = ta if permute is None else ta.permute(*permute)
        (x @ tv).backward(ember.tensor(g))
        return ta.grad.numpy(), tv.grad.numpy()
    finally:
        P._FUSED_MV_BWD[0] = old


@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-5), (np.float64, 1e-12)])
@pytest.mark.parametrize("shape", [(32, 20, 20, 64), (7, 300, 48), (2, 3, 4, 6, 256)])
def test_matvec_grads_match_float64_reference(rng, shape, dtype, tol):
    a = rng.standard_normal(shape).astype(dtype)
    v = rng.standard_normal(shape[-1]).astype(dtype)
    g = rng.standard_normal(shape[:-1]).astype(dtype)
    assert R.mv_backward(a, g, v) is not None  # the one-pass path applies
    ga, gv = _grads(a, v, g, fast=True)
    assert ga.dtype == dtype and gv.dtype == dtype and gv.shape == v.shape
    a64, g64 = a.astype(np.float64), g.astype(np.float64)
    np.testing.assert_allclose(ga, g64[..., None] * v.astype(np.float64), rtol=tol, atol=tol)
    ref_v = (a64.reshape(-1, shape[-1]) * g64.reshape(-1, 1)).sum(axis=0)
    np.testing.assert_allclose(gv, ref_v, rtol=tol, atol=tol * np.abs(ref_v).max())
    # the general path (outer product and GEMV) agrees
    ga2, gv2 = _grads(a, v, g, fast=False)
    np.testing.assert_array_equal(ga, ga2)
    np.testing.assert_allclose(gv, gv2, rtol=20 * tol, atol=20 * tol * np.abs(ref_v).max())


def test_matvec_grad_noncontiguous_operands(rng):
    # a permuted a takes the general path; a transposed upstream gradient is made contiguous
    a = rng.standard_normal((20, 32, 64)).astype(np.float32)
    v = rng.standard_normal(64).astype(np.float32)
    g = rng.standard_normal((32, 20)).astype(np.float32)
    ga, gv = _grads(a, v, g, fast=True, permute=(1, 0, 2))
    np.testing.assert_allclose(ga, (g.T[..., None] * v), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(gv, np.einsum("tbk,bt->k", a.astype(np.float64), g), rtol=1e-4,
                               atol=1e-4)
    gt = np.ascontiguousarray(g.T).T  # (32, 20) with transposed strides
    assert R.mv_backward(np.ascontiguousarray(a.transpose(1, 0, 2)), gt, v) is not None


def test_mv_backward_declines_what_it_does_not_cover(rng):
    a = rng.standard_normal((64, 40, 32)).astype(np.float32)
    g = rng.standard_normal((64, 40)).astype(np.float32)
    v = rng.standard_normal(32).astype(np.float32)
    assert R.mv_backward(a.astype(np.float16), g.astype(np.float16), v.astype(np.float16)) is None
    assert R.mv_backward(a[:2], g[:2], v) is None  # small
    assert R.mv_backward(a.transpose(1, 0, 2), g.T, v) is None  # a not C-contiguous
    assert R.mv_backward(a[..., :8].copy(), g, v[:8]) is None  # rows too short to vectorise
    assert R.mv_backward(a, g.astype(np.float64), v) is None


def test_matvec_double_backward_and_single_input_grads(rng):
    a = rng.standard_normal((16, 40, 64))
    v = rng.standard_normal(64)
    ta = ember.tensor(a, requires_grad=True)
    tv = ember.tensor(v, requires_grad=True)
    y = ((ta @ tv) ** 2).sum()
    (gv,) = ember.autograd.grad(y, tv, create_graph=True)  # recorded: the general path
    (gga,) = ember.autograd.grad(gv.sum(), ta)
    # d/da sum_k 2 (a v)_r a_rk = 2 (v_k sum_j a_rj + (a v)_r) for each row r
    ref = 2 * (v[None, None, :] * a.sum(-1, keepdims=True) + (a @ v)[..., None])
    np.testing.assert_allclose(gga.numpy(), ref, rtol=1e-10)
    # only one operand needs a gradient: the general path, same values
    tv2 = ember.tensor(v)
    ta2 = ember.tensor(a, requires_grad=True)
    (ta2 @ tv2).sum().backward()
    np.testing.assert_allclose(ta2.grad.numpy(), np.broadcast_to(v, a.shape))


@pytest.mark.parity
def test_matvec_grads_match_torch(rng):
    torch = pytest.importorskip("torch")
    a = rng.standard_normal((32, 20, 20, 64)).astype(np.float32)
    v = rng.standard_normal(64).astype(np.float32)
    ours = [ember.tensor(x, requires_grad=True) for x in (a, v)]
    ref = [torch.tensor(x, requires_grad=True) for x in (a, v)]
    for lib, (x, w) in ((ember, ours), (torch, ref)):
        lib.softmax(lib.tanh(x) @ w, dim=-1).square().sum().backward()
    for o, r in zip(ours, ref, strict=True):
        np.testing.assert_allclose(o.grad.numpy(), r.grad.numpy(), rtol=1e-4, atol=1e-6)
