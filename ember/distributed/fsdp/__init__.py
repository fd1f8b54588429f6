"""``ember.distributed.fsdp``: the names of torch's FSDP2 API that libraries import; ember has
no fully sharded data parallel. The policies are plain records (real dataclasses, as torch's);
``fully_shard`` raises NotImplementedError. FSDPModule and FullyShardedDataParallel (FSDP1's
wrapper) are classes no module is an instance of: wrapping a module raises."""
from __future__ import annotations

import dataclasses
import enum

from ..._dtype import dtype
from ...nn.modules.module import Module

__all__ = ["CPUOffload", "CPUOffloadPolicy", "FSDPModule", "FullyShardedDataParallel",
           "MixedPrecisionPolicy", "OffloadPolicy", "ShardingStrategy", "fully_shard"]

_WHY = ("ember has no fully sharded data parallel (FSDP); its distributed package runs "
        "process groups on MPI (DistributedDataParallel, ZeroRedundancyOptimizer)")


@dataclasses.dataclass(frozen=True)
class MixedPrecisionPolicy:
    """The dtypes FSDP would compute, reduce and return in."""

    param_dtype: dtype | None = None
    reduce_dtype: dtype | None = None
    output_dtype: dtype | None = None
    cast_forward_inputs: bool = True


@dataclasses.dataclass
class OffloadPolicy:
    """No offloading (the base of the offload policies)."""


@dataclasses.dataclass
class CPUOffloadPolicy(OffloadPolicy):
    """Keep sharded parameters on the CPU."""

    pin_memory: bool = True


@dataclasses.dataclass
class CPUOffload:
    """FSDP1's offload setting (diffusers' training_utils imports it)."""

    offload_params: bool = False


class ShardingStrategy(enum.Enum):
    """FSDP1's sharding strategies, torch's values."""

    FULL_SHARD = enum.auto()
    SHARD_GRAD_OP = enum.auto()
    NO_SHARD = enum.auto()
    HYBRID_SHARD = enum.auto()
    _HYBRID_SHARD_ZERO2 = enum.auto()


class FSDPModule:
    """The mixin fully_shard adds to a module's class: no ember module is one."""


def fully_shard(module, *args, **kwargs):
    """Not implemented in ember: raises NotImplementedError."""
    raise NotImplementedError(f"fully_shard: {_WHY}")


class FullyShardedDataParallel(Module):
    """FSDP1's wrapper module: not implemented in ember (constructing one raises)."""

    def __init__(self, module, *args, **kwargs):
        raise NotImplementedError(f"FullyShardedDataParallel: {_WHY}")
