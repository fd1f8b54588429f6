"""``ember.cpu.amp``: torch's deprecated CPU spellings of autocast and GradScaler
(``ember.amp.autocast("cpu", ...)`` and ``ember.amp.GradScaler("cpu", ...)``)."""
from __future__ import annotations

import warnings

from .. import _dtype as D
from ..amp import autocast_mode as _ac
from ..amp import grad_scaler as _gs

__all__ = ["autocast", "GradScaler"]


class autocast(_ac.autocast):
    """Deprecated: ``ember.cpu.amp.autocast(args...)`` means ``ember.amp.autocast("cpu", ...)``."""

    def __init__(self, enabled=True, dtype=D.bfloat16, cache_enabled=True):
        warnings.warn("`ember.cpu.amp.autocast(args...)` is deprecated. Please use "
                      "`ember.amp.autocast('cpu', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_gs.GradScaler):
    """Deprecated: ``ember.cpu.amp.GradScaler(args...)`` is ``ember.amp.GradScaler("cpu", ...)``."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        warnings.warn("`ember.cpu.amp.GradScaler(args...)` is deprecated. Please use "
                      "`ember.amp.GradScaler('cpu', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cpu", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)
