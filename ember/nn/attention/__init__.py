"""``ember.nn.attention``: choosing scaled_dot_product_attention's kernel (torch's names).

ember has one CPU kernel for ``F.scaled_dot_product_attention``, which runs whichever backends
are chosen: ``sdpa_kernel`` records the choice in ``ember.backends.cuda``'s switches
(``flash_sdp_enabled()`` and the others read it) and restores them on exit. torch raises
"No available kernel" when none of the chosen backends can take the inputs; ember does not.
"""
from __future__ import annotations

import contextlib
import enum

from ...backends import cuda as _cuda

__all__ = ["SDPBackend", "sdpa_kernel"]


class SDPBackend(enum.IntEnum):
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_SWITCH = {SDPBackend.MATH: "math", SDPBackend.FLASH_ATTENTION: "flash",
           SDPBackend.EFFICIENT_ATTENTION: "mem_efficient",
           SDPBackend.CUDNN_ATTENTION: "cudnn"}


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority: bool = False):
    """Enable only ``backends`` (one SDPBackend or a list) inside the ``with`` block."""
    chosen = [backends] if isinstance(backends, SDPBackend) else list(backends)
    for b in chosen:
        if not isinstance(b, SDPBackend):
            raise TypeError(f"sdpa_kernel: backends must be SDPBackend members (or a list of "
                            f"them); got {b!r} of type {type(b).__name__}")
    old = dict(_cuda._sdp)
    _cuda._sdp.update({name: backend in chosen for backend, name in _SWITCH.items()})
    try:
        yield
    finally:
        _cuda._sdp.update(old)
