"""Whether numpy's OpenBLAS gives the same bits for a product at one and at two threads.

Several tests check that ember's two-thread paths (a Linear's or a convolution's two gradients
at once, a compiled replay on two threads) give the serial path's values bit for bit. Their
GEMMs run at one OpenBLAS thread each where the serial path runs one GEMM at two, so the claim
holds only where OpenBLAS's bits do not depend on its thread count: true of its SkylakeX kernels
on the Intel Xeon and the AMD EPYC (Zen 5) of the thirtieth session, false of the Haswell kernels
that OPENBLAS_CORETYPE=Haswell pins on that EPYC (22795 of 786432 elements of a 1024x256x768
product differ). Where they differ, `assert_serial_bits` compares with a float32 tolerance
instead, and tests whose model amplifies the last bits (BatchNorm at batch 2) skip.
"""
from __future__ import annotations

import functools

import numpy as np

REASON = ("this machine's OpenBLAS gives different bits at one and two threads (e.g. "
          "OPENBLAS_CORETYPE=Haswell on an AMD CPU), so two-thread paths cannot match the "
          "serial bits; the test holds exactly where OpenBLAS's bits agree")


@functools.cache
def blas_bits_agree():
    from ember import _kernel_threads as kt
    funcs = kt._openblas()
    if not funcs:
        return True
    get, set_ = funcs
    before = get()
    rng = np.random.default_rng(0)
    try:
        # (shapes like the tests'; a tall-K product of 64 rows differs on the Zen 5's SkylakeX
        # kernels too, and no test compares such a product across thread counts)
        for m, k, n in ((1024, 256, 768), (512, 512, 512)):
            a = rng.standard_normal((m, k)).astype(np.float32)
            b = rng.standard_normal((k, n)).astype(np.float32)
            set_(2)
            two = a @ b
            set_(1)
            one = a @ b
            if not np.array_equal(one, two):
                return False
        return True
    finally:
        set_(before)


def assert_serial_bits(actual, desired, err_msg=""):
    """Bit for bit where OpenBLAS's bits agree across thread counts, else within float32
    rounding of sums of a thousand terms: relative to the array's largest magnitude, since a
    cancelling sum (a small entry of a weight gradient) keeps its terms' absolute error."""
    if blas_bits_agree():
        np.testing.assert_array_equal(actual, desired, err_msg=err_msg)
    else:
        scale = float(np.max(np.abs(desired), initial=1.0))
        np.testing.assert_allclose(actual, desired, rtol=1e-4, atol=1e-5 * scale,
                                   err_msg=err_msg)
