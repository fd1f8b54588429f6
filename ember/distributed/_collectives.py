"""Tensor collectives: check the call, handshake, move the bytes with mpi4py, write back.

Data that only moves (broadcast, gather, all_to_all...) travels as raw bytes, so every ember
dtype works, bfloat16 and bool included. Reductions run in MPI on the tensor's own type, except
float16/bfloat16 (reduced in float32, then rounded once) and bool (as uint8: SUM/MAX is "or",
PRODUCT/MIN is "and").
"""
from __future__ import annotations

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor
from ._pg import ReduceOp
from .distributed_c10d import _peer, _resolve


# ---------------------------------------------------------------------------- buffers
def _check_tensor(op, t, name="tensor"):
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}: {name} must be an ember Tensor; got {type(t).__name__}.")


def _check_list(op, tensors, n, name):
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op}: {name} must be a list of Tensors; got {type(tensors).__name__}.")
    if len(tensors) != n:
        raise ValueError(f"{op}: {name} has {len(tensors)} tensors; got {len(tensors)}, "
                         f"expected one per rank ({n}).")
    for t in tensors:
        _check_tensor(op, t, name)


def _dtype_id(t):
    return D.ALL.index(t.dtype)


def _flat(t) -> np.ndarray:
    """A contiguous 1-d array of ``t``'s elements: its own memory when already contiguous."""
    return np.ascontiguousarray(t._data).reshape(-1)


def _bytes(a: np.ndarray) -> np.ndarray:
    return a.reshape(-1).view(np.uint8)


def _store(t, values: np.ndarray):
    """Write ``values`` into ``t`` in place (a no-op copy when MPI wrote there already)."""
    target = t._data
    if not (values.base is not None and np.shares_memory(values, target)
            and values.size == target.size):
        target[...] = values.reshape(target.shape).astype(target.dtype, copy=False)
    t._bump_version()


def _recv_buffer(t) -> np.ndarray:
    """Where MPI may write ``t``'s elements: its memory if contiguous, else a scratch array."""
    if t._data.flags.c_contiguous:
        return t._data.reshape(-1)
    return np.empty(t._data.size, t._data.dtype)


def _check_same_dtype(op, tensors, dtype):
    for t in tensors:
        if t.dtype != dtype:
            raise RuntimeError(f"{op}: tensors must share one dtype; got {t.dtype}, "
                               f"expected {dtype}.")


# ---------------------------------------------------------------------------- reductions
def _mpi_op(op, redop, dtype):
    from mpi4py import MPI
    if not isinstance(redop, ReduceOp):
        raise TypeError(f"{op}: op must be a ReduceOp; got {redop!r}.")
    integral = dtype in D.INTEGRAL or dtype == D.bool_
    if redop in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) and not integral:
        raise RuntimeError(f"{op}: ReduceOp.{redop.name} needs an integer or bool tensor; "
                           f"got {dtype}, expected an integral dtype.")
    if redop == ReduceOp.AVG and dtype == D.bool_:
        raise RuntimeError(f"{op}: ReduceOp.AVG cannot average bool tensors; got {dtype}.")
    if dtype == D.bool_:
        table = {ReduceOp.SUM: MPI.MAX, ReduceOp.PRODUCT: MPI.MIN}
        if redop in table:
            return table[redop]
    table = {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD,
             ReduceOp.MIN: MPI.MIN, ReduceOp.MAX: MPI.MAX, ReduceOp.BAND: MPI.BAND,
             ReduceOp.BOR: MPI.BOR, ReduceOp.BXOR: MPI.BXOR}
    if redop not in table:
        raise ValueError(f"{op}: ReduceOp.{redop.name} is not supported; expected SUM, AVG, "
                         f"PRODUCT, MIN, MAX, BAND, BOR or BXOR.")
    return table[redop]


def _work_dtype(dtype):
    if dtype in (D.float16, D.bfloat16):
        return np.dtype(np.float32)
    if dtype == D.bool_:
        return np.dtype(np.uint8)
    return dtype.np


def _reduce_input(t, in_place=False) -> np.ndarray:
    """The contiguous array MPI reduces: ``t``'s own memory when ``in_place`` is allowed and
    possible (contiguous, a type MPI reduces natively), else a copy in the working dtype."""
    work = _work_dtype(t.dtype)
    if in_place and t._data.flags.c_contiguous and work == t._data.dtype:
        return t._data.reshape(-1)
    return np.array(t._data, dtype=work, order="C").reshape(-1)


def _finish(values, redop, n, dtype):
    """AVG divides the sum; then back to the tensor's dtype."""
    if redop == ReduceOp.AVG:
        if dtype in D.INTEGRAL:
            values = np.trunc(values / n)  # integer average rounds toward zero
        else:
            values = values / n
    return values.astype(dtype.np, copy=False)


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``tensor`` over the group; every rank receives the result in place."""
    _check_tensor("all_reduce", tensor)
    pg = _resolve(group, "all_reduce")
    if pg is None:
        return None
    mpi_op = _mpi_op("all_reduce", op, tensor.dtype)

    def run():
        records = pg.handshake("all_reduce", _dtype_id(tensor), tensor.numel(), -1, op)
        pg.check_same("all_reduce", records, ("dtype", "count", "redop"))
        from mpi4py import MPI
        buf = _reduce_input(tensor, in_place=True)
        pg.complete([pg.comm.Iallreduce(MPI.IN_PLACE, buf, op=mpi_op)])
        _store(tensor, _finish(buf, op, pg.size(), tensor.dtype))

    return pg.run(run, async_op, [tensor])


def all_reduce_array(pg, buf: np.ndarray, name="all_reduce"):
    """Sum a contiguous float array over ``pg`` in place (DistributedDataParallel's buckets)."""
    from mpi4py import MPI
    dtype = D._FROM_NP[buf.dtype]
    records = pg.handshake(name, D.ALL.index(dtype), buf.size, -1, ReduceOp.SUM)
    pg.check_same(name, records, ("dtype", "count"))
    pg.complete([pg.comm.Iallreduce(MPI.IN_PLACE, buf, op=MPI.SUM)])


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduce ``tensor`` over the group into the ``dst`` rank's ``tensor``."""
    _check_tensor("reduce", tensor)
    pg = _resolve(group, "reduce")
    if pg is None:
        return None
    root = _peer(pg, "reduce", dst, group_dst, "dst")
    mpi_op = _mpi_op("reduce", op, tensor.dtype)

    def run():
        records = pg.handshake("reduce", _dtype_id(tensor), tensor.numel(), root, op)
        pg.check_same("reduce", records)
        from mpi4py import MPI
        buf = _reduce_input(tensor)
        send = MPI.IN_PLACE if pg.rank() == root else buf
        pg.complete([pg.comm.Ireduce(send, buf, op=mpi_op, root=root)])
        if pg.rank() == root:
            _store(tensor, _finish(buf, op, pg.size(), tensor.dtype))

    return pg.run(run, async_op, [tensor])


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input`` (``world_size`` equal chunks along dim 0) and keep chunk ``rank``."""
    _check_tensor("reduce_scatter_tensor", output, "output")
    _check_tensor("reduce_scatter_tensor", input, "input")
    pg = _resolve(group, "reduce_scatter_tensor")
    if pg is None:
        return None
    if input.numel() != output.numel() * pg.size():
        raise ValueError(f"reduce_scatter_tensor: input has {input.numel()} elements; got "
                         f"{input.numel()}, expected output.numel() * world_size = "
                         f"{output.numel() * pg.size()}.")
    _check_same_dtype("reduce_scatter_tensor", [input], output.dtype)
    return _reduce_scatter("reduce_scatter_tensor", pg, output, lambda: _reduce_input(input),
                           op, async_op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce the i-th tensors of every rank's ``input_list`` into rank i's ``output``."""
    _check_tensor("reduce_scatter", output, "output")
    pg = _resolve(group, "reduce_scatter")
    if pg is None:
        return None
    _check_list("reduce_scatter", input_list, pg.size(), "input_list")
    _check_same_dtype("reduce_scatter", input_list, output.dtype)
    for t in input_list:
        if t.numel() != output.numel():
            raise ValueError(f"reduce_scatter: every input has output's size; got "
                             f"{tuple(t.shape)}, expected {tuple(output.shape)}.")

    def stacked():
        return np.concatenate([_reduce_input(t) for t in input_list])

    return _reduce_scatter("reduce_scatter", pg, output, stacked, op, async_op)


def _reduce_scatter(name, pg, output, make_input, op, async_op):
    mpi_op = _mpi_op(name, op, output.dtype)

    def run():
        records = pg.handshake(name, _dtype_id(output), output.numel(), -1, op)
        pg.check_same(name, records, ("dtype", "count", "redop"))
        send = make_input()
        recv = np.empty(output.numel(), send.dtype)
        req = pg.comm.Ireduce_scatter_block(send, recv, op=mpi_op)
        pg.complete([req])
        _store(output, _finish(recv, op, pg.size(), output.dtype))

    return pg.run(run, async_op, [output])


# ---------------------------------------------------------------------------- data movement
def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy the ``src`` rank's ``tensor`` into ``tensor`` on every rank."""
    _check_tensor("broadcast", tensor)
    pg = _resolve(group, "broadcast")
    if pg is None:
        return None
    root = _peer(pg, "broadcast", src, group_src, "src")

    def run():
        records = pg.handshake("broadcast", _dtype_id(tensor), tensor.numel(), root)
        pg.check_same("broadcast", records, ("dtype", "count", "root"))
        buf = _flat(tensor) if pg.rank() == root else _recv_buffer(tensor)
        pg.complete([pg.comm.Ibcast(_bytes(buf), root=root)])
        if pg.rank() != root:
            _store(tensor, buf)

    return pg.run(run, async_op, [tensor])


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Concatenate every rank's ``input_tensor`` (in rank order) into ``output_tensor``."""
    _check_tensor("all_gather_into_tensor", output_tensor, "output_tensor")
    _check_tensor("all_gather_into_tensor", input_tensor, "input_tensor")
    pg = _resolve(group, "all_gather_into_tensor")
    if pg is None:
        return None
    if output_tensor.numel() != input_tensor.numel() * pg.size():
        raise ValueError(f"all_gather_into_tensor: output_tensor has {output_tensor.numel()} "
                         f"elements; got {output_tensor.numel()}, expected "
                         f"input_tensor.numel() * world_size = "
                         f"{input_tensor.numel() * pg.size()}.")
    _check_same_dtype("all_gather_into_tensor", [input_tensor], output_tensor.dtype)

    def run():
        _all_gather_flat("all_gather_into_tensor", pg, input_tensor, output_tensor)

    return pg.run(run, async_op, [output_tensor])


def _all_gather_flat(name, pg, input_tensor, output_tensor=None):
    records = pg.handshake(name, _dtype_id(input_tensor), input_tensor.numel())
    pg.check_same(name, records, ("dtype", "count"))
    send = _flat(input_tensor)
    if output_tensor is not None:
        recv = _recv_buffer(output_tensor)
    else:
        recv = np.empty(send.size * pg.size(), send.dtype)
    pg.complete([pg.comm.Iallgather(_bytes(send), _bytes(recv))])
    if output_tensor is not None:
        _store(output_tensor, recv)
    return recv


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Every rank's ``tensor``, in rank order, into ``tensor_list`` on every rank."""
    _check_tensor("all_gather", tensor)
    pg = _resolve(group, "all_gather")
    if pg is None:
        return None
    _check_list("all_gather", tensor_list, pg.size(), "tensor_list")
    _check_same_dtype("all_gather", tensor_list, tensor.dtype)
    for t in tensor_list:
        if t.numel() != tensor.numel():
            raise ValueError(f"all_gather: every tensor in tensor_list has tensor's size; "
                             f"got {tuple(t.shape)}, expected {tuple(tensor.shape)}.")

    def run():
        flat = _all_gather_flat("all_gather", pg, tensor)
        for i, out in enumerate(tensor_list):
            _store(out, flat[i * tensor.numel():(i + 1) * tensor.numel()])

    return pg.run(run, async_op, tensor_list)


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """Every rank's ``tensor`` into ``gather_list`` on the ``dst`` rank."""
    _check_tensor("gather", tensor)
    pg = _resolve(group, "gather")
    if pg is None:
        return None
    root = _peer(pg, "gather", dst, group_dst, "dst")
    me = pg.rank()
    if me == root:
        _check_list("gather", gather_list, pg.size(), "gather_list")
        _check_same_dtype("gather", gather_list, tensor.dtype)
    elif gather_list:
        raise ValueError("gather: Argument ``gather_list`` must NOT be specified on non-"
                         "destination ranks.")

    def run():
        records = pg.handshake("gather", _dtype_id(tensor), tensor.numel(), root)
        pg.check_same("gather", records, ("dtype", "count", "root"))
        send = _flat(tensor)
        recv = np.empty(send.size * pg.size(), send.dtype) if me == root else None
        req = pg.comm.Igather(_bytes(send), _bytes(recv) if recv is not None else None,
                              root=root)
        pg.complete([req])
        if me == root:
            for i, out in enumerate(gather_list):
                _store(out, recv[i * send.size:(i + 1) * send.size])

    return pg.run(run, async_op, gather_list or [])


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """Rank i receives the ``src`` rank's ``scatter_list[i]`` into ``tensor``."""
    _check_tensor("scatter", tensor)
    pg = _resolve(group, "scatter")
    if pg is None:
        return None
    root = _peer(pg, "scatter", src, group_src, "src")
    me = pg.rank()
    if me == root:
        _check_list("scatter", scatter_list, pg.size(), "scatter_list")
        _check_same_dtype("scatter", scatter_list, tensor.dtype)
        for t in scatter_list:
            if t.numel() != tensor.numel():
                raise ValueError(f"scatter: every tensor in scatter_list has tensor's size; "
                                 f"got {tuple(t.shape)}, expected {tuple(tensor.shape)}.")
    elif scatter_list:
        raise ValueError("scatter: Argument ``scatter_list`` must NOT be specified on non-"
                         "source ranks.")

    def run():
        records = pg.handshake("scatter", _dtype_id(tensor), tensor.numel(), root)
        pg.check_same("scatter", records, ("dtype", "count", "root"))
        send = np.concatenate([_flat(t) for t in scatter_list]) if me == root else None
        recv = _recv_buffer(tensor)
        req = pg.comm.Iscatter(_bytes(send) if send is not None else None, _bytes(recv),
                               root=root)
        pg.complete([req])
        _store(tensor, recv)

    return pg.run(run, async_op, [tensor])


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """Rank i sends ``input_tensor_list[j]`` to rank j, which stores it in its
    ``output_tensor_list[i]``; sizes may differ per pair."""
    pg = _resolve(group, "all_to_all")
    if pg is None:
        return None
    n = pg.size()
    _check_list("all_to_all", input_tensor_list, n, "input_tensor_list")
    _check_list("all_to_all", output_tensor_list, n, "output_tensor_list")
    dtype = input_tensor_list[0].dtype
    _check_same_dtype("all_to_all", [*input_tensor_list, *output_tensor_list], dtype)

    def run():
        send = np.concatenate([_flat(t) for t in input_tensor_list])
        recv = _exchange("all_to_all", pg, dtype, send, [t.numel() for t in input_tensor_list],
                         [t.numel() for t in output_tensor_list])
        offset = 0
        for out in output_tensor_list:
            _store(out, recv[offset:offset + out.numel()])
            offset += out.numel()

    return pg.run(run, async_op, output_tensor_list)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op=False):
    """all_to_all on one tensor split along dim 0 (equal splits unless sizes are given)."""
    _check_tensor("all_to_all_single", output, "output")
    _check_tensor("all_to_all_single", input, "input")
    pg = _resolve(group, "all_to_all_single")
    if pg is None:
        return None
    _check_same_dtype("all_to_all_single", [input], output.dtype)
    n = pg.size()
    send_counts = _split_counts("all_to_all_single", input, input_split_sizes, n, "input")
    recv_counts = _split_counts("all_to_all_single", output, output_split_sizes, n, "output")

    def run():
        recv = _exchange("all_to_all_single", pg, output.dtype, _flat(input), send_counts,
                         recv_counts)
        _store(output, recv)

    return pg.run(run, async_op, [output])


def _split_counts(op, t, split_sizes, n, name):
    rows = t.shape[0] if t.ndim else 1
    row = t.numel() // rows if rows else 0
    if split_sizes is None or len(split_sizes) == 0:
        if rows % n:
            raise ValueError(f"{op}: {name}'s dim 0 ({rows}) does not split evenly over "
                             f"{n} ranks; got {rows}, expected a multiple of {n}, or pass "
                             f"{name}_split_sizes.")
        return [rows // n * row] * n
    if len(split_sizes) != n or sum(split_sizes) != rows:
        raise ValueError(f"{op}: {name}_split_sizes must have one entry per rank summing to "
                         f"dim 0; got {list(split_sizes)}, expected {n} entries summing to "
                         f"{rows}.")
    return [int(s) * row for s in split_sizes]


def _exchange(name, pg, dtype, send, send_counts, recv_counts):
    """Alltoallv in bytes, after checking that what each rank sends is what its peer expects."""
    records = pg.handshake(name, D.ALL.index(dtype))
    pg.check_same(name, records, ("dtype",))
    counts = np.asarray(send_counts, np.int64)
    told = np.empty_like(counts)
    pg.complete([pg.comm.Ialltoall(counts, told)])
    expected = np.asarray(recv_counts, np.int64)
    if not (told == expected).all():
        bad = [i for i in range(pg.size()) if told[i] != expected[i]]
        i = bad[0]
        raise RuntimeError(f"{name}: rank {pg.ranks[i]} sends {told[i]} elements to rank "
                           f"{pg.ranks[pg.rank()]}; got {told[i]}, expected {expected[i]} (the "
                           f"size of the matching output).")
    item = dtype.np.itemsize
    recv = np.empty(int(expected.sum()), dtype.np)
    sdis = np.concatenate([[0], np.cumsum(counts)[:-1]]) * item
    rdis = np.concatenate([[0], np.cumsum(expected)[:-1]]) * item
    from mpi4py import MPI
    req = pg.comm.Ialltoallv([_bytes(send), (counts * item, sdis), MPI.BYTE],
                             [_bytes(recv), (expected * item, rdis), MPI.BYTE])
    pg.complete([req])
    return recv
