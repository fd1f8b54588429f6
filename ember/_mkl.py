"""MKL's sgemm for ember's large float32 products, when the `mkl` wheel is installed.

    from ember import _mkl
    _mkl.matmul(a, b, out)     # np.matmul(a, b, out=out), by MKL when it takes the product

NOTE [MKL's sgemm]
On the Intel Xeon of the twenty-third session MKL 2026.2's sgemm on one thread ran the GPT-S,
ResNet-50 and GNMT-S training steps' products 9-22 % faster than numpy's OpenBLAS 0.3.31
(SkylakeX kernels); benchmarks/mkl_gemm.py, benchmarks/RESULTS.md. MKL's own threads would be a
second pool beside OpenBLAS's, whose worker spins after each GEMM and runs ember's parts (NOTE
[Kernels on OpenBLAS's threads] in _blas_parts.py): after an MKL GEMM at two threads a pass in
parts on OpenBLAS's threads took 24.1 ms against 12.8 after an OpenBLAS GEMM, and with
KMP_BLOCKTIME=0 MKL pays a wake-up on every product. So MKL is loaded with its sequential layer
and never starts a thread:
- a product of at least MIN_MACS multiply-adds is cut in two halves of rows (of columns when the
  result is wider than tall), one part each on OpenBLAS's threads (`run_ranges`), each half one
  MKL call on one thread. In halves MKL won only from ~200 M multiply-adds (GPT-S's 1024 x 1024
  x 256: 1.05-1.08x OpenBLAS at two threads) and lost below (ResNet-50's 8-75 M: 0.78-0.87x);
  the halves are GIL-free numba parts (NOTE [MKL's parts without the GIL] in
  ops/_kernels/mkl_parts.py);
- inside a part (Linear's two gradients at once, NOTE [Linear's two gradients at once] in
  ops/nn/linear.py) a product of MIN_MACS_ONE_THREAD or more is one MKL call on its thread
  (GPT-S's: 1.10x OpenBLAS on one thread, paired).
Steps (benchmarks/ab.py, paired, both orders, quiet slots): GPT-S 1.07-1.10x, AlexNet-S
1.07-1.09x, GNMT-S 1.01-1.05x; ResNet-50, VGG-19, MobileNetV2 and NCF make no MKL call. Each output
element is one dot product over the whole of K in either library, so the halves do not change
the numbers; they may differ from OpenBLAS's by rounding (another summation order).
MKL is used only on an Intel CPU (the EPYC figures stay OpenBLAS's) and can be switched off
with EMBER_MKL=0; it is found where the `mkl` wheel (the mkl extra) puts it,
sys.prefix/lib/libmkl_rt.so.*, or by the system loader.
"""
from __future__ import annotations

import ctypes
import os
import sys

import numpy as np

# Products under this many multiply-adds stay with OpenBLAS: in two parts MKL lost on
# ResNet-50's and GNMT-S's products of 8-75 M multiply-adds (a part's hand-off and MKL's
# per-call cost) and won from ~200 M (GPT-S's 1024 x 1024 x 256).
MIN_MACS = 1 << 27
# ... and on one thread (inside a part: Linear's two gradients at once), from here: with 2^22
# NCF's 4096 x 64 x 32 gradients went to MKL and its step lost 3-5 % (ab.py, both orders)
MIN_MACS_ONE_THREAD = 1 << 24
_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112
_SEQUENTIAL = 1  # MKL_THREADING_SEQUENTIAL
_F32 = np.dtype(np.float32)

_sgemm = [None]  # None: not looked for yet; False: unavailable or off; else cblas_sgemm
_fortran = [0]   # the address of MKL's Fortran sgemm_ once loaded (0: none)
_on = [True]     # an A/B switch (benchmarks/ab.py); EMBER_MKL=0 is read at first use
_no_gil = [True]  # NOTE [MKL's parts without the GIL] (an A/B switch: off = Python parts)


def _intel():
    try:
        with open("/proc/cpuinfo") as f:
            return "GenuineIntel" in f.read(4096)
    except OSError:
        return False


def _load():
    _sgemm[0] = False
    if os.environ.get("EMBER_MKL", "").strip() == "0" or not _intel():
        return False
    lib = None
    here = os.path.join(sys.prefix, "lib")
    for name in (os.path.join(here, "libmkl_rt.so.3"), os.path.join(here, "libmkl_rt.so.2"),
                 "libmkl_rt.so.3", "libmkl_rt.so.2"):
        try:
            lib = ctypes.CDLL(name)
            break
        except OSError:
            continue
    if lib is None:
        return False
    try:
        lib.MKL_Set_Threading_Layer(_SEQUENTIAL)  # before any other call into MKL
        f = lib.cblas_sgemm
        _fortran[0] = ctypes.cast(lib.sgemm_, ctypes.c_void_p).value or 0
    except AttributeError:
        return False
    p, i = ctypes.c_void_p, ctypes.c_int
    f.argtypes = [i, i, i, i, i, i, ctypes.c_float, p, i, p, i, ctypes.c_float, p, i]
    f.restype = None
    _sgemm[0] = f
    return f


def available():
    """Whether MKL's sgemm is loaded (loading it on first call)."""
    f = _sgemm[0]
    return bool(_load() if f is None else f)


def sgemm_address():
    """The address of MKL's Fortran sgemm_ (every argument by pointer), for numba kernels that
    call it on one thread from inside their own parts (NOTE [LSTM time loop in two parts] in
    ops/nn/rnn.py); 0 when MKL is unavailable or switched off."""
    return _fortran[0] if available() and _on[0] else 0


def _operand(a):
    """(transpose flag, leading dimension) of a 2-D float32 operand for row-major cblas, or
    None when neither axis has a unit stride."""
    s0, s1 = a.strides
    if s1 == 4 and s0 >= 4 * a.shape[1] and s0 % 4 == 0:
        return _NO_TRANS, s0 // 4
    if s0 == 4 and s1 >= 4 * a.shape[0] and s1 % 4 == 0:
        return _TRANS, s1 // 4
    return None


def _takes(a, b, out, min_macs):
    """Whether MKL computes this product: large float32 2-D operands with a unit stride, an
    output with unit column stride."""
    if not _on[0] or a.ndim != 2 or b.ndim != 2 or a.dtype != _F32 or b.dtype != _F32:
        return False
    m, k = a.shape
    n = b.shape[1]
    if m * n * k < min_macs or b.shape[0] != k:
        return False
    if out is not None and (out.dtype != _F32 or out.shape != (m, n) or out.strides[1] != 4
                            or not out.flags.writeable or np.may_share_memory(out, a)
                            or np.may_share_memory(out, b)):
        return False  # (np.matmul copies an operand the output overlaps)
    return available()


def _call(a, b, out):
    ta, lda = _operand(a)
    tb, ldb = _operand(b)
    _sgemm[0](_ROW_MAJOR, ta, tb, a.shape[0], b.shape[1], a.shape[1], 1.0, a.ctypes.data, lda,
              b.ctypes.data, ldb, 0.0, out.ctypes.data, out.strides[0] // 4)


_numba_gemm: list = []  # ember.ops._kernels.gemm, imported at first use (ember.ops imports us)


def by_numba(a, b, out, bias, parts):
    """a @ b (+ bias) by NOTE [A GEMM in numba] when it takes the product - 2-D, 3-D with one
    plane (a convolution's product with groups=1), a stack of planes into a given out, or one
    (1, O, C) plane against (N, 1, C, L) samples - else None. On two threads when `parts` and the
    product is big enough."""
    if not _numba_gemm:
        from .ops._kernels import gemm
        _numba_gemm.append(gemm)
    gemm = _numba_gemm[0]
    if a.ndim == 3 and b.ndim == 3 and a.shape[0] == b.shape[0] == 1 and (
            out is None or out.shape[0] == 1):
        done = by_numba(a[0], b[0], None if out is None else out[0], bias, parts)
        return None if done is None else (done[None] if out is None else out)
    if b.ndim == 3 and out is not None and out.ndim == 3 and bias is None:
        return gemm.planes_matmul(a, b, out, parts)  # stacks of planes (Winograd's products)
    if (a.ndim == 3 and a.shape[0] == 1 and b.ndim == 4 and b.shape[1] == 1 and out is not None
            and out.ndim == 4 and out.shape[1] == 1 and bias is None):
        # one group's weight against every sample (a 1x1 convolution's (N, 1, C, L) products)
        done = gemm.planes_matmul(a[0], b[:, 0], out[:, 0], parts)
        return None if done is None else out
    if not gemm.takes(a, b, out):
        return None
    row_bias = (bias is not None and bias.dtype == a.dtype and bias.shape == (b.shape[1],)
                and bias.flags.c_contiguous)
    out = gemm.matmul(a, b, out, bias if row_bias else None, parts)
    return out if bias is None or row_bias else add_bias(out, bias)


def matmul(a, b, out=None, bias=None):
    """np.matmul(a, b, out=out), plus ``bias`` (a row added to every row of the 2-D result) if
    given; by MKL's sgemm in two parts on OpenBLAS's threads when it takes the product, each
    part adding the bias to its own rows (NOTE [MKL's sgemm], NOTE [The bias in MKL's parts])."""
    if not _takes(a, b, out, MIN_MACS) or _operand(a) is None or _operand(b) is None:
        done = by_numba(a, b, out, bias, True)
        if done is not None:
            return done
        out = np.matmul(a, b, out=out)
        return out if bias is None else add_bias(out, bias)
    from . import _blas_parts  # (here: _blas_parts imports _onepool, which imports us)
    m, n = a.shape[0], b.shape[1]
    if out is None:
        out = np.empty((m, n), _F32)
    if not _blas_parts.on("split"):
        _call(a, b, out)
        return out if bias is None else add_bias(out, bias)
    # halves at a multiple of 16 rows or columns (whole SIMD panels)
    cut = 16 * -(-max(m, n) // 32)
    if _no_gil[0] and _fortran[0] and (bias is None or (bias.dtype == _F32 and bias.shape == (n,)
                                         and bias.strides == (4,))):
        from .ops._kernels import mkl_parts  # NOTE [MKL's parts without the GIL]
        (ta, lda), (tb, ldb) = _operand(a), _operand(b)
        return mkl_parts.halves(_fortran[0], ta == _TRANS, lda, tb == _TRANS, ldb, a, b, out,
                                bias, m >= n, cut)
    if m >= n:

        def part(lo, hi):
            rows = slice(lo * cut, min(m, hi * cut))
            _call(a[rows], b, out[rows])
            if bias is not None:
                add_bias(out[rows], bias)
    else:

        def part(lo, hi):
            cols = slice(lo * cut, min(n, hi * cut))
            _call(a, b[:, cols], out[:, cols])
            if bias is not None:
                out[:, cols] += bias[..., cols]
    _blas_parts.run_ranges(part, 2)
    return out


# NOTE [The bias in MKL's parts]
# A Linear's forward added its bias after the product, in one pass over the whole result on the
# calling thread while OpenBLAS's worker waited: for GPT-S's fc1 a 4 MB result read back from
# memory (twice the L2) on one core. Each part now adds the bias to its own rows right after
# its MKL call, on its own thread, while those rows are still in that core's cache. Each element
# is the product's value plus its bias in the result's dtype either way: the same bits.
def add_bias(y, bias):
    """y += bias (a row for every row of y) by ops/_kernels/pointwise.add_row; returns y."""
    from .ops._kernels.pointwise import add_row  # (here: the ops import this module)
    return add_row(y, bias)


def pair_address(g2, x2, w):
    """MKL's Fortran sgemm address when a Linear's two gradients at once from G (rows, n_out),
    X (rows, n_in) and W (n_out, n_in) run as GIL-free parts (NOTE [MKL's parts without the
    GIL]): float32, C-contiguous, products of MIN_MACS_ONE_THREAD or more; else 0."""
    if not (_no_gil[0] and g2.dtype == _F32 and x2.dtype == _F32 and w.dtype == _F32
            and g2.flags.c_contiguous and x2.flags.c_contiguous and w.flags.c_contiguous
            and g2.size * w.shape[1] >= MIN_MACS_ONE_THREAD):
        return 0
    return sgemm_address()


def matmul_one_thread(a, b, out):
    """np.matmul(a, b, out=out) on the calling thread (OpenBLAS set to one thread by the
    caller); by MKL's sgemm when it takes the product."""
    if not _takes(a, b, out, MIN_MACS_ONE_THREAD) or _operand(a) is None or _operand(b) is None:
        done = by_numba(a, b, out, None, False)
        return np.matmul(a, b, out=out) if done is None else done
    _call(a, b, out)
    return out
