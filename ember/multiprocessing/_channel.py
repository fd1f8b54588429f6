"""Messages with tensors over a unix socket: pickle bytes plus the storages' descriptors.

Used between DataLoader workers and the main process. A message is a header (payload length,
number of descriptors) sent together with up to ``_MAX_FDS`` descriptors as ``SCM_RIGHTS``
ancillary data, one extra one-byte record per further ``_MAX_FDS`` descriptors, then the pickle.
Tensor data never goes through the socket: only their shared-memory descriptors do (see
``reductions.collect_fds``). Compared with ``DupFd`` through the resource sharer this needs no
extra connection and no authentication round trip per tensor.
"""
from __future__ import annotations

import array
import os
import socket
import struct
from multiprocessing.reduction import ForkingPickler

from .reductions import collect_fds, provide_fds

_HEADER = struct.Struct("<QI")
_MAX_FDS = 250  # the kernel accepts at most 253 descriptors per message (SCM_MAX_FD)


def send(sock, obj):
    """Pickle ``obj`` (tensors as shared-memory descriptors) and send it on ``sock``."""
    with collect_fds() as fds:
        payload = ForkingPickler.dumps(obj, 5)
    header = _HEADER.pack(len(payload), len(fds))
    chunks = [fds[i:i + _MAX_FDS] for i in range(0, len(fds), _MAX_FDS)] or [[]]
    sock.sendmsg([header], _ancillary(chunks[0]))
    for chunk in chunks[1:]:
        sock.sendmsg([b"\0"], _ancillary(chunk))
    sock.sendall(payload)


def recv(sock):
    """Receive one message sent by ``send``; raises EOFError if the peer closed the socket."""
    fds = []
    header = _recv_with_fds(sock, _HEADER.size, fds)
    length, nfds = _HEADER.unpack(header)
    try:
        while len(fds) < nfds:
            _recv_with_fds(sock, 1, fds)
        payload = _recv_exact(sock, length)
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    with provide_fds(fds):
        return ForkingPickler.loads(payload)


def _ancillary(fds):
    if not fds:
        return []
    return [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))]


def _recv_with_fds(sock, nbytes, fds):
    space = socket.CMSG_SPACE(_MAX_FDS * array.array("i").itemsize)
    data, ancdata, flags, _ = sock.recvmsg(nbytes, space)
    for level, kind, blob in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            got = array.array("i")
            got.frombytes(blob[:len(blob) - len(blob) % got.itemsize])
            fds.extend(got)
    if flags & socket.MSG_CTRUNC:
        for fd in fds:
            os.close(fd)
        raise RuntimeError("ember.multiprocessing: descriptors were truncated in transit "
                           "(too many open files in this process?)")
    if not data:
        raise EOFError("peer closed the connection")
    if len(data) < nbytes:
        data += _recv_exact(sock, nbytes - len(data))
    return data


def _recv_exact(sock, nbytes):
    buf = bytearray(nbytes)
    view = memoryview(buf)
    got = 0
    while got < nbytes:
        n = sock.recv_into(view[got:], nbytes - got)
        if n == 0:
            raise EOFError("peer closed the connection in the middle of a message")
        got += n
    return buf
