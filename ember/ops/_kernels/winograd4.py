"""The transform kernels of Winograd's F(4x4, 3x3): 4x4 output blocks from 6x6 input tiles, 36
GEMMs. The drivers, the choice between this and F(2x2, 3x3) and the reasoning are in winograd.py
(NOTE [Winograd convolution], NOTE [Winograd F(4x4, 3x3)]).

Transformed arrays are (36, channels, T), p = 6*a + b for row a, column b of the 6x6 tile; tile
t = (n * th + i) * tw + j covers outputs 4i..4i+3, 4j..4j+3 and padded input rows/columns
4i..4i+5, 4j..4j+5. The matrices (interpolation points 0, +-1, +-2, infinity) are those of
Lavin and Gray (CVPR 2016):

    B^T = [[4, 0, -5, 0, 1, 0],         G = [[ 1/4,     0,    0],    A^T = [[1, 1,  1, 1,  1, 0],
           [0, -4, -4, 1, 1, 0],              [-1/6, -1/6, -1/6],           [0, 1, -1, 2, -2, 0],
           [0, 4, -4, -1, 1, 0],              [-1/6,  1/6, -1/6],           [0, 1,  1, 4,  4, 0],
           [0, -2, -1, 2, 1, 0],              [1/24, 1/12,  1/6],           [0, 1, -1, 8, -8, 1]]
           [0, 2, -1, -2, 1, 0],              [1/24, -1/12, 1/6],
           [0, 4, 0, -5, 0, 1]]               [   0,    0,    1]]

Constants reach the kernels in the arrays' dtype (``_consts``), so float32 stays float32.
"""

import numba
import numpy as np

from .planes import _crop_plane, _fill_interior

_JIT = dict(nogil=True, cache=True, inline="always")


@numba.njit(**_JIT)
def _bt(d0, d1, d2, d3, d4, d5, four, five):
    """B^T d for one column of 6 inputs."""
    return (four * d0 - five * d2 + d4,
            d3 + d4 - four * (d1 + d2),
            four * (d1 - d2) - d3 + d4,
            d4 - d2 - (d1 + d1) + (d3 + d3),
            d4 - d2 + (d1 + d1) - (d3 + d3),
            four * d1 - five * d3 + d5)


@numba.njit(**_JIT)
def _b(e0, e1, e2, e3, e4, e5, four, five):
    """B e: the adjoint of `_bt`."""
    return (four * e0,
            four * (e2 - e1 + e5) + (e4 - e3) + (e4 - e3),
            -five * e0 - four * (e1 + e2) - e3 - e4,
            e1 - e2 + (e3 - e4) + (e3 - e4) - five * e5,
            e0 + e1 + e2 + e3 + e4,
            e5)


@numba.njit(**_JIT)
def _at(m0, m1, m2, m3, m4, m5, four, eight):
    """A^T m: 6 products to 4 outputs."""
    s, d = m1 + m2, m1 - m2
    s2, d2 = m3 + m4, m3 - m4
    return m0 + s + s2, d + d2 + d2, s + four * s2, d + eight * d2 + m5


@numba.njit(**_JIT)
def _a(y0, y1, y2, y3, four, eight):
    """A y: the adjoint of `_at`."""
    e, o = y0 + y2, y1 + y3
    e4, o8 = y0 + four * y2, y1 + y1 + eight * y3
    return y0, e + o, e - o, e4 + o8, e4 - o8, y3


@numba.njit(**_JIT)
def _g(g0, g1, g2, k):
    """G g: 3 filter taps to 6 (k from `_consts`)."""
    q, s, t, f = k[3], k[4], k[5], k[6]
    even = g0 + g2
    return q * g0, -s * (even + g1), s * (g1 - even), f * g0 + t * g1 + s * g2, \
        f * g0 - t * g1 + s * g2, g2


@numba.njit(**_JIT)
def _gt(u0, u1, u2, u3, u4, u5, k):
    """G^T u: the adjoint of `_g`."""
    q, s, t, f = k[3], k[4], k[5], k[6]
    a, c = u1 + u2, u3 + u4
    return q * u0 - s * a + f * c, s * (u2 - u1) + t * (u3 - u4), s * (c - a) + u5


@numba.njit(nogil=True, cache=True)
def _consts(probe):
    """(4, 5, 8, 1/4, 1/6, 1/12, 1/24) in the probe array's dtype."""
    k = np.empty(7, dtype=probe.dtype)
    k[0], k[1], k[2], k[3] = 4.0, 5.0, 8.0, 0.25
    k[4], k[5], k[6] = 1.0 / 6.0, 1.0 / 12.0, 1.0 / 24.0
    return k


@numba.njit(nogil=True, cache=True)
def _k_input(x, v, ph, pw, th, tw, lo, hi):
    """v[:, c, t] = B^T d B for every 6x6 input tile d of every (sample, channel).

    In two passes per row of tiles: B^T down every column of the padded row at once (one loop
    over the whole width, which vectorizes, and each column shared by two neighbouring tiles is
    transformed once), then B^T along each tile's 6 columns. The same arithmetic as a tile at a
    time, so the same numbers; (8, 64, 32, 32) 0.99 -> 0.62 ms, (8, 128, 16, 16) 0.51 -> 0.34 ms
    (one thread, best CPU time of 20)."""
    n_batch, n_chan, h, w = x.shape
    k = _consts(x)
    four, five = k[0], k[1]
    width = 4 * tw + 2
    plane = np.zeros((4 * th + 2, width), dtype=x.dtype)  # padded copy; border stays 0
    cols = np.empty((6, width), dtype=x.dtype)  # B^T down each column of one row of tiles
    for c in range(lo, hi):
        for n in range(n_batch):
            _fill_interior(plane, x[n, c], ph, pw)
            for i in range(th):
                r0, r1, r2 = plane[4 * i], plane[4 * i + 1], plane[4 * i + 2]
                r3, r4, r5 = plane[4 * i + 3], plane[4 * i + 4], plane[4 * i + 5]
                c0, c1, c2, c3, c4, c5 = cols[0], cols[1], cols[2], cols[3], cols[4], cols[5]
                for q in range(width):
                    e = _bt(r0[q], r1[q], r2[q], r3[q], r4[q], r5[q], four, five)
                    c0[q], c1[q], c2[q], c3[q], c4[q], c5[q] = e[0], e[1], e[2], e[3], e[4], e[5]
                base = (n * th + i) * tw
                vt = v[:, c, base:base + tw]
                for a in range(6):  # along each row of each tile
                    row = cols[a]
                    p = 6 * a
                    for j in range(tw):
                        q = 4 * j
                        e = _bt(row[q], row[q + 1], row[q + 2], row[q + 3], row[q + 4],
                                row[q + 5], four, five)
                        vt[p, j], vt[p + 1, j], vt[p + 2, j] = e[0], e[1], e[2]
                        vt[p + 3, j], vt[p + 4, j], vt[p + 5, j] = e[3], e[4], e[5]


@numba.njit(nogil=True, cache=True)
def _k_input_adjoint(dv, gx, ph, pw, th, tw, lo, hi):
    """gx = the adjoint of `_k_input`: B dV B^T of every tile, summed where tiles overlap,
    padding cropped."""
    n_batch, n_chan, h, w = gx.shape
    k = _consts(gx)
    four, five = k[0], k[1]
    plane = np.empty((4 * th + 2, 4 * tw + 2), dtype=gx.dtype)
    for c in range(lo, hi):
        for n in range(n_batch):
            plane[:] = 0
            for i in range(th):
                base = (n * th + i) * tw
                g = dv[:, c, base:base + tw]
                for j in range(tw):
                    e0 = _b(g[0, j], g[1, j], g[2, j], g[3, j], g[4, j], g[5, j], four, five)
                    e1 = _b(g[6, j], g[7, j], g[8, j], g[9, j], g[10, j], g[11, j], four, five)
                    e2 = _b(g[12, j], g[13, j], g[14, j], g[15, j], g[16, j], g[17, j], four,
                            five)
                    e3 = _b(g[18, j], g[19, j], g[20, j], g[21, j], g[22, j], g[23, j], four,
                            five)
                    e4 = _b(g[24, j], g[25, j], g[26, j], g[27, j], g[28, j], g[29, j], four,
                            five)
                    e5 = _b(g[30, j], g[31, j], g[32, j], g[33, j], g[34, j], g[35, j], four,
                            five)
                    for b in range(6):  # down each column, into the overlapping tiles' sum
                        d = _b(e0[b], e1[b], e2[b], e3[b], e4[b], e5[b], four, five)
                        q = 4 * j + b
                        for a in range(6):
                            plane[4 * i + a, q] += d[a]
            _crop_plane(plane, gx[n, c], ph, pw)


# Tiles per chunk of `_k_output`'s scratch (whole rows of tiles): ~80 KB of float32 scratch
_OUT_CHUNK = 512


@numba.njit(nogil=True, cache=True)
def _k_output(m, bias, y, th, tw, lo, hi):
    """y[n, o] = A^T m A for every tile (plus bias[o]; no bias when bias is empty).

    Per output channel, over chunks of whole rows of tiles: A^T down each tile column for all
    tiles of the chunk at once, then A^T along the rows, each a long loop over the tiles (the
    tiles of one channel are consecutive in m, so both vectorize), into a scratch laid out like
    the output rows, which are then copied whole. The same arithmetic as a tile at a time, so
    the same numbers; (8, 64, 32, 32) 0.61 -> 0.44 ms, (8, 128, 16, 16) 0.32 -> 0.26 ms, 8x8
    maps unchanged (one thread, best CPU time of 20)."""
    n_batch, n_out, oh, ow = y.shape
    k = _consts(y)
    four, eight = k[0], k[2]
    n_rows = n_batch * th  # rows of tiles
    per_chunk = min(n_rows, max(1, _OUT_CHUNK // tw))
    cols = np.empty((6, 4, per_chunk * tw), dtype=y.dtype)  # A^T down tile column b
    res = np.empty((4, per_chunk * tw * 4), dtype=y.dtype)  # output row a of each tile row
    zero = np.zeros(1, dtype=y.dtype)[0]  # a float64 0.0 would turn float32 sums into float64
    for o in range(lo, hi):
        bo = bias[o] if bias.size else zero
        mo = m[:, o]
        for r0 in range(0, n_rows, per_chunk):
            r1 = min(n_rows, r0 + per_chunk)
            t0, count = r0 * tw, (r1 - r0) * tw
            for b in range(6):  # down each column
                s0, s1, s2 = mo[b, t0:], mo[6 + b, t0:], mo[12 + b, t0:]
                s3, s4, s5 = mo[18 + b, t0:], mo[24 + b, t0:], mo[30 + b, t0:]
                d0, d1, d2, d3 = cols[b, 0], cols[b, 1], cols[b, 2], cols[b, 3]
                for t in range(count):
                    c = _at(s0[t], s1[t], s2[t], s3[t], s4[t], s5[t], four, eight)
                    d0[t], d1[t], d2[t], d3[t] = c[0], c[1], c[2], c[3]
            for a in range(4):  # along each row
                u0, u1, u2 = cols[0, a], cols[1, a], cols[2, a]
                u3, u4, u5 = cols[3, a], cols[4, a], cols[5, a]
                ra = res[a]
                for t in range(count):
                    e = _at(u0[t], u1[t], u2[t], u3[t], u4[t], u5[t], four, eight)
                    ra[4 * t], ra[4 * t + 1] = e[0] + bo, e[1] + bo
                    ra[4 * t + 2], ra[4 * t + 3] = e[2] + bo, e[3] + bo
            for r in range(r0, r1):
                n, i = r // th, r % th
                start = 4 * (r - r0) * tw
                for a in range(min(4, oh - 4 * i)):  # tile rows past the edge are dropped
                    src = res[a, start:]
                    dst = y[n, o, 4 * i + a]
                    for q in range(ow):
                        dst[q] = src[q]


@numba.njit(nogil=True, cache=True)
def _k_output_adjoint(gy, dm, th, tw, lo, hi):
    """dm[:, o, t] = A g A^T for the 4x4 block g of gy each tile produced (zeros past the
    edge): the adjoint of `_k_output`."""
    n_batch, n_out, oh, ow = gy.shape
    k = _consts(gy)
    four, eight = k[0], k[2]
    g = np.zeros((4, 4 * tw), dtype=gy.dtype)  # columns past ow stay 0
    for o in range(lo, hi):
        for n in range(n_batch):
            for i in range(th):
                for a in range(4):
                    row = g[a]
                    if 4 * i + a < oh:
                        src = gy[n, o, 4 * i + a]
                        for q in range(ow):
                            row[q] = src[q]
                    else:
                        row[:] = 0
                base = (n * th + i) * tw
                mt = dm[:, o, base:base + tw]
                for j in range(tw):
                    q = 4 * j
                    c0 = _a(g[0, q], g[1, q], g[2, q], g[3, q], four, eight)  # down each column
                    c1 = _a(g[0, q + 1], g[1, q + 1], g[2, q + 1], g[3, q + 1], four, eight)
                    c2 = _a(g[0, q + 2], g[1, q + 2], g[2, q + 2], g[3, q + 2], four, eight)
                    c3 = _a(g[0, q + 3], g[1, q + 3], g[2, q + 3], g[3, q + 3], four, eight)
                    for a in range(6):  # along each row
                        e = _a(c0[a], c1[a], c2[a], c3[a], four, eight)
                        p = 6 * a
                        mt[p, j], mt[p + 1, j], mt[p + 2, j] = e[0], e[1], e[2]
                        mt[p + 3, j], mt[p + 4, j], mt[p + 5, j] = e[3], e[4], e[5]


@numba.njit(nogil=True, cache=True)
def _k_weight(w, u, lo, hi):
    """u[:, o, c] = G g G^T for every 3x3 filter g = w[o, c]."""
    n_chan = w.shape[1]
    k = _consts(w)
    for o in range(lo, hi):
        for c in range(n_chan):
            g = w[o, c]
            c0 = _g(g[0, 0], g[1, 0], g[2, 0], k)  # down each column
            c1 = _g(g[0, 1], g[1, 1], g[2, 1], k)
            c2 = _g(g[0, 2], g[1, 2], g[2, 2], k)
            for a in range(6):  # along each row
                e = _g(c0[a], c1[a], c2[a], k)
                p = 6 * a
                u[p, o, c], u[p + 1, o, c], u[p + 2, o, c] = e[0], e[1], e[2]
                u[p + 3, o, c], u[p + 4, o, c], u[p + 5, o, c] = e[3], e[4], e[5]


@numba.njit(nogil=True, cache=True)
def _k_weight_adjoint(du, gw, lo, hi):
    """gw[o, c] = G^T du G: the adjoint of `_k_weight`."""
    n_chan = gw.shape[1]
    k = _consts(gw)
    for o in range(lo, hi):
        for c in range(n_chan):
            e0 = _gt(du[0, o, c], du[1, o, c], du[2, o, c], du[3, o, c], du[4, o, c],
                     du[5, o, c], k)  # along each row
            e1 = _gt(du[6, o, c], du[7, o, c], du[8, o, c], du[9, o, c], du[10, o, c],
                     du[11, o, c], k)
            e2 = _gt(du[12, o, c], du[13, o, c], du[14, o, c], du[15, o, c], du[16, o, c],
                     du[17, o, c], k)
            e3 = _gt(du[18, o, c], du[19, o, c], du[20, o, c], du[21, o, c], du[22, o, c],
                     du[23, o, c], k)
            e4 = _gt(du[24, o, c], du[25, o, c], du[26, o, c], du[27, o, c], du[28, o, c],
                     du[29, o, c], k)
            e5 = _gt(du[30, o, c], du[31, o, c], du[32, o, c], du[33, o, c], du[34, o, c],
                     du[35, o, c], k)
            g = gw[o, c]
            for b in range(3):  # down each column
                g[0, b], g[1, b], g[2, b] = _gt(e0[b], e1[b], e2[b], e3[b], e4[b], e5[b], k)
