"""``ember.mps``: Apple's Metal backend, absent in ember (see ember/_absent_device.py)."""
from __future__ import annotations

from ._absent_device import functions as _functions

globals().update(_functions("mps", RuntimeError, "Cannot execute this call without MPS backend"))
