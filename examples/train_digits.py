"""Train a small convnet on scikit-learn's bundled 8x8 digits (no download) with ember.

    python examples/train_digits.py [--epochs 12] [--batch-size 32] [--workers 0]
                                    [--checkpoint checkpoints/digits.ember] [--resume]

Uses a DataLoader, a tqdm progress bar, checkpoints every epoch with ember.save (model,
optimizer, scheduler, epoch) and --resume to continue. Reaches >= 97% test accuracy in well
under a minute on 2 cores.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

import ember as torch
from ember import nn
from ember.utils.data import DataLoader, TensorDataset


class DigitNet(nn.Module):
    """conv(1->16) -> conv(16->32) -> pool -> dropout -> fc(512->64) -> fc(64->10)."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.drop = nn.Dropout(0.25)
        self.fc1 = nn.Linear(32 * 4 * 4, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        x = self.pool(torch.relu(self.conv2(x)))
        x = self.drop(torch.flatten(x, 1))
        return self.fc2(torch.relu(self.fc1(x)))


def load_data(seed=0):
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None]  # N x 1 x 8 x 8 in [0, 1]
    y = digits.target.astype(np.int64)
    xtr, xte, ytr, yte = train_test_split(x, y, test_size=0.2, random_state=seed, stratify=y)
    return (TensorDataset(torch.from_numpy(xtr), torch.from_numpy(ytr)),
            TensorDataset(torch.from_numpy(xte), torch.from_numpy(yte)))


def evaluate(model, loader):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
            total += len(y)
    model.train()
    return correct / total


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--checkpoint", default="checkpoints/digits.ember")
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--max-steps", type=int, default=None, help="stop early (tests)")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    try:
        from tqdm import tqdm
    except ImportError:  # tqdm is an optional dependency: plain iteration without it
        def tqdm(it, **kw):
            return it

    torch.manual_seed(0)
    train_set, test_set = load_data()
    g = torch.Generator().manual_seed(0)
    train = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, generator=g,
                       num_workers=args.workers)
    test = DataLoader(test_set, batch_size=256)
    model = DigitNet()
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs)
    loss_fn = nn.CrossEntropyLoss()
    start = 0
    if args.resume and os.path.exists(args.checkpoint):
        ckpt = torch.load(args.checkpoint)
        model.load_state_dict(ckpt["model"])
        opt.load_state_dict(ckpt["optimizer"])
        sched.load_state_dict(ckpt["scheduler"])
        g.set_state(ckpt["generator"])
        start = ckpt["epoch"] + 1
        print(f"resumed from {args.checkpoint} at epoch {start}")
    t0 = time.time()
    losses, steps, acc = [], 0, 0.0
    for epoch in range(start, args.epochs):
        bar = tqdm(train, desc=f"epoch {epoch + 1}/{args.epochs}", disable=args.quiet,
                   leave=False)
        for x, y in bar:
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
            steps += 1
            if hasattr(bar, "set_postfix"):
                bar.set_postfix(loss=f"{loss.item():.3f}")
            if args.max_steps and steps >= args.max_steps:
                break
        sched.step()
        acc = evaluate(model, test)
        os.makedirs(os.path.dirname(args.checkpoint) or ".", exist_ok=True)
        torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(),
                    "scheduler": sched.state_dict(), "generator": g.get_state(),
                    "epoch": epoch}, args.checkpoint)
        print(f"epoch {epoch + 1:2d}  loss {np.mean(losses[-len(train):]):.4f}  "
              f"test accuracy {acc * 100:.2f}%  ({time.time() - t0:.1f}s)")
        if args.max_steps and steps >= args.max_steps:
            break
    return losses, acc


if __name__ == "__main__":
    _, final_acc = main()
    sys.exit(0 if final_acc >= 0.97 else 1)
