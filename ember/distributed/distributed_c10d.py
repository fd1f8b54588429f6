"""The process group and tensor collectives of ``ember.distributed``, on MPI.

Every rank of a job is one MPI process started by ``ember-run`` (``python -m
ember.distributed.run``) or by ``mpiexec``; ``init_process_group`` binds the default group to
MPI_COMM_WORLD. Collectives move NumPy buffers with mpi4py's non-blocking calls and wait for
them as NOTE [Collective handshake] (``_pg.py``) describes.
"""
from __future__ import annotations

import enum
import os
import warnings
from datetime import timedelta
from urllib.parse import urlparse

from . import _mpi
from ._pg import DistBackendError, ProcessGroup, ReduceOp, Work, as_timeout, done_work  # noqa: F401

default_pg_timeout = timedelta(minutes=30)
_NOT_INIT = ("Default process group has not been initialized, please make sure to call "
             "init_process_group.")
_BACKENDS = ("gloo", "mpi")


class Backend(str):
    """Backend names. On CPU, ember runs both "gloo" and "mpi" on MPI (docs/DEVIATIONS.md)."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: "
                             f"{type(name).__name__}")
        return str.__new__(cls, name.lower())


class GroupMember:
    """``WORLD`` is the default group; ``NON_GROUP_MEMBER`` is what ``new_group`` returns on
    ranks outside the new group."""

    NON_GROUP_MEMBER = object()

    class _WorldDescriptor:
        def __get__(self, obj, owner=None):
            return _state.default

    WORLD = _WorldDescriptor()


group = GroupMember


class _State:
    default: ProcessGroup | None = None
    groups: list = []
    count = 0


_state = _State()


# ---------------------------------------------------------------------------- availability
def is_available() -> bool:
    """True when mpi4py and an MPI library load (``pip install 'ember[distributed]'``).

    When False, ``ember.distributed._mpi.unavailable_reason()`` and the error of
    ``init_process_group`` say why.
    """
    return _mpi.unavailable_reason() is None


def is_mpi_available() -> bool:
    return is_available()


def is_gloo_available() -> bool:
    """True when MPI is: ember serves backend="gloo" with MPI (docs/DEVIATIONS.md)."""
    return is_available()


def is_nccl_available() -> bool:
    return False


def is_ucc_available() -> bool:
    return False


def is_xccl_available() -> bool:
    return False


def is_backend_available(backend: str) -> bool:
    return str(backend).lower() in _BACKENDS and is_available()


def is_torchelastic_launched() -> bool:
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


def is_initialized() -> bool:
    return _state.default is not None


# ---------------------------------------------------------------------------- setup
def _check_backend(backend) -> str:
    name = "gloo" if backend is None else str(backend).lower()
    if ":" in name:  # "cpu:gloo,cuda:nccl": ember has only the CPU entry
        entries = dict(part.split(":", 1) for part in name.split(","))
        name = entries.get("cpu", "gloo")
    if name == "nccl":
        raise RuntimeError("ProcessGroupNCCL is only supported with GPUs, no GPUs found!")
    if name not in _BACKENDS:
        raise ValueError(f"init_process_group: unknown backend {backend!r}; expected one of "
                         f"{_BACKENDS} (both run on MPI in ember).")
    return name


def _expected_rank_size(init_method, world_size, rank):
    """(rank, world_size) the caller asked for, -1 where it left it open."""
    scheme = urlparse(init_method).scheme if init_method else "env"
    if scheme not in ("env", "tcp", "file"):
        raise ValueError(f"init_process_group: unsupported init_method {init_method!r}; "
                         f"expected env://, tcp://host:port or file:///path.")
    if scheme == "env":
        if rank < 0 and "RANK" in os.environ:
            rank = int(os.environ["RANK"])
        if world_size < 0 and "WORLD_SIZE" in os.environ:
            world_size = int(os.environ["WORLD_SIZE"])
    query = dict(p.split("=", 1) for p in urlparse(init_method or "").query.split("&") if p)
    rank = int(query.get("rank", rank))
    world_size = int(query.get("world_size", world_size))
    return rank, world_size


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Join the default process group: every process that MPI started, as one group.

    The processes come from the launcher (``ember-run``/``python -m ember.distributed.run``
    or ``mpiexec -n N``), which also does the rendezvous: ``init_method`` (env://, tcp://,
    file://), ``world_size`` and ``rank`` are checked against what MPI says, and a
    mismatch raises a RuntimeError saying how to start the program.

    Differs from torch: processes started separately (without a launcher) cannot join one
    group, since MPI connects only the processes its launcher started (docs/DEVIATIONS.md).
    """
    if _state.default is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = _check_backend(backend)
    want_rank, want_size = _expected_rank_size(init_method, world_size, rank)
    MPI = _mpi.load()
    world = MPI.COMM_WORLD
    size, me = world.Get_size(), world.Get_rank()
    if want_size >= 0 and want_size != size:
        raise RuntimeError(
            f"init_process_group: world_size is {want_size} but MPI started {size} "
            f"process(es); got world_size={want_size}, expected {size}. Start every rank "
            f"through the launcher: python -m ember.distributed.run --nproc-per-node "
            f"{want_size} prog.py (or mpiexec -n {want_size} python prog.py).")
    if want_rank >= 0 and want_rank != me:
        raise RuntimeError(
            f"init_process_group: rank {want_rank} was requested but MPI numbered this process "
            f"{me}; got rank={want_rank}, expected {me}. Leave rank unset (or take it from "
            f"the RANK variable the launcher sets).")
    pg = ProcessGroup(world.Dup(), range(size), name, timeout, "default_pg")
    _state.default = pg
    if size > 1:
        _mpi.install_excepthook()  # see NOTE [Failing fast] in _mpi.py


def destroy_process_group(group=None):
    """Free ``group``, or the default group and every group made from it."""
    if group is None or group is _state.default:
        if _state.default is None:
            raise ValueError(_NOT_INIT)
        for pg in [*_state.groups, _state.default]:
            pg.free()
        _state.default = None
        _state.groups = []
        return
    if group is GroupMember.NON_GROUP_MEMBER:
        return
    group.free()
    if group in _state.groups:
        _state.groups.remove(group)


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None, device_id=None,
              sort_ranks=True):
    """A group of the given global ranks (all of them when None), numbered in sorted order
    unless ``sort_ranks=False``.

    Every rank of the default group must call it, members or not; non-members get
    ``GroupMember.NON_GROUP_MEMBER``.
    """
    world = _default("new_group")
    n = world.size()
    members = list(range(n)) if ranks is None else [int(r) for r in ranks]
    if sort_ranks:
        members.sort()
    for r in members:
        if not 0 <= r < n:
            raise ValueError(f"new_group: rank {r} is out of range; got ranks={members}, "
                             f"expected ranks in [0, {n - 1}].")
    if len(set(members)) != len(members):
        raise ValueError(f"new_group: ranks must be distinct; got {members}.")
    records = world.handshake("new_group", count=len(members))
    world.check_same("new_group", records, ("count",))
    me = world.rank()
    MPI = _mpi.load()
    color = 0 if me in members else MPI.UNDEFINED
    comm = world.comm.Split(color, members.index(me) if me in members else 0)
    _state.count += 1
    if comm == MPI.COMM_NULL:
        return GroupMember.NON_GROUP_MEMBER
    name = _check_backend(backend) if backend is not None else world.backend
    pg = ProcessGroup(comm, members, name, world.timeout if timeout is None else timeout,
                      str(_state.count))
    _state.groups.append(pg)
    return pg


def new_subgroups(group_size=None, group=None, timeout=None, backend=None, pg_options=None,
                  group_desc=None):
    """Split the default group into groups of ``group_size`` consecutive ranks (default: the
    ranks of one node, LOCAL_WORLD_SIZE); returns (this rank's subgroup, all subgroups)."""
    world = _default("new_subgroups")
    if group_size is None:
        group_size = int(os.environ.get("LOCAL_WORLD_SIZE", world.size()))
    if group_size <= 0 or world.size() % group_size:
        raise ValueError(f"new_subgroups: group_size must divide the world size; got "
                         f"group_size={group_size}, expected a divisor of {world.size()}.")
    subgroups, mine = [], None
    for start in range(0, world.size(), group_size):
        ranks = list(range(start, start + group_size))
        sub = new_group(ranks, timeout=timeout, backend=backend)
        subgroups.append(sub)
        if world.rank() in ranks:
            mine = sub
    return mine, subgroups


def get_pg_count() -> int:
    """Number of process groups alive (the default group included)."""
    return (_state.default is not None) + len(_state.groups)


def _default(op) -> ProcessGroup:
    if _state.default is None:
        raise ValueError(_NOT_INIT)
    return _state.default


def _resolve(group, op):
    """The ProcessGroup for ``group``, or None on a rank outside it (the call is skipped)."""
    if group is None:
        return _default(op)
    if group is GroupMember.NON_GROUP_MEMBER:
        warnings.warn(f"Running {op} on global rank {get_rank()} which does not belong to the "
                      f"given group.", stacklevel=3)
        return None
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"{op}: group must be a ProcessGroup from new_group (or None); got "
                        f"{type(group).__name__}.")
    return group


# ---------------------------------------------------------------------------- queries
def get_rank(group=None) -> int:
    if group is GroupMember.NON_GROUP_MEMBER:
        _default("get_rank")
        return -1
    return _resolve(group, "get_rank").rank()


def get_world_size(group=None) -> int:
    if group is GroupMember.NON_GROUP_MEMBER:
        _default("get_world_size")
        return -1
    return _resolve(group, "get_world_size").size()


def get_backend(group=None) -> str:
    pg = _resolve(group, "get_backend")
    if pg is None:
        raise ValueError("Invalid process group specified")
    return Backend(pg.backend)


def get_process_group_ranks(group) -> list:
    pg = _resolve(group, "get_process_group_ranks")
    return list(pg.ranks)


def get_group_rank(group, global_rank: int) -> int:
    pg = _resolve(group, "get_group_rank")
    if global_rank not in pg.ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {pg.group_name}")
    return pg.ranks.index(global_rank)


def get_global_rank(group, group_rank: int) -> int:
    pg = _resolve(group, "get_global_rank")
    if not 0 <= group_rank < len(pg.ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {pg.group_name}")
    return pg.ranks[group_rank]


def get_node_local_rank(fallback_rank=None) -> int:
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not in the environment. Consider passing fallback_rank "
                       "to allow `get_node_local_rank` to work, assuming you are not running "
                       "in a multi-device context and want the code to run locally instead.")


def _peer(pg, op, rank, group_rank, what):
    """Group rank from a global ``rank`` or a ``group_rank`` (PyTorch's src/group_src pairs)."""
    if rank is not None and group_rank is not None:
        raise ValueError(f"{op}: pass {what} or group_{what}, not both.")
    if group_rank is None:
        rank = 0 if rank is None else int(rank)
        if rank not in pg.ranks:
            raise ValueError(f"{op}: {what}={rank} is not a member of {pg.describe()}; "
                             f"expected one of {pg.ranks}.")
        return pg.ranks.index(rank)
    if not 0 <= int(group_rank) < pg.size():
        raise ValueError(f"{op}: group_{what}={group_rank} is out of range; expected "
                         f"[0, {pg.size() - 1}].")
    return int(group_rank)


# ---------------------------------------------------------------------------- barriers
def barrier(group=None, async_op=False, device_ids=None, timeout=None):
    """Wait until every rank of the group has called barrier (the handshake alone does it)."""
    pg = _resolve(group, "barrier")
    if pg is None:
        return None
    limit = None if timeout is None else as_timeout(timeout)
    return pg.run(lambda: pg.handshake("barrier", timeout=limit), async_op)


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier that names the ranks which did not reach it within ``timeout``."""
    pg = _resolve(group, "monitored_barrier")
    if pg is None:
        return None
    limit = pg.timeout if timeout is None else as_timeout(timeout)
    pg.drain()
    try:
        pg.handshake("monitored_barrier", timeout=limit)
    except DistBackendError as e:
        raise DistBackendError(f"[Rank {get_rank()}]: monitored_barrier: some ranks failed to "
                               f"pass monitoredBarrier. {e}") from None
    return None


# the collectives live in their own modules and are re-exported from here, as in torch
from ._collectives import (  # noqa: E402,F401
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    all_to_all,
    all_to_all_single,
    broadcast,
    gather,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
)
from ._objects import (  # noqa: E402,F401
    all_gather_object,
    broadcast_object_list,
    gather_object,
    recv_object_list,
    scatter_object_list,
    send_object_list,
)
from ._p2p import P2POp, batch_isend_irecv, irecv, isend, recv, send  # noqa: E402,F401


# ------------------------------------------------------------------------------ small queries
def supports_complex(reduceOp: ReduceOp) -> bool:
    """Whether ``reduceOp`` is defined on complex tensors: orderings (MIN/MAX) and bitwise or
    product reductions are not; SUM, AVG and PREMUL_SUM are."""
    return reduceOp not in (ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PRODUCT, ReduceOp.BAND,
                            ReduceOp.BOR, ReduceOp.BXOR)


reduce_op = ReduceOp  # the old spelling, still accepted by torch


class DebugLevel(enum.IntEnum):
    """``TORCH_DISTRIBUTED_DEBUG``'s levels: OFF, INFO, DETAIL."""

    OFF = 0
    INFO = 1
    DETAIL = 2


def get_debug_level() -> DebugLevel:
    """The level named by the ``TORCH_DISTRIBUTED_DEBUG`` environment variable (default OFF)."""
    value = os.environ.get("TORCH_DISTRIBUTED_DEBUG", "OFF").upper()
    if value not in DebugLevel.__members__:
        raise ValueError("get_debug_level: TORCH_DISTRIBUTED_DEBUG must be OFF, INFO, or DETAIL; "
                         f"got {os.environ['TORCH_DISTRIBUTED_DEBUG']!r}.")
    return DebugLevel[value]
