"""OpenBLAS's parallel regions run on ember's threads (opt-in: EMBER_BLAS_THREADS=ember).

NOTE [OpenBLAS threads callback]
numpy's OpenBLAS (the pthreads build of scipy-openblas) keeps each idle worker busy-waiting for
~0.1 s (2^28 cycles) after every threaded GEMM, without yielding, so any other thread of ember's
that runs in that time shares a core with it; setting OpenBLAS to one thread does not stop a spin
already under way. OpenBLAS >= 0.3.27 lets the application run its parallel regions instead:
`openblas_set_threads_callback_function(cb)` makes `exec_blas` (the entry of every threaded
level-3 and level-2 driver) call `cb(sync, dojob, numjobs, elsize, jobdata, dojob_data)`, and `cb`
must run `dojob(i, jobdata + i * elsize, dojob_data)` for every i < numjobs and return when all
are done. OpenBLAS's own workers are then never given work, so they never spin.

This module installs such a callback, compiled by numba (`@cfunc`, no Python objects, no GIL):
- Job 0 runs on the calling thread, jobs 1..n-1 on native worker threads that ember starts with
  pthread_create on first need (inside the callback: so there are always enough of them for the
  jobs asked for; after a fork the child starts its own). The jobs of one call must run at the
  same time: level-3 jobs hand packed panels to each other through flags, so one thread running
  two of them in turn would wait for itself forever.
- One call at a time: a second thread calling BLAS meanwhile waits on a lock (a futex) until the
  first call is done. The workers' job numbers index OpenBLAS's per-thread buffers, so two calls
  may not share them. (A job never calls back into exec_blas, so the lock cannot deadlock.)
- Idle policy (the point of all this): after a job a worker polls for the next call with
  sched_yield for `SPIN_US` microseconds (EMBER_BLAS_SPIN_US), then sleeps on a futex until the
  next call wakes it; the caller waits for the workers' jobs the same way. Every poll yields, so
  a thread that wants the core (a kernel worker, another process) gets it, unlike OpenBLAS's
  spin. 5 ms: waking a sleeping worker costs each GEMM after a gap (ab.py, load ~1.1, paired:
  ResNet-50 0.960x and VGG-19 0.983x the step time of a 0.1 ms poll; 20 ms no better).
- Job thread numbers: dojob's thread number picks OpenBLAS's per-thread buffer and status slot.
  The jobs take the top slots (below MAX_THREADS, from openblas_get_config): OpenBLAS's own
  worker i watches slot i, and one that is spinning (after an LU, or when the callback was
  installed during its 0.1 s spin) keeps spinning while it finds its slot marked busy - with
  jobs on slot 0, a stream of GEMMs kept it spinning indefinitely (a 4096x768x768 sgemm 1.8x
  slower).
- Workers count calls, wake-ups and sleeps in `STATE` (`stats()`: what the tests check).
- Two pools, not one: ember's kernel threads (_kernel_threads.py) stay separate Python threads.
  Their tasks are Python callables that need the GIL, so a worker serving both could be waiting
  for the GIL while a thread that holds it (some scipy wrappers call LAPACK without releasing
  it) waits inside BLAS for that worker's job: a deadlock. The two pools are never busy at once
  in a single-threaded program, and this pool's idle polling yields the core at every poll.
Not covered: LU factorisation (getrf) hands its jobs to OpenBLAS's pool directly
(exec_blas_async), so after an np.linalg.solve of a large matrix OpenBLAS's worker spins for
0.1 s as before (on its own slots, so it does not disturb the callback's calls).

Where it stands: opt-in (EMBER_BLAS_THREADS=ember, read at import; `enable()`
and `disable()` for tests and A/Bs). Linux on x86-64 and aarch64 only (futex numbers). The
callback is removed and the workers stopped at interpreter exit; the thread counts
(threadpoolctl, `ember.set_num_threads(1)`) still decide how many jobs OpenBLAS asks for.
The quiet A/B of 2026-11-26 (benchmarks/RESULTS.md, fourteenth session) kept it off by
default: no gain on a quiet machine (GPT-S, ResNet-50, GNMT-S, VGG-19 within the per-process
spread) and a slow mode on MobileNetV2 (87-89 ms against 72-76 ms in 3 of 5 processes); its
gain is on a busy machine (GNMT-S steps 3-7x faster under load), where nothing spins.
"""
from __future__ import annotations

import atexit
import ctypes
import os
import platform
import sys

import numba
import numpy as np
from llvmlite import binding as llvm_binding
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.core.extending import intrinsic

from . import _kernel_threads

__all__ = ["enable", "disable", "enabled", "stats", "SPIN_US"]

SPIN_US = 5000  # how long an idle worker (and a waiting caller) polls before it sleeps

# ---- the shared state: one int64 array, hot fields on their own cache lines -----------------
# Futex words are the low 32 bits of an int64 slot (x86-64 and aarch64 are little-endian).
_GEN = 0            # bumped by the caller after it has published a call (workers' futex)
_SLEEPERS = 1       # workers asleep on _GEN
_NEXT = 8           # claims: numjobs << 32 | next job number (0 between calls)
_DONE = 16          # worker jobs finished in the current call (the caller's futex)
_CALLER_SLEEPS = 17  # 1 while the caller sleeps on _DONE
_LOCK = 24          # callers' lock: 0 free, 1 held, 2 held with waiters (futex)
_DOJOB = 32         # the current call: dojob address, jobdata, element size, dojob_data
_JOBDATA = 33
_ELSIZE = 34
_DOJOB_DATA = 35
_SLOT0 = 36         # OpenBLAS thread slot of job 0 (the top slots: module note)
_WORKERS = 40       # worker threads started
_STOP = 41          # 1: workers exit when idle (interpreter exit)
_SPIN_NS = 42
_SYS_FUTEX = 43
_WORKER_FN = 44     # address of the workers' start routine
_SLOTS = 45         # OpenBLAS's MAX_THREADS (the least over the libraries)
_CALLS = 48         # statistics: threaded calls, jobs run by workers, futex waits
_JOBS = 49
_SLEEPS = 50
_SIGSET = 56        # 16 words of ones: every signal blocked in the workers
_TIDS = 72          # pthread_t of each worker
_MAX_WORKERS = 1024

STATE = np.zeros(_TIDS + _MAX_WORKERS, np.int64)
_SYMBOL = "ember_blas_threads_state"
# before the cfuncs below are compiled or loaded from the cache: they link against the symbol
llvm_binding.add_symbol(_SYMBOL, STATE.ctypes.data)
_FUTEX_WAIT, _FUTEX_WAKE = 128, 129  # the _PRIVATE forms
_SYS_FUTEX_NUMBER = {"x86_64": 202, "aarch64": 98}.get(platform.machine())
if not sys.platform.startswith("linux") or _SYS_FUTEX_NUMBER is None:
    # (the cfuncs below link against Linux's futex and pthread functions)
    raise ImportError("EMBER_BLAS_THREADS=ember (ember._blas_threads) needs Linux on x86-64 or "
                      f"aarch64; this is {sys.platform} on {platform.machine()}.")

# ---- intrinsics: atomics, futex, clock, indirect calls ---------------------------------------
_i8p = ir.IntType(8).as_pointer()
_i32 = ir.IntType(32)
_i64 = ir.IntType(64)


def _slot(builder, base, index):
    """Pointer to the int64 at address base + 8 * index."""
    addr = builder.add(base, builder.mul(index, ir.Constant(_i64, 8)))
    return builder.inttoptr(addr, _i64.as_pointer())


@intrinsic
def _state(typingctx):
    """The address of STATE, through a symbol registered with llvmlite (add_symbol) before the
    first call: a constant address would be baked into the disk cache."""

    def codegen(context, builder, signature, args):
        module = builder.module
        gv = module.globals.get(_SYMBOL)
        if gv is None:
            gv = ir.GlobalVariable(module, ir.IntType(8), _SYMBOL)
            gv.linkage = "external"
        return builder.ptrtoint(gv, _i64)

    return types.int64(), codegen


@intrinsic
def _load(typingctx, base, index):
    def codegen(context, builder, signature, args):
        return builder.load_atomic(_slot(builder, *args), "acquire", 8)

    return types.int64(types.int64, types.int64), codegen


@intrinsic
def _store(typingctx, base, index, value):
    def codegen(context, builder, signature, args):
        builder.store_atomic(args[2], _slot(builder, args[0], args[1]), "release", 8)
        return context.get_dummy_value()

    return types.void(types.int64, types.int64, types.int64), codegen


@intrinsic
def _add(typingctx, base, index, value):
    """Atomic fetch-and-add (sequentially consistent); returns the old value."""

    def codegen(context, builder, signature, args):
        return builder.atomic_rmw("add", _slot(builder, args[0], args[1]), args[2], "seq_cst")

    return types.int64(types.int64, types.int64, types.int64), codegen


@intrinsic
def _swap(typingctx, base, index, value):
    def codegen(context, builder, signature, args):
        return builder.atomic_rmw("xchg", _slot(builder, args[0], args[1]), args[2], "seq_cst")

    return types.int64(types.int64, types.int64, types.int64), codegen


@intrinsic
def _cas(typingctx, base, index, expected, value):
    """Compare-and-swap; returns the value found (== expected: swapped)."""

    def codegen(context, builder, signature, args):
        pair = builder.cmpxchg(_slot(builder, args[0], args[1]), args[2], args[3],
                               "seq_cst", "seq_cst")
        return builder.extract_value(pair, 0)

    return types.int64(types.int64, types.int64, types.int64, types.int64), codegen


def _declare(builder, name, ret, params, var_arg=False):
    fnty = ir.FunctionType(ret, params, var_arg=var_arg)
    return cgutils.get_or_insert_function(builder.module, fnty, name)


@intrinsic
def _futex(typingctx, sysno, base, index, op, value):
    """syscall(SYS_futex, &slot, op, value, NULL): wait while the slot's low 32 bits equal
    value, or wake up to value waiters."""

    def codegen(context, builder, signature, args):
        fn = _declare(builder, "syscall", _i64, [_i64], var_arg=True)
        addr = builder.ptrtoint(_slot(builder, args[1], args[2]), _i64)
        value = builder.trunc(args[4], _i32)
        builder.call(fn, [args[0], addr, builder.trunc(args[3], _i32), value,
                          ir.Constant(_i64, 0)])
        return context.get_dummy_value()

    return types.void(types.int64, types.int64, types.int64, types.int64, types.int64), codegen


@intrinsic
def _yield(typingctx):
    def codegen(context, builder, signature, args):
        builder.call(_declare(builder, "sched_yield", _i32, []), [])
        return context.get_dummy_value()

    return types.void(), codegen


@intrinsic
def _now_ns(typingctx):
    """clock_gettime(CLOCK_MONOTONIC) in nanoseconds."""

    def codegen(context, builder, signature, args):
        ts = cgutils.alloca_once(builder, ir.ArrayType(_i64, 2))
        fn = _declare(builder, "clock_gettime", _i32, [_i32, _i8p])
        builder.call(fn, [ir.Constant(_i32, 1), builder.bitcast(ts, _i8p)])
        sec = builder.load(builder.gep(ts, [ir.Constant(_i32, 0), ir.Constant(_i32, 0)]))
        nsec = builder.load(builder.gep(ts, [ir.Constant(_i32, 0), ir.Constant(_i32, 1)]))
        return builder.add(builder.mul(sec, ir.Constant(_i64, 1_000_000_000)), nsec)

    return types.int64(), codegen


@intrinsic
def _run_job(typingctx, dojob, thread_num, jobdata, dojob_data):
    """dojob(thread_num, jobdata, dojob_data) through its address (void (*)(int, void *, int))."""

    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.VoidType(), [_i32, _i8p, _i32])
        fn = builder.inttoptr(args[0], fnty.as_pointer())
        builder.call(fn, [builder.trunc(args[1], _i32), builder.inttoptr(args[2], _i8p),
                          builder.trunc(args[3], _i32)])
        return context.get_dummy_value()

    return types.void(types.int64, types.int64, types.int64, types.int64), codegen


@intrinsic
def _start_thread(typingctx, tid_addr, routine, arg):
    """pthread_create(tid_addr, NULL, routine, arg); returns its error code."""

    def codegen(context, builder, signature, args):
        fn = _declare(builder, "pthread_create", _i32, [_i8p, _i8p, _i8p, _i8p])
        rc = builder.call(fn, [builder.inttoptr(args[0], _i8p), ir.Constant(_i8p, None),
                               builder.inttoptr(args[1], _i8p), builder.inttoptr(args[2], _i8p)])
        return builder.sext(rc, _i64)

    return types.int64(types.int64, types.int64, types.int64), codegen


@intrinsic
def _join_thread(typingctx, tid):
    def codegen(context, builder, signature, args):
        fn = _declare(builder, "pthread_join", _i32, [_i64, _i8p])
        builder.call(fn, [args[0], ir.Constant(_i8p, None)])
        return context.get_dummy_value()

    return types.void(types.int64), codegen


@intrinsic
def _block_signals(typingctx, sigset):
    """pthread_sigmask(SIG_BLOCK, sigset, NULL): signals go to Python's threads, not here."""

    def codegen(context, builder, signature, args):
        fn = _declare(builder, "pthread_sigmask", _i32, [_i32, _i8p, _i8p])
        builder.call(fn, [ir.Constant(_i32, 0), builder.inttoptr(args[0], _i8p),
                          ir.Constant(_i8p, None)])
        return context.get_dummy_value()

    return types.void(types.int64), codegen


# ---- the native side ---------------------------------------------------------------------------

@numba.njit(nogil=True, cache=True)
def _wait_change(s, index, seen, sleepers, spin_ns):
    """Return once slot `index` differs from `seen` (or _STOP is set): poll with sched_yield for
    spin_ns, then sleep on the slot's futex; `sleepers` (a slot index) counts the sleepers so
    that the writer wakes them only when there are any."""
    if _load(s, index) != seen:
        return
    start = _now_ns()
    while _now_ns() - start < spin_ns:
        _yield()
        if _load(s, index) != seen:
            return
    sysno = _load(s, _SYS_FUTEX)
    _add(s, sleepers, 1)
    while _load(s, index) == seen and _load(s, _STOP) == 0:
        _add(s, _SLEEPS, 1)
        _futex(sysno, s, index, _FUTEX_WAIT, seen & 0xFFFFFFFF)
    _add(s, sleepers, -1)


@numba.njit(nogil=True, cache=True)
def _worker_loop(s):
    """A worker: claim jobs of the current call until none is left, then wait for the next."""
    _block_signals(s + 8 * _SIGSET)
    while True:
        seen = _load(s, _GEN)
        claim = _add(s, _NEXT, 1)  # the job count comes with the claim: a stale one cannot pass
        j = claim & 0xFFFFFFFF
        if j < claim >> 32:
            _run_job(_load(s, _DOJOB), _load(s, _SLOT0) + j,
                     _load(s, _JOBDATA) + j * _load(s, _ELSIZE), _load(s, _DOJOB_DATA))
            _add(s, _JOBS, 1)
            _add(s, _DONE, 1)
            if _load(s, _CALLER_SLEEPS) != 0:
                _futex(_load(s, _SYS_FUTEX), s, _DONE, _FUTEX_WAKE, 1)
            continue
        if _load(s, _STOP) != 0:
            return
        _wait_change(s, _GEN, seen, _SLEEPERS, _load(s, _SPIN_NS))


@numba.cfunc(types.int64(types.int64), nogil=True, cache=True)
def _worker_main(s):
    """pthread start routine (void *(*)(void *)): the state's address in, NULL out."""
    _worker_loop(s)
    return 0


@numba.njit(nogil=True, cache=True)
def _lock(s):
    """The callers' futex lock (0 free, 1 held, 2 held and contended)."""
    c = _cas(s, _LOCK, 0, 1)
    if c == 0:
        return
    if c != 2:
        c = _swap(s, _LOCK, 2)
    while c != 0:
        _futex(_load(s, _SYS_FUTEX), s, _LOCK, _FUTEX_WAIT, 2)
        c = _swap(s, _LOCK, 2)


@numba.njit(nogil=True, cache=True)
def _unlock(s):
    if _swap(s, _LOCK, 0) == 2:
        _futex(_load(s, _SYS_FUTEX), s, _LOCK, _FUTEX_WAKE, 1)


@numba.njit(nogil=True, cache=True)
def _run_call(s, dojob, numjobs, elsize, jobdata, dojob_data):
    """Run the numjobs jobs of one exec_blas call at the same time (module note)."""
    if numjobs <= 1:
        if numjobs == 1:
            _run_job(dojob, max(0, _load(s, _SLOTS) - 1), jobdata, dojob_data)
        return
    _lock(s)
    # (should the system refuse a thread, a level-3 call would wait for its missing job forever;
    # OpenBLAS's own pool has the same dependency on pthread_create)
    while _load(s, _WORKERS) < numjobs - 1 and _load(s, _WORKERS) < _MAX_WORKERS:
        w = _load(s, _WORKERS)
        if _start_thread(s + 8 * (_TIDS + w), _load(s, _WORKER_FN), s) != 0:
            break
        _store(s, _WORKERS, w + 1)
    _store(s, _DOJOB, dojob)
    # the top thread slots, which OpenBLAS's own workers do not watch (module note)
    slot0 = max(0, _load(s, _SLOTS) - numjobs)
    _store(s, _SLOT0, slot0)
    _store(s, _JOBDATA, jobdata)
    _store(s, _ELSIZE, elsize)
    _store(s, _DOJOB_DATA, dojob_data)
    _store(s, _DONE, 0)
    _store(s, _NEXT, (numjobs << 32) | 1)  # opens the call; a claim sees the fields above
    _add(s, _CALLS, 1)
    _add(s, _GEN, 1)
    if _load(s, _SLEEPERS) != 0:
        _futex(_load(s, _SYS_FUTEX), s, _GEN, _FUTEX_WAKE, 0x7FFFFFFF)
    _run_job(dojob, slot0, jobdata, dojob_data)
    target = numjobs - 1
    done = _load(s, _DONE)
    while done != target:
        _wait_change(s, _DONE, done, _CALLER_SLEEPS, _load(s, _SPIN_NS))
        done = _load(s, _DONE)
    _store(s, _NEXT, 0)
    _unlock(s)


@numba.cfunc(types.void(types.int32, types.int64, types.int32, types.uint64, types.int64,
                        types.int32), nogil=True, cache=True)
def _callback(sync, dojob, numjobs, elsize, jobdata, dojob_data):
    """openblas_threads_callback: void (*)(int, dojob, int, size_t, void *, int)."""
    _run_call(_state(), dojob, numjobs, elsize, jobdata, dojob_data)


@numba.njit(nogil=True, cache=True)
def _stop_workers(s):
    """Interpreter exit: wait out a call in flight, then let every worker return and join it.
    The lock stays held: a thread that entered the callback just before it was removed waits
    there (a daemon thread at exit) instead of starting a worker during finalisation."""
    _lock(s)
    _store(s, _STOP, 1)
    _add(s, _GEN, 1)
    _futex(_load(s, _SYS_FUTEX), s, _GEN, _FUTEX_WAKE, 0x7FFFFFFF)
    for w in range(_load(s, _WORKERS)):
        _join_thread(_load(s, _TIDS + w))


# ---- the Python side ---------------------------------------------------------------------------

_setters = []       # ctypes functions openblas_set_threads_callback_function of each OpenBLAS
_installed = [False]
_prepared = [False]


def _find_setters():
    """(callback setter, MAX_THREADS) of every OpenBLAS loaded (numpy's, scipy's) that has a
    setter and says its MAX_THREADS in its config string, through threadpoolctl."""
    from threadpoolctl import ThreadpoolController
    found = []
    for lib in ThreadpoolController().lib_controllers:
        if lib.internal_api != "openblas" or lib.threading_layer != "pthreads":
            continue
        setter = _kernel_threads.openblas_function(lib, "openblas_set_threads_callback_function")
        config = _kernel_threads.openblas_function(lib, "openblas_get_config")
        if setter is None or config is None:
            continue
        config.restype = ctypes.c_char_p
        words = [w for w in config().decode(errors="replace").split()
                 if w.startswith("MAX_THREADS=")]
        if words and words[0][12:].isdigit():
            setter.argtypes, setter.restype = [ctypes.c_void_p], None
            found.append((setter, int(words[0][12:])))
    return found


def _prepare():
    if _prepared[0]:
        return
    STATE[_SYS_FUTEX] = _SYS_FUTEX_NUMBER
    STATE[_SIGSET:_SIGSET + 16] = -1
    STATE[_WORKER_FN] = _worker_main.address
    _prepared[0] = True


def enable(spin_us=None):
    """Install the callback in every OpenBLAS found; False when none offers it (older OpenBLAS,
    an OpenMP build, another BLAS). ``spin_us`` sets how long idle
    threads poll before sleeping (also when already installed: for A/Bs)."""
    if spin_us is not None:
        STATE[_SPIN_NS] = int(spin_us * 1000)
    elif not STATE[_SPIN_NS]:
        STATE[_SPIN_NS] = SPIN_US * 1000
    if _installed[0]:
        return True
    import scipy.linalg  # noqa: F401  (loads scipy's OpenBLAS, so that it is found too)
    found = _find_setters()
    if not found:
        return False
    _prepare()
    STATE[_SLOTS] = min(slots for _, slots in found)
    _setters[:] = [setter for setter, _ in found]
    for setter in _setters:
        setter(_callback.address)
    _installed[0] = True
    return True


def disable():
    """Give the parallel regions back to OpenBLAS's own threads (the workers stay, asleep)."""
    if _installed[0]:
        for setter in _setters:
            setter(None)
        _installed[0] = False


def enabled():
    return _installed[0]


def stats():
    """(threaded calls, jobs run by workers, worker threads, futex waits) so far."""
    return (int(STATE[_CALLS]), int(STATE[_JOBS]), int(STATE[_WORKERS]), int(STATE[_SLEEPS]))


def _after_fork_in_child():
    # the workers did not survive the fork; a call in flight in another thread left its lock
    STATE[_WORKERS] = 0
    STATE[_LOCK] = 0
    STATE[_SLEEPERS] = 0
    STATE[_CALLER_SLEEPS] = 0
    STATE[_NEXT] = 0


def _at_exit():
    disable()
    if _prepared[0]:
        _stop_workers(STATE.ctypes.data)


os.register_at_fork(after_in_child=_after_fork_in_child)
atexit.register(_at_exit)


def _from_environment():
    value = os.environ.get("EMBER_BLAS_THREADS", "").strip().lower()
    if value != "ember":
        raise ValueError(f"EMBER_BLAS_THREADS: expected 'ember' or 'openblas'; got {value!r}.")
    spin = os.environ.get("EMBER_BLAS_SPIN_US", "").strip()
    try:
        spin_us = float(spin) if spin else None
    except ValueError:
        spin_us = -1.0
    if spin_us is not None and not 0 <= spin_us < 1e6:
        raise ValueError(f"EMBER_BLAS_SPIN_US: expected microseconds in [0, 1e6); got {spin!r}.")
    enable(spin_us)
