"""ProcessGroup on an MPI communicator: the handshake, timeouts and async Work.

NOTE [Collective handshake]
Before any data moves, every rank of the group sends every other rank a small record of the
collective it is entering (sequence number, op, dtype, element count, root, reduce op) and
receives theirs, with non-blocking point-to-point messages on a duplicate of the group's
communicator. This buys three things MPI alone does not give:
  * mismatched calls (different ops, shapes or dtypes on different ranks) raise a clear
    RuntimeError on every rank (each rank holds every record, so all decide alike) instead of
    truncating or overrunning a buffer;
  * a collective that some rank never joins raises after the group's timeout, naming the op
    and exactly the ranks whose record did not arrive;
  * waiting for peers is a loop of MPI_Test calls that spins for SPIN_S and then sleeps in
    growing steps (at most 1 ms), so a rank blocked on a slow peer does not burn a core.
Once the handshake is through, every rank has entered the collective, so the data phase is a
plain blocking MPI wait (``complete``): mpi4py releases the GIL for its whole duration (other
threads, e.g. backward while DistributedDataParallel's buckets travel, run meanwhile) and MPICH
drives progress at full speed (testing in a Python loop was 2-4x slower for 1 MB messages).
The cost is one small message per peer (a few microseconds on shared memory).
After a timeout the group is unusable (requests may still be pending): later calls raise.
"""
from __future__ import annotations

import enum
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import timedelta

import numpy as np

SPIN_S = 2e-3  # waiting for peers to arrive: busy-test this long, then sleep
_TAG_META = 7001
_OPS = ["barrier", "all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor",
        "gather", "scatter", "reduce_scatter", "reduce_scatter_tensor", "all_to_all",
        "all_to_all_single", "send", "recv", "all_gather_object", "broadcast_object_list",
        "gather_object", "scatter_object_list", "monitored_barrier", "new_group",
        "DistributedDataParallel gradient all_reduce", "DistributedDataParallel join",
        "DistributedDataParallel unused-parameter map"]
_OP_ID = {name: i + 1 for i, name in enumerate(_OPS)}


class DistError(RuntimeError):
    """Base of ember.distributed's errors (a RuntimeError, as in PyTorch)."""


class DistBackendError(DistError):
    """A collective failed or timed out."""


class DistNetworkError(DistError):
    pass


class DistStoreError(DistError):
    pass


class ReduceOp(enum.Enum):
    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"
    PREMUL_SUM = "premul_sum"
    UNUSED = "unused"


ReduceOp.RedOpType = ReduceOp  # type: ignore[attr-defined]  (torch spells the type so)
_REDOP_ID = {op: i for i, op in enumerate(ReduceOp)}


def as_timeout(timeout) -> float:
    if timeout is None:
        return 1800.0  # PyTorch's default for CPU process groups: 30 minutes
    if isinstance(timeout, timedelta):
        return timeout.total_seconds()
    return float(timeout)


class Work:
    """The handle an ``async_op=True`` collective returns."""

    def __init__(self, future: Future, outputs=None):
        self._future = future
        self._outputs = outputs

    def wait(self, timeout=None) -> bool:
        """Block until the operation finished; re-raises its error. True on success."""
        self._future.result(None if timeout is None else as_timeout(timeout))
        return True

    def is_completed(self) -> bool:
        return self._future.done()

    def is_success(self) -> bool:
        return self._future.done() and self._future.exception() is None

    def exception(self):
        return self._future.exception() if self._future.done() else None

    def result(self):
        self.wait()
        return list(self._outputs or [])

    def get_future(self):
        return self._future

    def synchronize(self):
        self.wait()


def done_work(outputs=None) -> Work:
    f: Future = Future()
    f.set_result(None)
    return Work(f, outputs)


class ProcessGroup:
    """A group of ranks bound to an MPI communicator.

    ``ranks`` are the global ranks of the members, in group-rank order.
    """

    def __init__(self, comm, ranks, backend, timeout, name=""):
        self.comm = comm
        self.ctl = comm.Dup()            # handshake traffic never meets user send/recv
        self.ranks = list(ranks)
        self.backend = backend
        self.timeout = as_timeout(timeout)
        self.group_name = name
        self._seq = 0
        self._lock = threading.RLock()
        self._executor: ThreadPoolExecutor | None = None
        self._pending: list[Future] = []
        self.broken: str | None = None
        self._stranded: list = []       # buffers of requests left pending by a timeout

    # ------------------------------------------------------------------ identity
    def rank(self) -> int:
        return self.comm.Get_rank()

    def size(self) -> int:
        return self.comm.Get_size()

    def name(self) -> str:
        return self.backend

    def describe(self) -> str:
        if self.group_name == "default_pg":
            return "the default group"
        return f"group {self.group_name or '?'} (global ranks {self.ranks})"

    def dup(self, name) -> ProcessGroup:
        return ProcessGroup(self.comm.Dup(), self.ranks, self.backend, self.timeout, name)

    def free(self):
        if self._executor is not None:
            self._executor.shutdown(wait=True)
        for c in (self.ctl, self.comm):
            try:
                c.Free()
            except Exception:  # a broken group may refuse; the process is ending anyway
                pass

    # ------------------------------------------------------------------ running ops
    def run(self, fn, async_op: bool, outputs=None):
        """Run ``fn()`` now, or on the group's worker thread for ``async_op=True``.

        Work runs in call order: a blocking call first waits for pending async ones, because
        every rank must enter the group's collectives in the same order.
        """
        if not async_op:
            self.drain()
            with self._lock:
                fn()
            return None
        if self._executor is None:
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="ember-dist")
        fut = self._executor.submit(self._locked, fn)
        self._pending.append(fut)
        return Work(fut, outputs)

    def _locked(self, fn):
        with self._lock:
            fn()

    def drain(self):
        pending, self._pending = self._pending, []
        for f in pending:
            f.exception()  # wait; the error belongs to that op's Work

    # ------------------------------------------------------------------ handshake
    def handshake(self, op: str, dtype_id=0, count=0, root=-1, redop=None, timeout=None):
        """Exchange call records with every peer; returns an (size, 8) int64 array of them.

        See NOTE [Collective handshake].
        """
        if self.broken:
            raise DistBackendError(f"{op}: {self.describe()} is unusable after an earlier "
                                   f"failure ({self.broken}).")
        self._seq += 1
        me, n = self.rank(), self.size()
        rid = -1 if redop is None else _REDOP_ID[redop]
        mine = np.array([self._seq, _OP_ID[op], dtype_id, count, root, rid, 0, 0], np.int64)
        records = np.zeros((n, 8), np.int64)
        records[me] = mine
        if n == 1:
            return records
        peers = [p for p in range(n) if p != me]
        recvs = [self.ctl.Irecv(records[p], source=p, tag=_TAG_META) for p in peers]
        sends = [self.ctl.Isend(mine, dest=p, tag=_TAG_META) for p in peers]
        limit = self.timeout if timeout is None else timeout

        def missing_ranks():
            return [self.ranks[p] for p, r in zip(peers, recvs, strict=False) if not r.Test()]

        self.wait(recvs + sends, op, limit, missing_ranks, keep=(mine, records))
        self._check_records(op, records)
        return records

    def _check_records(self, op, records):
        ops = {int(r[1]) for r in records}
        seqs = {int(r[0]) for r in records}
        if len(ops) > 1 or len(seqs) > 1:
            calls = ", ".join(f"rank {self.ranks[i]}: {_OPS[int(r[1]) - 1]} #{int(r[0])}"
                              for i, r in enumerate(records))
            self.broken = "ranks called different collectives"
            raise RuntimeError(f"{op}: the ranks of {self.describe()} called different "
                               f"collectives ({calls}); every rank must make the same "
                               f"collective calls in the same order.")

    def check_same(self, op, records, fields=("dtype", "count", "root", "redop")):
        """RuntimeError naming the ranks when a field differs across ranks."""
        column = {"dtype": 2, "count": 3, "root": 4, "redop": 5}
        from .._dtype import ALL
        for field in fields:
            values = records[:, column[field]]
            if (values == values[0]).all():
                continue
            if field == "dtype":
                shown = [ALL[int(v)].name if v >= 0 else "?" for v in values]
            elif field == "redop":
                shown = [list(ReduceOp)[int(v)].name for v in values]
            else:
                shown = [int(v) for v in values]
            per_rank = ", ".join(f"rank {self.ranks[i]}: {v}" for i, v in enumerate(shown))
            what = {"count": "number of elements"}.get(field, field)
            raise RuntimeError(f"{op}: the {what} differs across ranks ({per_rank}); "
                               f"got different values, expected the same on every rank of "
                               f"{self.describe()}.")

    # ------------------------------------------------------------------ waiting
    def complete(self, reqs):
        """The data phase of a collective whose handshake is done: see NOTE [Collective
        handshake]."""
        from mpi4py import MPI
        MPI.Request.Waitall(reqs)

    def wait(self, reqs, op, limit, missing_ranks=None, keep=()):
        """Test ``reqs`` until all complete; DistBackendError after ``limit`` seconds."""
        from mpi4py import MPI
        start = time.perf_counter()
        delay = 0.0
        while not MPI.Request.Testall(reqs):
            now = time.perf_counter()
            if now - start > limit:
                self._timed_out(op, limit, missing_ranks, reqs, keep)
            if now - start > SPIN_S:
                delay = min(max(2 * delay, 5e-5), 1e-3)
                time.sleep(delay)

    def _timed_out(self, op, limit, missing_ranks, reqs, keep):
        missing = missing_ranks() if missing_ranks is not None else []
        self._stranded.append((reqs, keep))  # MPI may still write into these buffers
        span = timedelta(seconds=limit)
        if missing:
            who = (f"rank{'s' if len(missing) > 1 else ''} "
                   f"{', '.join(map(str, missing))} never joined it")
        else:
            who = "the peer did not post the matching send or receive"
        self.broken = f"{op} #{self._seq} timed out"
        raise DistBackendError(
            f"{op}: Timed out after {span} in collective #{self._seq} of {self.describe()}: "
            f"{who}. Check that every rank calls the same collectives, or raise the timeout "
            f"of init_process_group/new_group.")
