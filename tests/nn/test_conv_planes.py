"""Winograd's batched products in two halves of planes on two threads (NOTE [Small planes on two
threads] in ember/ops/_kernels/split.py): the products np.matmul gives, and a layer's values and
gradients as with the planes off and as torch's."""
import numpy as np
import pytest

import ember
from ember import _blas_parts
from ember.nn import functional as F
from ember.ops._kernels import split, winograd

pytestmark = pytest.mark.usefixtures("pool_off", "blas_parts_on")


@pytest.fixture
def small_planes_split(monkeypatch):
    """Planes in halves however little work they hold (NOTE [No small hand-offs] keeps a
    product batch of under PLANES_MIN_WORK multiply-adds on one thread)."""
    monkeypatch.setattr(split, "PLANES_MIN_WORK", [0])


@pytest.mark.parametrize("dtype, rtol", [(np.float32, 1e-6), (np.float64, 1e-14)])
@pytest.mark.parametrize("transpose", ["none", "a", "b"])
def test_gemm_planes_is_the_batched_product(rng, parts_counted, small_planes_split, dtype, rtol,
                                            transpose):
    planes, m, k, n = 7, 13, 9, 11  # odd plane count: halves of 3 and 4
    a = rng.standard_normal((planes, k, m) if transpose == "a" else (planes, m, k)).astype(dtype)
    b = rng.standard_normal((planes, n, k) if transpose == "b" else (planes, k, n)).astype(dtype)
    a = a.transpose(0, 2, 1) if transpose == "a" else a
    b = b.transpose(0, 2, 1) if transpose == "b" else b
    out = np.full((planes, m, n), np.nan, dtype)
    assert split.gemm_planes(a, b, out) is out
    assert parts_counted == [planes]
    np.testing.assert_allclose(out, np.matmul(a, b), rtol=rtol, atol=rtol * 10)


def test_gemm_planes_leaves_a_small_batch_on_one_thread(rng, parts_counted):
    # the digits convnet's forward: 36 planes of 32 x 16 x 128, 2.4 M multiply-adds in all
    a = rng.standard_normal((36, 32, 16)).astype(np.float32)
    b = rng.standard_normal((36, 16, 128)).astype(np.float32)
    out = np.empty((36, 32, 128), np.float32)
    split.gemm_planes(a, b, out)
    assert parts_counted == []
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-5)


def test_gemm_planes_leaves_big_planes_to_openblas(rng, parts_counted, monkeypatch,
                                                   small_planes_split):
    monkeypatch.setattr(split._kt, "SMALL_GEMM", (1, 8 * 8 * 8))
    a, b = rng.standard_normal((4, 8, 8)), rng.standard_normal((4, 8, 8))
    out = np.empty((4, 8, 8))
    split.gemm_planes(a, b, out)
    assert parts_counted == []
    np.testing.assert_allclose(out, a @ b, rtol=1e-14)


def _layer(x, w, b, g, planes_on):
    _blas_parts.set_enabled(True if planes_on else None)
    on_default = _blas_parts.DEFAULT_ON
    if not planes_on:
        _blas_parts.DEFAULT_ON = on_default - {"planes"}
    try:
        ours = [ember.tensor(a, requires_grad=True) for a in (x, w, b)]
        y = F.conv2d(*ours, padding=1)
        y.backward(ember.tensor(g))
    finally:
        _blas_parts.DEFAULT_ON = on_default
        _blas_parts.set_enabled(True)
    return [y.detach().numpy()] + [t.grad.numpy() for t in ours]


@pytest.mark.parity
@pytest.mark.parametrize("x_shape, o, tile", [
    ((8, 10, 8, 8), 24, 2),     # F(2x2, 3x3): 16 planes
    ((4, 12, 16, 16), 16, 4),   # F(4x4, 3x3): 36 planes
])
def test_winograd_layer_with_planes_in_halves(rng, monkeypatch, parts_counted, small_planes_split,
                                              x_shape, o, tile):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    monkeypatch.setattr(winograd, "_MIN_CHANNELS", 1)
    monkeypatch.setattr(winograd, "_MIN_TILES", 1)
    monkeypatch.setattr(winograd, "_MIN_TILES_4", 1 if tile == 4 else 10 ** 9)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = (rng.standard_normal((o, x_shape[1], 3, 3)) / 12).astype(np.float32)
    b = rng.standard_normal(o).astype(np.float32)
    g = rng.standard_normal((x_shape[0], o) + x_shape[2:]).astype(np.float32)
    planes = (tile + 2) ** 2
    halves = _layer(x, w, b, g, True)
    # forward, input gradient and weight gradient: three products in halves of planes
    assert parts_counted.count(planes) == 3
    del parts_counted[:]
    whole = _layer(x, w, b, g, False)
    assert planes not in parts_counted
    ref = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    ty = torch.nn.functional.conv2d(*ref, padding=1)
    ty.backward(torch.tensor(g))
    expected = [ty.detach().numpy()] + [t.grad.numpy() for t in ref]
    for h, wh, r in zip(halves, whole, expected, strict=True):
        np.testing.assert_allclose(h, wh, rtol=1e-6, atol=1e-6 * np.abs(wh).max())
        np.testing.assert_allclose(h, r, rtol=1e-4, atol=2e-5 * np.abs(r).max())
