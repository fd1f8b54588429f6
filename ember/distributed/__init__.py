"""``ember.distributed``: multi-process training is not implemented yet.

``is_available()`` answers truthfully (False: ember has no communication backend yet) and
``is_initialized()`` is False, so code that checks before using collectives runs single-process.
``init_process_group`` raises a RuntimeError saying so; the query functions that need a process
group raise PyTorch's ValueError ("Default process group has not been initialized").
"""
from __future__ import annotations

import enum

__all__ = ["is_available", "is_initialized", "init_process_group", "destroy_process_group",
           "get_rank", "get_world_size", "get_backend", "barrier", "all_reduce", "broadcast",
           "all_gather", "reduce", "gather", "scatter", "is_nccl_available",
           "is_gloo_available", "is_mpi_available", "is_torchelastic_launched", "ReduceOp",
           "Backend", "group"]

_NO_BACKEND = ("ember.distributed: no communication backend is available yet (gloo, nccl and "
               "mpi are not implemented in ember), so a process group cannot be created. Run "
               "single-process, or check ember.distributed.is_available() first.")
_NOT_INIT = ("Default process group has not been initialized, please make sure to call "
             "init_process_group.")


def is_available():
    """False: ember implements no distributed backend yet."""
    return False


def is_initialized():
    """False: no process group can exist."""
    return False


def is_nccl_available():
    return False


def is_gloo_available():
    return False


def is_mpi_available():
    return False


def is_torchelastic_launched():
    import os
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    raise RuntimeError(_NO_BACKEND)


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, **kwargs):
    raise RuntimeError(_NO_BACKEND)


def destroy_process_group(group=None):
    raise AssertionError("Process group cannot be None")


def _needs_group(name):
    def fn(*args, **kwargs):
        raise ValueError(_NOT_INIT)
    fn.__name__ = name
    fn.__doc__ = f"Raises ValueError: ``{name}`` needs an initialized process group."
    return fn


for _name in ("get_rank", "get_world_size", "get_backend", "barrier", "all_reduce", "broadcast",
              "all_gather", "all_gather_object", "reduce", "gather", "scatter", "reduce_scatter",
              "all_to_all", "send", "recv", "isend", "irecv", "broadcast_object_list"):
    globals()[_name] = _needs_group(_name)
del _name


class ReduceOp(enum.Enum):
    SUM = "sum"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"
    AVG = "avg"


class Backend(str):
    """Backend names (``Backend.GLOO``...); none is available in ember yet."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"

    def __new__(cls, name):
        return str.__new__(cls, name.lower())


class group:
    WORLD = None
