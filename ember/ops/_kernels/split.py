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

import os

import numba
import numpy as np

from ... import _blas_parts, _mkl, _onepool
from ... import _kernel_threads as _kt
from ..._kernel_threads import parallel_range as _parallel_range

# Fewest elements of work (the caller's estimate) worth a second thread: from ~0.2 ms of work,
# so that the hand-off (waking a worker, ~20-50 us) stays a small part of what it saves.
_MIN_WORK = 1 << 18
# Fewest elements of work for the parts on OpenBLAS's threads (NOTE [Python parts on OpenBLAS's
# threads] in ember/_blas_parts.py; on by default, "split" in its DEFAULT_ON). Below ~2 MB of
# float32 a kernel's data is still in the caller's cache, and batch norm ran slower in two parts
# (ResNet-50's, 2^18-2^19 elements; 2^17 gave ResNet-50 steps paired 0.955); 2^20 against
# 2^19 (ab.py, a disturbed slot at load 2-3): ResNet-50 paired 1.172 and 0.996 (medians 1.126,
# 1.121), VGG-19 1.065.
_PARTS_MIN_WORK = 1 << 20
# NOTE [Parts thresholds by family]
# The threshold above is one figure for every range kernel; whether a kernel of 2^18-2^20
# elements gains from a second part depends on where its data is (a kernel reading what the
# previous one just wrote finds half of it in the other core's cache) and how much arithmetic
# it does per byte. So each caller names its family, and PARTS_MIN gives that family's
# threshold (_PARTS_MIN_WORK when absent); benchmarks/ab.py can change an entry between the
# two configurations of a paired A/B. On the EPYC (benchmarks/RESULTS.md, eighteenth session,
# helper conv) batch norm's backward ran ~30 % faster per call in parts from 2^18 elements and
# its forward not at all, but no family at 2^18 won a whole-step A/B beyond the noise (ReLU's
# lost 10 % on ResNet-50). On the Intel machine (twenty-third session) batch norm at 2^18, both
# directions, won MobileNetV2's step (its 16x16 and 32x32 maps, 0.4-0.6 M elements): ab.py
# paired 1.050 and reversed 0.971 (quiet slot, load 0.8). ReLU's family ("pointwise": clamp
# and its masked gradient) at 2^18 too (twenty-eighth session): its time inside real steps fell
# 4.65 -> 3.74 ms (ResNet-50), 5.78 -> 4.32 (MobileNetV2), 2.26 -> 1.68 (VGG-19); whole steps,
# ab.py paired off/on and on/off: ResNet-50 1.024 / 0.966 and 1.015, AlexNet 1.010 / 0.986,
# MobileNetV2 0.994 / 0.966, VGG-19 1.009 / 1.004 (40 samples) - at most ~2 %, never a loss
# beyond the noise on this machine (the twenty-first session's 0.993 / 0.994 on the EPYC).
PARTS_MIN = {"batchnorm": 1 << 18, "batchnorm_bwd": 1 << 18, "pointwise": 1 << 18}
# NOTE [Claimed chunks for the range kernels]
# run_ranges gives the caller and OpenBLAS's worker a fixed half each, so when the worker waits
# for a core (another process on this shared 2-vCPU machine) the caller waits for its half (two
# VGG-19 processes back to back at load 3 read 168.7 ms a step with the parts, 129.8 ms with
# EMBER_BLAS_PARTS=0; paired at load 1.8 the parts still won, 1.047; benchmarks/RESULTS.md,
# nineteenth session, helper conv). With CLAIMED_CHUNKS[0] True the range is cut in chunks that
# the caller and the worker claim as they come (_blas_parts.parallel_range): a late worker finds
# the caller has taken the rest and returns. More kernel launches per call (eight chunks, not
# two). ab.py halves/claimed, paired, load 1.8: VGG-19 1.040, ResNet-50 0.994; off until a quiet
# whole-step A/B says otherwise (/work/quiet19_conv.sh).
# Each chunk computes whole channels as the halves do: the numbers do not change.
CLAIMED_CHUNKS = [False]


# NOTE [Ranges on the one pool]
# With the one pool on (NOTE [One pool] in ember/_onepool.py) a range kernel never goes to the
# kernel threads (one pool, never two): `run` hands it to its parts driver, a twin kernel that
# calls it on `parts` contiguous slices of [0, n) from one prange loop, so the slices run on the
# pool that also runs the GEMMs. A driver is registered beside its kernel (`pooled`); drivers
# are written out per kernel (not made by a closure factory) so that numba caches them on disk.
# A kernel without a driver, or with less work than the driver's min_work, runs in one call.
# Each slice calls the unchanged kernel, so the numbers are those of the serial call.
_DRIVERS = {}


def pooled(kernel, driver):
    """Register `driver`, a twin with signature (*kernel args, n, parts), that runs `kernel`'s
    range [0, n) in `parts` slices on the pool (NOTE [Ranges on the one pool])."""
    _DRIVERS[kernel] = driver


def pool_parts(n):
    """Slices of a range of n for a pool driver: one per pool thread."""
    return max(1, min(n, numba.get_num_threads()))


def run(kernel, n, work, *args, min_work=None, family=None):
    """kernel(*args, lo, hi) over [0, n): in parts on the kernel threads when ``work``
    (elements touched) reaches ``min_work`` (default _MIN_WORK), else in one call; on
    OpenBLAS's threads from PARTS_MIN[family] elements (NOTE [Parts thresholds by family]);
    on the one pool instead when it is on (NOTE [Ranges on the one pool]). Exceptions of any
    part propagate."""
    if _onepool.enabled():
        driver = _DRIVERS.get(kernel)
        if driver is None:  # a kernel wrapped by benchmarks/profile_shares.py's timers
            driver = _DRIVERS.get(getattr(kernel, "__wrapped_for_shares__", None))
        if driver is not None and n >= 2 and work >= driver.min_work:
            driver.parallel(*args, n, pool_parts(n))
        else:
            kernel(*args, 0, n)
        return
    if n >= 2 and work >= PARTS_MIN.get(family, _PARTS_MIN_WORK) and _blas_parts.on("split"):
        # NOTE [Python parts on OpenBLAS's threads] in _blas_parts.py
        if CLAIMED_CHUNKS[0]:  # NOTE [Claimed chunks for the range kernels]
            _blas_parts.parallel_range(lambda lo, hi: kernel(*args, lo, hi), n, 1)
        else:
            _blas_parts.run_ranges(lambda lo, hi: kernel(*args, lo, hi), n)
        return
    threshold = _MIN_WORK if min_work is None else min_work
    if n < 2 or work < threshold:
        kernel(*args, 0, n)
        return
    # parts of at least half the threshold's work (work / n per index of the range)
    grain = max(1, -(-n * (threshold // 2) // max(1, work)))
    _parallel_range(lambda lo, hi: kernel(*args, lo, hi), n, grain)


# NOTE [Convolution GEMMs on the kernel threads]
# OpenBLAS threads each GEMM itself, and its idle worker then spins for ~0.1 s on the second
# core, so ember's kernel workers (the numba passes between the GEMMs: batch norm, Winograd's
# transforms, im2col, the optimizer) lose that core to it: with the kernel pool on, a quiet
# machine ran MobileNetV2 and GPT-S slower than without it (NOTE [Kernel threads] in
# _kernel_threads.py). In this mode one pool does all of a convolution's parallel work: each
# GEMM runs on the kernel threads in parts (planes of a batched product, or rows / columns of
# one product), each part on OpenBLAS at one thread, so OpenBLAS's worker never wakes and never
# spins. A product is split along the larger of its output dimensions (each part then packs a
# slice of the bigger operand and all of the smaller one) into blocks of _GEMM_ALIGN rows or
# columns; products under _GEMM_MIN_MACS multiply-adds run whole (still on one OpenBLAS thread).
# Off by default (a thread-count change is judged on a quiet machine only): EMBER_SPLIT_GEMMS=1
# together with the kernel pool (EMBER_KERNEL_THREADS=2 or ember.set_num_threads(2)) turns it on.
# Each part computes its own outputs over the whole K axis, so the numbers do not depend on the
# split (up to the BLAS kernel's handling of a block's edge).
_GEMM_MIN_MACS = 1 << 21
_GEMM_ALIGN = 16
_split_gemms = [None]


def split_gemms():
    """Whether convolution GEMMs run on the kernel threads (NOTE [Convolution GEMMs on the kernel
    threads]): EMBER_SPLIT_GEMMS=1 and a kernel pool of two or more threads, or inside a large
    convolution with EMBER_CONV_THREADS (NOTE [Conv threads] in _kernel_threads.py)."""
    if _split_gemms[0] is None:
        _split_gemms[0] = os.environ.get("EMBER_SPLIT_GEMMS", "").strip() == "1"
    if _onepool.enabled():  # the one pool runs the GEMMs: NOTE [One pool]
        return False
    return (_split_gemms[0] or _kt._scoped[0] > 1) and _kt.num_workers() >= 2


def _planes(a, lo, hi, nd):
    """Planes [lo, hi) of the leading axis of a product with nd dims, for an operand a of that
    product (an operand without that axis, or with size 1 there, is broadcast: all of it)."""
    if a.ndim < nd or a.shape[0] == 1:
        return a
    return a[lo:hi]


def blas_parts(fn, size, align=None):
    """fn(lo, hi) over [0, size) - parts of a product's rows, columns or planes that call BLAS -
    one part per kernel thread, with OpenBLAS at one thread, when split_gemms(); else one call
    (NOTE [Convolution GEMMs on the kernel threads]). Parts start at multiples of `align`
    (default _GEMM_ALIGN)."""
    if not split_gemms():
        fn(0, size)
        return
    before = _kt.blas_threads_enter(1)
    try:
        align = _GEMM_ALIGN if align is None else align
        blocks = -(-size // align)
        parts = min(_kt.num_workers(), blocks)
        if parts < 2:
            fn(0, size)
        else:
            bounds = [min(size, align * (blocks * i // parts)) for i in range(parts + 1)]
            _kt.parallel_range(lambda lo, hi: fn(bounds[lo], bounds[hi]), parts, 1)
    finally:
        _kt.blas_threads_exit(before)


def gemm(a, b, out=None):
    """np.matmul(a, b, out=out), in parts on the kernel threads when split_gemms() (NOTE
    [Convolution GEMMs on the kernel threads]); returns the product."""
    if _one_thread[0]:  # a task of `at_once`: NOTE [A convolution's two gradients at once]
        done = _mkl.by_numba(a, b, out, None, False)  # NOTE [A GEMM in numba]
        return np.matmul(a, b, out=out) if done is None else done
    if not split_gemms():
        return _onepool.matmul(a, b, out=out)  # np.matmul unless the one pool is on
    if out is None:
        shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (a.shape[-2], b.shape[-1])
        out = np.empty(shape, np.result_type(a, b))
    m, n, k = out.shape[-2], out.shape[-1], a.shape[-1]
    nd = out.ndim
    if out.size * k < _GEMM_MIN_MACS:
        blas_parts(lambda lo, hi: np.matmul(a, b, out=out), 1)  # whole, on one BLAS thread
    elif nd > 2 and out.shape[0] >= 2:
        blas_parts(lambda lo, hi: np.matmul(_planes(a, lo, hi, nd), _planes(b, lo, hi, nd),
                                            out=out[lo:hi]), out.shape[0], 1)
    elif m >= n:
        blas_parts(lambda lo, hi: np.matmul(a[..., lo:hi, :], b, out=out[..., lo:hi, :]), m)
    else:
        blas_parts(lambda lo, hi: np.matmul(a, b[..., lo:hi], out=out[..., lo:hi]), n)
    return out


# NOTE [No small hand-offs]
# A hand-off of Python parts (`_blas_parts.run_ranges`) makes the caller and OpenBLAS's worker
# pass the GIL back and forth, and the one that waits for it sleeps in the kernel. When the
# other wakes it, Linux may put it on the waker's core, and after a pause (an idle worker
# asleep, both threads' load history decayed) it often does: for 10-40 ms the two threads then
# share one vCPU while the other idles. OpenBLAS's waits do not yield (the library imports no
# sched_yield), so in that time every threaded product or hand-off waits for a time slice: a
# 256^3 sgemm with both threads on one core took 16 ms against 0.13 ms apart (2026-11-28, Intel
# Xeon, threads pinned by hand). The digits convnet at batch 32 (2 ms steps, two such hand-offs
# a step) read 3-9 ms a step for the first steps after each of small_batch.py's pauses, and 0.40x
# torch in the benchmark, against 1.9-2.0 ms a step in a loop. A product of a few M
# multiply-adds gains ~50 us at best from a second thread, so the two hand-offs of a small
# convolution are not made: Winograd's planes in halves need PLANES_MIN_WORK multiply-adds in
# all, a convolution's two gradients at once AT_ONCE_MIN_WORK. Both bounds leave every Table 1
# convolution as it was except one of ResNet-50's (8.4 M) and MobileNetV2's 1x1 layers under
# 16.8 M, whose pair ab.py read even (paired 0.990 and reversed 1.002, 24 samples).
PLANES_MIN_WORK = [1 << 22]
AT_ONCE_MIN_WORK = [1 << 24]


# NOTE [Small planes on two threads]
# Winograd's products are batches of 16 or 36 small planes (ResNet-50's F(2x2) layers on 8x8
# maps: 16 products of 128 x 128 x 128; its F(4x4) ones on 16x16 maps: 36 of 64 x 128 x 64).
# np.matmul hands each plane to OpenBLAS in turn, which splits every one over its two threads
# and meets at its end: 16 or 36 hand-offs of a product too small to pay for one. Here the
# planes go in two halves instead, one on the calling thread and one on OpenBLAS's worker (a part
# of `_blas_parts.run_ranges`), with OpenBLAS at one thread meanwhile, as Linear's two gradients
# do (NOTE [Linear's two gradients at once] in ops/nn/linear.py). Each plane is still one BLAS
# call, so the numbers are a one-thread product's: the same bits as np.matmul's planes on this
# build (tests/nn/test_conv_planes.py). Only for planes under SMALL_GEMM[1] multiply-adds, where
# OpenBLAS's own split pays least, and while both threads exist; the user "planes" of
# ember._blas_parts. Measured alone (two threads, quiet slot, median of 25): forward / input
# gradient / weight gradient 1.30 / 1.57 / 1.23x for 16 planes of 128 x 128 x 128, 1.44 / 1.52 /
# 1.92x for 36 of 64 x 128 x 64.


def gemm_planes(a, b, out, max_macs=None):
    """np.matmul(a, b, out=out) for 3-D b and out with the same number of planes and a 3-D
    (or a 2-D, shared) a: in two halves of planes on two threads when NOTE [Small planes on two
    threads] applies (planes under max_macs multiply-adds, default SMALL_GEMM[1]), else `gemm`.
    Returns out."""
    planes, m, n = out.shape
    if not (split_gemms() or _onepool.enabled()):
        done = _mkl.by_numba(a, b, out, None, not _one_thread[0])  # NOTE [A GEMM in numba]
        if done is not None:
            return done
    cap = _kt.SMALL_GEMM[1] if max_macs is None else max_macs
    macs = m * n * b.shape[1]
    if (planes < 2 or macs >= cap or planes * macs < PLANES_MIN_WORK[0] or split_gemms()
            or _one_thread[0]
            or _onepool.enabled() or not _blas_parts.on("planes") or _blas_parts.threads() < 2):
        return gemm(a, b, out=out)
    before = _kt.blas_threads_enter(1)
    try:
        _blas_parts.run_ranges(
            lambda lo, hi: np.matmul(_planes(a, lo, hi, 3), b[lo:hi], out=out[lo:hi]), planes, 2)
    finally:
        _kt.blas_threads_exit(before)
    return out


def gemm_oriented(a, b):
    """`gemm` for 2-D a @ b, turned round as ember._backend.gemm does where OpenBLAS is faster
    that way (NOTE [GEMM orientation] in _backend.py): Linear's big products when
    split_gemms(), so that they too leave OpenBLAS's worker asleep."""
    from ..._backend import turns_round
    if turns_round(a, b):
        return np.ascontiguousarray(gemm(b.T, a.T).T)
    return gemm(a, b)


# NOTE [A convolution's two gradients at once]
# A convolution's input gradient (a GEMM, then col2im) and weight gradient (a transposing copy
# of gy, then a GEMM) are independent and about equal in work. One after the other, each GEMM
# runs on OpenBLAS's two threads, which split a product of 8-75 M multiply-adds (ResNet-50's
# deep layers) and meet at its end, and the copies and col2im around them run on one thread.
# `at_once` runs the two instead as whole tasks at the same time, one on the calling thread and
# one on OpenBLAS's worker (a part of `_blas_parts.run_ranges`, with OpenBLAS at one thread
# meanwhile), as Linear's two gradients do (NOTE [Linear's two gradients at once] in
# ops/nn/linear.py). Inside a task every nested parts call runs serially on its thread (the
# worker is taken) and `gemm` is one np.matmul on OpenBLAS's one thread, so the results are
# those of the serial path (same bits). MKL's sequential sgemm in the tasks (NOTE [MKL's sgemm]
# in ember/_mkl.py; faster per shape on one thread) made ResNet-50's step slower, not faster.
# The user "conv_pair" of ember._blas_parts; only for convolutions of at least AT_ONCE_MIN_WORK
# multiply-adds (NOTE [No small hand-offs]). Figures in
# benchmarks/RESULTS.md (twenty-fourth session, helper conv).
_one_thread = [False]


# NOTE [Shared pairs]
# `at_once` gives each thread one whole task, so the pair lasts as long as the longer one, and
# a worker that starts late (it sleeps, or another process holds its core) delays it all:
# VGG-19's pairs waited ~9 ms a step (/work/s35/busy.py), in the rows route's layers about as
# much from late starts as from unequal tasks (/work/s36/pairs2.py: 4.0 ms of late starts,
# 5.7 ms of imbalance). A task whose product can be cut (columns or rows of one GEMM, each
# computed by the same kernel over the same groups of rows as in one call: the same bits) is a
# `Shared`: chunks both threads claim, then a finish (a col2im) on one. `at_once_shared` runs
# two: the caller claims the first task's chunks, then the second's; the worker the second's,
# then the first's; each finishes its own task once all its chunks are done. A late worker
# finds the caller has taken its chunks, and the two end within a chunk of each other. The
# rows route's two gradients run so on hosts where the numba GEMM computes them (NOTE [Pixels
# as rows on small maps] in conv.py): benchmarks/ab.py off/on, paired, chrt -f 10, VGG-19 1.020
# (its rows layers' pairs 14.4 -> 12.7, 7.3 -> 5.2 and 2.6 -> 2.2 ms a step), ResNet-50 1.004.
# Winograd's pairs cut into chunks of planes (each task's transform of the weight or the input
# made by its owner first, the other thread waiting for it) read 0.996 and 0.995: the inverse
# transforms then read planes half of which the other core wrote.
class Shared:
    """A task of a pair as claimable chunks over `bounds`, then ``finish()`` (its result)."""

    def __init__(self, chunk, bounds, finish):
        self.task = _kt._Task(chunk, bounds)
        self.finish = finish


def chunk_bounds(n, chunks, align):
    """Cuts of range(n) into at most `chunks` pieces at multiples of `align` (at least one)."""
    inner = {min(n, align * round(n * i / chunks / align)) for i in range(1, chunks)}
    return sorted({0, n} | inner)


def at_once_shared(first, second):
    """(first's result, second's) for two `Shared` tasks on the calling thread and OpenBLAS's
    worker (NOTE [Shared pairs]), with OpenBLAS at one thread meanwhile. Call only when
    `at_once_applies`."""
    jobs = (first, second)
    results = [None, None]

    def run(lo, hi):
        for i in range(lo, hi):
            jobs[i].task.work()
            jobs[1 - i].task.work()
            jobs[i].task.all_done.acquire()  # its last chunks may still run on the other thread
            results[i] = jobs[i].finish()

    _run_pair(run)
    for job in jobs:
        if job.task.errors:
            raise job.task.errors[0]
    return results


def at_once_applies(macs):
    """Whether `at_once` runs two tasks of a convolution of `macs` multiply-adds on two threads
    (NOTE [A convolution's two gradients at once])."""
    return (macs >= AT_ONCE_MIN_WORK[0] and _blas_parts.on("conv_pair")
            and _blas_parts.threads() >= 2 and not split_gemms() and not _onepool.enabled())


def at_once(first, second):
    """first() on the calling thread and second() on OpenBLAS's worker at the same time, with
    OpenBLAS at one thread (NOTE [A convolution's two gradients at once]); returns both
    results. Call only when `at_once_applies`."""
    tasks = (first, second)
    results = [None, None]

    def run(lo, hi):
        for i in range(lo, hi):
            results[i] = tasks[i]()

    _run_pair(run)
    return results


def _run_pair(run):
    """run(0, 1) on the calling thread and run(1, 2) on OpenBLAS's worker, with OpenBLAS at one
    thread and every nested parts call serial meanwhile (a pair's tasks hold both threads)."""
    before = _kt.blas_threads_enter(1)
    _one_thread[0] = True
    try:
        _blas_parts.run_ranges(run, 2, 2)
    finally:
        _one_thread[0] = False
        _kt.blas_threads_exit(before)
