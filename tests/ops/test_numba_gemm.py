"""The float32 GEMM in numba (NOTE [A GEMM in numba] in ember/ops/_kernels/gemm.py): the kernel
against float64 NumPy products over every tile remainder and k block, the bias, results that do
not depend on how the rows are cut, which products `takes`, and whole Linear layers routed
through it against torch."""
from __future__ import annotations

import re

import numba
import numpy as np
import pytest
from _spy import count_calls

import ember
from ember import _blas_parts, _mkl
from ember.ops._kernels import gemm, gemm_tile

torch = pytest.importorskip("torch")

# the kernels are called directly here, before any route's gate (`_host_ok`) compiles the tile
gemm._compile_tile()

# m % 4 and n % 6 in every remainder, k across a KC block boundary, empty axes
SHAPES = [(1, 1, 1), (4, 6, 3), (7, 13, 5), (9, 17, 200), (33, 11, gemm.KB + 7), (0, 5, 4),
          (5, 0, 3), (6, 4, 0), (70, 31, 2 * gemm.KB + 1), (129, 64, 130)]


def _ref(a, b):
    return a.astype(np.float64) @ b.astype(np.float64).T


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m, n, k", SHAPES)
def test_kernels_match_float64_products(m, n, k, dtype):
    rng = np.random.default_rng(m * 10000 + n * 100 + k)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((n, k)).astype(dtype)
    bias = rng.standard_normal(n).astype(dtype)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    bt = np.ascontiguousarray(b.T)
    a_t = np.ascontiguousarray(a.T).T  # the same values, F-contiguous (a weight gradient's G^T)
    a_strided = np.zeros((m, 2 * k), dtype)
    a_strided[:, ::2] = a
    runs = [(gemm.nt_rows, a, b), (gemm.nn_rows, a, bt), (gemm.nn_rows, a_t, bt),
            (gemm.nn_rows, a_strided[:, ::2], bt)]
    for kernel, x, y in runs:
        for has_bias in (False, True):
            c = np.full((m, n), np.nan, dtype)
            kernel(x, y, c, bias if has_bias else bias[:1], has_bias, 0, m)
            ref = _ref(a, b) + (bias if has_bias else 0)
            scale = max(1.0, np.abs(ref).max()) if ref.size else 1.0
            np.testing.assert_allclose(c, ref, rtol=tol, atol=tol * scale)


def test_rows_in_parts_give_the_same_bits():
    # each output is one dot product whichever part computes it: cuts at multiples of the
    # tiles' 4 rows (as `matmul` makes them) give equal bits
    rng = np.random.default_rng(3)
    a = rng.standard_normal((37, 300)).astype(np.float32)
    b = rng.standard_normal((23, 300)).astype(np.float32)
    for kernel, y in ((gemm.nt_rows, b), (gemm.nn_rows, np.ascontiguousarray(b.T))):
        whole = np.empty((37, 23), np.float32)
        kernel(a, y, whole, b[0], False, 0, 37)
        for cut in (4, 8, 20, 36):
            parts = np.full_like(whole, np.nan)
            kernel(a, y, parts, b[0], False, 0, cut)
            kernel(a, y, parts, b[0], False, cut, 37)
            np.testing.assert_array_equal(parts, whole)


@pytest.fixture
def numba_host(monkeypatch):
    """Route products to the kernel on any host (the kernel itself runs on every CPU)."""
    monkeypatch.setattr(gemm, "_host_ok", lambda: True)
    monkeypatch.setattr(gemm, "ON", [True])


def test_takes_only_what_it_can_compute(numba_host):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((512, 256)).astype(np.float32)
    w = rng.standard_normal((384, 256)).astype(np.float32)
    w_t = np.ascontiguousarray(w.T)
    assert gemm._kernel(a, w.T) == "nt"                    # x @ W^T, as a Linear's forward
    assert gemm._kernel(a, w_t) == "nn"                    # a C-contiguous b
    assert gemm._kernel(np.asfortranarray(a), w_t) == "nn"  # G^T X
    assert gemm._kernel(np.asfortranarray(a), w.T) == "nn_copy"  # both transposed: b copied
    assert gemm._kernel(a[:, :100], w[:, :100].T) == "nn_copy"   # k < MIN_K: b copied
    assert gemm._kernel(a[:60, :100], w[:, :100].T) is None  # ... from COPY_MIN_M rows
    assert gemm._kernel(a, w[:8].T) is None                # and NT_MIN_N columns
    assert gemm._kernel(np.asfortranarray(a), w_t[:, :40]) == "t"  # c^T = b^T a^T
    assert gemm._kernel(a, w_t[:100, :40]) is None         # a C-contiguous, k < MIN_K
    assert gemm.takes(a, w.T, None) and gemm.takes(a, w_t, None)
    assert not gemm.takes(a.astype(np.float64), w_t.astype(np.float64), None)
    assert not gemm.takes(a[:7], w_t, None)                 # fewer than 8 rows
    assert not gemm.takes(a[:16, :64], w_t[:64], None)      # too few multiply-adds
    out = np.empty((512, 384), np.float32)
    assert gemm.takes(a, w.T, out)
    assert not gemm.takes(a, w.T, np.asfortranarray(out))
    assert not gemm.takes(a, w.T, np.empty((512, 384), np.float64))
    gemm.ON[0] = False
    assert not gemm.takes(a, w.T, None)


@pytest.mark.parametrize("parts", [False, True])
def test_matmul_routes_through_the_kernel(numba_host, parts, monkeypatch):
    # (a busy machine can put the hand-offs in a solo period: NOTE [A late worker])
    monkeypatch.setattr(_blas_parts, "late_solo", lambda now: False)
    _blas_parts.set_enabled(True if parts else False)
    try:
        rng = np.random.default_rng(5)
        a = rng.standard_normal((1030, 260)).astype(np.float32)
        w = rng.standard_normal((203, 260)).astype(np.float32)
        bias = rng.standard_normal(203).astype(np.float32)
        seen = count_calls(monkeypatch, gemm, nt="nt_rows", nn="nn_rows", cfunc="_gemm_part")
        y = _mkl.matmul(a, w.T, bias=bias)
        # in parts: the cfunc's parts (NOTE [GEMM parts without the GIL]), no Python call
        two = parts and _blas_parts.threads() >= 2
        assert (seen["nt"], seen["cfunc"]) == ((0, 1) if two else (1, 0))
        ref = _ref(a, w) + bias
        np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())
        # one thread (a Linear's input gradient beside its weight gradient), C-contiguous b
        out = np.empty((1030, 203), np.float32)
        _mkl.matmul_one_thread(a, np.ascontiguousarray(w.T), out)
        np.testing.assert_allclose(out, ref - bias, rtol=1e-5, atol=1e-5 * np.abs(ref).max())
        assert seen["nn"] == 1
        # a convolution's product: one plane of 3-D operands, a C-contiguous b
        y3 = _mkl.matmul(a[None], np.ascontiguousarray(w.T)[None])
        assert y3.shape == (1, 1030, 203) and seen["nn"] == 1 + seen["nt"]
        np.testing.assert_allclose(y3[0], ref - bias, rtol=1e-5, atol=1e-5 * np.abs(ref).max())
    finally:
        _blas_parts.set_enabled(None)


@pytest.mark.parametrize("lead", [(300,), (3, 100)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_layer_against_torch(numba_host, lead, bias):
    rng = np.random.default_rng(6)
    x = rng.standard_normal(lead + (256,)).astype(np.float32)
    w = (rng.standard_normal((384, 256)) / 16).astype(np.float32)
    b = rng.standard_normal(384).astype(np.float32) if bias else None
    g = rng.standard_normal(lead + (384,)).astype(np.float32)
    grads = []
    for lib in (ember, torch):
        xt = lib.tensor(x, requires_grad=True)
        wt = lib.tensor(w, requires_grad=True)
        bt = lib.tensor(b, requires_grad=True) if bias else None
        y = lib.nn.functional.linear(xt, wt, bt)
        y.backward(lib.tensor(g))
        grads.append([y.detach().numpy(), xt.grad.numpy(), wt.grad.numpy()]
                     + ([bt.grad.numpy()] if bias else []))
    for mine, theirs in zip(*grads):
        np.testing.assert_allclose(mine, theirs, rtol=1e-4, atol=1e-4 * np.abs(theirs).max())


def test_gradcheck_through_the_kernel_in_float32_paths(numba_host):
    # float64 never takes this path; the float32 layer's gradient agrees with the float64 one
    rng = np.random.default_rng(7)
    x = rng.standard_normal((260, 200))
    w = rng.standard_normal((130, 200)) / 14
    outs = []
    for dt in (np.float32, np.float64):
        xt = ember.tensor(x.astype(dt), requires_grad=True)
        wt = ember.tensor(w.astype(dt), requires_grad=True)
        (ember.nn.functional.linear(xt, wt) ** 2).sum().backward()
        outs.append((xt.grad.numpy().astype(np.float64), wt.grad.numpy().astype(np.float64)))
    for lo, hi in zip(*outs):
        np.testing.assert_allclose(lo, hi, rtol=1e-3, atol=1e-3 * np.abs(hi).max())


def _padded_planes(rng, count, rows, cols):
    """A (count, rows, cols) stack whose C-contiguous planes sit 16 values apart (as Winograd's
    `_planes` lays them out)."""
    flat = rng.standard_normal((count, rows * cols + 16)).astype(np.float32)
    return flat[:, :rows * cols].reshape(count, rows, cols)


@pytest.mark.parametrize("parts", [False, True])
def test_planes_in_each_layout(numba_host, parts):
    # Winograd's three products: U V, U^T dM and dM V^T, and a 2-D a shared by every plane
    rng = np.random.default_rng(8)
    count, m, k, n = 6, 70, 130, 66
    u, v = _padded_planes(rng, count, m, k), _padded_planes(rng, count, k, n)
    dm = _padded_planes(rng, count, m, n)
    shared = rng.standard_normal((m, k)).astype(np.float32)
    dm_long = _padded_planes(rng, count, m, k)  # dW = dM V^T: the products' k is the tiles
    x_long = _padded_planes(rng, count, n, k)
    for a, b in ((u, v), (u.transpose(0, 2, 1), dm), (dm_long, x_long.transpose(0, 2, 1)),
                 (shared, v)):
        out = _padded_planes(rng, count, a.shape[-2], b.shape[-1])
        assert gemm.planes_matmul(a, b, out, parts) is out
        ref = np.matmul(a.astype(np.float64), b.astype(np.float64))
        np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())


def test_planes_left_to_blas(numba_host):
    rng = np.random.default_rng(9)
    u, v = _padded_planes(rng, 4, 64, 100), _padded_planes(rng, 4, 100, 32)
    out = _padded_planes(rng, 4, 64, 32)
    assert gemm.planes_matmul(u, v, out) is None          # 32 columns and k < MIN_K
    dm, x = _padded_planes(rng, 4, 60, 100), _padded_planes(rng, 4, 64, 100)
    assert gemm.planes_matmul(dm, x.transpose(0, 2, 1), _padded_planes(rng, 4, 60, 64)) is None
    big = _padded_planes(rng, 4, 256, 256)
    assert gemm.planes_matmul(big, big, big) is None       # out overlaps an operand
    assert gemm.planes_matmul(big.astype(np.float64), big, _padded_planes(rng, 4, 256, 256)) \
        is None


@pytest.mark.parametrize("parts", [False, True])
def test_more_layouts(numba_host, parts, monkeypatch):
    # NOTE [More layouts for the numba GEMM]: b copied C-contiguous for a short k, and the
    # transposed product for few columns with a transposed a; 2-D, with a bias, and in planes
    monkeypatch.setattr(_blas_parts, "late_solo", lambda now: False)
    _blas_parts.set_enabled(True if parts else False)
    try:
        rng = np.random.default_rng(14)
        a = rng.standard_normal((1030, 32)).astype(np.float32)   # dW = G cols^T on 2x2 maps
        b = np.ascontiguousarray(rng.standard_normal((4608, 32)).astype(np.float32)).T
        at = rng.standard_normal((256, 4610)).astype(np.float32)  # dcols = W^T G
        g = rng.standard_normal((256, 36)).astype(np.float32)
        bias = rng.standard_normal(36).astype(np.float32)
        for x, y, route, row in ((a, b, "nn_copy", None), (at.T, g, "t", None),
                                 (at.T, g, "t", bias)):
            assert gemm._kernel(x, y) == route and gemm.takes(x, y, None)
            got = gemm.matmul(x, y, None, row, parts)
            ref = x.astype(np.float64) @ y.astype(np.float64) + (0 if row is None else row)
            np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())
            # equal bits whichever way the rows are cut
            np.testing.assert_array_equal(got, gemm.matmul(x, y, None, row, not parts))
        seen = count_calls(monkeypatch, gemm, copied="nn_planes_copied", t="t_planes")
        count = 6  # (at least MIN_MACS multiply-adds each)
        dm, x3 = _padded_planes(rng, count, 80, 32), _padded_planes(rng, count, 90, 32)
        u, dm2 = _padded_planes(rng, count, 130, 70), _padded_planes(rng, count, 130, 20)
        shared = rng.standard_normal((130, 70)).astype(np.float32)
        for p, q in ((dm, x3.transpose(0, 2, 1)), (u.transpose(0, 2, 1), dm2),
                     (shared.T, dm2)):
            out = _padded_planes(rng, count, p.shape[-2], q.shape[-1])
            assert gemm.planes_matmul(p, q, out, parts) is out
            ref = np.matmul(p.astype(np.float64), q.astype(np.float64))
            np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())
        assert seen["copied"] >= 1 and seen["t"] >= 2
    finally:
        _blas_parts.set_enabled(None)


def test_winograd_convolution_against_torch(numba_host, monkeypatch):
    # a 3x3 stride-1 convolution's forward and both gradients run their plane products here
    rng = np.random.default_rng(10)
    # 8 samples of 4 x 4 tiles: 128 columns in each plane's product
    x = rng.standard_normal((8, 32, 16, 16)).astype(np.float32)
    w = (rng.standard_normal((48, 32, 3, 3)) / 17).astype(np.float32)
    g = rng.standard_normal((8, 48, 16, 16)).astype(np.float32)
    seen = count_calls(monkeypatch, gemm, nn="nn_planes", nt="nt_planes")
    results = []
    for lib in (ember, torch):
        xt = lib.tensor(x, requires_grad=True)
        wt = lib.tensor(w, requires_grad=True)
        y = lib.nn.functional.conv2d(xt, wt, padding=1)
        y.backward(lib.tensor(g))
        results.append([y.detach().numpy(), xt.grad.numpy(), wt.grad.numpy()])
    assert seen["nn"] >= 2 and seen["nt"] >= 1  # U V, U^T dM and dM V^T
    for mine, theirs in zip(*results):
        np.testing.assert_allclose(mine, theirs, rtol=1e-4, atol=1e-4 * np.abs(theirs).max())


def test_environment_switch_leaves_products_to_blas():
    import os
    import subprocess
    import sys
    code = "import ember.ops._kernels.gemm as g; print(g.ON[0])"
    env = dict(os.environ, EMBER_NUMBA_GEMM="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_few_columns_by_a_transposed_copy(numba_host, monkeypatch):
    # an LSTM step's W h over a batch of 32, Winograd's planes of 32 tiles: b copied transposed
    rng = np.random.default_rng(11)
    w = rng.standard_normal((1030, 256)).astype(np.float32)
    h = rng.standard_normal((256, 33)).astype(np.float32)
    assert gemm._kernel(w, h) == "nt"
    # (nt_rows itself stays unwrapped: the planes' numba loop calls it)
    seen = count_calls(monkeypatch, gemm, copied="nt_planes_copied")
    z = gemm.matmul(w, h)
    np.testing.assert_allclose(z, _ref(w, h.T), rtol=1e-5, atol=1e-5 * np.abs(z).max())
    u, v = _padded_planes(rng, 5, 64, 130), _padded_planes(rng, 5, 130, 40)
    out = _padded_planes(rng, 5, 64, 40)
    assert gemm.planes_matmul(u, v, out) is out and seen["copied"] >= 1
    ref = np.matmul(u.astype(np.float64), v.astype(np.float64))
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())


def test_lstm_time_loop_against_torch(numba_host, monkeypatch):
    # each step's recurrent product W_hh h (1024 x 256 x 32) and its backward W_hh^T g go
    # through the kernel
    seen = count_calls(monkeypatch, gemm, matmul="matmul")
    rng = np.random.default_rng(12)
    x = rng.standard_normal((6, 32, 40)).astype(np.float32)
    results = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        lstm = lib.nn.LSTM(40, 256)
        if lib is ember:
            state = {k: v.detach().numpy() for k, v in lstm.state_dict().items()}
        else:
            lstm.load_state_dict({k: torch.tensor(v) for k, v in state.items()})
        xt = lib.tensor(x, requires_grad=True)
        y, _ = lstm(xt)
        (y * y).sum().backward()
        results.append([y.detach().numpy(), xt.grad.numpy(), lstm.weight_hh_l0.grad.numpy()])
    assert seen["matmul"] >= 12  # six steps forward, six backward
    for mine, theirs in zip(*results):
        np.testing.assert_allclose(mine, theirs, rtol=1e-4, atol=1e-4 * np.abs(theirs).max())


def test_pointwise_convolution_against_torch(numba_host, monkeypatch):
    # a 1x1 convolution's products: its input gradient is one (1, C, O) plane against the
    # (N, 1, O, L) samples
    seen = count_calls(monkeypatch, gemm, planes="planes_matmul")
    rng = np.random.default_rng(13)
    x = rng.standard_normal((8, 64, 16, 16)).astype(np.float32)
    w = (rng.standard_normal((96, 64, 1, 1)) / 8).astype(np.float32)
    g = rng.standard_normal((8, 96, 16, 16)).astype(np.float32)
    results = []
    for lib in (ember, torch):
        xt = lib.tensor(x, requires_grad=True)
        wt = lib.tensor(w, requires_grad=True)
        y = lib.nn.functional.conv2d(xt, wt)
        y.backward(lib.tensor(g))
        results.append([y.detach().numpy(), xt.grad.numpy(), wt.grad.numpy()])
    assert seen["planes"] >= 1
    for mine, theirs in zip(*results):
        np.testing.assert_allclose(mine, theirs, rtol=1e-4, atol=1e-4 * np.abs(theirs).max())


def test_linear_weight_gradient_shared_in_chunks(numba_host, monkeypatch):
    # NOTE [The weight gradient shared]: dW's rows in chunks claimed by both threads give the
    # bits of the one-thread product, and the layer's gradients match torch
    from ember.ops.nn import linear
    monkeypatch.setattr(_blas_parts, "late_solo", lambda now: False)
    seen = count_calls(monkeypatch, linear, shared="_shared_weight_grad")
    rng = np.random.default_rng(15)
    x = rng.standard_normal((300, 256)).astype(np.float32)
    w = (rng.standard_normal((390, 256)) / 16).astype(np.float32)
    g = rng.standard_normal((300, 390)).astype(np.float32)
    grads = {}
    for shared in (True, False):
        if not shared:
            monkeypatch.setattr(linear, "_shared_weight_grad", lambda *a: None)
        xt = ember.tensor(x, requires_grad=True)
        wt = ember.tensor(w, requires_grad=True)
        ember.nn.functional.linear(xt, wt).backward(ember.tensor(g))
        grads[shared] = (xt.grad.numpy().copy(), wt.grad.numpy().copy())
    if _blas_parts.on("linear_pair") and _blas_parts.threads() >= 2:
        assert seen["shared"] == 1
    np.testing.assert_array_equal(grads[True][1], grads[False][1])
    np.testing.assert_array_equal(grads[True][0], grads[False][0])
    xt = torch.tensor(x, requires_grad=True)
    wt = torch.tensor(w, requires_grad=True)
    torch.nn.functional.linear(xt, wt).backward(torch.tensor(g))
    for mine, theirs in zip(grads[True], (xt.grad.numpy(), wt.grad.numpy())):
        np.testing.assert_allclose(mine, theirs, rtol=1e-4, atol=1e-4 * np.abs(theirs).max())


def test_columns_in_chunks_give_the_bits_of_rows():
    # nn_cols: a product cut along its columns, at any cut, gives nn_rows' bits
    rng = np.random.default_rng(16)
    a = rng.standard_normal((37, 130)).astype(np.float32)
    b = rng.standard_normal((130, 100)).astype(np.float32)
    for left in (a, np.asfortranarray(a)):
        whole = np.empty((37, 100), np.float32)
        gemm.nn_rows(left, b, whole, b[0], False, 0, 37)
        for cuts in ((0, 100), (0, 16, 100), (0, 7, 50, 99, 100)):
            parts = np.full_like(whole, np.nan)
            for lo, hi in zip(cuts, cuts[1:]):
                gemm.nn_cols(left, b, parts, lo, hi)
            np.testing.assert_array_equal(parts, whole)
    np.testing.assert_allclose(whole, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)


def test_chunk_bounds_cover_the_range_at_aligned_cuts():
    from ember.ops._kernels.split import chunk_bounds
    for n, chunks, align in ((4608, 8, 16), (512, 8, 4), (130, 8, 4), (10, 8, 4), (3, 8, 4),
                             (1, 8, 16)):
        cuts = chunk_bounds(n, chunks, align)
        assert cuts[0] == 0 and cuts[-1] == n and len(cuts) - 1 <= chunks
        assert all(lo < hi for lo, hi in zip(cuts, cuts[1:]))
        assert all(c % align == 0 for c in cuts[:-1])


@pytest.mark.parametrize("solo", [False, True])
def test_rows_route_gradients_shared_in_chunks(numba_host, monkeypatch, solo):
    # NOTE [Shared pairs]: the rows route's two gradients as chunks both threads claim give the
    # bits of the serial gradients, on two threads and in a late worker's solo period (the
    # pair on one thread), and match torch
    from ember.ops._kernels import conv, split
    monkeypatch.setattr(_blas_parts, "late_solo", lambda now: solo)
    seen = count_calls(monkeypatch, split, shared="at_once_shared")
    rng = np.random.default_rng(17)
    x = rng.standard_normal((8, 256, 4, 4)).astype(np.float32)
    w = (rng.standard_normal((128, 256, 3, 3)) / 48).astype(np.float32)
    g = rng.standard_normal((8, 128, 4, 4)).astype(np.float32)
    args = ((1, 1), (1, 1), (1, 1), 1)
    keep = []
    conv.conv2d_forward(x, w, None, *args, keep)
    with conv._kt.conv_scope(1 << 30):
        geo = conv._geometry(w.shape, *args[:3])
        pair = split.at_once_applies(conv._macs(x.shape, w.shape, geo))
        shared = conv.conv2d_backward(g, x, w, *args, True, True, False, keep[0])
    monkeypatch.setattr(split, "at_once_applies", lambda macs: False)
    serial = conv.conv2d_backward(g, x, w, *args, True, True, False, keep[0])
    assert seen["shared"] == (1 if pair else 0)
    np.testing.assert_array_equal(shared[0], serial[0])
    np.testing.assert_array_equal(shared[1], serial[1])
    xt = torch.tensor(x, requires_grad=True)
    wt = torch.tensor(w, requires_grad=True)
    torch.nn.functional.conv2d(xt, wt, padding=1).backward(torch.tensor(g))
    for mine, theirs in zip(shared[:2], (xt.grad.numpy(), wt.grad.numpy())):
        np.testing.assert_allclose(mine, theirs, rtol=1e-4, atol=1e-4 * np.abs(theirs).max())


def test_shared_pair_raises_a_chunk_error():
    from ember.ops._kernels import split

    def bad(lo, hi):
        raise ValueError(f"chunk {lo}:{hi} failed")

    ok = split.Shared(lambda lo, hi: None, [0, 1, 2], lambda: "ok")
    failing = split.Shared(bad, [0, 4], lambda: "never read")
    with pytest.raises(ValueError, match="chunk 0:4 failed"):
        split.at_once_shared(ok, failing)


@pytest.mark.parametrize("m", [45, 96])
def test_any_block_gives_the_bits_of_the_whole(m):
    # NOTE [A register tile]: the leftover rows and columns make each sum as the tile does,
    # so blocks cut anywhere along either axis reproduce the whole
    # product's bits
    rng = np.random.default_rng(21)
    n, k = 77, gemm.KB + 9
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    whole = np.empty((m, n), np.float32)
    gemm.nn_block(a, b, whole, bias, True, 0, m, 0, n)
    ref = a.astype(np.float64) @ b.astype(np.float64) + bias
    np.testing.assert_allclose(whole, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())
    for row_cuts in ((0, 3, 11, m), (0, m - 1, m)):
        parts = np.full((m, n), np.nan, np.float32)
        for lo, hi in zip(row_cuts, row_cuts[1:]):
            for jlo, jhi in ((0, 5), (5, 32), (32, 70), (70, 77)):
                gemm.nn_block(a, b, parts, bias, True, lo, hi, jlo, jhi)
        assert np.array_equal(parts, whole)


def test_the_tile_is_compiled_vectorised_for_every_operand_it_gets(numba_host):
    # the tile only keeps its sums in vector registers when compiled with the SLP pass
    # (`_compile_tile`); a signature compiled later, on first use, would be scalar code
    rng = np.random.default_rng(22)
    a = rng.standard_normal((70, 300)).astype(np.float32)
    b = rng.standard_normal((300, 96)).astype(np.float32)
    listed = set(gemm.tile.signatures)
    for left in (a, np.asfortranarray(a), a[:, ::1][::1, :300], np.repeat(a, 2, 1)[:, ::2]):
        for dtype in (np.float32,):  # (a float64 tile compiles on first use)
            x, y = left.astype(dtype, copy=False), b.astype(dtype)
            out = np.empty((70, 96), dtype)
            gemm.nn_rows(x, y, out, y[0], False, 0, 70)
            ref = x.astype(np.float64) @ y.astype(np.float64)
            np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())
            gemm.nt_rows(np.ascontiguousarray(x), np.ascontiguousarray(y.T), out, y[0], False, 0,
                         70)
            np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())
    readonly = np.broadcast_to(a, (2,) + a.shape)
    assert gemm.planes_matmul(readonly, np.stack([b, b]), np.empty((2, 70, 96), np.float32))[1] \
        is not None
    assert set(gemm.tile.signatures) == listed
    # (the cached tile cannot be inspected: the same source compiled afresh both ways)
    sig = next(gemm._tile_signatures())
    packed = r"vfmadd\d+ps\s+%[yz]mm"
    for slp in (False, True):
        fresh = numba.njit(nogil=True, fastmath={"contract"})(gemm_tile.tile.py_func)
        if slp:
            with gemm._slp():
                fresh.compile(sig)
        else:
            fresh.compile(sig)
        assert bool(re.search(packed, fresh.inspect_asm(sig))) == slp


def test_one_panel_of_columns_goes_to_the_tile(numba_host):
    # _tiles_columns: exactly 32 columns go to the tile from STREAM_ROWS rows; fewer rows, or
    # 33-63 columns (a mostly empty second panel), keep the dot tiles on a transposed copy
    rng = np.random.default_rng(23)
    b32 = rng.standard_normal((300, 32)).astype(np.float32)
    for m, b, route in ((gemm.STREAM_ROWS, b32, "nn"), (gemm.STREAM_ROWS - 8, b32, "nt"),
                        (64, rng.standard_normal((300, 33)).astype(np.float32), "nt")):
        a = rng.standard_normal((m, 300)).astype(np.float32)
        assert gemm._kernel(a, b) == route
        out = gemm.matmul(a, b)
        ref = a.astype(np.float64) @ b.astype(np.float64)
        np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())
