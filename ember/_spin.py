"""A bounded busy-wait for ember's kernel workers (NOTE [Spinning kernel workers] in
_kernel_threads.py): `wait(seen)` returns True as soon as a caller has posted a new task (the
counter `POSTS` moved past ``seen``), or False after about `SPIN_SECONDS` of polling.
"""
from __future__ import annotations

import sys
import time

import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.extending import intrinsic

# How long an idle worker keeps polling before it sleeps on its lock. A few GEMMs of a
# convolution at one BLAS thread (0.2-2 ms) sit between two split kernels; waking a sleeping
# thread on an idle core costs 0.1-0.3 ms on this VM.
SPIN_SECONDS = 0.002

POSTS = np.zeros(1, np.int64)  # bumped by the caller after it publishes a task
_iterations = [0]              # polls per SPIN_SECONDS, measured on first use
_LINUX = sys.platform.startswith("linux")


@intrinsic
def _load_acquire(typingctx, posts):
    """posts[0] read with an atomic acquire load: a plain load may be hoisted out of the polling
    loop (nothing in the loop writes memory), so the loop would never see the caller's write."""
    if not (isinstance(posts, types.Array) and posts.dtype == types.int64):
        return None

    def codegen(context, builder, signature, args):
        array = context.make_array(signature.args[0])(context, builder, args[0])
        return builder.load_atomic(array.data, "acquire", 8)

    return types.int64(posts), codegen


@intrinsic
def _yield_core(typingctx):
    """sched_yield(): lets any other thread that is ready to run on this core go first (the
    caller's own thread on a busy machine), so that polling costs only an idle core's time."""

    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.IntType(32), [])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "sched_yield")
        builder.call(fn, [])
        return context.get_dummy_value()

    return types.void(), codegen


@numba.njit(nogil=True, cache=True)
def _k_poll(posts, seen, iterations):
    """True once posts[0] != seen, False after `iterations` polls (without the GIL)."""
    for _ in range(iterations):
        if _load_acquire(posts) != seen:
            return True
        _yield_core()
    return False


def calibrate():
    """Measure the polls per SPIN_SECONDS (on a private counter that nobody posts to); called
    by the caller before it starts the first worker."""
    if _iterations[0] or not _LINUX:
        return
    quiet = np.zeros(1, np.int64)
    probe = 1 << 16
    _k_poll(quiet, 0, 1)  # compiled or loaded from the cache first
    t0 = time.perf_counter()
    _k_poll(quiet, 0, probe)
    per_poll = max(1e-10, (time.perf_counter() - t0) / probe)
    _iterations[0] = max(1, int(SPIN_SECONDS / per_poll))


def wait(seen):
    """Poll for a post after ``seen`` for about SPIN_SECONDS; True if one came. Only on Linux
    (sched_yield from the C library); elsewhere False at once, and the worker sleeps."""
    if not _LINUX:
        return False
    return _k_poll(POSTS, seen, _iterations[0])
