"""ember.ops._kernels.pool against loop-by-loop NumPy references and torch."""

import math

import numpy as np
import pytest

from ember.ops._kernels import pool

TOL = {np.float64: {"rtol": 1e-12, "atol": 1e-12}, np.float32: {"rtol": 1e-5, "atol": 1e-6}}


def out_len(size, k, s, p, d, ceil_mode):
    """torch's rule, written independently: the last window must start before size + p."""
    span = size + 2 * p - d * (k - 1) - 1
    out = (math.ceil(span / s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def maxpool_ref(x, k, s, p, d, ceil_mode):
    planes = x.reshape(-1, *x.shape[-2:])
    h, w = planes.shape[1:]
    oh, ow = (out_len(h, k[0], s[0], p[0], d[0], ceil_mode),
              out_len(w, k[1], s[1], p[1], d[1], ceil_mode))
    y = np.empty((planes.shape[0], oh, ow), x.dtype)
    idx = np.empty(y.shape, np.int64)
    for q in range(planes.shape[0]):
        for a in range(oh):
            for b in range(ow):
                rows = [a * s[0] - p[0] + i * d[0] for i in range(k[0])]
                cols = [b * s[1] - p[1] + j * d[1] for j in range(k[1])]
                cands = [(planes[q, r, c], r * w + c) for r in rows for c in cols
                         if 0 <= r < h and 0 <= c < w]
                best = max(cands, key=lambda vc: vc[0])   # first maximum wins ties
                y[q, a, b], idx[q, a, b] = best
    return y.reshape(x.shape[:-2] + (oh, ow)), idx.reshape(x.shape[:-2] + (oh, ow))


def avgpool_ref(x, k, s, p, ceil_mode, count_include_pad, divisor_override):
    planes = x.reshape(-1, *x.shape[-2:])
    h, w = planes.shape[1:]
    oh, ow = out_len(h, k[0], s[0], p[0], 1, ceil_mode), out_len(w, k[1], s[1], p[1], 1, ceil_mode)
    y = np.empty((planes.shape[0], oh, ow), x.dtype)
    for a in range(oh):
        for b in range(ow):
            r0, c0 = a * s[0] - p[0], b * s[1] - p[1]
            # the padded window stops at the right padding; the clipped one at the input
            r1, c1 = min(r0 + k[0], h + p[0]), min(c0 + k[1], w + p[1])
            padded = (r1 - r0) * (c1 - c0)
            r0, c0, r1, c1 = max(r0, 0), max(c0, 0), min(r1, h), min(c1, w)
            window = planes[:, r0:r1, c0:c1]
            divisor = divisor_override or (padded if count_include_pad else window[0].size)
            y[:, a, b] = window.sum(axis=(1, 2)) / divisor
    return y.reshape(x.shape[:-2] + (oh, ow))


def adaptive_windows(size, out):
    return [(i * size // out, -(-(i + 1) * size // out)) for i in range(out)]


def adaptive_ref(x, out_hw, reduce):
    rows = adaptive_windows(x.shape[-2], out_hw[0])
    cols = adaptive_windows(x.shape[-1], out_hw[1])
    return np.stack([np.stack([reduce(x[..., r0:r1, c0:c1], axis=(-2, -1)) for c0, c1 in cols],
                              axis=-1) for r0, r1 in rows], axis=-2)


def scatter_ref(g, idx, shape):
    gx = np.zeros((int(np.prod(shape[:-2])), shape[-2] * shape[-1]), g.dtype)
    for q, (gq, iq) in enumerate(zip(g.reshape(gx.shape[0], -1), idx.reshape(gx.shape[0], -1))):
        np.add.at(gx[q], iq, gq)
    return gx.reshape(shape)


# (shape, kernel, stride, padding, dilation, ceil_mode)
MAX_CASES = [
    ((2, 3, 9, 11), (3, 3), (2, 2), (1, 1), (1, 1), True),
    ((2, 3, 10, 10), (2, 3), (2, 1), (1, 0), (2, 1), False),
    ((1, 2, 7, 7), (3, 3), (3, 3), (1, 1), (1, 1), True),     # ceil_mode overhang dropped
    ((2, 5, 8), (2, 2), (2, 2), (0, 0), (1, 1), True),         # unbatched (C, H, W)
    ((1, 1, 5, 5), (1, 1), (1, 1), (0, 0), (1, 1), False),     # 1x1 kernel
    ((3, 2, 6, 7), (3, 2), (1, 2), (1, 1), (2, 2), True),
    ((2, 3, 7, 9), (2, 2), (2, 2), (0, 0), (1, 1), False),     # 2x2 fast path, odd (floor)
    ((2, 3, 8, 6), (2, 2), (2, 2), (0, 0), (1, 1), True),      # 2x2 fast path, ceil == floor
    ((2, 3, 15, 15), (3, 3), (2, 2), (0, 0), (1, 1), False),   # direct path (AlexNet's pools)
    ((1, 2, 8, 8), (3, 3), (2, 2), (0, 0), (1, 1), True),      # ceil overhang: padded kernel
]


@pytest.mark.parametrize("kernel,stride", [((2, 2), (2, 2)), ((3, 3), (2, 2)), ((3, 2), (1, 3)),
                                           ((1, 1), (2, 2))])
@pytest.mark.parametrize("shape", [(3, 4, 6, 8), (2, 2, 5, 7), (1, 1, 3, 3),
                                   (2, 3, 18, 21)])  # 2x2/2 on wide rows: the taps' columns
def test_maxpool_direct_paths_match_general_kernel_on_ties_and_nans(rng, shape, kernel, stride):
    # the unpadded fast paths (2x2/2 unrolled, any window direct) against the padded-copy
    # kernel; small integers make ties common, NaN must win and a later NaN replace an earlier
    x = rng.integers(0, 3, shape).astype(np.float32)
    x[rng.random(shape) < 0.1] = np.nan
    x[rng.random(shape) < 0.1] = -np.inf
    y, idx = pool.maxpool2d_forward(x, kernel, stride, (0, 0), (1, 1), False)
    out_hw = y.shape[-2:]
    y_gen = np.empty_like(y)
    idx_gen = np.empty_like(idx)
    pool._k_maxpool_fwd(x.reshape((-1,) + shape[-2:]), y_gen.reshape((-1,) + out_hw),
                        idx_gen.reshape((-1,) + out_hw), *kernel, *stride, 0, 0, 1, 1)
    np.testing.assert_array_equal(y, y_gen)
    np.testing.assert_array_equal(idx, idx_gen)


@pytest.mark.parametrize("kernel,padding,ceil_mode", [
    ((3, 3), (1, 1), False),   # ResNet's stem pool
    ((3, 3), (1, 1), True),
    ((3, 3), (0, 0), True),    # the ceil_mode overhang sends unpadded pools here too
    ((2, 2), (1, 1), False),
    ((4, 3), (2, 1), True),
    ((1, 2), (0, 1), False),
])
@pytest.mark.parametrize("shape", [(3, 4, 9, 12), (2, 2, 8, 7), (1, 1, 3, 3), (2, 64, 32, 32)])
def test_maxpool_stride2_rows_match_general_kernel_on_ties_and_nans(rng, shape, kernel, padding,
                                                                  ceil_mode):
    # NOTE [Stride-2 max pooling by rows]: the same values and indices as the tap-by-tap
    # kernel; small integers make ties common, NaN must win and a later NaN replace an earlier,
    # and -inf windows (all taps -inf) report their first in-bounds element
    x = rng.integers(0, 3, shape).astype(np.float32)
    x[rng.random(shape) < 0.1] = np.nan
    x[rng.random(shape) < 0.2] = -np.inf
    planes = x.reshape((-1,) + shape[-2:])
    y, idx = pool.maxpool2d_forward(x, kernel, (2, 2), padding, (1, 1), ceil_mode)
    y_rows, idx_rows = np.empty_like(y), np.empty_like(idx)
    out_hw = y.shape[-2:]
    pool._k_maxpool_s2_fwd(planes, y_rows.reshape((-1,) + out_hw),
                           idx_rows.reshape((-1,) + out_hw), *kernel, *padding)
    y_gen, idx_gen = np.empty_like(y), np.empty_like(idx)
    pool._k_maxpool_fwd(planes, y_gen.reshape((-1,) + out_hw), idx_gen.reshape((-1,) + out_hw),
                        *kernel, 2, 2, *padding, 1, 1)
    np.testing.assert_array_equal(y_rows, y_gen)
    np.testing.assert_array_equal(idx_rows, idx_gen)
    np.testing.assert_array_equal(y, y_gen)  # maxpool2d_forward's own choice of kernel
    np.testing.assert_array_equal(idx, idx_gen)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", MAX_CASES)
def test_maxpool2d_matches_reference(rng, case, dtype):
    shape, k, s, p, d, ceil_mode = case
    x = rng.standard_normal(shape).astype(dtype)
    y, idx = pool.maxpool2d_forward(x, k, s, p, d, ceil_mode)
    y_ref, idx_ref = maxpool_ref(x, k, s, p, d, ceil_mode)
    np.testing.assert_array_equal(y, y_ref)
    np.testing.assert_array_equal(idx, idx_ref)
    assert idx.dtype == np.int64 and y.dtype == dtype
    g = rng.standard_normal(y.shape).astype(dtype)
    np.testing.assert_allclose(pool.maxpool2d_backward(g, idx, x.shape),
                               scatter_ref(g, idx, x.shape), **TOL[dtype])


def test_maxpool2d_propagates_nan_and_handles_empty_batch():
    x = np.array([[[[1.0, np.nan], [3.0, 2.0]]]])
    y, idx = pool.maxpool2d_forward(x, (2, 2), (2, 2), (0, 0), (1, 1), False)
    assert np.isnan(y[0, 0, 0, 0]) and idx[0, 0, 0, 0] == 1
    y, idx = pool.maxpool2d_forward(np.zeros((0, 3, 4, 4)), (2, 2), (2, 2), (0, 0), (1, 1), False)
    assert y.shape == (0, 3, 2, 2)
    assert pool.maxpool2d_backward(y, idx, (0, 3, 4, 4)).shape == (0, 3, 4, 4)


@pytest.mark.parity
def test_maxpool2d_all_neg_inf_window_matches_torch():
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    x = np.full((1, 1, 4, 5), -np.inf)
    x[0, 0, 3, 4] = 1.0
    x[0, 0, 0, 1] = np.nan
    args = ((2, 2), (2, 2), (1, 1), (1, 1), True)
    y, idx = pool.maxpool2d_forward(x, *args)
    y_t, idx_t = torch.nn.functional.max_pool2d(torch.tensor(x), *args, return_indices=True)
    np.testing.assert_array_equal(y, y_t.numpy())
    np.testing.assert_array_equal(idx, idx_t.numpy())


def test_maxpool2d_rejects_oversized_padding():
    with pytest.raises(RuntimeError, match="pad should be at most half"):
        pool.maxpool2d_forward(np.zeros((1, 1, 4, 4)), (2, 2), (1, 1), (2, 2), (1, 1), False)


# (shape, kernel, stride, padding, ceil_mode)
AVG_CASES = [
    ((2, 3, 9, 11), (3, 3), (2, 2), (1, 1), True),
    ((2, 3, 10, 10), (2, 3), (2, 1), (1, 0), False),
    ((1, 2, 7, 7), (3, 3), (3, 3), (1, 1), True),
    ((2, 5, 8), (2, 2), (2, 2), (0, 0), True),
    ((1, 2, 5, 6), (4, 4), (3, 3), (2, 1), True),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("divisor_override", [None, 3])
@pytest.mark.parametrize("case", AVG_CASES)
def test_avgpool2d_matches_reference(rng, case, count_include_pad, divisor_override, dtype):
    shape, k, s, p, ceil_mode = case
    x = rng.standard_normal(shape).astype(dtype)
    args = (k, s, p, ceil_mode, count_include_pad, divisor_override)
    y = pool.avgpool2d_forward(x, *args)
    np.testing.assert_allclose(y, avgpool_ref(x, *args), **TOL[dtype])
    # avg pooling is linear: its backward is the adjoint, <pool(x), g> == <x, gx>
    g = rng.standard_normal(y.shape).astype(dtype)
    gx = pool.avgpool2d_backward(g, x.shape, *args)
    np.testing.assert_allclose(np.vdot(x.astype(np.float64), gx),
                               np.vdot(y.astype(np.float64), g), **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("out_hw", [(3, 4), (5, 1), (1, 1), (7, 9), (2, 3)])
def test_adaptive_pools_match_reference(rng, out_hw, dtype):
    x = rng.standard_normal((2, 3, 7, 9)).astype(dtype)
    y = pool.adaptive_avgpool2d_forward(x, out_hw)
    np.testing.assert_allclose(y, adaptive_ref(x, out_hw, np.mean), **TOL[dtype])
    g = rng.standard_normal(y.shape).astype(dtype)
    gx = pool.adaptive_avgpool2d_backward(g, x.shape)
    np.testing.assert_allclose(np.vdot(x.astype(np.float64), gx),
                               np.vdot(y.astype(np.float64), g), **TOL[dtype])
    ym, idx = pool.adaptive_maxpool2d_forward(x, out_hw)
    np.testing.assert_array_equal(ym, adaptive_ref(x, out_hw, np.max))
    planes = x.reshape(6, -1)
    np.testing.assert_array_equal(np.take_along_axis(planes, idx.reshape(6, -1), 1),
                                  ym.reshape(6, -1))
    np.testing.assert_allclose(pool.adaptive_maxpool2d_backward(g, idx, x.shape),
                               scatter_ref(g, idx, x.shape), **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_global_average_pool_on_strided_input(rng, dtype):
    # pooling to 1x1 runs on flat planes (_global): a non-contiguous input and gradient too
    x = rng.standard_normal((3, 5, 4, 2)).astype(dtype).transpose(1, 0, 3, 2)
    y = pool.adaptive_avgpool2d_forward(x, 1)
    np.testing.assert_allclose(y, x.mean(axis=(2, 3), keepdims=True), **TOL[dtype])
    g = rng.standard_normal((1, 1, 5, 3)).astype(dtype).transpose(2, 3, 0, 1)
    gx = pool.adaptive_avgpool2d_backward(g, x.shape)
    np.testing.assert_allclose(gx, np.broadcast_to(g / 8, x.shape), **TOL[dtype])


def test_adaptive_pool_accepts_int_and_none(rng):
    x = rng.standard_normal((2, 4, 6))
    assert pool.adaptive_avgpool2d_forward(x, 3).shape == (2, 3, 3)
    assert pool.adaptive_maxpool2d_forward(x, (None, 2))[0].shape == (2, 4, 2)


# ---------------------------------------------------------------------------------------------
# torch parity


def _torch_run(torch, fn, x, g_seed):
    tx = torch.tensor(x, requires_grad=True)
    out = fn(tx)
    ty = out[0] if isinstance(out, tuple) else out
    g = np.random.default_rng(g_seed).standard_normal(tuple(ty.shape)).astype(x.dtype)
    ty.backward(torch.tensor(g))
    extra = out[1].numpy() if isinstance(out, tuple) else None
    return ty.detach().numpy(), extra, g, tx.grad.numpy()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", MAX_CASES)
@pytest.mark.parity
def test_maxpool2d_matches_torch(rng, case, dtype):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    shape, k, s, p, d, ceil_mode = case
    x = rng.standard_normal(shape).astype(dtype)
    y_t, idx_t, g, gx_t = _torch_run(torch, lambda t: torch.nn.functional.max_pool2d(
        t, k, s, p, d, ceil_mode=ceil_mode, return_indices=True), x, 5)
    y, idx = pool.maxpool2d_forward(x, k, s, p, d, ceil_mode)
    np.testing.assert_array_equal(y, y_t)
    np.testing.assert_array_equal(idx, idx_t)
    np.testing.assert_allclose(pool.maxpool2d_backward(g, idx, x.shape), gx_t, **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("divisor_override", [None, 2])
@pytest.mark.parametrize("case", AVG_CASES)
@pytest.mark.parity
def test_avgpool2d_matches_torch(rng, case, count_include_pad, divisor_override, dtype):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    shape, k, s, p, ceil_mode = case
    x = rng.standard_normal(shape).astype(dtype)
    args = (k, s, p, ceil_mode, count_include_pad, divisor_override)
    y_t, _, g, gx_t = _torch_run(torch, lambda t: torch.nn.functional.avg_pool2d(t, *args), x, 6)
    np.testing.assert_allclose(pool.avgpool2d_forward(x, *args), y_t, **TOL[dtype])
    np.testing.assert_allclose(pool.avgpool2d_backward(g, x.shape, *args), gx_t, **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("out_hw", [(3, 4), (5, 1), (1, 1), (7, 9), (4, 6)])
@pytest.mark.parity
def test_adaptive_pools_match_torch(rng, out_hw, dtype):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    functional = torch.nn.functional
    x = rng.standard_normal((2, 3, 7, 9)).astype(dtype)
    y_t, _, g, gx_t = _torch_run(torch, lambda t: functional.adaptive_avg_pool2d(t, out_hw), x, 7)
    np.testing.assert_allclose(pool.adaptive_avgpool2d_forward(x, out_hw), y_t, **TOL[dtype])
    np.testing.assert_allclose(pool.adaptive_avgpool2d_backward(g, x.shape), gx_t, **TOL[dtype])
    y_t, idx_t, g, gx_t = _torch_run(
        torch, lambda t: functional.adaptive_max_pool2d(t, out_hw, return_indices=True), x, 8)
    y, idx = pool.adaptive_maxpool2d_forward(x, out_hw)
    np.testing.assert_array_equal(y, y_t)
    np.testing.assert_array_equal(idx, idx_t)
    np.testing.assert_allclose(pool.adaptive_maxpool2d_backward(g, idx, x.shape), gx_t,
                               **TOL[dtype])
