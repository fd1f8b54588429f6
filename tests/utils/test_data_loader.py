"""DataLoader behaviour: batching, ordering, workers, seeding, persistence, validation.

Fault handling (dead workers, timeouts, shared memory exhaustion) is in
tests/faults/test_dataloader_faults.py. Every test that starts workers checks afterwards that no
worker process, zombie, shared-memory descriptor or /dev/shm entry is left behind.
"""
from __future__ import annotations

import multiprocessing
import os
import random

import numpy as np
import pytest
from _leaks import ember_entries, make_leak_check, shm_fds, zombie_children  # noqa: F401

import ember
import ember.multiprocessing as emp
from ember.multiprocessing import _shm
from ember.utils.data import DataLoader, Dataset, IterableDataset, TensorDataset, get_worker_info

pytestmark = pytest.mark.timeout(60)


# ---------------------------------------------------------------------------- leak checks
leak_check = make_leak_check(release_pins=False)


# ---------------------------------------------------------------------------- datasets
class Rows(Dataset):
    """Row i is [i, i, i] (float32) with label i."""

    def __init__(self, n=10):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return ember.full((3,), float(i)), i


class Pids(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return os.getpid()


class RandomDraws(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        info = get_worker_info()
        return (ember.rand(()).item(), random.random(), float(np.random.rand()),
                -1 if info is None else info.id, 0 if info is None else info.seed)


class Range(IterableDataset):
    """0..n-1, split between workers by get_worker_info (interleaved)."""

    def __init__(self, n, split=True):
        self.n, self.split = n, split

    def __iter__(self):
        info = get_worker_info()
        if info is None or not self.split:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))

    def __len__(self):
        return self.n


def _flat(batches):
    return sorted(int(v) for b in batches for v in b.tolist())


# ---------------------------------------------------------------------------- basics
def test_single_process_batches_and_labels():
    batches = list(DataLoader(Rows(5), batch_size=2))
    assert [b[1].tolist() for b in batches] == [[0, 1], [2, 3], [4]]
    assert batches[0][0].shape == (2, 3) and batches[0][0].dtype == ember.float32


def test_workers_give_same_batches_in_sampler_order(leak_check):
    def run(workers):
        loader = DataLoader(Rows(23), batch_size=4, shuffle=True, num_workers=workers,
                            generator=ember.Generator().manual_seed(11))
        return [(b[0].numpy().copy(), b[1].tolist()) for b in loader]

    ref, par = run(0), run(3)
    assert [labels for _, labels in par] == [labels for _, labels in ref]
    assert sorted(v for _, labels in par for v in labels) == list(range(23))
    for (x, _), (y, _) in zip(ref, par):
        np.testing.assert_array_equal(x, y)


def test_worker_batches_arrive_in_shared_memory(leak_check):
    for x, y in DataLoader(Rows(6), batch_size=3, num_workers=2):
        assert x.is_shared() and y.is_shared()
        assert _shm.segment_of(x._data) is not None  # mapped, not unpickled into private memory
        x.add_(1)  # the main process owns a writable batch


def test_workers_run_one_intra_op_thread(leak_check):
    class Threads(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return ember.get_num_threads()

    before = ember.get_num_threads()
    assert list(DataLoader(Threads(), batch_size=None, num_workers=1)) == [1, 1]
    assert ember.get_num_threads() == before  # the main process keeps its setting


def test_non_tensor_data_and_custom_collate_through_workers(leak_check):
    class Mixed(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return {"name": f"n{i}", "x": np.arange(2) + i}

    def collate(samples):
        return [s["name"] for s in samples], [ember.from_numpy(s["x"]) for s in samples]

    out = list(DataLoader(Mixed(), batch_size=2, num_workers=2, collate_fn=collate))
    assert [names for names, _ in out] == [["n0", "n1"], ["n2", "n3"]]
    assert out[1][1][1].tolist() == [3, 4]


def test_message_with_hundreds_of_tensors(leak_check):
    # more storages than one SCM_RIGHTS message can carry: the descriptors go in chunks
    data = TensorDataset(ember.arange(600.0).reshape(600, 1))
    (batch,) = list(DataLoader(data, batch_size=600, num_workers=1, collate_fn=list))
    assert len(batch) == 600
    assert [int(t[0].item()) for t in batch] == list(range(600))


def test_batch_size_none_converts_samples(leak_check):
    class Arrays(Dataset):
        def __len__(self):
            return 3

        def __getitem__(self, i):
            return np.full(2, i)

    out = list(DataLoader(Arrays(), batch_size=None, num_workers=2))
    assert all(isinstance(t, ember.Tensor) for t in out)
    assert [t.tolist() for t in out] == [[0, 0], [1, 1], [2, 2]]


def test_drop_last_with_workers(leak_check):
    out = list(DataLoader(Rows(7), batch_size=3, drop_last=True, num_workers=2))
    assert [b[1].tolist() for b in out] == [[0, 1, 2], [3, 4, 5]]


def test_pin_memory_is_accepted_and_a_noop(leak_check):
    (x, y), = list(DataLoader(Rows(2), batch_size=2, pin_memory=True, num_workers=1))
    assert not x.is_pinned()
    assert y.tolist() == [0, 1]


# ---------------------------------------------------------------------------- iterable
def test_iterable_dataset_split_with_get_worker_info(leak_check):
    out = list(DataLoader(Range(11), batch_size=3, num_workers=2))
    assert _flat(out) == list(range(11))
    # round robin over workers: worker 0 has the even numbers, worker 1 the odd ones
    assert out[0].tolist() == [0, 2, 4] and out[1].tolist() == [1, 3, 5]


def test_iterable_dataset_unsplit_is_replicated_per_worker(leak_check):
    out = list(DataLoader(Range(4, split=False), batch_size=2, num_workers=2))
    assert _flat(out) == [0, 0, 1, 1, 2, 2, 3, 3]


def test_iterable_dataset_single_process_and_len():
    loader = DataLoader(Range(7), batch_size=3)
    assert _flat(loader) == list(range(7))
    assert len(loader) == 3
    assert len(DataLoader(Range(7), batch_size=3, drop_last=True)) == 2


# ---------------------------------------------------------------------------- seeding
def test_worker_seeds_are_distinct_and_reproducible(leak_check):
    def run():
        loader = DataLoader(RandomDraws(), batch_size=2, num_workers=2,
                            generator=ember.Generator().manual_seed(123))
        return [tuple(tuple(t.tolist()) for t in b) for b in loader]

    first, second = run(), run()
    assert first == second  # same loader seed -> identical batches
    by_worker = {}
    for ember_draw, py_draw, np_draw, wid, seed in first:
        by_worker.setdefault(wid[0], set()).update({ember_draw[0], py_draw[0], np_draw[0]})
        assert seed[0] == seed[1]
    assert set(by_worker) == {0, 1}
    assert not by_worker[0] & by_worker[1]  # workers draw different streams
    seeds = {wid[0]: seed[0] for *_, wid, seed in first}
    assert seeds[1] == seeds[0] + 1  # base_seed + worker_id


def test_worker_init_fn_runs_in_every_worker(leak_check):
    class ReadsMarker(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return os.environ.get("EMBER_TEST_WORKER_MARK", "unset")

    def init(worker_id):
        os.environ["EMBER_TEST_WORKER_MARK"] = f"w{worker_id}"

    out = list(DataLoader(ReadsMarker(), batch_size=1, num_workers=2, worker_init_fn=init))
    assert sorted(b[0] for b in out) == ["w0", "w0", "w1", "w1"]
    assert "EMBER_TEST_WORKER_MARK" not in os.environ


# ---------------------------------------------------------------------------- persistence
def test_persistent_workers_keep_processes_between_epochs(leak_check):
    loader = DataLoader(Pids(), batch_size=2, num_workers=2, persistent_workers=True)
    first = {int(p) for b in loader for p in b.tolist()}
    second = {int(p) for b in loader for p in b.tolist()}
    assert len(first) == 2 and first == second
    assert os.getpid() not in first
    del loader


def test_persistent_workers_after_early_break_and_iterable_resume(leak_check):
    loader = DataLoader(Rows(9), batch_size=2, num_workers=2, persistent_workers=True)
    for _ in loader:
        break
    assert [b[1].tolist() for b in loader][-1] == [8]  # a full new epoch
    stream = DataLoader(Range(5), batch_size=2, num_workers=2, persistent_workers=True)
    assert _flat(stream) == list(range(5))
    assert _flat(stream) == list(range(5))
    del loader, stream


def test_prefetch_factor_bounds_outstanding_tasks(leak_check):
    it = iter(DataLoader(Rows(40), batch_size=1, num_workers=2, prefetch_factor=3))
    assert len(it._outstanding) == 6
    next(it)
    assert len(it._outstanding) == 6
    del it


# ---------------------------------------------------------------------------- contexts
def test_spawn_context_loads_batches(leak_check):
    loader = DataLoader(Rows(6), batch_size=2, num_workers=2, multiprocessing_context="spawn")
    assert [b[1].tolist() for b in loader] == [[0, 1], [2, 3], [4, 5]]


def test_context_object_and_file_system_strategy(leak_check):
    previous = emp.get_sharing_strategy()
    emp.set_sharing_strategy("file_system")
    try:
        loader = DataLoader(Rows(6), batch_size=3, num_workers=2,
                            multiprocessing_context=multiprocessing.get_context("fork"))
        batches = list(loader)
        assert [b[1].tolist() for b in batches] == [[0, 1, 2], [3, 4, 5]]
        assert _shm.segment_of(batches[0][0]._data)[0].path is not None
        del batches
    finally:
        emp.set_sharing_strategy(previous)


# ---------------------------------------------------------------------------- validation
def test_len_for_map_style_loaders():
    assert len(DataLoader(Rows(10), batch_size=3)) == 4
    assert len(DataLoader(Rows(10), batch_size=3, drop_last=True)) == 3
    assert len(DataLoader(Rows(10), batch_size=None)) == 10


@pytest.mark.parametrize("kwargs, match", [
    ({"num_workers": -1}, "num_workers option should be non-negative"),
    ({"timeout": -1}, "timeout option should be non-negative"),
    ({"prefetch_factor": 2}, "prefetch_factor option could only be specified"),
    ({"persistent_workers": True}, "persistent_workers option needs num_workers > 0"),
    ({"sampler": [0, 1], "shuffle": True}, "mutually exclusive with shuffle"),
    ({"batch_sampler": [[0]], "batch_size": 2}, "batch_sampler option is mutually exclusive"),
    ({"batch_size": None, "drop_last": True}, "batch_size=None option disables"),
    ({"multiprocessing_context": "fork"}, "num_workers > 0"),
    ({"num_workers": 1, "multiprocessing_context": "thread"}, "valid start method"),
])
def test_invalid_arguments_raise_value_error(kwargs, match):
    with pytest.raises(ValueError, match=match):
        DataLoader(Rows(4), **kwargs)


def test_invalid_context_type_and_iterable_shuffle():
    with pytest.raises(TypeError, match="valid context object"):
        DataLoader(Rows(4), num_workers=1, multiprocessing_context=3)
    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        DataLoader(Range(4), shuffle=True)


def test_attributes_are_frozen_after_init():
    loader = DataLoader(Rows(4))
    with pytest.raises(ValueError, match="batch_size attribute should not be set"):
        loader.batch_size = 3


@pytest.mark.parity
def test_batches_and_lengths_match_torch():
    torch = pytest.importorskip("torch", reason="torch oracle not installed")
    from torch.utils.data import DataLoader as TorchLoader
    from torch.utils.data import TensorDataset as TorchTD
    x = np.arange(30, dtype=np.float32).reshape(10, 3)
    y = np.arange(10)
    for kwargs in ({"batch_size": 3}, {"batch_size": 3, "drop_last": True},
                   {"batch_size": None}, {"batch_size": 4}):
        ours = list(DataLoader(TensorDataset(ember.from_numpy(x), ember.from_numpy(y)),
                               **kwargs))
        ref = list(TorchLoader(TorchTD(torch.from_numpy(x), torch.from_numpy(y)), **kwargs))
        assert len(ours) == len(ref)
        for (ox, oy), (rx, ry) in zip(ours, ref):
            np.testing.assert_array_equal(ox.numpy(), rx.numpy())
            np.testing.assert_array_equal(oy.numpy(), ry.numpy())
