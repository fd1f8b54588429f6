"""Linear on (B, T, d) activations with the split-GEMM mode on (EMBER_KERNEL_THREADS=2
EMBER_SPLIT_GEMMS=1, NOTE [Convolution GEMMs on the kernel threads] in ops/_kernels/split.py):
the forward runs as one (B*T, d) product in parts, the bias gradient's matrix-vector product on
one OpenBLAS thread; values and gradients as in the default mode."""
import numpy as np
import pytest

import ember
from ember import _kernel_threads, _threads
from ember.autograd import gradcheck
from ember.nn import functional as F
from ember.ops._kernels import split
from ember.ops.nn import linear

# these tests are about the pool-off modes the one pool replaces (NOTE [One pool])
pytestmark = pytest.mark.usefixtures("pool_off")


@pytest.fixture
def split_mode(monkeypatch):
    """The mode on for every product, in blocks of 2 rows; returns the list of split sizes."""
    monkeypatch.setattr(split, "_split_gemms", [True])
    monkeypatch.setattr(_threads, "_requested", [2])
    monkeypatch.setattr(split, "_GEMM_MIN_MACS", 1)
    monkeypatch.setattr(split, "_GEMM_ALIGN", 2)
    monkeypatch.setattr(linear, "SMALL_GEMM", (0, 1))  # every product counts as big
    parts = []
    original = _kernel_threads.parallel_range
    monkeypatch.setattr(_kernel_threads, "parallel_range",
                        lambda fn, n, grain: parts.append(n) or original(fn, n, grain))
    return parts


def test_3d_linear_forward_runs_in_parts(rng, split_mode):
    x = rng.standard_normal((2, 7, 12)).astype(np.float32)
    w = rng.standard_normal((10, 12)).astype(np.float32)
    b = rng.standard_normal(10).astype(np.float32)
    y = F.linear(ember.tensor(x), ember.tensor(w), ember.tensor(b))
    assert split_mode, "the (B, T, d) product did not run in parts"
    assert y.shape == (2, 7, 10)
    np.testing.assert_allclose(y.numpy(), x @ w.T + b, rtol=1e-5, atol=1e-5)
    # without bias; and fewer rows than outputs (the columns are split instead)
    y = F.linear(ember.tensor(x), ember.tensor(w))
    np.testing.assert_allclose(y.numpy(), x @ w.T, rtol=1e-5, atol=1e-5)
    wide = rng.standard_normal((30, 12)).astype(np.float32)
    bw = rng.standard_normal(30).astype(np.float32)
    y = F.linear(ember.tensor(x), ember.tensor(wide), ember.tensor(bw))
    np.testing.assert_allclose(y.numpy(), x @ wide.T + bw, rtol=1e-5, atol=1e-5)
    # a float64 bias on float32 input is torch's error, not a silent promotion
    with pytest.raises(RuntimeError):
        F.linear(ember.tensor(x), ember.tensor(w), ember.tensor(b.astype(np.float64)))


def test_3d_linear_gradients_in_split_mode(rng, split_mode):
    x = rng.standard_normal((2, 5, 6))
    w = rng.standard_normal((4, 6))
    b = rng.standard_normal(4)
    xs = [ember.tensor(a, requires_grad=True) for a in (x, w, b)]
    assert gradcheck(lambda x_, w_, b_: F.linear(x_, w_, b_), xs)
    # float32 values of all three gradients against NumPy's
    x32, w32, b32 = (ember.tensor(a.astype(np.float32), requires_grad=True) for a in (x, w, b))
    g = rng.standard_normal((2, 5, 4)).astype(np.float32)
    F.linear(x32, w32, b32).backward(ember.tensor(g))
    g2 = g.reshape(-1, 4)
    np.testing.assert_allclose(x32.grad.numpy(), g @ w.astype(np.float32), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(w32.grad.numpy(), g2.T @ x.reshape(-1, 6).astype(np.float32),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(b32.grad.numpy(), g2.sum(0), rtol=1e-5, atol=1e-5)


def test_bias_gradient_on_one_openblas_thread_in_split_mode(rng, split_mode, monkeypatch):
    funcs = _kernel_threads._openblas()
    if not funcs:
        pytest.skip("numpy's OpenBLAS not found by threadpoolctl: nothing is set or restored")
    get, set_ = funcs
    before = get()
    set_(2)
    threads_seen = []
    original = linear._column_sums

    def column_sums(g2):
        threads_seen.append(get())
        return original(g2)

    monkeypatch.setattr(linear, "_column_sums", column_sums)
    try:
        x = ember.tensor(rng.standard_normal((3, 40, 8)).astype(np.float32), requires_grad=True)
        w = ember.tensor(rng.standard_normal((6, 8)).astype(np.float32), requires_grad=True)
        b = ember.tensor(np.zeros(6, np.float32), requires_grad=True)
        F.linear(x, w, b).sum().backward()
        assert threads_seen and set(threads_seen) == {1}  # in parts, each on one thread
        assert get() == 2  # restored
        np.testing.assert_allclose(b.grad.numpy(), np.full(6, 120.0), rtol=1e-6)
    finally:
        set_(before)


@pytest.mark.parametrize("with_bias", [True, False])
def test_backward_runs_dx_and_dw_as_two_tasks(rng, split_mode, with_bias):
    # dx = G W and dW = G^T X whole on one kernel thread each, the bias gradient after dx: one
    # hand-off of 2 tasks, values as NumPy's
    x = ember.tensor(rng.standard_normal((2, 9, 6)).astype(np.float32), requires_grad=True)
    w = ember.tensor(rng.standard_normal((4, 6)).astype(np.float32), requires_grad=True)
    b = ember.tensor(rng.standard_normal(4).astype(np.float32), requires_grad=True)
    y = F.linear(x, w, b if with_bias else None)
    g = rng.standard_normal((2, 9, 4)).astype(np.float32)
    del split_mode[:]
    y.backward(ember.tensor(g))
    assert split_mode == [2]
    g2 = g.reshape(-1, 4)
    np.testing.assert_allclose(x.grad.numpy(), g @ w.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(w.grad.numpy(), g2.T @ x.detach().numpy().reshape(-1, 6),
                               rtol=1e-5, atol=1e-5)
    if with_bias:
        np.testing.assert_allclose(b.grad.numpy(), g2.sum(0), rtol=1e-5, atol=1e-5)
    else:
        assert b.grad is None
