"""Tensors across processes: ``Tensor.share_memory_()`` and the pickler reductions.

``init_reductions()`` registers a reduction for ``Tensor`` (and every subclass, e.g.
``nn.Parameter``) with ``multiprocessing.reduction.ForkingPickler``, the pickler that
``multiprocessing`` queues, pipes and ``spawn``/``forkserver`` process arguments use. The tensor's
storage is moved to shared memory (in place, if it is not there already) and only a handle
travels: a file descriptor or a file name (see NOTE [Shared memory lifetime] in ``_shm.py``) plus
dtype, shape, strides, byte offset and ``requires_grad``. The receiver maps the same memory, so
a write in one process is visible in the other. ``.grad`` does not travel: gradients stay per
process unless you share them explicitly.

Plain ``pickle.dumps`` (``Tensor.__reduce_ex__``) still copies the data; ``ember.save`` is
unaffected.
"""
from __future__ import annotations

import contextlib
import os
import threading
import time
from multiprocessing import context as mp_context
from multiprocessing import process as mp_process
from multiprocessing import reduction, resource_sharer
from multiprocessing import util as mp_util
from multiprocessing.reduction import ForkingPickler

import numpy as np

from .._backend import data_ptr
from .._tensor import Tensor, _new, _root_array
from . import _shm

# per-instance attributes that describe autograd state or storage, never sent to a receiver
_INTERNAL = frozenset({"_data", "_vc", "_base", "_acc", "_grad", "_hooks", "_grad_fn",
                       "_output_nr", "_requires_grad", "_view_v", "_fw", "_retains_grad",
                       "_shared"})


# ---------------------------------------------------------------------------- share_memory_
def share_memory_(self):
    """Move this tensor's storage to shared memory, in place; returns ``self``.

    The whole underlying NumPy buffer is copied into a shared-memory segment and this tensor is
    re-pointed at the copy with the same shape, strides and storage offset. A no-op if the
    tensor already lives in shared memory. ``.grad`` is not moved.

    Differs from torch: only this tensor object follows the storage. Other tensors that
    already viewed the old memory (earlier ``t.view(...)``, ``t.detach()``, ``t.data``)
    keep the old, private memory; take views after sharing.

    Example:
        >>> import ember
        >>> t = ember.zeros(3)
        >>> t.share_memory_().is_shared()
        True
    """
    if _shm.segment_of(self._data) is not None:
        self._shared = True
        return self
    root = _root_array(self._data)
    if not (root.flags.c_contiguous or root.flags.f_contiguous):
        return _share_compact(self)  # an exotic strided buffer: share just this view
    seg = _shm.allocate(root.nbytes)
    shared_root = np.ndarray(root.shape, root.dtype, buffer=np.asarray(seg),
                             strides=root.strides)
    np.copyto(shared_root, root, casting="no")
    offset = data_ptr(self._data) - data_ptr(root)
    self._data = np.ndarray(self._data.shape, self._data.dtype, buffer=shared_root,
                            offset=offset, strides=self._data.strides)
    self._shared = True
    return self


def _share_compact(t):
    """Copy just ``t``'s elements into a new segment (C order) and re-point ``t``."""
    arr = t._data
    seg = _shm.allocate(arr.nbytes)
    shared = np.ndarray(arr.shape, arr.dtype, buffer=np.asarray(seg))
    np.copyto(shared, arr, casting="no")
    t._data = shared
    t._shared = True
    return t


def empty_shared(shape, dtype):
    """An uninitialised ndarray in a fresh shared-memory segment (for DataLoader collation)."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    return np.ndarray(tuple(shape), dtype, buffer=np.asarray(_shm.allocate(nbytes)))


# ---------------------------------------------------------------------------- reductions
def reduce_tensor(t):
    """ForkingPickler reduction: send a shared-memory handle instead of the data."""
    if t.requires_grad and not t.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since "
            "autograd does not support crossing process boundaries. If you just want to "
            "transfer the data, call detach() on the tensor before serializing (e.g., putting "
            "it on the queue).")
    found = _shm.segment_of(t._data)
    if found is None:
        if t._data.nbytes == _root_array(t._data).nbytes:
            share_memory_(t)
        else:
            # a view of a bigger buffer (a dataset row): share only what is sent, so that sending
            # rows one by one does not copy the whole buffer every time
            _share_compact(t)
        found = _shm.segment_of(t._data)
    seg, offset = found
    arr = t._data
    extras = {k: v for k, v in t.__dict__.items() if k not in _INTERNAL}
    return (rebuild_tensor, (type(t), seg, arr.dtype, arr.shape, arr.strides, offset,
                             t.requires_grad, extras))


def rebuild_tensor(cls, seg, dtype, shape, strides, offset, requires_grad, extras):
    arr = np.ndarray(shape, dtype, buffer=np.asarray(seg), offset=offset, strides=strides)
    t = _new(cls)
    t._data, t._vc = arr, [0]
    t._shared = True
    if requires_grad:
        t._requires_grad = True
    if extras:
        t.__dict__.update(extras)
    return t


class _Channel(threading.local):
    """Descriptors collected while pickling a DataLoader message (see _channel.py)."""
    sink = None    # list of fds to send alongside the pickle
    source = None  # list of received fds, consumed by _attach_channel_fd


_channel = _Channel()


@contextlib.contextmanager
def collect_fds():
    """Pickle with descriptors gathered in the yielded list instead of ``DupFd`` handles."""
    _channel.sink = fds = []
    try:
        yield fds
    finally:
        _channel.sink = None


@contextlib.contextmanager
def provide_fds(fds):
    """Unpickle a message whose descriptors arrived out of band; closes unclaimed ones."""
    _channel.source = fds
    try:
        yield
    finally:
        _channel.source = None
        for fd in fds:
            if fd is not None:
                os.close(fd)


def reduce_segment(seg):
    if seg.path:
        _shm.pin(seg)
        return (_attach_name, (seg.path, seg.size))
    sink = _channel.sink
    if sink is not None:
        sink.append(seg.fd)
        return (_attach_channel_fd, (len(sink) - 1, seg.size))
    return (_attach_dupfd, (_DupFd(seg.fd), seg.size))


def _attach_dupfd(dupfd, size):
    return _shm.attach_fd(dupfd.detach(), size)


class _DupFd:
    """Like ``multiprocessing.reduction.DupFd``, but counts descriptors not yet fetched.

    While spawning, the descriptor goes to the child with the process. Otherwise the resource
    sharer thread hands a duplicate to the receiver over a unix socket when it unpickles, so
    the sender must still be running then. See NOTE [Sender exit].
    """

    def __init__(self, fd):
        popen = mp_context.get_spawning_popen()
        if popen is not None:
            self._fd = popen.DupFd(popen.duplicate_for_child(fd))
            return
        self._fd = None
        new_fd = os.dup(fd)

        def send(conn, pid):
            reduction.send_handle(conn, new_fd, pid)

        def close():
            os.close(new_fd)
            with _pending_lock:
                _pending[0] -= 1

        with _pending_lock:
            _pending[0] += 1
        self._id = resource_sharer._resource_sharer.register(send, close)

    def detach(self):
        if self._fd is not None:
            return self._fd.detach()
        with resource_sharer._resource_sharer.get_connection(self._id) as conn:
            return reduction.recv_handle(conn)


# NOTE [Sender exit]
# A descriptor sent through a queue is fetched from the sender's resource-sharer thread when
# the receiver unpickles the message. A child that puts a result on a queue and returns would
# exit before its parent fetched it, and the parent would get a broken pipe. So at exit a
# process waits, up to _SENDER_EXIT_WAIT seconds, until its queue feeder threads have flushed
# and every descriptor it sent was fetched -- as long as a process that could fetch it (its
# parent or a child) is still running. The wait runs as a multiprocessing finalizer of priority
# 5: after the queues were told to close (priority 10), before the resource sharer's socket
# file is removed (priority 0).
_SENDER_EXIT_WAIT = 5.0
_pending = [0]
_pending_lock = threading.Lock()
os.register_at_fork(after_in_child=lambda: globals().update(_pending_lock=threading.Lock()))


def _wait_for_pending_fds():
    deadline = time.monotonic() + _SENDER_EXIT_WAIT
    while time.monotonic() < deadline:
        feeding = any(t.name == "QueueFeederThread" and t.is_alive()
                      for t in threading.enumerate())
        if not feeding and _pending[0] <= 0:
            return
        parent = mp_process.parent_process()
        if not ((parent is not None and parent.is_alive()) or mp_process.active_children()):
            return
        time.sleep(0.002)  # polling state owned by the feeder and resource-sharer threads


def _register_exit_wait(_token=None):
    mp_util.Finalize(None, _wait_for_pending_fds, exitpriority=5)


class _Token:
    pass


# a child process clears the inherited finalizers when it starts (Process._after_fork), then
# runs the after-fork hooks: register again there
_after_fork_token = _Token()
_register_exit_wait()
mp_util.register_after_fork(_after_fork_token, _register_exit_wait)


def _attach_channel_fd(index, size):
    fds = _channel.source
    fd, fds[index] = fds[index], None
    return _shm.attach_fd(fd, size)


def _attach_name(path, size):
    return _shm.attach_name(path, size)


# ---------------------------------------------------------------------------- registration
def _register_tensor_type(cls):
    ForkingPickler.register(cls, reduce_tensor)


def _all_subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _all_subclasses(sub)


def init_reductions():
    """Register the shared-memory reduction for Tensor and all its subclasses (idempotent)."""
    _register_tensor_type(Tensor)
    for sub in _all_subclasses(Tensor):
        _register_tensor_type(sub)
    # dispatch tables match exact types, so subclasses defined later register themselves
    previous = Tensor.__dict__.get("__init_subclass__")
    if getattr(previous, "__func__", None) is _on_subclass:
        return

    Tensor.__init_subclass__ = classmethod(_on_subclass)


def _on_subclass(cls, **kwargs):
    super(Tensor, cls).__init_subclass__(**kwargs)
    _register_tensor_type(cls)


def share_tensors_in(obj, _depth=0, _seen=None):
    """Move every tensor found in ``obj`` (containers, modules) to shared memory, in place.

    ``fork`` does not pickle Process arguments, so ember's Process calls this before starting:
    the child then sees the same memory, exactly as with ``spawn``.
    """
    if _depth > 8:
        return
    _seen = set() if _seen is None else _seen
    if id(obj) in _seen:
        return
    _seen.add(id(obj))
    if isinstance(obj, Tensor):
        if obj.is_leaf or not obj.requires_grad:
            share_memory_(obj)
    elif callable(getattr(obj, "share_memory", None)) and hasattr(obj, "parameters"):
        obj.share_memory()  # an nn.Module
    elif isinstance(obj, dict):
        for v in obj.values():
            share_tensors_in(v, _depth + 1, _seen)
    elif isinstance(obj, (list, tuple, set, frozenset)):
        for v in obj:
            share_tensors_in(v, _depth + 1, _seen)


Tensor.share_memory_ = share_memory_
init_reductions()
