"""The array backend and the device layer: the one place that knows tensors live in NumPy arrays.

Everything that allocates or inspects raw storage goes through here, so that an accelerator
backend later replaces this module rather than code spread across the package.
"""
from __future__ import annotations

import math
import sys

import numpy as np

from . import _mkl, _onepool

_pool_on = _onepool._on  # [None | bool]: see NOTE [One pool]

xp = np  # the array module tensors are stored in


class device:
    """``ember.device("cpu")``: where a tensor lives. Only the CPU holds data today.

    ``ember.device("cuda")`` can be constructed (code that names it keeps working), but moving a
    tensor there raises, since ember has no CUDA backend on this machine.
    """

    __slots__ = ("type", "index")
    _KNOWN = ("cpu", "cuda", "mps", "meta", "xpu")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if not isinstance(type, str):
            raise TypeError(f"device(): expected a string or device, got {type!r}")
        if ":" in type:
            type, _, idx = type.partition(":")
            if index is not None or not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}:{idx}'")
            index = int(idx)
        if type not in self._KNOWN:
            raise RuntimeError(f"Expected one of {', '.join(self._KNOWN)} device type at start "
                               f"of device string: {type}")
        self.type, self.index = type, index

    def __eq__(self, other):
        # only devices compare equal, as torch's: device("cpu") == "cpu" is False there, and a
        # string that names no device ("auto", cleanrl's buffers) compares unequal, no error
        if not isinstance(other, device):
            return NotImplemented
        return (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    # ``with torch.device(d):`` makes d the default of the factories inside (the CPU or
    # "meta"); entering another device raises at once (torch raises at the first factory call
    # inside the block)
    def __enter__(self):
        _DEFAULT_STACK.append(DEFAULT[0])
        DEFAULT[0] = check_device(self)
        return self

    def __exit__(self, *exc):
        DEFAULT[0] = _DEFAULT_STACK.pop()
        return False


CPU = device("cpu")
# the device factories use when none is given: set_default_device, `with ember.device(d):`
DEFAULT = [CPU]
_DEFAULT_STACK = []


def get_device_module(device=None):
    """The ``ember.<type>`` module of a device (``ember.cpu`` for "cpu", ``ember.cuda`` for
    "cuda:0"); with no device, the current accelerator's, which in ember is the CPU's."""
    if device is None:
        kind = "cpu"  # ember.accelerator.current_accelerator() is None
    else:
        kind = _device_class(device).type
    module = getattr(sys.modules["ember"], kind, None)
    if not isinstance(module, type(sys)):
        raise RuntimeError(f"Device '{kind}' does not have a corresponding module registered "
                           f"as 'torch.{kind}'.")
    return module


_device_class = device  # get_device_module's argument is named `device`, as torch's


class NoCudaError(AssertionError, RuntimeError):
    """A CUDA device was asked for. torch's CPU build raises AssertionError for tensor and module
    moves (`x.cuda()`, `x.to("cuda")`, `zeros(..., device="cuda")`) and RuntimeError for others
    (sparse constructors, legacy constructors, `load(map_location="cuda")`): this is both."""


def check_device(d) -> device:
    """Validate a requested device; anything but the CPU raises a clear error."""
    if d is None:
        return CPU
    d = d if isinstance(d, device) else device(d) if isinstance(d, str) else None
    if d is None:
        raise TypeError("expected a device (ember.device or string such as 'cpu')")
    if d.type != "cpu":
        if d.type == "meta":
            return d
        if d.type == "cuda":
            raise NoCudaError("Torch not compiled with CUDA enabled: no CUDA device is "
                              "available to ember on this machine (ember.cuda.is_available() "
                              "is False). Use device='cpu'.")
        raise RuntimeError(f"device '{d}' is not available to ember on this machine; "
                           "only 'cpu' is supported.")
    return CPU


def data_ptr(a) -> int:
    """Address of the first element of an array."""
    return a.__array_interface__["data"][0]


# NOTE [Reused buffers]
# Big fresh arrays are fresh pages: glibc hands large freed blocks back to the kernel (munmap, or
# trimming the top of the heap), and the first touch of each page of the next allocation is a page
# fault. A training step allocates the same arrays every time (activations in forward, gradients
# in backward, parameter gradients that live until zero_grad()), so without reuse a conv net takes
# thousands of faults per step, a tenth of its time in the kernel. `reusable_empty` keeps the
# arrays it hands out and returns one again once its reference count shows that nothing but this
# pool refers to it; the kernels that produce a step's big results (conv outputs, kept im2col
# matrices and weight gradients, batch norm, relu/hardtanh and their gradients, Linear and LSTM
# weight gradients) allocate through it. AccumulateGrad's no-copy rule counts the pool's
# reference, and the profiler counts a pooled buffer once. The pool is bounded (per shape and in
# bytes; when full it drops arrays nobody holds, so a model trained later in the process gets
# room); the memory it keeps is memory a step needs again anyway, so a step's peak barely moves.
# It is like torch's caching allocator on CUDA, which keeps freed blocks for reuse; torch's CPU
# allocator does not. A buffer is free only when no other frame holds it, and under the GIL two
# threads cannot both see it free. Off where reference counts are not exact.
# Measured with `python benchmarks/table1.py` (peak MB) and minor faults per step from getrusage
# over 10 steps; the figures are in benchmarks/RESULTS.md, "Figures behind the design notes".
_REUSE = {}       # (shape, dtype) -> arrays handed out
_REUSE_IDS = set()  # their ids, for `is_reused`
_REUSE_BYTES = [0]
_REUSE_PER_SHAPE = 16
_REUSE_LIMIT = 512 << 20
# Smaller arrays come from malloc's heap without faults; pooling them would only cost lookups
_REUSE_MIN_BYTES = REUSE_MIN_BYTES = 1 << 17  # public: callers test it before a lookup
# References to a pooled array nobody else holds, seen inside the loop of `reusable_empty`: the
# pool's list, the loop variable and getrefcount's argument (exact on CPython before 3.14)
_FREE_REFS = 3
_COUNTS_EXACT = sys.implementation.name == "cpython" and sys.version_info < (3, 14)


def reusable_empty(shape, dtype):
    """An uninitialised C-contiguous array, reusing one this function handed out earlier that
    nothing references any more; see NOTE [Reused buffers]."""
    dtype = np.dtype(dtype)
    if not _COUNTS_EXACT or math.prod(shape) * dtype.itemsize < _REUSE_MIN_BYTES:
        return np.empty(shape, dtype)
    key = (tuple(shape), dtype)
    pool = _REUSE.setdefault(key, [])
    for a in pool:
        if sys.getrefcount(a) <= _FREE_REFS:
            return a
    a = np.empty(shape, dtype)
    if len(pool) < _REUSE_PER_SHAPE:
        if _REUSE_BYTES[0] + a.nbytes > _REUSE_LIMIT:
            _evict_free(a.nbytes)
        if _REUSE_BYTES[0] + a.nbytes <= _REUSE_LIMIT:
            pool.append(a)
            _REUSE_IDS.add(id(a))
            _REUSE_BYTES[0] += a.nbytes
    return a


def _evict_free(nbytes):
    """Drop pooled arrays that nobody holds, oldest shapes first, until nbytes more fit under
    the limit. A full pool would otherwise keep the buffers of a model trained earlier in the
    process and leave a later model's to fresh pages every step (ResNet-50 after VGG-19 and
    AlexNet-S in one process: 207 ms per step instead of 190)."""
    for key in list(_REUSE):
        pool = _REUSE[key]
        for i in range(len(pool) - 1, -1, -1):
            a = pool[i]
            if sys.getrefcount(a) <= _FREE_REFS:  # the list, `a` and the argument
                del pool[i]
                _REUSE_IDS.discard(id(a))
                _REUSE_BYTES[0] -= a.nbytes
            del a
            if _REUSE_BYTES[0] + nbytes <= _REUSE_LIMIT:
                break
        if not pool:
            del _REUSE[key]
        if _REUSE_BYTES[0] + nbytes <= _REUSE_LIMIT:
            return


def is_reused(a):
    """Whether the reuse pool holds a reference to array a (one more than its users')."""
    return id(a) in _REUSE_IDS


def reusable_like(a):
    """`reusable_empty` shaped like a for a C-contiguous float array a, else None (for a
    ufunc's ``out=``: None lets NumPy allocate, following a's layout)."""
    if a.dtype.kind == "f" and a.flags.c_contiguous and a.nbytes >= _REUSE_MIN_BYTES:
        return reusable_empty(a.shape, a.dtype)
    return None


def row_order(a):
    """The order of a's leading (row) axes that makes ``a.transpose(order)`` C-contiguous when a
    is a permuted dense array with its last axis innermost (elementwise results of permuted
    inputs are); the identity otherwise (reshape then copies)."""
    ident = tuple(range(a.ndim))
    if a.flags.c_contiguous:
        return ident
    order = tuple(sorted(range(a.ndim - 1), key=lambda d: -a.strides[d])) + (a.ndim - 1,)
    return order if a.transpose(order).flags.c_contiguous else ident


# NOTE [GEMM orientation]
# A product x @ W^T with few rows in x (a Linear layer on a small batch, an RNN's recurrent
# product h @ W_hh^T) reaches NumPy as a C-contiguous x and a transposed view of the
# C-contiguous weight. OpenBLAS runs that case far below its speed for the same product
# written the other way round, W @ x^T, whose result is the transpose (float32, 2-64 rows; up to
# twice as fast turned round, the transposed copy of the (rows, N) result included). With a
# C-contiguous right operand, with one row (BLAS's matrix-vector path), with more than 64 rows
# or in float64 the plain call is as fast or faster, so only that case turns round.
# Measured by `python benchmarks/kernels.py --only gemm`; figures in benchmarks/RESULTS.md.
_NT_MAX_ROWS = 64


def turns_round(a, b):
    """Whether `gemm` computes a @ b as (b^T @ a^T)^T; see NOTE [GEMM orientation]."""
    # cheapest tests first: the row count (a decoding step's one row: 0.3 us here against 0.8
    # with the flags first), then a C-contiguous right operand (never turned)
    return (a.ndim == 2 and 2 <= a.shape[0] <= _NT_MAX_ROWS and b.ndim == 2
            and not b.flags.c_contiguous and a.dtype == np.float32 and b.dtype == np.float32
            and a.flags.c_contiguous and b.T.flags.c_contiguous)


# NOTE [OpenBLAS's small-matrix kernel]
# OpenBLAS's SkylakeX build (the one it picks on AVX-512 CPUs) computes small products by a
# kernel that skips the packing of both operands. For the case of NOTE [GEMM orientation] (x @
# W^T: to OpenBLAS, column-major, a "TN" product of W^T by x) it is allowed only while rows * N
# <= 1200, K >= 32 and rows * N * K <= 1e6 (kernel/x86_64/sgemm_small_kernel_permit_skylakex.c);
# above that the product packs all of W every call, which is what made x @ W^T slow at a few
# rows. A product allowed whole is therefore done as it comes (no turn, no copy), and one with a
# few more rows in blocks of rows that each are allowed (one row at N = 1024, four at N = 256):
# (8, 256) @ (256, 256)^T 52 us whole, 30 us turned round, 16 us as two blocks of four rows
# (one thread). Blocks pay while they are few (each call costs ~1 us and re-reads W): at most
# two, or four when K >= 128 (from timing whole, blocked and turned products over 2-64 rows,
# K 64-512, N 64-1024: benchmarks/RESULTS.md, sixteenth session; `python
# benchmarks/kernels.py --only "gemm x@W^T (8,256)"` times that case against torch).
# Each output row is still one dot product per column over the whole of K, computed by the same
# kernel whichever block holds it.
_SMALL_MN, _SMALL_MNK, _SMALL_K = 1200, 1_000_000, 32
_small_kernel = [None]  # whether numpy's OpenBLAS has the kernel (known on first use)


def _has_small_kernel():
    if _small_kernel[0] is None:
        _small_kernel[0] = False
        try:
            from threadpoolctl import threadpool_info
            for info in threadpool_info():
                if info.get("internal_api") == "openblas" and "numpy" in info.get("filepath", ""):
                    arch = str(info.get("architecture", "")).lower()
                    _small_kernel[0] = arch in ("skylakex", "cooperlake", "sapphirerapids")
        except Exception:  # no threadpoolctl: keep the turned product
            pass
    return _small_kernel[0]


def small_kernel_rows(a, b):
    """Rows per block for which OpenBLAS's small-matrix kernel takes a @ b (NOTE [OpenBLAS's
    small-matrix kernel]): a's row count when the product is taken whole, fewer when it runs in
    a few blocks, 0 when it is not taken. For the operands of `turns_round` only."""
    rows, k = a.shape
    n = b.shape[1]
    per_block = min(rows, _SMALL_MN // n) if n else 0
    if k < _SMALL_K or per_block == 0 or per_block * n * k > _SMALL_MNK:
        return 0
    blocks = -(-rows // per_block)
    if blocks > (4 if k >= 128 else 2) or not _has_small_kernel():
        return 0
    return per_block


def gemm(a, b, out=None, bias=None):
    """np.matmul(a, b, out=out) (+ bias, a row broadcast over the result's rows), turned round
    for the 2-D case of NOTE [GEMM orientation] unless OpenBLAS's small-matrix kernel takes it
    (NOTE [OpenBLAS's small-matrix kernel]); out, if given, is C-contiguous. A turned product
    adds the bias in the pass that copies the transpose into place (one pass less)."""
    matmul = _mkl.matmul if _pool_on[0] is False else _onepool.matmul  # NOTE [MKL's sgemm]
    rows = 0
    if turns_round(a, b):
        rows = small_kernel_rows(a, b) if matmul is _mkl.matmul else 0
        if not rows:
            return _gemm_turned(matmul, a, b, out, bias)
    if rows and rows < a.shape[0]:
        if out is None:
            out = np.empty((a.shape[0], b.shape[1]), a.dtype)
        for lo in range(0, a.shape[0], rows):
            matmul(a[lo:lo + rows], b, out=out[lo:lo + rows])
    elif matmul is _mkl.matmul:  # the bias in the product's parts: NOTE [The bias in MKL's parts]
        return matmul(a, b, out=out, bias=bias)
    else:
        out = matmul(a, b, out=out)
    return out if bias is None else _mkl.add_bias(out, bias)


def _gemm_turned(matmul, a, b, out, bias):
    """a @ b (+ bias) as (b^T @ a^T)^T: NOTE [GEMM orientation]."""
    prod_t = matmul(b.T, a.T)  # (N, M)
    if out is None:
        out = np.empty((a.shape[0], b.shape[1]), a.dtype)
    if bias is None:
        np.copyto(out, prod_t.T)
    else:
        np.add(prod_t.T, bias, out=out)
    return out
