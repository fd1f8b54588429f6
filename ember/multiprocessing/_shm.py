"""Shared-memory segments: the memory behind shared tensors.

A :class:`Segment` is one ``MAP_SHARED`` mapping of a file on a tmpfs (``/dev/shm`` unless
``EMBER_SHM_DIR`` names another directory). ``np.asarray(segment)`` is a uint8 array over the
mapping whose ``.base`` is the segment, so any NumPy view of shared memory leads back to its
segment by walking ``.base`` (``segment_of``).

NOTE [Shared memory lifetime]
Two sharing strategies, as in torch.multiprocessing:

* ``file_descriptor`` (default): the file is created with ``O_TMPFILE`` -- it never has a name,
  so nothing can be left behind in /dev/shm. Processes hand each other file descriptors
  (``SCM_RIGHTS`` via ``multiprocessing.reduction.DupFd``, or directly on the DataLoader's worker
  sockets). The kernel frees the memory when the last descriptor and the last mapping are gone,
  which also covers processes killed by SIGKILL. Cost: one open descriptor per shared storage.
* ``file_system``: the file has a name (``ember_fs_<pid>_<token>``) and processes hand each other
  the name. No descriptor is kept open. Every process that maps a segment holds a shared
  ``flock`` on it; the lock lives as long as the mapping (an mmap keeps its open file description
  alive) and the kernel drops it when the process dies. When a process unmaps a segment it tries
  an exclusive lock: if that succeeds nobody else maps it and the file is unlinked.
  A sender keeps ("pins") each segment it sent until a receiver has attached it (counters in a
  64-byte trailer after the data, updated under a POSIX record lock), so a tensor in flight is
  never unlinked under the receiver's feet. A daemon thread in the sender ("pin reaper", alive
  only while pins exist) drops each pin within _REAP_INTERVAL of the receipt, so a segment is
  unlinked as soon as both sides dropped the tensor (not at the sender's next allocation).
  What a crashed process held alone is unlinked by the next ``sweep()`` (run when a
  DataLoader shuts its workers down, after ``Process.join()`` of an ember Process, and at
  interpreter exit): any ``ember_fs_*`` file nobody holds a lock on is an
  orphan. As in torch, the sending process must stay alive until the receiver got the tensor.

At exit (also in multiprocessing children, which leave through ``os._exit``) the mappings of
``file_system`` segments are replaced by private anonymous memory at the same address -- the
tensors stay readable for the rest of the shutdown -- and files nobody else holds are unlinked.
"""
from __future__ import annotations

import atexit
import ctypes
import errno
import fcntl
import multiprocessing.util as mp_util
import os
import secrets
import threading
import weakref

import numpy as np

STRATEGIES = ("file_descriptor", "file_system")
SHM_DIR_ENV = "EMBER_SHM_DIR"
# testing hook: pretend shared memory holds only this many bytes (per process, live segments)
SIMULATED_CAPACITY_ENV = "EMBER_SHM_SIMULATED_CAPACITY"
FS_PREFIX = "ember_fs_"
_FS_TMP_PREFIX = "ember_fs_tmp_"
_TRAILER = 64  # file_system segments: [sent: u64][received: u64] after the data

_state = {"strategy": "file_descriptor", "live_bytes": 0}
_live: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # (dev, ino) -> Segment
_lock = threading.RLock()
_pins: list = []  # file_system segments this process sent: [(segment, sent count), ...]


def _reinit_after_fork():
    # a fork while another thread (a queue feeder pickling a tensor) held the lock would leave
    # the child with a lock nobody can release
    global _lock
    _lock = threading.RLock()
    _reaper["thread"] = None  # threads do not survive fork: the child starts its own
    _pins.clear()  # the parent's in-flight segments are the parent's to release


os.register_at_fork(after_in_child=_reinit_after_fork)

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                       ctypes.c_int, ctypes.c_long]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_MAP_FAILED = ctypes.c_void_p(-1).value
_PROT_RW = 0x1 | 0x2
_MAP_SHARED, _MAP_PRIVATE, _MAP_FIXED, _MAP_ANONYMOUS = 0x01, 0x02, 0x10, 0x20


def get_strategy():
    return _state["strategy"]


def set_strategy(strategy):
    if strategy not in STRATEGIES:
        raise ValueError(f"set_sharing_strategy: unknown strategy {strategy!r}; expected one of "
                         f"{sorted(STRATEGIES)}")
    _state["strategy"] = strategy
    if strategy == "file_system":
        _state["used_fs"] = True


def shm_dir():
    """Where segments live: ``$EMBER_SHM_DIR``, else /dev/shm, else the temp directory."""
    d = os.environ.get(SHM_DIR_ENV)
    if d:
        return d
    if os.path.isdir("/dev/shm"):
        return "/dev/shm"
    import tempfile
    return tempfile.gettempdir()


class Segment:
    """One shared mapping of ``size`` bytes; ``np.asarray(seg)`` views it (base is ``seg``)."""

    __slots__ = ("__weakref__", "_finalizer", "fd", "key", "path", "ptr", "size")

    def __init__(self, ptr, size, fd, path, key):
        self.ptr, self.size, self.fd, self.path, self.key = ptr, size, fd, path, key
        self._finalizer = weakref.finalize(self, _release, ptr, _map_len(size, path), fd, path)
        self._finalizer.atexit = False  # see NOTE [Shared memory lifetime]: exit is special

    @property
    def __array_interface__(self):
        return {"version": 3, "shape": (self.size,), "typestr": "|u1",
                "data": (self.ptr, False)}

    @property
    def strategy(self):
        return "file_system" if self.path else "file_descriptor"

    def __reduce__(self):
        from . import reductions
        return reductions.reduce_segment(self)

    def __repr__(self):
        where = self.path or f"fd {self.fd}"
        return f"<ember shared segment {self.size} bytes, {where}>"

    # file_system in-flight counters (see NOTE [Shared memory lifetime])
    def _counter(self, i):
        return ctypes.c_uint64.from_address(self.ptr + _data_len(self.size) + 8 * i)

    def bump(self, i, fd=None):
        """Add one to counter ``i`` (0: sent, 1: received) under a record lock; new value."""
        with _lock:
            own = fd is None
            if own:
                fd = os.open(self.path, os.O_RDWR | os.O_CLOEXEC)
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX, 8, _data_len(self.size) + 8 * i)
                c = self._counter(i)
                c.value += 1
                return c.value
            finally:
                if own:
                    os.close(fd)  # closing drops the record lock too


def _data_len(size):
    return (size + 63) // 64 * 64


def _map_len(size, path):
    return _data_len(size) + _TRAILER if path else size


def _mmap(fd, length):
    ptr = _libc.mmap(None, length, _PROT_RW, _MAP_SHARED, fd, 0)
    if ptr in (None, _MAP_FAILED):
        err = ctypes.get_errno()
        raise OSError(err, f"mmap of {length} bytes failed: {os.strerror(err)}")
    return ptr


def _release(ptr, length, fd, path):
    _libc.munmap(ptr, length)
    with _lock:
        _state["live_bytes"] -= length
    if fd >= 0:
        os.close(fd)
    if path:
        unlink_if_unused(path)


def unlink_if_unused(path):
    """Unlink a file_system segment if no process maps it (nobody holds its flock)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return False
    try:
        os.unlink(path)  # under our exclusive lock: a receiver blocks in flock until we are done
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


# ---------------------------------------------------------------------------- allocation
def out_of_memory_error(nbytes, directory, cause=None):
    try:
        st = os.statvfs(directory)
        mb = st.f_frsize / 2**20
        free = f"{st.f_bavail * mb:.1f} MB free of {st.f_blocks * mb:.1f} MB"
    except OSError:
        free = "free space unknown"
    why = f" ({cause})" if cause else ""
    return RuntimeError(
        f"ember.multiprocessing: shared memory ran out while allocating {nbytes} bytes in "
        f"{directory} ({free}){why}. Tensors passed between processes (DataLoader worker "
        "batches, ember.multiprocessing queues) live in shared memory. To fix: use fewer "
        "DataLoader workers (num_workers), a smaller batch_size or prefetch_factor; enlarge "
        "/dev/shm (docker run --shm-size=2g, or mount -o remount,size=4G /dev/shm); or call "
        "ember.multiprocessing.set_sharing_strategy('file_system') with EMBER_SHM_DIR pointing "
        "to a directory on a larger filesystem.")


def _check_simulated_capacity(length):
    cap = os.environ.get(SIMULATED_CAPACITY_ENV)
    if cap is not None and _state["live_bytes"] + length > int(cap):
        raise OSError(errno.ENOSPC, "No space left on device (simulated by "
                      f"{SIMULATED_CAPACITY_ENV}={cap})")


def _open_unnamed(directory):
    """A file on the shm filesystem that has no name (see NOTE [Shared memory lifetime])."""
    flags = os.O_RDWR | os.O_CLOEXEC
    try:
        return os.open(directory, flags | os.O_TMPFILE, 0o600)
    except OSError as e:
        if e.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT):
            raise
    if not os.path.isdir(directory) and hasattr(os, "memfd_create"):
        return os.memfd_create("ember_shm", os.MFD_CLOEXEC)
    # old kernels: a named file unlinked at once (a crash in between could leave it behind)
    path = os.path.join(directory, f"ember_anon_{os.getpid()}_{secrets.token_hex(8)}")
    fd = os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o600)
    os.unlink(path)
    return fd


def _reserve(fd, length):
    # fallocate makes tmpfs reserve the pages now: a full /dev/shm then fails here with ENOSPC
    # instead of killing the process with SIGBUS on first touch of the mapping
    try:
        os.posix_fallocate(fd, 0, length)
    except OSError as e:
        if e.errno not in (errno.EOPNOTSUPP, errno.EINVAL):
            raise
        os.ftruncate(fd, length)


def allocate(nbytes, strategy=None):
    """A new zero-filled segment of at least ``nbytes`` bytes (RuntimeError when shm is full)."""
    strategy = strategy or _state["strategy"]
    size = max(int(nbytes), 1)
    directory = shm_dir()
    path = None
    release_pins()
    try:
        if strategy == "file_system":
            fd, path = _create_named(directory, _map_len(size, True))
        else:
            _check_simulated_capacity(size)
            fd = _open_unnamed(directory)
            try:
                _reserve(fd, size)
            except BaseException:
                os.close(fd)
                raise
        try:
            ptr = _mmap(fd, _map_len(size, path))
        except BaseException:
            os.close(fd)
            if path:
                _unlink_quietly(path)
            raise
    except OSError as e:
        if e.errno in (errno.ENOSPC, errno.ENOMEM, errno.EDQUOT):
            raise out_of_memory_error(size, directory, e.strerror) from None
        if e.errno == errno.EMFILE:
            raise RuntimeError("ember.multiprocessing: too many open files while sharing a "
                               "tensor (the file_descriptor strategy keeps one per shared "
                               "storage). Raise `ulimit -n` or call ember.multiprocessing."
                               "set_sharing_strategy('file_system').") from None
        raise
    st = os.fstat(fd)
    if path:
        os.close(fd)  # the mapping keeps the file (and our shared flock) alive
        fd = -1
    return _register(Segment(ptr, size, fd, path, (st.st_dev, st.st_ino)))


def _create_named(directory, length):
    _check_simulated_capacity(length)
    token = f"{os.getpid()}_{secrets.token_hex(8)}"
    tmp = os.path.join(directory, _FS_TMP_PREFIX + token)
    fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        _reserve(fd, length)
        path = os.path.join(directory, FS_PREFIX + token)
        # created under a temporary name and renamed once locked, so that a concurrent sweep()
        # never mistakes a segment being born for an orphan
        os.rename(tmp, path)
    except BaseException:
        os.close(fd)
        _unlink_quietly(tmp)
        raise
    return fd, path


def _unlink_quietly(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def _register(seg):
    with _lock:
        _state["live_bytes"] += _map_len(seg.size, seg.path)
        _live[seg.key] = seg
        if seg.path:
            _state["used_fs"] = True
    return seg


# ---------------------------------------------------------------------------- attaching
def attach_fd(fd, size):
    """The segment behind a received descriptor (takes ownership of ``fd``)."""
    st = os.fstat(fd)
    key = (st.st_dev, st.st_ino)
    with _lock:
        seg = _live.get(key)
        if seg is not None:  # already mapped here: reuse it, one mapping per storage
            os.close(fd)
            return seg
        try:
            ptr = _mmap(fd, size)
        except BaseException:
            os.close(fd)
            raise
        return _register(Segment(ptr, size, fd, None, key))


def attach_name(path, size):
    """The segment behind a received file_system name; counts the receipt for the sender."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        raise RuntimeError(f"ember.multiprocessing: shared memory segment {path} no longer "
                           "exists: the sending process released it (or died) before this "
                           "process received the tensor. Keep the sender alive until the "
                           "receiver has the tensor.") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        st = os.fstat(fd)
        key = (st.st_dev, st.st_ino)
        with _lock:
            seg = _live.get(key)
            if seg is None:
                ptr = _mmap(fd, _map_len(size, path))
                seg = _register(Segment(ptr, size, -1, path, key))
        seg.bump(1, fd)  # received: lets the sender drop its pin
        return seg
    finally:
        os.close(fd)  # our flock stays with the mapping


def segment_of(arr):
    """(segment, byte offset of ``arr``'s first element) if ``arr`` views shared memory."""
    root = arr
    while isinstance(root.base, np.ndarray):
        root = root.base
    seg = root.base
    if not isinstance(seg, Segment):
        return None
    return seg, arr.__array_interface__["data"][0] - seg.ptr


# ---------------------------------------------------------------------------- pins and sweeps
_REAP_INTERVAL = 0.02  # seconds between the pin reaper's looks at the receipt counters
_reaper = {"thread": None, "idle": threading.Event()}


def pin(seg):
    """Keep a file_system segment mapped until a receiver has attached it."""
    sent = seg.bump(0)
    with _lock:
        _pins.append((seg, sent))
        _reaper["idle"].clear()
        if _reaper["thread"] is None:
            _reaper["thread"] = threading.Thread(target=_reap, name="ember-shm-pin-reaper",
                                                 daemon=True)
            _reaper["thread"].start()
    release_pins()


def release_pins():
    with _lock:
        if _pins:
            kept = [(s, n) for s, n in _pins if s._counter(1).value < n]
            dropped = len(_pins) - len(kept)
            _pins[:] = kept
            del kept
            return dropped
    return 0


def _reap():
    """The pin reaper: drop pins of received segments until none are left, then end."""
    while True:
        release_pins()
        with _lock:
            if not _pins:
                _reaper["thread"] = None
                _reaper["idle"].set()
                return
        threading.Event().wait(_REAP_INTERVAL)


def wait_pins_released(timeout=None):
    """Block until every segment this process sent was received and its pin dropped."""
    return _reaper["idle"].wait(timeout) if _pins or _reaper["thread"] else True


def sweep(directory=None):
    """Unlink orphaned file_system segments (no process maps them); returns how many."""
    directory = directory or shm_dir()
    try:
        names = os.listdir(directory)
    except OSError:
        return 0
    removed = 0
    for name in names:
        if name.startswith(_FS_TMP_PREFIX):
            if _pid_alive(name[len(_FS_TMP_PREFIX):].split("_")[0]):
                continue
            _unlink_quietly(os.path.join(directory, name))
            removed += 1
        elif name.startswith(FS_PREFIX):
            removed += unlink_if_unused(os.path.join(directory, name))
    return removed


def _pid_alive(pid):
    try:
        os.kill(int(pid), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return True


def _exit_cleanup():
    """See NOTE [Shared memory lifetime]: release file_system segments at process exit."""
    if _state.get("exit_pid") == os.getpid():
        return  # already done (registered both as an atexit and a multiprocessing finalizer)
    _state["exit_pid"] = os.getpid()
    with _lock:
        segs = [s for s in list(_live.values()) if s.path]
        inflight = {id(s) for s, n in _pins if s._counter(1).value < n}
        _pins.clear()
    for seg in segs:
        if seg._finalizer.alive and id(seg) not in inflight:
            # swap the shared pages for private ones at the same address: tensors stay valid
            _libc.mmap(seg.ptr, _map_len(seg.size, seg.path), _PROT_RW,
                       _MAP_PRIVATE | _MAP_FIXED | _MAP_ANONYMOUS, -1, 0)
            unlink_if_unused(seg.path)
    if _state.get("used_fs"):
        sweep()


def _register_exit_cleanup(_token=None):
    mp_util.Finalize(None, _exit_cleanup, exitpriority=-10)


class _Token:
    pass


# multiprocessing children leave through os._exit after running util finalizers, the main
# process through atexit: register with both (the function is idempotent). A child clears the
# finalizers it inherited when it starts, then runs the after-fork hooks: register again there.
_after_fork_token = _Token()
_register_exit_cleanup()
mp_util.register_after_fork(_after_fork_token, _register_exit_cleanup)
atexit.register(_exit_cleanup)
