"""Fixtures shared by the compile tests."""
from __future__ import annotations

import pytest

from ember.autograd import function as _fn


@pytest.fixture
def count_dispatches(monkeypatch):
    """start(): from then on, count the ops dispatched eagerly (Op._run) in the list returned;
    a compiled replay dispatches none."""

    def start():
        count = [0]
        orig = _fn.Op.__dict__["_run"].__func__

        def counting(cls, *args, **params):
            count[0] += 1
            return orig(cls, *args, **params)

        monkeypatch.setattr(_fn.Op, "_run", classmethod(counting))
        return count

    return start


@pytest.fixture
def pool_off():
    """Run the test with ember's one pool off (NOTE [One pool]): the replay's own thread switches
    (EMBER_COMPILE_BLAS_THREADS / KERNEL_THREADS / SPLIT_GEMMS) only act then (NOTE [A replay on
    the one pool] in ember/_dynamo/runtime.py)."""
    from ember import _onepool
    _onepool.set_enabled(False)
    yield
    _onepool.set_enabled(None)
