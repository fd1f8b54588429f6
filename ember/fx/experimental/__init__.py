"""``ember.fx.experimental``: ``proxy_tensor.make_fx`` (graphs recorded by running a function)."""
from __future__ import annotations

from . import proxy_tensor as proxy_tensor

__all__ = ["proxy_tensor"]
