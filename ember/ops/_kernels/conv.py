"""2-D convolution kernels: numba packs patches (im2col / col2im), BLAS does the arithmetic.

All arrays are C-contiguous NCHW; stride, padding and dilation are ``(int, int)`` tuples; outputs
have the dtype of the input (float32 or float64). A 1-D convolution is the 2-D one with ``H == 1``
and a ``(1, k)`` kernel: every loop below is over whole rows, so a height of one costs nothing.

NOTE [Convolution as one GEMM]
im2col writes, for each input channel c and kernel tap (i, j), one row of ``cols`` holding what
that tap sees at every output position. ``cols`` is laid out (C*kh*kw, N, L), L = OH*OW, so the
whole batch is one GEMM ``W (O, C*kh*kw) @ cols`` per group: one large product keeps the BLAS
threads busy even for 8x8 maps, where per-sample GEMMs are thin. The price, transposing the
(O, N, L) product to NCHW, is small next to the packing. Rows are written as contiguous runs of
OW numbers; (sample, channel) pairs own disjoint rows of ``cols`` and disjoint planes of the
input gradient, so col2im needs no atomics. The pairs are visited channel-major (all samples of
one channel, then the next): the rows of one tap for consecutive samples are adjacent in
``cols``, so the writes stream through whole cache lines instead of touching a partial line of
every row (a quarter to a third faster packing and col2im on 4x4 to 15x15 maps). Batches are
chunked so
that ``cols`` stays in cache (see `_batch_chunk`) and always under ``_COLS_BUDGET``
elements.

NOTE [Keeping the forward's im2col]
The weight gradient needs the same im2col matrix of x as the forward. When the caller asks
(``keep``: Conv2d does when the weight needs a gradient), the forward packs the whole batch into
one matrix and hands it over instead of reusing a chunk buffer, and the weight gradient skips its
packing. With the whole matrix there anyway, both run one GEMM over it rather than per-chunk
ones: one packing call over the batch is half the time of per-sample calls into its strided
slices, and the single wide GEMM is faster than thin ones (never slower on the Table 1 shapes).
The price is memory held from forward to backward: 9x each conv input for 3x3 kernels. Conv2d's
backward drops it after use (a second backward, retain_graph, packs again); it comes from the
reuse pool (NOTE [Reused buffers] in _backend.py), so the next step's forward of the same shape
reuses its pages instead of faulting in new ones. Measured by
``python benchmarks/kernels.py --only conv`` and ``python benchmarks/table1.py --phases``;
figures in benchmarks/RESULTS.md, "Figures behind the design notes".

NOTE [Kernel threading]
OpenBLAS's threads already use every core for the GEMMs. numba's default OpenMP pool busy-waits
for milliseconds after each parallel loop and OpenBLAS's workers spin after each GEMM, so the
two pools fight for the cores: on 2 cores a conv forward + backward with parallel packing took
more than twice as long as with serial packing. So loops are written with prange (it marks the
independent axis) but compiled serially; kernels are nogil, so callers may use threads. Set
PARALLEL only with a threading layer that sleeps (workqueue, tbb), and measure first
(``python benchmarks/kernels.py --only conv``). Kernels that take an explicit range of their
channel loop run in two halves on two Python threads instead (NOTE [Two halves on two threads]
in split.py: Winograd's transforms, the gathered im2col and col2im); OpenBLAS's idle workers
yield the core (sched_yield) where numba's OpenMP pool spins.
With the one pool on (EMBER_ONE_POOL=1, NOTE [One pool] in ember/_onepool.py) the GEMMs run on
numba's pool themselves, so the fight is gone: the prange kernels are twins whose parallel
versions run there, the range kernels run in parts through their drivers (NOTE [Ranges on the
one pool] in split.py), and neither the kernel threads nor the split GEMMs are used.
"""


import numba
import numpy as np

from ... import _kernel_threads as _kt
from ... import _mkl, _onepool
from ..._backend import reusable_empty
from . import gemm as _kgemm
from . import split, winograd
from .depthwise import (
    _channels_last_depthwise,
    _k_depthwise_cl_bwd,
    _k_depthwise_cl_fwd,
    _k_depthwise_fwd,
    _k_depthwise_s1_fwd,
    _k_depthwise_s1_input_bwd,
    _k_depthwise_s1_weight_bwd,
)
from .im2col import _fold, _fold_rows, _geometry, _im2col, _out_hw, _unfold, _unfold_rows

# Elements in one im2col buffer (64 MiB in float32); bounds memory for big batches or images.
_COLS_BUDGET = 1 << 24
# Preferred im2col chunk (4 MiB in float32) and the fewest GEMM columns worth a chunk; see
# _batch_chunk.
_CACHED_COLS = 1 << 20
_MIN_COLUMNS = 512
# Output channels per group up to which the weight gradient is computed transposed; see
# _conv_weight_grad.
_FEW_OUTPUTS = 128


# ---------------------------------------------------------------------------------------------
# Shared drivers. `geo` = (kh, kw, sh, sw, ph, pw, dh, dw); shapes are full NCHW / OIHW tuples.


def _is_depthwise(n_in, w_shape, groups):
    # one input channel per group; the direct loop beats `groups` tiny GEMMs
    return groups == n_in and groups > 1 and w_shape[1] == 1


def _depthwise(stride1_kernel, kernel, a, b, out, geo):
    """Run the flat stride-1 variant when it applies; see NOTE [Flat stride-1 depthwise]."""
    work = out.size * geo[0] * geo[1]
    if geo[2] == geo[3] == 1:
        _planes(stride1_kernel, out.shape, work, a, b, out, *geo[4:])
    else:
        _planes(kernel, out.shape, work, a, b, out, *geo[2:])


# NOTE [Depthwise in parts]
# The depthwise kernels ran on the calling thread alone unless the one pool was on, while
# torch runs its depthwise convolutions on both cores: MobileNetV2's depthwise layers were its
# largest per-layer losses on the Intel machine (fwd + bwd 5.8 against 2.0 ms on the
# (16, 96, 32, 32) stride-2 layer). Every depthwise kernel takes a range of independent items
# (sample-major (sample, channel) planes for the per-plane kernels, channels for the
# channels-last ones) and goes through split.run as family "depthwise": in two parts on
# OpenBLAS's worker from _PARTS_MIN_WORK multiply-adds, on the one pool when that is on. Each
# item is computed alone, exactly as in one call, so the numbers do not depend on the split.
# MobileNetV2's depthwise layers, fwd + bwd per step (quiet slot, min of 7): 19.8 -> 15.1 ms,
# the stride-2 32x32 layer 6.2 -> 3.3 ms; the layers under 2^20 (channels last) stay on one
# thread (a 2^18 threshold was even in ab.py). Compiling these kernels with 512-bit vectors
# (NOTE [512-bit vectors] in vmath.py) was even, per layer and per step, and is not done.


def _planes(kernel, shape, work, *args):
    """A per-plane depthwise kernel over the (sample, channel) planes of an array of this
    shape, in parts on two threads from enough work (multiply-adds; NOTE [Depthwise in
    parts])."""
    split.run(kernel, shape[0] * shape[1], work, *args, family="depthwise")


# NOTE [Strided depthwise backward on the stride-1 grid]
# A stride-s convolution is the stride-1 one (same padding and dilation) sampled at every s-th
# output, so its adjoints are the stride-1 adjoints applied to grad_y spread onto the stride-1
# output grid with zeros between. The stride-1 kernels run whole flat rows (NOTE [Flat stride-1
# depthwise]) and beat per-row strided loops even with s*s times the positions. The spread grid
# comes from the reuse pool: a fresh np.zeros per step gave the gain back in page faults. It
# replaces per-phase strided kernels (the forward stays strided: computing all stride-1 outputs
# and keeping a quarter loses on 64x64 maps). Measured on MobileNetV2's stride-2 layers
# (``python benchmarks/kernels.py --only depthwise``, ``python benchmarks/ab.py``); figures in
# benchmarks/RESULTS.md, "Figures behind the design notes".


def _spread_strided(gy, x_shape, geo):
    """(gy on the stride-1 output grid, the stride-1 geometry); unchanged when stride is 1.
    See NOTE [Strided depthwise backward on the stride-1 grid]."""
    kh, kw, sh, sw, ph, pw, dh, dw = geo
    if sh == sw == 1:
        return gy, geo
    grid = (x_shape[2] + 2 * ph - dh * (kh - 1), x_shape[3] + 2 * pw - dw * (kw - 1))
    spread = reusable_empty(gy.shape[:2] + grid, gy.dtype)  # NOTE [Reused buffers]
    if _onepool.enabled() and gy.flags.c_contiguous:
        _k_spread.pick(spread.size)(gy.reshape((-1,) + gy.shape[2:]),
                                    spread.reshape((-1,) + grid), sh, sw)
    else:
        spread.fill(0)
        spread[:, :, :gy.shape[2] * sh:sh, :gy.shape[3] * sw:sw] = gy
    return spread, (kh, kw, 1, 1, ph, pw, dh, dw)


@_onepool.twin
def _k_spread(gy, spread, sh, sw):
    """spread = zeros with spread[p, i*sh, j*sw] = gy[p, i, j], plane by plane (the pool's form
    of `_spread_strided`'s two NumPy passes)."""
    n_planes, out_h, out_w = gy.shape
    for p in numba.prange(n_planes):
        plane = spread[p]
        for r in range(plane.shape[0]):
            row = plane[r]
            for t in range(row.size):
                row[t] = 0
        for i in range(out_h):
            src = gy[p, i]
            dst = plane[i * sh]
            for j in range(out_w):
                dst[j * sw] = src[j]


def _channels_last(kernel, out, geo, *args):
    """A channels-last depthwise kernel over all of out's channels, in parts of them on two
    threads from enough work (NOTE [Depthwise in parts])."""
    split.run(kernel, out.shape[1], out.size * geo[0] * geo[1], *args, family="depthwise")


def _taps_last(w):
    """A depthwise weight (C, 1, kh, kw) as the (kh, kw, C) the channels-last kernels read."""
    return np.ascontiguousarray(w.reshape(w.shape[0], w.shape[2], w.shape[3]).transpose(1, 2, 0))


def _taps_first(gw, w_shape):
    """The inverse of `_taps_last`: (kh, kw, C) -> (C, 1, kh, kw)."""
    return np.ascontiguousarray(gw.transpose(2, 0, 1)).reshape(w_shape)


def _is_pointwise(geo):
    # 1x1, stride 1, no padding: the convolution is a matmul on the untouched input
    kh, kw, sh, sw, ph, pw, _, _ = geo
    return kh == 1 and kw == 1 and sh == 1 and sw == 1 and ph == 0 and pw == 0


# NOTE [Pointwise convolution layouts]
# A 1x1 stride-1 convolution is a matmul per sample: y[n] = W @ x[n] with x[n] of shape (C, L).
# On small maps (deep layers: L = 4 or 16) those per-sample GEMMs are thin (N = L columns) and
# run at a fraction of BLAS speed, and the weight gradient sum_n gy[n] @ x[n]^T writes one
# (O, C) partial per sample, which costs far more than the arithmetic when O*C >> L*(O+C).
# Moving the batch into the GEMM's column axis, (C, N*L), costs one transposed copy of each
# activation and makes a single well-shaped GEMM; it wins below ~48 columns per sample (forward,
# input gradient) and whenever L*(O+C) < O*C (weight gradient: the copies are smaller than the
# partials they replace). With NOTE [A GEMM in numba] the 8x8 maps' 64 columns a sample gain too
# (ResNet-50's layer2 1x1 layers, whose per-sample input gradients ran 0.62 ms on one thread in
# a pair against the weight gradient's 0.37): benchmarks/ab.py 48 against 80, paired, chrt -f
# 10, ResNet-50 1.014 and reversed 0.989, MobileNetV2 0.997; 300 (16x16 maps too) read 0.985.
_THIN_COLUMNS = 80
# Above that, the per-sample products of a forward (ResNet-50's 16x16 and 8x8 maps: 8 of 2^20 to
# 2^22 multiply-adds) go in two halves of samples on two threads (NOTE [Small planes on two
# threads] in split.py) up to this size each, not one by one on OpenBLAS's two threads.
_POINTWISE_PLANES = [True]
_POINTWISE_PLANE_MACS = 1 << 23

# NOTE [Sharing pointwise columns]
# When a thin 1x1 conv's weight gradient also runs on the columns layout, its two copies are
# ones the step has already made: x's columns by the forward (kept like the im2col matrix, NOTE
# [Keeping the forward's im2col]: a copy of x, held to the backward, only for these small maps)
# and gy's columns by the input gradient. Reusing them halves the transposing copies of those
# layers (MobileNetV2: 22 layers, ~10 MB of copies per step).


def _batch_as_columns(length):
    return length < _THIN_COLUMNS


def _weight_grad_as_columns(o, c, groups, length):
    return length * (o + c) < o * (c // groups)


def _to_columns(a):
    """(N, C, L) -> contiguous (C, N*L)."""
    n, c, length = a.shape
    out = np.empty((c, n, length), a.dtype)
    _swap_leading(a, out)
    return out.reshape(c, n * length)


@_onepool.twin
def _k_swap_leading(src, dst):
    """dst[j, i] = src[i, j] for (I, J, L) src and (J, I, L) dst: the batch <-> channel copies
    around the batch-wide GEMMs, on the one pool (NOTE [One pool] in ember/_onepool.py)."""
    n_i, n_j, length = src.shape
    for j in numba.prange(n_j):
        for i in range(n_i):
            a = src[i, j]
            b = dst[j, i]
            for t in range(length):
                b[t] = a[t]


def _swap_leading(src, dst):
    """np.copyto(dst, src.transpose(1, 0, 2)), on the pool when it is on and the copy is big;
    src (I, J, L) with a unit-stride last axis, dst C-contiguous. With the pool off the serial
    loop still beats NumPy's strided copy on the short rows of small maps (ResNet-50's, one
    thread, best of 40: (8, 2048, 4) 76 -> 35 us, (8, 1024, 16) 47 -> 17 us, (8, 512, 64) 39 ->
    26 us, (8, 64, 1024) 55 -> 47 us)."""
    if src.strides[2] != src.itemsize or not dst.flags.c_contiguous:
        np.copyto(dst, src.transpose(1, 0, 2))
        return
    _k_swap_leading.pick(dst.size)(src, dst)


@_onepool.twin
def _k_sum_planes(stack, out):
    """out = stack[0] + stack[1] + ... in that order (the order of the serial accumulation),
    for (P, M) stack and (M,) out; columns in parallel on the one pool."""
    n_planes, m = stack.shape
    n_blocks = min(m // 1024 + 1, 64)
    for blk in numba.prange(n_blocks):
        # unsigned: a signed index from a runtime start keeps numba's wraparound in the loop
        lo, hi = numba.uint64(blk * m // n_blocks), numba.uint64((blk + 1) * m // n_blocks)
        for t in range(lo, hi):
            out[t] = stack[0, t]
        for p in range(1, n_planes):
            row = stack[p]
            for t in range(lo, hi):
                out[t] += row[t]


def _gemm_batch_columns(w3, a, out, cols=None):
    """out[n] = blockdiag(w3) @ a[n] for (N, Cin, L) a, (G, Cout/G, Cin/G) w3, as one GEMM per
    group on the batch-as-columns layout; see NOTE [Pointwise convolution layouts]. cols: a's
    (Cin, N*L) columns if the caller has them already."""
    groups = w3.shape[0]
    n, c_in, length = a.shape
    if cols is None:
        cols = _to_columns(a)
    prod = split.gemm(w3, cols.reshape(groups, c_in // groups, n * length))
    _swap_leading(prod.reshape(out.shape[1], n, length), out)


def _pointwise_weight_grad(gy, x, groups, gw, x_cols=None, gy_cols=None):
    """The (G, O/G, C/G) weight gradient of a 1x1 stride-1 conv, written into gw; see NOTE
    [Pointwise convolution layouts] for the choice between the two formulations. x_cols,
    gy_cols: the (C, N*L) and (O, N*L) columns if the forward or the input gradient built them
    (NOTE [Sharing pointwise columns])."""
    n, o, h, wd = gy.shape
    c = x.shape[1]
    length = h * wd
    og, cg = o // groups, c // groups
    if _weight_grad_as_columns(o, c, groups, length):
        if gy_cols is None:
            gy_cols = _to_columns(gy.reshape(n, o, length))
        if x_cols is None:
            x_cols = _to_columns(x.reshape(n, c, length))
        gy_cols = gy_cols.reshape(groups, og, n * length)
        x_cols = x_cols.reshape(groups, cg, n * length)
        return split.gemm(gy_cols, x_cols.transpose(0, 2, 1), out=gw)
    if groups == 1 and n > 1 and _onepool.enabled():
        # the per-sample products as planes of one product on the pool, then their sum in
        # sample order (the partials are no bigger than the inputs on this branch)
        stack = _onepool.matmul(gy.reshape(n, o, length),
                                x.reshape(n, c, length).transpose(0, 2, 1))
        _k_sum_planes.pick(stack.size)(stack.reshape(n, o * c), gw.reshape(o * c))
        return gw
    gy4 = gy.reshape(n, groups, og, length)
    xt4 = x.reshape(n, groups, cg, length).transpose(0, 1, 3, 2)
    # accumulate per-sample products in one cache-resident buffer instead of an (N, O, C) stack

    def rows(lo, hi):  # output rows [lo, hi) of every group
        part = gw[:, lo:hi]
        # (on this part's thread; NOTE [A GEMM in numba] takes the bigger ones)
        _mkl.matmul_one_thread(gy4[0][:, lo:hi], xt4[0], part)
        partial = np.empty_like(part)
        for i in range(1, n):
            _mkl.matmul_one_thread(gy4[i][:, lo:hi], xt4[i], partial)
            part += partial
    split.blas_parts(rows, og)  # NOTE [Convolution GEMMs on the kernel threads]
    return gw


def _batch_chunk(rows, length):
    """Samples per im2col chunk: a (rows, chunk, length) buffer that stays in cache (the packing
    writes it and the GEMM reads it right back: on 32x32 maps, 20% faster than one batch-wide
    buffer), but wide enough (_MIN_COLUMNS) for the GEMM on small maps, and within the budget."""
    per_sample = max(1, rows * length)
    cached = _CACHED_COLS // per_sample
    wide = -(-_MIN_COLUMNS // max(1, length))
    return max(1, min(max(cached, wide), _COLS_BUDGET // per_sample))


def _scratch(size, wanted, dtype):
    """A flat scratch array reused by every chunk of a convolution, or None when not wanted.

    Reuse matters more than it seems: a fresh multi-MiB array is fresh pages, and first-touch
    page faults cost more than the packing that fills them (conv fwd+bwd (8,128,16,16) x
    (128,128,3,3): 16 ms with one im2col buffer per chunk, 9 ms with one reused buffer).
    """
    return np.empty(size, dtype=dtype) if wanted else None


def _batch_major(a, buf):
    """(nb, O, L) -> contiguous (O, nb, L), written into the flat scratch buf (a view when
    nb == 1: no copy)."""
    nb, o, length = a.shape
    if nb == 1 and a.flags.c_contiguous:
        return a.reshape(o, 1, length)
    if buf is None:
        out = np.empty((o, nb, length), a.dtype)
        _swap_leading(a, out)
        return out
    out = buf[:a.size].reshape(o, nb, length)
    _swap_leading(a, out)
    return out


@_onepool.twin
def _k_unbatch(prod, bias, y):
    """y[n, o] = prod[o, n] + bias[o] (no bias when bias is empty): the transposing copy of the
    batch-wide GEMM's (O, nb, L) product into NCHW, with the bias added on the way (one pass
    over y instead of two: VGG-19's forward 1.3 ms faster)."""
    n_out, n_batch, length = prod.shape
    for n in numba.prange(n_batch):
        for o in range(n_out):
            src = prod[o, n]
            dst = y[n, o]
            if bias.size:
                b = bias[o]
                for t in range(length):
                    dst[t] = src[t] + b
            else:
                for t in range(length):
                    dst[t] = src[t]


def _with_bias(y, bias):
    if bias is not None:
        y += bias.reshape(1, -1, 1, 1)
    return y


def _conv_forward(x, w, geo, groups, keep=None, bias=None):
    """Convolution (N, C, H, W) * (O, C/groups, kh, kw) -> (N, O, OH, OW), plus bias (O,) if
    given.

    keep: a list to which the im2col matrix (C*kh*kw, N, OH*OW) is appended when one is built,
    for `_conv_weight_grad` to reuse (see NOTE [Keeping the forward's im2col]).
    """
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    out_h, out_w = _out_hw(h, wd, geo)
    y = reusable_empty((n, o, out_h, out_w), x.dtype)  # NOTE [Reused buffers]
    if n == 0 or y.size == 0:
        return _with_bias(y, bias)
    if _is_depthwise(c, w.shape, groups):
        if _channels_last_depthwise(y.shape, w.shape, groups):
            _channels_last(_k_depthwise_cl_fwd, y, geo, x, _taps_last(w), y, *geo[2:])
        else:
            _depthwise(_k_depthwise_s1_fwd, _k_depthwise_fwd, x, w, y, geo)
        return _with_bias(y, bias)
    if _pixels_as_rows(n * out_h * out_w, o, c, geo, groups):
        return _conv_forward_rows(x, w, geo, out_h, out_w, y, keep, bias)
    w3 = w.reshape(groups, o // groups, cg * kh * kw)
    if _is_pointwise(geo):
        if _batch_as_columns(h * wd):
            # NOTE [Sharing pointwise columns]
            x3 = x.reshape(n, c, h * wd)
            cols = None
            if keep is not None and _weight_grad_as_columns(o, c, groups, h * wd):
                # held until the backward: from the pool, NOTE [Reused buffers]
                kept = reusable_empty((c, n, h * wd), x.dtype)
                _swap_leading(x3, kept)
                keep.append(kept)
                cols = kept.reshape(c, n * h * wd)
            _gemm_batch_columns(w3, x3, y.reshape(n, o, h * wd), cols)
        elif groups == 1 and _onepool.enabled():  # planes form for the pool
            split.gemm(w3[0], x.reshape(n, c, h * wd), out=y.reshape(n, o, h * wd))
        elif groups == 1 and _POINTWISE_PLANES[0]:  # the samples' products in two halves
            split.gemm_planes(w3[0], x.reshape(n, c, h * wd), y.reshape(n, o, h * wd),
                              _POINTWISE_PLANE_MACS)
        else:
            x4 = x.reshape(n, groups, cg, h * wd)
            split.gemm(w3, x4, out=y.reshape(n, groups, o // groups, h * wd))
        return _with_bias(y, bias)
    length = out_h * out_w
    no_bias = np.empty(0, dtype=x.dtype)
    if keep is not None:  # the whole batch in one matrix, packed at once, one GEMM
        packed = reusable_empty((c * kh * kw, n, length), x.dtype)
        keep.append(packed)
        _unfold(x, packed, geo, out_h, out_w)
        chunk = n
    else:
        chunk = _batch_chunk(c * kh * kw, length)
        buf = _scratch(c * kh * kw * chunk * length, n > chunk, x.dtype)
    for n0 in range(0, n, chunk):
        xs = x[n0:n0 + chunk]
        nb = xs.shape[0]
        cols = packed if keep is not None else _im2col(xs, geo, out_h, out_w, buf)
        cols = cols.reshape(groups, cg * kh * kw, nb * length)
        if nb == 1 and bias is None:  # the product is already sample n0's (O, L) plane
            split.gemm(w3, cols, out=y[n0].reshape(groups, o // groups, length))
            continue
        prod = split.gemm(w3, cols).reshape(o, nb, length)
        _k_unbatch.pick(prod.size)(prod, no_bias if bias is None else bias,
                                   y[n0:n0 + nb].reshape(nb, o, length))
    return y


# NOTE [Pixels as rows on small maps]
# On the deep layers of a small-batch CNN (VGG-19's and ResNet-50's 4x4 and 2x2 maps at batch
# 8) the convolution's GEMM W (O, C*kh*kw) @ cols (C*kh*kw, N*L) has only N*L = 32-128
# columns against O = 256-512 rows and a deep C*kh*kw: the numba GEMM's rows of 128 columns
# or fewer are short loops (NOTE [A GEMM in numba] in gemm.py). With one im2col row per output
# pixel instead, rows (N*L, C*kh*kw), the forward is rows @ W^T, a product of two C-contiguous
# operands whose dot products run along C*kh*kw (`nt_rows`); the input gradient gy^T @ W and
# the weight gradient gy @ rows run along rows C*kh*kw long, and a col2im of the rows layout
# (`_fold_rows`) sums the former into x's shape. The (N*L, O) product is transposed into the
# NCHW output, a small pass at these sizes. Two threads, GFLOP/s (/work/s36/tlayout.py, machine
# loaded by helpers, chrt): forward (512, 4608, 128) 246 -> 343, (256, 2304, 128) 246 -> 409;
# input gradient 303 -> 318 and 307 -> 415; weight gradient 273 -> 324 and 274 -> 306. Whole
# steps (benchmarks/ab.py, _ROWS_MAX 0 against 128): VGG-19 1.085, ResNet-50 1.018. From
# _ROWS_MAX pixels the columns are long enough and the usual layout is as fast (8x8 maps, 512
# pixels: 376 against 350). 1x1 layers keep their pointwise layouts: there x needs no im2col,
# and the two transposes cost more than the products gain (1024 -> 256 on 4x4 maps, forward
# and backward: 0.77 -> 1.02 ms).
_ROWS_MAX = 128
_ROWS_MIN_DEPTH = 256
_ROWS_MIN_OUT = 64


def _pixels_as_rows(pixels, out_channels, in_channels, geo, groups):
    """Whether a convolution of N*L = pixels outputs takes NOTE [Pixels as rows on small
    maps]: one group, a kernel bigger than 1x1, few pixels, a deep patch and many outputs."""
    return (groups == 1 and geo[0] * geo[1] > 1 and 0 < pixels <= _ROWS_MAX
            and in_channels * geo[0] * geo[1] >= _ROWS_MIN_DEPTH
            and out_channels >= _ROWS_MIN_OUT)


def _conv_forward_rows(x, w, geo, out_h, out_w, y, keep, bias):
    """`_conv_forward` (one group) through NOTE [Pixels as rows on small maps], into y."""
    n, o = x.shape[0], w.shape[0]
    length = out_h * out_w
    rows = reusable_empty((n * length, w[0].size), x.dtype)  # NOTE [Reused buffers]
    _unfold_rows(np.ascontiguousarray(x), rows, geo, out_h, out_w)
    prod = split.gemm(rows, w.reshape(o, -1).T)  # (N*L, O)
    np.copyto(y.reshape(n, o, length), prod.reshape(n, length, o).transpose(0, 2, 1))
    if keep is not None:
        keep.append(rows)
    return _with_bias(y, bias)


def _rows_of(x, packed, geo, out_h, out_w, depth):
    """The rows (N*L, depth) of x: the forward's kept ones, else made again."""
    n_rows = x.shape[0] * out_h * out_w
    if packed is not None and packed.shape == (n_rows, depth):
        return packed
    rows = reusable_empty((n_rows, depth), x.dtype)
    _unfold_rows(np.ascontiguousarray(x), rows, geo, out_h, out_w)
    return rows


def _pixel_rows(gy3):
    """gy (N, O, L) as one C-contiguous row per output pixel, (N*L, O)."""
    n, o, length = gy3.shape
    return np.ascontiguousarray(gy3.transpose(0, 2, 1)).reshape(n * length, o)


def _rows_shared(x, w):
    """Whether both gradients of the rows route run as NOTE [Shared pairs] in split.py: where
    NOTE [A GEMM in numba] computes their products (float32 on such a host)."""
    return (x.dtype == np.float32 and w.dtype == np.float32 and _kgemm.ON[0]
            and _kgemm._host_ok())


def _rows_grads_shared(gy, x, w, geo, packed):
    """(gx, gw) of NOTE [Pixels as rows on small maps] as a shared pair (NOTE [Shared pairs] in
    split.py): gy^T @ w cut along its columns, gy @ rows along its rows; the products of
    `_conv_input_grad` and `_conv_weight_grad` by the same kernel, so the same bits."""
    n, o = x.shape[0], w.shape[0]
    out_h, out_w = gy.shape[2], gy.shape[3]
    length, depth = out_h * out_w, w[0].size
    rows = _rows_of(x, packed, geo, out_h, out_w, depth)
    gy3 = gy.reshape(n, o, length)
    gy_t = _batch_major(gy3, None).reshape(o, n * length)
    gy_rows = _pixel_rows(gy3)
    w2 = np.ascontiguousarray(w.reshape(o, depth))
    result = reusable_empty(w.shape, x.dtype)  # outlives the step: NOTE [Reused buffers]
    gw2 = result.reshape(o, depth)
    grad_rows = np.empty((n * length, depth), x.dtype)
    gx = np.empty(x.shape, x.dtype)

    def weight_chunk(lo, hi):
        _kgemm.nn_rows(gy_t, rows, gw2, gw2[0], False, lo, hi)

    def input_chunk(lo, hi):
        _kgemm.nn_cols(gy_rows, w2, grad_rows, lo, hi)

    def fold():
        _fold_rows(grad_rows, gx, geo, out_h, out_w)
        return gx

    chunks = _SHARED_CHUNKS
    input_task = split.Shared(input_chunk, split.chunk_bounds(depth, chunks, 16), fold)
    weight_task = split.Shared(weight_chunk, split.chunk_bounds(o, chunks, 4), lambda: result)
    return split.at_once_shared(input_task, weight_task)


# chunks of each task of a shared pair (NOTE [Shared pairs] in split.py)
_SHARED_CHUNKS = 8


def _conv_input_grad(gy, w, x_shape, geo, groups, gy_cols=None):
    """Adjoint of `_conv_forward` in x: gradient (N, C, H, W) from gy (N, O, OH, OW).

    gy_cols: gy's (O, N*OH*OW) columns, for a thin pointwise conv whose caller built them."""
    n, c, h, wd = x_shape
    o, cg, kh, kw = w.shape
    out_h, out_w = gy.shape[2], gy.shape[3]
    if n == 0 or gy.size == 0:
        return np.zeros(x_shape, dtype=gy.dtype)
    gx = np.empty(x_shape, dtype=gy.dtype)
    if _is_depthwise(c, w.shape, groups):
        if _channels_last_depthwise(gy.shape, w.shape, groups):
            no_gw = np.empty((0, 0, 0), dtype=gy.dtype)  # gx stands in for the unread x
            _channels_last(_k_depthwise_cl_bwd, gy, geo, gy, gx, _taps_last(w), gx, no_gw, True,
                           False, *geo[2:])
        else:
            gy, geo = _spread_strided(gy, x_shape, geo)
            _planes(_k_depthwise_s1_input_bwd, x_shape, gy.size * kh * kw, gy, w, gx, *geo[4:])
        return gx
    if _pixels_as_rows(n * out_h * out_w, o, c, geo, groups):
        # NOTE [Pixels as rows on small maps]: gy^T (N*L, O) @ w (O, C*kh*kw), then col2im
        rows = split.gemm(_pixel_rows(gy.reshape(n, o, out_h * out_w)), w.reshape(o, -1))
        _fold_rows(rows, gx, geo, out_h, out_w)
        return gx
    # (G, C/G*kh*kw, O/G): the transposed weight of each group
    wt = w.reshape(groups, o // groups, cg * kh * kw).transpose(0, 2, 1)
    if _is_pointwise(geo):
        if _batch_as_columns(h * wd):
            _gemm_batch_columns(wt, gy.reshape(n, o, h * wd), gx.reshape(n, c, h * wd), gy_cols)
        elif groups == 1 and _onepool.enabled():  # planes form for the pool
            split.gemm(wt[0], gy.reshape(n, o, h * wd), out=gx.reshape(n, c, h * wd))
        else:
            gy4 = gy.reshape(n, groups, o // groups, h * wd)
            split.gemm(wt, gy4, out=gx.reshape(n, groups, cg, h * wd))
        return gx
    length = out_h * out_w
    chunk = _batch_chunk(c * kh * kw, length)
    several = n > chunk  # one chunk allocates each buffer once anyway
    cols_buf = _scratch(c * kh * kw * chunk * length, several, gy.dtype)
    gy_buf = _scratch(o * chunk * length, several and chunk > 1, gy.dtype)
    for n0 in range(0, n, chunk):
        gys = gy[n0:n0 + chunk]
        nb = gys.shape[0]
        gy_t = _batch_major(gys.reshape(nb, o, length), gy_buf)
        gy_t = gy_t.reshape(groups, o // groups, nb * length)
        if cols_buf is None:
            cols = split.gemm(wt, gy_t)
        else:
            cols = cols_buf[:c * kh * kw * nb * length].reshape(groups, cg * kh * kw, nb * length)
            split.gemm(wt, gy_t, out=cols)
        cols = cols.reshape(c * kh * kw, nb, length)
        _fold(cols, gx[n0:n0 + nb], geo, out_h, out_w)
    return gx


def _conv_weight_grad(gy, x, w_shape, geo, groups, packed=None, gy_cols=None):
    """Adjoint of `_conv_forward` in w: gradient (O, C/G, kh, kw) from gy and the input x.

    packed: the im2col matrix of x that `_conv_forward` kept, if any (then x is not re-packed;
    for a thin pointwise conv, x's columns). gy_cols: gy's columns (pointwise only), if built.
    """
    n, c = x.shape[0], x.shape[1]
    o, cg, kh, kw = w_shape
    out_h, out_w = gy.shape[2], gy.shape[3]
    if n == 0 or gy.size == 0:
        return np.zeros(w_shape, dtype=x.dtype)
    if _is_depthwise(c, w_shape, groups):
        if _channels_last_depthwise(gy.shape, w_shape, groups):
            gw = np.empty((kh, kw, o), dtype=x.dtype)
            # w and gx are not read without the input gradient: gw and x stand in for them
            _channels_last(_k_depthwise_cl_bwd, gy, geo, gy, x, gw, x, gw, False, True, *geo[2:])
            return _taps_first(gw, w_shape)
        per_sample = np.empty((n, o, kh, kw), dtype=x.dtype)
        gy, geo = _spread_strided(gy, x.shape, geo)
        _planes(_k_depthwise_s1_weight_bwd, per_sample.shape, gy.size * kh * kw, gy, x,
                per_sample, *geo[4:])
        return per_sample.sum(axis=0).reshape(w_shape)
    og = o // groups
    if _pixels_as_rows(n * out_h * out_w, o, c, geo, groups):
        # NOTE [Pixels as rows on small maps]: gy (O, N*L) @ rows (N*L, C*kh*kw)
        length = out_h * out_w
        rows = _rows_of(x, packed, geo, out_h, out_w, c * kh * kw)
        gy_t = _batch_major(gy.reshape(n, o, length), None).reshape(o, n * length)
        result = reusable_empty(w_shape, x.dtype)  # outlives the step: NOTE [Reused buffers]
        split.gemm(gy_t, rows, out=result.reshape(o, c * kh * kw))
        return result
    if _is_pointwise(geo):
        result = reusable_empty(w_shape, x.dtype)  # NOTE [Reused buffers]
        x_cols = None
        if packed is not None and packed.shape == (c, n, out_h * out_w):
            x_cols = packed.reshape(c, n * out_h * out_w)
        _pointwise_weight_grad(gy, x, groups, result.reshape(groups, og, cg), x_cols, gy_cols)
        return result
    length = out_h * out_w
    if packed is not None and packed.shape != (c * kh * kw, n, length):
        packed = None  # kept for another algorithm (the forward took Winograd's)
    # the first chunk's product is the accumulator and later ones reuse one buffer: no zeroed
    # array and no per-chunk temporary (on 2x2 maps the (O, C*9) products dwarf the inputs)
    gw = partial = None
    chunk = n if packed is not None else _batch_chunk(c * kh * kw, length)
    buf = _scratch(c * kh * kw * chunk * length, n > chunk and packed is None, x.dtype)
    gy_buf = _scratch(o * chunk * length, n > chunk > 1, x.dtype)
    # With few output channels OpenBLAS runs the transposed product cols @ gy_t^T faster (64
    # channels: 235 vs 175 GFLOP/s) and the (C*kh*kw, O) result is small to transpose back;
    # with many, the transpose costs more than the GEMM saves.
    transposed = og <= _FEW_OUTPUTS
    for n0 in range(0, n, chunk):
        xs = x[n0:n0 + chunk]
        nb = xs.shape[0]
        cols = _im2col(xs, geo, out_h, out_w, buf) if packed is None else packed[:, n0:n0 + nb]
        cols = cols.reshape(groups, cg * kh * kw, nb * length)
        gy_t = _batch_major(gy[n0:n0 + nb].reshape(nb, o, length), gy_buf)
        gy_t = gy_t.reshape(groups, og, nb * length)
        if transposed:
            a, b = cols, gy_t.transpose(0, 2, 1)
        else:
            a, b = gy_t, cols.transpose(0, 2, 1)
        if gw is None:
            # the result outlives the step: NOTE [Reused buffers]
            result = reusable_empty(w_shape, x.dtype)
            out = None if transposed else result.reshape(groups, og, cg * kh * kw)
            gw = split.gemm(a, b, out=out)
            continue
        if partial is None:
            partial = np.empty_like(gw)
        split.gemm(a, b, out=partial)
        gw += partial
    if transposed:
        np.copyto(result.reshape(groups, og, cg * kh * kw), gw.transpose(0, 2, 1))
    return result


# ---------------------------------------------------------------------------------------------
# Public functions.


def conv2d_forward(x, w, bias, stride, padding, dilation, groups, keep=None):
    """2-D cross-correlation like torch.nn.functional.conv2d with zero padding.

    Args:
        x: input (N, C, H, W). w: weight (O, C // groups, kh, kw). bias: (O,) or None.
        stride, padding, dilation: (int, int) tuples. groups: int dividing C and O.
        keep: optional list; receives the im2col matrix when one is built, to pass to
            `conv2d_weight_grad` (NOTE [Keeping the forward's im2col]), or the transformed
            input and weight of a layer computed by Winograd's algorithm: 3x3, stride 1, big
            enough maps (NOTE [Winograd convolution] in winograd.py).

    Returns:
        y (N, O, OH, OW) with OH = (H + 2*ph - dh*(kh-1) - 1) // sh + 1 (same for W).
    """
    geo = _geometry(w.shape, stride, padding, dilation)
    with _kt.conv_scope(_macs(x.shape, w.shape, geo)):  # NOTE [Conv threads]
        if winograd.applies(x.shape, w.shape, geo, groups):  # NOTE [Winograd convolution]
            return winograd.forward(x, w, bias, padding, keep)
        return _conv_forward(x, w, geo, groups, keep, bias)


def _macs(x_shape, w_shape, geo):
    """Multiply-adds of the direct convolution (each of its three products has as many)."""
    out_h, out_w = _out_hw(x_shape[2], x_shape[3], geo)
    return x_shape[0] * w_shape[0] * out_h * out_w * w_shape[1] * w_shape[2] * w_shape[3]


def conv2d_backward(grad_y, x, w, stride, padding, dilation, groups, need_x, need_w, need_b,
                    packed=None, packed_weight=None):
    """Gradients of `conv2d_forward`; returns (gx, gw, gb), None for those not requested.

    packed, packed_weight: what `conv2d_forward` appended to ``keep`` for this x and w, if
    anything (the second: Winograd's transformed weight). A channels-last depthwise layer
    computes both gradients in one pass over grad_y.
    """
    geo = _geometry(w.shape, stride, padding, dilation)
    with _kt.conv_scope(_macs(x.shape, w.shape, geo)):  # NOTE [Conv threads]
        return _conv2d_backward(grad_y, x, w, geo, padding, groups, need_x, need_w, need_b,
                                packed, packed_weight)


def _conv2d_backward(grad_y, x, w, geo, padding, groups, need_x, need_w, need_b, packed,
                     packed_weight):
    if winograd.applies(x.shape, w.shape, geo, groups):
        gx, gw = winograd.backward(grad_y, x, w, padding, need_x, need_w, packed, packed_weight)
        return gx, gw, _bias_grad(grad_y) if need_b else None
    gy = grad_y
    if need_x and need_w and _is_depthwise(x.shape[1], w.shape, groups):
        if _channels_last_depthwise(grad_y.shape, w.shape, groups):
            gx = np.empty(x.shape, dtype=grad_y.dtype)
            gw = np.empty((w.shape[2], w.shape[3], w.shape[0]), dtype=x.dtype)
            _channels_last(_k_depthwise_cl_bwd, grad_y, geo, grad_y, x, _taps_last(w), gx, gw, True,
                           True, *geo[2:])
            return gx, _taps_first(gw, w.shape), _bias_grad(grad_y) if need_b else None
        gy, geo = _spread_strided(grad_y, x.shape, geo)  # once for both gradients
    gy_cols = None
    n, o, length = gy.shape[0], gy.shape[1], gy.shape[2] * gy.shape[3]
    if (need_x and need_w and _pixels_as_rows(n * length, o, x.shape[1], geo, groups)
            and _rows_shared(x, w) and split.at_once_applies(_macs(x.shape, w.shape, geo))):
        gx, gw = _rows_grads_shared(gy, x, w, geo, packed)
        return gx, gw, _bias_grad(grad_y) if need_b else None
    if (need_x and need_w and gy.size and _is_pointwise(geo) and _batch_as_columns(length)
            and _weight_grad_as_columns(o, x.shape[1], groups, length)):
        gy_cols = _to_columns(gy.reshape(n, o, length))  # NOTE [Sharing pointwise columns]

    def input_grad():
        return _conv_input_grad(gy, w, x.shape, geo, groups, gy_cols)

    def weight_grad():
        return _conv_weight_grad(gy, x, w.shape, geo, groups, packed, gy_cols)

    if (need_x and need_w and split.at_once_applies(_macs(x.shape, w.shape, geo))
            and not _is_depthwise(x.shape[1], w.shape, groups)):
        gx, gw = split.at_once(input_grad, weight_grad)  # NOTE [A convolution's two gradients
    else:                                                # at once] in split.py
        gx = input_grad() if need_x else None
        gw = weight_grad() if need_w else None
    gb = _bias_grad(grad_y) if need_b else None
    return gx, gw, gb


def conv2d_weight_grad(grad_y, x, w_shape, stride, padding, dilation, groups, packed=None):
    """Weight gradient (O, C // groups, kh, kw) of `conv2d_forward` from grad_y and the input x.

    The same as ``conv2d_backward(...)[1]`` without needing the weight itself: only its shape.
    packed: the im2col matrix `conv2d_forward` kept for this x (``keep``), if any.
    """
    geo = _geometry(w_shape, stride, padding, dilation)
    with _kt.conv_scope(_macs(x.shape, w_shape, geo)):  # NOTE [Conv threads]
        if winograd.applies(x.shape, w_shape, geo, groups):
            return winograd.weight_grad(grad_y, x, w_shape, padding, packed)
        return _conv_weight_grad(grad_y, x, tuple(w_shape), geo, groups, packed)


def _bias_grad(grad_y):
    if _onepool.enabled() and grad_y.flags.c_contiguous and grad_y.size >= _k_bias_grad.min_work:
        n, o = grad_y.shape[0], grad_y.shape[1]
        gb = np.empty(o, grad_y.dtype)
        _k_bias_grad.parallel(grad_y.reshape(n, o, -1), gb)
        return gb
    # summing the batch first is twice as fast as numpy's sum over axes (0, 2, 3)
    return grad_y.sum(axis=0).reshape(grad_y.shape[1], -1).sum(axis=1)


@_onepool.twin(fastmath={"reassoc"})
def _k_bias_grad(gy, gb):
    """gb[o] = the sum of gy[:, o, :] for (N, O, L) gy, accumulated in float64, channels in
    parallel on the one pool (reassoc lets LLVM vectorize each row's sum)."""
    n_batch, n_out, length = gy.shape
    for o in numba.prange(n_out):
        total = 0.0
        for n in range(n_batch):
            row = gy[n, o]
            for t in range(length):
                total += row[t]
        gb[o] = total


def conv_transpose2d_forward(x, w, bias, stride, padding, dilation, groups, output_padding):
    """Transposed convolution like torch.nn.functional.conv_transpose2d: the adjoint (input
    gradient) of conv2d with the same weight, so it reuses col2im.

    Args:
        x: (N, C_in, H, W). w: (C_in, C_out // groups, kh, kw). bias: (C_out,) or None.
        stride, padding, dilation, output_padding: (int, int); output_padding (< stride or
        dilation, as in torch) only enlarges the output at the bottom/right.

    Returns:
        y (N, C_out, OH, OW), OH = (H-1)*sh - 2*ph + dh*(kh-1) + oph + 1.
    """
    n, _, h, wd = x.shape
    geo = _geometry(w.shape, stride, padding, dilation)
    out_hw = [(size - 1) * s - 2 * p + d * (k - 1) + extra + 1 for size, k, s, p, d, extra
              in zip((h, wd), w.shape[2:], stride, padding, dilation, output_padding,
                     strict=True)]
    y_shape = (n, w.shape[1] * groups, *out_hw)
    with _kt.conv_scope(_macs(y_shape, w.shape, geo)):  # NOTE [Conv threads]
        y = _conv_input_grad(x, w, y_shape, geo, groups)
    if bias is not None:
        y += bias.reshape(1, -1, 1, 1)
    return y


def conv_transpose2d_backward(grad_y, x, w, stride, padding, dilation, groups, output_padding,
                              need_x, need_w, need_b):
    """Gradients of `conv_transpose2d_forward`; returns (gx, gw, gb), None where not requested.

    output_padding is accepted for symmetry: grad_y already has the padded shape.
    """
    geo = _geometry(w.shape, stride, padding, dilation)
    # the adjoint of an adjoint is the forward convolution itself
    gx = _conv_forward(grad_y, w, geo, groups) if need_x else None
    # roles swap: x is the "output gradient" of the underlying conv, grad_y its "input"
    gw = _conv_weight_grad(x, grad_y, w.shape, geo, groups) if need_w else None
    gb = _bias_grad(grad_y) if need_b else None
    return gx, gw, gb
