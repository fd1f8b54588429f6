"""The one pool (NOTE [One pool] in ember/_onepool.py): its GEMM against NumPy over layouts,
dtypes and plane forms, its fallbacks, twin kernels, threads and fork."""
import os
import threading

import numba
import numpy as np
import pytest

from ember import _onepool

pytestmark = pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2,
                                reason="the pool needs numba's threading layer with 2 threads")


@pytest.fixture
def pool(one_pool):
    yield


def _ref(a, b):
    return np.matmul(a.astype(np.float64), b.astype(np.float64))


def _close(got, a, b, tol):
    want = _ref(a, b)
    assert got.shape == want.shape
    assert np.abs(got - want).max() <= tol * max(1.0, np.abs(want).max())


@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-5), (np.float64, 1e-12)])
@pytest.mark.parametrize("m,k,n", [(256, 128, 64), (33, 300, 1000), (1000, 70, 40),
                                   (512, 256, 256)])
def test_matmul_layouts(pool, dtype, tol, m, k, n):
    rng = np.random.default_rng(m + k + n)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    for x in (a, np.asfortranarray(a)):
        for y in (b, np.asfortranarray(b)):
            _close(_onepool.matmul(x, y), a, b, tol)
    # a row-sliced operand keeps its row stride as BLAS's leading dimension
    wide = rng.standard_normal((m, k + 9)).astype(dtype)[:, 3:k + 3]
    _close(_onepool.matmul(wide, b), wide, b, tol)
    out = np.full((m, n), np.nan, dtype)
    assert _onepool.matmul(a, b, out=out) is out
    _close(out, a, b, tol)


def test_matmul_planes(pool):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 200, 96)).astype(np.float32)
    b = rng.standard_normal((3, 96, 150)).astype(np.float32)
    for x, y in [(a, b), (a[0], b), (a, b[0]), (a[:1], b), (a, b.transpose(0, 2, 1).copy()
                                                           .transpose(0, 2, 1))]:
        _close(_onepool.matmul(x, y), x, y, 1e-5)


def test_matmul_batch_axes(pool):
    rng = np.random.default_rng(4)
    q = rng.standard_normal((2, 64, 4, 32)).astype(np.float32).transpose(0, 2, 1, 3)  # permuted
    kt = rng.standard_normal((2, 64, 4, 32)).astype(np.float32).transpose(0, 2, 3, 1)
    _close(_onepool.matmul(q, kt), q, kt, 1e-5)
    for x, y in [(rng.standard_normal((3, 1, 40, 96)), rng.standard_normal((1, 5, 96, 80))),
                 (rng.standard_normal((2, 3, 40, 96)), rng.standard_normal((96, 300))),
                 (rng.standard_normal((300, 96)), rng.standard_normal((2, 3, 96, 40)))]:
        x, y = x.astype(np.float32), y.astype(np.float32)
        _close(_onepool.matmul(x, y), x, y, 1e-5)
    flipped = rng.standard_normal((4, 100, 100)).astype(np.float32)[::-1]  # negative plane step
    _close(_onepool.matmul(flipped, flipped), flipped, flipped, 1e-5)
    with pytest.raises(ValueError):
        _onepool.matmul(np.ones((2, 64, 64), np.float32), np.ones((3, 64, 64), np.float32))


def test_matmul_falls_back_to_numpy(pool):
    rng = np.random.default_rng(2)
    ints = rng.integers(0, 5, (300, 300))
    np.testing.assert_array_equal(_onepool.matmul(ints, ints), ints @ ints)  # not a BLAS dtype
    strided = rng.standard_normal((400, 400)).astype(np.float32)[::2, ::2]  # no unit stride
    np.testing.assert_allclose(_onepool.matmul(strided, strided), strided @ strided, rtol=1e-4,
                               atol=1e-4)
    for m, k, n in [(12800, 256, 1), (1, 12800, 256), (8, 4096, 4096)]:  # thin: BLAS's own path
        x = rng.standard_normal((m, k)).astype(np.float32)
        y = rng.standard_normal((k, n)).astype(np.float32)
        _close(_onepool.matmul(x, y), x, y, 1e-5)
    empty = np.zeros((0, 5), np.float32)
    assert _onepool.matmul(empty, np.ones((5, 7), np.float32)).shape == (0, 7)
    with pytest.raises(ValueError, match="mismatch"):
        _onepool.matmul(np.ones((300, 400), np.float32), np.ones((300, 400), np.float32))


def test_blas_threads_while_on(pool):
    from threadpoolctl import threadpool_info
    assert {i["num_threads"] for i in threadpool_info() if i["internal_api"] == "openblas"} == {1}
    _onepool.set_enabled(False)
    assert all(i["num_threads"] >= 1 for i in threadpool_info())
    assert not _onepool.enabled()


def test_concurrent_callers(pool):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((300, 200)).astype(np.float32)
    b = rng.standard_normal((200, 300)).astype(np.float32)
    want = _ref(a, b)
    errors = []

    def work():
        for _ in range(20):
            if np.abs(_onepool.matmul(a, b) - want).max() > 1e-3:
                errors.append("wrong")

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


@_onepool.twin(min_work=100)
def _scale(x, out):
    for i in numba.prange(x.size):
        out[i] = 2.0 * x[i] + 1.0


def test_twin_picks_by_work_and_state(pool):
    x = np.arange(1000, dtype=np.float64)
    assert _scale.pick(1000) is _scale.parallel
    assert _scale.pick(10) is _scale.serial
    out = np.empty_like(x)
    _scale.pick(x.size)(x, out)
    np.testing.assert_array_equal(out, 2 * x + 1)
    _onepool.set_enabled(False)
    assert _scale.pick(1000) is _scale.serial


def test_twin_versions_cache_apart():
    # numba keys its disk cache by function name, line and signature, not by compile options:
    # the two versions must be cached under different names, or a later process loads the one
    # compiled first for both (the serial twin then ran the parallel code, and the reverse)
    serial = _scale.serial._cache._cache_file._index_name
    parallel = _scale.parallel._cache._cache_file._index_name
    assert serial != parallel
    assert "_scale" in serial and "_scale_parallel" in parallel


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_off_in_forked_child(pool):
    pid = os.fork()
    if pid == 0:  # child: the pool must be off, and GEMMs still right
        ok = False
        try:
            a = np.ones((300, 300), np.float32)
            ok = not _onepool.enabled() and float(_onepool.matmul(a, a)[0, 0]) == 300.0
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
