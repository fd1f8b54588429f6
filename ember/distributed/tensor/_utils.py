"""``ember.distributed.tensor._utils``: the DTensor layout helper transformers imports."""
from __future__ import annotations

from ..device_mesh import _WHY


def compute_local_shape_and_global_offset(global_shape, mesh, placements, skip_offset=False):
    """The local shape and global offset of this rank's shard: needs a DeviceMesh, which
    ember does not have (NotImplementedError)."""
    raise NotImplementedError(f"compute_local_shape_and_global_offset: {_WHY}")
