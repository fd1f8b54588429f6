"""Winograd F(2x2, 3x3) convolution for 3x3, stride-1, ungrouped float32 layers (Lavin & Gray).

NOTE [Winograd F(2x2,3x3)]
A 2x2 block of outputs of a 3x3 correlation needs a 4x4 input tile d. With

    B^T = [1  0 -1  0]     G = [ 1    0    0 ]     A^T = [1  1  1  0]
          [0  1  1  0]         [1/2  1/2  1/2]           [0  1 -1 -1]
          [0 -1  1  0]         [1/2 -1/2  1/2]
          [0  1  0 -1]         [ 0    0    1 ]

the block is ``A^T [(G g G^T) * (B^T d B)] A`` (``*`` elementwise): 16 multiplications instead of
36. Summed over input channels, each of the 16 positions xi of the 4x4 transformed tile is a GEMM:

    V[xi, t, c] = (B^T d_{t,c} B)[xi]     t = (n, tile row, tile col), c input channel
    U[xi, k, c] = (G g_{k,c} G^T)[xi]     one GEMM for all filters: kron(G, G) @ vec(g)
    M[xi]       = V[xi] @ U[xi]^T         (T, C) @ (C, K)
    y tile      = A^T M[:, t, k] A

so the GEMM work is 16/36 of im2col's. The transforms work on channels-last copies of the
activations: every transform is then 16 loads and 16 stores that are contiguous along the
channel axis, which LLVM vectorizes (a planar NCHW version ran at ~1 ns per element, 5-10x
slower, and made the method break even with im2col). The cost is one NCHW <-> NHWC copy of the
input and of the output.

Everything is linear, so the backward is the exact adjoint through the same transforms
transposed: dM = A dY A^T per tile, dV = dM @ U, dx = sum over (overlapping) tiles of B dV B^T,
dU = dM^T @ V, dg = G^T dU G. Coefficients are 0, +-1 and +-1/2, exact in binary; results differ
from im2col's only by rounding (float32: ~1e-6 relative). Used for float32 only, so float64
(gradcheck) keeps the direct method's rounding.

Kernels are serial; see NOTE [Kernel threading] in conv.py.
"""

import numba
import numpy as np

# Layers with fewer channels or fewer 2x2 output tiles (batch x tiles per image) stay on im2col:
# the 16 GEMMs (T, C) @ (C, K) are then too thin for OpenBLAS to beat im2col's single GEMM with
# 2.25x the work. Measured (python benchmarks/kernels.py --only winograd, fwd+bwd, min of 15):
# (16,384,7,7)->256 18.4 vs 26.2 ms, (8,256,8,8)->256 8.1 vs 9.3, (8,128,16,16)->128 9.6 vs 11.3;
# but (8,512,4,4)->512 (T = 32) 13.9 vs 9.9 and (8,64,32,32)->64 18.0 vs 14.0.
MIN_CHANNELS = 128
MIN_TILES = 128

# The 16 planes of V, M and their gradients are this many elements apart beyond their size:
# planes a power of two apart map to the same cache sets, and the transforms touch all 16 at
# once (3x slower stores without it).
_PLANE_PAD = 32

_G = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]])
_GG = np.kron(_G, _G).astype(np.float32)  # (16, 9): vec(G g G^T) = kron(G, G) vec(g)


def applies(x_shape, w_shape, geo, groups, dtype):
    """Whether a conv2d with these shapes and geometry (conv.py's `geo`) runs through Winograd."""
    kh, kw, sh, sw, ph, pw, dh, dw = geo
    if dtype != np.float32 or (kh, kw, sh, sw, dh, dw, groups) != (3, 3, 1, 1, 1, 1, 1):
        return False
    out_h, out_w = x_shape[2] + 2 * ph - 2, x_shape[3] + 2 * pw - 2
    n_tiles = x_shape[0] * ((out_h + 1) // 2) * ((out_w + 1) // 2)
    return (min(out_h, out_w) > 0 and min(x_shape[1], w_shape[0]) >= MIN_CHANNELS
            and n_tiles >= MIN_TILES)


def _planes(rows, cols):
    """A float32 (16, rows, cols) array with C-contiguous planes _PLANE_PAD elements apart."""
    step = rows * cols + _PLANE_PAD
    flat = np.empty(16 * step, dtype=np.float32)
    return np.lib.stride_tricks.as_strided(flat, (16, rows, cols), (4 * step, 4 * cols, 4),
                                           writeable=True)


# B^T, A, B and A^T applied to a vector (the four 1-D transforms; each 2-D one is two passes)

@numba.njit(nogil=True, cache=True, inline="always")
def _bt(a0, a1, a2, a3):
    return a0 - a2, a1 + a2, a2 - a1, a1 - a3


@numba.njit(nogil=True, cache=True, inline="always")
def _b(a0, a1, a2, a3):
    return a0, a1 - a2 + a3, a1 + a2 - a0, -a3


@numba.njit(nogil=True, cache=True, inline="always")
def _at(a0, a1, a2, a3):
    return a0 + a1 + a2, a1 - a2 - a3


@numba.njit(nogil=True, cache=True, inline="always")
def _a(a0, a1):
    return a0, a0 + a1, a0 - a1, -a1


@numba.njit(nogil=True, cache=True)
def _k_input_tf(xp, v, tiles_h, tiles_w):
    """v[xi, t, c] = (B^T d B)[xi] for the tile d = xp[n, 2ti:2ti+4, 2tj:2tj+4, c] of the
    zero-padded channels-last input xp (N, 2*tiles_h + 2, 2*tiles_w + 2, C)."""
    n_batch, n_chan = xp.shape[0], xp.shape[3]
    for n in range(n_batch):
        for ti in range(tiles_h):
            for tj in range(tiles_w):
                t = (n * tiles_h + ti) * tiles_w + tj
                r = 2 * ti
                q = 2 * tj
                for c in range(n_chan):
                    # columns of B^T d
                    c0 = _bt(xp[n, r, q, c], xp[n, r + 1, q, c], xp[n, r + 2, q, c],
                             xp[n, r + 3, q, c])
                    c1 = _bt(xp[n, r, q + 1, c], xp[n, r + 1, q + 1, c], xp[n, r + 2, q + 1, c],
                             xp[n, r + 3, q + 1, c])
                    c2 = _bt(xp[n, r, q + 2, c], xp[n, r + 1, q + 2, c], xp[n, r + 2, q + 2, c],
                             xp[n, r + 3, q + 2, c])
                    c3 = _bt(xp[n, r, q + 3, c], xp[n, r + 1, q + 3, c], xp[n, r + 2, q + 3, c],
                             xp[n, r + 3, q + 3, c])
                    for i in range(4):  # row i of (B^T d) B
                        o = _bt(c0[i], c1[i], c2[i], c3[i])
                        v[4 * i, t, c] = o[0]
                        v[4 * i + 1, t, c] = o[1]
                        v[4 * i + 2, t, c] = o[2]
                        v[4 * i + 3, t, c] = o[3]


@numba.njit(nogil=True, cache=True)
def _k_input_adjoint(dv, gxp, tiles_h, tiles_w):
    """gxp[n, 2ti:2ti+4, 2tj:2tj+4, c] += B dv[:, t, c] B^T for every tile (the adjoint of
    _k_input_tf); gxp is the zeroed padded channels-last gradient."""
    n_batch, n_chan = gxp.shape[0], gxp.shape[3]
    for n in range(n_batch):
        for ti in range(tiles_h):
            for tj in range(tiles_w):
                t = (n * tiles_h + ti) * tiles_w + tj
                r = 2 * ti
                q = 2 * tj
                for c in range(n_chan):
                    # rows of dv B^T
                    r0 = _b(dv[0, t, c], dv[1, t, c], dv[2, t, c], dv[3, t, c])
                    r1 = _b(dv[4, t, c], dv[5, t, c], dv[6, t, c], dv[7, t, c])
                    r2 = _b(dv[8, t, c], dv[9, t, c], dv[10, t, c], dv[11, t, c])
                    r3 = _b(dv[12, t, c], dv[13, t, c], dv[14, t, c], dv[15, t, c])
                    for j in range(4):  # column j of B (dv B^T)
                        o = _b(r0[j], r1[j], r2[j], r3[j])
                        gxp[n, r, q + j, c] += o[0]
                        gxp[n, r + 1, q + j, c] += o[1]
                        gxp[n, r + 2, q + j, c] += o[2]
                        gxp[n, r + 3, q + j, c] += o[3]


@numba.njit(nogil=True, cache=True)
def _k_output_tf(m, yh, tiles_h, tiles_w):
    """yh[n, 2ti:2ti+2, 2tj:2tj+2, k] = A^T m[:, t, k] A (channels-last, 2*tiles per side)."""
    n_batch, n_out = yh.shape[0], yh.shape[3]
    for n in range(n_batch):
        for ti in range(tiles_h):
            for tj in range(tiles_w):
                t = (n * tiles_h + ti) * tiles_w + tj
                r = 2 * ti
                q = 2 * tj
                for k in range(n_out):
                    # columns of A^T m
                    c0 = _at(m[0, t, k], m[4, t, k], m[8, t, k], m[12, t, k])
                    c1 = _at(m[1, t, k], m[5, t, k], m[9, t, k], m[13, t, k])
                    c2 = _at(m[2, t, k], m[6, t, k], m[10, t, k], m[14, t, k])
                    c3 = _at(m[3, t, k], m[7, t, k], m[11, t, k], m[15, t, k])
                    top = _at(c0[0], c1[0], c2[0], c3[0])
                    bottom = _at(c0[1], c1[1], c2[1], c3[1])
                    yh[n, r, q, k] = top[0]
                    yh[n, r, q + 1, k] = top[1]
                    yh[n, r + 1, q, k] = bottom[0]
                    yh[n, r + 1, q + 1, k] = bottom[1]


@numba.njit(nogil=True, cache=True)
def _k_output_adjoint(gyh, dm, tiles_h, tiles_w):
    """dm[:, t, k] = A g A^T for the 2x2 block g = gyh[n, 2ti:2ti+2, 2tj:2tj+2, k] of the
    zero-extended channels-last output gradient."""
    n_batch, n_out = gyh.shape[0], gyh.shape[3]
    for n in range(n_batch):
        for ti in range(tiles_h):
            for tj in range(tiles_w):
                t = (n * tiles_h + ti) * tiles_w + tj
                r = 2 * ti
                q = 2 * tj
                for k in range(n_out):
                    left = _a(gyh[n, r, q, k], gyh[n, r + 1, q, k])            # A g, column 0
                    right = _a(gyh[n, r, q + 1, k], gyh[n, r + 1, q + 1, k])   # column 1
                    for i in range(4):  # row i of (A g) A^T
                        o = _a(left[i], right[i])
                        dm[4 * i, t, k] = o[0]
                        dm[4 * i + 1, t, k] = o[1]
                        dm[4 * i + 2, t, k] = o[2]
                        dm[4 * i + 3, t, k] = o[3]


def _geometry(x_shape, padding):
    n, _, h, w = x_shape
    out_h, out_w = h + 2 * padding[0] - 2, w + 2 * padding[1] - 2
    tiles_h, tiles_w = (out_h + 1) // 2, (out_w + 1) // 2
    return out_h, out_w, tiles_h, tiles_w, n * tiles_h * tiles_w


def _input_tiles(x, padding, tiles_h, tiles_w, n_tiles):
    """V (16, T, C) of x (N, C, H, W)."""
    n, c, h, w = x.shape
    ph, pw = padding
    # (2*tiles + 2) >= H + 2*ph: the buffer holds the padded input, and where the last tiles
    # reach past it (odd output sizes) the entries stay zero
    xp = np.zeros((n, 2 * tiles_h + 2, 2 * tiles_w + 2, c), dtype=np.float32)
    xp[:, ph:ph + h, pw:pw + w] = x.transpose(0, 2, 3, 1)
    v = _planes(n_tiles, c)
    _k_input_tf(xp, v, tiles_h, tiles_w)
    return v


def filters(w):
    """U (16, K, C) of the (K, C, 3, 3) filters: one GEMM, kron(G, G) @ vec(g)."""
    k, c = w.shape[0], w.shape[1]
    return np.matmul(_GG, w.reshape(k * c, 9).T).reshape(16, k, c)


def forward(x, w, padding):
    """conv2d(x, w) without bias for a 3x3 stride-1 float32 layer (see `applies`)."""
    out_h, out_w, tiles_h, tiles_w, n_tiles = _geometry(x.shape, padding)
    v = _input_tiles(x, padding, tiles_h, tiles_w, n_tiles)
    k = w.shape[0]
    m = _planes(n_tiles, k)
    np.matmul(v, filters(w).transpose(0, 2, 1), out=m)
    yh = np.empty((x.shape[0], 2 * tiles_h, 2 * tiles_w, k), dtype=np.float32)
    _k_output_tf(m, yh, tiles_h, tiles_w)
    return np.ascontiguousarray(yh[:, :out_h, :out_w].transpose(0, 3, 1, 2))


def _output_grad_tiles(gy, tiles_h, tiles_w, n_tiles):
    """dM (16, T, K) = A g A^T for every 2x2 block g of gy (N, K, OH, OW), zero-extended."""
    n, k, out_h, out_w = gy.shape
    gyh = np.zeros((n, 2 * tiles_h, 2 * tiles_w, k), dtype=np.float32)
    gyh[:, :out_h, :out_w] = gy.transpose(0, 2, 3, 1)
    dm = _planes(n_tiles, k)
    _k_output_adjoint(gyh, dm, tiles_h, tiles_w)
    return dm


def input_grad(gy, w, x_shape, padding):
    """The gradient (N, C, H, W) of `forward` in x, from the output gradient gy."""
    _, _, tiles_h, tiles_w, n_tiles = _geometry(x_shape, padding)
    n, c, h, wd = x_shape
    dm = _output_grad_tiles(gy, tiles_h, tiles_w, n_tiles)
    dv = _planes(n_tiles, c)
    np.matmul(dm, filters(w), out=dv)
    gxp = np.zeros((n, 2 * tiles_h + 2, 2 * tiles_w + 2, c), dtype=np.float32)
    _k_input_adjoint(dv, gxp, tiles_h, tiles_w)
    ph, pw = padding
    return np.ascontiguousarray(gxp[:, ph:ph + h, pw:pw + wd].transpose(0, 3, 1, 2))


def weight_grad(gy, x, w_shape, padding):
    """The gradient (K, C, 3, 3) of `forward` in w, from gy and the input x."""
    _, _, tiles_h, tiles_w, n_tiles = _geometry(x.shape, padding)
    k, c = w_shape[0], w_shape[1]
    dm = _output_grad_tiles(gy, tiles_h, tiles_w, n_tiles)
    v = _input_tiles(x, padding, tiles_h, tiles_w, n_tiles)
    du = np.matmul(dm.transpose(0, 2, 1), v)  # (16, K, C)
    return np.matmul(du.reshape(16, k * c).T, _GG).reshape(w_shape)
