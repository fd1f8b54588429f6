"""Per-thread autograd state (NOTE [Per-thread autograd state]): threads training their own
models, inference beside training, and grad-mode / autocast / saved-hook regions in one thread
leave every other thread alone."""
from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.autograd import graph


@pytest.fixture(autouse=True)
def _fast_switching():
    """Switch threads every 10 us instead of every 5 ms, so that interleavings that would
    expose shared state happen many times within a short test."""
    prev = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(prev)


def _run_threads(*targets):
    errors = []

    def guarded(fn):
        try:
            fn()
        except BaseException as e:  # reported in the main thread below
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=(fn,)) for fn in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a thread did not finish"
    if errors:
        raise errors[0]


def _train(seed, steps):
    """A small regression model trained with SGD; returns its final parameters and the number
    of steps where a parameter had no gradient."""
    g = np.random.default_rng(seed)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))
    with ember.no_grad():
        for p in model.parameters():
            p.copy_(ember.tensor(g.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3))
    opt = ember.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x = ember.tensor(g.standard_normal((32, 8)).astype(np.float32))
    y = ember.tensor(g.standard_normal((32, 1)).astype(np.float32))
    missing = 0
    for _ in range(steps):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        missing += any(p.grad is None for p in model.parameters())
        opt.step()
    return [p.detach().numpy().copy() for p in model.parameters()], missing


def test_two_threads_training_match_sequential_bitwise():
    expected = [_train(seed, 200) for seed in (1, 2)]
    got = [None, None]

    def job(i):
        return lambda: got.__setitem__(i, _train(i + 1, 200))

    _run_threads(job(0), job(1))
    for (want, _), (params, missing) in zip(expected, got, strict=True):
        assert missing == 0
        for a, b in zip(want, params, strict=True):
            np.testing.assert_array_equal(a, b)
    assert ember.is_grad_enabled()


def test_training_beside_no_grad_inference_thread():
    expected = _train(3, 200)[0]
    stop = threading.Event()
    recorded = []
    result = []

    def infer():
        model = nn.Linear(8, 4)
        x = ember.randn(16, 8)
        while not stop.is_set():
            with ember.no_grad():
                out = model(x)
                recorded.append(out.requires_grad or ember.is_grad_enabled())

    def train():
        try:
            result.append(_train(3, 200))
        finally:
            stop.set()

    _run_threads(infer, train)
    params, missing = result[0]
    assert missing == 0
    for a, b in zip(expected, params, strict=True):
        np.testing.assert_array_equal(a, b)
    assert recorded and not any(recorded)


def test_backward_while_another_thread_toggles_no_grad():
    stop = threading.Event()
    toggles = [0]

    def toggle():
        while not stop.is_set():
            with ember.no_grad():
                toggles[0] += 1
            with ember.inference_mode():
                pass
            with ember.set_grad_enabled(False):
                pass

    grads = []

    def backward_many():
        try:
            w = ember.randn(64, 64, requires_grad=True)
            for _ in range(200):
                w.grad = None
                h = (w @ w).tanh()
                g, = ember.autograd.grad(h.sum(), w, create_graph=True)
                # create_graph: backward must record in this thread, whatever the other does
                g.sum().backward()
                grads.append(g.requires_grad and w.grad is not None)
        finally:
            stop.set()

    _run_threads(toggle, backward_many)
    assert len(grads) == 200 and all(grads)
    assert toggles[0] > 0
    assert ember.is_grad_enabled() and not ember.is_inference_mode_enabled()


def test_new_thread_starts_with_default_modes():
    seen = {}

    def read():
        seen["grad"] = ember.is_grad_enabled()
        seen["inference"] = ember.is_inference_mode_enabled()
        seen["autocast"] = ember.is_autocast_enabled("cpu")
        seen["autocast_dtype"] = ember.get_autocast_dtype("cpu")

    with ember.inference_mode(), ember.autocast("cpu", dtype=ember.float16):
        _run_threads(read)
        assert ember.is_autocast_enabled("cpu")
    assert seen == {"grad": True, "inference": False, "autocast": False,
                    "autocast_dtype": ember.bfloat16}


def test_autocast_region_applies_to_its_thread_only():
    a, b = ember.randn(4, 4), ember.randn(4, 4)
    dtypes = []

    def matmul():
        dtypes.append((a @ b).dtype)

    with ember.autocast("cpu"):
        inside = (a @ b).dtype
        _run_threads(matmul)
    assert inside == ember.bfloat16 and dtypes == [ember.float32]


def test_saved_tensor_hooks_apply_to_their_thread_only():
    packed = []
    other = []

    def work():
        x = ember.ones(3, requires_grad=True)
        (x * x).sum().backward()
        other.append(x.grad.tolist())

    with graph.saved_tensors_hooks(lambda t: packed.append(1) or t, lambda t: t):
        _run_threads(work)
        x = ember.ones(3, requires_grad=True)
        y = x * x
    assert other == [[2.0, 2.0, 2.0]]
    assert len(packed) == 2  # the two operands of this thread's product only
    y.sum().backward()


@pytest.mark.parity
def test_thread_state_split_matches_torch():
    """Which states a new thread inherits: the same answer in both libraries."""
    torch = pytest.importorskip("torch")

    def probe(lib):
        seen = {}

        def read():
            seen["grad"] = lib.is_grad_enabled()
            seen["anomaly"] = lib.is_anomaly_enabled()
            seen["dtype"] = str(lib.get_default_dtype()).split(".")[-1]
            seen["autocast"] = lib.is_autocast_enabled("cpu")

        with lib.no_grad(), lib.autograd.set_detect_anomaly(True), lib.autocast("cpu"):
            prev = lib.get_default_dtype()
            lib.set_default_dtype(lib.float64)
            try:
                _run_threads(read)
            finally:
                lib.set_default_dtype(prev)
        return seen

    assert probe(ember) == probe(torch)
