"""``ember.xpu``: Intel's GPU backend, absent in ember (see ember/_absent_device.py)."""
from __future__ import annotations

from ._absent_device import functions as _functions

globals().update(_functions("xpu", AssertionError, "Torch not compiled with XPU enabled",
                            quiet=("empty_cache", "memory_allocated", "max_memory_allocated",
                                   "reset_peak_memory_stats")))
