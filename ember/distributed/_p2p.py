"""Point-to-point: send/recv, isend/irecv, batch_isend_irecv.

Each send is two messages: a record (dtype, element count) on a communicator of its own, then
the bytes. The receive posts both at once into the tensor's memory, so nothing blocks in
Python until ``wait()``; the record lets ``wait()`` reject a sender whose dtype or size does
not match (MPI itself reports a too-long message as truncation, never writes past the buffer).
"""
from __future__ import annotations

import numpy as np

from .. import _dtype as D
from ._collectives import _bytes, _check_tensor, _flat, _recv_buffer, _store
from ._pg import Work
from .distributed_c10d import _peer, _resolve


def _p2p_comm(pg):
    if not hasattr(pg, "p2p"):
        pg.p2p = pg.comm.Dup()  # records travel apart from data and from the handshake
    return pg.p2p


class _RequestWork(Work):
    """Work over MPI requests: completes by testing them, checks the record at the end."""

    def __init__(self, pg, op, reqs, keep, finish=None):
        self._pg, self._op, self._reqs, self._keep, self._finish = pg, op, reqs, keep, finish
        self._done = False
        self._outputs = None

    def wait(self, timeout=None) -> bool:
        if not self._done:
            from ._pg import as_timeout
            limit = self._pg.timeout if timeout is None else as_timeout(timeout)
            self._pg.wait(self._reqs, self._op, limit, keep=self._keep)
            self._done = True
            if self._finish is not None:
                self._finish()
        return True

    def is_completed(self) -> bool:
        from mpi4py import MPI
        return self._done or MPI.Request.Testall(self._reqs)

    def is_success(self) -> bool:
        return self.is_completed()

    def exception(self):
        return None

    def get_future(self):
        raise RuntimeError("get_future: not supported for point-to-point Work in ember; call "
                           "wait() instead.")


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Start sending ``tensor`` to ``dst``; returns a Work."""
    _check_tensor("isend", tensor)
    pg = _resolve(group, "isend")
    if pg is None:
        return None
    peer = _peer(pg, "isend", dst, group_dst, "dst")
    record = np.array([D.ALL.index(tensor.dtype), tensor.numel()], np.int64)
    data = _flat(tensor)
    reqs = [_p2p_comm(pg).Isend(record, dest=peer, tag=tag),
            pg.comm.Isend(_bytes(data), dest=peer, tag=tag)]
    return _RequestWork(pg, "send", reqs, (record, data))


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Start receiving into ``tensor`` from ``src`` (any rank when None); returns a Work."""
    _check_tensor("irecv", tensor)
    pg = _resolve(group, "irecv")
    if pg is None:
        return None
    if src is None and group_src is None:
        return _recv_any(pg, tensor, tag)
    peer = _peer(pg, "irecv", src, group_src, "src")
    record = np.zeros(2, np.int64)
    buf = _recv_buffer(tensor)
    reqs = [_p2p_comm(pg).Irecv(record, source=peer, tag=tag),
            pg.comm.Irecv(_bytes(buf), source=peer, tag=tag)]

    def finish():
        _check_record(pg, peer, record, tensor)
        _store(tensor, buf)

    work = _RequestWork(pg, "recv", reqs, (record, buf), finish)
    work.source = pg.ranks[peer]
    return work


def _recv_any(pg, tensor, tag):
    """irecv from any source: the sender is known once its record arrives."""
    from mpi4py import MPI
    record = np.zeros(2, np.int64)
    status = MPI.Status()
    req = _p2p_comm(pg).Irecv(record, source=MPI.ANY_SOURCE, tag=tag)
    pg.wait([req], "recv", pg.timeout, keep=record)
    req.Get_status(status)
    return irecv_from(pg, tensor, status.Get_source(), tag, record)


def irecv_from(pg, tensor, peer, tag, record):
    buf = _recv_buffer(tensor)
    reqs = [pg.comm.Irecv(_bytes(buf), source=peer, tag=tag)]

    def finish():
        _check_record(pg, peer, record, tensor)
        _store(tensor, buf)

    work = _RequestWork(pg, "recv", reqs, (record, buf), finish)
    work.source = pg.ranks[peer]
    return work


def _check_record(pg, peer, record, tensor):
    dtype, count = D.ALL[int(record[0])], int(record[1])
    if dtype != tensor.dtype or count != tensor.numel():
        raise RuntimeError(f"recv: rank {pg.ranks[peer]} sent {count} elements of {dtype}; got "
                           f"{count} x {dtype}, expected {tensor.numel()} x {tensor.dtype} "
                           f"(the receiving tensor's shape {tuple(tensor.shape)}).")


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send ``tensor`` to ``dst`` and wait until the buffer may be reused."""
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into ``tensor``; returns the sender's global rank (-1 outside the group)."""
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    return work.source


class P2POp:
    """One send or receive for ``batch_isend_irecv``: ``P2POp(dist.isend, tensor, peer)``."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``torch.distributed."
                             "isend`` or ``torch.distributed.irecv``.")
        self.op, self.tensor, self.peer, self.group = op, tensor, peer, group
        self.tag, self.group_peer = tag, group_peer


def batch_isend_irecv(p2p_op_list):
    """Start every P2POp of the list; returns their Works (all posted before any waits)."""
    if not isinstance(p2p_op_list, list) or not all(isinstance(p, P2POp)
                                                   for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                         "``torch.distributed.P2POp``.")
    works = []
    for p in p2p_op_list:
        if p.op is isend:
            works.append(isend(p.tensor, p.peer, p.group, p.tag, p.group_peer))
        else:
            works.append(irecv(p.tensor, p.peer, p.group, p.tag, p.group_peer))
    return works

