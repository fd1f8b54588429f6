"""A compiled call frees each intermediate at its last use, as eager does (NOTE [Values freed
at their last use] in ember/_dynamo/codegen.py): its peak memory is eager's, not the sum of all
its intermediates."""
import tracemalloc

import numpy as np
import pytest

import ember
from ember.testing import assert_close


@pytest.fixture(autouse=True)
def _reset():
    ember._dynamo.reset()
    yield


def _chain(x, a):
    for _ in range(8):  # eight 1 MB products; each is dead once the next one is made
        x = x @ a
    return x.sum()


def _peak(fn, *args):
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        out = fn(*args)
        return out, tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("grad", [False, True])
def test_compiled_peak_memory_is_eagers(grad):
    rng = np.random.default_rng(0)
    x = ember.from_numpy(rng.standard_normal((512, 512)).astype(np.float32) / 23)
    a = ember.from_numpy(rng.standard_normal((512, 512)).astype(np.float32) / 23)
    f = ember.compile(_chain)
    with ember.set_grad_enabled(grad):
        for _ in range(3):  # capture, then replays
            f(x, a)
        want, eager = _peak(_chain, x, a)
        got, compiled = _peak(f, x, a)
    assert_close(got, want)
    assert f.stats["hits"] >= 1
    mb = 512 * 512 * 4
    assert compiled <= eager + mb, (compiled / mb, eager / mb)


def test_compiled_training_step_frees_gradients():
    rng = np.random.default_rng(1)
    x = ember.from_numpy(rng.standard_normal((512, 512)).astype(np.float32) / 23)
    a = ember.from_numpy(rng.standard_normal((512, 512)).astype(np.float32) / 23)
    a.requires_grad_(True)

    def step(x):
        loss = _chain(x, a)
        loss.backward()
        return loss

    f = ember.compile(step)
    for _ in range(3):
        a.grad = None
        f(x)
    a.grad = None
    _, eager = _peak(step, x)
    want = a.grad.numpy().copy()
    a.grad = None
    _, compiled = _peak(f, x)
    np.testing.assert_allclose(a.grad.numpy(), want, rtol=1e-5)
    assert f.stats["hits"] >= 1
    mb = 512 * 512 * 4
    assert compiled <= eager + 2 * mb, (compiled / mb, eager / mb)
