"""Functional collectives (``torch.distributed._functional_collectives``): each returns a new
tensor and leaves its input alone, where ``ember.distributed``'s collectives write in place.
torch's versions are asynchronous (``wait_tensor`` waits); ember's complete before returning,
so ``wait_tensor`` returns its argument. ``group`` may be a process group, None (the default
group) or a list of ranks, as torch's take it (gpt-fast's tensor parallelism passes
``list(range(world_size))``); a list must name every rank of the default group."""
from __future__ import annotations

from ..autograd.function import Function
from ._collectives import all_gather
from ._collectives import all_reduce as _all_reduce
from ._collectives import all_to_all_single as _all_to_all_single
from ._collectives import broadcast as _broadcast
from ._pg import ReduceOp
from .distributed_c10d import get_world_size

__all__ = ["all_gather_tensor", "all_reduce", "all_to_all_single",
           "all_to_all_single_autograd", "broadcast", "wait_tensor"]

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


def all_to_all_single(self, output_split_sizes, input_split_sizes, group, tag=""):
    """A new tensor: rank r's rows are the r-th pieces (along dim 0) of every rank's ``self``,
    in rank order; the split sizes are row counts per rank (None: equal pieces)."""
    from .. import empty
    g = _group(group, "all_to_all_single")
    rows = sum(output_split_sizes) if output_split_sizes else self.shape[0]
    out = empty((rows, *self.shape[1:]), dtype=self.dtype)
    _all_to_all_single(out, self.contiguous(), output_split_sizes, input_split_sizes, group=g)
    return out


class _AllToAllSingle(Function):
    @staticmethod
    def forward(ctx, tensor, output_split_sizes, input_split_sizes, group):
        ctx.splits, ctx.group = (output_split_sizes, input_split_sizes), group
        return all_to_all_single(tensor, output_split_sizes, input_split_sizes, group)

    @staticmethod
    def backward(ctx, grad):
        # the gradient goes back the way the rows came: the splits swap roles
        out_sizes, in_sizes = ctx.splits
        return _AllToAllSingle.apply(grad.contiguous(), in_sizes, out_sizes, ctx.group), \
            None, None, None


def all_to_all_single_autograd(self, output_split_sizes, input_split_sizes, group, tag=""):
    """all_to_all_single that autograd differentiates (its backward is the all_to_all that
    sends each gradient row back to the rank its value came from)."""
    return _AllToAllSingle.apply(self, output_split_sizes, input_split_sizes, group)
