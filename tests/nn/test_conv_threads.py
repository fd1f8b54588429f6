"""Kernel threads for the convolution family only (NOTE [Conv threads] in
ember/_kernel_threads.py): off by default; when on, large convolutions, batch norm and pooling
use the kernel pool and split GEMMs, everything else does not, and the numbers are the default
path's (float32 to Winograd's rounding, float64 by gradcheck)."""
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
def conv_threads(monkeypatch):
    """EMBER_CONV_THREADS=2 as read from the environment; every convolution counts as large;
    the kernel-pool calls are recorded (their range sizes)."""
    monkeypatch.setattr(_kernel_threads, "_conv_threads", [2])
    monkeypatch.setattr(_kernel_threads, "CONV_MIN_MACS", 1)
    monkeypatch.setattr(_threads, "_requested", [None])
    monkeypatch.setattr(split, "_split_gemms", [False])
    monkeypatch.setattr(split, "_MIN_WORK", 0)
    monkeypatch.setattr(split, "_GEMM_MIN_MACS", 1)
    monkeypatch.setattr(split, "_GEMM_ALIGN", 2)
    parts = []
    _record_pool_calls(monkeypatch, parts)
    return parts


def _record_pool_calls(monkeypatch, parts):
    """Append the range size of every kernel-pool call made with more than one thread."""
    original = _kernel_threads.parallel_range

    def recorded(fn, n, grain):
        if _kernel_threads.num_workers() > 1:
            parts.append(n)
        return original(fn, n, grain)
    monkeypatch.setattr(_kernel_threads, "parallel_range", recorded)
    monkeypatch.setattr(split, "_parallel_range", recorded)


def test_conv_threads_are_off_by_default(monkeypatch):
    monkeypatch.delenv("EMBER_CONV_THREADS", raising=False)
    monkeypatch.setattr(_kernel_threads, "_conv_threads", [None])
    monkeypatch.setattr(_threads, "_requested", [None])
    with _kernel_threads.conv_scope(10 ** 12):
        assert _kernel_threads._scoped[0] == 0
    assert _kernel_threads._conv_threads[0] == 0
    monkeypatch.setenv("EMBER_CONV_THREADS", "1")  # one thread: nothing to hand out
    monkeypatch.setattr(_kernel_threads, "_conv_threads", [None])
    with _kernel_threads.conv_scope(10 ** 12):
        assert _kernel_threads._scoped[0] == 0


def test_conv_scope_sets_and_restores_the_pool(monkeypatch):
    monkeypatch.setenv("EMBER_CONV_THREADS", "2")
    monkeypatch.setenv("EMBER_CONV_MIN_MACS", "1000")
    monkeypatch.setattr(_kernel_threads, "_conv_threads", [None])
    monkeypatch.setattr(_kernel_threads, "CONV_MIN_MACS", 1 << 24)
    monkeypatch.setattr(_kernel_threads, "_default", [1])
    monkeypatch.setattr(_threads, "_requested", [None])
    monkeypatch.setattr(split, "_split_gemms", [False])
    assert _kernel_threads.num_workers() == 1 and not split.split_gemms()
    with _kernel_threads.conv_scope(999):  # below EMBER_CONV_MIN_MACS
        assert _kernel_threads.num_workers() == 1 and not split.split_gemms()
    with _kernel_threads.conv_scope(1000):
        assert _kernel_threads.num_workers() == 2 and split.split_gemms()
        with _kernel_threads.conv_scope():  # nested (batch norm has no size threshold)
            assert _kernel_threads.num_workers() == 2
        assert _kernel_threads.num_workers() == 2
    assert _kernel_threads.num_workers() == 1 and not split.split_gemms()
    assert _kernel_threads.CONV_MIN_MACS == 1000
    monkeypatch.setattr(_threads, "_requested", [1])  # ember.set_num_threads(1) decides
    with _kernel_threads.conv_scope(10 ** 12):
        assert _kernel_threads.num_workers() == 1 and not split.split_gemms()


def test_conv_scope_holds_openblas_at_one_thread(monkeypatch):
    """Every convolution-family op, the small ones too, runs with numpy's OpenBLAS at one
    thread while the switch is on, so its worker never spins beside the kernel threads (NOTE
    [Conv threads])."""
    funcs = _kernel_threads._openblas()
    if not funcs:
        pytest.skip("numpy's OpenBLAS is not reachable through threadpoolctl")
    get, set_ = funcs
    monkeypatch.setattr(_kernel_threads, "_conv_threads", [2])
    monkeypatch.setattr(_kernel_threads, "CONV_MIN_MACS", 1000)
    monkeypatch.setattr(_threads, "_requested", [None])
    before = get()
    set_(2)
    try:
        for macs in (999, 1000, None):
            with _kernel_threads.conv_scope(macs):
                assert get() == 1
            assert get() == 2
        monkeypatch.setattr(_kernel_threads, "_conv_threads", [0])  # switch off: BLAS as it is
        with _kernel_threads.conv_scope(10 ** 12):
            assert get() == 2
    finally:
        set_(before)


@pytest.mark.parametrize("name, value", [("EMBER_CONV_THREADS", "two"),
                                         ("EMBER_CONV_THREADS", "0"),
                                         ("EMBER_CONV_MIN_MACS", "1e6")])
def test_conv_threads_bad_environment(monkeypatch, name, value):
    monkeypatch.setenv("EMBER_CONV_THREADS", "2")
    monkeypatch.setenv(name, value)
    monkeypatch.setattr(_kernel_threads, "_conv_threads", [None])
    monkeypatch.setattr(_kernel_threads, "CONV_MIN_MACS", 1 << 24)
    with pytest.raises(ValueError, match=f"{name}: expected"):
        _kernel_threads.conv_scope(1)


def test_scope_is_left_after_an_error(conv_threads):
    x = ember.randn(2, 3, 5, 5)
    with pytest.raises(RuntimeError):
        F.conv2d(x, ember.randn(4, 5, 3, 3))  # channel mismatch
    assert _kernel_threads._scoped[0] == 0
    assert _kernel_threads.num_workers() == 1


@pytest.mark.parametrize("kwargs, x_shape, w_shape", [
    (dict(padding=1), (2, 4, 7, 6), (6, 4, 3, 3)),                       # im2col
    (dict(stride=2, padding=(1, 2), dilation=(2, 1)), (2, 4, 9, 8), (5, 4, 3, 2)),
    (dict(groups=2), (2, 4, 5, 5), (6, 2, 3, 3)),
    (dict(groups=4), (2, 4, 6, 6), (4, 1, 3, 3)),                        # depthwise
    (dict(), (3, 6, 2, 2), (8, 6, 1, 1)),                                # pointwise, columns
    (dict(), (3, 1, 9, 9), (5, 1, 1, 1)),                                # one input channel
])
def test_convolution_gradcheck_under_conv_threads(rng, conv_threads, kwargs, x_shape, w_shape):
    x = ember.tensor(rng.standard_normal(x_shape), requires_grad=True)
    w = ember.tensor(rng.standard_normal(w_shape), requires_grad=True)
    b = ember.tensor(rng.standard_normal(w_shape[0]), requires_grad=True)
    xt = ember.tensor(np.ascontiguousarray(x.detach().numpy().swapaxes(2, 3)),
                      requires_grad=True)  # the convolution sees a non-contiguous view
    assert gradcheck(lambda x_, w_, b_: F.conv2d(x_, w_, b_, **kwargs), (x, w, b))
    assert gradcheck(lambda x_, w_: F.conv2d(x_.transpose(2, 3), w_, **kwargs), (xt, w))
    if kwargs.get("groups", 1) == 1:
        assert conv_threads  # the pool ran parts
    assert _kernel_threads._scoped[0] == 0


def _conv_block_step(x_np, w_np, g_np, bn_kwargs, train):
    x = ember.tensor(x_np, requires_grad=True)
    w = ember.tensor(w_np, requires_grad=True)
    bn = ember.nn.BatchNorm2d(w_np.shape[0], **bn_kwargs)
    bn.train(train)
    h = F.max_pool2d(F.relu(bn(F.conv2d(x, w, padding=1))), 2)
    h.backward(ember.tensor(g_np))
    stats = [] if bn.running_mean is None else [bn.running_mean.numpy(), bn.running_var.numpy()]
    return [h.detach().numpy(), x.grad.numpy(), w.grad.numpy()] + stats


@pytest.mark.parametrize("bn_kwargs, train", [({}, True), ({}, False),
                                              (dict(affine=False), True),
                                              (dict(track_running_stats=False), True)])
def test_conv_batchnorm_pool_block_matches_the_default(rng, monkeypatch, bn_kwargs, train):
    """A VGG/ResNet-like block in float32 (a Winograd layer: 16 channels of 16x16): the same
    values as without the switch, up to Winograd's float32 rounding."""
    from ember.ops._kernels import winograd
    monkeypatch.setattr(winograd, "_MIN_CHANNELS", 1)
    x_np = rng.standard_normal((4, 16, 16, 16)).astype(np.float32)
    w_np = (rng.standard_normal((16, 16, 3, 3)) / 12).astype(np.float32)
    g_np = rng.standard_normal((4, 16, 8, 8)).astype(np.float32)
    default = _conv_block_step(x_np, w_np, g_np, bn_kwargs, train)
    parts = []
    _record_pool_calls(monkeypatch, parts)
    monkeypatch.setattr(split, "_MIN_WORK", 0)
    monkeypatch.setattr(_kernel_threads, "_conv_threads", [2])
    monkeypatch.setattr(_kernel_threads, "CONV_MIN_MACS", 1)
    monkeypatch.setattr(_threads, "_requested", [None])
    scoped = _conv_block_step(x_np, w_np, g_np, bn_kwargs, train)
    assert parts
    for got, want in zip(scoped, default, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_linear_and_relu_outside_the_scope_keep_one_thread(rng, conv_threads):
    """Only the convolution family is scoped: Linear and relu run as without the switch."""
    x = ember.tensor(rng.standard_normal((64, 300)).astype(np.float32), requires_grad=True)
    w = ember.tensor(rng.standard_normal((200, 300)).astype(np.float32), requires_grad=True)
    F.relu(F.linear(x, w)).sum().backward()
    assert conv_threads == []
    np.testing.assert_allclose(w.grad.numpy(),
                               ((x.detach().numpy() @ w.detach().numpy().T > 0).T.astype(
                                   np.float32) @ x.detach().numpy()), rtol=1e-4, atol=1e-3)
