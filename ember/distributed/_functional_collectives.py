"""Functional collectives (``torch.distributed._functional_collectives``): each returns a new
tensor and leaves its input alone, where ``ember.distributed``'s collectives write in place.
torch's versions are asynchronous (``wait_tensor`` waits); ember's complete before returning,
so ``wait_tensor`` returns its argument. ``group`` may be a process group, None (the default
group) or a list of ranks, as torch's take it (gpt-fast's tensor parallelism passes
``list(range(world_size))``); a list must name every rank of the default group."""
from __future__ import annotations

from ._collectives import all_gather
from ._collectives import all_reduce as _all_reduce
from ._collectives import broadcast as _broadcast
from ._pg import ReduceOp
from .distributed_c10d import get_world_size

__all__ = ["all_gather_tensor", "all_reduce", "broadcast", "wait_tensor"]

_OPS = {"sum": ReduceOp.SUM, "avg": ReduceOp.AVG, "product": ReduceOp.PRODUCT,
        "min": ReduceOp.MIN, "max": ReduceOp.MAX}


def _group(group, name):
    if not isinstance(group, (list, tuple)):
        return group
    if sorted(group) != list(range(get_world_size())):
        raise NotImplementedError(f"{name}: a group given as a list of ranks must list every "
                                  f"rank 0..{get_world_size() - 1}; got {list(group)}. Pass a "
                                  "process group from new_group() instead.")
    return None


def _op(reduce_op, name):
    if isinstance(reduce_op, ReduceOp):
        return reduce_op
    if str(reduce_op).lower() not in _OPS:
        raise ValueError(f"{name}: reduceOp must be one of {sorted(_OPS)}; got {reduce_op!r}")
    return _OPS[str(reduce_op).lower()]


def all_reduce(self, reduceOp, group, tag=""):
    """A new tensor: the reduction of ``self`` over the group's ranks."""
    out = self.clone()
    _all_reduce(out, op=_op(reduceOp, "all_reduce"), group=_group(group, "all_reduce"))
    return out


def all_gather_tensor(self, gather_dim, group, tag=""):
    """A new tensor: every rank's ``self`` concatenated along ``gather_dim`` in rank order."""
    from .. import cat, empty_like
    g = _group(group, "all_gather_tensor")
    parts = [empty_like(self) for _ in range(get_world_size(g))]
    all_gather(parts, self.contiguous(), group=g)
    return cat(parts, dim=gather_dim)


def broadcast(self, src, group, tag=""):
    """A new tensor: rank ``src``'s ``self`` on every rank."""
    out = self.clone()
    _broadcast(out, src=src, group=_group(group, "broadcast"))
    return out


def wait_tensor(tensor):
    """``tensor``: ember's collectives have completed when they return."""
    return tensor
