"""Run a serial numba kernel on all cores: its outer range in parts on the kernel threads.

NOTE [Two halves on two threads]
The BLAS library spreads a GEMM over every core, but the numba kernels around it (Winograd's
transforms, for one) run in one thread, and on this 2-core machine they leave a core idle for
as long as they run: with F(4x4, 3x3) the transforms are about half of a VGG-19 layer's
single-thread time. numba's own parallel loops are no cure (NOTE [Kernel threading] in conv.py:
its OpenMP pool spins and fights OpenBLAS's). So a kernel that takes an explicit range of its
outer loop ([lo, hi) over independent channels, each writing only its own part of the output)
is called on parts of that range, in the calling thread and in ember's kernel worker threads at
once. The kernels are ``nogil``, so the parts run at the same time.

`run` is a thin front of ember/_kernel_threads.py's `parallel_range` (NOTE [Kernel threads]
there: one pool of sleeping worker threads for every kernel, parts claimed in chunks by whichever
thread is free): it falls back to one call when the work is too small to pay for the hand-off
(_MIN_WORK) and otherwise hands out parts of at least half that much work; one thread
(``ember.set_num_threads(1)``, EMBER_KERNEL_THREADS=1), nesting and forks are handled there.
"""
from __future__ import annotations

from ..._kernel_threads import parallel_range as _parallel_range

# Fewest elements of work (the caller's estimate) worth a second thread: from ~0.2 ms of work,
# so that the hand-off (waking a worker, ~20-50 us) stays a small part of what it saves.
_MIN_WORK = 1 << 18


def run(kernel, n, work, *args, min_work=None):
    """kernel(*args, lo, hi) over [0, n): in parts on the kernel threads when ``work``
    (elements touched) reaches ``min_work`` (default _MIN_WORK), else in one call. Exceptions
    of any part propagate."""
    threshold = _MIN_WORK if min_work is None else min_work
    if n < 2 or work < threshold:
        kernel(*args, 0, n)
        return
    # parts of at least half the threshold's work (work / n per index of the range)
    grain = max(1, -(-n * (threshold // 2) // max(1, work)))
    _parallel_range(lambda lo, hi: kernel(*args, lo, hi), n, grain)
