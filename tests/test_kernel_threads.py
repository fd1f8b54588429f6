"""ember._kernel_threads (NOTE [Kernel threads]): parallel_range itself, and the kernels that use it
giving the same numbers on one and on two threads."""
import sys
import threading

import numpy as np
import pytest

import ember
from ember import _kernel_threads as kthreads
from ember import _threads
from ember.ops._kernels import attention as katt
from ember.ops._kernels import gelu as kgelu
from ember.ops._kernels import loss as kloss
from ember.ops._kernels import norm as knorm

# these tests are about the pool-off modes the one pool replaces (NOTE [One pool])
pytestmark = pytest.mark.usefixtures("pool_off")


@pytest.fixture(params=[1, 2], ids=["1thread", "2threads"])
def threads(request, monkeypatch):
    # the pool's thread count only (set_num_threads would also change BLAS for the process)
    monkeypatch.setattr(_threads, "_requested", [request.param])
    return request.param


def _covered(n, grain):
    seen = np.zeros(n, np.int64)
    names = set()

    def fn(lo, hi):
        names.add(threading.current_thread().name)
        seen[lo:hi] += 1

    kthreads.parallel_range(fn, n, grain)
    return seen, names


@pytest.mark.parametrize("n,grain", [(0, 1), (1, 1), (7, 1), (100, 3), (1000, 1), (5, 10)])
def test_parallel_range_covers_each_index_once(threads, n, grain):
    seen, _ = _covered(n, grain)
    np.testing.assert_array_equal(seen, np.ones(n, np.int64))


def test_parallel_range_one_thread_runs_one_call_on_the_caller(monkeypatch):
    monkeypatch.setattr(_threads, "_requested", [1])
    calls = []
    kthreads.parallel_range(lambda lo, hi: calls.append((lo, hi, threading.current_thread())),
                             1000, 1)
    assert calls == [(0, 1000, threading.current_thread())]


def test_parallel_range_small_n_stays_on_the_caller(threads):
    calls = []
    kthreads.parallel_range(lambda lo, hi: calls.append((lo, hi)), 10, 6)
    assert calls == [(0, 10)]


def test_parallel_range_reraises_a_part_error(threads):
    def fn(lo, hi):
        if lo <= 500 < hi:
            raise ValueError("part failed")

    with pytest.raises(ValueError, match="part failed"):
        kthreads.parallel_range(fn, 1000, 1)
    seen, _ = _covered(1000, 1)  # the pool still works afterwards
    assert seen.min() == seen.max() == 1


def test_parallel_range_nested_call_runs_serially(threads):
    inner = np.zeros(64, np.int64)

    def outer(lo, hi):
        def fn(a, b):
            inner[a:b] += 1
        if lo == 0:
            kthreads.parallel_range(fn, 64, 1)

    kthreads.parallel_range(outer, 100, 1)
    np.testing.assert_array_equal(inner, np.ones(64, np.int64))


def test_parallel_range_from_several_user_threads(threads):
    results = [None] * 4

    def user(k):
        seen, _ = _covered(5000, 7)
        results[k] = seen

    ts = [threading.Thread(target=user, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout=60)
    for seen in results:
        np.testing.assert_array_equal(seen, np.ones(5000, np.int64))


# --- the kernels: identical results whatever the thread count ------------------------------


def _on_threads(n, fn, monkeypatch):
    monkeypatch.setattr(_threads, "_requested", [n])
    return fn()


def _same_on_1_and_2(fn, monkeypatch):
    one = _on_threads(1, fn, monkeypatch)
    two = _on_threads(2, fn, monkeypatch)
    for a, b in zip(one, two, strict=True):
        np.testing.assert_array_equal(a, b)
    return one


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_kernels_same_on_1_and_2_threads(approximate, monkeypatch):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((300, 1000)).astype(np.float32)
    g = rng.standard_normal(x.shape).astype(np.float32)

    def run():
        y = kgelu.gelu_forward(x, approximate, np.empty_like(x))
        gx = kgelu.gelu_backward(g, x, approximate, np.empty_like(x))
        return y, gx

    y, gx = _same_on_1_and_2(run, monkeypatch)
    xt = ember.from_numpy(x.copy()).requires_grad_()
    yt = ember.nn.functional.gelu(xt, approximate=approximate)
    yt.backward(ember.from_numpy(g))
    np.testing.assert_array_equal(yt.detach().numpy(), y)
    np.testing.assert_array_equal(xt.grad.numpy(), gx)


def test_layer_norm_kernels_same_on_1_and_2_threads(monkeypatch):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1027, 256)).astype(np.float32)
    w = rng.standard_normal(256).astype(np.float32)
    b = rng.standard_normal(256).astype(np.float32)
    gy = rng.standard_normal(x.shape).astype(np.float32)

    def run():
        y, mean, invstd = knorm.layernorm_forward(x, w, b, 1e-5)
        return (y, mean, invstd) + knorm.layernorm_backward(gy, x, w, mean, invstd)

    y, mean, invstd, gx, gw, gb = _same_on_1_and_2(run, monkeypatch)
    ref = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5) * w + b
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(gb, gy.sum(0), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("causal", [False, True])
def test_attention_kernels_same_on_1_and_2_threads(causal, monkeypatch):
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((3, 4, 96, 32)).astype(np.float32) for _ in range(3))
    g = rng.standard_normal((3, 4, 96, 32)).astype(np.float32)

    def run():
        out, p = katt.attention_forward(q, k, v, 0.125, causal)
        p = p.copy()  # from the reuse pool: keep it past the next call
        return (out.copy(), p) + katt.attention_backward(g, q, k, v, p, 0.125, causal)

    out, p = _same_on_1_and_2(run, monkeypatch)[:2]
    s = q @ np.swapaxes(k, -1, -2) * 0.125
    if causal:
        s = np.where(np.tril(np.ones((96, 96), bool)), s, -np.inf)
    ref = np.exp(s - s.max(-1, keepdims=True))
    ref /= ref.sum(-1, keepdims=True)
    np.testing.assert_allclose(p, ref, rtol=1e-5, atol=1e-6)


def test_cross_entropy_backward_same_on_1_and_2_threads(monkeypatch):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((517, 300)).astype(np.float32)
    t = rng.integers(0, 300, 517)
    t[5] = -100

    def run():
        loss, saved = kloss.cross_entropy_forward(x, t, None, -100, 0.1, "mean")
        saved = (saved[0].copy(),) + saved[1:]
        return (loss, kloss.cross_entropy_backward(np.float32(1.0), x, t, saved, None, -100, 0.1,
                                                   "mean"))

    loss, grad = _same_on_1_and_2(run, monkeypatch)
    assert np.all(grad[5] == 0)
    p = np.exp(x - x.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    onehot = np.eye(300, dtype=np.float32)[t] * 0.9 + 0.1 / 300
    ref = (p - onehot) / 516
    ref[5] = 0
    np.testing.assert_allclose(grad, ref, rtol=1e-4, atol=1e-7)


def test_adamw_step_same_on_1_and_2_threads(monkeypatch):
    rng = np.random.default_rng(4)
    w0 = rng.standard_normal((300, 400)).astype(np.float32)
    grads = [rng.standard_normal(w0.shape).astype(np.float32) for _ in range(3)]

    def run():
        w = ember.nn.Parameter(ember.from_numpy(w0.copy()))
        opt = ember.optim.AdamW([w], lr=1e-2, weight_decay=0.1)
        for g in grads:
            w.grad = ember.from_numpy(g)
            opt.step()
        return (w.detach().numpy(), opt.state[w]["exp_avg_sq"].numpy())

    w1, _ = _same_on_1_and_2(run, monkeypatch)
    assert not np.array_equal(w1, w0)


def test_kernel_threads_env_default(monkeypatch):
    monkeypatch.setenv("EMBER_KERNEL_THREADS", "1")
    assert kthreads._default_threads() == 1
    monkeypatch.setenv("EMBER_KERNEL_THREADS", "3")
    assert kthreads._default_threads() == 3
    monkeypatch.setenv("EMBER_KERNEL_THREADS", "two")
    with pytest.raises(ValueError, match="EMBER_KERNEL_THREADS: expected a positive integer"):
        kthreads._default_threads()
    monkeypatch.delenv("EMBER_KERNEL_THREADS")
    assert kthreads._default_threads() == 1  # off unless asked for


def test_set_num_threads_caps_the_kernel_pool(monkeypatch):
    monkeypatch.setattr(_threads, "_requested", [None])
    monkeypatch.setattr(kthreads, "_default", [2])
    assert kthreads.num_workers() == 2
    monkeypatch.setattr(_threads, "_requested", [1])
    assert kthreads.num_workers() == 1


@pytest.mark.filterwarnings("ignore:invalid value encountered in divide")
@pytest.mark.parametrize("shape", [(1024, 1024), (37, 300), (1, 5)])
def test_softmax_pieces_same_on_1_and_2_threads(shape, monkeypatch):
    rng = np.random.default_rng(5)
    x = rng.standard_normal(shape).astype(np.float32) * 4
    x[0, :] = -np.inf  # an all -inf row is shifted by 0

    def run():
        shift, e, total = kloss._row_exp(x)
        return shift, e.copy(), total, kloss.softmax_forward(x).copy()

    shift, e, total, p = _same_on_1_and_2(run, monkeypatch)
    m = x.max(1)
    ref_shift = np.where(np.isfinite(m), m, 0).astype(np.float32)
    np.testing.assert_array_equal(shift, ref_shift)
    ref_e = np.exp(x - ref_shift[:, None])
    # the row kernel's vexp is within 2 ulp of np.exp, its row sums in another order
    np.testing.assert_allclose(e, ref_e, rtol=3e-7, atol=0)
    np.testing.assert_allclose(total, ref_e.sum(axis=1), rtol=2e-6)
    assert np.all(np.isnan(p[0]))  # 0/0, as torch
    np.testing.assert_allclose(p[1:].sum(1), 1, rtol=1e-5)


def test_blas_parallel_range_runs_parts_on_one_blas_thread_and_restores_it(threads):
    funcs = kthreads._openblas()
    if not funcs:
        pytest.skip("numpy's BLAS is not an OpenBLAS that threadpoolctl finds")
    get, _ = funcs
    before = get()
    counts, seen = [], np.zeros(64, np.int64)

    def part(lo, hi):
        counts.append(get())
        seen[lo:hi] += 1

    kthreads.blas_parallel_range(part, 64, 1)
    np.testing.assert_array_equal(seen, np.ones(64, np.int64))
    assert get() == before
    if threads == 1:
        assert counts == [before]  # one call, BLAS left as it was
    else:
        assert set(counts) == {1}


def test_blas_parallel_range_restores_blas_after_an_error(threads):
    funcs = kthreads._openblas()
    if not funcs:
        pytest.skip("numpy's BLAS is not an OpenBLAS that threadpoolctl finds")
    before = funcs[0]()

    def part(lo, hi):
        raise ValueError("part failed")

    with pytest.raises(ValueError, match="part failed"):
        kthreads.blas_parallel_range(part, 64, 1)
    assert funcs[0]() == before


@pytest.mark.parametrize("rows, expect_one", [(8, True), (2048, False), (1, False)])
def test_linear_small_gemms_run_on_one_blas_thread(rows, expect_one, monkeypatch):
    # NOTE [One BLAS thread for small GEMMs]: 8x256x256 is in the capped range, 2048x256x256
    # above it, 1x256x256 below OpenBLAS's own threading bound (left alone)
    funcs = kthreads._openblas()
    if not funcs:
        pytest.skip("numpy's BLAS is not an OpenBLAS that threadpoolctl finds")
    get, set_ = funcs
    before = get()
    set_(2)
    try:
        from ember.ops.nn import linear as lin
        seen = []
        real_gemm = lin.gemm

        def spy(a, b, *args, **kwargs):
            seen.append(get())
            return real_gemm(a, b, *args, **kwargs)

        monkeypatch.setattr(lin, "gemm", spy)
        monkeypatch.setattr(lin, "_MKL_SMALL", [False])  # OpenBLAS's paths, not MKL's kernel
        monkeypatch.setattr(lin._ksg, "ON", [False])  # nor numba's (NOTE [A small Linear in numba])
        x = ember.randn(rows, 256, requires_grad=True)
        layer = ember.nn.Linear(256, 256)
        y = layer(x)
        y.sum().backward()
        assert seen and set(seen) == ({1} if expect_one else {2})
        assert get() == 2                          # restored after forward and backward
        ref = x.detach().numpy() @ layer.weight.detach().numpy().T + layer.bias.detach().numpy()
        np.testing.assert_allclose(y.detach().numpy(), ref, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(layer.weight.grad.numpy(),
                                   np.ones((256, rows), np.float32) @ x.detach().numpy(),
                                   rtol=1e-5, atol=1e-4)
    finally:
        set_(before)


# NOTE [Spinning kernel workers]
_linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                 reason="the workers poll (sched_yield) on Linux only")


@_linux_only
def test_poll_returns_at_a_post_and_gives_up_without_one():
    from ember import _spin
    posts = np.zeros(1, np.int64)
    assert not _spin._k_poll(posts, 0, 1000)
    posts[0] = 1
    assert _spin._k_poll(posts, 0, 1 << 62)  # the first poll sees it


@_linux_only
def test_poll_sees_a_post_made_by_another_thread():
    from ember import _spin
    _spin.calibrate()
    posts = np.zeros(1, np.int64)
    timer = threading.Timer(0.01, posts.__setitem__, (0, 1))
    timer.start()
    # ~20 s of polling at most: a load hoisted out of the loop would never see the write
    assert _spin._k_poll(posts, 0, _spin._iterations[0] * 10_000)
    timer.join()


@pytest.mark.parametrize("pause", [0.0, 0.001, 0.005])
def test_parallel_range_in_a_conv_scope_after_a_pause(monkeypatch, pause):
    """Workers that poll after a task (inside a convolution scope) and workers that went back
    to sleep both take the next task correctly."""
    import time
    monkeypatch.setattr(_threads, "_requested", [None])
    monkeypatch.setattr(kthreads, "_conv_threads", [2])
    monkeypatch.setattr(kthreads, "CONV_MIN_MACS", 1)
    with kthreads.conv_scope(10):
        for _ in range(3):
            time.sleep(pause)
            seen, _ = _covered(1000, 1)
            np.testing.assert_array_equal(seen, np.ones(1000, np.int64))
        assert kthreads._spin_after[0]  # posted inside the scope: the workers poll after it
    monkeypatch.setattr(_threads, "_requested", [2])  # the pool outside any scope
    seen, _ = _covered(1000, 1)
    np.testing.assert_array_equal(seen, np.ones(1000, np.int64))
    assert not kthreads._spin_after[0]  # OpenBLAS's worker may want the core: no polling
