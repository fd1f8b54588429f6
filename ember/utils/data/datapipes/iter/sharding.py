"""``torch.utils.data.datapipes.iter.sharding``'s name for the sharding stage."""
from . import ShardingFilter as ShardingFilterIterDataPipe

__all__ = ["ShardingFilterIterDataPipe"]
