"""``ember.distributed.tensor``: the names of torch's DTensor API that programs import.

ember has no DTensor (a tensor sharded over a device mesh). Libraries such as transformers
import ``DTensor``, the placements and ``distribute_tensor`` at import time and use them only
when a model is run tensor-parallel, testing ``isinstance(t, DTensor)`` on ordinary tensors
otherwise. So: ``DTensor`` is a Tensor subclass no ember tensor is an instance of, the
placements (placement_types) are real records, and everything that would make a DTensor
raises NotImplementedError naming what is missing."""
from __future__ import annotations

from ..._tensor import Tensor
from ..device_mesh import _WHY, DeviceMesh
from .placement_types import Partial, Placement, Replicate, Shard

__all__ = ["DTensor", "distribute_tensor", "distribute_module", "Shard", "Replicate",
           "Partial", "Placement", "ones", "empty", "full", "rand", "randn", "zeros",
           "DeviceMesh"]


def _missing(name):
    def fn(*args, **kwargs):
        raise NotImplementedError(f"{name}: {_WHY}")
    fn.__name__ = fn.__qualname__ = name.rpartition(".")[2]
    fn.__doc__ = f"Not implemented in ember: raises NotImplementedError ({_WHY})."
    return fn


class DTensor(Tensor):
    """A tensor sharded over a device mesh: not implemented in ember. No ember tensor is a
    DTensor, so ``isinstance(t, DTensor)`` is False; making one raises NotImplementedError."""

    def __new__(cls, *args, **kwargs):
        raise NotImplementedError(f"DTensor: {_WHY}")

    from_local = staticmethod(_missing("DTensor.from_local"))


distribute_tensor = _missing("distribute_tensor")
distribute_module = _missing("distribute_module")
ones = _missing("ember.distributed.tensor.ones")
empty = _missing("ember.distributed.tensor.empty")
full = _missing("ember.distributed.tensor.full")
rand = _missing("ember.distributed.tensor.rand")
randn = _missing("ember.distributed.tensor.randn")
zeros = _missing("ember.distributed.tensor.zeros")
