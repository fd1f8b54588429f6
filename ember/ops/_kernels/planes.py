"""Plane helpers shared by the convolution kernels (`conv`) and the depthwise kernels
(`depthwise`): block splitting, padded-buffer copies and the strided axpy loop."""

import numba

# Planes per parallel block: a fixed count keeps each block's scratch buffers allocated once per
# block instead of once per plane (an allocation costs as much as a small plane's arithmetic).
_N_BLOCKS = 64


@numba.njit(nogil=True, cache=True, inline="always")
def _block(blk, n_blocks, total):
    """Items [lo, hi) of block blk when `total` items are split into n_blocks blocks."""
    return blk * total // n_blocks, (blk + 1) * total // n_blocks


@numba.njit(nogil=True, cache=True, inline="always")
def _fill_interior(buf, plane, ph, pw):
    """Copy an (H, W) plane into buf at offset (ph, pw); the border of buf is left untouched.

    Working on a padded copy keeps every inner loop free of bounds tests: a loop that starts at
    0 and reads src[t] or src[t * s] lets LLVM prove the index is non-negative, drop numba's
    negative-index wraparound and vectorize.
    """
    for r in range(plane.shape[0]):
        src = plane[r]
        dst = buf[r + ph, pw:]
        for t in range(plane.shape[1]):
            dst[t] = src[t]


@numba.njit(nogil=True, cache=True, inline="always")
def _crop_plane(buf, plane, ph, pw):
    """Inverse of `_fill_interior`: copy the (H, W) interior of buf into plane."""
    for r in range(plane.shape[0]):
        src = buf[r + ph, pw:]
        dst = plane[r]
        for t in range(plane.shape[1]):
            dst[t] = src[t]


@numba.njit(nogil=True, cache=True, inline="always")
def _zero(flat):
    for t in range(flat.size):
        flat[t] = 0


@numba.njit(nogil=True, cache=True, inline="always")
def _axpy_strided(dst, alpha, src, s, count):
    """dst[t] += alpha * src[t * s] for t < count."""
    if s == 1:
        for t in range(count):
            dst[t] += alpha * src[t]
    elif s == 2:  # a literal stride vectorizes, a runtime one does not
        for t in range(count):
            dst[t] += alpha * src[t * 2]
    else:
        for t in range(count):
            dst[t] += alpha * src[t * s]
