"""Shared fixtures: a seeded NumPy generator and a re-seeded ember default generator."""
from __future__ import annotations

import numpy as np
import pytest

import ember


@pytest.fixture
def rng():
    """A fresh NumPy generator with a fixed seed, so test inputs are reproducible."""
    return np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _seed_ember():
    """Every test starts from ember's generator seeded with 0 (order-independent results)."""
    ember.manual_seed(0)
    yield


@pytest.fixture(scope="session")
def _blas_threads_at_start():
    from threadpoolctl import threadpool_info
    return {p["prefix"]: p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"}


@pytest.fixture(autouse=True)
def _restore_thread_settings(_blas_threads_at_start):
    """A test that calls ember.set_num_threads and undoes it with the public API (which cannot
    say "never set") would leave the kernel threads requested for every later test of its
    worker (test_adam_fast_path then saw kernel threads on): put back what the test found."""
    import numba

    from ember import _threads
    requested, numba_threads = _threads._requested[0], numba.get_num_threads()
    yield
    if _threads._requested[0] != requested:
        from threadpoolctl import threadpool_limits
        _threads._requested[0] = requested
        numba.set_num_threads(numba_threads)
        _threads._blas_limiter[0] = None
        threadpool_limits(limits=_blas_threads_at_start)


@pytest.fixture
def one_pool():
    """Run the test with ember's one pool on (NOTE [One pool] in ember/_onepool.py): GEMMs and
    twin kernels on numba's threading layer. Skips where that layer cannot run it."""
    from ember import _onepool
    _onepool.set_enabled(True)
    if not _onepool.enabled():
        _onepool.set_enabled(None)
        pytest.skip("the one pool needs numba's omp or tbb threading layer and 2 threads")
    yield
    _onepool.set_enabled(None)


@pytest.fixture
def pool_off():
    """Run the test with ember's one pool off whatever EMBER_ONE_POOL says: for tests of the
    modes the pool replaces (kernel threads, split GEMMs) and of the pool-off thresholds."""
    from ember import _onepool
    _onepool.set_enabled(False)
    yield
    _onepool.set_enabled(None)


@pytest.fixture
def parts_counted(monkeypatch):
    """The sizes of the ranges _blas_parts.run_ranges is given, in order (the Python parts on
    OpenBLAS's threads still run): shows that a path really went through the parts."""
    from ember import _blas_parts
    sizes = []
    real = _blas_parts.run_ranges

    def run_ranges(fn, n, threads=None):
        sizes.append(n)
        real(fn, n, threads)

    monkeypatch.setattr(_blas_parts, "run_ranges", run_ranges)
    return sizes


@pytest.fixture
def blas_parts_on():
    """EMBER_BLAS_PARTS forced on under two BLAS threads, whatever an earlier test left set (the
    parts need a worker to hand a part to); skips where numpy's BLAS is not OpenBLAS."""
    from threadpoolctl import threadpool_limits

    from ember import _blas_parts
    # no solo periods: a worker made late by a busy machine would run the parts serially
    # (NOTE [A late worker]), and these tests look at the parts
    late, solo = _blas_parts.LATE_S, list(_blas_parts._solo)
    _blas_parts.LATE_S, _blas_parts._solo[:] = float("inf"), [0.0, _blas_parts.SOLO_MIN_S]
    with threadpool_limits(limits=2, user_api="blas"):
        _blas_parts.set_enabled(True)
        try:
            if not _blas_parts.enabled():
                pytest.skip("numpy's BLAS has no blas_level1_thread (not OpenBLAS): the parts "
                            "cannot run here")
            yield
        finally:
            _blas_parts.set_enabled(None)
            _blas_parts.LATE_S, _blas_parts._solo[:] = late, solo
