"""No reference cycles: CPython frees activations right after backward and whole graphs when
their output goes out of scope, with the cycle collector disabled."""
import gc
import sys
import weakref

import numpy as np
import pytest

import ember
from ember import _backend


@pytest.fixture
def no_gc():
    gc.collect()
    gc.disable()
    yield
    gc.enable()


def _root(t):
    a = t._data
    while isinstance(a.base, np.ndarray):
        a = a.base
    return weakref.ref(a)


def _released(ref):
    """The buffer behind a weak reference is freed, or back in ember's reuse pool with nobody
    else holding it (NOTE [Reused buffers] in ember/_backend.py)."""
    a = ref()
    # references: the pool's list, `a` and getrefcount's argument
    return a is None or (_backend.is_reused(a) and sys.getrefcount(a) <= 3)


def test_intermediates_freed_right_after_backward(no_gc):
    w = ember.randn(64, 64, requires_grad=True)
    x = ember.randn(8, 64)
    h = (x @ w).tanh()          # tanh saves its output (an activation)
    out = (h * h).sum()
    refs = [_root(h)]
    del h
    assert all(r() is not None for r in refs)   # kept alive by the graph
    out.backward()
    assert all(_released(r) for r in refs)      # freed by backward, no gc needed


def test_whole_graph_freed_when_output_dropped(no_gc):
    w = ember.randn(32, 32, requires_grad=True)
    x = ember.randn(4, 32)
    h1 = (x @ w).relu()
    s = h1.sigmoid()
    out = (s * h1).sum()        # mul saves both s and h1
    refs = [_root(h1), _root(s), weakref.ref(out.grad_fn)]
    del h1, s
    assert all(r() is not None for r in refs)
    del out
    assert all(_released(r) for r in refs)


def test_no_cycles_after_training_steps(no_gc):
    w = ember.randn(16, 16, requires_grad=True)
    for _ in range(3):
        x = ember.randn(4, 16)
        y = (x @ w) + 1         # add saves nothing, so y may be modified in place
        y.retain_grad()
        v = y[1:3]
        v.mul_(2)               # in-place through a view rebases history
        (y * y).sum().backward()
        del x, y, v
    gc.enable()
    assert gc.collect() == 0    # nothing was waiting for the cycle collector


def test_saved_output_does_not_form_a_cycle(no_gc):
    x = ember.randn(10, requires_grad=True)
    y = x.exp()                 # saves its own output
    node = weakref.ref(y.grad_fn)
    buf = _root(y)
    del y
    assert node() is None and _released(buf)
