"""One pool of threads for ember's GEMMs and its parallel kernels (NOTE [One pool]).

    from ember import _onepool
    _onepool.matmul(a, b, out=out)          # np.matmul, split over the pool when it is on
    _k_gelu = _onepool.twin(_gelu_loop)     # a prange loop compiled serial and parallel
    _k_gelu.pick(x.size)(x, out)            # the parallel one when the pool is on and x is big

NOTE [One pool]
On two cores, two thread pools fight. OpenBLAS's idle worker spins for ~0.1 s after each GEMM
(NOTE [Kernel threads] in _kernel_threads.py), so any other pool that wakes in that time - ember's
Python kernel threads, numba's OpenMP workers - shares its core with a spinner: every scheme that
ran ember's non-GEMM kernels on a second thread beside OpenBLAS's threaded GEMMs lost on a quiet
machine. torch has one OpenMP pool for its GEMMs and its elementwise work. This module gives ember
the same: numba's threading layer (OpenMP or TBB) runs both.
- A GEMM with enough work is cut into blocks of rows (or of columns, when the result is wide and
  short), and one numba parallel loop hands the blocks to the pool; each block calls OpenBLAS's
  sgemm/dgemm through scipy's BLAS table at one thread, so OpenBLAS's own workers never wake.
  Blocks compute whole output rows over the full K axis, so results do not depend on the split.
- A kernel written with prange is compiled twice (`twin`): serially, for small inputs and for
  when the pool is off, and with ``parallel=True``.
- While the pool is on, both OpenBLAS libraries (numpy's and scipy's) run one thread: a GEMM that
  does not come through here runs on one core instead of waking a spinner beside the pool.
The pool is off by default until a quiet-machine A/B says otherwise: EMBER_ONE_POOL=1 turns it
on (read at first use; `set_enabled` for tests and A/Bs). It is never on in a forked child (GNU
OpenMP cannot run in the child of a process that used it), nor with numba's workqueue layer,
which aborts when two threads launch parallel loops at once, nor at one thread.
"""
from __future__ import annotations

import os
import types as types_module

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core.extending import get_cython_function_address, intrinsic

from . import _mkl

__all__ = ["enabled", "set_enabled", "matmul", "twin", "MIN_MACS"]

# A GEMM under this many multiply-adds runs as one np.matmul call: launching the pool costs a
# few microseconds, a 64x256x256 product ~70 us on one core.
MIN_MACS = 1 << 20
# Blocks of rows or columns start at multiples of this (whole SIMD panels for sgemm's kernels).
_ALIGN = 16

_on = [None]          # None: not decided yet; then True / False
_forced = [None]      # set_enabled's value, over the environment


def _decide():
    want = _forced[0]
    if want is None:
        want = os.environ.get("EMBER_ONE_POOL", "").strip() == "1"
    on = bool(want) and numba.config.NUMBA_NUM_THREADS >= 2 and _layer_ok()
    if on:
        _blas_one_thread()
    _on[0] = on
    return on


def enabled():
    """Whether GEMMs and twin kernels run on the pool now."""
    on = _on[0]
    return _decide() if on is None else on


def set_enabled(flag):
    """Turn the pool on (True), off (False) or back to EMBER_ONE_POOL (None); returns the
    previous state. BLAS thread counts are restored when it goes off."""
    before = enabled()
    _forced[0] = flag
    _decide()
    if before and not _on[0]:
        _blas_restore()
    return before


def _after_fork_in_child():
    _on[0] = False
    _forced[0] = False


os.register_at_fork(after_in_child=_after_fork_in_child)


@numba.njit(parallel=True, cache=True)
def _probe(n):
    s = 0
    for i in numba.prange(n):
        s += i
    return s


_layer = [None]


def _preload_tbb():
    """numba picks TBB first (it never makes the caller wait for a descheduled worker: on a busy
    machine an OpenMP loop here waited ~20 ms for its second thread). The `tbb` wheel puts
    libtbb.so.12 in the environment's lib/, which numba's extension does not search in a
    virtual environment: load it globally first so that numba finds it by name."""
    import ctypes
    import sys
    path = os.path.join(sys.prefix, "lib", "libtbb.so.12")
    if sys.platform.startswith("linux") and os.path.exists(path):
        try:
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError:  # unusable: numba falls back to OpenMP
            pass


def _layer_ok():
    if _layer[0] is None:
        try:
            _preload_tbb()
            _probe(4)
            _layer[0] = numba.threading_layer() in ("omp", "tbb")
        except Exception:  # no usable threading layer: the pool stays off
            _layer[0] = False
    return _layer[0]


# ---- BLAS thread counts ----------------------------------------------------------------

_saved = []  # (controller, threads before) of each OpenBLAS set to one thread


def _blas_one_thread():
    if _saved:
        return
    try:
        import scipy.linalg.cython_blas  # noqa: F401  (loads scipy's OpenBLAS)
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return
    for lib in ThreadpoolController().lib_controllers:
        if lib.internal_api == "openblas":
            _saved.append((lib, lib.num_threads))
            lib.set_num_threads(1)


def _blas_restore():
    while _saved:
        lib, n = _saved.pop()
        lib.set_num_threads(n)


# ---- GEMM ------------------------------------------------------------------------------

@intrinsic
def _call13(typingctx, address, args):
    """Call the C function at `address` with the 13 pointer-sized integers in `args` (BLAS's
    Fortran gemm takes every argument by pointer). The address is an argument rather than a
    global, so that a kernel using this is cached on disk (the library's address changes from
    one process to the next)."""
    if not (isinstance(args, types.UniTuple) and args.count == 13
            and isinstance(args.dtype, types.Integer)):
        return None

    def codegen(context, builder, signature, llargs):
        word = ir.IntType(64)
        fnty = ir.FunctionType(ir.VoidType(), [word] * 13)
        fn = builder.inttoptr(llargs[0], fnty.as_pointer())
        builder.call(fn, [builder.extract_value(llargs[1], i) for i in range(13)])
        return context.get_dummy_value()

    return types.void(address, args), codegen


_ADDRESSES = {}


def _routine(dtype):
    """The address of sgemm / dgemm in scipy's BLAS table."""
    r = _ADDRESSES.get(dtype)
    if r is None:
        r = _ADDRESSES[dtype] = get_cython_function_address(
            "scipy.linalg.cython_blas", "sgemm" if dtype == np.float32 else "dgemm")
    return r


@numba.njit(parallel=True, nogil=True, cache=True)
def _k_gemm_blocks(f, scalars, ta, tb, a, lda, oa, b, ldb, ob, c, ldc, oc, m, n, k, bounds, rows):
    """Row-major C[p] = op(A[p]) @ op(B[p]) for each plane p, each product cut into the blocks of
    rows (rows=True) or columns given by `bounds`; one BLAS call per (plane, block). f is the
    address of sgemm/dgemm; a/b/c are addresses, lda/ldb/ldc leading dimensions and oa/ob/oc
    the byte offsets of each operand's planes (one per product); ta/tb say that A/B is stored
    transposed (column-major). `scalars` holds alpha = 1 and beta = 0."""
    nb = bounds.size - 1
    item = scalars.itemsize
    u = np.uint64
    for t in numba.prange(oc.size * nb):
        p = t // nb
        lo = bounds[t % nb]
        hi = bounds[t % nb + 1]
        args = np.empty(6, np.int32)
        flags = np.empty(2, np.uint8)
        # column-major view: C^T (n x m) = op(B)^T (n x k) @ op(A)^T (k x m)
        flags[0] = 84 if tb else 78  # 'T' / 'N'
        flags[1] = 84 if ta else 78
        a_at = a + oa[p]
        b_at = b + ob[p]
        c_at = c + oc[p]
        if rows:
            args[0] = n
            args[1] = hi - lo
            a_at += lo * (1 if ta else lda) * item
            c_at += lo * ldc * item
        else:
            args[0] = hi - lo
            args[1] = m
            b_at += lo * (ldb if tb else 1) * item
            c_at += lo * item
        args[2] = k
        args[3] = ldb
        args[4] = lda
        args[5] = ldc
        # args and flags are named in the call itself: numba frees a local array after the
        # last statement naming it, so an address taken earlier could outlive its memory
        sp = scalars.ctypes.data
        _call13(f, (u(flags.ctypes.data), u(flags.ctypes.data + 1), u(args.ctypes.data),
                    u(args.ctypes.data + 4), u(args.ctypes.data + 8), u(sp), u(b_at),
                    u(args.ctypes.data + 12), u(a_at), u(args.ctypes.data + 16), u(sp + item),
                    u(c_at), u(args.ctypes.data + 20)))


_SCALARS = {np.dtype(np.float32): np.array([1.0, 0.0], np.float32),
            np.dtype(np.float64): np.array([1.0, 0.0], np.float64)}


def _layout(x, item):
    """(transposed, leading dimension) of the last two axes of x for BLAS, or None when neither
    axis is unit-stride."""
    s0, s1 = x.strides[-2] // item, x.strides[-1] // item
    r, c = x.shape[-2], x.shape[-1]
    if s1 == 1 or c == 1:
        return False, max(s0, c, 1)
    if s0 == 1 or r == 1:
        return True, max(s1, r, 1)
    return None


_OFFSETS = {}  # (batch shape, batch strides) -> byte offset of each plane, C order


def _offsets(batch, x):
    """The byte offset of each of x's planes (its last two axes) for a product over the batch
    shape `batch`; x's batch axes align on the right and broadcast (size 1, or missing)."""
    lead = len(batch) - (x.ndim - 2)
    strides = (0,) * lead + tuple(0 if x.shape[i] == 1 else x.strides[i]
                                  for i in range(x.ndim - 2))
    key = (batch, strides)
    off = _OFFSETS.get(key)
    if off is None:
        off = np.zeros((), np.int64)
        for d, (size, stride) in enumerate(zip(batch, strides)):
            if stride:
                shape = [1] * len(batch)
                shape[d] = size
                off = off + np.arange(size, dtype=np.int64).reshape(shape) * stride
        off = np.ascontiguousarray(np.broadcast_to(off, batch)).reshape(-1)
        if len(_OFFSETS) >= 512:
            _OFFSETS.clear()
        _OFFSETS[key] = off
    return off


def _bounds(size, parts):
    blocks = -(-size // _ALIGN)
    parts = max(1, min(parts, blocks))
    return np.array([min(size, _ALIGN * (blocks * i // parts)) for i in range(parts + 1)],
                    np.int64)


def matmul(a, b, out=None):
    """np.matmul(a, b, out=out), run on the pool when it is on and the product is big enough:
    float32/float64 operands whose last two axes have a unit stride, any batch axes (broadcast
    as np.matmul does). Other cases, and everything when the pool is off, are one np.matmul."""
    if not enabled():
        return _mkl.matmul(a, b, out=out)  # np.matmul unless MKL takes it: NOTE [MKL's sgemm]
    if a.ndim < 2 or b.ndim < 2 or a.dtype != b.dtype or a.dtype not in _SCALARS:
        return np.matmul(a, b, out=out)
    m, k = a.shape[-2], a.shape[-1]
    n = b.shape[-1]
    try:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:  # np.matmul raises its own error
        return np.matmul(a, b, out=out)
    planes = 1
    for size in batch:
        planes *= size
    if b.shape[-2] != k or m * n * k * planes < MIN_MACS or min(m, n) < _ALIGN:
        # (BLAS's matrix-vector path is many times faster than a block GEMM with n = 1)
        return np.matmul(a, b, out=out)
    item = a.itemsize
    la, lb = _layout(a, item), _layout(b, item)
    if la is None or lb is None:
        return np.matmul(a, b, out=out)
    shape = batch + (m, n)
    if out is None:
        out = np.empty(shape, a.dtype)
    elif (out.shape != shape or out.dtype != a.dtype or out.strides[-1] != item
          or out.strides[-2] < n * item):
        return np.matmul(a, b, out=out)
    threads = numba.get_num_threads()
    if planes >= threads:  # whole planes
        bounds, rows = np.array([0, m], np.int64), True
    elif m >= n or m >= 2 * _ALIGN * threads:
        bounds, rows = _bounds(m, threads), True
    else:
        bounds, rows = _bounds(n, threads), False
    _k_gemm_blocks(_routine(a.dtype), _SCALARS[a.dtype], la[0], lb[0], a.ctypes.data, la[1],
                   _offsets(batch, a), b.ctypes.data, lb[1], _offsets(batch, b),
                   out.ctypes.data, out.strides[-2] // item, _offsets(batch, out), m, n, k,
                   bounds, rows)
    return out


# ---- kernels compiled twice ------------------------------------------------------------

# A twin kernel's parallel version is used from this many units of work (elements, or whatever
# the caller counts): below it, launching the pool costs more than the second core saves.
MIN_WORK = 1 << 15


def _renamed(fn, suffix):
    """A copy of fn under another qualified name. numba's disk cache keys a compiled version by
    the function's name, line and signature, not by its compile options: without the copy, the
    serial and the parallel twin share one cache entry and a later process loads whichever was
    compiled first for both."""
    copy = types_module.FunctionType(fn.__code__, fn.__globals__, fn.__name__ + suffix,
                                     fn.__defaults__, fn.__closure__)
    copy.__qualname__ = fn.__qualname__ + suffix
    copy.__module__ = fn.__module__
    copy.__doc__ = fn.__doc__
    return copy


class Twin:
    """A python loop (prange marks its parallel axis) compiled serially and with parallel=True;
    `pick(work)` returns the one to call."""

    def __init__(self, fn, min_work, options):
        self.serial = numba.njit(nogil=True, cache=True, **options)(fn)
        self.parallel = numba.njit(nogil=True, cache=True, parallel=True, **options)(
            _renamed(fn, "_parallel"))
        self.min_work = min_work
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__

    def pick(self, work):
        if work >= self.min_work and (_on[0] if _on[0] is not None else enabled()):
            return self.parallel
        return self.serial

    def __call__(self, *args):
        return self.serial(*args)


def twin(fn=None, *, min_work=MIN_WORK, **options):
    """Decorator: compile `fn` serially and in parallel (NOTE [One pool]); call `.pick(work)`
    to choose. Calling the result directly runs the serial version."""
    if fn is None:
        return lambda f: Twin(f, min_work, options)
    return Twin(fn, min_work, options)
