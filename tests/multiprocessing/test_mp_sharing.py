"""ember.multiprocessing: share_memory_, tensors through queues/pipes/process args, spawn().

Processes use ``fork`` except in the tests that check ``spawn``. Each test that starts a process
checks afterwards for leaked processes, zombies, shared-memory descriptors and files.
"""
from __future__ import annotations

import multiprocessing
import os
import pickle
import sys
from multiprocessing.reduction import ForkingPickler

import numpy as np
import pytest
from _leaks import ember_entries, make_leak_check, shm_fds, zombie_children  # noqa: F401

import ember
import ember.multiprocessing as mp
from ember.multiprocessing import _shm

pytestmark = pytest.mark.timeout(60)

fork = mp.get_context("fork")


# ---------------------------------------------------------------------------- leak checks
leak_check = make_leak_check(release_pins=True)


@pytest.fixture(params=["file_descriptor", "file_system"])
def strategy(request):
    previous = mp.get_sharing_strategy()
    mp.set_sharing_strategy(request.param)
    yield request.param
    mp.set_sharing_strategy(previous)


# ---------------------------------------------------------------------------- share_memory_
def test_share_memory_in_place_keeps_values_and_layout(strategy):
    base = ember.arange(24.0).reshape(4, 6)
    view = base.t()[1:]  # non-contiguous, with a storage offset
    values, stride, offset = view.numpy().copy(), view.stride(), view.storage_offset()
    assert not view.is_shared()
    assert view.share_memory_() is view
    assert view.is_shared()
    np.testing.assert_array_equal(view.numpy(), values)
    assert view.stride() == stride and view.storage_offset() == offset
    assert _shm.segment_of(view._data) is not None
    assert not base.is_shared()  # documented: other views keep the old memory
    ptr = view.data_ptr()
    view.share_memory_()  # idempotent
    assert view.data_ptr() == ptr


@pytest.mark.parametrize("make", [
    lambda: ember.tensor(3.5),
    lambda: ember.zeros(0, 3),
    lambda: ember.ones(5, dtype=ember.bfloat16),
    lambda: ember.tensor([True, False]),
    lambda: ember.arange(12).reshape(3, 4)[:, 1],
])
def test_share_memory_edge_cases(make):
    t = make()
    ref = t.numpy().copy()
    t.share_memory_()
    assert t.is_shared() and t.dtype == make().dtype
    np.testing.assert_array_equal(t.numpy(), ref)


def test_share_memory_keeps_parameter_and_autograd_state():
    from ember import nn
    lin = nn.Linear(3, 2)
    lin.share_memory()
    assert all(p.is_shared() and p.requires_grad for p in lin.parameters())
    assert isinstance(lin.weight, nn.Parameter)
    lin(ember.ones(1, 3)).sum().backward()
    assert lin.weight.grad is not None and not lin.weight.grad.is_shared()


class Tagged(ember.Tensor):
    """A Tensor subclass defined after ember.multiprocessing was imported."""


def test_tensor_subclass_defined_later_travels_as_handle(leak_check):
    t = Tagged([1.0, 2.0])
    clone = pickle.loads(ForkingPickler.dumps(t))  # what a queue does, within one process
    assert type(clone) is Tagged and clone.is_shared()
    clone.add_(1)
    assert t.tolist() == [2.0, 3.0]  # one mapping: the receiver maps the same segment


def test_plain_pickle_still_copies():
    t = ember.arange(4.0).share_memory_()
    clone = pickle.loads(pickle.dumps(t))
    assert not clone.is_shared()
    clone.add_(1)
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_non_leaf_requiring_grad_refuses_to_travel():
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor"):
        ForkingPickler.dumps(x * 2)


def test_sharing_strategies_api():
    assert mp.get_all_sharing_strategies() == {"file_descriptor", "file_system"}
    assert mp.get_sharing_strategy() == "file_descriptor"
    with pytest.raises(ValueError, match="unknown strategy 'shm'"):
        mp.set_sharing_strategy("shm")


def test_stdlib_api_is_reexported():
    for name in ("Process", "Queue", "SimpleQueue", "Pipe", "Pool", "get_context",
                 "set_start_method", "get_start_method", "cpu_count", "Lock", "Event",
                 "Manager", "Value", "Array", "Barrier", "current_process"):
        assert hasattr(mp, name), name
    assert issubclass(mp.Process, multiprocessing.Process)
    assert isinstance(fork, multiprocessing.context.BaseContext)


# ---------------------------------------------------------------------------- transport
def _increment_and_reply(inbox, outbox):
    t = inbox.get()
    with ember.no_grad():
        t.add_(1)  # in place on shared memory: the sender sees it
    outbox.put((t.is_shared(), type(t).__name__, t.requires_grad, t.grad is None,
                getattr(t, "tag", None)))
    outbox.put(ember.full((3,), 7.0))  # a tensor created here travels back
    inbox.get(timeout=30)  # the sender stays alive until the receiver has its tensor


def _roundtrip(ctx):
    inbox, outbox = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=_increment_and_reply, args=(inbox, outbox))
    p.start()
    from ember import nn
    param = nn.Parameter(ember.zeros(4))
    param.grad = ember.ones(4)  # gradients stay per process
    param.tag = "w"
    inbox.put(param)
    facts = outbox.get(timeout=30)
    back = outbox.get(timeout=30)
    inbox.put("received")
    p.join(30)
    assert p.exitcode == 0
    assert param.tolist() == [1.0, 1.0, 1.0, 1.0]
    assert facts == (True, "Parameter", True, True, "w")
    assert back.tolist() == [7.0, 7.0, 7.0] and back.is_shared()


def test_queue_fork_shares_memory_both_ways(leak_check, strategy):
    _roundtrip(fork)


def test_queue_spawn_shares_memory(leak_check):
    _roundtrip(mp.get_context("spawn"))


def _write_views(conn):
    whole, tail = conn.recv()
    tail.fill_(5.0)
    conn.send(whole.tolist())


def test_pipe_keeps_views_of_one_storage_together(leak_check):
    parent, child = fork.Pipe()
    p = fork.Process(target=_write_views, args=(child,))
    p.start()
    t = ember.zeros(4).share_memory_()
    parent.send((t, t[2:]))
    assert parent.recv() == [0.0, 0.0, 5.0, 5.0]  # the child's views share one mapping
    p.join(30)
    assert t.tolist() == [0.0, 0.0, 5.0, 5.0]


def _scale_args(t, d, module, done):
    t.mul_(3)
    d["w"].fill_(-1.0)
    for p in module.parameters():
        p.data.fill_(0.5)
    done.set()


def test_fork_process_arguments_share_memory(leak_check):
    from ember import nn
    t, d, lin = ember.ones(3), {"w": ember.zeros(2)}, nn.Linear(2, 2)
    done = fork.Event()
    p = fork.Process(target=_scale_args, args=(t, d, lin, done))
    p.start()
    assert done.wait(30)
    p.join(30)
    assert t.tolist() == [3.0, 3.0, 3.0] and d["w"].tolist() == [-1.0, -1.0]
    assert lin.weight.detach().numpy().tolist() == [[0.5, 0.5], [0.5, 0.5]]


def _fill_pool(t):
    t.fill_(2.0)
    return t.sum().item()


def test_pool_tasks_receive_shared_tensors(leak_check):
    t = ember.zeros(3).share_memory_()
    with fork.Pool(1) as pool:
        assert pool.apply(_fill_pool, (t,)) == 6.0
    assert t.tolist() == [2.0, 2.0, 2.0]


# ---------------------------------------------------------------------------- spawn()
def _rank_writes(rank, shared):
    shared[rank] = rank + 1


def _rank_fails(rank):
    if rank == 1:
        raise ValueError("rank one is broken")


def _rank_exits(rank):
    if rank == 0:
        os._exit(3)


def test_spawn_runs_every_rank(leak_check):
    shared = ember.zeros(3).share_memory_()
    assert mp.spawn(_rank_writes, args=(shared,), nprocs=3, start_method="fork") is None
    assert shared.tolist() == [1.0, 2.0, 3.0]
    ctx = mp.spawn(_rank_writes, args=(shared,), nprocs=2, join=False, start_method="fork")
    assert len(ctx.pids()) == 2
    while not ctx.join():
        pass


def test_spawn_reports_child_errors(leak_check):
    with pytest.raises(mp.ProcessRaisedException, match="(?s)Process 1 terminated.*rank one"):
        mp.spawn(_rank_fails, nprocs=2, start_method="fork")
    with pytest.raises(mp.ProcessExitedException, match="process 0 terminated with exit code 3"):
        mp.spawn(_rank_exits, nprocs=2, start_method="fork")


# ---------------------------------------------------------------------------- hogwild
def test_hogwild_example_matches_single_process(leak_check):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(ember.__file__)),
                                    "examples"))
    try:
        import hogwild
    finally:
        sys.path.pop(0)
    initial, final = hogwild.hogwild(procs=2, steps=60)
    single = hogwild.single_process(120)
    assert final < 0.25 * initial  # the shared model really trained
    assert final < 2.0 * single + 0.01  # and about as well as one process doing all steps
