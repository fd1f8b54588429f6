"""``ember.distributed.constants``: the default process-group timeouts (Lightning imports them
from here). ember has no NCCL, so its NCCL timeout is None, as torch's without NCCL."""
from __future__ import annotations

from .distributed_c10d import default_pg_timeout

__all__ = ["default_pg_nccl_timeout", "default_pg_timeout"]

default_pg_nccl_timeout = None
