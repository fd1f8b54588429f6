"""What runs inside a DataLoader worker process, and what it sends back.

A worker receives ``(task_index, indices)`` on its own task queue and answers on its own unix
socket with ``(task_index, result)`` where ``result`` is a batch, an ``ExceptionWrapper`` or
``IterableStop``. Tensors in the batch travel as shared-memory descriptors (see
``ember/multiprocessing/_channel.py``); collation already allocates them in shared memory.
"""
from __future__ import annotations

import os
import queue
import random
import signal
import sys
import traceback
from dataclasses import dataclass

import numpy as np

__all__ = ["WorkerInfo", "get_worker_info"]

# how often an idle worker checks that the main process is still alive (seconds)
STATUS_CHECK_INTERVAL = 1.0

_worker_info = None


class WorkerInfo:
    """Read-only facts about the current worker: ``id``, ``num_workers``, ``seed``,
    ``dataset`` (this worker's copy)."""

    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs)
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {type(self).__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self):
        items = ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__keys if k != "dataset")
        return f"{type(self).__name__}({items})"


def get_worker_info():
    """The ``WorkerInfo`` of the current DataLoader worker, or None in the main process.

    Use it in ``IterableDataset.__iter__`` or ``worker_init_fn`` to split work between workers.
    """
    return _worker_info


@dataclass(frozen=True)
class IterableStop:
    """A worker's iterable dataset is exhausted."""
    worker_id: int


@dataclass(frozen=True)
class ResumeIteration:
    """Persistent workers: start a new epoch (recreate the dataset iterator)."""
    seed: int | None = None


class ExceptionWrapper:
    """An exception caught in a worker, re-raised in the main process with its traceback."""

    def __init__(self, exc_info, where):
        exc_type = exc_info[0]
        self.exc_type = exc_type
        self.exc_module, self.exc_name = exc_type.__module__, exc_type.__qualname__
        self.msg = (f"Caught {exc_type.__name__} {where}.\nOriginal "
                    + "".join(traceback.format_exception(*exc_info)))

    def __reduce__(self):
        # the exception type itself may not be importable in the main process: send its name
        # and try to resolve it there
        return _rebuild_wrapper, (self.exc_module, self.exc_name, self.msg)

    def reraise(self):
        msg = self.msg
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)
        try:
            exc = self.exc_type(msg)
        except Exception:
            exc = RuntimeError(msg)
        try:
            raise exc
        finally:
            exc = None  # break the exc -> traceback -> frame -> exc cycle (frees the iterator)


class _KeyErrorMessage(str):
    """KeyError prints repr(arg); this keeps the traceback's newlines readable."""

    def __repr__(self):
        return self


def _rebuild_wrapper(module, name, msg):
    w = ExceptionWrapper.__new__(ExceptionWrapper)
    w.exc_module, w.exc_name, w.msg = module, name, msg
    try:
        obj = sys.modules[module]
        for part in name.split("."):
            obj = getattr(obj, part)
        w.exc_type = obj if isinstance(obj, type) and issubclass(obj, BaseException) \
            else RuntimeError
    except (KeyError, AttributeError):
        w.exc_type = RuntimeError
    return w


# ---------------------------------------------------------------------------- fetching
# What a fetcher was doing when an exception left it, so that the worker's error names the
# dataset index that failed: (kind, value), formatted only on failure (see `_doing`).
_GET, _GET_MANY, _COLLATE, _NEXT = "index", "indices", "collate", "next"


def _doing(fetcher):
    kind, value = getattr(fetcher, "doing", (None, None))
    if kind == _GET:
        return f" while fetching dataset index {value!r}"
    if kind == _GET_MANY:
        return f" while fetching dataset indices {list(value)!r} (__getitems__)"
    if kind == _COLLATE:
        return f" while collating the batch of dataset indices {list(value)!r}"
    if kind == _NEXT:
        return f" while fetching item {value} of this worker's dataset iterator"
    return ""


class _MapFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation = dataset, auto_collation
        self.collate_fn, self.drop_last = collate_fn, drop_last
        self.doing = (None, None)

    def fetch(self, index):
        if self.auto_collation:
            items = getattr(self.dataset, "__getitems__", None)
            if callable(items):
                self.doing = (_GET_MANY, index)
                data = items(index)
            else:
                data = []
                for i in index:
                    self.doing = (_GET, i)
                    data.append(self.dataset[i])
        else:
            self.doing = (_GET, index)
            data = self.dataset[index]
        self.doing = (_COLLATE, index if self.auto_collation else [index])
        return self.collate_fn(data)


class _IterableFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset_iter = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn, self.drop_last = collate_fn, drop_last
        self.ended = False
        self.doing = (None, None)
        self.count = 0  # items taken from the iterator (named in errors)

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            self.doing = (_NEXT, self.count)
            self.count += 1
            return self.collate_fn(next(self.dataset_iter))
        data = []
        for _ in index:
            try:
                self.doing = (_NEXT, self.count)
                self.count += 1
                data.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(index)):
            raise StopIteration
        return self.collate_fn(data)


def make_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last):
    cls = _IterableFetcher if is_iterable else _MapFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)


# ---------------------------------------------------------------------------- seeding
def seed_worker(base_seed, worker_id):
    """Seed ember, ``random`` and NumPy's global generator for this worker."""
    import ember
    seed = (base_seed + worker_id) % (1 << 63)
    random.seed(seed)
    ember.manual_seed(seed)
    # NumPy's legacy seeding takes 32-bit words: derive them from (base_seed, worker_id)
    words = np.random.SeedSequence([base_seed & 0xFFFFFFFFFFFFFFFF, worker_id]).generate_state(4)
    np.random.seed(words)
    return seed


# ---------------------------------------------------------------------------- the loop
def worker_loop(is_iterable, dataset, task_queue, sock, auto_collation, collate_fn,
                drop_last, base_seed, init_fn, worker_id, num_workers, inherited_fds):
    """Entry point of a worker process (see NOTE [DataLoader worker protocol])."""
    global _worker_info
    from ...multiprocessing import _channel
    for fd in inherited_fds:  # other workers' channels, inherited through fork
        try:
            os.close(fd)
        except OSError:
            pass
    # Ctrl-C goes to the whole process group: the main process handles it and stops us
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent_pid = os.getppid()
    # one intra-op thread per worker, as torch's workers: N workers beside the main process
    # would otherwise each run a pool as wide as the machine
    from ..._threads import set_num_threads
    set_num_threads(1)
    seed = seed_worker(base_seed, worker_id)
    _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                              dataset=dataset)
    where = f"in DataLoader worker process {worker_id} (pid {os.getpid()})"
    fetcher = init_error = None
    try:
        if init_fn is not None:
            init_fn(worker_id)
        fetcher = make_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last)
    except Exception:
        init_error = ExceptionWrapper(sys.exc_info(), where)
    try:
        while True:
            try:
                task = task_queue.get(timeout=STATUS_CHECK_INTERVAL)
            except queue.Empty:
                if os.getppid() != parent_pid:
                    return  # the main process died: nobody will read our results
                continue
            if task is None:
                return
            if isinstance(task, ResumeIteration):
                if init_error is None:
                    fetcher = make_fetcher(is_iterable, dataset, auto_collation, collate_fn,
                                           drop_last)
                _channel.send(sock, (task, None))
                continue
            idx, index = task
            result = init_error if init_error is not None else \
                _fetch(fetcher, index, worker_id, where)
            _send_result(_channel, sock, idx, result, where)
            del result
    except (BrokenPipeError, ConnectionResetError, EOFError, OSError):
        return  # the main process closed our channel (shutdown)
    except KeyboardInterrupt:
        return


def _fetch(fetcher, index, worker_id, where):
    try:
        return fetcher.fetch(index)
    except StopIteration:
        return IterableStop(worker_id)
    except Exception:  # re-raised in the main process
        return ExceptionWrapper(sys.exc_info(), where + _doing(fetcher))


def _send_result(channel, sock, idx, result, where):
    try:
        channel.send(sock, (idx, result))
    except (BrokenPipeError, ConnectionResetError):
        raise
    except Exception:
        channel.send(sock, (idx, ExceptionWrapper(sys.exc_info(), where)))
