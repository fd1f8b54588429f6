"""ember.distributed, DistributedDataParallel and the launcher, on 2 MPI processes.

Each test starts ``python -m ember.distributed.run`` on a worker script in workers/, which
checks its results against NumPy (or a single-process run) on every rank and fails the rank on
any mismatch. Launches are few (they dominate the time) and each has a hard timeout; afterwards
no rank process and no MPICH shared-memory segment may remain.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from ember.distributed import _mpi

pytestmark = pytest.mark.skipif(_mpi.unavailable_reason() is not None,
                                reason=f"ember.distributed unavailable: "
                                       f"{_mpi.unavailable_reason()}")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LAUNCH_TIMEOUT_S = 240


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([ROOT, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["OMP_NUM_THREADS"] = "1"
    return env


def _launch(script, *args, launcher_args=("--nproc-per-node", "2")):
    cmd = [sys.executable, "-m", "ember.distributed.run", *launcher_args,
           os.path.join(HERE, "workers", script), *args]
    return subprocess.Popen(cmd, env=_env(), cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def _finish(proc):
    try:
        out, err = proc.communicate(timeout=LAUNCH_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        out, err = proc.communicate()
        pytest.fail(f"launcher still running after {LAUNCH_TIMEOUT_S} s:\n{out}\n{err}")
    return proc.returncode, out, err, time.time()


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _assert_nothing_left(info_dir):
    """No rank process alive and none of the ranks' /dev/shm segments left."""
    for name in os.listdir(info_dir):
        if not name.startswith("rank"):
            continue
        pid, *segments = open(os.path.join(info_dir, name)).read().split("\n")
        assert not _alive(int(pid)), f"{name}: process {pid} is still running"
        for seg in segments:
            assert not os.path.exists(seg), f"{name}: {seg} was left behind"


def test_collectives_on_every_dtype_match_numpy():
    code, out, err, _ = _finish(_launch("collectives.py"))
    assert code == 0, err[-3000:]
    assert "rank 0: collectives OK" in out and "rank 1: collectives OK" in out, out


def test_ddp_and_sync_batchnorm_match_one_process():
    code, out, err, _ = _finish(_launch("ddp.py"))
    assert code == 0, err[-3000:]
    assert "rank 0: ddp OK" in out and "rank 1: ddp OK" in out, out


def test_launcher_failures_restarts_and_nodes(tmp_path):
    """Rank 1 raises / exits with 3 / is SIGKILLed: the launcher exits 1 within 10 s of it,
    naming rank 1 and its error; --max-restarts reruns a failed group; --nnodes 2 runs with
    one process per 'node' (localhost and 127.0.0.1 in an MPICH hosts file)."""
    hosts = tmp_path / "hosts"
    hosts.write_text("localhost:1\n127.0.0.1:1\n")
    cases = {
        "raise": ((), "rank 1 failed with exit code 1; its error:\n  ValueError: rank 1 gives "
                      "up on purpose"),
        "exit3": ((), "rank 1 failed with exit code 3"),
        "kill": ((), "rank 1 failed with signal 9 (SIGKILL)"),
        "flaky": (("--max-restarts", "1"), "restarting the group (1/1)"),
        "ok": (("--nnodes", "2", "--hostfile", str(hosts)), None),
    }
    procs = {}
    for mode, (extra, _) in cases.items():
        info = tmp_path / mode
        info.mkdir()
        args = ("--nproc-per-node", str(1 if mode == "ok" else 2), *extra)
        procs[mode] = (_launch("fail.py", mode, str(info), launcher_args=args), info)
    for mode, (proc, info) in procs.items():
        code, out, err, ended = _finish(proc)
        expected = cases[mode][1]
        if mode in ("ok", "flaky"):
            assert code == 0, err[-3000:]
            assert "rank 0" in out and "rank 1" in out, out
        else:
            assert code == 1, (mode, code, err[-3000:])
            failed_at = float((info / "failed_at").read_text())
            assert ended - failed_at < 10.0, f"{mode}: launcher took {ended - failed_at:.1f} s"
        if expected is not None:
            assert expected in err, (mode, err[-3000:])
        _assert_nothing_left(str(info))
