"""``ember.distributed.optim.zero_redundancy_optimizer``: torch's module path of
``ZeroRedundancyOptimizer``."""
from __future__ import annotations

from ember.distributed.optim import ZeroRedundancyOptimizer

__all__ = ["ZeroRedundancyOptimizer"]
