"""Object collectives: picklable Python objects, sent as bytes with their lengths first."""
from __future__ import annotations

import pickle

import numpy as np

from .distributed_c10d import _peer, _resolve


def _dumps(obj) -> np.ndarray:
    return np.frombuffer(pickle.dumps(obj), np.uint8)


def _loads(buf: np.ndarray):
    return pickle.loads(buf.tobytes())


def _offsets(lengths):
    return np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)


def all_gather_object(object_list, obj, group=None):
    """``object_list[i]`` becomes rank i's ``obj`` on every rank."""
    pg = _resolve(group, "all_gather_object")
    if pg is None:
        return
    if len(object_list) != pg.size():
        raise ValueError(f"all_gather_object: object_list has {len(object_list)} entries; "
                         f"expected one per rank ({pg.size()}).")
    pg.drain()
    with pg._lock:
        pg.handshake("all_gather_object")
        payload = _dumps(obj)
        mine = np.array([payload.size], np.int64)
        lengths = np.empty(pg.size(), np.int64)
        pg.complete([pg.comm.Iallgather(mine, lengths)])
        out = np.empty(int(lengths.sum()), np.uint8)
        req = pg.comm.Iallgatherv(payload, [out, (lengths, _offsets(lengths))])
        pg.complete([req])
    for i, (start, n) in enumerate(zip(_offsets(lengths), lengths, strict=False)):
        object_list[i] = _loads(out[start:start + n])


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """Every rank's ``obj`` into ``object_gather_list`` on the ``dst`` rank."""
    pg = _resolve(group, "gather_object")
    if pg is None:
        return
    root = _peer(pg, "gather_object", dst, group_dst, "dst")
    me = pg.rank()
    if me == root and (object_gather_list is None or len(object_gather_list) != pg.size()):
        raise ValueError(f"gather_object: object_gather_list on the destination rank needs one "
                         f"entry per rank ({pg.size()}).")
    pg.drain()
    with pg._lock:
        records = pg.handshake("gather_object", root=root)
        pg.check_same("gather_object", records, ("root",))
        payload = _dumps(obj)
        mine = np.array([payload.size], np.int64)
        lengths = np.empty(pg.size(), np.int64)
        pg.complete([pg.comm.Igather(mine, lengths if me == root else None, root=root)])
        out = np.empty(int(lengths.sum()) if me == root else 0, np.uint8)
        recv = [out, (lengths, _offsets(lengths))] if me == root else None
        pg.complete([pg.comm.Igatherv(payload, recv, root=root)])
    if me == root:
        for i, (start, n) in enumerate(zip(_offsets(lengths), lengths, strict=False)):
            object_gather_list[i] = _loads(out[start:start + n])


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Replace ``object_list``'s entries with the ``src`` rank's (lists of equal length)."""
    pg = _resolve(group, "broadcast_object_list")
    if pg is None:
        return
    root = _peer(pg, "broadcast_object_list", src, group_src, "src")
    pg.drain()
    with pg._lock:
        records = pg.handshake("broadcast_object_list", count=len(object_list), root=root)
        pg.check_same("broadcast_object_list", records, ("count", "root"))
        payload = _dumps(list(object_list)) if pg.rank() == root else None
        length = np.array([payload.size if payload is not None else 0], np.int64)
        pg.complete([pg.comm.Ibcast(length, root=root)])
        if payload is None:
            payload = np.empty(int(length[0]), np.uint8)
        pg.complete([pg.comm.Ibcast(payload, root=root)])
    if pg.rank() != root:
        object_list[:] = _loads(payload)


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None,
                        group=None, group_src=None):
    """Rank i's ``scatter_object_output_list[0]`` becomes the ``src`` rank's input entry i."""
    pg = _resolve(group, "scatter_object_list")
    if pg is None:
        return
    root = _peer(pg, "scatter_object_list", src, group_src, "src")
    me = pg.rank()
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at "
                         "least 1.")
    if me == root and (scatter_object_input_list is None
                       or len(scatter_object_input_list) != pg.size()):
        raise ValueError(f"scatter_object_list: scatter_object_input_list on the source rank "
                         f"needs one entry per rank ({pg.size()}).")
    pg.drain()
    with pg._lock:
        records = pg.handshake("scatter_object_list", root=root)
        pg.check_same("scatter_object_list", records, ("root",))
        if me == root:
            pieces = [_dumps(o) for o in scatter_object_input_list]
            lengths = np.array([p.size for p in pieces], np.int64)
            payload = np.concatenate(pieces) if pieces else np.empty(0, np.uint8)
        else:
            lengths, payload = None, None
        mine = np.empty(1, np.int64)
        pg.complete([pg.comm.Iscatter(lengths, mine, root=root)])
        out = np.empty(int(mine[0]), np.uint8)
        send = [payload, (lengths, _offsets(lengths))] if me == root else None
        pg.complete([pg.comm.Iscatterv(send, out, root=root)])
    scatter_object_output_list[0] = _loads(out)


def send_object_list(object_list, dst=None, group=None, device=None, group_dst=None,
                     use_batch=False):
    """Send the picklable objects of ``object_list`` to ``dst`` (which calls recv_object_list
    with a list of the same length)."""
    import ember

    from ._p2p import send
    payload = _dumps(list(object_list))
    send(ember.tensor([payload.size], dtype=ember.int64), dst, group, group_dst=group_dst)
    send(ember.from_numpy(payload.copy()), dst, group, group_dst=group_dst)


def recv_object_list(object_list, src=None, group=None, device=None, group_src=None,
                     use_batch=False):
    """Fill ``object_list`` with the objects ``src`` sent; returns the sender's rank."""
    import ember

    from ._p2p import recv
    length = ember.zeros(1, dtype=ember.int64)
    sender = recv(length, src, group, group_src=group_src)
    payload = ember.zeros(int(length.item()), dtype=ember.uint8)
    recv(payload, sender if src is None and group_src is None else src, group,
         group_src=group_src)
    object_list[:] = _loads(payload.numpy())[:len(object_list)]
    return sender
