"""DataLoader faults: worker exceptions, workers killed by signals or exiting, timeouts, early
shutdown, shared memory running out, the main process dying.

Every test checks that no worker process, zombie, shared-memory descriptor or shared-memory
file is left behind. Synchronisation uses events, never sleeps.
"""
from __future__ import annotations

import ctypes
import faulthandler
import gc
import multiprocessing
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time

import pytest
from _leaks import ember_entries, make_leak_check, shm_fds, zombie_children  # noqa: F401

import ember
from ember.multiprocessing import _shm
from ember.utils.data import DataLoader, Dataset, get_worker_info

pytestmark = pytest.mark.timeout(60)

_fork = multiprocessing.get_context("fork")


# ---------------------------------------------------------------------------- leak checks
leak_check = make_leak_check(release_pins=False)


def _used_bytes(directory):
    st = os.statvfs(directory)
    return (st.f_blocks - st.f_bfree) * st.f_frsize


@pytest.fixture
def tiny_tmpfs(monkeypatch):
    """A private 1 MB tmpfs used as the shared-memory directory (needs root to mount)."""
    directory = tempfile.mkdtemp(prefix="ember_tmpfs_test_")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1M", "tmpfs", directory],
                             capture_output=True, check=False).returncode == 0
    if not mounted:
        os.rmdir(directory)
        pytest.skip("mounting a tmpfs needs root (CAP_SYS_ADMIN); the simulated-capacity test "
                    "covers the same path")
    monkeypatch.setenv(_shm.SHM_DIR_ENV, directory)
    try:
        yield directory
    finally:
        subprocess.run(["umount", "-l", directory], check=False)
        shutil.rmtree(directory, ignore_errors=True)


# ---------------------------------------------------------------------------- datasets
class Faulty(Dataset):
    """Item ``bad`` misbehaves according to ``mode``; the others are [i, i]."""

    def __init__(self, mode, bad=5, n=12, gate=None):
        self.mode, self.bad, self.n, self.gate = mode, bad, n, gate

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.bad:
            if self.mode == "raise":
                raise ValueError(f"item {i} is corrupt")
            if self.mode == "keyerror":
                raise KeyError("missing")
            if self.mode == "custom":
                raise TwoArgError("first", "second")
            if self.mode == "sigkill":
                os.kill(os.getpid(), signal.SIGKILL)
            if self.mode == "segfault":
                faulthandler.disable()  # pytest's handler would print a dump; die quietly
                ctypes.string_at(0)  # a real crash in native code
            if self.mode == "exit":
                os._exit(7)
            if self.mode == "block":
                self.gate.wait()
        if self.mode == "block_all" and i >= 2:
            self.gate.wait()
        return ember.full((2,), float(i))


class TwoArgError(Exception):
    def __init__(self, a, b):
        super().__init__(a, b)


class Big(Dataset):
    def __init__(self, floats, n=8):
        self.floats, self.n = floats, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return ember.full((self.floats,), float(i))


# ---------------------------------------------------------------------------- exceptions
def test_worker_exception_reraised_with_worker_id_and_traceback(leak_check):
    loader = DataLoader(Faulty("raise", bad=5), batch_size=2, num_workers=2)
    it = iter(loader)
    assert next(it).shape == (2, 2)
    assert next(it).shape == (2, 2)
    with pytest.raises(ValueError) as info:
        next(it)  # batch [4, 5], worker 0
    msg = str(info.value)
    assert "Caught ValueError in DataLoader worker process 0 (pid " in msg
    assert "while fetching dataset index 5.\n" in msg  # the item that failed, not just the batch
    assert "Original Traceback (most recent call last)" in msg
    assert "__getitem__" in msg and "item 5 is corrupt" in msg
    # like torch, the loader goes on with the next batches
    assert [b[:, 0].tolist() for b in it] == [[6.0, 7.0], [8.0, 9.0], [10.0, 11.0]]


def test_worker_error_names_the_failing_index_without_batching(leak_check):
    with pytest.raises(ValueError, match=r"worker process \d \(pid \d+\) while fetching "
                                         r"dataset index 3\."):
        list(DataLoader(Faulty("raise", bad=3), batch_size=None, num_workers=1))


def test_worker_collate_error_names_the_batch(leak_check):
    def collate(items):
        if any(float(t[0]) == 7.0 for t in items):
            raise TypeError("cannot collate")
        return items

    with pytest.raises(TypeError, match=r"while collating the batch of dataset indices \[6, 7\]"):
        list(DataLoader(Faulty("raise", bad=-1), batch_size=2, num_workers=2,
                        collate_fn=collate))


class _FaultyStream(ember.utils.data.IterableDataset):
    def __iter__(self):
        yield from (ember.zeros(1) for _ in range(3))
        raise OSError("stream broke")


def test_worker_iterable_error_names_the_item(leak_check):
    with pytest.raises(OSError, match="while fetching item 3 of this worker's dataset iterator"):
        list(DataLoader(_FaultyStream(), batch_size=2, num_workers=1))


def test_worker_keyerror_and_unconstructible_exception(leak_check):
    with pytest.raises(KeyError, match="Caught KeyError"):
        list(DataLoader(Faulty("keyerror"), batch_size=2, num_workers=1))
    with pytest.raises(RuntimeError, match="(?s)Caught TwoArgError.*first"):
        list(DataLoader(Faulty("custom"), batch_size=2, num_workers=1))


def test_worker_init_fn_error_is_reraised(leak_check):
    def init(worker_id):
        raise OSError(f"cannot open shard {worker_id}")

    with pytest.raises(OSError, match="cannot open shard 0"):
        list(DataLoader(Faulty("none"), batch_size=2, num_workers=2, worker_init_fn=init))


# ---------------------------------------------------------------------------- dead workers
@pytest.mark.parametrize("mode, match", [
    ("sigkill", r"DataLoader worker \(pid \d+\) is killed by signal: Killed \(SIGKILL\)"),
    ("segfault", r"DataLoader worker \(pid \d+\) is killed by signal: .*\(SIGSEGV\)"),
    ("exit", r"DataLoader worker \(pid \d+\) exited unexpectedly with exit code 7"),
])
def test_dead_worker_reported_within_a_second(leak_check, mode, match):
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=match):
        list(DataLoader(Faulty(mode, bad=5), batch_size=2, num_workers=2))
    assert time.monotonic() - start < 1.5


def test_worker_killed_from_outside_names_its_pid(leak_check):
    gate = _fork.Event()  # never set: the workers block on item 5
    it = iter(DataLoader(Faulty("block", bad=5, gate=gate), batch_size=2, num_workers=2))
    assert next(it)[:, 0].tolist() == [0.0, 1.0]
    victim = it._pool.workers[0].pid  # worker 0 owns batch [4, 5]
    os.kill(victim, signal.SIGKILL)
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=rf"DataLoader worker \(pid {victim}\) is killed by "
                                           r"signal: Killed"):
        for _ in it:
            pass
    assert time.monotonic() - start < 1.5
    del it


class DiesOnce(Dataset):
    def __init__(self):
        self.armed = _fork.Value("b", 1)

    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 3 and self.armed.value:
            self.armed.value = 0
            os.kill(os.getpid(), signal.SIGKILL)
        return i


def test_persistent_workers_restart_after_a_worker_died(leak_check):
    loader = DataLoader(DiesOnce(), batch_size=2, num_workers=2, persistent_workers=True)
    with pytest.raises(RuntimeError, match="is killed by signal"):
        list(loader)
    assert [b.tolist() for b in loader] == [[0, 1], [2, 3], [4, 5]]  # fresh workers
    del loader


def test_timeout_raises_after_given_seconds(leak_check):
    gate = _fork.Event()
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0.3 seconds"):
        list(DataLoader(Faulty("block", bad=0, gate=gate), batch_size=2, num_workers=1,
                        timeout=0.3))
    assert 0.3 <= time.monotonic() - start < 2.0


# ---------------------------------------------------------------------------- shutdown
def test_breaking_out_early_shuts_workers_down(leak_check):
    for batch in DataLoader(Faulty("none", n=200), batch_size=2, num_workers=2):
        assert batch.shape == (2, 2)
        break


def test_dropping_iterator_with_busy_workers(leak_check):
    gate = _fork.Event()
    it = iter(DataLoader(Faulty("block_all", gate=gate), batch_size=1, num_workers=2))
    assert next(it).tolist() == [[0.0, 0.0]]
    workers = list(it._pool.workers)
    gate.set()  # the workers finish their item, find the channel closed and exit
    del it
    assert all(w._closed for w in workers)  # joined and released


def test_main_process_killed_workers_exit():
    script = textwrap.dedent("""
        import os, signal, sys
        import ember
        from ember.utils.data import DataLoader, TensorDataset
        it = iter(DataLoader(TensorDataset(ember.arange(100.0)), batch_size=2, num_workers=2))
        next(it)
        print(" ".join(str(w.pid) for w in it._pool.workers), flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=False, timeout=60,
                          cwd=os.path.dirname(os.path.dirname(ember.__file__)))
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    pids = [int(p) for p in proc.stdout.split()]
    assert len(pids) == 2
    for pid in pids:  # orphaned workers notice within STATUS_CHECK_INTERVAL (1 s)
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue  # already gone
        try:
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            assert poller.poll(5000), f"worker {pid} outlived the main process"
        finally:
            os.close(fd)


# ---------------------------------------------------------------------------- shared memory
def test_shared_memory_exhaustion_simulated(leak_check, monkeypatch):
    monkeypatch.setenv(_shm.SIMULATED_CAPACITY_ENV, "4096")
    with pytest.raises(RuntimeError) as info:
        list(DataLoader(Big(1024), batch_size=4, num_workers=2))  # 16 KB batches
    msg = str(info.value)
    assert "DataLoader worker process" in msg and "shared memory ran out" in msg
    for hint in ("num_workers", "file_system", "/dev/shm"):
        assert hint in msg


@pytest.mark.parametrize("strategy", ["file_descriptor", "file_system"])
def test_shared_memory_exhaustion_real_tmpfs(leak_check, tiny_tmpfs, strategy):
    import ember.multiprocessing as emp
    previous = emp.get_sharing_strategy()
    emp.set_sharing_strategy(strategy)
    try:
        # 100 KB batches fit; 4 MB batches cannot fit in the 1 MB tmpfs
        assert len(list(DataLoader(Big(25_000, n=4), batch_size=1, num_workers=2))) == 4
        with pytest.raises(RuntimeError, match=r"shared memory ran out .* in " + tiny_tmpfs):
            list(DataLoader(Big(1 << 20), batch_size=1, num_workers=2))
    finally:
        emp.set_sharing_strategy(previous)
    gc.collect()
    assert ember_entries(tiny_tmpfs) == set()
    assert _used_bytes(tiny_tmpfs) == 0


def test_killed_worker_leaves_no_shared_memory(leak_check, tiny_tmpfs):
    gate = _fork.Event()
    it = iter(DataLoader(Faulty("block", bad=9, gate=gate), batch_size=2, num_workers=2))
    held = next(it)  # the main process holds one batch in shared memory
    assert _used_bytes(tiny_tmpfs) > 0
    os.kill(it._pool.workers[0].pid, signal.SIGKILL)
    with pytest.raises(RuntimeError, match="is killed by signal"):
        list(it)
    del it
    gc.collect()
    assert held[:, 0].tolist() == [0.0, 1.0]  # still valid after the worker died
    del held
    gc.collect()
    assert _used_bytes(tiny_tmpfs) == 0


def test_worker_info_is_read_only_and_none_in_main():
    assert get_worker_info() is None

    class Probe(Dataset):
        def __len__(self):
            return 1

        def __getitem__(self, i):
            info = get_worker_info()
            try:
                info.id = 5
            except RuntimeError as e:
                return f"{info.id}/{info.num_workers}:{e}"
            return "writable"

    (out,) = list(DataLoader(Probe(), batch_size=None, num_workers=1))
    assert out == "0/1:Cannot assign attributes to WorkerInfo objects"
