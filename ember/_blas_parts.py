"""Run a kernel's parts on numpy's OpenBLAS worker threads (NOTE [Kernels on OpenBLAS's threads]).

    from ember import _blas_parts
    if _blas_parts.enabled():
        args = _blas_parts.arguments(n_values)  # int64 array; args[1:] are the kernel's
        _blas_parts.run(part.address, n_rows, args.ctypes.data, _blas_parts.threads())

NOTE [Kernels on OpenBLAS's threads]
OpenBLAS's idle worker spins for ~0.1 s after each threaded GEMM (NOTE [Kernel threads] in
_kernel_threads.py), so a thread pool of ember's own shares its core with that spinner: every
scheme that ran ember's kernels on threads of its own beside OpenBLAS's GEMMs lost on a quiet
machine, and a training step with any GEMM keeps the worker spinning nearly all the time. Here
the parts go to that worker instead. numpy's OpenBLAS exports `blas_level1_thread`, the helper
its level-1 routines use to cut a vector over its threads: it cuts range(n_rows) into one part
per thread, runs one part on the calling thread and hands the others to its workers (at once
when they are spinning), and returns when all are done. The function it calls is a numba cfunc
with OpenBLAS's legacy signature (m, n, k, alpha, a, lda, b, ldb, c, ldc, sb): m is the part's
number of rows, `a` its first row shifted left by an amount that depends on the build (measured
once by a probe part), and `c` the address of an int64 array: the shift in slot 0, the kernel's
arguments (array addresses, sizes) after it. Results must not depend on the split: each part
computes whole rows exactly as the serial kernel does.
`run_ranges(fn, n)` is the same for a Python callable fn(lo, hi) that calls a nogil kernel
(NOTE [Python parts on OpenBLAS's threads]).
Each user asks `on(name)`: EMBER_BLAS_PARTS=1 turns every user on, =0 every one off (read on
first use and again after each `set_enabled`, which forces either, for tests and A/Bs); unset,
the users in DEFAULT_ON - those a whole-step A/B on a quiet machine showed to win - are on and
the rest off.
When the library has no such symbol, or the probe does not see the parts it expects, it stays
off and callers run their serial kernels.
"""
from __future__ import annotations

import ctypes
import os
import threading
from time import perf_counter

import numba
import numpy as np
from numba import types
from numba.core.extending import intrinsic

from ._onepool import _call13

__all__ = ["PART", "enabled", "on", "set_enabled", "arguments", "threads", "run", "run_ranges",
           "parallel_range", "as_ptr", "late_solo", "note_hand_off"]

# the legacy signature OpenBLAS calls a part with; alpha (a float register) is not used
# (pointers as 64-bit integers: the same registers and stack slots)
PART = types.void(types.int64, types.int64, types.int64, types.float64, types.int64,
                  types.int64, types.int64, types.int64, types.int64, types.int64,
                  types.int64)
_MODE = 3           # a real-valued mode; the row shift it implies is measured by `_probe`
_ALPHA = np.ones(1, np.float64)  # OpenBLAS reads alpha through a pointer: keep it alive
_ALPHA_AT = _ALPHA.ctypes.data

# None: not decided; False: off; else (blas_level1_thread, shift, get, its address)
_state = [None]
_forced = [None]
# the users that are on, worked out by `on` at its first call after start-up or set_enabled:
# a decoding step asks 17 times a token, and reading os.environ each time cost ~1 us a call
_users_on = [None]
# the users `on` turns on when EMBER_BLAS_PARTS is unset: only what a whole-step A/B on a quiet
# machine showed to win (benchmarks/RESULTS.md, seventeenth session, helper gpts): GELU, layer
# norm, the softmax / cross-entropy rows and Adam's update together, ab.py paired off/on GPT-S
# 1.020, 1.027, 1.034, 1.030 (load 0.9-1.9), NCF 1.051; GNMT-S even (1.018, medians 0.967).
# split.run's range kernels ("split": Winograd's transforms, batch norm, pooling, gathered
# im2col, ReLU, SGD; helper conv) ab.py paired off/on at load 1.3-1.8: VGG-19 1.091 (1.082 at
# 06:30), AlexNet 1.085, MobileNetV2 1.019, ResNet-50 0.959 and 1.012 (0.967, 1.036 earlier:
# even). The LSTM layer's step kernels and copies ("lstm") and the big elementwise passes
# ("passes": NOTE [Big passes in parts] in ops/_kernels/pointwise.py) for GNMT-S, ab.py paired
# at load 2.5 -> 1.5 (eighteenth session, helper gnmt): lstm 1.040, passes 1.017, both 1.053.
# Attention's plane kernels ("attention"; eighteenth session, helper gpts) ab.py paired GPT-S
# default/+attention 1.035 and +attention/default 0.970 (quiet slot, load 5.1 -> 3.0). They had
# given a wrong dK now and then in parts: not the worker, but a scratch array numba freed
# before the kernel's last products read it (NOTE [Scratch arrays outlive their addresses] in
# ops/_kernels/attention.py), which only another thread's malloc could overwrite in time.
# Linear's input and weight gradients at once ("linear_pair", NOTE [Linear's two gradients at
# once] in ops/nn/linear.py; twentieth session, helper gpts), ab.py paired off/on, quiet slots
# (load 1.3-1.5): GPT-S 1.037 and on/off 0.956; GNMT-S 0.957, then 1.006 and on/off 0.987;
# NCF 1.035 (medians 0.992).
# Winograd's batched products in halves of planes ("planes", NOTE [Small planes on two threads]
# in ops/_kernels/split.py; twenty-second session, helper resnet), ab.py paired off/on ResNet-50
# 1.029 and on/off 0.978 (quiet slot, load 1.1); VGG-19 1.028 and 0.979 (load 1.1).
DEFAULT_ON = frozenset({"gelu", "layernorm", "softmax_rows", "adam", "split", "lstm", "passes",
                        "attention", "linear_pair", "planes", "gemv", "conv_pair", "gemm"})


@intrinsic
def as_ptr(typingctx, addr, dtype_arg):
    """A pointer to `dtype` values at the integer address `addr` (inside a cfunc)."""
    if isinstance(dtype_arg, types.NumberClass):
        dtype = dtype_arg.instance_type
    elif isinstance(dtype_arg, types.DType):
        dtype = dtype_arg.dtype
    else:
        return None
    if not isinstance(addr, types.Integer):
        return None
    ptr = types.CPointer(dtype)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(ptr))

    return ptr(addr, dtype_arg), codegen


def _probe_part(m, n, k, alpha, a, lda, b, ldb, c, ldc, sb):
    """Record (m, a) of each part in the first free pair of slots."""
    rec = numba.carray(as_ptr(c, numba.int64), (8,))
    for s in range(0, 8, 2):
        if rec[s] == -1:
            rec[s] = m
            rec[s + 1] = a
            return


def _probe(fn, threads):
    """The row shift, found by running the probe over 64 rows; None when the parts are not
    two (or more) runs of rows that cover the range exactly as expected."""
    part = numba.cfunc(PART, nopython=True, cache=True)(_probe_part)
    rec = np.full(8, -1, np.int64)
    fn(_MODE, 64, 0, 0, _ALPHA.ctypes.data, 0, 1, 0, 1, rec.ctypes.data, 0, part.address,
       threads)
    parts = sorted((int(rec[s + 1]), int(rec[s])) for s in range(0, 8, 2) if rec[s] != -1)
    if len(parts) < 2 or sum(m for _, m in parts) != 64 or parts[0][0] != 0:
        return None
    first_rows, second_at = parts[0][1], parts[1][0]
    for shift in range(8):
        if first_rows << shift == second_at:
            return shift
    return None


def _setting():
    """True (all on), False (all off) or None (DEFAULT_ON): set_enabled, else the environment."""
    if _forced[0] is not None:
        return _forced[0]
    env = os.environ.get("EMBER_BLAS_PARTS", "").strip()
    return True if env == "1" else False if env == "0" else None


def _setup():
    from ._kernel_threads import _openblas, openblas_function
    funcs = _openblas()
    if not funcs:
        return False
    try:
        from threadpoolctl import ThreadpoolController
        libs = [lib for lib in ThreadpoolController().lib_controllers
                if lib.internal_api == "openblas" and "numpy" in lib.filepath]
        fn = openblas_function(libs[0], "blas_level1_thread") if libs else None
    except Exception:  # no threadpoolctl: stay off
        return False
    if fn is None:
        return False
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                   ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p,
                   ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p,
                   ctypes.c_int]
    get = funcs[0]
    if get() < 2:  # no worker to hand a part to (and a probe over two would wait for one)
        return False
    # a worker still asleep can leave the probe's rows all on the caller: try a few times
    shift = next((x for x in (_probe(fn, get()) for _ in range(20)) if x is not None), None)
    address = ctypes.cast(fn, ctypes.c_void_p).value
    return False if shift is None else (fn, shift, get, address)


def _ready():
    """Whether `run` can hand parts to OpenBLAS's threads (probed on first call)."""
    if _state[0] is None:
        _state[0] = _setup()
    return _state[0] is not False


def enabled():
    """Whether the parts are on for every user (EMBER_BLAS_PARTS=1 or set_enabled(True))."""
    return _setting() is True and _ready()


class _Every:
    """The users `on` answers for when every user is on: any name."""

    def __contains__(self, name):
        return True


def _users():
    setting = _setting()
    if setting is False or not _ready():
        return frozenset()
    return _Every() if setting else DEFAULT_ON


def on(name):
    """Whether user `name` (e.g. "gelu") runs its parts on OpenBLAS's threads: all are on when
    `enabled`, and those in DEFAULT_ON unless EMBER_BLAS_PARTS=0 or set_enabled(False). The
    environment is read at the first call and after each `set_enabled`."""
    users = _users_on[0]
    if users is None:
        users = _users_on[0] = _users()
    return name in users


def set_enabled(flag):
    """Force on (True), off (False) or back to the environment (None, read again); for tests
    and A/Bs."""
    _forced[0] = flag
    _state[0] = None
    _users_on[0] = None


def arguments(n_values):
    """The int64 argument array of a part: slot 0 holds the row shift, 1..n_values are the
    caller's."""
    args = np.zeros(n_values + 1, np.int64)
    args[0] = _state[0][1]
    return args


def threads():
    """OpenBLAS's thread count now: the parts one `run` makes (read it once per loop)."""
    return _state[0][2]()


# NOTE [A late worker]
# A hand-off waits for OpenBLAS's worker to finish its part, so when another process holds the
# worker's core (a busy machine: a test run, a browser) the caller waits until the scheduler
# runs the worker again: a one-row product of 7 us in parts took up to 259 ms now and then at
# load 3.9 (/work/s32/gemv_stall.py: 3000 calls summed 322 ms against 72 for the same calls on
# one thread), which turned a 0.55 ms decoding step into a mean of ~8 ms. The users time their
# hand-offs: the one-row products (gemv.py) count one slower than LATE_S as late (far beyond
# their work: at most 1 MB of weights), `run_ranges` one where the caller, its own part done,
# waited longer than LATE_S and than that part took. A late hand-off makes every user of
# `late_solo` run on the calling thread alone for a while - SOLO_MIN_S after the first, twice
# as long after each further one (up to SOLO_MAX_S), half as long again after each hand-off on
# time - so a quiet machine keeps its two threads and a busy one pays about one late hand-off
# per solo period. (`run`'s cfunc users - LSTM, layer norm, GELU, MKL's parts - take no part.)
# The settings: whole GPT-S generations in one process, settings interleaved
# (/work/s32/gen_late_ab.py), mean / p90 ms: quiet (04:25 UTC) off 36.6 / 38.6, 250 us and
# 0.1 s 37.0 / 40.8, 1 ms and 10 ms 36.2 / 37.2; beside one busy process off 118.6 / 229.4,
# 250 us and 0.1 s 100.3 / 152.0, 1 ms and 10 ms 93.9 / 139.5 (a short solo period costs less
# after a one-off hiccup; the doubling still reaches long ones under steady load).
LATE_S = 1e-3
SOLO_MIN_S = 0.01
SOLO_MAX_S = 10.0
_solo = [0.0, SOLO_MIN_S]  # (perf_counter time the solo period ends, the next period's length)


def late_solo(now):
    """Whether hand-offs wait at `now` (a time.perf_counter reading): NOTE [A late worker]."""
    return now < _solo[0]


def note_hand_off(late):
    """Record whether a hand-off that just ended waited for a late worker."""
    if late:
        _solo[0] = perf_counter() + _solo[1]
        _solo[1] = min(2 * _solo[1], SOLO_MAX_S)
    elif _solo[1] > SOLO_MIN_S:
        _solo[1] = max(_solo[1] / 2, SOLO_MIN_S)

@numba.njit(nogil=True, cache=True)
def _call(fn, n_rows, alpha, args, part, threads):
    # every argument of blas_level1_thread in a 64-bit register or stack slot: its two int
    # parameters (mode, threads) read the low half
    i = np.int64
    _call13(fn, (i(_MODE), i(n_rows), i(0), i(0), i(alpha), i(0), i(1), i(0), i(1), i(args),
                 i(0), i(part), i(threads)))


def run(address, n_rows, args_at, threads):
    """Call the cfunc at `address` over range(n_rows) in `threads` parts (at most OpenBLAS's
    thread count: see `threads`); args_at is the address of the argument array."""
    _call(_state[0][3], n_rows, _ALPHA_AT, args_at, address, threads)


# NOTE [Python parts on OpenBLAS's threads]
# A cfunc per kernel needs its arrays passed as addresses and rebuilt, kernel by kernel. For
# kernels of a millisecond or more (a convolution's transforms, batch norm, the optimizer step)
# a ctypes callback does the same for any Python callable: OpenBLAS calls it on the caller and on
# its worker, ctypes takes the GIL for the few microseconds of Python that reach the kernel,
# and the nogil kernel releases it again, so the parts run at once. The callable is kept in a
# module slot while one `run_ranges` runs; a call made while another runs (a second user thread)
# runs in one call on its own thread, as does a range of one row.
# A callback on a thread Python did not start makes and frees a thread state on every call
# (~20 us a hand-off); an OpenBLAS worker therefore keeps one (one extra PyGILState_Ensure the
# first time, never released), after which a hand-off of two empty parts costs ~3.5 us (1.9 us
# with one part; min of 7 x 50, load ~3). `parallel_range(fn, n, grain)` keeps the contract of
# _kernel_threads.parallel_range on top of it: the range in chunks, claimed by whichever of the
# two parts is free (a worker that starts late finds the caller has taken the rest; unlike the
# kernel threads, the caller still waits for it to return).
# Tried and dropped (2026-11-27, helper conv): a GIL-free route for any numba kernel (an njit
# launcher keeping the argument tuple in its stack frame, a cfunc per (kernel, argument types)
# loading it back). Its parts ran as fast, but numba's dispatch of a tuple argument costs
# ~40 us a call against this callback's ~15 us (min of 50, tiny kernel, load 1.3).
_PY_PART = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                            ctypes.c_double, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                            ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64)
_job = [None, None]  # the callable, the first exception a part raised
_job_lock = threading.Lock()


_caller = [0]  # the thread id of the running run_ranges' caller
_caller_done = [0.0]  # when the caller's own part ended (perf_counter): NOTE [A late worker]
_kept = set()  # OpenBLAS workers that keep a thread state


def _py_part(m, n, k, alpha, a, lda, b, ldb, c, ldc, sb):
    me = threading.get_ident()
    if me != _caller[0] and me not in _kept:  # an OpenBLAS worker, first time
        _kept.add(me)
        ctypes.pythonapi.PyGILState_Ensure()  # its thread state stays: see the NOTE
    lo = a >> _state[0][1]
    try:
        _job[0](lo, lo + m)
    except BaseException as e:  # re-raised by run_ranges in the calling thread
        if _job[1] is None:
            _job[1] = e
    if me == _caller[0]:
        _caller_done[0] = perf_counter()


_PY_PART_FN = _PY_PART(_py_part)  # keep the callback alive
_PY_PART_AT = ctypes.cast(_PY_PART_FN, ctypes.c_void_p).value


def run_ranges(fn, n, threads=None):
    """fn(lo, hi) over range(n) in one part per OpenBLAS thread (or per `threads`, at most the
    threads OpenBLAS has started), the caller's part on the calling thread (NOTE [Python parts
    on OpenBLAS's threads]); `enabled()` must be True. fn should release the GIL, its parts
    must write disjoint memory and its results must not depend on the split. An exception of
    any part is re-raised here."""
    parts = min(n, _state[0][2]() if threads is None else threads)
    start = perf_counter()
    if parts < 2 or late_solo(start) or not _job_lock.acquire(blocking=False):
        fn(0, n)
        return
    try:
        _job[0], _job[1] = fn, None
        _caller[0] = threading.get_ident()
        _caller_done[0] = start
        _state[0][0](_MODE, n, 0, 0, _ALPHA_AT, 0, 1, 0, 1, 0, 0, _PY_PART_AT, parts)
        error = _job[1]
        # late: after its own part the caller waited longer than LATE_S and than that part took
        done = _caller_done[0]
        note_hand_off(perf_counter() - done > max(LATE_S, done - start))
    finally:
        _job[0] = _job[1] = None
        _job_lock.release()
    if error is not None:
        raise error


def parallel_range(fn, n, grain):
    """_kernel_threads.parallel_range with the parts on OpenBLAS's threads (when `on` says so):
    fn(lo, hi) over contiguous chunks of at least `grain` covering range(n), claimed by the
    caller's part and the worker's (NOTE [Python parts on OpenBLAS's threads])."""
    from ._kernel_threads import _CHUNKS_PER_THREAD, _Task
    parts = min(threads(), n // max(1, grain))
    if parts < 2:
        if n > 0:
            fn(0, n)
        return
    n_chunks = min(parts * _CHUNKS_PER_THREAD, n // max(1, grain))
    task = _Task(fn, [n * i // n_chunks for i in range(n_chunks + 1)])
    run_ranges(lambda lo, hi: task.work(), parts)
    if task.errors:
        raise task.errors[0]


def _reset_after_fork():
    global _job_lock
    _job_lock = threading.Lock()
    _job[0] = _job[1] = None
    _kept.clear()  # the child's OpenBLAS starts new workers


os.register_at_fork(after_in_child=_reset_after_fork)
