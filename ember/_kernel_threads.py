"""Run a nogil numba kernel over contiguous parts of its rows on several threads at once.

    from ember._kernel_threads import parallel_range
    parallel_range(lambda lo, hi: _k_gelu_fwd(x[lo:hi], out[lo:hi]), x.size, grain=1 << 15)

``parallel_range(fn, n, grain)`` calls ``fn(lo, hi)`` on contiguous parts of ``range(n)`` that
cover it exactly once, on the calling thread and on ember's kernel workers at once, and returns
when every part is done (an exception of any part is re-raised in the caller). ``fn``
must release the GIL for the parts to overlap (a ``nogil=True`` numba kernel does) and its parts
must write disjoint memory. Each part gets at least ``grain`` items, so small arrays run as one
call on the calling thread. Results must not depend on the split (elementwise or row-wise work,
or reductions over a fixed blocking): then they are the same for any thread count.

NOTE [Kernel threads]
OpenBLAS already runs every GEMM on all cores; ember's numba kernels (GELU, LayerNorm, the
attention softmax, cross-entropy, Adam) ran on the calling thread only, while torch runs such
kernels on all cores. numba's own ``parallel=True`` is not used: its OpenMP layer busy-waits
after each loop and so fights OpenBLAS's workers for the cores (NOTE [Kernel threading] in
ops/_kernels/conv.py), and its workqueue layer aborts the process when two threads launch
parallel kernels at once. This module instead keeps one sleeping Python thread per extra core
(``get_num_threads() - 1`` of them, started on first use); a part is handed over through a lock,
and a kernel that releases the GIL then runs beside the caller's part. Only one caller uses the
workers at a time: a call made while they are busy (another user thread, or a part that itself
calls parallel_range) runs serially on its own thread, so nothing waits on a pool that waits on
it. ``ember.set_num_threads(1)`` makes every call serial; the environment variable
EMBER_KERNEL_THREADS=N (read on first use) sets the default count for these kernels alone,
leaving BLAS as it is (EMBER_KERNEL_THREADS=1: the kernels run on the calling thread as before
this module; for A/B runs). After ``fork`` the child starts fresh workers on first use.

OpenBLAS's idle worker busy-waits for a while after each GEMM (its THREAD_TIMEOUT, 2^28 cycles
by default, ~0.1 s; numpy's scipy-openblas build spins without sched_yield), so a kernel worker
woken while it spins shares that core with it. Parts are therefore handed out in small chunks
(``_CHUNKS_PER_THREAD`` per thread) claimed by whichever thread is free: a worker that starts late
or runs slowly takes fewer chunks, and the caller never waits for more than the chunk a worker is
running. ember sets no OpenBLAS variable (OPENBLAS_THREAD_TIMEOUT, read when numpy loads OpenBLAS,
shortens the spinning; not measured on a quiet machine yet).

Measuring (a busy machine gives no usable figure: on 2026-11-26 at load 9-16 the second core was
never free): in one process, `python benchmarks/ab.py gpts "ember._threads._requested[0] = 1"
"ember._threads._requested[0] = None"`; per process, EMBER_KERNEL_THREADS=1 against the default.
"""
from __future__ import annotations

import _thread
import itertools
import os
import threading

from . import _spin, _threads

__all__ = ["parallel_range", "num_workers", "blas_parallel_range", "conv_scope"]


class _Task:
    """One parallel_range call: its chunks, claimed in order by whichever thread is free."""

    def __init__(self, fn, bounds):
        self.fn = fn
        self.bounds = bounds
        self.n_chunks = len(bounds) - 1
        self.claim = itertools.count()     # next() is atomic under the GIL
        self.finish = itertools.count()
        self.all_done = _thread.allocate_lock()
        self.all_done.acquire()            # released by whoever finishes the last chunk
        self.errors = []

    def work(self):
        """Run chunks until none is left unclaimed."""
        while True:
            i = next(self.claim)
            if i >= self.n_chunks:
                return
            try:
                self.fn(self.bounds[i], self.bounds[i + 1])
            except BaseException as exc:  # re-raised by the caller
                self.errors.append(exc)
            if next(self.finish) == self.n_chunks - 1:
                self.all_done.release()


class _Worker:
    """A daemon thread that sleeps on ``go`` and then helps with the current task. ``go``
    unlocked means a wake-up is pending: a worker still busy when woken looks at the current
    task again as soon as it loops back, so no wake-up is lost."""

    def __init__(self):
        self.go = _thread.allocate_lock()
        self.go.acquire()
        threading.Thread(target=self._loop, name="ember-kernel", daemon=True).start()

    def _loop(self):
        seen = _spin.POSTS[0]
        while True:
            # poll a while before sleeping: NOTE [Spinning kernel workers]
            if _spin_after[0] and _spin.wait(seen):
                self.go.acquire(blocking=False)  # the wake-up that goes with the post, if sent
            else:
                self.go.acquire()
            seen = _spin.POSTS[0]  # read before the task: a later post is seen next round
            task = _current[0]
            if task is not None:
                task.work()  # returns at once if the caller already took every chunk

    def wake(self):
        try:
            self.go.release()
        except RuntimeError:  # already released: a wake-up is pending
            pass


_workers: list[_Worker] = []
_current: list[_Task | None] = [None]
_busy = [_thread.allocate_lock()]  # held by the one caller currently using the workers
# whether the workers poll for the next task after this one (NOTE [Spinning kernel workers])
_spin_after = [False]

# NOTE [Spinning kernel workers]
# Waking a worker that sleeps on its lock costs 0.1-0.3 ms when its core has gone idle (the
# VM's vCPU halts; measured: a 0.4 ms kernel split over two threads took 270 us right after the
# previous call and 680 us after a 1 ms pause, longer than on one thread), and inside a
# convolution the kernel calls are 0.2-2 ms apart (a GEMM on the caller in between). So after a
# task posted inside a convolution scope (NOTE [Conv threads], where OpenBLAS runs one thread
# and nothing else wants the second core) a worker polls a counter for ~2 ms (ember/_spin.py,
# without the GIL) before it sleeps; the same split then took 314 us after a 1 ms pause. Each
# poll yields the core (sched_yield): on a busy machine a plain spin took the core the caller
# needed (a VGG-19 layer 13 -> 19 ms at load 3). Tasks posted elsewhere (EMBER_KERNEL_THREADS)
# do not poll: OpenBLAS's own worker may need that core for the next GEMM. (With OpenBLAS's jobs
# on ember's yielding workers, EMBER_BLAS_THREADS=ember, polling after every task was tried:
# MobileNetV2 with two kernel threads 1.10x the default's step time against 1.05x without the
# polling, ab.py paired, load ~1, 2026-11-26.) The caller bumps the counter after it has set
# `_current`, and still releases each worker's lock, so a worker that has stopped polling wakes
# as before; a wake-up left pending by a worker that saw the counter first only makes it look at
# `_current` once more.

# chunks per thread: a worker that starts late (woken on a busy core) finds the caller has
# taken the rest, instead of the caller waiting for a fixed half
_CHUNKS_PER_THREAD = 4


def _reset_after_fork():
    # the threads did not survive the fork; their locks may be in any state
    _workers.clear()
    _current[0] = None
    _busy[0] = _thread.allocate_lock()


os.register_at_fork(after_in_child=_reset_after_fork)


def _default_threads():
    env = os.environ.get("EMBER_KERNEL_THREADS", "").strip()
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            raise ValueError(f"EMBER_KERNEL_THREADS: expected a positive integer; got "
                             f"{env!r}.") from None
    # Off unless asked for: on a quiet machine (2026-11-26 05:46-05:51, table1.py per process,
    # two alternating reps) the pool at 2 threads LOST against 1 - GPT-S 0.74-0.77x torch vs
    # 0.83x, MobileNetV2 1.06-1.08x vs 1.19-1.21x - as a worker shares its core with the
    # OpenBLAS thread still spinning after the last GEMM. EMBER_KERNEL_THREADS=N or
    # ember.set_num_threads(N) turns it on.
    return 1


_default = [None]


def num_workers():
    """How many threads a parallel_range call may use (the caller included): the value of
    ``ember.set_num_threads`` if it was called, else EMBER_KERNEL_THREADS if set, else 1 (see
    `_default_threads`). Not ``numba.get_num_threads()``: that would launch numba's own thread
    pool."""
    requested = _threads._requested[0]
    if requested is not None:
        return requested
    if _scoped[0]:  # inside a large convolution with EMBER_CONV_THREADS: NOTE [Conv threads]
        return _scoped[0]
    if _default[0] is None:
        _default[0] = _default_threads()
    return _default[0]


def parallel_range(fn, n, grain):
    """Call ``fn(lo, hi)`` over contiguous parts covering ``range(n)``, concurrently; see the
    module docstring."""
    if n < 2 * grain:  # the common small case (a decoding step) decided first
        if n > 0:
            fn(0, n)
        return
    threads = num_workers()
    n_chunks = min(threads * _CHUNKS_PER_THREAD, n // max(1, grain))
    if threads < 2 or n_chunks < 2:
        if n > 0:
            fn(0, n)
        return
    busy = _busy[0]
    if not busy.acquire(blocking=False):
        fn(0, n)  # the workers serve another call: run here (never wait on them)
        return
    try:
        task = _Task(fn, [n * i // n_chunks for i in range(n_chunks + 1)])
        if len(_workers) < threads - 1:
            _spin.calibrate()
        while len(_workers) < threads - 1:
            _workers.append(_Worker())
        _current[0] = task
        _spin_after[0] = _scoped[0] > 1  # NOTE [Spinning kernel workers]
        _spin.POSTS[0] += 1  # after the task is in place
        for worker in _workers[:threads - 1]:
            worker.wake()
        task.work()
        task.all_done.acquire()  # the chunks other threads claimed are finished
        _current[0] = None
        if task.errors:
            raise task.errors[0]
    finally:
        busy.release()


# ---------------------------------------------------------------------------------------------
# Parts that call BLAS themselves (many small GEMMs, e.g. attention's per-head products).
#
# NOTE [Small GEMMs on the kernel threads]
# OpenBLAS threads each GEMM above ~262k multiply-adds; a batch of small ones (attention's
# (128 x 64) @ (64 x 128) per batch entry and head) then pays a two-thread hand-off per matrix,
# and on a busy core the caller waits for a descheduled OpenBLAS worker: measured (busy machine,
# min of 40) (8, 4, 128, 64) @ (.., 64, 128) in 1.52 ms on two OpenBLAS threads against 0.83 ms
# on one, and 32x256x256 GEMMs in 11.8 ms against 60 us. Such batches are instead split over the
# batch axis on the kernel threads with OpenBLAS set to one thread meanwhile (a 0.6 us pair of
# calls into numpy's OpenBLAS, found through threadpoolctl): each part is one thread's GEMMs.

_blas = [None]  # (get, set) of numpy's OpenBLAS thread count, or False when not found


def openblas_function(lib, base):
    """OpenBLAS's function ``base`` (e.g. "openblas_set_num_threads") in threadpoolctl's
    controller ``lib``, under the prefix and suffix its build gives symbols (scipy-openblas:
    scipy_...64_); None when the library has no such function."""
    for pre in ("", "scipy_"):
        for suf in ("", "64_", "_64"):
            if hasattr(lib.dynlib, pre + base + suf):
                return getattr(lib.dynlib, pre + base + suf)
    return None


def _openblas():
    if _blas[0] is None:
        _blas[0] = False
        try:
            import ctypes

            from threadpoolctl import ThreadpoolController
            for lib in ThreadpoolController().lib_controllers:
                if lib.internal_api != "openblas" or "numpy" not in lib.filepath:
                    continue
                set_ = openblas_function(lib, "openblas_set_num_threads")
                get = openblas_function(lib, "openblas_get_num_threads")
                if set_ is not None and get is not None:
                    set_.argtypes, get.restype = [ctypes.c_int], ctypes.c_int
                    _blas[0] = (get, set_)
        except Exception:  # no threadpoolctl, another BLAS: parts keep BLAS's threads
            _blas[0] = False
    return _blas[0]


def blas_parallel_range(fn, n, grain):
    """`parallel_range` for parts that call numpy's BLAS: while they run, OpenBLAS uses one
    thread per call (NOTE [Small GEMMs on the kernel threads]). One call with BLAS as it is
    when the range is too small to split or there is one kernel thread."""
    if n < 2 * grain or num_workers() < 2 or _busy[0].locked():
        fn(0, n)
        return
    funcs = _openblas()
    if not funcs:
        parallel_range(fn, n, grain)
        return
    get, set_ = funcs
    before = get()
    if before > 1:
        set_(1)
    try:
        parallel_range(fn, n, grain)
    finally:
        if before > 1:
            set_(before)


# NOTE [One BLAS thread for small GEMMs]
# OpenBLAS splits a GEMM over both cores once M*N*K passes its own threshold (~64^3), but below
# a few million multiply-adds the hand-off and the spin-wait cost more than the second core
# saves: the 3x256 MLP at batch 8 (GEMMs of 8x256x256) ran a step in 828 us on two threads and
# 510 us with OPENBLAS_NUM_THREADS=1 (torch 546 us), quiet machine, 2026-11-26; on a busy one a
# two-thread 32x256x256 product took 11.8 ms against 60 us on one. Linear's GEMMs in that range
# therefore run with OpenBLAS at one thread (set and restored around the call, ~0.8 us).
SMALL_GEMM = (1 << 18, 1 << 22)   # multiply-adds: OpenBLAS's own one-thread bound, our cap


def blas_threads_enter(n):
    """Set numpy's OpenBLAS to `n` threads; returns the count to restore with
    `blas_threads_exit` (0: nothing changed, or no OpenBLAS reachable)."""
    funcs = _blas[0] if _blas[0] is not None else _openblas()
    if not funcs:
        return 0
    get, set_ = funcs
    before = get()
    if before == n:
        return 0
    set_(n)
    return before


def blas_threads_exit(before):
    if before:
        _blas[0][1](before)


def small_gemm_enter(macs):
    """Lower numpy's OpenBLAS to one thread for a GEMM of `macs` multiply-adds in the small
    range; returns the count to restore with `small_gemm_exit` (0: nothing changed)."""
    if not SMALL_GEMM[0] < macs < SMALL_GEMM[1]:
        return 0
    return blas_threads_enter(1)


small_gemm_exit = blas_threads_exit


# NOTE [Conv threads]
# The kernel pool at two threads won VGG-19 and ResNet-50 in the quiet window only together with
# the convolutions' GEMMs split over it (split.py's split mode: +7 % and +3 % img/s), and lost
# GPT-S and MobileNetV2 (a pool worker shares its core with OpenBLAS's spinning thread after a
# Linear's GEMM). EMBER_CONV_THREADS=N (read once; default off) gives the pool and the split
# GEMMs to the convolution family alone: inside a convolution of at least CONV_MIN_MACS
# multiply-adds (EMBER_CONV_MIN_MACS; the GEMM work that pays for the hand-offs), and inside
# batch norm and pooling, `num_workers()` is N and `split.split_gemms()` is true; everywhere
# else (Linear, attention, GELU, the optimizer) nothing changes. Every convolution-family op
# runs with OpenBLAS at one thread while the switch is on, the small ones too (whole, on the
# caller): one two-thread GEMM, the stem's say, leaves OpenBLAS's worker spinning for ~0.1 s on
# the second core, where the next convolutions' kernel workers then get half of it (VGG-19, one
# process, `ab.py` paired, 18:35 UTC load 0.3-0.8: the switch with the stem left to OpenBLAS
# 0.83x the default, every convolution in the scope 1.07x). ember.set_num_threads() still
# decides for every op when it was called. A thread-count change is judged on a quiet machine:
#     EMBER_CONV_THREADS=2 python benchmarks/table1.py --only vgg19,resnet50 --no-inproc ...
# against the same command without it.
CONV_MIN_MACS = 1 << 24
_scoped = [0]               # kernel threads in force inside the current convolution-family op
_conv_threads = [None]      # EMBER_CONV_THREADS (0: off), read on first use


def env_positive_int(name):
    """The positive integer in environment variable ``name``, None when unset or blank; a
    ValueError naming the variable otherwise (the A/B switches' one parser)."""
    env = os.environ.get(name, "").strip()
    if not env:
        return None
    try:
        n = int(env)
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(f"{name}: expected a positive integer; got {env!r}.")
    return n


def _conv_setting():
    n = env_positive_int("EMBER_CONV_THREADS") or 0
    macs = os.environ.get("EMBER_CONV_MIN_MACS", "").strip()
    if macs:
        try:
            globals()["CONV_MIN_MACS"] = int(macs)
        except ValueError:
            raise ValueError(f"EMBER_CONV_MIN_MACS: expected an integer; got {macs!r}.") from None
    _conv_threads[0] = n if n >= 2 else 0
    return _conv_threads[0]


class _ConvScope:
    """Sets `_scoped` and numpy's OpenBLAS to one thread for the duration of a with-block, and
    restores both."""

    __slots__ = ("n", "before", "blas_before")

    def __init__(self, n):
        self.n = n

    def __enter__(self):
        self.before = _scoped[0]
        _scoped[0] = self.n
        self.blas_before = blas_threads_enter(1)

    def __exit__(self, *exc):
        blas_threads_exit(self.blas_before)
        _scoped[0] = self.before


class _NoScope:
    __slots__ = ()

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        pass


_NO_SCOPE = _NoScope()


def conv_scope(macs=None):
    """A context for one convolution-family op (NOTE [Conv threads]): the kernel pool of
    EMBER_CONV_THREADS threads and split GEMMs inside when the switch is on and ``macs`` (the
    op's multiply-adds; None for batch norm and pooling) reaches CONV_MIN_MACS; else a no-op."""
    n = _conv_threads[0]
    if n is None:
        n = _conv_setting()
    if not n or _threads._requested[0] is not None:
        return _NO_SCOPE
    if macs is not None and macs < CONV_MIN_MACS:
        return _ConvScope(1)  # no split, but no OpenBLAS worker woken either
    return _ConvScope(n)
