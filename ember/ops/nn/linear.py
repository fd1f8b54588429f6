"""The linear layer's op: y = x W^T + b in one node."""
from __future__ import annotations

import os

import numpy as np

from ... import _blas_parts, _kernel_threads, _mkl, _onepool
from ..._backend import REUSE_MIN_BYTES, gemm, reusable_empty, turns_round
from ..._kernel_threads import (
    SMALL_GEMM,
    blas_threads_enter,
    blas_threads_exit,
    small_gemm_enter,
    small_gemm_exit,
)
from ..._tensor import _make
from ...autograd.function import Op
from ...autograd.grad_mode import _state
from .._kernels import mkl_parts as _kmp
from .._kernels import pointwise as _kpw
from .._kernels import reduce as _kreduce
from .._kernels import small_gemm as _ksg
from .._kernels import small_linear as _ksl
from .._kernels import split as _ksplit
from .._kernels.gemv import gemv_in_parts
from ..products import rows_matmul


def _split(macs):
    """Whether a product of `macs` multiply-adds runs in parts on the kernel threads (NOTE
    [Convolution GEMMs on the kernel threads] in ops/_kernels/split.py; off by default). Never
    with the one pool on: its GEMMs are split already (NOTE [One pool]), and two pools fight."""
    return macs >= SMALL_GEMM[1] and _ksplit.split_gemms() and not _onepool.enabled()


class Linear(Op):
    """y = x W^T + b in one node: one BLAS call forward, two (plus a sum) backward."""

    @staticmethod
    def forward(ctx, x, weight, bias=None):
        ctx.save_for_backward(x, weight)
        # (*, in) inputs as one GEMM: np.matmul would loop over the leading dims (GNMT's
        # (20, 32, 256) x (256, 2000) output layer: 20 thin GEMMs, 2.7x slower)
        y = small_linear(x, weight, bias)
        if y is not None:
            return y
        macs = x.size * weight.shape[0]
        blas = small_gemm_enter(macs)  # NOTE [One BLAS thread for small GEMMs]
        try:
            split = _split(macs)
            if split and _rows_in_parts_ok(x, weight, bias):
                # a transformer's (B, T, d) activations as one (B*T, d) product, in parts of
                # rows that each add the bias to their rows
                return _rows_in_parts(x, weight.T, bias)
            if x.ndim == 2 and split:
                y = _ksplit.gemm_oriented(x, weight.T)
            elif (bias is not None and x.ndim == 2 and x.dtype in _FLOATS
                  and x.dtype == weight.dtype == bias.dtype and x.flags.c_contiguous
                  and x.shape[0] * weight.shape[0] * x.itemsize < REUSE_MIN_BYTES):
                # a small batch above the one-thread bound: as above, on one BLAS thread
                return gemm(x, weight.T, bias=bias)
            else:  # a transformer's (B, T, d) activations split as one (B*T, d) product
                y = _product(x, weight.T, split, bias)
                if y is not None:
                    return y
                y = rows_matmul(x, weight.T) if x.ndim > 2 else gemm(x, weight.T)
        finally:
            small_gemm_exit(blas)
        if y.dtype != x.dtype:  # numpy computes bfloat16 products in float32
            y = y.astype(x.dtype)
        if bias is not None:
            _kpw.add_row(y, bias)  # y += bias, on the one pool when it is on and y is big
        return y

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        need = ctx.needs_input_grad
        if x._data.size == 0 or grad._data.size == 0:
            return _empty_backward(grad, x, weight, need)
        if _numpy_backward_ok(grad._data, x._data, weight._data):
            return _backward_numpy(grad._data, x._data, weight._data, need)
        gx = gw = gb = None
        n_out, n_in = weight.shape
        if need[0]:
            gx = grad.matmul(weight)                                  # dL/dx = G W
        if need[1]:
            gw = _linear_weight_grad(grad, x, n_out, n_in)
        if len(need) > 2 and need[2]:
            gb = grad.reshape(-1, n_out).sum(0)
        return gx, gw, gb


def _empty_backward(grad, x, weight, need):
    """The gradients when there are no rows, no inputs or no outputs (Linear(0, 3), a batch
    of 0): the reshapes to (-1, n_in) / (-1, n_out) of the other paths are ambiguous there,
    and every sum over an empty axis is 0."""
    n_out, n_in = weight.shape
    gx = grad.matmul(weight) if need[0] else None                    # dL/dx = G W
    gw = _make(np.zeros((n_out, n_in), grad._data.dtype)) if need[1] else None
    gb = None
    if len(need) > 2 and need[2]:
        gb = grad.sum(tuple(range(grad.dim() - 1))) if grad.dim() > 1 else grad
    return gx, gw, gb


_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_F32 = _FLOATS[0]
_NO_BIAS = np.zeros(1, np.float32)

# NOTE [A small Linear on MKL]
# A Linear on a small batch (the 3x256 MLP at batch 8: (8, 256) x (256, 256)^T) is per-call
# cost: OpenBLAS takes x @ W^T (its "TN" case) by its small-matrix kernel in blocks of rows
# (NOTE [OpenBLAS's small-matrix kernel]) in ~17-19 us where MKL's sgemm needs ~10, but MKL
# through ctypes pays ~5 us a call in fixed cost (benchmarks/RESULTS.md, twenty-fifth session,
# helper gen). Here a numba kernel calls MKL's sequential Fortran sgemm by its address
# (ember/_mkl.sgemm_address, as the LSTM loop does) and adds the bias in the same call; the
# backward's dx = G W, dW = G^T X and db are one more such call. Only for float32 C-contiguous
# operands with 2 to _MKL_SMALL_ROWS rows and at most _MKL_SMALL_MACS multiply-adds a product,
# where MKL is loaded (Intel CPUs with the mkl extra: the EPYC keeps the paths below), and not
# in the split-GEMM mode or on the one pool (they run their own products). Results differ from
# OpenBLAS's by rounding (another order of additions; db keeps NumPy's row-by-row sum); tests
# compare them with float64 products. The MLP step in-process, paired, off/on 1.15-1.17 (quiet
# slot): benchmarks/RESULTS.md, twenty-sixth session, helper mlp.
_MKL_SMALL_ROWS = 64
_MKL_SMALL_MACS = 1 << 20
_MKL_SMALL = [True]  # a switch for A/Bs and tests


def _mkl_small(x, weight, bias):
    """MKL's Fortran sgemm address when NOTE [A small Linear on MKL] computes this forward, else
    0."""
    f = _mkl.sgemm_address() if _MKL_SMALL[0] else 0
    if not f or x.dtype != _F32 or x.ndim < 2 or not x.shape[-1]:
        return 0  # (no MKL, as on AMD CPUs: 0.1 us here, not the 0.7 of the checks below)
    rows = x.size // x.shape[-1]
    if (rows < 2 or rows > _MKL_SMALL_ROWS or rows * x.shape[-1] * weight.shape[0] > _MKL_SMALL_MACS
            or weight.dtype != _F32 or not x.flags.c_contiguous or not weight.flags.c_contiguous):
        return 0
    if bias is not None and (bias.dtype != _F32 or bias.shape != weight.shape[:1]
                             or not bias.flags.c_contiguous):
        return 0
    if _ksplit.split_gemms() or _onepool.enabled():
        return 0  # (the split-GEMM mode and the one pool run their own products)
    return f
_ONE_ROW = [True]  # small_linear's one-row form (an A/B switch: benchmarks/generate_ab.py)

# NOTE [One thread for a one-row product]
# NOTE [One BLAS thread for small GEMMs] leaves products below SMALL_GEMM[0] multiply-adds to
# OpenBLAS as they come, since its GEMM runs them on one thread anyway. A one-row product is
# not a GEMM to NumPy but a gemv, and OpenBLAS's gemv splits over both threads from in * out >=
# 2304 * 4 (interface/gemv.c with the default GEMM_MULTITHREAD_THRESHOLD): a decoding step's 17
# products of 64-256 K multiply-adds each hand half their work to the worker. With
# EMBER_GEMV_ONE_THREAD=1 they run on one thread instead (set and restored around the call,
# ~0.7 us; each output element is one dot product whichever thread computes it, so the bits
# are the same). Off by default: the quiet-slot A/Bs disagree. In one process (generate_ab.py
# --switch gemv1, paired) one thread was slower, 0.947 (17:59, load 1.3) and 0.918 (18:19,
# load 1.3); in fresh processes (generate_spread.py, alternating) it was faster, 82.4/64.2
# against 125.6/90.6 ms and per-process medians 124-182 against 134-188 ms (same slots); the
# whole generation at one BLAS thread against two read 1.08 (17:38, load 3.7) and 0.87 (17:58,
# load 1.3); benchmarks/RESULTS.md, twenty-first session, helper gen. /work/quiet21_gen.sh
# takes it again in the lead's window.
_GEMV_THREADED = 2304 * 4
_GEMV_ONE_THREAD = [os.environ.get("EMBER_GEMV_ONE_THREAD", "").strip() == "1"]
_GEMV_PARTS = [True]  # NOTE [One-row products in parts] (a switch for A/Bs and tests)


def small_linear(x, weight, bias):
    """The forward's first branch on arrays, or None when it does not take them: a decoding
    step's (1, 1, d) rows or a small MLP batch, below OpenBLAS's one-thread bound, too small for
    the reuse pool or a split; the bias goes in with the GEMM's result pass (NOTE [GEMM
    orientation]). On the one pool the general path (its add_row)."""
    if x.size == x.shape[-1] and _ONE_ROW[0]:
        # one row (a decoding step's 17 products a token): neither MKL's nor numba's small
        # kernel takes it (both want 2 rows or more), so their checks are skipped
        return _one_row(x, weight, bias)
    f = _mkl_small(x, weight, bias)
    if f:  # NOTE [A small Linear on MKL]
        y = np.empty(x.shape[:-1] + weight.shape[:1], np.float32)
        _ksl.linear_forward(f, x.reshape(-1, x.shape[-1]), weight,
                            _NO_BIAS if bias is None else bias, bias is not None,
                            y.reshape(-1, weight.shape[0]))
        return y
    if _numba_small_ok(x, weight, bias):  # NOTE [A small Linear in numba]
        y = np.empty(x.shape[:-1] + weight.shape[:1], x.dtype)
        _ksg.linear_forward(x.reshape(-1, x.shape[-1]), weight,
                            weight[0] if bias is None else bias, bias is not None,
                            y.reshape(-1, weight.shape[0]))
        return y
    macs = x.size * weight.shape[0]
    if macs > SMALL_GEMM[0] or not _small_ok(x, weight, bias) or _onepool.enabled():
        return None
    y = gemm(x.reshape(-1, x.shape[-1]), weight.T, bias=bias)
    return y.reshape(x.shape[:-1] + weight.shape[:1])


def _one_row(x, weight, bias):
    """small_linear for an x of one row: `_small_ok`'s checks for one row, then the product in
    parts (NOTE [One-row products in parts]) or as a vector (np.dot), or None."""
    n_in, n_out = x.shape[-1], weight.shape[0]
    dt = x.dtype
    macs = n_in * n_out
    if (macs > SMALL_GEMM[0] or x.ndim < 2 or not n_in or dt not in _FLOATS or weight.dtype != dt
            or (bias is not None and bias.dtype != dt) or not x.flags.c_contiguous
            or n_out * x.itemsize >= REUSE_MIN_BYTES or _onepool.enabled()):
        return None
    shape = x.shape[:-1] + (n_out,)
    flags = weight.flags
    if (macs >= _GEMV_THREADED and flags.c_contiguous and _GEMV_PARTS[0]
            and (bias is None or (bias.shape == (n_out,) and bias.flags.c_contiguous))
            and _blas_parts.on("gemv")):
        # where OpenBLAS's gemv would take two threads: NOTE [One-row products in parts]
        return gemv_in_parts(x, weight, bias, shape)
    if flags.forc:
        # as a vector: np.dot reaches the same BLAS gemv as np.matmul on the (1, in) row,
        # bit for bit, for a C- or F-contiguous weight (np.matmul loops without BLAS over a
        # strided one, np.dot copies it; tested in tests/ops/test_unrecorded_fast_paths.py),
        # and the bias adds without broadcasting: 1.3 us of NumPy calls against 2.3. On one
        # BLAS thread: NOTE [One thread for a one-row product]
        blas = blas_threads_enter(1) if macs >= _GEMV_THREADED and _GEMV_ONE_THREAD[0] else 0
        try:
            y = np.dot(x.ravel(), weight.T)
        finally:
            blas_threads_exit(blas)
        if bias is not None:
            y += bias
        return y.reshape(shape)
    return gemm(x.reshape(1, n_in), weight.T, bias=bias).reshape(shape)


def _numba_small_ok(x, weight, bias):
    """Whether NOTE [A small Linear in numba] computes this forward: 2 to SMALL_ROWS rows of one
    float dtype throughout, C-contiguous, at most SMALL_GEMM[1] multiply-adds, on an AVX-512
    host, and not in the split-GEMM mode or on the one pool (they run their own products)."""
    shape = x.shape
    if len(shape) < 2 or not _ksg.forward_ok():
        return False
    k = shape[-1]
    dt = x.dtype
    if not k or x.size > _ksg.SMALL_ROWS * k or x.size < 2 * k or dt not in _FLOATS:
        return False
    return (weight.dtype == dt and weight.shape[-1] == k and weight.shape[0] > 0
            and x.size * weight.shape[0] <= SMALL_GEMM[1]
            and x.flags.c_contiguous and weight.flags.c_contiguous
            and (bias is None or (bias.dtype == dt and bias.shape == weight.shape[:1]
                                  and bias.flags.c_contiguous))
            and not _ksplit.split_gemms() and not _onepool.enabled())


def _small_ok(x, weight, bias):
    """Whether the forward's first branch takes x: C-contiguous, at least 2-D (a 1-D input's
    result is 1-D), one float dtype throughout, the result under the reuse pool's size."""
    return (x.ndim >= 2 and x.shape[-1] > 0 and x.dtype in _FLOATS and x.dtype == weight.dtype
            and (bias is None or bias.dtype == x.dtype) and x.flags.c_contiguous
            and x.size // x.shape[-1] * weight.shape[0] * x.itemsize < REUSE_MIN_BYTES)


def _product(x, wt, split=False, bias=None):
    """x @ W^T (+ bias) over the rows of a C-contiguous float x, into a reused buffer (NOTE
    [Reused buffers] in _backend.py: a transformer's activations are fresh multi-MB arrays every
    step, faulted in page by page otherwise); None for other layouts and dtypes. With ``split``
    the product runs in parts on the kernel threads; otherwise `gemm` adds the bias (in MKL's
    parts when MKL takes the product: NOTE [The bias in MKL's parts] in ember/_mkl.py)."""
    if not (x.flags.c_contiguous and x.dtype in _FLOATS and x.dtype == wt.dtype and x.ndim >= 1
            and x.size and wt.shape[1] and (bias is None or bias.dtype == x.dtype)):
        return None
    out = reusable_empty(x.shape[:-1] + wt.shape[1:], x.dtype)
    x2, out2 = x.reshape(-1, x.shape[-1]), out.reshape(-1, wt.shape[1])
    if split:
        _ksplit.gemm(x2, wt, out=out2)
        if bias is not None:
            _kpw.add_row(out, bias)
    else:
        gemm(x2, wt, out=out2, bias=bias)
    return out


def _rows_in_parts_ok(x, weight, bias):
    """Whether `_rows_in_parts` computes this forward: C-contiguous float x with at least as
    many rows as outputs (else split.gemm splits the columns), one dtype throughout."""
    n_rows = x.size // x.shape[-1] if x.ndim and x.shape[-1] else 0
    return (x.flags.c_contiguous and x.dtype in _FLOATS and x.dtype == weight.dtype
            and n_rows >= weight.shape[0] and (bias is None or bias.dtype == x.dtype))


def _rows_in_parts(x, wt, bias):
    """x @ W^T + b in parts of x's rows on the kernel threads (split-GEMM mode): each part one
    OpenBLAS call on one thread plus the bias added to its rows, so that the bias pass is not
    left to the calling thread alone; into a reused buffer (NOTE [Reused buffers])."""
    out = reusable_empty(x.shape[:-1] + wt.shape[1:], x.dtype)
    x2, out2 = x.reshape(-1, x.shape[-1]), out.reshape(-1, wt.shape[1])

    def part(lo, hi):
        np.matmul(x2[lo:hi], wt, out=out2[lo:hi])
        if bias is not None:
            out2[lo:hi] += bias

    _ksplit.blas_parts(part, x2.shape[0])
    return out


def _numpy_backward_ok(g, x, w):
    """Whether the gradients can be NumPy GEMMs on the arrays: no create_graph (nothing to
    record), one float dtype, at least one row (see `_backward_numpy`)."""
    return (not _state.enabled and g.dtype in _FLOATS and g.dtype == x.dtype == w.dtype
            and g.size > 0 and x.ndim >= 1)


def _backward_numpy(g, x, w, need):
    """(dx, dW, db) as NumPy GEMMs on one 2-D (rows, out) view of the gradient.

    A non-contiguous gradient (attention's q/k/v projection receives one assembled from the
    three heads' gradients) is copied ONCE here; the op-by-op form copied it for dW and again
    for db. dx = G W comes out C-contiguous; dW goes into a reused buffer (NOTE [Reused
    buffers] in _backend.py); db = the column sums of G."""
    n_out, n_in = w.shape
    g2 = np.ascontiguousarray(g).reshape(-1, n_out)
    f = _mkl_small(x, w, None) if n_out > 1 else 0
    if f:  # NOTE [A small Linear on MKL]
        gx = np.empty(x.shape, np.float32)
        gw = reusable_empty((n_out, n_in), np.float32)  # NOTE [Reused buffers]
        gb = np.empty(n_out, np.float32)
        has_b = len(need) > 2 and need[2]
        _ksl.linear_backward(f, g2, x.reshape(-1, n_in), w, gx.reshape(-1, n_in), gw, gb,
                             need[0], need[1], has_b)
        return (_make(gx) if need[0] else None, _make(gw) if need[1] else None,
                _make(gb) if has_b else None)
    gx = gw = gb = None
    blas = small_gemm_enter(g2.shape[0] * n_out * n_in)  # NOTE [One BLAS thread for small GEMMs]
    split = _split(g2.shape[0] * n_out * n_in)
    try:
        if split and need[0] and need[1] and n_out > 1 and not turns_round(g2, w):
            return _backward_pair(g2, x, w, need, kernel_threads=True)
        if need[0] and need[1] and not split and _pair_ok(g2.shape[0], n_out, n_in):
            return _backward_pair(g2, x, w, need)
        if need[0]:
            if n_out == 1:  # an outer product: BLAS's rank-1 GEMM is ~3x slower than a loop
                from .._kernels.outer import outer  # (local: the import block is busy today)
                gx = _make(outer(g2[:, 0], w[0]).reshape(x.shape))
            elif (not split and 2 <= g2.shape[0] <= _ksg.SMALL_ROWS and w.flags.c_contiguous
                  and g2.shape[0] * n_out * n_in <= SMALL_GEMM[1] and _ksg.input_grad_ok()):
                # NOTE [A small Linear in numba]
                out = reusable_empty(x.shape, g.dtype)
                _ksg.input_grad(g2, w, out.reshape(g2.shape[0], n_in))
                gx = _make(out)
            else:
                if split and turns_round(g2, w):
                    gx = _make(_ksplit.gemm_oriented(g2, w).reshape(x.shape))
                else:
                    out = reusable_empty(x.shape, g.dtype)  # NOTE [Reused buffers]
                    (_ksplit.gemm if split else gemm)(g2, w, out=out.reshape(g2.shape[0], n_in))
                    gx = _make(out)
        if need[1]:
            out = reusable_empty((n_out, n_in), g.dtype)
            x2 = x.reshape(-1, n_in)
            if (not split and _ksg.WEIGHT_GRAD_ROWS <= g2.shape[0] <= _ksg.SMALL_ROWS
                    and n_in >= _ksg.WEIGHT_GRAD_MIN_IN and x2.flags.c_contiguous
                    and g2.shape[0] * n_out * n_in <= SMALL_GEMM[1] and _ksg.input_grad_ok()
                    and not _onepool.enabled()):
                _ksg.weight_grad(g2, x2, out)  # NOTE [A small Linear in numba]
            else:
                # dW = G^T X: on the one pool when it is on (NOTE [One pool]), np.matmul
                (_ksplit.gemm if split else _onepool.matmul)(g2.T, x2, out=out)
            gw = _make(out)
        if len(need) > 2 and need[2]:
            gb = _make(_column_sums(g2) if not split else _column_sums_in_parts(g2))
    finally:
        small_gemm_exit(blas)
    return gx, gw, gb


# NOTE [Linear's two gradients at once]
# A Linear's input gradient G W and weight gradient G^T X are independent products with the
# same number of multiply-adds. Issued one after the other, each runs on OpenBLAS's two threads,
# which split it and meet at its end; here they run at the same time, each whole on one
# thread: G W on the calling thread, G^T X on OpenBLAS's worker (a part of `run_ranges`, with
# OpenBLAS set to one thread meanwhile so neither product threads itself), and the bias
# gradient after G W on the caller. Each product is then one call as it would be on one
# thread, so the numbers are those of a one-thread GEMM. Only for products above the
# one-thread range (SMALL_GEMM) and while both threads exist; the user "linear_pair" of
# ember._blas_parts (on by default: the whole-step A/Bs are by its DEFAULT_ON).
# Measured at two threads (quiet slot, dX then dW against the two at once, median of 30, GPT-S's
# shapes at 1024 rows): 90.9 -> 84.9 ms of backward GEMMs a step; proj (256 -> 256) and fc2 (1024
# -> 256) gain 14-18 %, the products with more outputs than inputs 0-3 % (OpenBLAS threads those
# well). The same results as before to rounding: each product is still one BLAS call. When MKL
# computes both products, the two parts are GIL-free numba parts (NOTE [MKL's parts without the
# GIL] in ops/_kernels/mkl_parts.py), db summed on the caller's after G W.
_PAIR_MIN_MACS = SMALL_GEMM[1]


def _pair_ok(rows, n_out, n_in):
    """Whether `_backward_pair` computes this backward (NOTE [Linear's two gradients at
    once]): big enough, not an outer product, the parts on, OpenBLAS at two threads or more,
    and not on the one pool (which runs its own GEMMs)."""
    return (rows * n_out * n_in >= _PAIR_MIN_MACS and n_out > 1
            and _blas_parts.on("linear_pair")
            and _blas_parts.threads() >= 2 and not _onepool.enabled())


def _backward_pair(g2, x, w, need, kernel_threads=False):
    """dx = G W and dW = G^T X at once on two threads, one OpenBLAS thread each, and db after
    dx (NOTE [Linear's two gradients at once]); into reused buffers (NOTE [Reused buffers]).
    On the caller and OpenBLAS's worker, or with ``kernel_threads`` on ember's kernel threads
    (split-GEMM mode: NOTE [Convolution GEMMs on the kernel threads] in ops/_kernels/split.py;
    there OpenBLAS's worker stays asleep)."""
    n_out, n_in = w.shape
    gx = reusable_empty(x.shape, g2.dtype)
    gw = reusable_empty((n_out, n_in), g2.dtype)
    x2 = x.reshape(-1, n_in)
    f = 0 if kernel_threads else _mkl.pair_address(g2, x2, w)
    if f:  # NOTE [MKL's parts without the GIL]
        db = np.empty(n_out, g2.dtype) if len(need) > 2 and need[2] else None
        _kmp.pair(f, g2, x2, w, gx.reshape(g2.shape[0], n_in), gw, db)
        return _make(gx), _make(gw), None if db is None else _make(db)
    gb = [None]

    def first():
        _mkl.matmul_one_thread(g2, w, gx.reshape(g2.shape[0], n_in))  # NOTE [MKL's sgemm]
        if len(need) > 2 and need[2]:
            gb[0] = _make(_column_sums(g2))

    shared = None if kernel_threads else _shared_weight_grad(g2, x2, gw)
    if shared is not None:  # NOTE [The weight gradient shared]

        def run(lo, hi):
            if lo == 0:
                first()
            shared.work()
    else:
        tasks = (first, lambda: _mkl.matmul_one_thread(g2.T, x2, gw))

        def run(lo, hi):
            for i in range(lo, hi):
                tasks[i]()

    before = blas_threads_enter(1)
    try:
        if kernel_threads:
            _kernel_threads.parallel_range(run, 2, 1)
        else:
            _blas_parts.run_ranges(run, 2, 2)
    finally:
        blas_threads_exit(before)
    if shared is not None and shared.errors:
        raise shared.errors[0]
    return _make(gx), _make(gw), gb[0]


# NOTE [The weight gradient shared]
# The two products of NOTE [Linear's two gradients at once] have the same multiply-adds, but not
# the same speed: the worker's G^T X reads G (just written by the caller) transposed, and it
# ended 0.3-1 ms after the caller's G W and column sums (GPT-S's step waited 16 ms in its 17
# pairs, AlexNet-S's 5.6 ms in 2, GNMT-S's 2.5 ms in 3; /work/s35/busy.py under chrt -f 10).
# When NOTE [A GEMM in numba] computes G^T X by nn_rows, its rows are instead cut in chunks of
# a multiple of 4 rows that the worker claims from the start and the caller joins once its own
# product and the column sums are done, so the two finish together. Each row is computed by the
# same kernel over the same groups of 4 rows as in one call: the bits do not change.
_SHARED_CHUNKS = 8


def _shared_weight_grad(g2, x2, gw):
    """The chunks of dW = G^T X as a claimable task (NOTE [The weight gradient shared]), or None
    when NOTE [A GEMM in numba] would not compute it by nn_rows."""
    from .._kernels import gemm as _kgemm
    a = g2.T
    if not _kgemm.takes(a, x2, gw) or _kgemm._kernel(a, x2) != "nn":
        return None
    n_out = gw.shape[0]
    rows = 4 * -(-n_out // (4 * _SHARED_CHUNKS))
    bounds = list(range(0, n_out, rows)) + [n_out]
    no_bias = gw[0]

    def chunk(lo, hi):
        _kgemm.nn_rows(a, x2, gw, no_bias, False, lo, hi)

    return _kernel_threads._Task(chunk, bounds)


def _column_sums_in_parts(g2):
    """`_column_sums` in parts of the columns on the kernel threads, each on one OpenBLAS thread
    (split-GEMM mode: on two, BLAS's matrix-vector product would wake OpenBLAS's spinning
    worker beside the kernel threads)."""
    out = np.empty(g2.shape[1], g2.dtype)
    _ksplit.blas_parts(lambda lo, hi: np.copyto(out[lo:hi], _column_sums(g2[:, lo:hi])),
                       g2.shape[1])
    return out


def _column_sums(g2):
    """The column sums of a C-contiguous (rows, out) array (the bias gradient), row after row by
    a numba loop (ops/_kernels/reduce.column_sums: np.add.reduce(axis=0)'s order and bits, ~1.3x
    faster on GPT-S's (1024, 768), as fast as BLAS against a vector of ones). One algorithm for
    every path - eager, Linear's two gradients at once in GIL-free parts (NOTE [MKL's parts
    without the GIL]) and a compiled replay - so they agree bit for bit."""
    if g2.dtype not in _FLOATS or g2.ndim != 2 or not g2.flags.c_contiguous:
        return np.add.reduce(g2, axis=0)
    out = np.empty(g2.shape[1], g2.dtype)
    _kreduce.column_sums(g2, out)
    return out


def _linear_weight_grad(grad, x, n_out, n_in):
    """dL/dW = G^T X. Without create_graph it is one NumPy GEMM into a reused buffer (the
    result becomes weight.grad: NOTE [Reused buffers] in _backend.py); with it, ember
    ops, so that double backward works."""
    g, a = grad._data, x._data
    if _state.enabled or g.dtype != a.dtype or g.dtype not in _FLOATS:
        return grad.reshape(-1, n_out).t().matmul(x.reshape(-1, n_in))
    out = reusable_empty((n_out, n_in), g.dtype)
    _onepool.matmul(g.reshape(-1, n_out).T, a.reshape(-1, n_in), out=out)  # NOTE [One pool]
    return _make(out)
