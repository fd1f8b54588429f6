"""A twin kernel's serial version stays serial when numba's disk cache holds the parallel one
(they are cached under different names: `_onepool._renamed`)."""

import numba
import numpy as np

from ember import _onepool


def _thread_ids(out):
    for i in numba.prange(out.size):
        out[i] = numba.get_thread_id()


def test_twin_versions_are_cached_apart(one_pool):
    tw = _onepool.twin(_thread_ids)
    assert tw.serial.py_func.__qualname__ != tw.parallel.py_func.__qualname__
    out = np.full(1 << 16, -1, np.int64)
    tw.parallel(out)  # compiled (and cached) first: before the fix the serial one loaded it
    assert (out >= 0).all()
    tw.serial(out)
    np.testing.assert_array_equal(out, 0)  # every iteration on the calling thread
