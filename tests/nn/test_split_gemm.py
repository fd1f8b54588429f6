"""Convolution GEMMs on the kernel threads (NOTE [Convolution GEMMs on the kernel threads] in
ember/ops/_kernels/split.py): off by default; when on, every split product equals NumPy's, the
convolutions' values and gradients are unchanged, and OpenBLAS's thread count is restored."""
import numpy as np
import pytest

import ember
from ember import _kernel_threads, _threads
from ember.autograd import gradcheck
from ember.nn import functional as F
from ember.ops._kernels import split

# the kernel-thread modes tested here are off while the one pool is on (NOTE [One pool])
pytestmark = pytest.mark.usefixtures("pool_off")


@pytest.fixture
def split_mode(monkeypatch):
    """The mode on: EMBER_SPLIT_GEMMS=1's flag and a kernel pool of two threads; every product
    from 1 multiply-add up is split, in blocks of 2 rows or columns."""
    monkeypatch.setattr(split, "_split_gemms", [True])
    monkeypatch.setattr(_threads, "_requested", [2])
    monkeypatch.setattr(split, "_GEMM_MIN_MACS", 1)
    monkeypatch.setattr(split, "_GEMM_ALIGN", 2)
    parts = []
    original = _kernel_threads.parallel_range
    monkeypatch.setattr(_kernel_threads, "parallel_range",
                        lambda fn, n, grain: parts.append(n) or original(fn, n, grain))
    return parts


def test_split_gemms_is_off_by_default_and_needs_the_kernel_pool(monkeypatch):
    monkeypatch.delenv("EMBER_SPLIT_GEMMS", raising=False)
    monkeypatch.setattr(split, "_split_gemms", [None])
    monkeypatch.setattr(_threads, "_requested", [2])
    assert not split.split_gemms()
    monkeypatch.setenv("EMBER_SPLIT_GEMMS", "1")
    monkeypatch.setattr(split, "_split_gemms", [None])
    assert split.split_gemms()
    monkeypatch.setattr(_threads, "_requested", [1])  # no second kernel thread: nothing to split
    assert not split.split_gemms()


@pytest.mark.parametrize("a_shape, b_shape, transpose_a, transpose_b", [
    ((1, 70, 40), (1, 40, 33), False, False),    # rows (70 >= 33), an unaligned last block
    ((1, 20, 40), (1, 40, 97), False, True),     # columns, b a transposed view
    ((36, 24, 16), (36, 16, 50), True, False),   # planes of a batched product
    ((2, 24, 16), (5, 2, 16, 30), False, False),  # planes of b, a broadcast
    ((48, 10), (10, 64), False, False),          # 2-D
])
def test_split_gemm_equals_numpy(rng, split_mode, a_shape, b_shape, transpose_a, transpose_b):
    a = rng.standard_normal(a_shape)
    b = rng.standard_normal(b_shape)
    if transpose_a:
        a = np.ascontiguousarray(a.swapaxes(-1, -2)).swapaxes(-1, -2)
    if transpose_b:
        b = np.ascontiguousarray(b.swapaxes(-1, -2)).swapaxes(-1, -2)
    expected = np.matmul(a, b)
    np.testing.assert_allclose(split.gemm(a, b), expected, rtol=1e-13, atol=1e-13)
    out = np.empty_like(expected)
    assert split.gemm(a, b, out=out) is out
    np.testing.assert_allclose(out, expected, rtol=1e-13, atol=1e-13)
    assert split_mode and all(n >= 2 for n in split_mode)  # it did run in parts


def test_split_gemm_restores_openblas_threads(rng, split_mode):
    funcs = _kernel_threads._openblas()
    if not funcs:
        pytest.skip("numpy's OpenBLAS not found by threadpoolctl: nothing is set or restored")
    get, set_ = funcs
    before = get()
    set_(2)
    seen = []
    original = _kernel_threads.blas_threads_enter

    def lowered(n):
        restore = original(n)
        seen.append(get())
        return restore
    try:
        _kernel_threads.blas_threads_enter = lowered
        split.gemm(rng.standard_normal((64, 64)), rng.standard_normal((64, 64)))
        assert seen == [1]  # the parts ran on one OpenBLAS thread each
        assert get() == 2
    finally:
        _kernel_threads.blas_threads_enter = original
        set_(before)


@pytest.mark.parametrize("kwargs, x_shape, w_shape", [
    (dict(padding=1), (2, 4, 7, 6), (6, 4, 3, 3)),                       # im2col
    (dict(stride=2, padding=(1, 2), dilation=(2, 1)), (2, 4, 9, 8), (5, 4, 3, 2)),
    (dict(groups=2), (2, 4, 5, 5), (6, 2, 3, 3)),                        # planes = groups
    (dict(), (3, 6, 2, 2), (8, 6, 1, 1)),                                # pointwise, columns
    (dict(), (3, 4, 9, 9), (5, 4, 1, 1)),                                # pointwise, per sample
])
def test_convolution_gradcheck_with_split_gemms(rng, split_mode, kwargs, x_shape, w_shape):
    x = ember.tensor(rng.standard_normal(x_shape), requires_grad=True)
    w = ember.tensor(rng.standard_normal(w_shape), requires_grad=True)
    b = ember.tensor(rng.standard_normal(w_shape[0]), requires_grad=True)
    # a non-contiguous input: the convolution sees a transposed view of a leaf
    xt = ember.tensor(np.ascontiguousarray(x.detach().numpy().swapaxes(2, 3)),
                      requires_grad=True)
    assert gradcheck(lambda x_, w_, b_: F.conv2d(x_, w_, b_, **kwargs), (x, w, b))
    assert gradcheck(lambda x_, w_: F.conv2d(x_.transpose(2, 3), w_, **kwargs), (xt, w))
    assert split_mode  # products were split


@pytest.mark.parametrize("shape", [(4, 24, 16, 16), (8, 32, 8, 8)])
def test_winograd_layer_with_split_gemms_matches_the_default(rng, monkeypatch, shape):
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal((shape[1], shape[1], 3, 3)).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)

    def step():
        xt, wt = ember.tensor(x, requires_grad=True), ember.tensor(w, requires_grad=True)
        F.conv2d(xt, wt, padding=1).backward(ember.tensor(g))
        return xt.grad.numpy(), wt.grad.numpy()

    default = step()
    monkeypatch.setattr(split, "_split_gemms", [True])
    monkeypatch.setattr(_threads, "_requested", [2])
    # (the split products are BLAS's; the default's may be numba's, NOTE [A GEMM in numba]:
    # float32 rounding of sums over 9 x 32 x 64 terms, relative to the gradients' scale)
    for got, want in zip(step(), default, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("pool_args", [(2, 2, 0), (3, 2, 1), (3, 2, 0)])
def test_max_pool_and_relu_in_parts_give_the_one_call_numbers(rng, monkeypatch, pool_args):
    """Max pooling (forward and backward) and relu / relu6 (and their gradients) run in parts
    over planes / elements on the kernel threads when the pool is on: the same numbers, bit for
    bit, as one call (NOTE [Two halves on two threads] in split.py)."""
    x_np = rng.standard_normal((4, 6, 11, 12)).astype(np.float32)
    g_np = rng.standard_normal((4, 6, 11, 12)).astype(np.float32)

    def step():
        x = ember.tensor(x_np, requires_grad=True)
        h = F.relu6(F.relu(x) * 3 - 1)
        y = F.max_pool2d(h, *pool_args)
        (y * ember.tensor(rng_g[: y.numel()].reshape(tuple(y.shape)))).sum().backward()
        return y.detach().numpy().copy(), x.grad.numpy().copy()

    rng_g = g_np.reshape(-1)
    whole = step()
    calls = []
    original = split._parallel_range
    monkeypatch.setattr(split, "_parallel_range", lambda *a: calls.append(1) or original(*a))
    monkeypatch.setattr(split, "_MIN_WORK", 0)
    monkeypatch.setattr(_threads, "_requested", [2])
    parts = step()
    assert len(calls) >= 6  # relu, relu6, max pool and their gradients
    for got, want in zip(parts, whole, strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("rows", [6, 80])
def test_linear_with_split_gemms(rng, split_mode, monkeypatch, rows):
    """Linear's big products run in parts too (few rows: turned round, NOTE [GEMM orientation]);
    values in float32 against NumPy, gradients by gradcheck in float64."""
    from ember.ops.nn import linear
    monkeypatch.setattr(linear, "SMALL_GEMM", (0, 1))  # every product counts as big
    x = rng.standard_normal((rows, 20)).astype(np.float32)
    w = rng.standard_normal((24, 20)).astype(np.float32)
    b = rng.standard_normal(24).astype(np.float32)
    y = F.linear(ember.tensor(x), ember.tensor(w), ember.tensor(b))
    np.testing.assert_allclose(y.numpy(), x @ w.T + b, rtol=1e-5, atol=1e-5)
    before = len(split_mode)
    xd = ember.tensor(x.astype(np.float64), requires_grad=True)
    wd = ember.tensor(w.astype(np.float64), requires_grad=True)
    assert gradcheck(lambda x_, w_: F.linear(x_, w_), (xd, wd))
    assert len(split_mode) > before  # the backward's products were split as well


def test_winograd_takes_4x4_maps_only_with_split_gemms(monkeypatch):
    """NOTE [Winograd with every pass on two threads]: F(2x2, 3x3) from 32 tiles in the mode,
    from 128 otherwise; 2x2 maps stay with im2col either way."""
    from ember.ops._kernels import winograd
    deep, tiny = (8, 512, 4, 4), (8, 512, 2, 2)
    w = (512, 512, 3, 3)
    assert winograd._tile_size(deep, w, 1, 1) == 0
    monkeypatch.setattr(split, "_split_gemms", [True])
    monkeypatch.setattr(_threads, "_requested", [2])
    assert winograd._tile_size(deep, w, 1, 1) == 2
    assert winograd._tile_size(tiny, w, 1, 1) == 0


@pytest.mark.parametrize("on_in_forward", [False, True])
def test_mode_switched_between_forward_and_backward(rng, monkeypatch, on_in_forward):
    """What the forward kept (im2col matrix or Winograd's transformed input) is not used by a
    backward that took the other algorithm: the gradients are still right."""
    x_np = rng.standard_normal((8, 16, 4, 4))
    w_np = rng.standard_normal((16, 16, 3, 3))
    g = rng.standard_normal((8, 16, 4, 4))
    from ember.ops._kernels import winograd
    monkeypatch.setattr(winograd, "_MIN_CHANNELS", 1)

    def mode(on):
        monkeypatch.setattr(split, "_split_gemms", [on])
        monkeypatch.setattr(_threads, "_requested", [2 if on else 1])

    def grads(switch):
        mode(on_in_forward)
        x = ember.tensor(x_np, requires_grad=True)
        w = ember.tensor(w_np, requires_grad=True)
        y = F.conv2d(x, w, padding=1)
        mode(on_in_forward != switch)
        y.backward(ember.tensor(g))
        return x.grad.numpy(), w.grad.numpy()

    for got, want in zip(grads(True), grads(False), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
