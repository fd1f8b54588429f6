"""ember._higher_order_ops (``torch._higher_order_ops``): only ``associative_scan``, which
transformers' Mamba imports on every forward."""
from __future__ import annotations

from .associative_scan import associative_scan  # noqa: F401
