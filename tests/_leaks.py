"""Leak checks shared by the tests that start processes or share memory.

``make_leak_check()`` builds the ``leak_check`` fixture: the test runs with a private
shared-memory directory (so that concurrent test runs do not disturb the count) and afterwards
no process, zombie, shared-memory descriptor or file may be left behind.
"""
from __future__ import annotations

import gc
import multiprocessing
import os
import shutil
import tempfile

import pytest

from ember.multiprocessing import _shm


def shm_fds():
    """This process's descriptors that point at ember shared-memory segments."""
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        # ember's segments: unnamed tmpfs files ("#<inode> (deleted)"), ember_fs_* names, memfds
        name = os.path.basename(target)
        if name.startswith(("#", "ember_fs_")) or target.startswith("/memfd:ember"):
            out.append(target)
    return out


def ember_entries(directory):
    return {n for n in os.listdir(directory) if n.startswith("ember")}


def zombie_children():
    me, zombies = os.getpid(), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] == "Z" and int(fields[1]) == me:
            zombies.append(int(entry))
    return zombies


def make_leak_check(release_pins=False):
    """The leak_check fixture; release_pins first drops segments a sender keeps mapped until
    a receiver attached them (file_system strategy)."""

    @pytest.fixture
    def leak_check(monkeypatch):
        directory = tempfile.mkdtemp(prefix="ember_test_", dir=_shm.shm_dir())
        monkeypatch.setenv(_shm.SHM_DIR_ENV, directory)
        gc.collect()
        children = {p.pid for p in multiprocessing.active_children()}
        fds = len(shm_fds())
        try:
            yield
            gc.collect()
            if release_pins:
                _shm.release_pins()
                gc.collect()
            assert [p for p in multiprocessing.active_children() if p.pid not in children] == []
            assert zombie_children() == []
            assert len(shm_fds()) <= fds
            assert os.listdir(directory) == []
        finally:
            shutil.rmtree(directory, ignore_errors=True)

    return leak_check
