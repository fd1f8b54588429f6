"""Run by test_distributed.py under the launcher: ``fail.py MODE INFO_DIR``.

Every rank records its pid and MPICH's shared-memory segments in INFO_DIR; then, by MODE,
rank 1 raises, exits with 3, is killed by SIGKILL, fails only on the first attempt ("flaky"),
or nothing fails ("ok", which also checks the launcher's variables). Rank 0 meanwhile keeps
calling all_reduce, so it hangs unless the launcher stops it.
"""
from __future__ import annotations

import os
import signal
import sys
import time

import ember
import ember.distributed as dist


def main(mode, info):
    dist.init_process_group("gloo")
    me = dist.get_rank()
    with open(os.path.join(info, f"rank{me}.{os.environ['TORCHELASTIC_RESTART_COUNT']}"),
              "w") as f:
        segments = [line.split()[-1] for line in open("/proc/self/maps")
                    if "/dev/shm/mpich" in line]
        f.write("\n".join([str(os.getpid()), *sorted(set(segments))]))
    if mode == "ok":
        expect = {"RANK": me, "WORLD_SIZE": 2, "LOCAL_RANK": 0, "LOCAL_WORLD_SIZE": 1,
                  "GROUP_RANK": me}
        for key, value in expect.items():
            assert os.environ[key] == str(value), (key, os.environ[key], value)
        assert os.environ["MASTER_ADDR"] and os.environ["MASTER_PORT"]
    t = ember.ones(3)
    dist.all_reduce(t)
    assert t.tolist() == [2.0, 2.0, 2.0]
    failing = me == 1 and (mode != "flaky" or os.environ["TORCHELASTIC_RESTART_COUNT"] == "0")
    if failing and mode != "ok":
        with open(os.path.join(info, "failed_at"), "w") as f:
            f.write(repr(time.time()))
        if mode in ("raise", "flaky"):
            raise ValueError("rank 1 gives up on purpose")
        if mode == "exit3":
            sys.exit(3)
        if mode == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
    if me == 0 and mode not in ("ok", "flaky"):
        while True:  # without the launcher stopping it, rank 0 would wait here forever
            dist.all_reduce(t)
    dist.barrier()
    dist.destroy_process_group()
    print(f"rank {me}: {mode} done", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
