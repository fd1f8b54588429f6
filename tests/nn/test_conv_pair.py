"""A convolution's input and weight gradients at once on two threads (NOTE [A convolution's two
gradients at once] in ember/ops/_kernels/split.py): the serial path's bits and torch's values."""
import numpy as np
import pytest
from _blas_bits import assert_serial_bits

import ember
from ember import _blas_parts
from ember.nn import functional as F
from ember.ops._kernels import split, winograd

pytestmark = pytest.mark.usefixtures("pool_off", "blas_parts_on")

# (input shape, out channels, kernel, stride, padding): im2col on small maps, a strided im2col,
# a thin pointwise layer (batch as columns) and a wide one (per-sample products)
LAYERS = [
    ((4, 64, 4, 4), 96, 3, 1, 1),
    ((4, 32, 8, 8), 64, 3, 2, 1),
    ((4, 256, 4, 4), 128, 1, 1, 0),
    ((4, 64, 16, 16), 128, 1, 1, 0),
]


def _grads(x, w, g, stride, padding, pair_on):
    on_default = _blas_parts.DEFAULT_ON
    _blas_parts.set_enabled(None)
    if not pair_on:
        _blas_parts.DEFAULT_ON = on_default - {"conv_pair"}
    try:
        ours = [ember.tensor(a, requires_grad=True) for a in (x, w)]
        y = F.conv2d(*ours, stride=stride, padding=padding)
        y.backward(ember.tensor(g))
    finally:
        _blas_parts.DEFAULT_ON = on_default
        _blas_parts.set_enabled(True)
    return [t.grad.numpy() for t in ours]


def _layer(rng, x_shape, o, k, stride, padding, dtype):
    x = rng.standard_normal(x_shape).astype(dtype)
    w = (rng.standard_normal((o, x_shape[1], k, k)) / (3 * k)).astype(dtype)
    out_hw = [(s + 2 * padding - k) // stride + 1 for s in x_shape[2:]]
    g = rng.standard_normal((x_shape[0], o, *out_hw)).astype(dtype)
    return x, w, g


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("x_shape, o, k, stride, padding", LAYERS)
def test_pair_gives_the_serial_bits(rng, monkeypatch, parts_counted, x_shape, o, k, stride,
                                    padding, dtype):
    monkeypatch.setattr(split._kt, "SMALL_GEMM", (1 << 18, 1 << 10))  # every layer pairs
    monkeypatch.setattr(split, "AT_ONCE_MIN_WORK", [1 << 10])
    monkeypatch.setattr(split, "PLANES_MIN_WORK", [0])
    x, w, g = _layer(rng, x_shape, o, k, stride, padding, dtype)
    pair = _grads(x, w, g, stride, padding, True)
    assert 2 in parts_counted  # the two tasks went through run_ranges
    del parts_counted[:]
    serial = _grads(x, w, g, stride, padding, False)
    assert 2 not in parts_counted
    for p, s in zip(pair, serial, strict=True):
        assert_serial_bits(p, s)


@pytest.mark.parity
@pytest.mark.parametrize("x_shape, o, k, stride, padding", LAYERS)
def test_pair_float32_matches_torch(rng, monkeypatch, parts_counted, x_shape, o, k, stride,
                                    padding):
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    monkeypatch.setattr(split._kt, "SMALL_GEMM", (1 << 18, 1 << 10))
    monkeypatch.setattr(split, "AT_ONCE_MIN_WORK", [1 << 10])
    monkeypatch.setattr(split, "PLANES_MIN_WORK", [0])
    x, w, g = _layer(rng, x_shape, o, k, stride, padding, np.float32)
    pair = _grads(x, w, g, stride, padding, True)
    assert 2 in parts_counted
    ref = [torch.tensor(a, requires_grad=True) for a in (x, w)]
    torch.nn.functional.conv2d(*ref, stride=stride, padding=padding).backward(torch.tensor(g))
    for p, r in zip(pair, ref, strict=True):
        expected = r.grad.numpy()
        np.testing.assert_allclose(p, expected, rtol=1e-4, atol=2e-5 * np.abs(expected).max())


@pytest.mark.parametrize("x_shape, o, tile", [((8, 10, 8, 8), 24, 2), ((4, 12, 16, 16), 16, 4)])
def test_pair_of_a_winograd_layer_gives_the_serial_bits(rng, monkeypatch, parts_counted, x_shape,
                                                        o, tile):
    monkeypatch.setattr(split._kt, "SMALL_GEMM", (1 << 18, 1 << 10))
    monkeypatch.setattr(split, "AT_ONCE_MIN_WORK", [1 << 10])
    monkeypatch.setattr(split, "PLANES_MIN_WORK", [0])
    monkeypatch.setattr(winograd, "_MIN_CHANNELS", 1)
    monkeypatch.setattr(winograd, "_MIN_TILES", 1)
    monkeypatch.setattr(winograd, "_MIN_TILES_4", 1 if tile == 4 else 10 ** 9)
    x, w, g = _layer(rng, x_shape, o, 3, 1, 1, np.float32)
    pair = _grads(x, w, g, 1, 1, True)
    assert 2 in parts_counted
    del parts_counted[:]
    serial = _grads(x, w, g, 1, 1, False)
    assert 2 not in parts_counted
    for p, s in zip(pair, serial, strict=True):
        assert_serial_bits(p, s)


def test_pair_leaves_small_convolutions_alone(rng, parts_counted):
    x, w, g = _layer(rng, (2, 8, 6, 6), 8, 3, 1, 1, np.float32)  # 2 * 8 * 36 * 72 multiply-adds
    _grads(x, w, g, 1, 1, True)
    assert 2 not in parts_counted


def test_pair_leaves_a_digits_sized_convolution_alone(rng, parts_counted):
    # the digits convnet's second layer, 9.4 M multiply-adds: NOTE [No small hand-offs]
    x, w, g = _layer(rng, (32, 16, 8, 8), 32, 3, 1, 1, np.float32)
    _grads(x, w, g, 1, 1, True)
    assert parts_counted == []


def test_pair_reraises_a_tasks_exception():
    def broken():
        raise ValueError("task failed")

    with pytest.raises(ValueError, match="task failed"):
        split.at_once(lambda: 1, broken)
    assert split._one_thread == [False]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pointwise_forward_in_halves_of_samples_gives_the_serial_bits(rng, monkeypatch,
                                                                      parts_counted, dtype):
    from ember.ops._kernels import conv
    monkeypatch.setattr(split, "PLANES_MIN_WORK", [0])  # 0.9 M multiply-adds in all
    # 100 columns a sample: per-sample products (conv._THIN_COLUMNS and more)
    x, w, _ = _layer(rng, (6, 32, 10, 10), 48, 1, 1, 0, dtype)
    assert not conv._batch_as_columns(100)
    halves = F.conv2d(ember.tensor(x), ember.tensor(w)).numpy()
    assert parts_counted == [6]
    monkeypatch.setattr(conv, "_POINTWISE_PLANES", [False])
    whole = F.conv2d(ember.tensor(x), ember.tensor(w)).numpy()
    np.testing.assert_array_equal(halves, whole)
    np.testing.assert_allclose(halves, np.einsum("oc,nchw->nohw", w[:, :, 0, 0], x),
                               rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-5)
