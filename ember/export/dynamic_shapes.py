"""``ember.export.dynamic_shapes``: torch's module path of ``Dim`` (a named dynamic
dimension) and ``dims``, used in ``export(..., dynamic_shapes=...)``."""
from __future__ import annotations

from ember.export import Dim, dims

__all__ = ["Dim", "dims"]
