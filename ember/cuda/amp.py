"""``ember.cuda.amp``: PyTorch's deprecated CUDA spellings of autocast and GradScaler.

They mean ``ember.amp.autocast("cuda", ...)`` and ``ember.amp.GradScaler("cuda", ...)``: on a
machine without CUDA both warn and disable themselves exactly as PyTorch's do on a CPU-only build,
so scripts that use them keep running (as plain float32 training). Use ``ember.autocast("cpu")``
and ``ember.amp.GradScaler()`` for mixed precision on the CPU.
"""
from __future__ import annotations

import warnings

from .. import _dtype as D
from ..amp import autocast_mode as _ac
from ..amp import grad_scaler as _gs

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]


class autocast(_ac.autocast):
    """Deprecated: ``ember.cuda.amp.autocast(args...)`` means
    ``ember.amp.autocast("cuda", args...)`` (disabled with a warning: no CUDA device)."""

    def __init__(self, enabled=True, dtype=D.float16, cache_enabled=True):
        warnings.warn("`ember.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`ember.amp.autocast('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_gs.GradScaler):
    """Deprecated: ``ember.cuda.amp.GradScaler(args...)`` is ``ember.amp.GradScaler("cuda", ...)``
    (disabled with a warning here, since no CUDA device is available)."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        warnings.warn("`ember.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`ember.amp.GradScaler('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """Deprecated alias of ``ember.amp.custom_fwd(device_type="cuda")``."""
    return _ac.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd=None):
    """Deprecated alias of ``ember.amp.custom_bwd(device_type="cuda")``."""
    return _ac.custom_bwd(bwd, device_type="cuda")
