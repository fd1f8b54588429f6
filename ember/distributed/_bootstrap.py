"""What each rank runs under ``ember-run``: torchrun's variables, then the user's program.

``python -m ember.distributed._bootstrap [--no-python] (-m module | script) args...`` sets
RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK... from MPICH's PMI variables and runs
the program as ``__main__``. A failure (an uncaught exception or a non-zero ``sys.exit``) is
recorded for the launcher and ends the process without MPI_Finalize, so that mpiexec stops the
other ranks at once (see NOTE [Failing fast] in _mpi.py).
"""
from __future__ import annotations

import os
import runpy
import sys
import traceback

from . import _mpi


def _set_environment():
    rank = int(os.environ.get("PMI_RANK", "0"))
    size = int(os.environ.get("PMI_SIZE", "1"))
    per_node = int(os.environ.get("EMBER_NPROC_PER_NODE", size))
    local = {"RANK": rank, "WORLD_SIZE": size, "LOCAL_RANK": rank % per_node,
             "LOCAL_WORLD_SIZE": per_node, "GROUP_RANK": rank // per_node,
             "ROLE_RANK": rank, "ROLE_WORLD_SIZE": size, "GROUP_WORLD_SIZE": size // per_node,
             "ROLE_NAME": "default", "TORCHELASTIC_ERROR_FILE": ""}
    for key, value in local.items():
        os.environ[key] = str(value)
    run_dir = os.environ.get("EMBER_RUN_DIR")
    if run_dir and os.path.isdir(run_dir):
        with open(os.path.join(run_dir, f"pid.{rank}"), "w") as f:
            f.write(str(os.getpid()))
    return rank


def _user_frames(tb):
    """Skip the frames of this bootstrap and runpy, so the traceback starts in user code."""
    def ours(filename):
        return (filename.startswith("<frozen runpy")
                or os.path.abspath(filename) in (os.path.abspath(__file__),
                                                 os.path.abspath(runpy.__file__)))

    while tb is not None and ours(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    return tb


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)  # sys.exit("message") prints it and exits with 1
    return 1


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    _set_environment()
    if argv and argv[0] == "--no-python":
        os.execvp(argv[1], argv[1:])
    try:
        if argv[0] == "-m":
            sys.argv = [argv[1], *argv[2:]]
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = list(argv)
            sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
            runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as e:
        code = _exit_code(e)
        if code != 0:
            _mpi.write_status(code, f"the program called sys.exit({code})\n")
            _mpi.fail_fast(code)
    except BaseException as e:  # noqa: B036 -- KeyboardInterrupt also fails the rank
        tb = _user_frames(e.__traceback__)
        lines = traceback.format_exception(type(e), e, tb)
        sys.stderr.write("".join(lines))
        message = "".join(traceback.format_exception_only(type(e), e))
        code = 130 if isinstance(e, KeyboardInterrupt) else 1
        _mpi.write_status(code, message + "".join(lines))
        _mpi.fail_fast(code)


if __name__ == "__main__":
    main()
