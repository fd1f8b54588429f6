"""Loading MPI (mpi4py + MPICH) lazily, and what a rank does when it fails.

``import ember`` must not start MPI: only ``init_process_group`` does, through ``load()``.
"""
from __future__ import annotations

import atexit
import os
import sys
import traceback

_MPI = None
_REASON: str | None = None
_WE_INITIALIZED = False
_HOOKED = False

INSTALL_HINT = "pip install 'ember[distributed]' (mpi4py>=4 and the mpich wheel)"


def unavailable_reason() -> str | None:
    """None when MPI can be used, else one sentence saying why not.

    NOTE [Asking without loading MPI]: this (and so ``is_available()``) checks mpi4py without
    importing ``mpi4py.MPI``. ember imports that module with MPI's initialisation deferred (it
    calls Init_thread in ``load``); once imported so, another user of mpi4py in the process -
    Lightning's MPIEnvironment.detect asks ``MPI.COMM_WORLD.Get_size()`` in every Trainer -
    calls MPI before MPI_Init, which aborts the process. A library that fails to load is
    reported by ``load`` (init_process_group)."""
    if _MPI is not None or _REASON is not None:
        return _REASON
    return _mpi4py_reason()


def _mpi4py_reason() -> str | None:
    try:
        import mpi4py
    except ImportError:
        return f"mpi4py is not installed; {INSTALL_HINT}."
    if int(mpi4py.__version__.split(".")[0]) < 4:
        return f"mpi4py {mpi4py.__version__} is too old (ember needs >= 4); {INSTALL_HINT}."
    return None


def _try_import():
    global _MPI, _REASON
    if _MPI is not None or _REASON is not None:
        return _MPI
    _REASON = _mpi4py_reason()
    if _REASON is not None:
        return None
    import mpi4py
    if "mpi4py.MPI" not in sys.modules:
        # we call Init_thread ourselves (THREAD_MULTIPLE: DDP's communication thread) and
        # finalize only if nothing failed (see fail_fast)
        mpi4py.rc.initialize = False
        mpi4py.rc.finalize = False
    try:
        from mpi4py import MPI
    except (ImportError, RuntimeError, OSError) as e:
        _REASON = f"mpi4py is installed but no MPI library loads ({e}); {INSTALL_HINT}."
        return None
    _MPI = MPI
    return MPI


def load():
    """The initialised ``mpi4py.MPI`` module; RuntimeError naming the reason if unavailable."""
    global _WE_INITIALIZED
    MPI = _try_import()
    if MPI is None:
        raise RuntimeError(f"ember.distributed: MPI is not available: {_REASON}")
    if not MPI.Is_initialized():
        provided = MPI.Init_thread(MPI.THREAD_MULTIPLE)
        _WE_INITIALIZED = True
        if provided < MPI.THREAD_MULTIPLE:
            raise RuntimeError("ember.distributed: the MPI library does not support "
                               "MPI_THREAD_MULTIPLE, which DistributedDataParallel's "
                               "communication thread needs; use MPICH.")
        atexit.register(_finalize)
    _record_shm_segments()
    return MPI


def _finalize():
    if _MPI is not None and _WE_INITIALIZED and not _MPI.Is_finalized():
        _MPI.Finalize()


def _record_shm_segments():
    """Tell the launcher which /dev/shm segments MPICH mapped, so it can remove them if the
    job dies before MPI_Finalize unlinks them (MPICH leaves them behind on abnormal exits)."""
    run_dir = os.environ.get("EMBER_RUN_DIR")
    if not run_dir or not os.path.isdir(run_dir):
        return
    try:
        with open("/proc/self/maps") as f:
            names = {line.split()[-1] for line in f if "/dev/shm/mpich" in line}
    except OSError:
        return
    if names:
        with open(os.path.join(run_dir, f"shm.{os.getpid()}"), "w") as f:
            f.write("\n".join(sorted(names)))


# NOTE [Failing fast]
# MPICH's launcher stops the whole job only when a process ends *without* MPI_Finalize (or is
# killed); a rank that raises and then finalizes normally leaves the other ranks blocked in
# their next collective until its timeout. So once a process group spans several processes, an
# uncaught exception prints its traceback, records it for the launcher and leaves with
# os._exit(1), skipping MPI_Finalize: mpiexec then kills the other ranks within a second.
# The launcher's bootstrap does the same for a non-zero sys.exit (see _bootstrap.py).

def write_status(code: int, text: str) -> None:
    """Record this rank's failure for the launcher (which prints one line naming it)."""
    run_dir = os.environ.get("EMBER_RUN_DIR")
    if not run_dir or not os.path.isdir(run_dir):
        return
    rank = os.environ.get("PMI_RANK", os.environ.get("RANK", "?"))
    try:
        with open(os.path.join(run_dir, f"fail.{rank}"), "w") as f:
            f.write(f"{code}\n{text}")
    except OSError:
        pass


def fail_fast(code: int) -> None:
    """Leave at once without MPI_Finalize, so that mpiexec stops the other ranks."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def install_excepthook() -> None:
    """See NOTE [Failing fast]."""
    global _HOOKED
    if _HOOKED:
        return
    _HOOKED = True
    previous = sys.excepthook

    def hook(exc_type, exc, tb):
        previous(exc_type, exc, tb)
        if issubclass(exc_type, KeyboardInterrupt):
            code = 130
        else:
            code = 1
        write_status(code, "".join(traceback.format_exception(exc_type, exc, tb)))
        fail_fast(code)

    sys.excepthook = hook
