"""A compiled replay on two threads (NOTE [Two threads in a replay] in ember/_dynamo/schedule.py,
EMBER_COMPILE_INTEROP=1): every op computes what the serial replay computes, so a training step
gives the serial replay's values bit for bit; an exception on either thread reaches the caller;
the serial replay runs whenever two threads cannot (one thread requested, the worker busy, a
forked child starts its own worker)."""
from __future__ import annotations

import copy
import os
import sys
import threading
import time

import numpy as np
import pytest
from _blas_bits import assert_serial_bits

import ember
from ember import _kernel_threads
from ember._dynamo import schedule
from ember.testing import assert_close

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from test_compile_models import _args, _block, _small_batches

from examples.models.table1 import WORKLOADS


@pytest.fixture
def interop(monkeypatch, pool_off):
    """Two-thread replays on for graphs compiled in the test, planned after one measured call."""
    before = schedule.ENABLED[0]
    schedule.ENABLED[0] = True
    monkeypatch.setattr(schedule, "MEASURED_CALLS", 1)
    yield
    schedule.ENABLED[0] = before


def _two_threaded(compiled):
    """The TwoThreads functions of a compiled function's graphs."""
    out = []
    for entry in compiled._cache.values():
        graph = entry.graph
        out += [f for f in (graph.fwd, graph.bwd) if isinstance(f, schedule.TwoThreads)]
    return out


def _ctx(compiled):
    return compiled if hasattr(compiled, "_cache") else compiled.dynamo_ctx


def _ncf_pair(steps):
    """NCF's whole training step (zero_grad, forward, loss, backward, Adam) compiled twice: the
    serial replay and the two-thread one; returns both models and the per-step losses."""
    runs = []
    for on in (False, True):
        schedule.ENABLED[0] = on
        ember.manual_seed(0)
        model, _, batches, loss_fn, _ = WORKLOADS["ncf"](ember)
        opt = ember.optim.Adam(model.parameters(), lr=1e-3)

        def train_step(u, i, y, model=model, opt=opt, loss_fn=loss_fn):
            opt.zero_grad()
            loss = loss_fn(model(u, i), y)
            loss.backward()
            opt.step()
            return loss

        f = ember.compile(train_step)
        losses = [f(*batches[s % len(batches)][0], batches[s % len(batches)][1]).item()
                  for s in range(steps)]
        runs.append((model, losses, f, opt, batches))
    schedule.ENABLED[0] = True
    return runs


def test_ncf_training_step_on_two_threads_equals_the_serial_replay_bit_for_bit(interop):
    (serial, loss_s, f_s, _, _), (model, loss_t, f_t, _, _) = _ncf_pair(12)
    assert not _two_threaded(_ctx(f_s))
    used = _two_threaded(_ctx(f_t))
    assert used and sum(f.calls for f in used) >= 3  # capture, one measured call, then two threads
    # NOTE [Optimizer steps in a two-thread replay]: Adam in parts, each after its readers
    assert sum("step part" in u.label for f in used for u in f.plan.units) >= 2
    assert loss_t == loss_s
    for (n, p), q in zip(model.named_parameters(), serial.parameters(), strict=True):
        assert_serial_bits(p._data, q._data, err_msg=n)
        assert_serial_bits(p.grad._data, q.grad._data, err_msg=n)


def test_a_traced_plan_logs_each_unit_once_per_call_and_keeps_the_values(interop):
    # Plan.schedule(trace=...) (benchmarks/compile.py --schedule): the same plan with
    # timestamps around each unit; the step's values stay the serial replay's
    (serial, _, f_s, _, batches), (model, _, f, _, _) = _ncf_pair(4)
    (two,) = _two_threaded(_ctx(f))
    plan = two.plan
    thread_before = list(plan.thread)
    log = []
    assert plan.schedule([u.cost for u in plan.units], trace=log)
    assert plan.thread == thread_before  # the plan is deterministic
    calls = two.calls
    for s in range(4, 8):
        if s == 6:
            plan.schedule([u.cost for u in plan.units])  # untraced again
        del log[:]
        (u, i), y = batches[s % len(batches)]
        assert_serial_bits(f(u, i, y).item(), f_s(u, i, y).item())
        assert two.calls == calls + s - 3
        if s < 6:
            assert sorted(e[1] for e in log) == list(range(len(plan.units)))
            assert all(plan.thread[k] == t and a <= b and c <= d for t, k, a, c, b, d in log)
        else:
            assert log == []
    for (n, p), q in zip(model.named_parameters(), serial.parameters(), strict=True):
        assert_serial_bits(p._data, q._data, err_msg=n)
        assert_serial_bits(p.grad._data, q.grad._data, err_msg=n)


def test_units_below_caller_below_stay_on_the_caller(interop, monkeypatch):
    (serial, _, f_s, _, batches), (model, _, f, _, _) = _ncf_pair(3)
    (two,) = _two_threaded(_ctx(f))
    plan = two.plan
    costs = sorted(u.cost for u in plan.units)
    below = costs[len(costs) // 2]  # half of the units
    monkeypatch.setattr(schedule, "CALLER_BELOW", below)
    assert plan.schedule([u.cost for u in plan.units])
    assert all(t == 0 for u, t in zip(plan.units, plan.thread, strict=True) if u.cost < below)
    assert any(t == 1 for t in plan.thread)
    calls = two.calls
    for s in range(3, 6):
        (u, i), y = batches[s % len(batches)]
        assert_serial_bits(f(u, i, y).item(), f_s(u, i, y).item())
    assert two.calls == calls + 3
    for (n, p), q in zip(model.named_parameters(), serial.parameters(), strict=True):
        assert_serial_bits(p._data, q._data, err_msg=n)
    monkeypatch.setattr(schedule, "CALLER_BELOW", costs[-1] * 2)  # everything: no worker
    assert not plan.schedule([u.cost for u in plan.units])


@pytest.mark.parametrize("chains", [True, False])
def test_chains_of_units_run_as_one_unit(interop, monkeypatch, chains):
    # NOTE [Chains of units]: NCF's product-embedding scatter, its .grad write and its table's
    # Adam part become one unit; a unit's predecessors stay earlier units; same values
    monkeypatch.setattr(schedule, "CHAINS", [chains])
    (serial, loss_s, _, _, _), (model, loss_t, f, _, _) = _ncf_pair(5)
    (two,) = _two_threaded(_ctx(f))
    labels = [u.label for u in two.plan.units]
    assert ("ScatterProduct + .grad + step part" in labels) == chains
    assert len(labels) == (44 if chains else 50)
    assert all(p < k for k, u in enumerate(two.plan.units) for p in u.preds)
    assert two.calls >= 3 and loss_t == loss_s
    for (n, p), q in zip(model.named_parameters(), serial.parameters(), strict=True):
        assert_serial_bits(p._data, q._data, err_msg=n)
        assert_serial_bits(p.grad._data, q.grad._data, err_msg=n)


def test_a_step_hook_makes_the_compiled_step_run_serially(interop):
    _, (_, _, f, opt, batches) = _ncf_pair(4)
    used = _two_threaded(_ctx(f))
    calls = sum(g.calls for g in used)
    seen = []
    handle = opt.register_step_post_hook(lambda o, a, k: seen.append(1))
    f(*batches[0][0], batches[0][1])
    assert seen == [1] and sum(g.calls for g in used) == calls  # hooks run: the serial replay
    handle.remove()
    f(*batches[0][0], batches[0][1])
    assert sum(g.calls for g in used) == calls + 1


def _block_run(block, x, steps):
    f = ember.compile(block)
    outs = []
    for _ in range(steps):
        for p in block.parameters():
            p.grad = None
        out = f(x)
        out.square().mean().backward()
        outs.append(out._data.copy())
    return f, outs


@pytest.mark.parametrize("size", [(2, 5, 16), (4, 64, 128)])
def test_transformer_block_on_two_threads_equals_serial_and_eager(interop, size):
    rng = np.random.default_rng(0)
    ember.manual_seed(0)
    block = _block(ember, d=size[2], heads=2)
    serial, eager = copy.deepcopy(block), copy.deepcopy(block)
    x = ember.from_numpy(rng.standard_normal(size).astype(np.float32))
    f, outs = _block_run(block, x, 4)
    used = _two_threaded(_ctx(f))
    assert len(used) == 2 and all(g.calls >= 2 for g in used)  # forward and backward
    halves = {u.label for g in used for u in g.plan.units if u.writes}
    # NOTE [GEMM halves in a two-thread replay]: 256 rows x 384 outputs x 128 inputs and up
    assert halves == ({"Linear rows", "Linear dX rows", "Linear dW rows"} if size[2] == 128
                      else set())
    schedule.ENABLED[0] = False
    _, outs_s = _block_run(serial, x, 4)
    for a, b in zip(outs, outs_s, strict=True):
        assert_serial_bits(a, b)
    for p, q in zip(block.parameters(), serial.parameters(), strict=True):
        assert_serial_bits(p.grad._data, q.grad._data)
    out_e = eager(x)
    out_e.square().mean().backward()
    assert_close(ember.from_numpy(outs[-1]), out_e, rtol=1e-5, atol=1e-5)
    for p, q in zip(block.parameters(), eager.parameters(), strict=True):
        assert_close(p.grad, q.grad, rtol=1e-4, atol=1e-6)


@pytest.fixture
def one_blas_thread():
    """OpenBLAS at one thread, as in a two-thread replay: a multi-threaded OpenBLAS may split a
    GEMM's sum (a convolution's weight gradient) and round it differently."""
    before = _kernel_threads.blas_threads_enter(1)
    yield
    _kernel_threads.blas_threads_exit(before)


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_spec_model_step_on_two_threads_equals_the_serial_replay(interop, one_blas_thread, name):
    grads = []
    for on in (True, False):
        schedule.ENABLED[0] = on
        ember.manual_seed(0)
        model, _, _, loss_fn, _ = WORKLOADS[name](ember)
        compiled = ember.compile(model)
        for step, (x, y) in enumerate(_small_batches(name, ember) * 2):
            ember.manual_seed(step)  # dropout draws the same masks in both runs
            model.zero_grad()
            loss_fn(compiled(*_args(x)), y).backward()
        grads.append([(n, None if p.grad is None else p.grad._data.copy())
                      for n, p in model.named_parameters()])
        assert _ctx(compiled).stats["eager"] == 0
        assert any(f.calls for f in _two_threaded(_ctx(compiled))) == on
    for (n, a), (_, b) in zip(*grads, strict=True):
        assert (a is None) == (b is None), n
        if a is not None:
            assert_serial_bits(a, b, err_msg=n)


def _small_block(interop_on=True):
    schedule.ENABLED[0] = interop_on
    ember.manual_seed(0)
    block = _block(ember, d=64, heads=2)
    x = ember.from_numpy(np.random.default_rng(1).standard_normal((4, 32, 64)).astype(np.float32))
    f = ember.compile(block)
    for _ in range(3):  # capture, a measured call, a planned one
        f(x).sum().backward()
    return block, f, x


@pytest.mark.parametrize("side", ["worker", "main"])
def test_an_exception_on_either_thread_reaches_the_caller_and_the_next_call_runs(interop, side):
    block, f, x = _small_block()
    fwd = _two_threaded(_ctx(f))[0]
    assert fwd.calls >= 1
    good = getattr(fwd.plan, side)

    def broken(*args):
        raise FloatingPointError(f"{side} unit failed")

    setattr(fwd.plan, side, broken)
    with pytest.raises(FloatingPointError, match=f"{side} unit failed"):
        f(x)
    setattr(fwd.plan, side, good)
    before = fwd.calls
    out = f(x)
    assert fwd.calls == before + 1  # the worker is free again
    schedule.ENABLED[0] = False
    assert_close(out, block(x), rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="needs os.sched_getaffinity")
def test_the_callers_cpu_set_is_restored_after_a_two_thread_call(interop):
    _, f, x = _small_block()
    fwd = _two_threaded(_ctx(f))[0]
    mask = os.sched_getaffinity(0)
    before = fwd.calls
    f(x)
    assert fwd.calls == before + 1
    assert os.sched_getaffinity(0) == mask  # NOTE [Two threads on two cores]


def test_one_thread_requested_or_worker_busy_runs_the_serial_replay(interop):
    block, f, x = _small_block()
    fwd = _two_threaded(_ctx(f))[0]
    want = f(x)._data.copy()
    before = fwd.calls
    threads = ember.get_num_threads()
    ember.set_num_threads(1)
    try:
        got = f(x)._data
    finally:
        ember.set_num_threads(threads)
    assert fwd.calls == before
    assert_serial_bits(got, want)
    with schedule._busy[0]:  # a replay of another Python thread holds the worker
        got = f(x)._data
    assert fwd.calls == before
    assert_serial_bits(got, want)


def test_compiled_functions_called_from_two_python_threads(interop):
    block, f, x = _small_block()
    other, g, y = _small_block()
    want = [f(x)._data.copy(), g(y)._data.copy()]
    got, errors = [[], []], []

    def loop(k, fn, arg):
        try:
            for _ in range(20):
                got[k].append(fn(arg)._data.copy())
        except BaseException as exc:  # reported by the test below
            errors.append(exc)

    threads = [threading.Thread(target=loop, args=(0, f, x)),
               threading.Thread(target=loop, args=(1, g, y))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k in (0, 1):
        for a in got[k]:
            assert_serial_bits(a, want[k])


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_runs_two_thread_replays_on_its_own_worker(interop):
    _, f, x = _small_block()
    want = f(x)._data.copy()
    fwd = _two_threaded(_ctx(f))[0]
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the parent's worker thread did not survive the fork
        ok = False
        try:
            before = fwd.calls
            got = f(x)._data
            ok = fwd.calls == before + 1 and np.array_equal(got, want)
        finally:
            os.write(write, b"1" if ok else b"0")
            os._exit(0)
    os.close(write)
    answer = os.read(read, 1)
    os.waitpid(pid, 0)
    os.close(read)
    assert answer == b"1"


def test_a_post_made_before_the_worker_thread_runs_is_not_lost(monkeypatch):
    # the first two-thread call posts right after starting the worker; the thread used to read
    # the post counter when it began to run, so a late start took that post as seen: a hang
    real = schedule._Worker._loop

    def late(self):
        time.sleep(0.05)
        real(self)

    monkeypatch.setattr(schedule._Worker, "_loop", late)
    w = schedule._Worker()
    flags = np.zeros(2, np.int64)
    ran = []
    w.post(lambda flags, gen: ran.append(gen), (), flags, 7)
    deadline = time.monotonic() + 20
    while flags[1] != 7 and time.monotonic() < deadline:
        time.sleep(0.001)
    assert ran == [7] and flags[1] == 7
