"""Convolution, batch norm, pooling and SGD with the one pool on (NOTE [One pool] in
ember/_onepool.py): values and gradients against torch on shapes big enough for the parallel
twins and parts drivers (NOTE [Ranges on the one pool] in ember/ops/_kernels/split.py), and a
check that the parallel versions did run."""
import numpy as np
import pytest

import ember
from ember.nn import functional as F
from ember.ops._kernels import conv as kconv
from ember.ops._kernels import depthwise, im2col, norm, pool, winograd
from ember.optim import sgd as sgd_module

torch = pytest.importorskip("torch", reason="torch oracle not installed")

pytestmark = pytest.mark.parity


def _ran_parallel(*twins):
    """Whether each twin's parallel version has been compiled (so called) in this process."""
    return all(t.parallel.signatures for t in twins)


def _leaves(arrays, lib):
    return [None if a is None else lib.tensor(a, requires_grad=True) for a in arrays]


def _compare(rng, ours_fn, ref_fn, arrays, tol):
    """Forward and every input gradient of ours_fn vs ref_fn, errors relative to the largest
    entry of each reference."""
    ours, ref = _leaves(arrays, ember), _leaves(arrays, torch)
    y, ty = ours_fn(*ours), ref_fn(*ref)
    want = ty.detach().numpy()
    assert y.dtype == ember.float32 if want.dtype == np.float32 else y.dtype == ember.float64
    np.testing.assert_allclose(y.detach().numpy(), want, rtol=tol,
                               atol=tol * np.abs(want).max())
    g = rng.standard_normal(tuple(ty.shape)).astype(want.dtype)
    y.backward(ember.tensor(g))
    ty.backward(torch.tensor(g))
    for o, r in zip(ours, ref, strict=True):
        if o is not None:
            want = r.grad.numpy()
            np.testing.assert_allclose(o.grad.numpy(), want, rtol=tol,
                                       atol=tol * np.abs(want).max())


# (name, x shape, w shape, keywords, twins the case must have run in parallel)
CONV_CASES = [
    ("gathered im2col", (4, 16, 16, 16), (32, 16, 3, 3), dict(stride=2, padding=1),
     (im2col._p_unfold_gather, im2col._p_fold_gather)),
    ("pixels as rows", (8, 64, 8, 8), (64, 64, 3, 3), dict(stride=2, padding=1),
     (im2col._p_unfold_rows, im2col._p_fold_rows)),
    ("im2col rows", (2, 8, 24, 24), (32, 8, 5, 5), dict(padding=2),
     (im2col._k_unfold_fwd, im2col._k_unfold_bwd, kconv._k_unbatch, kconv._k_bias_grad)),
    ("winograd F(4x4)", (8, 16, 16, 16), (16, 16, 3, 3), dict(padding=1),
     (winograd._p_input, winograd._p_output, winograd._p_output_adjoint,
      winograd._p_input_adjoint)),
    ("winograd F(2x2)", (8, 32, 6, 6), (32, 32, 3, 3), dict(padding=1),
     (winograd._p_input, winograd._p_input_adjoint)),
    ("pointwise planes", (8, 64, 8, 8), (64, 64, 1, 1), dict(), (kconv._k_sum_planes,)),
    ("pointwise columns", (32, 128, 4, 4), (128, 128, 1, 1), dict(), (kconv._k_swap_leading,)),
    ("pointwise groups", (4, 32, 8, 8), (32, 16, 1, 1), dict(groups=2), ()),
    ("depthwise stride 1", (4, 32, 16, 16), (32, 1, 3, 3), dict(groups=32, padding=1),
     (depthwise._p_depthwise_s1_fwd, depthwise._p_depthwise_s1_input_bwd,
      depthwise._p_depthwise_s1_weight_bwd)),
    ("depthwise stride 2", (4, 32, 32, 32), (32, 1, 3, 3), dict(groups=32, padding=1, stride=2),
     (depthwise._p_depthwise_fwd, kconv._k_spread)),
    ("depthwise channels last", (16, 64, 8, 8), (64, 1, 3, 3), dict(groups=64, padding=1),
     (depthwise._p_depthwise_cl_fwd, depthwise._p_depthwise_cl_bwd)),
    ("depthwise channels last stride 2", (32, 64, 8, 8), (64, 1, 3, 3),
     dict(groups=64, padding=1, stride=2), (depthwise._p_depthwise_cl_bwd,)),
    ("dilated", (4, 16, 20, 20), (16, 16, 3, 3), dict(padding=2, dilation=2), ()),
]
# float32 on a subset: the kernels are the same code for both dtypes
FLOAT32_CASES = {"gathered im2col", "pixels as rows", "winograd F(4x4)", "pointwise planes",
                 "depthwise stride 1", "depthwise channels last"}
CONV_PARAMS = ([pytest.param(c, np.float64, id=f"{c[0]}-float64") for c in CONV_CASES]
               + [pytest.param(c, np.float32, id=f"{c[0]}-float32") for c in CONV_CASES
                  if c[0] in FLOAT32_CASES])


@pytest.mark.parametrize("case, dtype", CONV_PARAMS)
def test_conv2d_on_the_pool_matches_torch(one_pool, rng, case, dtype):
    name, x_shape, w_shape, kw, twins = case
    # F(4x4, 3x3) rounds more than the direct sum (NOTE [Winograd F(4x4, 3x3)])
    tol = (1e-9 if "F(4x4)" in name else 1e-10) if dtype == np.float64 else 2e-4
    arrays = [rng.standard_normal(shape).astype(dtype)
              for shape in (x_shape, w_shape, w_shape[:1])]
    _compare(rng, lambda x, w, b: F.conv2d(x, w, b, **kw),
             lambda x, w, b: torch.nn.functional.conv2d(x, w, b, **kw), arrays, tol)
    assert _ran_parallel(*twins)


def test_conv_transpose2d_on_the_pool_matches_torch(one_pool, rng):
    kw = dict(stride=2, padding=1, output_padding=1)
    arrays = [rng.standard_normal((4, 16, 12, 12)), rng.standard_normal((16, 8, 3, 3)),
              rng.standard_normal(8)]
    _compare(rng, lambda x, w, b: F.conv_transpose2d(x, w, b, **kw),
             lambda x, w, b: torch.nn.functional.conv_transpose2d(x, w, b, **kw), arrays, 1e-10)
    assert _ran_parallel(im2col._p_fold_gather)


def test_winograd_on_the_pool_takes_smaller_maps():
    # every pass runs on the pool: the threshold of NOTE [Winograd with every pass on two
    # threads] (32 tiles of 2x2 instead of 128)
    shape, w_shape = (8, 256, 4, 4), (256, 256, 3, 3)
    from ember import _onepool
    _onepool.set_enabled(False)
    try:
        assert not winograd.applies(shape, w_shape, (3, 3, 1, 1, 1, 1, 1, 1), 1)
        _onepool.set_enabled(True)
        if not _onepool.enabled():
            pytest.skip("the one pool needs numba's omp or tbb threading layer and 2 threads")
        assert winograd.applies(shape, w_shape, (3, 3, 1, 1, 1, 1, 1, 1), 1)
    finally:
        _onepool.set_enabled(None)


@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-10), (np.float32, 1e-4)])
def test_batch_norm_on_the_pool_matches_torch(one_pool, rng, dtype, tol):
    x = rng.standard_normal((8, 32, 16, 16)).astype(dtype) * 3 + 1
    w = rng.standard_normal(32).astype(dtype)
    b = rng.standard_normal(32).astype(dtype)
    ours_stats = [ember.zeros(32, dtype=ember.float64 if dtype == np.float64 else ember.float32),
                  ember.ones(32, dtype=ember.float64 if dtype == np.float64 else ember.float32)]
    ref_stats = [torch.zeros(32, dtype=torch.float64 if dtype == np.float64 else torch.float32),
                 torch.ones(32, dtype=torch.float64 if dtype == np.float64 else torch.float32)]
    _compare(rng, lambda x, w, b: F.batch_norm(x, *ours_stats, w, b, training=True),
             lambda x, w, b: torch.nn.functional.batch_norm(x, *ref_stats, w, b, training=True),
             [x, w, b], tol)
    for o, r in zip(ours_stats, ref_stats, strict=True):
        np.testing.assert_allclose(o.numpy(), r.numpy(), rtol=tol, atol=tol)
    assert _ran_parallel(norm._p_batchnorm_fwd, norm._p_batchnorm_bwd)


POOL_CASES = [
    ("max 2x2", lambda lib, x: lib.nn.functional.max_pool2d(x, 2), (pool._k_maxpool2x2_fwd,)),
    ("max 3x3/2", lambda lib, x: lib.nn.functional.max_pool2d(x, 3, 2),
     (pool._k_maxpool_direct_fwd, pool._k_maxpool_bwd)),
    ("max 3x3/2 padded", lambda lib, x: lib.nn.functional.max_pool2d(x, 3, 2, 1),
     (pool._k_maxpool_s2_fwd,)),
    ("avg 3x3/2 padded", lambda lib, x: lib.nn.functional.avg_pool2d(x, 3, 2, 1),
     (pool._k_avgpool_fwd, pool._k_avgpool_bwd)),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", POOL_CASES, ids=[c[0] for c in POOL_CASES])
def test_pooling_on_the_pool_matches_torch(one_pool, rng, case, dtype):
    _, fn, twins = case
    # distinct values: max pooling's gradient goes to one winner per window, no ties
    x = rng.permutation(4 * 16 * 31 * 31).reshape(4, 16, 31, 31).astype(dtype) / 1000
    _compare(rng, lambda x: fn(ember, x), lambda x: fn(torch, x), [x],
             1e-12 if dtype == np.float64 else 1e-6)
    assert _ran_parallel(*twins)


@pytest.mark.parametrize("nesterov, weight_decay", [(False, 0.0), (True, 1e-3)])
def test_sgd_on_the_pool_matches_torch(one_pool, rng, nesterov, weight_decay):
    p0 = rng.standard_normal((300, 301)).astype(np.float32)
    ours, ref = ember.nn.Parameter(ember.tensor(p0)), torch.nn.Parameter(torch.tensor(p0))
    kw = dict(lr=0.1, momentum=0.9, nesterov=nesterov, weight_decay=weight_decay)
    opts = ember.optim.SGD([ours], **kw), torch.optim.SGD([ref], **kw)
    for _ in range(3):
        g = rng.standard_normal(p0.shape).astype(np.float32)
        ours.grad, ref.grad = ember.tensor(g), torch.tensor(g)
        for opt in opts:
            opt.step()
    np.testing.assert_allclose(ours.detach().numpy(), ref.detach().numpy(), rtol=1e-6,
                               atol=1e-6)
    assert _ran_parallel(sgd_module._p_sgd_range)
