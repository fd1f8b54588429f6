"""3x3 stride-1 convolution by Winograd's minimal filtering F(2x2, 3x3): forward and both
gradients as 16 GEMMs on transformed tiles instead of one GEMM on an im2col matrix.

NOTE [Winograd convolution]
Each 2x2 block of outputs of a 3x3 cross-correlation depends on a 4x4 tile of the (padded)
input d. Winograd's F(2x2, 3x3) computes it as  y = A^T [(G g G^T) * (B^T d B)] A  with small
constant matrices (entries 0, +-1, +-1/2) and an elementwise product: 16 multiplications per
(output channel, input channel, tile) where the direct form needs 36. Summed over input
channels, the elementwise products become 16 independent GEMMs

    M[p] (O, T) = U[p] (O, C) @ V[p] (C, T),      p = 0..15 (a position in the 4x4 tile),

with U = G g G^T the transformed weight, V = B^T d B the transformed input tiles, and T the
number of tiles in the batch (tiles of 2x2 outputs; odd sizes get a zero-padded last tile). The
gradients are the adjoints of the same three linear maps: dM = A dy A^T, dV[p] = U[p]^T dM[p]
(then B dV B^T summed into the overlapping input tiles), dU[p] = dM[p] V[p]^T (then G^T dU G).
So the whole training step of a layer does 2.25x fewer multiply-adds in BLAS; the transforms are
streaming passes that replace the im2col/col2im packing, and V (4 numbers per input pixel) is
what the forward keeps for the weight gradient instead of im2col's 9.

It pays where the GEMMs are big and the weight is small next to the activations. The
transformed weight is 16 numbers per 3x3 filter, made in forward and in the input gradient and
reduced back in the weight gradient, so with few tiles per filter the weight transforms eat the
GEMM savings. Forward + both gradients against im2col (AMD EPYC, 2 threads, float32, ms):

    layer (N, C -> O, map)     tiles   im2col   Winograd
    8, 64 -> 64, 32x32          2048     15.7      11.5
    8, 128 -> 128, 16x16         512     12.2       8.0
    8, 256 -> 256, 8x8           128     11.0       7.4
    4, 256 -> 256, 8x8            64      7.1       7.4
    8, 512 -> 512, 4x4            32     12.8      14.8
    8, 512 -> 512, 2x2             8      4.3      16.6
    16, 384 -> 256, 7x7          256     28.8      26.3   (a quarter of the 8x8 outputs wasted;
    16, 256 -> 256, 7x7          256     19.6      20.6    +-10% run to run: a wash)

so `applies` takes Winograd from _MIN_TILES = 128 tiles, with at least _MIN_CHANNELS channels
on both sides, at least _MIN_USED of the tiles' outputs inside the image, and transformed
operands under _MAX_PLANES elements. In a training step (benchmarks/ab.py, paired): VGG-19
153 -> 135 ms, ResNet-50 186 -> 173. The transforms are one pass each, a tile per loop
iteration held in registers (the first version, whole-row passes through scratch rows, was
2-3x slower and gave back half the gain); the 16 planes of a transformed array are a cache
line further apart than contiguous (`_planes`), since power-of-two planes that start at equal
addresses modulo 4 KiB thrashed the same cache sets (weight transform 10.7 -> 2.7 ms at 512x512).
The transforms round a little more than the direct sum: float32 results differ from im2col's by
~1e-6 relative; float64 agrees to ~1e-15 (tests/nn/test_winograd.py, with gradcheck).
Reference for the matrices: A. Lavin and S. Gray, "Fast Algorithms for Convolutional Neural
Networks", CVPR 2016.

NOTE [Winograd F(4x4, 3x3)]
The same scheme with 4x4 output blocks from 6x6 input tiles (kernels in winograd4.py): 36
GEMMs instead of 16, but on a quarter of the tiles, so 36/16 = 2.25 multiplications per output
against F(2x2, 3x3)'s 4 and the direct form's 9, and the transformed input is 2.25 numbers per
pixel instead of 4 (less memory kept for the weight gradient, less traffic in the transforms).
The transformed weight is 36 numbers per filter, so it needs even more tiles per filter than
F(2x2, 3x3) to pay; the tile-count threshold is _MIN_TILES_4 tiles of 4x4 (with the other
conditions of `applies` unchanged), and below it F(2x2, 3x3) is tried as before. Forward + both
gradients, one thread, CPU ms (a busy machine, smoke figures, scratch A/B of the two schemes):

    layer (N, C -> O, map)     F(2x2)   F(4x4)
    8, 64 -> 64, 32x32          17.3     11.8
    8, 64 -> 128, 16x16          7.2      4.8
    8, 128 -> 128, 16x16        13.0      9.3
    8, 128 -> 128, 8x8           3.0      2.3
    8, 256 -> 256, 8x8          12.2     11.3

Accuracy is the price: the transforms have entries up to 8 and down to 1/24, and float32
results differ from im2col's by up to ~1e-5 of the largest entry on 64-256 channels (F(2x2, 3x3):
~1e-6; torch's direct convolution rounds like im2col). float64 agrees to ~1e-14. Training is
not affected at that level (the Table 1 model steps match torch within their float32
tolerances, tests/test_table1_models.py); code that needs the direct sum's rounding can raise
_MIN_TILES_4.
The threshold was 32 tiles, which put VGG-19's 8x8 maps at batch 8 (exactly 32 tiles) on
F(4x4, 3x3); measured again at two threads with the transforms in parts, F(4x4, 3x3) won
there per layer but not per step on AMD EPYC, and per step too on Intel Xeon, so it is 32 again
(NOTE [Winograd thresholds at two threads]).
Earlier figures (main-thread CPU) had F(2x2, 3x3) ahead there: with OpenBLAS on two threads
the 36 GEMMs there are thin (32 columns) and the weight, transformed three times a step
(forward, again in the input gradient since U is not kept for deep layers, and the adjoint),
is 36 numbers per filter against 16, so F(2x2, 3x3) wins: forward + both gradients,
main-thread CPU ms at the default threads (min of 15 / 25, load 2.4 / 3.5), F(4x4) vs F(2x2):
(8, 256 -> 256, 8x8) 13.2 vs 9.0 and 20.6 vs 11.9; (8, 128 -> 256, 8x8) 5.3 vs 5.4, 7.6 vs
6.8; (8, 128 -> 128, 8x8) 2.9 vs 2.6, 4.4 vs 4.8; on 16x16 maps (128 tiles) F(4x4) keeps its
lead ((8, 128 -> 128) 11.7 vs 16.2). One thread, whole VGG-19 steps are the same within noise
(thread CPU 199-203 ms either way). Hence 64 then.
"""

import numba
import numpy as np

from ... import _onepool
from ..._backend import reusable_empty
from . import split
from . import winograd4 as _w4
from .planes import _crop_plane, _fill_interior

# When Winograd beats im2col (measurements in `applies`): fewest tiles (2x2 output blocks over
# the batch), fewest channels, and the smallest share of the tiles' outputs inside the image.
_MIN_TILES = 128
# Fewest F(2x2, 3x3) tiles when the GEMMs and transforms all run on the kernel threads (NOTE
# [Winograd with every pass on two threads]).
_MIN_TILES_SPLIT = 32
_MIN_CHANNELS = 16
_MIN_USED = 0.8
# Fewest 4x4-output tiles for F(4x4, 3x3) instead of F(2x2, 3x3); NOTE [Winograd F(4x4, 3x3)]
# and NOTE [Winograd thresholds at two threads] (32: VGG-19's 8x8 maps at batch 8).
_MIN_TILES_4 = 32
# Fewest F(2x2, 3x3) tiles for a layer of at most _SMALL_WEIGHT (input x output channel pairs):
# NOTE [Winograd thresholds at two threads]; 128 = as any other layer (32 wins per layer only).
_MIN_TILES_SMALL_WEIGHT = 128
_SMALL_WEIGHT = 1 << 17
# Largest transformed operand (elements) taken here: V and M are not chunked over the batch
# like im2col (conv.py's _COLS_BUDGET), so bigger layers stay there and memory stays bounded.
_MAX_PLANES = 1 << 26


def applies(x_shape, w_shape, geo, groups):
    """Whether a convolution of these shapes runs here (NOTE [Winograd convolution]).

    geo = (kh, kw, sh, sw, ph, pw, dh, dw). Only 3x3 kernels, stride 1, dilation 1, one group,
    padding 0 to 2 (any padding is correct; more than 2 leaves whole zero tiles to compute).
    """
    kh, kw, sh, sw, ph, pw, dh, dw = geo
    if (kh, kw, sh, sw, dh, dw, groups) != (3, 3, 1, 1, 1, 1, 1):
        return False
    if not (0 <= ph <= 2 and 0 <= pw <= 2):
        return False
    return _tile_size(x_shape, w_shape, ph, pw) != 0


def _fits(x_shape, w_shape, ph, pw, m, min_tiles, min_used):
    """Whether tiles of m x m outputs pay: enough of them, enough of their outputs inside the
    image, and transformed operands under _MAX_PLANES elements."""
    n, c, h, w = x_shape
    th, tw = _tiles(h, w, ph, pw, m)
    tiles = n * th * tw
    if th <= 0 or tw <= 0 or tiles < min_tiles:
        return False
    if (m + 2) ** 2 * max(c, w_shape[0]) * tiles > _MAX_PLANES:
        return False
    oh, ow = h + 2 * ph - 2, w + 2 * pw - 2
    return oh * ow >= min_used * m * m * th * tw


def _tile_size(x_shape, w_shape, ph, pw):
    """Outputs per tile side: 4 (F(4x4, 3x3)), 2 (F(2x2, 3x3)) or 0 (im2col), for a 3x3
    stride-1 convolution (NOTE [Winograd F(4x4, 3x3)])."""
    if x_shape[1] < _MIN_CHANNELS or w_shape[0] < _MIN_CHANNELS:
        return 0
    if _fits(x_shape, w_shape, ph, pw, 4, _MIN_TILES_4, _MIN_USED):
        return 4
    # every pass on the pool too: NOTE [Winograd with every pass on two threads]
    min_tiles = _MIN_TILES_SPLIT if split.split_gemms() or _onepool.enabled() else _MIN_TILES
    if x_shape[1] * w_shape[0] <= _SMALL_WEIGHT:  # NOTE [Winograd thresholds at two threads]
        min_tiles = min(min_tiles, _MIN_TILES_SMALL_WEIGHT)
    if _fits(x_shape, w_shape, ph, pw, 2, min_tiles, _MIN_USED):
        return 2
    return 0


# NOTE [Winograd with every pass on two threads]
# _MIN_TILES = 128 leaves the 4x4 maps of deep layers (32 tiles at batch 8) to im2col because,
# with OpenBLAS threading the GEMMs and the transforms running on one core, the transforms
# (the 16-plane weight transform above all) cost what the smaller GEMMs save. Counted in CPU
# time instead (one thread, forward + both gradients, min of 12, busy machine), F(2x2, 3x3)
# wins there: (8, 512 -> 512, 4x4) 20.4 -> 16.9 ms, (8, 256 -> 512, 4x4) 9.7 -> 7.2, (8, 256 ->
# 256, 4x4) 4.8 -> 3.6; it still loses on 2x2 maps (8 tiles: 6.0 -> 10.1). So when every pass
# runs on the kernel threads (NOTE [Convolution GEMMs on the kernel threads] in split.py) the
# threshold is _MIN_TILES_SPLIT = 32 (a training step of VGG-19: -6.5% CPU, ResNet-50: -1.7%).

# NOTE [Winograd thresholds at two threads]
# The thresholds above came from one-thread CPU time or from before the transforms ran in parts
# on OpenBLAS's worker (NOTE [Two halves on two threads] in split.py). Timed again per layer at
# two threads, wall clock (benchmarks/conv_algos.py vgg19 resnet50, median of 7, quiet slot at
# load 1.6; forward + a backward of both gradients, ms; benchmarks/RESULTS.md, nineteenth
# session, helper conv):
#
#     layer (N, C -> O, map)    tiles (2x2 / 4x4)   im2col    F(2x2)    F(4x4)
#     8, 128 -> 256, 8x8            128 / 32          5.42      4.36      3.50
#     8, 256 -> 256, 8x8            128 / 32         10.44      7.06      6.80
#     8, 128 -> 128, 8x8            128 / 32          3.15      2.62      2.46
#     8, 256 -> 512, 4x4             32 / 8           5.57      4.92      8.42
#     8, 256 -> 256, 4x4             32 / 8           2.75      2.46      3.79
#     8, 512 -> 512, 4x4             32 / 8          11.86     12.95     22.38
#     8, 512 -> 512, 2x2              8 / 2           4.08      8.67     22.47
#
# So per layer F(4x4, 3x3) pays from 32 tiles, and F(2x2, 3x3) from 32 tiles where the weight
# has at most _SMALL_WEIGHT channel pairs (its 16-plane transform, 8 MB at 2^17 pairs); the
# 512 x 512 layers on 4x4 maps stay on im2col. But not per training step: with _MIN_TILES_4 and
# _MIN_TILES_SMALL_WEIGHT at 32, whole-step A/Bs (ab.py old/new, paired, 12-16 samples) read
# VGG-19 0.975 and 0.968, ResNet-50 0.986 and 1.018 (slots at load 2.1 and 3.0). Isolated, a
# layer finds its transformed weight and operands in the 32 MB L3 from the previous call; in a
# step they come from memory, and F(4x4, 3x3)'s 36-plane weight is the biggest of the three
# (the same forward took 1.3-2x its isolated time in a step, im2col's ~1.1x). So both stayed at
# the old values (64 and 128) on that machine (AMD EPYC).
# On the twenty-second session's machine (Intel Xeon, AVX-512, 2 vCPUs) _MIN_TILES_4 = 32 wins
# per step too: ab.py vgg19 with 64 vs 32, four quiet slots, paired medians (old/new) 1.037,
# 1/0.989, 1/0.970, 1.038 (16-24 samples; ~3 % of a ~123 ms step), ResNet-50 1/0.987, 1.004
# (a wash). Per layer there (conv_algos.py vgg19, step ms, F(2x2) / F(4x4) / torch): 128 -> 256
# 4.31 / 3.50 / 3.43, 256 -> 256 7.21 / 6.47 / 6.46. So 32; _MIN_TILES_SMALL_WEIGHT stays 128.


def _driver_tile(x_shape, w_shape, ph, pw):
    """The drivers' tile size: `_tile_size`'s, and F(2x2, 3x3) for shapes called here directly
    that `applies` would have sent to im2col (tests do)."""
    return _tile_size(x_shape, w_shape, ph, pw) or 2


def _tiles(h, w, ph, pw, m=2):
    """Tiles along each axis: ceil(output size / m)."""
    return (h + 2 * ph - 3 + m) // m, (w + 2 * pw - 3 + m) // m


# ---------------------------------------------------------------------------------------------
# Transform kernels. Tile t = (n * th + i) * tw + j covers outputs (2i..2i+1, 2j..2j+1) and padded
# input rows/columns 2i..2i+3, 2j..2j+3. Transformed arrays are (16, channels, T), p = 4*a + b
# for row a, column b of the 4x4 tile: each of the 16 GEMM operands is one plane (see `_planes`).
# Each 2-D transform is a 1-D one down the tile's columns, then the same along its rows; a tile
# is done in registers, one per loop iteration (2-3x faster than whole-row passes through
# scratch rows). The adjoint kernels add tile contributions where tiles overlap.


@numba.njit(nogil=True, cache=True, inline="always")
def _bt(d0, d1, d2, d3):
    """B^T d for one column of 4 inputs."""
    return d0 - d2, d1 + d2, d2 - d1, d1 - d3


@numba.njit(nogil=True, cache=True, inline="always")
def _b(e0, e1, e2, e3):
    """B e: the adjoint of `_bt`."""
    return e0, e1 - e2 + e3, e1 + e2 - e0, -e3


@numba.njit(nogil=True, cache=True, inline="always")
def _at(m0, m1, m2, m3):
    """A^T m: 4 products to 2 outputs."""
    return m0 + m1 + m2, m1 - m2 - m3


@numba.njit(nogil=True, cache=True, inline="always")
def _a(y0, y1):
    """A y: the adjoint of `_at`."""
    return y0, y0 + y1, y0 - y1, -y1


@numba.njit(nogil=True, cache=True, inline="always")
def _g(g0, g1, g2, half):
    """G g: 3 filter taps to 4 (half: 0.5 in the arrays' dtype, so float32 stays float32)."""
    return g0, half * (g0 + g1 + g2), half * (g0 - g1 + g2), g2


@numba.njit(nogil=True, cache=True, inline="always")
def _gt(u0, u1, u2, u3, half):
    """G^T u: the adjoint of `_g`."""
    return u0 + half * (u1 + u2), half * (u1 - u2), half * (u1 + u2) + u3


@numba.njit(nogil=True, cache=True)
def _k_winograd_input(x, v, ph, pw, th, tw, lo, hi):
    """v[:, c, t] = B^T d B for every 4x4 input tile d of every (sample, channel)."""
    n_batch, n_chan, h, w = x.shape
    plane = np.zeros((2 * th + 2, 2 * tw + 2), dtype=x.dtype)  # padded copy; border stays 0
    for c in range(lo, hi):
        for n in range(n_batch):
            _fill_interior(plane, x[n, c], ph, pw)
            for i in range(th):
                r0, r1, r2, r3 = plane[2 * i], plane[2 * i + 1], plane[2 * i + 2], plane[2 * i + 3]
                base = (n * th + i) * tw
                vt = v[:, c, base:base + tw]
                for j in range(tw):
                    q = 2 * j
                    c0 = _bt(r0[q], r1[q], r2[q], r3[q])  # down each column
                    c1 = _bt(r0[q + 1], r1[q + 1], r2[q + 1], r3[q + 1])
                    c2 = _bt(r0[q + 2], r1[q + 2], r2[q + 2], r3[q + 2])
                    c3 = _bt(r0[q + 3], r1[q + 3], r2[q + 3], r3[q + 3])
                    for a in range(4):  # along each row
                        vt[4 * a, j], vt[4 * a + 1, j], vt[4 * a + 2, j], vt[4 * a + 3, j] = _bt(
                            c0[a], c1[a], c2[a], c3[a])


@numba.njit(nogil=True, cache=True)
def _k_winograd_input_adjoint(dv, gx, ph, pw, th, tw, lo, hi):
    """gx = the adjoint of `_k_winograd_input`: B dV B^T of every tile, summed where tiles
    overlap, padding cropped."""
    n_batch, n_chan, h, w = gx.shape
    plane = np.empty((2 * th + 2, 2 * tw + 2), dtype=gx.dtype)
    for c in range(lo, hi):
        for n in range(n_batch):
            plane[:] = 0
            for i in range(th):
                r0, r1, r2, r3 = plane[2 * i], plane[2 * i + 1], plane[2 * i + 2], plane[2 * i + 3]
                base = (n * th + i) * tw
                g = dv[:, c, base:base + tw]
                for j in range(tw):
                    e0 = _b(g[0, j], g[1, j], g[2, j], g[3, j])  # along each row
                    e1 = _b(g[4, j], g[5, j], g[6, j], g[7, j])
                    e2 = _b(g[8, j], g[9, j], g[10, j], g[11, j])
                    e3 = _b(g[12, j], g[13, j], g[14, j], g[15, j])
                    for b in range(4):  # down each column, into the overlapping tiles' sum
                        d0, d1, d2, d3 = _b(e0[b], e1[b], e2[b], e3[b])
                        q = 2 * j + b
                        r0[q] += d0
                        r1[q] += d1
                        r2[q] += d2
                        r3[q] += d3
            _crop_plane(plane, gx[n, c], ph, pw)


@numba.njit(nogil=True, cache=True)
def _k_winograd_output(m, bias, y, th, tw, lo, hi):
    """y[n, o] = A^T m A for every tile (plus bias[o]; no bias when bias is empty)."""
    n_batch, n_out, oh, ow = y.shape
    out = np.empty((2, 2 * tw), dtype=y.dtype)
    zero = np.zeros(1, dtype=y.dtype)[0]  # a float64 0.0 would turn float32 sums into float64
    for o in range(lo, hi):
        b = bias[o] if bias.size else zero
        for n in range(n_batch):
            for i in range(th):
                base = (n * th + i) * tw
                mt = m[:, o, base:base + tw]
                for j in range(tw):
                    c0 = _at(mt[0, j], mt[4, j], mt[8, j], mt[12, j])  # down each column
                    c1 = _at(mt[1, j], mt[5, j], mt[9, j], mt[13, j])
                    c2 = _at(mt[2, j], mt[6, j], mt[10, j], mt[14, j])
                    c3 = _at(mt[3, j], mt[7, j], mt[11, j], mt[15, j])
                    for a in range(2):  # along each row
                        y0, y1 = _at(c0[a], c1[a], c2[a], c3[a])
                        out[a, 2 * j] = y0 + b
                        out[a, 2 * j + 1] = y1 + b
                for a in range(min(2, oh - 2 * i)):  # a last tile row past the edge is dropped
                    src = out[a]
                    dst = y[n, o, 2 * i + a]
                    for q in range(ow):
                        dst[q] = src[q]


@numba.njit(nogil=True, cache=True)
def _k_winograd_output_adjoint(gy, dm, th, tw, lo, hi):
    """dm[:, o, t] = A g A^T for the 2x2 block g of gy each tile produced (zeros past the edge):
    the adjoint of `_k_winograd_output`."""
    n_batch, n_out, oh, ow = gy.shape
    g = np.zeros((2, 2 * tw), dtype=gy.dtype)  # columns past ow stay 0
    for o in range(lo, hi):
        for n in range(n_batch):
            for i in range(th):
                for a in range(2):
                    row = g[a]
                    if 2 * i + a < oh:
                        src = gy[n, o, 2 * i + a]
                        for q in range(ow):
                            row[q] = src[q]
                    else:
                        row[:] = 0
                base = (n * th + i) * tw
                mt = dm[:, o, base:base + tw]
                for j in range(tw):
                    c0 = _a(g[0, 2 * j], g[1, 2 * j])  # down each column
                    c1 = _a(g[0, 2 * j + 1], g[1, 2 * j + 1])
                    for a in range(4):  # along each row
                        mt[4 * a, j], mt[4 * a + 1, j], mt[4 * a + 2, j], mt[4 * a + 3, j] = _a(
                            c0[a], c1[a])


@numba.njit(nogil=True, cache=True)
def _k_winograd_weight(w, u, lo, hi):
    """u[:, o, c] = G g G^T for every 3x3 filter g = w[o, c]."""
    n_chan = w.shape[1]
    half = np.full(1, 0.5, dtype=w.dtype)[0]
    for o in range(lo, hi):
        for c in range(n_chan):
            g = w[o, c]
            c0 = _g(g[0, 0], g[1, 0], g[2, 0], half)  # down each column
            c1 = _g(g[0, 1], g[1, 1], g[2, 1], half)
            c2 = _g(g[0, 2], g[1, 2], g[2, 2], half)
            for a in range(4):  # along each row
                u[4 * a, o, c], u[4 * a + 1, o, c], u[4 * a + 2, o, c], u[4 * a + 3, o, c] = _g(
                    c0[a], c1[a], c2[a], half)


@numba.njit(nogil=True, cache=True)
def _k_winograd_weight_adjoint(du, gw, lo, hi):
    """gw[o, c] = G^T du G: the adjoint of `_k_winograd_weight`."""
    n_chan = gw.shape[1]
    half = np.full(1, 0.5, dtype=gw.dtype)[0]
    for o in range(lo, hi):
        for c in range(n_chan):
            e0 = _gt(du[0, o, c], du[1, o, c], du[2, o, c], du[3, o, c], half)  # along each row
            e1 = _gt(du[4, o, c], du[5, o, c], du[6, o, c], du[7, o, c], half)
            e2 = _gt(du[8, o, c], du[9, o, c], du[10, o, c], du[11, o, c], half)
            e3 = _gt(du[12, o, c], du[13, o, c], du[14, o, c], du[15, o, c], half)
            g = gw[o, c]
            for b in range(3):  # down each column
                g[0, b], g[1, b], g[2, b] = _gt(e0[b], e1[b], e2[b], e3[b], half)


# Parts drivers on the one pool (NOTE [Ranges on the one pool] in split.py), one per role for
# both tile sizes: the transformed operand's plane count picks the kernel (36 planes: F(4x4, 3x3)
# in winograd4.py, 16: F(2x2, 3x3) here), so the two kernel families share one set of drivers.
_PLANES_4 = 36


@_onepool.twin
def _p_input(x, v, ph, pw, th, tw, n, parts):
    for p in numba.prange(parts):
        lo, hi = n * p // parts, n * (p + 1) // parts
        if v.shape[0] == _PLANES_4:
            _w4._k_input(x, v, ph, pw, th, tw, lo, hi)
        else:
            _k_winograd_input(x, v, ph, pw, th, tw, lo, hi)


@_onepool.twin
def _p_input_adjoint(dv, gx, ph, pw, th, tw, n, parts):
    for p in numba.prange(parts):
        lo, hi = n * p // parts, n * (p + 1) // parts
        if dv.shape[0] == _PLANES_4:
            _w4._k_input_adjoint(dv, gx, ph, pw, th, tw, lo, hi)
        else:
            _k_winograd_input_adjoint(dv, gx, ph, pw, th, tw, lo, hi)


@_onepool.twin
def _p_output(m, bias, y, th, tw, n, parts):
    for p in numba.prange(parts):
        lo, hi = n * p // parts, n * (p + 1) // parts
        if m.shape[0] == _PLANES_4:
            _w4._k_output(m, bias, y, th, tw, lo, hi)
        else:
            _k_winograd_output(m, bias, y, th, tw, lo, hi)


@_onepool.twin
def _p_output_adjoint(gy, dm, th, tw, n, parts):
    for p in numba.prange(parts):
        lo, hi = n * p // parts, n * (p + 1) // parts
        if dm.shape[0] == _PLANES_4:
            _w4._k_output_adjoint(gy, dm, th, tw, lo, hi)
        else:
            _k_winograd_output_adjoint(gy, dm, th, tw, lo, hi)


@_onepool.twin
def _p_weight(w, u, n, parts):
    for p in numba.prange(parts):
        lo, hi = n * p // parts, n * (p + 1) // parts
        if u.shape[0] == _PLANES_4:
            _w4._k_weight(w, u, lo, hi)
        else:
            _k_winograd_weight(w, u, lo, hi)


@_onepool.twin
def _p_weight_adjoint(du, gw, n, parts):
    for p in numba.prange(parts):
        lo, hi = n * p // parts, n * (p + 1) // parts
        if du.shape[0] == _PLANES_4:
            _w4._k_weight_adjoint(du, gw, lo, hi)
        else:
            _k_winograd_weight_adjoint(du, gw, lo, hi)


for _kernel, _driver in (
        (_k_winograd_input, _p_input), (_w4._k_input, _p_input),
        (_k_winograd_input_adjoint, _p_input_adjoint), (_w4._k_input_adjoint, _p_input_adjoint),
        (_k_winograd_output, _p_output), (_w4._k_output, _p_output),
        (_k_winograd_output_adjoint, _p_output_adjoint),
        (_w4._k_output_adjoint, _p_output_adjoint),
        (_k_winograd_weight, _p_weight), (_w4._k_weight, _p_weight),
        (_k_winograd_weight_adjoint, _p_weight_adjoint),
        (_w4._k_weight_adjoint, _p_weight_adjoint)):
    split.pooled(_kernel, _driver)


# ---------------------------------------------------------------------------------------------
# Drivers (C-contiguous float arrays; `applies` has been checked). Each takes its tile size from
# `_driver_tile`, so a forward and the backward of the same shapes agree on it.

def _kernel(m, role):
    """The transform kernel of tile size m for a role ("input", "input_adjoint", "output",
    "output_adjoint", "weight", "weight_adjoint"). Looked up by name at each call, not kept in a
    table: benchmarks/profile_shares.py times numba kernels by replacing module attributes, and
    a table of references made at import time hid the transforms in its "Python" share."""
    if m == 4:
        return getattr(_w4, "_k_" + role)
    return globals()["_k_winograd_" + role]


def _planes(rows, cols, dtype, count=16):
    """An uninitialised (count, rows, cols) array whose planes are one cache line further apart
    than contiguous ones. Contiguous planes of a power-of-two size start at addresses equal
    modulo 4 KiB, and a loop touching all 16 at once thrashes the same cache sets."""
    size = rows * cols + 64 // np.dtype(dtype).itemsize
    flat = reusable_empty((count * size,), dtype)  # NOTE [Reused buffers] in _backend.py
    return flat.reshape(count, size)[:, :rows * cols].reshape(count, rows, cols)


def _transformed_input(x, ph, pw, m):
    n, c, h, w = x.shape
    th, tw = _tiles(h, w, ph, pw, m)
    v = _planes(c, n * th * tw, x.dtype, (m + 2) ** 2)
    # NOTE [Two halves on two threads] in split.py
    split.run(_kernel(m, "input"), c, v.size, x, v, ph, pw, th, tw, family="winograd")
    return v


def _transformed_weight(w, m):
    u = _planes(w.shape[0], w.shape[1], w.dtype, (m + 2) ** 2)
    split.run(_kernel(m, "weight"), w.shape[0], u.size, w, u, family="winograd")
    return u


def forward(x, w, bias, padding, keep=None):
    """y = conv2d(x, w, bias, stride 1, padding) for a (O, C, 3, 3) weight.

    keep: a list to which the transformed input and the transformed weight are appended, for
    `weight_grad`'s ``packed`` and `input_grad`'s ``u`` (NOTE [Keeping the transformed weight]).
    """
    n, c, h, wd = x.shape
    o = w.shape[0]
    ph, pw = padding
    m = _driver_tile(x.shape, w.shape, ph, pw)
    th, tw = _tiles(h, wd, ph, pw, m)
    v = _transformed_input(x, ph, pw, m)
    prod = _planes(o, v.shape[2], x.dtype, (m + 2) ** 2)
    u = _transformed_weight(w, m)
    split.gemm_planes(u, v, out=prod)
    y = reusable_empty((n, o, h + 2 * ph - 2, wd + 2 * pw - 2), x.dtype)
    split.run(_kernel(m, "output"), o, prod.size, prod,
              np.empty(0, x.dtype) if bias is None else bias, y, th, tw, family="winograd")
    if keep is not None:
        keep.append(v)
        if u.nbytes <= _KEEP_WEIGHT_MAX[0] * x.nbytes:  # NOTE [Keeping the transformed weight]
            keep.append(u)
    return y


def _transformed_grad(gy, m):
    n, o, oh, ow = gy.shape
    th, tw = -(-oh // m), -(-ow // m)
    dm = _planes(o, n * th * tw, gy.dtype, (m + 2) ** 2)
    split.run(_kernel(m, "output_adjoint"), o, dm.size, gy, dm, th, tw, family="winograd")
    return dm


# NOTE [Keeping the transformed weight]
# The input gradient needs the same transformed weight U as the forward (dV[p] = U[p]^T dM[p]).
# Making it is a pass that writes (m+2)^2 / 9 times the weight (4x for F(4x4, 3x3)) and is bound
# by memory: ~0.7 ms for a 256 -> 256 layer, ~4.6 ms of a one-thread VGG-19 step of ~195 ms done
# twice. So the forward hands U over with the transformed input (``keep``) and the backward uses
# it when its shape fits; Conv2d's saved-tensor check has already made sure the weight was not
# changed in place in between. The price is U held from forward to backward, and U grows with
# channels squared while the activations shrink: VGG-19's 256-channel layers on 8x8 maps hold a
# 9.4 MB U each against a 0.5 MB input, ~35 MB at the start of its backward (its peak: 388 MB,
# 1.07x torch's 361 MB in the twelfth session's window). So U is kept only when it is no bigger
# than the layer's input (`_KEEP_WEIGHT_MAX` times it): the small-channel layers keep it, the
# deep ones make it again in the backward (~3 ms of VGG-19's one-thread step).
_KEEP_WEIGHT_MAX = [1.0]


def input_grad(gy, w, x_shape, padding, dm=None, u=None):
    """Gradient in x of `forward` (dm: gy already transformed, if at hand; u: the transformed
    weight the forward made, NOTE [Keeping the transformed weight])."""
    m = _driver_tile(x_shape, w.shape, *padding)
    dm = _transformed_grad(gy, m) if dm is None else dm
    if u is None or u.shape != ((m + 2) ** 2,) + tuple(w.shape[:2]) or u.dtype != gy.dtype:
        u = _transformed_weight(w, m)
    dv = _planes(x_shape[1], dm.shape[2], gy.dtype, (m + 2) ** 2)
    split.gemm_planes(u.transpose(0, 2, 1), dm, out=dv)
    gx = np.empty(x_shape, dtype=gy.dtype)
    th, tw = _tiles(x_shape[2], x_shape[3], *padding, m)
    split.run(_kernel(m, "input_adjoint"), x_shape[1], dv.size, dv, gx, padding[0], padding[1],
              th, tw, family="winograd")
    return gx


def weight_grad(gy, x, w_shape, padding, packed=None, dm=None):
    """Gradient in w of `forward`; packed: the transformed input `forward` kept, if any."""
    m = _driver_tile(x.shape, w_shape, *padding)
    dm = _transformed_grad(gy, m) if dm is None else dm
    if packed is None or packed.shape != (dm.shape[0], x.shape[1], dm.shape[2]):
        packed = _transformed_input(x, *padding, m)  # none kept, or for another tile size
    v = packed
    du = _planes(w_shape[0], w_shape[1], x.dtype, (m + 2) ** 2)
    split.gemm_planes(dm, v.transpose(0, 2, 1), out=du)
    gw = reusable_empty(tuple(w_shape), x.dtype)  # outlives the step: NOTE [Reused buffers]
    split.run(_kernel(m, "weight_adjoint"), w_shape[0], du.size, du, gw,
              family="winograd")
    return gw


def backward(gy, x, w, padding, need_x, need_w, packed=None, packed_weight=None):
    """(gx, gw), None for those not requested; gy is transformed once for both. packed,
    packed_weight: the transformed input and weight `forward` kept, if any."""
    dm = _transformed_grad(gy, _driver_tile(x.shape, w.shape, *padding))

    def gx():
        return input_grad(gy, w, x.shape, padding, dm, packed_weight)

    def gw():
        return weight_grad(gy, x, w.shape, padding, packed, dm)

    macs = gy.size * w[0].size  # the direct convolution's
    if need_x and need_w and split.at_once_applies(macs):
        return tuple(split.at_once(gx, gw))  # NOTE [A convolution's two gradients at once]
    return gx() if need_x else None, gw() if need_w else None

