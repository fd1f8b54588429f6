"""``ember.export.dynamic_shapes``: torch's module path of ``Dim``, the named dynamic
dimension used in ``export(..., dynamic_shapes=...)``."""
from __future__ import annotations

from ember.export import Dim

__all__ = ["Dim"]
