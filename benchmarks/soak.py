"""Soak test: a long training run that must not leak (issue 20).

    python benchmarks/soak.py [--steps 10000] [--ckpt-every 1000] [--batch 4096] [--workers 2]
                              [--sample-every 100] [--sharing-strategy file_descriptor]
                              [--persistent-workers] [--json out.json]

Trains the NCF workload of /work/shared/bench/SPEC.md (examples/models/table1.py: NeuMF, Adam,
BCE-with-logits) on batches served by a DataLoader with worker processes (a new set of workers
every epoch of 64 batches unless --persistent-workers), writes a checkpoint every
``--ckpt-every`` steps and reloads it at once, comparing every tensor bit for bit with the live
model and optimizer. Every ``--sample-every`` steps it records this process's resident memory,
its open file descriptors, the ember entries in the shared-memory directory and the live child
processes. At the end it prints the resident-memory slope over the second half of the run
(least squares, KB per 1000 steps), the change in descriptors and /dev/shm entries between the
first sample after warm-up and the end, and what is left once the loader is gone (children,
descriptors, shared-memory entries). Exit status 1 when a checkpoint does not reload bit-exact
or something is left behind; the memory slope is reported, not judged (the machine is shared).
"""
from __future__ import annotations

import argparse
import gc
import json
import multiprocessing
import os
import shutil
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import ember  # noqa: E402
from ember.multiprocessing import _shm  # noqa: E402
from ember.utils.data import DataLoader, Dataset  # noqa: E402
from examples.models.table1 import _ncf_module  # noqa: E402

POOL = 64  # SPEC: NCF cycles through a pool of 64 batches


class NCFBatches(Dataset):
    """Batch k of SPEC's NCF pool, generated from its index (the same in every worker)."""

    def __init__(self, batch):
        self.batch = batch

    def __len__(self):
        return POOL

    def __getitem__(self, k):
        rng = np.random.default_rng(k)
        user = rng.integers(0, 10000, self.batch).astype(np.int64)
        item = rng.integers(0, 10000, self.batch).astype(np.int64)
        label = rng.integers(0, 2, self.batch).astype(np.float32)
        return ember.from_numpy(user), ember.from_numpy(item), ember.from_numpy(label)


def _rss_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def _fds():
    return len(_fd_targets())


def _fd_targets():
    out = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            out[fd] = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # the descriptor listdir itself used
            pass
    return out


def _shm_entries():
    directory = _shm.shm_dir()
    try:
        return sorted(n for n in os.listdir(directory) if n.startswith("ember"))
    except OSError:
        return []


def _children():
    """Live child processes of this process (from /proc, zombies included)."""
    me = str(os.getpid())
    kids = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me:
            kids.append(int(pid))
    return kids


def _state_arrays(model, opt):
    """Every tensor of the model and optimizer state, by name, as NumPy arrays."""
    out = {f"model.{k}": v.numpy() for k, v in model.state_dict().items()}
    for pid, st in opt.state_dict()["state"].items():
        for k, v in st.items():
            out[f"opt.{pid}.{k}"] = v.numpy() if isinstance(v, ember.Tensor) else np.asarray(v)
    return out


def _checkpoint(path, model, opt, step):
    ember.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "step": step}, path)
    loaded = ember.load(path)
    fresh = _ncf_module(ember)()
    fresh.load_state_dict(loaded["model"])
    fresh_opt = ember.optim.Adam(fresh.parameters(), lr=1e-3)
    fresh_opt.load_state_dict(loaded["optimizer"])
    live, back = _state_arrays(model, opt), _state_arrays(fresh, fresh_opt)
    exact = live.keys() == back.keys() and all(
        live[k].dtype == back[k].dtype and live[k].shape == back[k].shape
        and live[k].tobytes() == back[k].tobytes() for k in live)
    return exact and loaded["step"] == step


def _slope_kb_per_1000(samples):
    """Least-squares slope of RSS over the second half of the samples, KB per 1000 steps."""
    half = samples[len(samples) // 2:]
    if len(half) < 2:
        return float("nan")
    steps = np.array([s["step"] for s in half], float)
    rss = np.array([s["rss_kb"] for s in half], float)
    return float(np.polyfit(steps, rss, 1)[0] * 1000)


def run(args):
    ember.manual_seed(0)
    ember.multiprocessing.set_sharing_strategy(args.sharing_strategy)
    model = _ncf_module(ember)()
    opt = ember.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = ember.nn.BCEWithLogitsLoss()
    dataset = NCFBatches(args.batch)
    tmp = tempfile.mkdtemp(prefix="ember_soak_")

    def train_step(user, item, label):
        opt.zero_grad()
        loss = loss_fn(model(user, item), label)
        loss.backward()
        opt.step()
        return loss

    # warm-up outside the loop (one step and one checkpoint), so that descriptors and memory
    # the process opens once (libraries, caches) are in the baseline
    train_step(*dataset[0])
    _checkpoint(os.path.join(tmp, "warmup.pt"), model, opt, 0)
    os.remove(os.path.join(tmp, "warmup.pt"))
    gc.collect()
    loader = DataLoader(dataset, batch_size=None, shuffle=True,
                        num_workers=args.workers, persistent_workers=args.persistent_workers)
    samples, checkpoints = [], []
    shm_before = set(_shm_entries())
    fds_before = _fd_targets()
    step, start = 0, time.perf_counter()
    try:
        while step < args.steps:
            for user, item, label in loader:
                loss = train_step(user, item, label)
                step += 1
                if step % args.sample_every == 0:
                    samples.append({"step": step, "rss_kb": _rss_kb(), "fds": _fds(),
                                    "shm": len(_shm_entries()), "children": len(_children()),
                                    "loss": float(loss), "s": time.perf_counter() - start})
                if step % args.ckpt_every == 0:
                    path = os.path.join(tmp, f"step{step}.pt")
                    checkpoints.append({"step": step, "exact": _checkpoint(path, model, opt,
                                                                          step)})
                    os.remove(path)
                if step >= args.steps:
                    break
        # the last batch (its tensors live in shared memory) and the loader go
        user = item = label = loss = loader = None
        gc.collect()
        deadline = time.monotonic() + 10
        while _children() and time.monotonic() < deadline:  # workers being reaped
            time.sleep(0.05)
        _shm.wait_pins_released(10)
        gc.collect()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    fds_after = _fd_targets()
    after = {"children": _children(), "fds_delta": len(fds_after) - len(fds_before),
             "fds_new": sorted(v for k, v in fds_after.items() if fds_before.get(k) != v),
             "shm_left": sorted(set(_shm_entries()) - shm_before),
             "active_children": len(multiprocessing.active_children())}
    warm = samples[min(1, len(samples) - 1)] if samples else {"fds": 0, "shm": 0}
    return {
        "command": " ".join([os.path.basename(sys.executable)] + sys.argv),
        "steps": step, "seconds": time.perf_counter() - start,
        "rss_slope_kb_per_1000_steps": _slope_kb_per_1000(samples),
        "rss_kb_first_last": [samples[0]["rss_kb"], samples[-1]["rss_kb"]] if samples else [],
        "fds_drift_during_run": (samples[-1]["fds"] - warm["fds"]) if samples else 0,
        "shm_drift_during_run": (samples[-1]["shm"] - warm["shm"]) if samples else 0,
        "max_children_during_run": max((s["children"] for s in samples), default=0),
        "checkpoints": checkpoints, "after": after, "samples": samples,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=10_000)
    ap.add_argument("--ckpt-every", type=int, default=1000)
    ap.add_argument("--sample-every", type=int, default=100)
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--sharing-strategy", default="file_descriptor",
                    choices=["file_descriptor", "file_system"])
    ap.add_argument("--persistent-workers", action="store_true")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    # a private shared-memory directory: entries other processes create in /dev/shm while the
    # soak runs are not counted, and what this run leaves behind is found by name
    shm = tempfile.mkdtemp(prefix="ember_soak_shm_", dir=_shm.shm_dir())
    os.environ[_shm.SHM_DIR_ENV] = shm
    try:
        res = run(args)
    finally:
        left = os.listdir(shm)
        shutil.rmtree(shm, ignore_errors=True)
    res["after"]["shm_dir_left"] = left
    ok = (all(c["exact"] for c in res["checkpoints"]) and not res["after"]["children"]
          and not res["after"]["shm_left"] and not res["after"]["shm_dir_left"]
          and res["after"]["fds_delta"] <= 0)
    print(f"steps {res['steps']} in {res['seconds']:.0f} s; RSS {res['rss_kb_first_last']} KB, "
          f"slope over the second half {res['rss_slope_kb_per_1000_steps']:+.1f} KB/1000 steps")
    print(f"during the run: fds drift {res['fds_drift_during_run']:+d}, /dev/shm entries drift "
          f"{res['shm_drift_during_run']:+d}, at most {res['max_children_during_run']} children")
    print(f"checkpoints reloaded bit-exact: "
          f"{sum(c['exact'] for c in res['checkpoints'])}/{len(res['checkpoints'])}")
    print(f"after the loader: children {res['after']['children']}, fds delta "
          f"{res['after']['fds_delta']:+d} {res['after']['fds_new']}, shm entries left "
          f"{res['after']['shm_left'] + res['after']['shm_dir_left']}")
    print("OK" if ok else "LEAK OR MISMATCH")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
