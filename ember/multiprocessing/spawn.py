"""``spawn``/``start_processes``: run ``fn(i, *args)`` in ``nprocs`` processes, like torch's.

If a process raises, the others are terminated and the parent raises
``ProcessRaisedException`` carrying the child's traceback; a process that dies from a signal or
exits with a non-zero code gives ``ProcessExitedException``.
"""
from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import signal
import sys
import traceback

__all__ = [
    "ProcessContext",
    "ProcessException",
    "ProcessExitedException",
    "ProcessRaisedException",
    "spawn",
    "start_processes",
]


class ProcessException(Exception):
    """A process started by ``spawn`` failed; ``error_index`` is its rank, ``pid`` its pid."""

    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A spawned process raised an exception; the message holds its traceback."""

    def __init__(self, msg, error_index, error_pid):
        super().__init__(msg, error_index, error_pid)


class ProcessExitedException(ProcessException):
    """A spawned process exited with a non-zero code or was killed by a signal."""

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code,
                            self.signal_name)


def _wrap(fn, i, args, error_queue):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # the parent sees SIGINT too
    except Exception:
        error_queue.put(traceback.format_exc())
        sys.exit(1)


class ProcessContext:
    """The processes of one ``start_processes`` call; ``join()`` waits and reports failures."""

    def __init__(self, processes, error_queues):
        self.processes, self.error_queues = processes, error_queues
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self):
        return [p.pid for p in self.processes]

    def join(self, timeout=None):
        """Wait up to ``timeout`` s; True when all exited cleanly, False if some still run."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(list(self.sentinels), timeout=timeout)
        failed = None
        for sentinel in ready:
            i = self.sentinels.pop(sentinel)
            p = self.processes[i]
            p.join()
            if p.exitcode != 0 and failed is None:
                failed = i
        if failed is None:
            return not self.sentinels
        for p in self.processes:  # one failed: stop the others
            if p.is_alive():
                p.terminate()
            p.join(5)
            if p.is_alive():
                p.kill()
                p.join()
        self.sentinels.clear()
        self._raise(failed)

    def _raise(self, i):
        p = self.processes[i]
        if not self.error_queues[i].empty():
            tb = self.error_queues[i].get()
            raise ProcessRaisedException(
                f"\n\n-- Process {i} terminated with the following error:\n{tb}", i, p.pid)
        if p.exitcode < 0:
            name = signal.Signals(-p.exitcode).name
            raise ProcessExitedException(f"process {i} terminated with signal {name}", i,
                                         p.pid, p.exitcode, name)
        raise ProcessExitedException(f"process {i} terminated with exit code {p.exitcode}", i,
                                     p.pid, p.exitcode)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Start ``nprocs`` processes running ``fn(i, *args)`` with the given start method."""
    from . import get_context
    ctx = get_context(start_method)
    processes, error_queues = [], []
    for i in range(nprocs):
        error_queue = ctx.SimpleQueue()
        p = ctx.Process(target=_wrap, args=(fn, i, args, error_queue), daemon=daemon)
        p.start()
        processes.append(p)
        error_queues.append(error_queue)
    context = ProcessContext(processes, error_queues)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Run ``fn(i, *args)`` for i in range(nprocs) in new processes (``spawn`` by default).

    Returns None after all processes finished when ``join``; else a ``ProcessContext``.

    Example:
        >>> import ember.multiprocessing as mp
        >>> mp.spawn(print, args=("hello",), nprocs=1, start_method="fork")  # doctest: +SKIP
        0 hello
    """
    return start_processes(fn, args, nprocs, join, daemon, start_method)
