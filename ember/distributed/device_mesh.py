"""``ember.distributed.device_mesh``: the names programs import; ember has no device meshes.

DeviceMesh is a class so that type annotations and ``isinstance`` checks work; making one, or
``init_device_mesh``, raises NotImplementedError (ember's distributed runs data parallelism on
MPI process groups, with no mesh of devices for DTensor)."""
from __future__ import annotations

__all__ = ["DeviceMesh", "init_device_mesh"]

_WHY = ("ember has no device meshes or DTensor (tensor parallelism); its distributed package "
        "runs process groups on MPI")


class DeviceMesh:
    """A mesh of devices for DTensor placements: not implemented in ember."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError(f"DeviceMesh: {_WHY}")


def init_device_mesh(device_type, mesh_shape, *, mesh_dim_names=None, backend_override=None):
    """Not implemented in ember: raises NotImplementedError."""
    raise NotImplementedError(f"init_device_mesh: {_WHY}")
