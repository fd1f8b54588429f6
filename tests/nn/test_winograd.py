"""Winograd F(2x2, 3x3) and F(4x4, 3x3) convolution (ember/ops/_kernels/winograd.py): the same
numbers as the im2col path and as torch, gradients by gradcheck, and which layers take which."""
import numpy as np
import pytest

import ember
from ember import _threads
from ember.autograd import gradcheck, gradgradcheck
from ember.nn import functional as F
from ember.ops._kernels import conv as kconv
from ember.ops._kernels import split, winograd


@pytest.fixture
def every_shape(monkeypatch):
    """Let Winograd take every 3x3 stride-1 convolution, however small (with F(2x2, 3x3):
    `tile` below switches to F(4x4, 3x3))."""
    monkeypatch.setattr(winograd, "_MIN_TILES", 1)
    monkeypatch.setattr(winograd, "_MIN_TILES_SPLIT", 1)  # the threshold with the one pool on
    monkeypatch.setattr(winograd, "_MIN_TILES_4", 10 ** 9)
    monkeypatch.setattr(winograd, "_MIN_CHANNELS", 1)
    monkeypatch.setattr(winograd, "_MIN_USED", 0.0)


@pytest.fixture(params=[2, 4])
def tile(request, monkeypatch):
    """Outputs per tile side: every shape that Winograd takes takes this one."""
    monkeypatch.setattr(winograd, "_MIN_CHANNELS", 1)
    monkeypatch.setattr(winograd, "_MIN_USED", 0.0)
    monkeypatch.setattr(winograd, "_MIN_TILES", 1)
    monkeypatch.setattr(winograd, "_MIN_TILES_SPLIT", 1)  # the threshold with the one pool on
    monkeypatch.setattr(winograd, "_MIN_TILES_4", 1 if request.param == 4 else 10 ** 9)
    return request.param


# (n, c, o, h, w, padding): odd and even sizes, every padding 0..2, a single tile, a 1-wide map
SHAPES = [
    (2, 3, 4, 5, 7, (1, 1)),
    (3, 5, 2, 8, 8, (1, 1)),
    (1, 4, 3, 6, 5, (0, 2)),
    (2, 2, 5, 9, 4, (2, 0)),
    (1, 3, 3, 3, 3, (0, 0)),
    (2, 3, 2, 1, 6, (1, 1)),
]


# float32 error relative to the largest entry: ~1e-6 for F(2x2, 3x3), up to ~1e-5 for F(4x4, 3x3)
# (its transforms have entries up to 8 and 1/24); NOTE [Winograd F(4x4, 3x3)]
@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-12), (np.float32, 2e-5)])
@pytest.mark.parametrize("shape", SHAPES + [(8, 64, 48, 16, 16, (1, 1))])
def test_winograd_equals_im2col_forward_and_gradients(rng, tile, shape, dtype, tol):
    n, c, o, h, w, padding = shape
    assert winograd._tile_size((n, c, h, w), (o, c, 3, 3), *padding) == tile
    x = rng.standard_normal((n, c, h, w)).astype(dtype)
    wt = rng.standard_normal((o, c, 3, 3)).astype(dtype)
    b = rng.standard_normal(o).astype(dtype)
    geo = kconv._geometry(wt.shape, (1, 1), padding, (1, 1))
    y_ref = kconv._conv_forward(x, wt, geo, 1, None, b).copy()
    keep = []
    y = winograd.forward(x, wt, b, padding, keep).copy()
    assert y.dtype == dtype and y.shape == y_ref.shape
    np.testing.assert_allclose(y, y_ref, rtol=tol, atol=tol * np.abs(y_ref).max())
    gy = rng.standard_normal(y.shape).astype(dtype)
    gx_ref = kconv._conv_input_grad(gy, wt, x.shape, geo, 1)
    gw_ref = kconv._conv_weight_grad(gy, x, wt.shape, geo, 1).copy()
    gx, gw = winograd.backward(gy, x, wt, padding, True, True, keep[0])
    np.testing.assert_allclose(gx, gx_ref, rtol=tol, atol=tol * np.abs(gx_ref).max())
    np.testing.assert_allclose(gw, gw_ref, rtol=tol, atol=tol * np.abs(gw_ref).max())
    # the weight gradient without the forward's transformed input transforms x again
    gw_again = winograd.weight_grad(gy, x, wt.shape, padding)
    np.testing.assert_allclose(gw_again, gw_ref, rtol=tol, atol=tol * np.abs(gw_ref).max())


@pytest.mark.parametrize("padding", [0, 1, 2])
def test_winograd_conv2d_gradcheck_and_double_backward(rng, tile, padding):
    x = ember.tensor(rng.standard_normal((2, 3, 5, 6)), requires_grad=True)
    w = ember.tensor(rng.standard_normal((4, 3, 3, 3)), requires_grad=True)
    b = ember.tensor(rng.standard_normal(4), requires_grad=True)
    assert winograd.applies(tuple(x.shape), tuple(w.shape),
                            kconv._geometry(w.shape, (1, 1), (padding,) * 2, (1, 1)), 1)
    fn = lambda x, w, b: F.conv2d(x, w, b, padding=padding)  # noqa: E731
    assert gradcheck(fn, (x, w, b))
    assert gradgradcheck(fn, (x, w, b))


def test_winograd_conv2d_module_matches_im2col_path_in_a_training_step(rng, monkeypatch):
    """A VGG-sized layer (it takes Winograd at the default thresholds) against the same layer
    with Winograd switched off: output and both gradients through Conv2d and autograd."""
    x = rng.standard_normal((4, 32, 16, 16)).astype(np.float32)
    conv = ember.nn.Conv2d(32, 48, 3, padding=1)
    geo = kconv._geometry(tuple(conv.weight.shape), (1, 1), (1, 1), (1, 1))
    assert winograd.applies(x.shape, tuple(conv.weight.shape), geo, 1)

    def run():
        conv.zero_grad()
        xt = ember.tensor(x, requires_grad=True)
        y = ember.relu(conv(xt))
        (y * y).sum().backward()
        return y.detach().numpy().copy(), xt.grad.numpy(), conv.weight.grad.numpy().copy()

    ours = run()
    monkeypatch.setattr(winograd, "_MIN_TILES", 10 ** 9)
    ref = run()
    for a, r in zip(ours, ref, strict=True):
        np.testing.assert_allclose(a, r, rtol=1e-4, atol=1e-4 * np.abs(r).max())


@pytest.mark.parity
def test_winograd_layer_matches_torch_float32(rng):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    x = rng.standard_normal((8, 64, 16, 16)).astype(np.float32)
    w = (rng.standard_normal((64, 64, 3, 3)) / 24).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    g = rng.standard_normal((8, 64, 16, 16)).astype(np.float32)
    ours = [ember.tensor(a, requires_grad=True) for a in (x, w, b)]
    ref = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    y = F.conv2d(*ours, padding=1)
    ty = torch.nn.functional.conv2d(*ref, padding=1)
    y.backward(ember.tensor(g))
    ty.backward(torch.tensor(g))
    pairs = [(y.detach(), ty.detach())] + [(o.grad, r.grad) for o, r in zip(ours, ref, strict=True)]
    for a, r in pairs:
        r = r.numpy()
        np.testing.assert_allclose(a.numpy(), r, rtol=1e-4, atol=2e-5 * np.abs(r).max())


@pytest.mark.usefixtures("pool_off")
@pytest.mark.parametrize("x_shape, w_shape, stride, padding, dilation, groups, expected", [
    ((8, 64, 32, 32), (64, 64, 3, 3), 1, 1, 1, 1, True),      # VGG-19 block 1
    ((8, 256, 8, 8), (256, 256, 3, 3), 1, 1, 1, 1, True),     # VGG-19 block 3: 32 4x4 tiles
    ((8, 512, 4, 4), (512, 512, 3, 3), 1, 1, 1, 1, False),    # 32 tiles: weight transform loses
    ((8, 3, 32, 32), (64, 3, 3, 3), 1, 1, 1, 1, False),       # 3 input channels
    ((16, 192, 7, 7), (384, 192, 3, 3), 1, 1, 1, 1, False),   # 7x7: a quarter of a tile wasted
    ((8, 64, 32, 32), (64, 64, 3, 3), 2, 1, 1, 1, False),     # strided
    ((8, 64, 32, 32), (64, 64, 3, 3), 1, 2, 2, 1, False),     # dilated
    ((8, 64, 32, 32), (64, 32, 3, 3), 1, 1, 1, 2, False),     # grouped
    ((8, 64, 32, 32), (64, 64, 5, 5), 1, 2, 1, 1, False),     # 5x5
    ((8, 64, 32, 32), (64, 64, 3, 3), 1, 3, 1, 1, False),     # padding beyond 2
    ((32, 64, 224, 224), (64, 64, 3, 3), 1, 1, 1, 1, False),  # 1.6 GB of tiles: im2col chunks
])
def test_winograd_applies_only_where_it_pays(x_shape, w_shape, stride, padding, dilation, groups,
                                             expected):
    geo = kconv._geometry(w_shape, (stride,) * 2, (padding,) * 2, (dilation,) * 2)
    assert winograd.applies(x_shape, w_shape, geo, groups) is expected


@pytest.mark.usefixtures("pool_off")
@pytest.mark.parametrize("x_shape, w_shape, tile", [
    ((8, 64, 32, 32), (64, 64, 3, 3), 4),      # VGG-19 block 1: 512 tiles of 4x4
    ((8, 256, 8, 8), (256, 256, 3, 3), 4),     # VGG-19 block 3: 32 tiles of 4x4
    ((4, 256, 16, 8), (256, 256, 3, 3), 4),    # 32 tiles of 4x4 too
    ((16, 256, 8, 8), (256, 256, 3, 3), 4),    # 64 tiles of 4x4
    ((4, 256, 8, 8), (256, 256, 3, 3), 0),     # 16 4x4 tiles, 64 2x2 tiles: im2col
    ((16, 128, 6, 6), (128, 128, 3, 3), 2),    # 4x4 tiles: 36 of 64 outputs used; 2x2 tiles: all
    ((8, 512, 4, 4), (512, 512, 3, 3), 0),     # 8 4x4 tiles, 32 2x2 tiles: im2col
])
def test_winograd_tile_size(x_shape, w_shape, tile):
    assert winograd._tile_size(x_shape, w_shape, 1, 1) == tile


@pytest.mark.usefixtures("pool_off")
@pytest.mark.parametrize("x_shape, w_shape, tile", [
    ((8, 256, 8, 8), (256, 256, 3, 3), 4),     # VGG-19 block 3: 32 tiles of 4x4
    ((8, 128, 8, 8), (128, 128, 3, 3), 4),     # ResNet-50 stage 2
    ((4, 256, 8, 8), (256, 256, 3, 3), 2),     # 16 4x4 tiles, too few; 64 2x2 tiles, small weight
    ((4, 512, 8, 8), (512, 512, 3, 3), 0),     # the same with a 512 x 512 weight: im2col
    ((8, 256, 4, 4), (512, 256, 3, 3), 2),     # VGG-19 block 4's first: 32 2x2 tiles, 2^17 pairs
    ((8, 256, 4, 4), (256, 256, 3, 3), 2),     # ResNet-50 stage 3
    ((8, 512, 4, 4), (512, 512, 3, 3), 0),     # 32 2x2 tiles, big weight: im2col
    ((8, 512, 2, 2), (512, 512, 3, 3), 0),     # 8 2x2 tiles: im2col
])
def test_winograd_tile_size_with_the_per_layer_thresholds(x_shape, w_shape, tile, monkeypatch):
    """NOTE [Winograd thresholds at two threads]: the thresholds the per-layer times suggest
    (_MIN_TILES_SMALL_WEIGHT's off by default) send small-weight layers with 32 tiles to
    Winograd, big ones to im2col."""
    monkeypatch.setattr(winograd, "_MIN_TILES_4", 32)
    monkeypatch.setattr(winograd, "_MIN_TILES_SMALL_WEIGHT", 32)
    assert winograd._tile_size(x_shape, w_shape, 1, 1) == tile


@pytest.mark.parametrize("tile, per_pixel", [(2, 4), (4, 2.25)])
def test_winograd_forward_keeps_few_numbers_per_input_pixel(rng, monkeypatch, tile, per_pixel):
    """What the forward keeps for the weight gradient: 16 per 2x2 output tile or 36 per 4x4
    one, against im2col's 9 per output position; and the transformed weight for the input
    gradient (NOTE [Keeping the transformed weight])."""
    monkeypatch.setattr(winograd, "_MIN_TILES_4", 32 if tile == 4 else 10 ** 9)
    monkeypatch.setattr(winograd, "_KEEP_WEIGHT_MAX", [float("inf")])  # U kept at any size
    x = rng.standard_normal((8, 64, 16, 16)).astype(np.float32)
    w = rng.standard_normal((64, 48, 3, 3)).astype(np.float32)
    keep = []
    kconv.conv2d_forward(x[:, :48].copy(), w, None, (1, 1), (1, 1), (1, 1), 1, keep)
    v, u = keep
    side = 16 // tile
    assert v.shape == ((tile + 2) ** 2, 48, 8 * side * side)
    assert v.size == per_pixel * x[:, :48].size
    assert u.shape == ((tile + 2) ** 2, 64, 48)


@pytest.mark.parametrize("tile", [2, 4], indirect=True)
def test_winograd_backward_uses_the_forwards_transformed_weight(rng, tile, monkeypatch):
    """NOTE [Keeping the transformed weight]: a training step transforms the weight once (in
    the forward), and its gradients are those of a backward that transforms it again; a kept
    weight of another shape or dtype is not used."""
    monkeypatch.setattr(winograd, "_KEEP_WEIGHT_MAX", [float("inf")])  # U kept at any size
    x = ember.tensor(rng.standard_normal((2, 3, 9, 8)).astype(np.float32), requires_grad=True)
    w = ember.tensor(rng.standard_normal((5, 3, 3, 3)).astype(np.float32), requires_grad=True)
    g = rng.standard_normal((2, 5, 9, 8)).astype(np.float32)
    calls = []
    made = winograd._transformed_weight
    monkeypatch.setattr(winograd, "_transformed_weight",
                        lambda *a: calls.append(1) or made(*a))
    F.conv2d(x, w, padding=1).backward(ember.tensor(g))
    assert len(calls) == 1
    xp, wp = x.detach().numpy(), w.detach().numpy()
    fresh = kconv.conv2d_backward(g, xp, wp, (1, 1), (1, 1), (1, 1), 1, True, True, False)
    assert len(calls) == 2
    np.testing.assert_array_equal(x.grad.numpy(), fresh[0])
    np.testing.assert_array_equal(w.grad.numpy(), fresh[1])
    keep = []
    kconv.conv2d_forward(xp, wp, None, (1, 1), (1, 1), (1, 1), 1, keep)
    u = keep[1]
    for wrong in (u[:, :4], u.astype(np.float64)):
        gx = kconv.conv2d_backward(g, xp, wp, (1, 1), (1, 1), (1, 1), 1, True, False, False,
                                   packed_weight=wrong)[0]
        np.testing.assert_array_equal(gx, fresh[0])


def test_winograd_keeps_the_transformed_weight_only_when_no_bigger_than_the_input(rng,
                                                                               monkeypatch):
    """NOTE [Keeping the transformed weight]: a deep layer on a small map (U of 36 * 64 * 64
    numbers against an input of 8 * 64 * 8 * 8) keeps only the transformed input and makes U
    again in the backward, with the same gradients; a wide map keeps both."""
    monkeypatch.setattr(winograd, "_MIN_TILES_4", 32)
    w = rng.standard_normal((64, 64, 3, 3)).astype(np.float32)
    for hw, kept in ((8, 1), (32, 2)):
        x = rng.standard_normal((8, 64, hw, hw)).astype(np.float32)
        keep = []
        kconv.conv2d_forward(x, w, None, (1, 1), (1, 1), (1, 1), 1, keep)
        assert len(keep) == kept, hw
        u = winograd._transformed_weight(w, 4)
        assert (u.nbytes <= x.nbytes) == (kept == 2)
    xt = ember.tensor(rng.standard_normal((8, 64, 8, 8)).astype(np.float32), requires_grad=True)
    wt = ember.tensor(w, requires_grad=True)
    g = rng.standard_normal((8, 64, 8, 8)).astype(np.float32)
    F.conv2d(xt, wt, padding=1).backward(ember.tensor(g))
    fresh = kconv.conv2d_backward(g, xt.detach().numpy(), w, (1, 1), (1, 1), (1, 1), 1, True,
                                  True, False)
    np.testing.assert_array_equal(xt.grad.numpy(), fresh[0])
    np.testing.assert_array_equal(wt.grad.numpy(), fresh[1])


def test_winograd_kept_weight_is_not_reused_after_an_in_place_change(rng, every_shape):
    """The kept transformed weight belongs to the forward's weight: changing the weight in
    place before backward raises autograd's saved-tensor error, as for any saved input."""
    x = ember.tensor(rng.standard_normal((1, 2, 6, 6)), requires_grad=True)
    w = ember.tensor(rng.standard_normal((3, 2, 3, 3)), requires_grad=True)
    y = F.conv2d(x, w, padding=1)
    with ember.no_grad():
        w.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


@pytest.mark.parametrize("needs", ["x", "w", "both"])
def test_winograd_partial_gradients_and_a_retained_second_backward(rng, every_shape, needs):
    """Only the input (no transformed input kept), only the weight, or both; a second backward
    through a retained graph transforms x again (the kept one is used once)."""
    x_np = rng.standard_normal((2, 4, 6, 7))
    w_np = rng.standard_normal((5, 4, 3, 3))
    # x is the leaf in (N, C, W, H) order; the convolution sees a non-contiguous view of it
    x = ember.tensor(x_np.transpose(0, 1, 3, 2).copy(), requires_grad=needs in ("x", "both"))
    w = ember.tensor(w_np, requires_grad=needs in ("w", "both"))
    y = F.conv2d(x.transpose(2, 3), w, padding=1)
    g = rng.standard_normal(tuple(y.shape))
    y.backward(ember.tensor(g), retain_graph=True)
    first = [t.grad.numpy().copy() for t in (x, w) if t.requires_grad]
    y.backward(ember.tensor(g))
    second = [t.grad.numpy() for t in (x, w) if t.requires_grad]
    for a, b in zip(first, second, strict=True):
        np.testing.assert_allclose(b, 2 * a, rtol=1e-12)
    geo = kconv._geometry(w_np.shape, (1, 1), (1, 1), (1, 1))
    expected = {"x": kconv._conv_input_grad(g, w_np, x_np.shape, geo, 1).transpose(0, 1, 3, 2),
                "w": kconv._conv_weight_grad(g, x_np, w_np.shape, geo, 1)}
    names = [n for n in ("x", "w") if needs in (n, "both")]
    for name, got in zip(names, first, strict=True):
        np.testing.assert_allclose(got, expected[name], rtol=1e-10, atol=1e-10)


@pytest.mark.usefixtures("pool_off")
@pytest.mark.parametrize("tile", [2, 4], indirect=True)
def test_winograd_two_thread_halves_give_the_one_thread_numbers(rng, tile, monkeypatch):
    """NOTE [Two halves on two threads]: every transform split over two threads writes what
    one call writes, bit for bit (each half owns its channels)."""
    x = rng.standard_normal((4, 9, 10, 11)).astype(np.float32)
    w = rng.standard_normal((7, 9, 3, 3)).astype(np.float32)
    b = rng.standard_normal(7).astype(np.float32)
    gy = rng.standard_normal((4, 7, 10, 11)).astype(np.float32)

    def run():
        keep = []
        y = winograd.forward(x, w, b, (1, 1), keep).copy()
        gx, gw = winograd.backward(gy, x, w, (1, 1), True, True, keep[0])
        return y, gx.copy(), gw.copy()

    monkeypatch.setattr(split, "_MIN_WORK", 0)
    calls = []
    original = split._parallel_range
    monkeypatch.setattr(split, "_parallel_range",
                        lambda *a: calls.append(1) or original(*a))
    monkeypatch.setattr(_threads, "_requested", [2])  # the kernel threads' count
    halves = run()
    # every transform ran in two halves: input, weight and output in the forward; gy's, the
    # weight's again, the input adjoint and the weight adjoint in the backward
    assert len(calls) == 7
    monkeypatch.setattr(split, "_MIN_WORK", 1 << 62)
    whole = run()
    assert len(calls) == 7
    for a, r in zip(halves, whole, strict=True):
        np.testing.assert_array_equal(a, r)


@pytest.mark.usefixtures("pool_off")
def test_split_run_propagates_errors_and_covers_the_range(monkeypatch):
    monkeypatch.setattr(split, "_MIN_WORK", 0)
    monkeypatch.setattr(_threads, "_requested", [2])  # the kernel threads' count
    seen = np.zeros(10, dtype=np.int64)

    def mark(out, lo, hi):
        out[lo:hi] += 1

    split.run(mark, 10, 1, seen)
    np.testing.assert_array_equal(seen, np.ones(10))

    def fail(lo, hi):
        if lo > 0:
            raise ValueError(f"upper part {lo}..{hi}")

    with pytest.raises(ValueError, match=r"upper part \d+\.\.\d+"):
        split.run(fail, 10, 1)


@pytest.mark.parametrize("shape, padding", [((2, 3, 9, 7), (1, 1)), ((1, 2, 6, 6), (0, 0)),
                                            ((2, 1, 5, 11), (2, 1)), ((1, 1, 3, 3), (0, 2))])
def test_winograd4_input_transform_is_bt_d_b(rng, shape, padding):
    """F(4x4, 3x3)'s input transform (two passes per row of tiles) against B^T d B of every
    6x6 tile of the zero-padded input, with B^T from winograd4.py's docstring (float64)."""
    from ember.ops._kernels import winograd4
    bt = np.array([[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0],
                   [0, -2, -1, 2, 1, 0], [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]], float)
    x = rng.standard_normal(shape)
    n, c, h, w = shape
    ph, pw = padding
    th, tw = winograd._tiles(h, w, ph, pw, 4)
    v = np.full((36, c, n * th * tw), np.nan)
    winograd4._k_input(x, v, ph, pw, th, tw, 0, c)
    padded = np.zeros((n, c, 4 * th + 2, 4 * tw + 2))
    padded[:, :, ph:ph + h, pw:pw + w] = x
    for i in range(th):
        for j in range(tw):
            d = padded[:, :, 4 * i:4 * i + 6, 4 * j:4 * j + 6]
            want = np.einsum("ab,ncbe,fe->afnc", bt, d, bt).reshape(36, n, c)
            t = np.arange(n) * th * tw + i * tw + j
            np.testing.assert_allclose(v[:, :, t], want.transpose(0, 2, 1), rtol=1e-12,
                                       atol=1e-12)


@pytest.mark.parametrize("shape, bias", [((2, 3, 9, 7), True), ((1, 2, 4, 4), False),
                                         ((1, 1, 98, 101), True)])  # 625 tiles: two chunks
def test_winograd4_output_transform_is_at_m_a(rng, shape, bias):
    """F(4x4, 3x3)'s output transform (per channel, over chunks of rows of tiles) against
    A^T m A + bias of every tile, the rows and columns past the edge dropped (float64)."""
    from ember.ops._kernels import winograd4
    at = np.array([[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0],
                   [0, 1, -1, 8, -8, 1]], float)
    n, o, oh, ow = shape
    th, tw = -(-oh // 4), -(-ow // 4)
    m = rng.standard_normal((36, o, n * th * tw))
    b = rng.standard_normal(o) if bias else np.empty(0)
    y = np.full(shape, np.nan)
    winograd4._k_output(m, b, y, th, tw, 0, o)
    tiles = m.reshape(6, 6, o, n, th, tw)
    full = np.einsum("ka,abonij,lb->onikjl", at, tiles, at).reshape(o, n, 4 * th, 4 * tw)
    want = full.transpose(1, 0, 2, 3)[:, :, :oh, :ow] + (b.reshape(1, -1, 1, 1) if bias else 0)
    np.testing.assert_allclose(y, want, rtol=1e-12, atol=1e-12)


def test_winograd_transforms_are_looked_up_where_timers_replace_them(rng, tile, monkeypatch):
    # benchmarks/profile_shares.py times kernels by replacing module attributes; a table of
    # kernel references made at import time hid all six transforms from it (they were counted
    # as Python time)
    from ember.ops._kernels import winograd4
    module, prefix = (winograd4, "_k_") if tile == 4 else (winograd, "_k_winograd_")
    roles = ("input", "input_adjoint", "output", "output_adjoint", "weight", "weight_adjoint")
    called = []
    for role in roles:
        kernel = getattr(module, prefix + role)
        monkeypatch.setattr(module, prefix + role,
                            lambda *a, _k=kernel, _r=role: called.append(_r) or _k(*a))
    x = ember.tensor(rng.standard_normal((2, 3, 8, 8)), requires_grad=True)
    w = ember.tensor(rng.standard_normal((4, 3, 3, 3)), requires_grad=True)
    F.conv2d(x, w, padding=1).sum().backward()
    assert set(called) == set(roles)
