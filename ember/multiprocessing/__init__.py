"""ember.multiprocessing: Python's ``multiprocessing`` that shares tensors instead of copying.

A drop-in replacement for the standard module (everything it exports is re-exported). Tensors
sent through its queues and pipes, or passed as process arguments, move to shared memory and
travel as handles: the receiver maps the same memory, so a write in one process is visible in
the other (Hogwild training works on one model from several processes). This holds for the
``fork``, ``spawn`` and ``forkserver`` start methods. Gradients (``.grad``) stay per process.

Sharing strategies (see NOTE [Shared memory lifetime] in ``_shm.py``): ``'file_descriptor'``
(default; unnamed files, freed by the kernel when the last user is gone, also after a crash) and
``'file_system'`` (named files in /dev/shm, no open descriptor per tensor).

Example:
    >>> import ember, ember.multiprocessing as mp
    >>> t = ember.zeros(3)
    >>> t.share_memory_().is_shared()
    True
"""
from __future__ import annotations

import multiprocessing as _mp
from multiprocessing import *  # noqa: F403 - the standard API, re-exported: a drop-in replacement
from multiprocessing import context as _context

from . import _shm
from .reductions import init_reductions
from .reductions import share_tensors_in as _share_tensors_in
from .spawn import (ProcessContext, ProcessException, ProcessExitedException,
                    ProcessRaisedException, spawn, start_processes)

__all__ = list(_mp.__all__) + [
    "get_sharing_strategy", "set_sharing_strategy", "get_all_sharing_strategies", "spawn",
    "start_processes", "ProcessContext", "ProcessException", "ProcessRaisedException",
    "ProcessExitedException", "init_reductions"]


def get_sharing_strategy():
    """The current strategy for sharing tensor memory ('file_descriptor' by default)."""
    return _shm.get_strategy()


def set_sharing_strategy(new_strategy):
    """Choose how new shared memory is created and sent: 'file_descriptor' or 'file_system'.

    Applies to this process and to children started with ``fork`` afterwards.
    """
    _shm.set_strategy(new_strategy)


def get_all_sharing_strategies():
    return set(_shm.STRATEGIES)


class _SharesTensorArgs:
    """Mixin: share tensors in ``args``/``kwargs`` before start, so ``fork`` matches ``spawn``."""

    def start(self):
        _share_tensors_in(self._args)
        _share_tensors_in(self._kwargs)
        super().start()

    def join(self, timeout=None):
        super().join(timeout)
        if self.exitcode is not None and _shm._state.get("used_fs"):
            _shm.sweep()  # a crashed child may have left file_system segments nobody holds


class Process(_SharesTensorArgs, _mp.Process):
    """``multiprocessing.Process`` whose tensor arguments are shared, not copied."""


class _ForkProcess(_SharesTensorArgs, _context.ForkProcess):
    pass


class _SpawnProcess(_SharesTensorArgs, _context.SpawnProcess):
    pass


class _ForkServerProcess(_SharesTensorArgs, _context.ForkServerProcess):
    pass


class _ForkContext(_context.ForkContext):
    Process = _ForkProcess


class _SpawnContext(_context.SpawnContext):
    Process = _SpawnProcess


class _ForkServerContext(_context.ForkServerContext):
    Process = _ForkServerProcess


_CONTEXTS = {"fork": _ForkContext(), "spawn": _SpawnContext(),
             "forkserver": _ForkServerContext()}


def get_context(method=None):
    """A context for ``method`` ('fork', 'spawn', 'forkserver'; None: the default method)
    whose ``Process`` shares tensor arguments."""
    if method is None:
        method = _mp.get_start_method()
    try:
        return _CONTEXTS[method]
    except KeyError:
        raise ValueError(f"cannot find context for {method!r}") from None


init_reductions()
