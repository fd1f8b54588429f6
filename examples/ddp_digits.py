"""The digits convnet of train_digits.py, trained by DistributedDataParallel on N processes.

    python -m ember.distributed.run --nproc-per-node 2 examples/ddp_digits.py [--epochs 12]
    ember-run --nproc-per-node 2 examples/ddp_digits.py --sync-bn     # (after pip install)
    mpiexec -n 2 python examples/ddp_digits.py                        # plain MPICH works too

Each process trains on its share of every batch (DistributedSampler: the global batch of
--batch-size is split over the processes, so the run sees the same number of samples per step
as the single-process example), DDP averages the gradients, rank 0 saves a checkpoint each
epoch (the others wait at a barrier, then load it with map_location to check it) and reports
the test accuracy, which reaches train_digits.py's >= 97%.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

import ember as torch
import ember.distributed as dist
from ember import nn
from ember.nn.parallel import DistributedDataParallel as DDP
from ember.utils.data import DataLoader, DistributedSampler

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_digits import DigitNet, evaluate, load_data


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--batch-size", type=int, default=32, help="global batch (all processes)")
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--sync-bn", action="store_true", help="BatchNorm statistics over all "
                                                           "processes (SyncBatchNorm)")
    ap.add_argument("--checkpoint", default="checkpoints/ddp_digits.ember")
    args = ap.parse_args(argv)

    dist.init_process_group("gloo")  # RANK/WORLD_SIZE come from the launcher (or MPI)
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)  # the same initial weights everywhere (DDP also broadcasts rank 0's)
    train_set, test_set = load_data()
    sampler = DistributedSampler(train_set, shuffle=True, seed=0)  # rank, world from the group
    train = DataLoader(train_set, batch_size=max(args.batch_size // world, 1), sampler=sampler)
    test = DataLoader(test_set, batch_size=256)
    model = DigitNet()
    if args.sync_bn:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    ddp = DDP(model)
    opt = torch.optim.Adam(ddp.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs)
    loss_fn = nn.CrossEntropyLoss()
    t0 = time.time()
    acc = 0.0
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)  # a new shuffle each epoch, the same on every process
        losses = []
        for x, y in train:
            opt.zero_grad()
            loss = loss_fn(ddp(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        sched.step()
        # checkpoint pattern: rank 0 writes, everyone waits, everyone can read it back
        if rank == 0:
            os.makedirs(os.path.dirname(args.checkpoint) or ".", exist_ok=True)
            torch.save({"model": ddp.module.state_dict(), "optimizer": opt.state_dict(),
                        "epoch": epoch}, args.checkpoint)
        dist.barrier()
        state = torch.load(args.checkpoint, map_location="cpu")
        assert state["epoch"] == epoch
        acc = evaluate(ddp.module, test)
        if rank == 0:
            print(f"epoch {epoch + 1:2d}  loss {np.mean(losses):.4f}  test accuracy "
                  f"{acc * 100:.2f}%  ({time.time() - t0:.1f}s, {world} processes)", flush=True)
        dist.barrier()  # nobody overwrites the checkpoint while another rank still reads it
    dist.destroy_process_group()
    return acc


if __name__ == "__main__":
    final_acc = main()
    sys.exit(0 if final_acc >= 0.97 else 1)
