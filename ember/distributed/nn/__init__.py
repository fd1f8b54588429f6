"""``ember.distributed.nn``: collectives that autograd differentiates (see ``functional``).

torch also serves ``RemoteModule`` here, for its RPC framework, which ember does not have."""
from __future__ import annotations

from .functional import all_gather, all_reduce, broadcast, reduce, reduce_scatter

__all__ = ["all_gather", "all_reduce", "broadcast", "reduce", "reduce_scatter"]
