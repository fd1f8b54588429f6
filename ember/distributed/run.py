"""``python -m ember.distributed.run`` (console script ``ember-run``): torchrun on MPICH.

Usage::

    python -m ember.distributed.run --nproc-per-node 2 train.py --epochs 3
    ember-run --nnodes 2 --nproc-per-node 4 --hostfile hosts train.py   # several machines

It takes torchrun's flags, starts ``nnodes * nproc_per_node`` ranks with MPICH's ``mpiexec``
and gives each torchrun's variables (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE,
GROUP_RANK, MASTER_ADDR, MASTER_PORT). If a rank raises, exits non-zero or is killed, the others
are stopped, a line names that rank with its exit code or signal and the first lines of its
error, and the launcher exits with 1 (after ``--max-restarts`` attempts to rerun the group).

Differs from torchrun: one launcher starts the ranks of every node, through MPICH's hosts file
(``--hostfile``, passed to ``mpiexec -f``); run on a node with ``--node-rank`` > 0 it only says
so and exits 0 (docs/DEVIATIONS.md).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid

_BANNER = re.compile(r"^(=+|=\s+.*|YOUR APPLICATION TERMINATED.*|This typically refers.*|"
                     r"Please see the FAQ.*)$")
_BANNER_PID = re.compile(r"PID (\d+) RUNNING AT")
_BANNER_CODE = re.compile(r"EXIT CODE: (\d+)")


def _parser():
    p = argparse.ArgumentParser(prog="ember-run", description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)

    def flag(name, **kw):
        names = [f"--{name}"]
        if "-" in name:
            names.append("--" + name.replace("-", "_"))
        p.add_argument(*names, **kw)

    flag("nnodes", default="1", help="number of nodes, or MIN:MAX (MAX is used)")
    flag("nproc-per-node", default="1", help="processes per node (an int, 'cpu' or 'auto')")
    flag("node-rank", type=int, default=0)
    flag("master-addr", default="127.0.0.1")
    flag("master-port", type=int, default=29500)
    flag("rdzv-endpoint", default="", help="HOST[:PORT]; sets MASTER_ADDR/MASTER_PORT")
    flag("rdzv-backend", default="static")
    flag("rdzv-id", default="none")
    flag("rdzv-conf", default="")
    flag("standalone", action="store_true", help="single node; a fresh local endpoint")
    flag("max-restarts", type=int, default=0, help="rerun the whole group this many times")
    flag("monitor-interval", type=float, default=0.1)
    flag("start-method", default="spawn")
    flag("role", default="default")
    flag("log-dir", default=None)
    flag("redirects", default="0")
    flag("tee", default="0")
    flag("local-addr", default=None)
    flag("run-path", action="store_true", help="accepted; scripts always run as paths")
    flag("no-python", action="store_true", help="run the script as an executable")
    p.add_argument("-m", "--module", action="store_true", help="run a module, as python -m")
    flag("hostfile", default=os.environ.get("EMBER_HOSTFILE"),
         help="MPICH hosts file (one 'host[:slots]' a line) for --nnodes > 1")
    flag("mpiexec", default=None, help="the mpiexec to use (default: the one next to python)")
    p.add_argument("training_script")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def _nproc(value: str) -> int:
    if value in ("cpu", "auto"):
        return os.cpu_count() or 1
    if value == "gpu":
        raise SystemExit("ember-run: --nproc-per-node gpu: ember runs on the CPU only.")
    return int(value)


def _mpiexec(explicit):
    if explicit:
        return explicit
    beside = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    found = beside if os.path.exists(beside) else shutil.which("mpiexec")
    if not found:
        raise SystemExit("ember-run: mpiexec was not found; pip install 'ember[distributed]' "
                         "(it brings MPICH's mpiexec) or pass --mpiexec.")
    return found


def _command(args, nnodes, per_node):
    cmd = [_mpiexec(args.mpiexec), "-n", str(nnodes * per_node)]
    if nnodes > 1:
        if not args.hostfile:
            raise SystemExit(f"ember-run: --nnodes {nnodes} needs MPICH's hosts file: pass "
                             f"--hostfile FILE (one host a line) and run ember-run once, on "
                             f"the first node.")
        cmd += ["-f", args.hostfile, "-ppn", str(per_node)]
    boot = [sys.executable, "-m", "ember.distributed._bootstrap"]
    if args.no_python:
        boot.append("--no-python")
    if args.module:
        boot.append("-m")
    return cmd + boot + [args.training_script, *args.training_script_args]


def _environment(args, run_dir, per_node, restart):
    env = dict(os.environ)
    addr, port = args.master_addr, args.master_port
    if args.rdzv_endpoint:
        host, _, p = args.rdzv_endpoint.partition(":")
        addr, port = host or addr, int(p or port)
    if args.standalone:
        addr, port = "localhost", 29400
    env.update(MASTER_ADDR=addr, MASTER_PORT=str(port), EMBER_RUN_DIR=run_dir,
               EMBER_NPROC_PER_NODE=str(per_node), TORCHELASTIC_RUN_ID=args.rdzv_id,
               TORCHELASTIC_RESTART_COUNT=str(restart),
               TORCHELASTIC_MAX_RESTARTS=str(args.max_restarts))
    # more processes than cores otherwise oversubscribe the BLAS/numba pools (torchrun does
    # the same and says so)
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


def _forward(stream, out, seen):
    """Copy mpiexec's stdout through, keeping its failure banner for our own report."""
    for raw in iter(stream.readline, b""):
        line = raw.decode(errors="replace").rstrip("\n")
        if _BANNER.match(line) or "BAD TERMINATION" in line:
            seen.append(line)
            continue
        out.write(raw)
        out.flush()


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def _pids(run_dir):
    pids = {}
    for name in os.listdir(run_dir):
        if name.startswith("pid."):
            text = _read(os.path.join(run_dir, name))
            if text and text.strip().isdigit():
                pids[int(name[4:])] = int(text)
    return pids


def _report(run_dir, returncode, banner):
    """One line naming the failed rank, its exit code or signal and its error's first lines."""
    failures = []
    for name in sorted(os.listdir(run_dir)):
        if name.startswith("fail."):
            code, _, text = (_read(os.path.join(run_dir, name)) or "1\n").partition("\n")
            failures.append((int(name[5:]), f"exit code {code}", text))
    if not failures:
        pid = next((int(m.group(1)) for line in banner if (m := _BANNER_PID.search(line))), None)
        code = next((int(m.group(1)) for line in banner if (m := _BANNER_CODE.search(line))),
                    returncode)
        ranks = {p: r for r, p in _pids(run_dir).items()}
        rank = ranks.get(pid, "?")
        how = (f"signal {code} ({signal.Signals(code).name})" if 0 < code < 32 and banner
               else f"exit code {code}")
        failures.append((rank, how, ""))
    for rank, how, text in failures[:1]:
        lines = [line for line in text.splitlines() if line.strip()][:6]
        detail = ("; its error:\n  " + "\n  ".join(lines)) if lines else ""
        print(f"ember-run: rank {rank} failed with {how}{detail}", file=sys.stderr, flush=True)


def _cleanup(run_dir):
    """Kill any rank still alive and remove MPICH's shared-memory segments of this job."""
    for pid in _pids(run_dir).values():
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    for name in os.listdir(run_dir):
        if name.startswith("shm."):
            for seg in (_read(os.path.join(run_dir, name)) or "").split():
                try:
                    os.unlink(seg)
                except OSError:
                    pass


def _attempt(args, cmd, env):
    """Run the group once; returns mpiexec's exit code."""
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, start_new_session=True)
    banner: list = []
    pump = threading.Thread(target=_forward, args=(proc.stdout, sys.stdout.buffer, banner),
                            daemon=True)
    pump.start()

    def stop(signum, frame):
        try:
            os.killpg(proc.pid, signal.SIGINT)
            time.sleep(1)
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    old = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        code = proc.wait()
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    pump.join(timeout=5)
    if code != 0:
        _report(env["EMBER_RUN_DIR"], code, banner)
    return code


def main(argv=None):
    args = _parser().parse_args(argv)
    nnodes = int(str(args.nnodes).split(":")[-1])
    per_node = _nproc(str(args.nproc_per_node))
    if args.node_rank > 0:
        print(f"ember-run: nothing to do on node {args.node_rank}: the launcher on node 0 "
              f"starts every node's ranks through MPICH's hosts file.", file=sys.stderr)
        return 0
    run_id = uuid.uuid4().hex[:8] if args.rdzv_id == "none" else args.rdzv_id
    code = 1
    for restart in range(args.max_restarts + 1):
        run_dir = tempfile.mkdtemp(prefix=f"ember-run-{run_id}-")
        try:
            env = _environment(args, run_dir, per_node, restart)
            code = _attempt(args, _command(args, nnodes, per_node), env)
        finally:
            _cleanup(run_dir)
            shutil.rmtree(run_dir, ignore_errors=True)
        if code == 0:
            return 0
        if restart < args.max_restarts:
            print(f"ember-run: restarting the group ({restart + 1}/{args.max_restarts})",
                  file=sys.stderr, flush=True)
    return 1


if __name__ == "__main__":
    sys.exit(main())
