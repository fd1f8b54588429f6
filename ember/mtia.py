"""``ember.mtia``: Meta's accelerator backend, absent in ember (see ember/_absent_device.py)."""
from __future__ import annotations

from ._absent_device import functions as _functions

globals().update(_functions("mtia", AssertionError, "Torch not compiled with MTIA enabled"))
