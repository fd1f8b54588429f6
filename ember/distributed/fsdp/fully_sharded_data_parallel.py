"""``ember.distributed.fsdp.fully_sharded_data_parallel``: the path accelerate imports FSDP1's
wrapper from (to unwrap models): the same class no ember module is an instance of."""
from __future__ import annotations

from . import FullyShardedDataParallel  # noqa: F401
