"""Collectives that autograd differentiates (``torch.distributed.nn.functional``).

Each returns new tensors and leaves its input alone; each backward is the collective that
moves the gradient back the way the values came:

    forward            backward (of the output's gradient)
    all_reduce(SUM)    all_reduce(SUM): every rank's input reached every rank's output
    broadcast(src)     reduce(SUM) into src: src's input reached every rank
    reduce(dst)        broadcast from dst: every input reached dst only
    all_gather         reduce_scatter(SUM): rank i's input is piece i on every rank
    reduce_scatter     all_gather: piece i of every rank's list reached rank i

An all_reduce's backward applies the forward's op again, as torch's does (the gradient of a
SUM; for MAX, MIN or PRODUCT it is not the gradient, in torch as here). ``group`` defaults to
the default group. Lists of ranks as groups, gather, scatter and all_to_all are not served.
"""
from __future__ import annotations

from ...autograd.function import Function
from .. import _collectives as C
from .._pg import ReduceOp
from ..distributed_c10d import get_world_size


def _fresh(t):
    from ... import contiguous_format
    return t.clone(memory_format=contiguous_format)


def _on_copy(collective, tensor, **kwargs):
    """Run an in-place collective on a copy of ``tensor``; return the copy."""
    out = _fresh(tensor)
    collective(out, **kwargs)
    return out


class _AllReduce(Function):
    @staticmethod
    def forward(ctx, op, group, tensor):
        ctx.op, ctx.group = op, group
        return _on_copy(C.all_reduce, tensor, op=op, group=group)

    @staticmethod
    def backward(ctx, grad):
        return None, None, _AllReduce.apply(ctx.op, ctx.group, grad)


class _Broadcast(Function):
    @staticmethod
    def forward(ctx, src, group, tensor):
        ctx.src, ctx.group = src, group
        return _on_copy(C.broadcast, tensor, src=src, group=group)

    @staticmethod
    def backward(ctx, grad):
        return None, None, _Reduce.apply(ctx.src, ReduceOp.SUM, ctx.group, grad)


class _Reduce(Function):
    @staticmethod
    def forward(ctx, dst, op, group, tensor):
        ctx.dst, ctx.group = dst, group
        return _on_copy(C.reduce, tensor, dst=dst, op=op, group=group)

    @staticmethod
    def backward(ctx, grad):
        return None, None, None, _Broadcast.apply(ctx.dst, ctx.group, grad)


class _AllGather(Function):
    @staticmethod
    def forward(ctx, group, tensor):
        ctx.group = group
        outs = [tensor.new_empty(tensor.shape) for _ in range(get_world_size(group))]
        C.all_gather(outs, _fresh(tensor), group=group)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        mine = grads[0].new_empty(grads[0].shape)
        return None, _ReduceScatter.apply(ReduceOp.SUM, ctx.group, mine, *grads)


class _ReduceScatter(Function):
    @staticmethod
    def forward(ctx, op, group, output, *inputs):
        ctx.group = group
        out = output.new_empty(output.shape)
        C.reduce_scatter(out, [_fresh(t) for t in inputs], op=op, group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        return (None, None, None) + _AllGather.apply(ctx.group, grad)


def all_reduce(tensor, op=ReduceOp.SUM, group=None):
    """A new tensor: ``tensor`` reduced with ``op`` over the group, on every rank."""
    return _AllReduce.apply(op, group, tensor)


def broadcast(tensor, src, group=None):
    """A new tensor: rank ``src``'s ``tensor`` on every rank."""
    return _Broadcast.apply(src, group, tensor)


def reduce(tensor, dst, op=ReduceOp.SUM, group=None):
    """A new tensor: on rank ``dst`` the reduction over the group, elsewhere a copy of
    ``tensor``."""
    return _Reduce.apply(dst, op, group, tensor)


def all_gather(tensor, group=None):
    """A tuple of every rank's ``tensor`` in rank order (every rank's shapes must agree)."""
    return _AllGather.apply(group, tensor)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None):
    """The reduction of every rank's ``input_list[rank]``, written into ``output`` and returned
    as a new tensor that autograd differentiates."""
    out = _ReduceScatter.apply(op, group, output, *input_list)
    output.detach().copy_(out.detach())   # torch's writes into output as well
    return out
