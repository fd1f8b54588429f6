"""ember.ops._kernels.conv against direct NumPy references, adjoint identities and torch."""

import numpy as np
import pytest

from ember.ops._kernels import conv, im2col

TOL = {np.float64: {"rtol": 1e-10, "atol": 1e-10}, np.float32: {"rtol": 1e-4, "atol": 1e-4}}


def _out(size, k, s, p, d):
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _tap(xp, i, j, stride, dilation, out_h, out_w):
    """The (N, C, OH, OW) slice of a padded input that kernel tap (i, j) sees."""
    h0, w0 = i * dilation[0], j * dilation[1]
    return xp[:, :, h0:h0 + stride[0] * (out_h - 1) + 1:stride[0],
              w0:w0 + stride[1] * (out_w - 1) + 1:stride[1]]


def conv2d_ref(x, w, b, stride, padding, dilation, groups):
    """Direct tap-by-tap convolution, one einsum per group and kernel tap."""
    n, _, h, wd = x.shape
    o, cg, kh, kw = w.shape
    out_h = _out(h, kh, stride[0], padding[0], dilation[0])
    out_w = _out(wd, kw, stride[1], padding[1], dilation[1])
    xp = np.pad(x, ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    y = np.zeros((n, o, out_h, out_w), x.dtype)
    og = o // groups
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                patch = _tap(xp[:, g * cg:(g + 1) * cg], i, j, stride, dilation, out_h, out_w)
                y[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch,
                                                       w[g * og:(g + 1) * og, :, i, j])
    return y if b is None else y + b.reshape(1, -1, 1, 1)


def conv_transpose2d_ref(x, w, b, stride, padding, dilation, groups, output_padding):
    """Direct scatter definition: every input pixel adds w * x at its kernel footprint."""
    n, cin, h, wd = x.shape
    _, cog, kh, kw = w.shape
    out_h = (h - 1) * stride[0] - 2 * padding[0] + dilation[0] * (kh - 1) + output_padding[0] + 1
    out_w = (wd - 1) * stride[1] - 2 * padding[1] + dilation[1] * (kw - 1) + output_padding[1] + 1
    yp = np.zeros((n, cog * groups, out_h + 2 * padding[0] + stride[0] + dilation[0] * kh,
                   out_w + 2 * padding[1] + stride[1] + dilation[1] * kw), x.dtype)
    cig = cin // groups
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                contrib = np.einsum("nchw,co->nohw", x[:, g * cig:(g + 1) * cig],
                                    w[g * cig:(g + 1) * cig, :, i, j])
                h0, w0 = i * dilation[0], j * dilation[1]
                yp[:, g * cog:(g + 1) * cog, h0:h0 + stride[0] * (h - 1) + 1:stride[0],
                   w0:w0 + stride[1] * (wd - 1) + 1:stride[1]] += contrib
    y = yp[:, :, padding[0]:padding[0] + out_h, padding[1]:padding[1] + out_w]
    return y if b is None else y + b.reshape(1, -1, 1, 1)


# (x shape, w shape, stride, padding, dilation, groups)
CONV_CASES = [
    ((2, 3, 7, 9), (4, 3, 3, 2), (2, 1), (1, 2), (2, 1), 1),     # odd sizes, asymmetric
    ((2, 4, 7, 9), (6, 2, 3, 3), (1, 2), (1, 1), (1, 1), 2),     # groups
    ((2, 4, 7, 9), (8, 1, 3, 3), (1, 2), (1, 1), (1, 2), 4),     # depthwise, multiplier 2
    ((3, 5, 8, 8), (5, 1, 3, 3), (2, 2), (1, 1), (1, 1), 5),     # depthwise stride 2
    ((2, 3, 6, 7), (3, 1, 3, 3), (1, 1), (1, 1), (1, 1), 3),     # depthwise stride 1 (flat)
    ((2, 2, 7, 6), (4, 1, 3, 2), (1, 1), (2, 0), (2, 1), 2),     # flat, dilated, multiplier
    ((2, 3, 9, 9), (4, 3, 3, 3), (3, 3), (1, 1), (1, 1), 1),     # runtime stride 3
    ((2, 4, 7, 9), (8, 4, 1, 1), (1, 1), (0, 0), (1, 1), 1),     # pointwise fast path
    ((2, 4, 6, 6), (6, 2, 1, 1), (1, 1), (0, 0), (1, 1), 2),     # grouped pointwise
    ((3, 16, 2, 3), (24, 16, 1, 1), (1, 1), (0, 0), (1, 1), 1),  # thin pointwise, shared cols
    ((2, 8, 8, 8), (16, 8, 1, 1), (1, 1), (0, 0), (1, 1), 1),    # 8x8 maps: batch as columns
    ((2, 16, 2, 2), (32, 8, 1, 1), (1, 1), (0, 0), (1, 1), 2),   # the same, grouped
    ((2, 4, 7, 9), (8, 4, 1, 1), (2, 2), (0, 0), (1, 1), 1),     # strided 1x1
    ((1, 3, 5, 5), (2, 3, 5, 5), (1, 1), (2, 2), (1, 1), 1),     # batch 1, kernel = input
    ((3, 4, 1, 20), (8, 4, 1, 5), (1, 1), (0, 2), (1, 1), 1),    # 1-D conv as H == 1
    ((2, 1, 6, 7), (3, 1, 3, 3), (1, 1), (0, 0), (1, 1), 1),     # one input channel
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_forward_matches_reference(rng, case, dtype):
    xs, ws, stride, padding, dilation, groups = case
    x = rng.standard_normal(xs).astype(dtype)
    w = rng.standard_normal(ws).astype(dtype)
    b = rng.standard_normal(ws[0]).astype(dtype)
    y = conv.conv2d_forward(x, w, b, stride, padding, dilation, groups)
    assert y.dtype == dtype and y.flags.c_contiguous
    ref = conv2d_ref(x, w, b, stride, padding, dilation, groups)
    np.testing.assert_allclose(y, ref, **TOL[dtype])


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_backward_is_adjoint(rng, case):
    # conv is linear in x and in w: <conv(x, w), g> == <x, gx> == <w, gw>
    xs, ws, stride, padding, dilation, groups = case
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    y = conv.conv2d_forward(x, w, None, stride, padding, dilation, groups)
    g = rng.standard_normal(y.shape)
    gx, gw, gb = conv.conv2d_backward(g, x, w, stride, padding, dilation, groups,
                                      True, True, True)
    inner = np.vdot(y, g)
    np.testing.assert_allclose(np.vdot(x, gx), inner, rtol=1e-10)
    np.testing.assert_allclose(np.vdot(w, gw), inner, rtol=1e-10)
    np.testing.assert_allclose(gb, g.sum(axis=(0, 2, 3)), rtol=1e-12)


@pytest.mark.parametrize("few_outputs", [0, 10 ** 6])
@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_weight_grad_both_orientations(rng, monkeypatch, case, few_outputs):
    # the weight gradient is computed as gy @ cols^T or, for few output channels, transposed
    # (cols @ gy^T); force each and compare with the reference's adjoint (sum over taps)
    monkeypatch.setattr(conv, "_FEW_OUTPUTS", few_outputs)
    xs, ws, stride, padding, dilation, groups = case
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    g = rng.standard_normal(conv2d_ref(x, w, None, stride, padding, dilation, groups).shape)
    gw = conv.conv2d_weight_grad(g, x, ws, stride, padding, dilation, groups)
    eps = np.zeros(ws)
    ref = np.empty(ws)
    for idx in np.ndindex(ws):  # <conv(x, e_idx), g>: the exact gradient of a linear map
        eps[idx] = 1.0
        ref[idx] = np.vdot(conv2d_ref(x, eps, None, stride, padding, dilation, groups), g)
        eps[idx] = 0.0
    assert gw.shape == ws and gw.flags.c_contiguous
    np.testing.assert_allclose(gw, ref, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("one_sample_chunks", [False, True])
@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_kept_im2col_gives_the_same_weight_gradient(rng, monkeypatch, case,
                                                           one_sample_chunks):
    # NOTE [Keeping the forward's im2col]: the forward's packed matrix replaces re-packing x
    if one_sample_chunks:  # the plain forward and weight gradient then work chunk by chunk
        monkeypatch.setattr(conv, "_CACHED_COLS", 1)
        monkeypatch.setattr(conv, "_MIN_COLUMNS", 1)
        assert conv._batch_chunk(27, 16) == 1
    xs, ws, stride, padding, dilation, groups = case
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    keep = []
    y = conv.conv2d_forward(x, w, None, stride, padding, dilation, groups, keep)
    # one whole-batch GEMM when keeping, chunked ones otherwise: equal up to rounding
    np.testing.assert_allclose(y, conv.conv2d_forward(x, w, None, stride, padding, dilation,
                                                      groups), rtol=1e-12, atol=1e-12)
    g = rng.standard_normal(y.shape)
    packed = keep[0] if keep else None  # depthwise and most pointwise layers build none
    gw = conv.conv2d_weight_grad(g, x, ws, stride, padding, dilation, groups, packed)
    np.testing.assert_allclose(gw, conv.conv2d_weight_grad(g, x, ws, stride, padding, dilation,
                                                           groups), rtol=1e-12, atol=1e-12)


def test_conv_retained_graph_second_backward_packs_again(rng):
    import ember
    x = ember.tensor(rng.standard_normal((2, 3, 6, 6)), requires_grad=True)
    w = ember.tensor(rng.standard_normal((4, 3, 3, 3)), requires_grad=True)
    y = ember.nn.functional.conv2d(x, w, padding=1).pow(2).sum()
    y.backward(retain_graph=True)
    first = w.grad.numpy().copy()
    w.grad = None
    y.backward()
    np.testing.assert_allclose(w.grad.numpy(), first, rtol=1e-12)


def test_conv2d_backward_skips_unrequested(rng):
    x, w = rng.standard_normal((2, 3, 5, 5)), rng.standard_normal((4, 3, 3, 3))
    g = rng.standard_normal((2, 4, 3, 3))
    gx, gw, gb = conv.conv2d_backward(g, x, w, (1, 1), (0, 0), (1, 1), 1, False, True, False)
    assert gx is None and gb is None and gw.shape == w.shape


@pytest.mark.parametrize("groups, ws", [(1, (4, 3, 3, 3)), (3, (6, 1, 3, 3))])
def test_conv2d_empty_batch(rng, groups, ws):
    x = np.zeros((0, 3, 6, 6))
    w = rng.standard_normal(ws)
    y = conv.conv2d_forward(x, w, None, (1, 1), (1, 1), (1, 1), groups)
    assert y.shape == (0, ws[0], 6, 6)
    gx, gw, gb = conv.conv2d_backward(y, x, w, (1, 1), (1, 1), (1, 1), groups, True, True, True)
    assert gx.shape == x.shape and np.all(gw == 0) and np.all(gb == 0)


def test_conv2d_large_batch_is_chunked(rng, monkeypatch):
    # a tiny im2col budget forces several batch chunks through the same code path
    monkeypatch.setattr(conv, "_COLS_BUDGET", 200)
    x, w = rng.standard_normal((5, 2, 6, 6)), rng.standard_normal((3, 2, 3, 3))
    y = conv.conv2d_forward(x, w, None, (1, 1), (1, 1), (1, 1), 1)
    np.testing.assert_allclose(y, conv2d_ref(x, w, None, (1, 1), (1, 1), (1, 1), 1), rtol=1e-10)
    g = rng.standard_normal(y.shape)
    gx, gw, _ = conv.conv2d_backward(g, x, w, (1, 1), (1, 1), (1, 1), 1, True, True, False)
    np.testing.assert_allclose(np.vdot(x, gx), np.vdot(y, g), rtol=1e-10)
    np.testing.assert_allclose(np.vdot(w, gw), np.vdot(y, g), rtol=1e-10)


# (x shape, w shape, stride, padding, dilation, groups, output_padding)
TRANSPOSED_CASES = [
    ((2, 4, 5, 6), (4, 3, 3, 2), (2, 1), (1, 0), (1, 2), 1, (1, 0)),
    ((2, 4, 5, 6), (4, 2, 3, 3), (2, 2), (1, 1), (1, 1), 2, (1, 1)),
    ((2, 4, 5, 6), (4, 1, 3, 3), (1, 1), (1, 1), (1, 1), 4, (0, 0)),   # depthwise path
    ((1, 3, 4, 4), (3, 5, 1, 1), (1, 1), (0, 0), (1, 1), 1, (0, 0)),   # pointwise path
    ((2, 3, 1, 7), (3, 2, 1, 4), (1, 3), (0, 1), (1, 1), 1, (0, 2)),   # 1-D
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", TRANSPOSED_CASES)
def test_conv_transpose2d_matches_reference(rng, case, dtype):
    xs, ws, stride, padding, dilation, groups, out_pad = case
    x = rng.standard_normal(xs).astype(dtype)
    w = rng.standard_normal(ws).astype(dtype)
    b = rng.standard_normal(ws[1] * groups).astype(dtype)
    y = conv.conv_transpose2d_forward(x, w, b, stride, padding, dilation, groups, out_pad)
    ref = conv_transpose2d_ref(x, w, b, stride, padding, dilation, groups, out_pad)
    assert y.dtype == dtype
    np.testing.assert_allclose(y, ref, **TOL[dtype])
    g = rng.standard_normal(y.shape).astype(dtype)
    gx, gw, gb = conv.conv_transpose2d_backward(g, x, w, stride, padding, dilation, groups,
                                                out_pad, True, True, True)
    inner = np.vdot((y - b.reshape(1, -1, 1, 1)).astype(np.float64), g)
    np.testing.assert_allclose(np.vdot(x.astype(np.float64), gx), inner, **TOL[dtype])
    np.testing.assert_allclose(np.vdot(w.astype(np.float64), gw), inner, **TOL[dtype])
    np.testing.assert_allclose(gb, g.sum(axis=(0, 2, 3)), **TOL[dtype])


def unfold_ref(x, kernel, dilation, padding, stride):
    n, c, h, wd = x.shape
    out_h = _out(h, kernel[0], stride[0], padding[0], dilation[0])
    out_w = _out(wd, kernel[1], stride[1], padding[1], dilation[1])
    xp = np.pad(x, ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    taps = [_tap(xp, i, j, stride, dilation, out_h, out_w)
            for i in range(kernel[0]) for j in range(kernel[1])]
    # rows ordered (c, i, j), columns (oh, ow)
    return np.stack(taps, axis=2).reshape(n, c * kernel[0] * kernel[1], out_h * out_w)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_unfold_fold_match_reference_and_are_adjoint(rng, dtype):
    x = rng.standard_normal((2, 3, 7, 8)).astype(dtype)
    args = ((2, 3), (1, 2), (1, 1), (2, 1))
    cols = im2col.unfold(x, *args)
    np.testing.assert_array_equal(cols, unfold_ref(x, *args))
    g = rng.standard_normal(cols.shape).astype(dtype)
    folded = im2col.fold(g, (7, 8), *args)
    assert folded.shape == x.shape and folded.dtype == dtype
    np.testing.assert_allclose(np.vdot(x.astype(np.float64), folded),
                               np.vdot(cols.astype(np.float64), g), **TOL[dtype])


def test_fold_rejects_mismatched_input(rng):
    with pytest.raises(RuntimeError, match="fold"):
        im2col.fold(rng.standard_normal((1, 6, 5)), (4, 4), (2, 2), (1, 1), (0, 0), (1, 1))


# ---------------------------------------------------------------------------------------------
# torch parity (forward and autograd gradients)


def _torch_conv_grads(torch, fn, x, w, b, g, *args):
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    tb = torch.tensor(b, requires_grad=True)
    ty = fn(tx, tw, tb, *args)
    ty.backward(torch.tensor(g))
    return ty.detach().numpy(), tx.grad.numpy(), tw.grad.numpy(), tb.grad.numpy()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", CONV_CASES)
@pytest.mark.parity
def test_conv2d_matches_torch(rng, case, dtype):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    xs, ws, stride, padding, dilation, groups = case
    x = rng.standard_normal(xs).astype(dtype)
    w = rng.standard_normal(ws).astype(dtype)
    b = rng.standard_normal(ws[0]).astype(dtype)
    y = conv.conv2d_forward(x, w, b, stride, padding, dilation, groups)
    g = rng.standard_normal(y.shape).astype(dtype)
    ours = (y,) + conv.conv2d_backward(g, x, w, stride, padding, dilation, groups,
                                       True, True, True)
    ref = _torch_conv_grads(torch, torch.nn.functional.conv2d, x, w, b, g,
                            stride, padding, dilation, groups)
    for got, want in zip(ours, ref, strict=True):
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", TRANSPOSED_CASES)
@pytest.mark.parity
def test_conv_transpose2d_matches_torch(rng, case, dtype):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    xs, ws, stride, padding, dilation, groups, out_pad = case
    x = rng.standard_normal(xs).astype(dtype)
    w = rng.standard_normal(ws).astype(dtype)
    b = rng.standard_normal(ws[1] * groups).astype(dtype)
    y = conv.conv_transpose2d_forward(x, w, b, stride, padding, dilation, groups, out_pad)
    g = rng.standard_normal(y.shape).astype(dtype)
    ours = (y,) + conv.conv_transpose2d_backward(g, x, w, stride, padding, dilation, groups,
                                                 out_pad, True, True, True)
    ref = _torch_conv_grads(torch, torch.nn.functional.conv_transpose2d, x, w, b, g,
                            stride, padding, out_pad, groups, dilation)
    for got, want in zip(ours, ref, strict=True):
        np.testing.assert_allclose(got, want, **TOL[dtype])


@pytest.mark.parity
def test_unfold_fold_match_torch(rng):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    functional = torch.nn.functional
    x = rng.standard_normal((2, 3, 9, 6))
    args = ((3, 2), (2, 1), (1, 1), (2, 3))
    cols = im2col.unfold(x, *args)
    np.testing.assert_allclose(cols, functional.unfold(torch.tensor(x), *args).numpy())
    np.testing.assert_allclose(im2col.fold(cols, (9, 6), *args),
                               functional.fold(torch.tensor(cols), (9, 6), *args).numpy())


def test_kept_im2col_comes_from_the_reuse_pool(rng):
    # NOTE [Keeping the forward's im2col]: the kept matrix is a pooled buffer, so once the
    # weight gradient has used it and dropped it, the next forward of the shape gets its pages
    from ember import _backend
    x = rng.standard_normal((2, 64, 8, 8)).astype(np.float32)  # im2col: 576 x 2 x 64 floats
    w = rng.standard_normal((4, 64, 3, 3)).astype(np.float32)
    keep = []
    conv.conv2d_forward(x, w, None, (1, 1), (1, 1), (1, 1), 1, keep)
    packed = keep[0]
    assert _backend.is_reused(packed) and packed.shape == (576, 2, 64)
    ident = id(packed)
    del keep, packed
    again = []
    conv.conv2d_forward(x, w, None, (1, 1), (1, 1), (1, 1), 1, again)
    assert id(again[0]) == ident


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("groups", [1, 2])
def test_thin_pointwise_shares_its_columns(rng, dtype, groups):
    # NOTE [Sharing pointwise columns]: the forward keeps x's columns (a pooled buffer) and the
    # backward builds gy's once for both gradients; the results equal the unshared path's
    from ember import _backend
    n, c, o = 8, 1024, 32
    x = rng.standard_normal((n, c, 2, 2)).astype(dtype)
    w = rng.standard_normal((o, c // groups, 1, 1)).astype(dtype)
    keep = []
    y = conv.conv2d_forward(x, w, None, (1, 1), (0, 0), (1, 1), groups, keep)
    assert len(keep) == 1 and keep[0].shape == (c, n, 4)
    assert _backend.is_reused(keep[0]) or keep[0].nbytes < _backend._REUSE_MIN_BYTES
    np.testing.assert_array_equal(keep[0], x.reshape(n, c, 4).transpose(1, 0, 2))
    g = rng.standard_normal(y.shape).astype(dtype)
    shared = conv.conv2d_backward(g, x, w, (1, 1), (0, 0), (1, 1), groups, True, True, False,
                                  keep[0])
    gx = conv.conv2d_backward(g, x, w, (1, 1), (0, 0), (1, 1), groups, True, False, False)[0]
    gw = conv.conv2d_backward(g, x, w, (1, 1), (0, 0), (1, 1), groups, False, True, False)[1]
    np.testing.assert_array_equal(shared[0], gx)
    np.testing.assert_array_equal(shared[1], gw)
    ref = conv2d_ref(x.astype(np.float64), w.astype(np.float64), None, (1, 1), (0, 0), (1, 1),
                     groups)
    np.testing.assert_allclose(y, ref, **TOL[dtype])
    og, cg = o // groups, c // groups
    g3, x3 = g.reshape(n, o, 4).astype(np.float64), x.reshape(n, c, 4).astype(np.float64)
    gw_ref = np.concatenate([np.einsum("nol,ncl->oc", g3[:, k * og:(k + 1) * og],
                                       x3[:, k * cg:(k + 1) * cg]) for k in range(groups)])
    np.testing.assert_allclose(gw.reshape(o, cg), gw_ref, **TOL[dtype])
    # gx is conv's adjoint in x: <x, gx> == <conv(x), g>
    np.testing.assert_allclose(np.vdot(x, gx), np.vdot(y, g), rtol=TOL[dtype]["rtol"])


def test_wide_pointwise_keeps_nothing(rng):
    # on maps of 48 pixels and more the forward runs per-sample GEMMs and builds no columns
    x = rng.standard_normal((2, 8, 7, 7))
    keep = []
    conv.conv2d_forward(x, rng.standard_normal((16, 8, 1, 1)), None, (1, 1), (0, 0), (1, 1), 1,
                        keep)
    assert keep == []


# NOTE [Pixels as rows on small maps]: the route for few output pixels and deep patches


def _rows_everywhere(monkeypatch):
    monkeypatch.setattr(conv, "_ROWS_MAX", 10 ** 6)
    monkeypatch.setattr(conv, "_ROWS_MIN_DEPTH", 1)
    monkeypatch.setattr(conv, "_ROWS_MIN_OUT", 1)


def _spy_rows(monkeypatch):
    calls = []
    real = conv._unfold_rows

    def spy(*args):
        calls.append(args[1].shape)
        return real(*args)

    monkeypatch.setattr(conv, "_unfold_rows", spy)
    return calls


@pytest.mark.parametrize("case", [c for c in CONV_CASES if c[5] == 1 and c[1][2] * c[1][3] > 1])
def test_rows_route_matches_reference_and_keeps_its_rows(rng, monkeypatch, case):
    _rows_everywhere(monkeypatch)
    calls = _spy_rows(monkeypatch)
    xs, ws, stride, padding, dilation, groups = case
    x, w, b = rng.standard_normal(xs), rng.standard_normal(ws), rng.standard_normal(ws[0])
    keep = []
    y = conv.conv2d_forward(x, w, b, stride, padding, dilation, groups, keep)
    np.testing.assert_allclose(y, conv2d_ref(x, w, b, stride, padding, dilation, groups),
                               **TOL[np.float64])
    n_pixels = y.shape[0] * y.shape[2] * y.shape[3]
    assert calls == [(n_pixels, w[0].size)] and keep[0].shape == (n_pixels, w[0].size)
    g = rng.standard_normal(y.shape)
    gx, gw, gb = conv.conv2d_backward(g, x, w, stride, padding, dilation, groups, True, True,
                                      True, keep[0])
    assert len(calls) == 1  # the weight gradient took the kept rows
    inner = np.vdot(y - b.reshape(1, -1, 1, 1), g)  # conv is linear in x and in w
    np.testing.assert_allclose(np.vdot(x, gx), inner, rtol=1e-10)
    np.testing.assert_allclose(np.vdot(w, gw), inner, rtol=1e-10)
    # without the kept rows the weight gradient packs x again, to the same values
    np.testing.assert_allclose(conv.conv2d_weight_grad(g, x, ws, stride, padding, dilation, 1),
                               gw, rtol=1e-12, atol=1e-12)
    assert len(calls) == 2


# VGG-19's and ResNet-50's shapes at batch 8, and a strided and a dilated one
ROWS_CASES = [
    ((8, 256, 4, 4), (128, 256, 3, 3), (1, 1), (1, 1), (1, 1)),
    ((8, 64, 2, 2), (96, 64, 3, 3), (1, 1), (1, 1), (1, 1)),
    ((4, 32, 8, 8), (64, 32, 3, 3), (2, 2), (1, 1), (1, 1)),
    ((2, 40, 5, 6), (64, 40, 3, 3), (1, 1), (2, 2), (2, 2)),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", ROWS_CASES)
@pytest.mark.parity
def test_rows_route_at_default_thresholds_matches_torch(rng, monkeypatch, case, dtype):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    calls = _spy_rows(monkeypatch)
    xs, ws, stride, padding, dilation = case
    x, w = rng.standard_normal(xs).astype(dtype), rng.standard_normal(ws).astype(dtype)
    b = rng.standard_normal(ws[0]).astype(dtype)
    keep = []
    y = conv.conv2d_forward(x, w, b, stride, padding, dilation, 1, keep)
    assert len(calls) == 1, "these shapes take NOTE [Pixels as rows on small maps]"
    g = rng.standard_normal(y.shape).astype(dtype)
    ours = (y,) + conv.conv2d_backward(g, x, w, stride, padding, dilation, 1, True, True, True,
                                       keep[0])
    ref = _torch_conv_grads(torch, torch.nn.functional.conv2d, x, w, b, g, stride, padding,
                            dilation, 1)
    for got, want in zip(ours, ref, strict=True):
        assert got.dtype == dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, **TOL[dtype])


@pytest.mark.parametrize("xs, ws, groups", [
    ((8, 256, 4, 4), (128, 256, 1, 1), 1),   # 1x1: the pointwise layouts
    ((8, 256, 4, 4), (128, 128, 3, 3), 2),   # grouped
    ((8, 64, 16, 16), (64, 64, 5, 5), 1),    # 2048 output pixels (not Winograd's 3x3)
    ((8, 16, 4, 4), (64, 16, 3, 3), 1),      # a shallow patch (144)
    ((8, 256, 4, 4), (32, 256, 3, 3), 1),    # few outputs
])
def test_rows_route_is_for_small_maps_and_deep_patches_only(rng, monkeypatch, xs, ws, groups):
    calls = _spy_rows(monkeypatch)
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    y = conv.conv2d_forward(x, w, None, (1, 1), (ws[2] // 2,) * 2, (1, 1), groups, [])
    conv.conv2d_backward(np.ones_like(y), x, w, (1, 1), (ws[2] // 2,) * 2, (1, 1), groups,
                         True, True, False)
    assert calls == []


def test_rows_route_gradcheck_through_conv2d(monkeypatch):
    import ember
    _rows_everywhere(monkeypatch)
    calls = _spy_rows(monkeypatch)
    gen = np.random.default_rng(3)
    x = ember.tensor(gen.standard_normal((2, 3, 4, 5)), requires_grad=True)
    w = ember.tensor(gen.standard_normal((4, 3, 3, 2)), requires_grad=True)
    b = ember.tensor(gen.standard_normal(4), requires_grad=True)

    def f(x, w, b):
        return ember.nn.functional.conv2d(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2))

    assert ember.autograd.gradcheck(f, (x, w, b))
    assert ember.autograd.gradgradcheck(f, (x, w, b))
    assert calls, "the route ran"
