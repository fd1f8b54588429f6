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
