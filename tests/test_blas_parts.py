"""Python parts on OpenBLAS's threads (NOTE [Python parts on OpenBLAS's threads] in
ember/_blas_parts.py): parallel_range's contract, and the kernels that use it (GELU, layer
norm, softmax rows, Adam/AdamW) giving bit for bit what they give with the parts off."""
import threading

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import _blas_parts


def test_parallel_range_covers_the_range_once_on_two_threads(blas_parts_on):
    seen = []
    lock = threading.Lock()

    def part(lo, hi):
        with lock:
            seen.append((lo, hi, threading.get_ident()))

    for n in (1000, 1001, 7):
        seen.clear()
        _blas_parts.parallel_range(part, n, 1)
        covered = sorted(i for lo, hi, _ in seen for i in range(lo, hi))
        assert covered == list(range(n))
        assert len(seen) >= 2


def test_parallel_range_small_or_nested_runs_serially(blas_parts_on):
    calls = []
    _blas_parts.parallel_range(lambda lo, hi: calls.append((lo, hi)), 9, 5)  # below 2 grains
    assert calls == [(0, 9)]
    inner = []

    def outer(lo, hi):
        me = threading.get_ident()
        # the parts are busy with this call: the inner one runs on this thread
        _blas_parts.parallel_range(lambda a, b: inner.append((b - a, threading.get_ident() == me)),
                                   4, 1)

    _blas_parts.parallel_range(outer, 4, 1)
    assert sum(n for n, _ in inner) == 4 * 4 and all(here for _, here in inner)
    _blas_parts.parallel_range(lambda lo, hi: None, 0, 1)  # nothing to do


def test_parallel_range_reraises_a_part_error(blas_parts_on):
    def part(lo, hi):
        if lo == 0:
            raise ValueError("part 0 failed")

    with pytest.raises(ValueError, match="part 0 failed"):
        _blas_parts.parallel_range(part, 100, 1)
    calls = []
    _blas_parts.parallel_range(lambda lo, hi: calls.append(hi - lo), 100, 1)  # usable again
    assert sum(calls) == 100


def test_on_follows_set_enabled_and_the_environment(monkeypatch):
    monkeypatch.setenv("EMBER_BLAS_PARTS", "0")
    _blas_parts.set_enabled(None)
    assert not _blas_parts.on("gelu")
    _blas_parts.set_enabled(False)
    monkeypatch.setenv("EMBER_BLAS_PARTS", "1")
    assert not _blas_parts.on("gelu")  # forcing wins over the environment
    _blas_parts.set_enabled(None)


def _both(fn):
    """fn() with the parts off, then on."""
    out = []
    for flag in (False, True):
        _blas_parts.set_enabled(flag)
        out.append(fn())
    return out


def _assert_same(a, b):
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("approximate, dtype", [("none", np.float32), ("tanh", np.float32),
                                                ("tanh", np.float64)])
@pytest.mark.parametrize("shape", [(3 * 2**15 + 7,), (130, 1031)])
def test_gelu_parts_match_serial(blas_parts_on, rng, approximate, dtype, shape):
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)

    def run():
        xt = ember.tensor(x, requires_grad=True)
        y = F.gelu(xt, approximate=approximate)
        y.backward(ember.tensor(g))
        return y.detach().numpy(), xt.grad.numpy()

    _assert_same(*_both(run))


def test_gelu_parts_non_contiguous_input(blas_parts_on, rng):
    x = rng.standard_normal((1031, 260)).astype(np.float32)

    def run():
        xt = ember.tensor(x, requires_grad=True)
        y = F.gelu(xt.t())  # a transposed view: copied to rows first
        (y * y).sum().backward()
        return y.detach().numpy(), xt.grad.numpy()

    _assert_same(*_both(run))


@pytest.mark.parametrize("rows, dim", [(1001, 33), (1024, 256), (515, 129)])
def test_layer_norm_parts_match_serial(blas_parts_on, rng, rows, dim):
    x = (rng.standard_normal((rows, dim)) * 2 + 1).astype(np.float32)
    w = rng.standard_normal(dim).astype(np.float32)
    b = rng.standard_normal(dim).astype(np.float32)
    g = rng.standard_normal((rows, dim)).astype(np.float32)

    def run():
        ts = [ember.tensor(a, requires_grad=True) for a in (x, w, b)]
        y = F.layer_norm(ts[0], (dim,), ts[1], ts[2], 1e-5)
        y.backward(ember.tensor(g))
        return [y.detach().numpy()] + [t.grad.numpy() for t in ts]

    _assert_same(*_both(run))


def test_layer_norm_parts_non_contiguous_and_float64(blas_parts_on, rng):
    x = rng.standard_normal((3, 64, 700)).astype(np.float64)

    def run():
        xt = ember.tensor(x, requires_grad=True)
        y = F.layer_norm(xt.transpose(1, 2), (64,))
        (y * y).sum().backward()
        return y.detach().numpy(), xt.grad.numpy()

    _assert_same(*_both(run))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cross_entropy_and_softmax_parts_match_serial(blas_parts_on, rng, dtype):
    logits = (rng.standard_normal((1031, 129)) * 4).astype(dtype)
    target = rng.integers(0, 129, 1031)

    def run():
        xt = ember.tensor(logits, requires_grad=True)
        loss = F.cross_entropy(xt, ember.tensor(target))
        loss.backward()
        sm = F.softmax(ember.tensor(logits[:, ::2]), dim=1)  # non-contiguous rows
        return loss.detach().numpy(), xt.grad.numpy(), sm.numpy()

    _assert_same(*_both(run))


@pytest.mark.parametrize("opt_name", ["Adam", "AdamW"])
def test_adam_parts_match_serial(blas_parts_on, rng, opt_name):
    shapes = [(300, 257), (70001,), (5,), (129, 3)]
    values = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in shapes] for _ in range(3)]

    def run():
        params = [ember.nn.Parameter(ember.tensor(v)) for v in values]
        opt = getattr(ember.optim, opt_name)(params, lr=1e-2, betas=(0.9, 0.95),
                                             weight_decay=0.1)
        for step in grads:
            for p, g in zip(params, step, strict=True):
                p.grad = ember.tensor(g)
            opt.step()
        return [p.detach().numpy() for p in params]

    _assert_same(*_both(run))


def test_layer_norm_and_gelu_parts_are_cfuncs(blas_parts_on, rng, monkeypatch):
    # NOTE [Layer norm parts without the GIL], NOTE [GELU parts without the GIL]: contiguous
    # float inputs take the cfunc route (no Python part), and give the serial numbers
    calls = []
    inner = _blas_parts.run
    monkeypatch.setattr(_blas_parts, "run", lambda *a: calls.append(a[1]) or inner(*a))
    monkeypatch.setattr(_blas_parts, "parallel_range", None)  # the Python route would fail
    x = rng.standard_normal((1030, 250)).astype(np.float32)

    def run():
        xt = ember.tensor(x, requires_grad=True)
        y = F.gelu(F.layer_norm(xt, (250,)))
        (y * y).sum().backward()
        return y.detach().numpy(), xt.grad.numpy()

    _assert_same(*_both(run))
    # layer norm forward over 1030 rows, its backward over 16 row blocks, GELU's two passes
    # over ceil(1030 * 250 / 2^15) = 8 runs
    assert sorted(calls) == [8, 8, 16, 1030]


def test_run_ranges_notices_a_late_worker_and_runs_alone_meanwhile(blas_parts_on, monkeypatch):
    # NOTE [A late worker]: the worker's part here sleeps, as a worker the scheduler runs late
    import time
    monkeypatch.setattr(_blas_parts, "LATE_S", 250e-6)
    caller = threading.get_ident()
    calls = []

    def part(lo, hi):
        calls.append((lo, hi, threading.get_ident() == caller))
        if threading.get_ident() != caller:
            time.sleep(0.02)

    _blas_parts._solo[1] = 10.0  # a solo period that outlasts any pause before the next call
    _blas_parts.run_ranges(part, 100)
    assert len(calls) == 2 and _blas_parts.late_solo(time.perf_counter())
    calls.clear()
    _blas_parts.run_ranges(part, 100)  # solo: one call on this thread, the whole range
    assert calls == [(0, 100, True)]


def test_run_ranges_with_a_worker_on_time_is_not_late(blas_parts_on, monkeypatch):
    import time
    monkeypatch.setattr(_blas_parts, "LATE_S", 250e-6)
    caller = threading.get_ident()
    seen = []

    def part(lo, hi):
        seen.append(hi - lo)
        if threading.get_ident() == caller:
            # the caller's part is the long one: a worker that starts within it is on time
            time.sleep(0.05)

    for _ in range(3):
        _blas_parts.run_ranges(part, 100)
    assert sum(seen) == 300 and len(seen) == 6
    assert not _blas_parts.late_solo(time.perf_counter())
