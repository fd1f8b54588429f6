"""OpenBLAS's parallel regions on ember's workers (NOTE [OpenBLAS threads callback] in
ember/_blas_threads.py): results bit-identical to OpenBLAS's own threads, concurrent callers,
fork, one-thread settings, the environment switch."""
import ctypes
import os
import subprocess
import sys
import threading

import numpy as np
import pytest
from threadpoolctl import ThreadpoolController, threadpool_limits

import ember

_blas_threads = pytest.importorskip("ember._blas_threads", reason="the callback needs Linux on "
                                    "x86-64 or aarch64")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _numpy_openblas():
    for lib in ThreadpoolController().lib_controllers:
        if lib.internal_api == "openblas" and "numpy" in lib.filepath:
            return lib
    return None


@pytest.fixture
def two_threads():
    """OpenBLAS at two threads (so that large products go through exec_blas), the callback
    off at the start and at the end."""
    _blas_threads.disable()
    with threadpool_limits(limits=2, user_api="blas"):
        yield
    _blas_threads.disable()


@pytest.fixture
def callback(two_threads):
    if not _blas_threads.enable():
        pytest.skip("no OpenBLAS with a threads callback (needs the pthreads build >= 0.3.27)")
    _blas_threads.disable()
    yield


def _both(fn):
    """fn() with OpenBLAS's own threads, then on ember's workers; and how many threaded calls
    the callback ran for the second."""
    _blas_threads.disable()
    own = fn()
    calls = _blas_threads.stats()[0]
    assert _blas_threads.enable()
    try:
        ours = fn()
    finally:
        _blas_threads.disable()
    return own, ours, _blas_threads.stats()[0] - calls


def _operands(rng, m, k, n, dtype):
    def make(shape):
        x = rng.standard_normal(shape)
        if np.dtype(dtype).kind == "c":
            x = x + 1j * rng.standard_normal(shape)
        return x.astype(dtype)
    return make((m, k)), make((k, n))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("m,k,n", [(256, 256, 256), (1000, 70, 401), (33, 512, 1000),
                                   (768, 300, 64), (2048, 64, 2048)])
def test_gemm_bit_identical_to_openblas_threads(callback, dtype, m, k, n):
    rng = np.random.default_rng(m * k + n)
    a, b = _operands(rng, m, k, n, dtype)
    for x, y in [(a, b), (np.asfortranarray(a), b), (a, b.T.copy().T)]:
        own, ours, calls = _both(lambda x=x, y=y: x @ y)
        assert np.array_equal(own, ours)
        assert calls >= 1  # the product was threaded, through the callback


@pytest.mark.parametrize("threads", [3, 4])
def test_more_jobs_start_more_workers(callback, threads):
    rng = np.random.default_rng(threads)
    a, b = _operands(rng, 1024, 384, 1000, np.float64)
    with threadpool_limits(limits=threads, user_api="blas"):
        own, ours, calls = _both(lambda: a @ b)
    assert np.array_equal(own, ours) and calls >= 1
    assert _blas_threads.stats()[2] >= threads - 1


def test_gemv_and_lapack_bit_identical(callback):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((3000, 2500)).astype(np.float32)
    v = rng.standard_normal(2500).astype(np.float32)
    own, ours, _ = _both(lambda: a @ v)
    assert np.array_equal(own, ours)
    w = rng.standard_normal((900, 900))
    spd = w @ w.T + 900 * np.eye(900)
    own, ours, calls = _both(lambda: np.linalg.cholesky(spd))  # potrf: threaded syrk/gemm
    assert np.array_equal(own, ours) and calls >= 1
    rhs = rng.standard_normal((900, 50))
    own, ours, _ = _both(lambda: np.linalg.solve(spd, rhs))  # getrf: OpenBLAS's own pool
    assert np.array_equal(own, ours)


def test_scipy_blas_bit_identical(callback):
    from scipy.linalg import blas
    rng = np.random.default_rng(11)
    a, b = _operands(rng, 700, 300, 500, np.float32)
    own, ours, calls = _both(lambda: blas.sgemm(1.0, a, b))
    assert np.array_equal(own, ours) and calls >= 1


def test_concurrent_callers(callback):
    rng = np.random.default_rng(3)
    pairs = [_operands(rng, 300 + 17 * i, 256, 280, np.float32) for i in range(4)]
    want = [a @ b for a, b in pairs]  # OpenBLAS's own threads: the same job partition
    assert _blas_threads.enable()
    errors = []

    def run(i):
        a, b = pairs[i]
        for _ in range(25):
            if not np.array_equal(a @ b, want[i]):
                errors.append(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a BLAS caller never returned"
    assert errors == []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_forked_child_runs_a_gemm(callback):
    rng = np.random.default_rng(5)
    a, b = _operands(rng, 512, 256, 384, np.float64)
    want = a @ b
    assert _blas_threads.enable()
    a @ b  # the parent's worker exists before the fork
    pid = os.fork()
    if pid == 0:  # the child: its own worker starts on the first threaded call
        ok = np.array_equal(a @ b, want) and _blas_threads.stats()[2] >= 1
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def test_one_thread_settings_keep_blas_on_one_thread(callback):
    a = np.ones((1024, 1024), np.float32)
    assert _blas_threads.enable()
    calls = _blas_threads.stats()[0]
    with threadpool_limits(limits=1, user_api="blas"):
        a @ a
    assert _blas_threads.stats()[0] == calls
    ember.set_num_threads(1)  # conftest puts the thread settings back after the test
    a @ a
    assert _blas_threads.stats()[0] == calls
    ember.set_num_threads(2)
    a @ a
    assert _blas_threads.stats()[0] == calls + 1


def _installed_pointer():
    lib = _numpy_openblas()
    return ctypes.c_void_p.in_dll(lib.dynlib, "openblas_threads_callback_").value


def test_disable_uninstalls(callback):
    if _numpy_openblas() is None:
        pytest.skip("numpy does not link OpenBLAS")
    assert _blas_threads.enable()
    assert _installed_pointer() == _blas_threads._callback.address
    _blas_threads.disable()
    assert _installed_pointer() is None


_CHILD = """
import ctypes, sys, threading, numpy as np, ember
from threadpoolctl import ThreadpoolController, threadpool_limits
lib = [c for c in ThreadpoolController().lib_controllers
       if c.internal_api == "openblas" and "numpy" in c.filepath][0]
pointer = ctypes.c_void_p.in_dll(lib.dynlib, "openblas_threads_callback_").value
loaded = "ember._blas_threads" in sys.modules
with threadpool_limits(limits=2, user_api="blas"):
    a = np.ones((700, 700))
    t = threading.Thread(target=lambda: [a @ a for _ in range(200)], daemon=True)
    t.start()
    a @ a
print(loaded, pointer is not None)
"""


@pytest.mark.parametrize("value,expect", [(None, "False False"), ("ember", "True True"),
                                          ("openblas", "False False")])
def test_environment_switch(value, expect):
    if value == "ember" and _numpy_openblas() is None:
        pytest.skip("numpy does not link OpenBLAS")
    env = {k: v for k, v in os.environ.items() if k != "EMBER_BLAS_THREADS"}
    if value is not None:
        env["EMBER_BLAS_THREADS"] = value
    env["PYTHONPATH"] = ROOT
    # a daemon thread still multiplying when the interpreter exits must not hang or crash it
    out = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == expect


def test_environment_switch_rejects_other_values():
    env = dict(os.environ, EMBER_BLAS_THREADS="all", PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", "import ember"], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode != 0
    assert "EMBER_BLAS_THREADS: expected 'ember' or 'openblas'; got 'all'" in out.stderr


def test_spin_variable_rejects_bad_values():
    env = dict(os.environ, EMBER_BLAS_THREADS="ember", EMBER_BLAS_SPIN_US="fast",
               PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", "import ember"], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode != 0
    assert "EMBER_BLAS_SPIN_US: expected microseconds in [0, 1e6); got 'fast'" in out.stderr


def test_spin_setting_applies_while_installed(callback):
    assert _blas_threads.enable(spin_us=0)  # sleep at once: every wait goes through the futex
    a = np.ones((600, 600))
    want = a @ a
    sleeps = _blas_threads.stats()[3]
    for _ in range(20):
        assert np.array_equal(a @ a, want)
    assert _blas_threads.stats()[3] > sleeps
    assert _blas_threads.enable(spin_us=_blas_threads.SPIN_US)


def test_benchmark_script_runs():
    script = os.path.join(ROOT, "benchmarks", "blas_threads.py")
    out = subprocess.run([sys.executable, script, "--mode", "ember", "--rows", "64",
                          "--repeat", "3"], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, EMBER_BLAS_THREADS="ember"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ember ") and "CPU in a 20 ms sleep after a GEMM" in out.stdout

