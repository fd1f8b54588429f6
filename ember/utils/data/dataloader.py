"""DataLoader: batching, shuffling and parallel loading over a dataset.

NOTE [DataLoader worker protocol]
Each worker process owns two channels:
* a task queue (``multiprocessing.Queue``; its feeder thread means the main process never
  blocks on a put) carrying ``(task_index, indices)``, ``ResumeIteration`` or ``None`` (stop);
* a unix socket pair carrying ``(task_index, result)`` back. Tensors in a result travel as
  shared-memory descriptors attached to the message (``SCM_RIGHTS``): the batch is allocated
  in shared memory by ``default_collate`` in the worker and mapped by the main process -- no
  tensor data goes through the socket.
Tasks go to workers round-robin (skipping workers whose iterable dataset is exhausted), at most
``prefetch_factor`` per worker. Each worker answers its own tasks in order, so the main process
gets batch k by reading the socket of the worker that got task k: batches come back in sampler
order without a reorder buffer.

NOTE [Worker death detection]
While waiting for a batch, the main process waits on the worker's socket *and* on every
worker's process sentinel (``multiprocessing.connection.wait``); a sentinel becomes readable
the moment its process ends. A worker that dies (SIGKILL, SIGSEGV, ``os._exit(n)``) is thus
reported at once, naming its pid and the signal or exit code -- no polling interval, no hang.
Workers watch their parent: an idle worker notices the main process is gone within
``STATUS_CHECK_INTERVAL`` (1 s); a busy one fails on its next send (broken pipe) and exits.

NOTE [Worker shutdown order]
1. Close the main side of every worker socket. A worker busy on a task fails on its next send
   and exits instead of finishing the tasks still queued for it; results in flight are dropped
   with the socket, which releases their shared memory (descriptors in flight are closed by
   the kernel). Forked workers close the main-side sockets they inherited, so the close is seen.
2. Put ``None`` on every task queue: idle workers return at once.
3. Join with a grace period, then SIGTERM, then SIGKILL: no worker outlives the iterator and
   none is left a zombie.
4. Close the task queues without joining their feeder threads (``cancel_join_thread``): a
   worker that died never drains its queue, and joining the feeder would hang.
5. With the ``file_system`` strategy, sweep segments orphaned by workers that died.
The shutdown runs when the iterator is exhausted (unless ``persistent_workers``), dropped
(``weakref.finalize``), on an error, and at interpreter exit.
"""
from __future__ import annotations

import collections
import itertools
import math
import multiprocessing
import multiprocessing.connection
import multiprocessing.context
import signal
import socket
import time
import warnings
import weakref
from typing import Generic

from . import _worker
from ._collate import default_collate, default_convert
from .dataset import IterableDataset, T_co
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info"]

get_worker_info = _worker.get_worker_info

# seconds workers get to exit by themselves at shutdown: after the epoch or an early break,
# and after a failure (timeout, a dead sibling) when they may well be stuck
_JOIN_GRACE = 2.0
_JOIN_GRACE_AFTER_ERROR = 0.25

_main_side_socks: weakref.WeakSet = weakref.WeakSet()  # see NOTE [Worker shutdown order]


class _InfiniteConstantSampler(Sampler):
    """Indices for an IterableDataset: the dataset ignores them, so yield None forever."""

    def __iter__(self):
        while True:
            yield None


class DataLoader(Generic[T_co]):  # NOTE [Generic data classes] in dataset.py
    """Iterate over ``dataset`` in batches, optionally with worker processes.

    Args:
        dataset: a map-style ``Dataset`` or an ``IterableDataset``.
        batch_size (int or None): samples per batch (default 1); None turns batching off.
        shuffle (bool): reshuffle at every epoch (map-style only).
        sampler, batch_sampler: custom index order / index batches.
        num_workers (int): worker processes (0: load in the main process).
        collate_fn: merges a list of samples into a batch (default ``default_collate``).
        pin_memory (bool): accepted for compatibility; a no-op on CPU (there is no
            page-locked memory to copy to without an accelerator).
        drop_last (bool): drop the last incomplete batch.
        timeout (float): seconds to wait for a batch from the workers (0: forever); raises
            RuntimeError when exceeded.
        worker_init_fn: called as ``fn(worker_id)`` in each worker after seeding.
        multiprocessing_context: 'fork', 'spawn', 'forkserver' or a context object.
        generator: ember.Generator for the random sampler and the workers' base seed.
        prefetch_factor (int): batches loaded in advance per worker (default 2 with workers).
        persistent_workers (bool): keep the workers between epochs.

    Each worker seeds ember, ``random`` and NumPy with ``base_seed + worker_id``, where
    ``base_seed`` is drawn from ``generator`` (or the default generator) for every iterator:
    the same seed gives the same batches. With workers, batches arrive in sampler order and
    tensors are passed through shared memory. Errors in workers are re-raised here with the
    worker id and the original traceback; a worker killed by a signal raises a RuntimeError
    naming its pid and the signal.

    Example:
        >>> import ember
        >>> from ember.utils.data import DataLoader, TensorDataset
        >>> ds = TensorDataset(ember.arange(5.0))
        >>> [b[0].tolist() for b in DataLoader(ds, batch_size=2)]
        [[0.0, 1.0], [2.0, 3.0], [4.0]]
    """

    _initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        # in_order=False lets torch hand out batches as workers finish them; ember's workers
        # always deliver in sampler order, which that setting permits
        self.in_order = in_order
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing.let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        if prefetch_factor is not None and (not isinstance(prefetch_factor, int)
                                            or prefetch_factor < 1):
            raise ValueError(f"prefetch_factor option should be a positive integer, got "
                             f"{prefetch_factor!r}")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.generator = generator
        self.persistent_workers = persistent_workers
        self._is_iterable = isinstance(dataset, IterableDataset)
        sampler, batch_sampler, batch_size, drop_last = self._check_sampling(
            dataset, batch_size, shuffle, sampler, batch_sampler, drop_last, generator)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert
        self.collate_fn = collate_fn
        self._iterator = None
        self._IterableDataset_len_called = None
        self._initialized = True

    def _check_sampling(self, dataset, batch_size, shuffle, sampler, batch_sampler, drop_last,
                        generator):
        if self._is_iterable:
            for name, value in (("shuffle", shuffle), ("sampler", sampler),
                                ("batch_sampler", batch_sampler)):
                if value not in (None, False):
                    raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                     f"{name} option, but got {name}={value!r}")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None:
            if self._is_iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        return sampler, batch_sampler, batch_size, drop_last

    @property
    def multiprocessing_context(self):
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context):
        if context is not None:
            if self.num_workers == 0:
                raise ValueError("multiprocessing_context can only be used with multi-process "
                                 "loading (num_workers > 0), but got num_workers="
                                 f"{self.num_workers}")
            if isinstance(context, str):
                methods = multiprocessing.get_all_start_methods()
                if context not in methods:
                    raise ValueError("multiprocessing_context option should specify a valid "
                                     f"start method in {methods!r}, but got "
                                     f"multiprocessing_context={context!r}")
                context = multiprocessing.get_context(context)
            if not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError("multiprocessing_context option should be a valid context "
                                "object or a string specifying the start method, but got "
                                f"multiprocessing_context={context!r}")
        self._multiprocessing_context = context

    def __setattr__(self, attr, val):
        if self._initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last",
                                          "dataset", "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{type(self).__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_iterator(self):
        if self.pin_memory:   # as torch on a machine without an accelerator, at each iterator
            warnings.warn("DataLoader: pin_memory=True has no effect: ember has no accelerator, "
                          "so no page-locked memory is used.", UserWarning, stacklevel=3)
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None or self._iterator._pool.done:  # first epoch, or a
                self._iterator = self._get_iterator()  # worker died: start afresh
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self):
        if self._is_iterable:
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                rounding = math.floor if self.drop_last else math.ceil
                length = rounding(length / self.batch_size)
            return length
        return len(self._index_sampler)


class _BaseDataLoaderIter:
    def __init__(self, loader):
        import ember
        self._dataset = loader.dataset
        self._is_iterable = loader._is_iterable
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._base_seed = int(ember.randint(0, 2**63 - 1, (), generator=loader.generator)
                              .item())
        self._reset_sampler(loader)

    def _reset_sampler(self, loader):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._len_called = loader._IterableDataset_len_called

    def __iter__(self):
        return self

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        if self._is_iterable and self._len_called is not None \
                and self._num_yielded > self._len_called:
            warnings.warn(f"Length of IterableDataset {self._dataset} was reported to be "
                          f"{self._len_called} (when accessing len(dataloader)), but "
                          f"{self._num_yielded} samples have been fetched.", stacklevel=2)
        return data

    def __len__(self):
        return len(self._index_sampler)

    def _next_data(self):
        raise NotImplementedError


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._fetcher = _worker.make_fetcher(self._is_iterable, self._dataset,
                                             self._auto_collation, self._collate_fn,
                                             self._drop_last)

    def _next_data(self):
        index = next(self._sampler_iter)  # StopIteration ends the epoch
        return self._fetcher.fetch(index)


class _WorkerPool:
    """The worker processes and their channels; ``shutdown`` is the finalizer's callback."""

    def __init__(self):
        self.workers, self.queues, self.socks = [], [], []
        self.done = False

    def shutdown(self, grace=_JOIN_GRACE):
        if self.done:
            return
        self.done = True
        # see NOTE [Worker shutdown order]
        for sock in self.socks:
            sock.close()
        for q in self.queues:
            try:
                q.put(None)
            except (OSError, ValueError):
                pass
        deadline = time.monotonic() + grace
        for w in self.workers:
            w.join(max(0.0, deadline - time.monotonic()))
        for w in self.workers:
            if w.exitcode is None:
                w.terminate()
                w.join(1.0)
            if w.exitcode is None:
                w.kill()
                w.join()
        for q in self.queues:
            q.cancel_join_thread()
            q.close()
        for w in self.workers:
            w.close()
        from ...multiprocessing import _shm
        if _shm._state.get("used_fs"):
            _shm.sweep()


def _resolve_context(context):
    return multiprocessing.get_context() if context is None else context


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._persistent_workers = loader.persistent_workers
        self._pool = pool = _WorkerPool()
        self._finalizer = weakref.finalize(self, pool.shutdown)
        ctx = _resolve_context(loader.multiprocessing_context)
        forks = ctx.get_start_method() == "fork"
        try:
            for i in range(self._num_workers):
                mine, theirs = socket.socketpair()
                _main_side_socks.add(mine)
                task_queue = ctx.Queue()
                inherited = [s.fileno() for s in _main_side_socks if s.fileno() >= 0] \
                    if forks else []
                w = ctx.Process(
                    target=_worker.worker_loop, daemon=True,
                    args=(self._is_iterable, self._dataset, task_queue, theirs,
                          self._auto_collation, self._collate_fn, self._drop_last,
                          self._base_seed, loader.worker_init_fn, i, self._num_workers,
                          inherited))
                pool.socks.append(mine)
                pool.queues.append(task_queue)
                w.start()
                pool.workers.append(w)
                theirs.close()
        except BaseException:
            self._shutdown_workers()
            raise
        self._start_epoch()

    def _start_epoch(self):
        self._send_idx = 0
        self._outstanding = collections.deque()  # (task index, worker id), in task order
        self._active = [True] * self._num_workers
        self._next_worker = itertools.cycle(range(self._num_workers))
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _reset(self, loader):
        """Persistent workers: start a new epoch with the same processes."""
        for _, wid in self._outstanding:  # results of the previous epoch nobody will read
            self._get_data(wid)
        self._reset_sampler(loader)
        if self._is_iterable:  # every worker restarts its dataset iterator
            for q in self._pool.queues:
                q.put(_worker.ResumeIteration())
            for wid in range(self._num_workers):
                self._get_data(wid)
        self._start_epoch()

    def _try_put_index(self):
        if len(self._outstanding) >= self._prefetch_factor * self._num_workers:
            return
        for _ in range(self._num_workers):
            wid = next(self._next_worker)
            if self._active[wid]:
                break
        else:
            return  # every iterable worker is exhausted
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        self._pool.queues[wid].put((self._send_idx, index))
        self._outstanding.append((self._send_idx, wid))
        self._send_idx += 1

    def _next_data(self):
        while True:
            if not self._outstanding:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            _, wid = self._outstanding.popleft()
            _, result = self._get_data(wid)
            if isinstance(result, _worker.IterableStop):
                self._active[wid] = False
                self._try_put_index()
                continue
            self._try_put_index()
            if isinstance(result, _worker.ExceptionWrapper):
                result.reraise()
            return result

    def _get_data(self, wid):
        """The next message of worker ``wid``; see NOTE [Worker death detection]."""
        from ...multiprocessing import _channel
        if self._pool.done:
            raise RuntimeError("DataLoader: the workers were shut down after an error")
        sock = self._pool.socks[wid]
        sentinels = {w.sentinel: i for i, w in enumerate(self._pool.workers)}
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready = multiprocessing.connection.wait([sock, *sentinels], timeout=wait)
            if sock in ready:
                try:
                    return _channel.recv(sock)
                except (EOFError, ConnectionResetError):
                    self._worker_died(wid)
            for s in ready:
                if s in sentinels:
                    self._worker_died(sentinels[s])
            if not ready:
                self._pool.shutdown(_JOIN_GRACE_AFTER_ERROR)
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds "
                                   f"waiting for a batch from worker {wid}. Increase timeout= "
                                   "or make __getitem__ faster.")

    def _worker_died(self, wid):
        w = self._pool.workers[wid]
        w.join(1.0)  # the sentinel fires as the process exits; reap it for its exit code
        pid, code = w.pid, w.exitcode
        self._pool.shutdown(_JOIN_GRACE_AFTER_ERROR)
        if code is not None and code < 0:
            raise RuntimeError(f"DataLoader worker (pid {pid}) is killed by signal: "
                               f"{_describe_signal(-code)}. {_signal_hint(-code)}") from None
        if code is not None:
            raise RuntimeError(f"DataLoader worker (pid {pid}) exited unexpectedly with exit "
                               f"code {code}. A worker should only stop when the DataLoader "
                               "tells it to; look for sys.exit/os._exit in the dataset or "
                               "collate_fn.") from None
        raise RuntimeError(f"DataLoader worker (pid {pid}) exited unexpectedly: its channel "
                           "closed.") from None

    def _shutdown_workers(self):
        self._finalizer()


def _describe_signal(signum):
    try:
        return f"{signal.strsignal(signum)} ({signal.Signals(signum).name})"
    except ValueError:
        return f"signal {signum}"


def _signal_hint(signum):
    if signum == signal.SIGBUS:
        return ("This might be caused by insufficient shared memory (shm): enlarge /dev/shm or "
                "use fewer workers.")
    if signum == signal.SIGKILL:
        return "It was killed from outside (the OOM killer, a user or a job scheduler)."
    if signum == signal.SIGSEGV:
        return "It crashed in native code called by the dataset or collate_fn."
    return "See the worker's output above for details."
