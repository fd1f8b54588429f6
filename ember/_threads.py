"""``ember.set_num_threads`` / ``get_num_threads``: the intra-op thread pools.

ember's parallel work runs in two pools: the BLAS library NumPy links (matmul, conv via im2col,
linalg), controlled through threadpoolctl, and numba's parallel kernels. ``set_num_threads``
sets both. numba's setting is per calling thread (numba's own rule), and it cannot exceed the
pool numba launched (``numba.config.NUMBA_NUM_THREADS``), so larger requests are capped there
while BLAS gets the full number. There is no separate inter-op pool (ops run one at a time, in
the calling thread); the inter-op setters record the value for code that reads it back.
"""
from __future__ import annotations

import numba

__all__ = ["set_num_threads", "get_num_threads", "set_num_interop_threads",
           "get_num_interop_threads"]

_requested = [None]
_interop = [None]
_blas_limiter = [None]  # the active threadpool_limits object (kept so it is not collected)


def _check(n, name):
    if isinstance(n, bool) or not isinstance(n, int):
        raise RuntimeError(f"{name} expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError(f"{name} expects a positive integer; got {n}")


def set_num_threads(int):
    """Use ``int`` threads for BLAS and for numba kernels (see the module note on numba)."""
    n = int
    _check(n, "set_num_threads")
    from . import _onepool
    if not _onepool.enabled():  # with the one pool, BLAS stays at one thread (NOTE [One pool])
        from threadpoolctl import threadpool_limits  # imported on use: ember imports without it
        _blas_limiter[0] = threadpool_limits(limits=n, user_api="blas")
    numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
    _requested[0] = n


def get_num_threads():
    """The number of intra-op threads: the last value set, else numba's current count."""
    return _requested[0] if _requested[0] is not None else numba.get_num_threads()


def set_num_interop_threads(int):
    """Record the inter-op thread count (ember runs ops in the calling thread)."""
    n = int
    _check(n, "set_num_interop_threads")
    _interop[0] = n


def get_num_interop_threads():
    return _interop[0] if _interop[0] is not None else numba.config.NUMBA_NUM_THREADS
