"""``ember.distributed._composable.fsdp``: the older import path of ``ember.distributed.fsdp``."""
from ...fsdp import (CPUOffloadPolicy, FSDPModule, MixedPrecisionPolicy, OffloadPolicy,
                     fully_shard)

__all__ = ["CPUOffloadPolicy", "FSDPModule", "MixedPrecisionPolicy", "OffloadPolicy",
           "fully_shard"]
