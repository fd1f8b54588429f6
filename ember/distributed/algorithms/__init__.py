"""ember.distributed.algorithms (``torch.distributed.algorithms``): only ``join``'s names, which
accelerate imports at import time."""
from __future__ import annotations

from .join import Join, Joinable, JoinHook  # noqa: F401
