"""Shared-memory lifetime: segments go away when the last user drops them, also after SIGKILL.

The tests use a private tmpfs as the shared-memory directory when they can mount one (root),
so that the bytes in use can be checked exactly; otherwise they check /dev/shm entries only.
"""
from __future__ import annotations

import gc
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading

import pytest

import ember
import ember.multiprocessing as mp
from ember.multiprocessing import _shm

pytestmark = pytest.mark.timeout(60)

fork = mp.get_context("fork")


def _used_bytes(directory):
    st = os.statvfs(directory)
    return (st.f_blocks - st.f_bfree) * st.f_frsize


def _ember_entries(directory):
    return {n for n in os.listdir(directory) if n.startswith("ember")}


@pytest.fixture
def shm_dir(monkeypatch):
    """(directory, exact): a private 64 MB tmpfs if mountable (exact byte counts), else a
    private directory in /dev/shm (file names only: other processes use the same tmpfs)."""
    directory = tempfile.mkdtemp(prefix="ember_lifetime_test_")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64M", "tmpfs", directory],
                             capture_output=True, check=False).returncode == 0
    if not mounted:
        os.rmdir(directory)
        directory = tempfile.mkdtemp(prefix="ember_lifetime_test_", dir=_shm.shm_dir())
    monkeypatch.setenv(_shm.SHM_DIR_ENV, directory)
    try:
        yield directory, mounted
    finally:
        if mounted:
            subprocess.run(["umount", "-l", directory], check=False)
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(params=["file_descriptor", "file_system"])
def strategy(request):
    previous = mp.get_sharing_strategy()
    mp.set_sharing_strategy(request.param)
    yield request.param
    mp.set_sharing_strategy(previous)


def _hold_until_killed(inbox, outbox, ready):
    private = ember.ones(256 * 1024).share_memory_()  # 1 MB nobody else ever sees
    x = inbox.get()
    x.add_(1)
    outbox.put(ember.full((64 * 1024,), 3.0))  # 256 KB handed to the parent
    ready.set()
    threading.Event().wait()  # until SIGKILL
    del private


def test_sigkilled_child_leaves_nothing_behind(shm_dir, strategy):
    directory, exact = shm_dir
    gc.collect()
    entries_before = _ember_entries(directory)
    inbox, outbox, ready = fork.Queue(), fork.Queue(), fork.Event()
    p = fork.Process(target=_hold_until_killed, args=(inbox, outbox, ready))
    p.start()
    x = ember.zeros(1024)
    inbox.put(x)
    got = outbox.get(timeout=30)
    assert ready.wait(30)
    os.kill(p.pid, signal.SIGKILL)
    p.join(30)
    assert p.exitcode == -signal.SIGKILL
    # what the parent holds survives the child and still has the child's writes
    assert x.tolist()[:2] == [1.0, 1.0] and got.tolist()[:2] == [3.0, 3.0]
    del x, got
    gc.collect()
    _shm.release_pins()
    gc.collect()
    assert _ember_entries(directory) <= entries_before
    if exact:
        assert _used_bytes(directory) == 0
    assert multiprocessing.active_children() == []


def test_segment_freed_when_last_process_drops_it(shm_dir, strategy):
    directory, exact = shm_dir
    if not exact:
        pytest.skip("needs a private tmpfs (root) to measure the bytes in use")
    parent_end, child_end = fork.Pipe()
    p = fork.Process(target=_keep_until_told, args=(child_end,))
    p.start()
    t = ember.zeros(1 << 20)  # 4 MB
    parent_end.send(t)
    assert parent_end.recv() == "holding"
    del t
    gc.collect()
    _shm.release_pins()
    assert _used_bytes(directory) >= 4 << 20  # the child still maps it
    parent_end.send("drop")
    assert parent_end.recv() == "dropped"
    assert _used_bytes(directory) == 0
    parent_end.send("exit")
    p.join(30)
    assert p.exitcode == 0


def test_file_system_segment_unlinked_once_both_sides_drop_it(shm_dir):
    """Without any later allocation in the sender: its pin goes when the receipt is seen."""
    directory, _ = shm_dir
    previous = mp.get_sharing_strategy()
    mp.set_sharing_strategy("file_system")
    try:
        parent_end, child_end = fork.Pipe()
        p = fork.Process(target=_keep_until_told, args=(child_end,))
        p.start()
        t = ember.zeros(1 << 16)
        parent_end.send(t)
        assert parent_end.recv() == "holding"
        assert any(n.startswith(_shm.FS_PREFIX) for n in _ember_entries(directory))
        del t
        gc.collect()
        parent_end.send("drop")
        assert parent_end.recv() == "dropped"
        assert _shm.wait_pins_released(10)
        gc.collect()
        assert not any(n.startswith(_shm.FS_PREFIX) for n in _ember_entries(directory))
        parent_end.send("exit")
        p.join(30)
        assert p.exitcode == 0
    finally:
        mp.set_sharing_strategy(previous)


def _keep_until_told(conn):
    t = conn.recv()
    conn.send("holding")
    assert conn.recv() == "drop"
    del t
    gc.collect()
    conn.send("dropped")
    conn.recv()


def test_result_put_by_exiting_child_arrives(shm_dir):
    # see NOTE [Sender exit]: the child waits at exit until its descriptor was fetched
    q = fork.Queue()
    p = fork.Process(target=_put_and_return, args=(q,))
    p.start()
    t = q.get(timeout=30)
    p.join(30)
    assert t.tolist() == [5.0, 5.0] and p.exitcode == 0


def _put_and_return(q):
    q.put(ember.full((2,), 5.0))


def test_file_system_orphans_are_swept_at_exit(shm_dir):
    directory, exact = shm_dir
    if not exact:
        pytest.skip("needs a private tmpfs (root) so that other processes' files do not count")
    script = textwrap.dedent("""
        import os, signal
        import ember, ember.multiprocessing as mp
        mp.set_sharing_strategy("file_system")
        ctx = mp.get_context("fork")
        kept = ember.ones(1000).share_memory_()
        def orphan_maker(ready):
            ember.ones(1000).share_memory_()  # held only by this child
            leaked = ember.ones(1000).share_memory_()
            ready.set()
            os.kill(os.getpid(), signal.SIGKILL)
        ready = ctx.Event()
        p = ctx.Process(target=orphan_maker, args=(ready,))
        p.start()
        p.join()
        print(len([n for n in os.listdir(os.environ.get("EMBER_SHM_DIR", "/dev/shm"))
                   if n.startswith("ember_fs_")]))
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=False, timeout=60, env=dict(os.environ),
                          cwd=os.path.dirname(os.path.dirname(ember.__file__)))
    assert proc.returncode == 0, proc.stderr
    # after the child died, join() swept its orphans: only the parent's own segment is left
    assert proc.stdout.split() == ["1"]
    assert _ember_entries(directory) == set()  # and the parent's exit removed that one
    assert _used_bytes(directory) == 0
