"""The shape-dependent fast paths of the conv and pointwise kernels agree with torch / NumPy:
batch-as-columns 1x1 convolutions, channels-last depthwise convolutions, cache-sized im2col
chunks, conv2d_weight_grad, and the fused elementwise gradients."""
from __future__ import annotations

import math

import numpy as np
import pytest

from ember.ops._kernels import conv as K
from ember.ops._kernels import im2col as I
from ember.ops._kernels import pointwise as P
from ember.ops._kernels import split


def _torch_conv(x, w, stride, padding, dilation, groups, gy):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    tx = torch.tensor(x, requires_grad=True)
    tw = torch.tensor(w, requires_grad=True)
    ty = torch.nn.functional.conv2d(tx, tw, None, stride, padding, dilation, groups)
    ty.backward(torch.tensor(gy))
    return ty.detach().numpy(), tx.grad.numpy(), tw.grad.numpy()


def _check_conv(rng, n, c, hw, o, k, stride, padding, dilation, groups, dtype=np.float64):
    x = rng.standard_normal((n, c) + hw).astype(dtype)
    w = rng.standard_normal((o, c // groups, k, k)).astype(dtype)
    args = ((stride,) * 2, (padding,) * 2, (dilation,) * 2, groups)
    y = K.conv2d_forward(x, w, None, *args)
    gy = rng.standard_normal(y.shape).astype(dtype)
    gx, gw, _ = K.conv2d_backward(gy, x, w, *args, True, True, False)
    gw_alone = K.conv2d_weight_grad(gy, x, w.shape, *args)
    gx_alone = K.conv2d_backward(gy, x, w, *args, True, False, False)[0]
    ref = _torch_conv(x, w, stride, padding, dilation, groups, gy)
    tol = 1e-10 if dtype == np.float64 else 1e-4
    for got, want in zip((y, gx, gw, gw_alone, gx_alone), ref + (ref[2], ref[1]), strict=True):
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parity
@pytest.mark.parametrize("n, c, hw, o, groups", [
    (3, 8, (2, 2), 12, 1),     # few columns per sample: one GEMM over the batch
    (3, 8, (2, 2), 12, 2),
    (2, 64, (1, 3), 64, 1),    # L * (O + C) < O * C: transposed weight gradient
    (2, 16, (16, 16), 8, 1),   # per-sample GEMMs, accumulated weight gradient
])
def test_conv_pointwise_layouts_match_torch(rng, n, c, hw, o, groups):
    _check_conv(rng, n, c, hw, o, 1, 1, 0, 1, groups)


@pytest.mark.parity
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n, c, hw, k, stride, padding, dilation", [
    (2, 32, (4, 4), 3, 1, 1, 1),
    (2, 32, (5, 7), 3, 2, 1, 1),
    (3, 20, (6, 6), 3, 1, 2, 2),
    (2, 16, (2, 2), 3, 1, 1, 1),
    (1, 24, (7, 5), 5, 2, 2, 1),
    (2, 32, (9, 9), 3, 3, 0, 2),
])
def test_conv_depthwise_channels_last_matches_torch(rng, dtype, n, c, hw, k, stride, padding,
                                                    dilation):
    out_hw = I._out_hw(hw[0], hw[1], (k, k, stride, stride, padding, padding, dilation,
                                      dilation))
    assert K._channels_last_depthwise((n, c) + out_hw, (c, 1, k, k), c)
    _check_conv(rng, n, c, hw, c, k, stride, padding, dilation, c, dtype)


@pytest.mark.parity
def test_conv_im2col_chunks_match_torch(rng, monkeypatch):
    monkeypatch.setattr(K, "_CACHED_COLS", 1)  # one sample per chunk
    monkeypatch.setattr(K, "_MIN_COLUMNS", 1)
    _check_conv(rng, 3, 4, (7, 6), 6, 3, 2, 1, 1, 2)
    _check_conv(rng, 3, 4, (5, 5), 4, 3, 1, 1, 2, 1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape, k, stride, padding, dilation", [
    ((2, 3, 2, 2), (3, 3), (1, 1), (1, 1), (1, 1)),
    ((3, 2, 5, 4), (3, 2), (2, 1), (1, 0), (1, 2)),
    ((1, 4, 7, 7), (5, 5), (2, 2), (2, 2), (1, 1)),
    ((2, 2, 3, 9), (1, 3), (1, 3), (0, 4), (1, 1)),   # padding wider than the map
    ((2, 3, 6, 6), (3, 3), (3, 3), (0, 0), (2, 2)),
    ((2, 2, 3, 41), (3, 3), (1, 2), (1, 1), (1, 1)),  # strided: gathered at any width
])
@pytest.mark.parametrize("halves", [False, True])
def test_gathered_im2col_matches_the_row_kernels(rng, monkeypatch, halves, dtype, shape, k,
                                                 stride, padding, dilation):
    # NOTE [Gathered im2col on small maps]: both packings and both adjoints agree, also when
    # the gathers run in two halves of the channels on two threads (NOTE [Two halves on two
    # threads]; the NaN-filled outputs show that every entry is written)
    monkeypatch.setattr(split, "_MIN_WORK", 0 if halves else 1 << 62)
    x = rng.standard_normal(shape).astype(dtype)
    geo = K._geometry((1, shape[1]) + k, stride, padding, dilation)
    out_h, out_w = I._out_hw(shape[2], shape[3], geo)
    assert I._gathered(geo, shape[0], out_h, out_w)
    rows = np.empty((shape[1] * k[0] * k[1], shape[0], out_h * out_w), dtype)
    gathered = np.full_like(rows, np.nan)
    I._k_unfold_fwd(x, rows, *geo, out_h, out_w)
    I._unfold(x, gathered, geo, out_h, out_w)
    np.testing.assert_array_equal(gathered, rows)
    cols = rng.standard_normal(rows.shape).astype(dtype)
    want, got = np.empty_like(x), np.full_like(x, np.nan)
    I._k_unfold_bwd(cols, want, *geo, out_h, out_w)
    I._fold(cols, got, geo, out_h, out_w)
    np.testing.assert_allclose(got, want, rtol=1e-12 if dtype == np.float64 else 1e-5, atol=1e-6)


def test_gathered_im2col_keeps_big_tables_out():
    # one table entry per tap and output position of the batch; past the cap the row kernels run
    geo = K._geometry((1, 3, 3, 3), (2, 2), (1, 1), (1, 1))
    assert I._gathered(geo, 8, 32, 32)
    assert not I._gathered(geo, 32, 112, 112)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("keep", [None, []])
@pytest.mark.parametrize("one_per_chunk", [False, True])
def test_conv_bias_added_in_the_transposing_copy(rng, monkeypatch, dtype, keep, one_per_chunk):
    # the im2col path adds the bias while copying the GEMM's product into NCHW (_k_unbatch)
    if one_per_chunk:
        monkeypatch.setattr(K, "_CACHED_COLS", 1)
        monkeypatch.setattr(K, "_MIN_COLUMNS", 1)
    x = rng.standard_normal((3, 4, 6, 5)).astype(dtype)
    w = rng.standard_normal((6, 4, 3, 3)).astype(dtype)
    b = rng.standard_normal(6).astype(dtype)
    args = ((1, 1), (1, 1), (1, 1), 1)
    y = K.conv2d_forward(x, w, b, *args, keep=keep)
    y0 = K.conv2d_forward(x, w, None, *args)
    assert y.dtype == dtype
    tol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(y, y0 + b.reshape(1, -1, 1, 1), rtol=tol, atol=tol)
    ref = np.einsum("nchw,oc->nohw", x[:, :, 1:-1, 1:-1], w[:, :, 1, 1])  # centre tap only
    w_centre = np.zeros_like(w)
    w_centre[:, :, 1, 1] = w[:, :, 1, 1]
    got = K.conv2d_forward(x, w_centre, b, *args, keep=keep)[:, :, 1:-1, 1:-1]
    np.testing.assert_allclose(got, ref + b.reshape(1, -1, 1, 1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pointwise_grads_match_numpy(rng, dtype):
    g = rng.standard_normal((3, 4, 5)).astype(dtype)
    x = rng.standard_normal((3, 4, 5)).astype(dtype) * 3
    x[0, 0, :2] = [0.0, np.nan]
    x[0, 1, :2] = [np.inf, -np.inf]
    # torch's rules: hardtanh passes strictly inside (NaN: 0); relu (hi=None) zeroes x <= 0 only
    np.testing.assert_array_equal(P.masked_grad(g, x, 0, None), np.where(x <= 0, 0, g))
    np.testing.assert_array_equal(P.masked_grad(g, x, 0, math.inf),
                                  np.where((x > 0) & (x < np.inf), g, 0))
    np.testing.assert_array_equal(P.masked_grad(g, x, -1.0, 1.0),
                                  np.where((x > -1) & (x < 1), g, 0))
    y = np.tanh(np.nan_to_num(x))
    np.testing.assert_allclose(P.tanh_grad(g, y), g * (1 - y * y), rtol=1e-6)
    np.testing.assert_allclose(P.sigmoid_grad(g, y), g * y * (1 - y), rtol=1e-6)
    for fn in (P.masked_grad, P.tanh_grad, P.sigmoid_grad):  # the kernels keep the dtype
        args = (0, None) if fn is P.masked_grad else ()
        assert fn(g, y, *args).dtype == dtype
    # strided and broadcast gradients take the NumPy fallback
    np.testing.assert_allclose(P.tanh_grad(g[:, ::2], y[:, ::2]),
                               g[:, ::2] * (1 - y[:, ::2] ** 2), rtol=1e-6)
    np.testing.assert_array_equal(P.masked_grad(np.ones((), dtype), x, 0, None),
                                  (~(x <= 0)).astype(dtype))
    # a strided gradient of the same shape (a slice of a concatenation's gradient) and a
    # strided x: copied dense, then the kernel
    wide = rng.standard_normal((3, 4, 9)).astype(dtype)
    np.testing.assert_array_equal(P.masked_grad(wide[..., 4:], x, -1.0, 1.0),
                                  np.where((x > -1) & (x < 1), wide[..., 4:], 0))
    np.testing.assert_array_equal(P.masked_grad(g, wide[..., :5], 0, None),
                                  np.where(wide[..., :5] <= 0, 0, g))


@pytest.mark.parametrize("fn,ref", [(P.tanh_grad, lambda g, y: g * (1 - y * y)),
                                    (P.sigmoid_grad, lambda g, y: g * y * (1 - y))])
@pytest.mark.parametrize("layout", ["both permuted", "y permuted", "g permuted", "mixed dtype"])
def test_pointwise_grads_on_permuted_layouts(rng, fn, ref, layout):
    # elementwise results of permuted inputs keep the permuted layout (numpy's order "K"), so
    # y = tanh(q + k) in attention is not C-contiguous: same layouts fuse on the flat memory,
    # different ones take the one-temporary NumPy path
    base = rng.standard_normal((4, 3, 5))
    y = np.tanh(base).transpose(2, 0, 1)
    g = rng.standard_normal((5, 4, 3))
    if layout == "both permuted":
        g = np.ascontiguousarray(g.transpose(1, 2, 0)).transpose(2, 0, 1)
        assert g.strides == y.strides
    elif layout == "g permuted":
        g, y = g.transpose(0, 2, 1), np.ascontiguousarray(y.transpose(0, 2, 1))
    elif layout == "mixed dtype":
        y = y.astype(np.float32)
    out = fn(g, y)
    assert out.shape == y.shape and out.dtype == np.result_type(g, y)
    np.testing.assert_allclose(out, ref(g, y), rtol=1e-6)


def test_index_add_rows_matches_add_at(rng):
    index = rng.integers(0, 7, 50)
    rows = rng.standard_normal((50, 3)).astype(np.float32)
    want = np.zeros((7, 3), np.float32)
    np.add.at(want, index, rows)
    np.testing.assert_array_equal(P.index_add_rows(7, index, rows), want)



@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(3, 30, 40), (4, 7), (64, 1024)])
@pytest.mark.parametrize("layout", ["contiguous", "strided y", "strided b"])
def test_add_row_adds_the_bias_to_every_row(rng, dtype, shape, layout):
    """A Linear's bias: the kernel (big C-contiguous y) or NumPy's add, the same sums."""
    y = rng.standard_normal(shape).astype(dtype)
    b = rng.standard_normal(shape[-1]).astype(dtype)
    if layout == "strided y":
        y = np.asfortranarray(y)
    if layout == "strided b":
        b = np.repeat(b, 2)[::2]
    want = y + b
    out = P.add_row(y, b)
    assert out is y
    np.testing.assert_array_equal(out, want)


_CLAMP_EDGES = np.array([-0.0, 0.0, np.nan, -np.inf, np.inf, -1.5, 0.25, 5.9, 6.0, 7.0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("lo, hi", [(0.0, math.inf), (0.0, 6.0), (-1.0, 1.0)])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
def test_clamp_kernel_matches_torch_clamp_bit_for_bit(rng, dtype, lo, hi, layout):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    x = np.concatenate([_CLAMP_EDGES, rng.standard_normal(54) * 4]).astype(dtype).reshape(8, 8)
    x = {"contiguous": x, "transposed": x.T, "strided": x[:, ::2]}[layout]
    got = P.clamp(x, lo, hi)
    want = torch.clamp(torch.from_numpy(np.array(x)), lo, hi).numpy()
    assert got.dtype == dtype and got.shape == x.shape
    # same values, NaN where torch has NaN, and the sign of zero kept (-0.0 stays -0.0)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


_ROW_CASES = [((32, 20, 1, 64), (32, 1, 20, 64)),   # attention's q + k
              ((32, 20, 20, 64), (64,)),            # a bias on the last axis
              ((4096, 1), (1, 64)),                 # an outer product (scalar rows)
              ((64, 1, 8, 1), (1, 16, 1, 64)),      # both operands broadcast
              ((2, 8, 2048), (8, 1))]               # a per-row scalar on the right


@pytest.mark.parametrize("shapes", _ROW_CASES)
@pytest.mark.parametrize("op, ref", [("add", np.add), ("sub", np.subtract),
                                     ("mul", np.multiply)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_row_broadcast_kernels_match_numpy_exactly(rng, shapes, op, ref, dtype):
    a, b = (rng.standard_normal(s).astype(dtype) for s in shapes)
    a.reshape(-1)[:4] = [np.nan, np.inf, -0.0, 0.0]  # special values go through unchanged
    for x, y in ((a, b), (b, a)):
        got = P.broadcast_binary(op, x, y)
        assert got is not None and got.dtype == dtype
        np.testing.assert_array_equal(got, ref(x, y))
        np.testing.assert_array_equal(np.signbit(got), np.signbit(ref(x, y)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_row_broadcast_of_permuted_operands(rng, dtype):
    # attention: projections (T, B, H) permuted to (B, T, 1, H) and (B, 1, S, H)
    q = rng.standard_normal((20, 32, 64)).astype(dtype).transpose(1, 0, 2)[:, :, None]
    k = rng.standard_normal((20, 32, 64)).astype(dtype).transpose(1, 0, 2)[:, None]
    assert not q.flags.c_contiguous and not k.flags.c_contiguous
    for op, ref in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply)):
        got = P.broadcast_binary(op, q, k)
        assert got is not None
        np.testing.assert_array_equal(got, ref(q, k))
    bias = np.broadcast_to(rng.standard_normal(64).astype(dtype), (32, 1, 1, 64))  # stride 0
    np.testing.assert_array_equal(P.broadcast_binary("add", q, bias), q + bias)
    # a full-shape operand dense in a permuted order lends the result its layout, as in NumPy
    e = q + k
    assert not e.flags.c_contiguous
    got = P.broadcast_binary("add", e, bias[0, 0, 0])
    np.testing.assert_array_equal(got, e + bias[0, 0, 0])
    assert got.strides == e.strides


@pytest.mark.parametrize("a, b", [
    (np.ones((256, 512), np.float32)[:, ::-1], np.ones((256, 1), np.float32)),  # flipped
    (np.ones((4, 1), np.float32), np.ones((1, 64), np.float32)),        # small output
    (np.ones((512, 1), np.int64), np.ones((1, 256), np.int64)),         # integers
    (np.ones((512, 1), np.float32), np.ones((1, 256), np.float64)),     # mixed dtypes
    (np.ones((256, 512), np.float32)[:, ::2], np.ones(256, np.float32)),  # strided
    (np.ones((512, 1), np.float32), np.ones((1, 1), np.float32)),       # no row axis
    (np.ones((512, 256), np.float32), np.ones((512, 256), np.float32)),  # same shape
    (np.ones((8, 4, 64, 64), np.float32), np.ones((), np.float32)),      # one number
    (np.ones((1, 1, 1), np.float32), np.ones((8, 64, 64), np.float32)),  # one number, left
])
def test_row_broadcast_leaves_other_cases_to_numpy(a, b):
    assert P.broadcast_binary("add", a, b) is None


def test_tensor_times_a_number_equals_numpy_bit_for_bit(rng):
    import ember
    a = rng.standard_normal((8, 4, 64, 64)).astype(np.float32)
    a.reshape(-1)[:3] = [np.nan, -np.inf, -0.0]
    x = ember.from_numpy(a)
    for got, want in ((x * 0.125, a * np.float32(0.125)), (0.3 + x, np.float32(0.3) + a),
                      (x - ember.tensor(2.5), a - np.float32(2.5))):
        assert got.dtype == ember.float32
        np.testing.assert_array_equal(got.numpy(), want)
        np.testing.assert_array_equal(np.signbit(got.numpy()), np.signbit(want))


def test_row_broadcast_raises_numpys_error_for_bad_shapes():
    with pytest.raises(ValueError, match="broadcast"):
        P.broadcast_binary("add", np.ones((64, 512), np.float32), np.ones((3, 1), np.float32))


def test_broadcast_arithmetic_and_gradients_match_torch(rng):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    import ember
    q = rng.standard_normal((8, 20, 1, 64)).astype(np.float32)
    k = rng.standard_normal((8, 1, 20, 64)).astype(np.float32)
    v = rng.standard_normal(64).astype(np.float32)
    e = [ember.tensor(a, requires_grad=True) for a in (q, k, v)]
    t = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
    ey = ((e[0] + e[1]) * e[2] - e[1]).tanh()
    ty = ((t[0] + t[1]) * t[2] - t[1]).tanh()
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-6)
    g = rng.standard_normal(tuple(ty.shape)).astype(np.float32)
    ey.backward(ember.tensor(g))
    ty.backward(torch.tensor(g))
    for a, b in zip(e, t, strict=True):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape, mult, k, stride, padding, dilation", [
    # strided: NOTE [Strided depthwise backward on the stride-1 grid]
    ((2, 3, 9, 11), 1, (3, 3), (2, 2), (1, 1), (1, 1)),   # odd sizes, stride 2
    ((2, 3, 10, 10), 2, (3, 3), (2, 2), (1, 1), (1, 1)),  # channel multiplier 2
    ((1, 4, 13, 12), 1, (5, 3), (3, 2), (2, 0), (1, 1)),  # stride 3 x 2, asymmetric kernel
    ((2, 2, 12, 12), 1, (3, 3), (2, 2), (2, 2), (2, 2)),  # dilated and strided
    ((2, 2, 7, 8), 1, (3, 3), (2, 1), (0, 1), (1, 2)),    # mixed stride and dilation
    ((1, 3, 16, 16), 1, (3, 3), (2, 2), (1, 1), (1, 1)),  # the planar (not channels-last) size
    # stride 1: NOTE [Flat stride-1 depthwise]
    ((2, 3, 9, 11), 1, (3, 3), (1, 1), (1, 1), (1, 1)),   # 3-wide rows: one pass per kernel row
    ((2, 3, 10, 10), 2, (3, 3), (1, 1), (2, 2), (2, 2)),  # dilated, multiplier 2
    ((1, 4, 8, 9), 1, (3, 3), (1, 1), (0, 0), (1, 1)),    # no padding
    ((2, 2, 9, 9), 1, (5, 5), (1, 1), (2, 2), (1, 1)),    # other widths keep the per-tap loop
    ((1, 2, 7, 8), 1, (3, 2), (1, 1), (1, 0), (1, 1)),    # asymmetric kernel
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_planar_depthwise_matches_torch(rng, dtype, shape, mult, k, stride, padding, dilation):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    c = shape[1]
    x = rng.standard_normal(shape).astype(dtype)
    wt = rng.standard_normal((c * mult, 1) + k).astype(dtype)
    geo = (k[0], k[1], *stride, *padding, *dilation)
    y = K._conv_forward(x, wt, geo, c)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(wt, requires_grad=True)
    ty = torch.nn.functional.conv2d(tx, tw, None, stride, padding, dilation, c)
    tol = ({"rtol": 1e-4, "atol": 1e-4} if dtype == np.float32
           else {"rtol": 1e-10, "atol": 1e-10})
    np.testing.assert_allclose(y, ty.detach().numpy(), **tol)
    gy = rng.standard_normal(y.shape).astype(dtype)
    ty.backward(torch.tensor(gy))
    np.testing.assert_allclose(K._conv_input_grad(gy, wt, x.shape, geo, c), tx.grad.numpy(), **tol)
    np.testing.assert_allclose(K._conv_weight_grad(gy, x, wt.shape, geo, c), tw.grad.numpy(), **tol)
    gx, gw, _ = K.conv2d_backward(gy, x, wt, stride, padding, dilation, c, True, True, False)
    np.testing.assert_allclose(gx, tx.grad.numpy(), **tol)  # one spread grad_y for both
    np.testing.assert_allclose(gw, tw.grad.numpy(), **tol)


@pytest.mark.parametrize("stride", [1, 2])
def test_channels_last_depthwise_layer_matches_torch(rng, stride):
    # through nn.Conv2d: the forward keeps nothing, the backward computes both gradients at once
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    import ember
    x = rng.standard_normal((4, 32, 8, 8)).astype(np.float32)
    ref = torch.nn.Conv2d(32, 32, 3, stride, 1, groups=32, bias=False)
    ours = ember.nn.Conv2d(32, 32, 3, stride, 1, groups=32, bias=False)
    ours.weight.data = ember.tensor(ref.weight.detach().numpy())
    keep = []
    K._conv_forward(x, ours.weight.detach().numpy(), (3, 3, stride, stride, 1, 1, 1, 1), 32, keep)
    assert keep == []
    ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ey, ty = ours(ex), ref(tx)
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), rtol=1e-4, atol=1e-4)
    g = rng.standard_normal(tuple(ty.shape)).astype(np.float32)
    ey.backward(ember.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(ours.weight.grad.numpy(), ref.weight.grad.numpy(), rtol=1e-4,
                               atol=1e-3)
