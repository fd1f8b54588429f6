"""``ember.distributed``: process groups and collectives on MPI (mpi4py + MPICH).

Install with ``pip install 'ember[distributed]'``; start programs with
``python -m ember.distributed.run --nproc-per-node N prog.py`` (or ``ember-run``, or a plain
``mpiexec -n N python prog.py``). ``is_available()`` is False when mpi4py or MPI is missing,
and ``init_process_group`` then says why.

Example:
    >>> import ember.distributed as dist
    >>> isinstance(dist.is_available(), bool)
    True
"""
from __future__ import annotations

from ._pg import (
                  DistBackendError,
                  DistError,
                  DistNetworkError,
                  DistStoreError,
                  ProcessGroup,
                  ReduceOp,
                  Work,
)
from .distributed_c10d import (
                  Backend,
                  DebugLevel,
                  GroupMember,
                  P2POp,
                  all_gather,
                  all_gather_into_tensor,
                  all_gather_object,
                  all_reduce,
                  all_to_all,
                  all_to_all_single,
                  barrier,
                  batch_isend_irecv,
                  broadcast,
                  broadcast_object_list,
                  default_pg_timeout,
                  destroy_process_group,
                  gather,
                  gather_object,
                  get_backend,
                  get_debug_level,
                  get_global_rank,
                  get_group_rank,
                  get_node_local_rank,
                  get_pg_count,
                  get_process_group_ranks,
                  get_rank,
                  get_world_size,
                  group,
                  init_process_group,
                  irecv,
                  is_available,
                  is_backend_available,
                  is_gloo_available,
                  is_initialized,
                  is_mpi_available,
                  is_nccl_available,
                  is_torchelastic_launched,
                  is_ucc_available,
                  is_xccl_available,
                  isend,
                  monitored_barrier,
                  new_group,
                  new_subgroups,
                  recv,
                  recv_object_list,
                  reduce,
                  reduce_scatter,
                  reduce_scatter_tensor,
                  scatter,
                  scatter_object_list,
                  send,
                  send_object_list,
                  supports_complex,
)

# importing it binds the submodule too: torch's package does, and programs read
# `torch.distributed.device_mesh.DeviceMesh` in annotations without importing it (diffusers)
from .device_mesh import DeviceMesh, init_device_mesh

reduce_op = ReduceOp  # the old spelling, still accepted by torch

__all__ = [
    "Backend", "DistBackendError", "DistError", "DistNetworkError", "DistStoreError",
    "GroupMember", "P2POp", "ProcessGroup", "ReduceOp", "Work", "all_gather",
    "all_gather_into_tensor", "all_gather_object", "all_reduce", "all_to_all",
    "all_to_all_single", "barrier", "batch_isend_irecv", "broadcast", "broadcast_object_list",
    "default_pg_timeout", "destroy_process_group", "gather", "gather_object", "get_backend",
    "get_global_rank", "get_group_rank", "get_node_local_rank", "get_pg_count",
    "get_process_group_ranks", "get_rank", "get_world_size", "group", "init_process_group",
    "irecv", "is_available", "is_backend_available", "is_gloo_available", "is_initialized",
    "is_mpi_available", "is_nccl_available", "is_torchelastic_launched", "is_ucc_available",
    "is_xccl_available", "isend", "monitored_barrier", "new_group", "new_subgroups", "recv",
    "recv_object_list", "reduce", "reduce_scatter", "reduce_scatter_tensor", "scatter",
    "scatter_object_list", "send", "send_object_list", "DebugLevel", "get_debug_level",
    "supports_complex", "DeviceMesh", "init_device_mesh",
]
