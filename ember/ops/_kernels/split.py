"""Run a serial numba kernel on two cores: its outer range in two halves, one in a helper thread.

NOTE [Two halves on two threads]
The BLAS library spreads a GEMM over every core, but the numba kernels around it (Winograd's
transforms, for one) run in one thread, and on this 2-core machine they leave a core idle for
as long as they run: with F(4x4, 3x3) the transforms are about half of a VGG-19 layer's
single-thread time. numba's own parallel loops are no cure (NOTE [Kernel threading] in conv.py:
its OpenMP pool spins and fights OpenBLAS's). So a kernel that takes an explicit range of its
outer loop ([lo, hi) over independent channels, each writing only its own part of the output)
is called twice: the upper half in one long-lived helper thread, the lower half in the calling
thread. The kernels are ``nogil``, so the halves run at the same time.

`run` falls back to one call when there is one thread to use (``ember.set_num_threads(1)``, a
1-CPU machine) or when the work is too small to pay for the hand-off (_MIN_WORK), and after a
fork (the helper thread does not exist in the child) it starts a new helper.
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numba

# Fewest elements of work (the caller's estimate) worth a second thread: from ~0.2 ms of work,
# so that the hand-off (waking the helper, ~20-50 us) stays a small part of what it saves.
_MIN_WORK = 1 << 18

_pool: list = [None, None]  # (executor, pid that created it)
_lock = threading.Lock()


def _helper():
    with _lock:
        if _pool[0] is None or _pool[1] != os.getpid():
            _pool[0] = ThreadPoolExecutor(1, thread_name_prefix="ember-half")
            _pool[1] = os.getpid()
        return _pool[0]


def _two_threads():
    # numba's per-thread count follows ember.set_num_threads (ember/_threads.py)
    return numba.get_num_threads() > 1 and threading.current_thread().name[:10] != "ember-half"


def run(kernel, n, work, *args, min_work=None):
    """kernel(*args, lo, hi) over [0, n): in two halves on two threads when ``work`` (elements
    touched) reaches ``min_work`` (default _MIN_WORK), else in one call. Exceptions of either
    half propagate."""
    if n < 2 or work < (_MIN_WORK if min_work is None else min_work) or not _two_threads():
        kernel(*args, 0, n)
        return
    mid = n // 2
    upper = _helper().submit(kernel, *args, mid, n)
    try:
        kernel(*args, 0, mid)
    finally:
        upper.result()
