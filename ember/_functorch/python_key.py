"""``make_fx`` (functorch.make_fx): the same function as
``ember.fx.experimental.proxy_tensor.make_fx`` (NOTE [make_fx by recording] there)."""
from __future__ import annotations

from ..fx.experimental.proxy_tensor import make_fx as make_fx

__all__ = ["make_fx"]
