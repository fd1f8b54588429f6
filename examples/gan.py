"""A GAN in the structure of the paper's Listing 2, learning a 2-D mixture of 8 Gaussians.

    python examples/gan.py [--steps 3000] [--out gan.png]

Two models, two Adam optimizers, ``fake.detach()`` for the discriminator step; prints the
discriminator/generator losses and writes a PNG of real vs generated samples (matplotlib,
optional).
"""
from __future__ import annotations

import argparse
import math

import numpy as np

import ember as torch
from ember import nn, optim

BATCH, NOISE = 256, 8


def create_discriminator():
    return nn.Sequential(nn.Linear(2, 128), nn.LeakyReLU(0.2), nn.Linear(128, 128),
                         nn.LeakyReLU(0.2), nn.Linear(128, 1))


def create_generator():
    return nn.Sequential(nn.Linear(NOISE, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(),
                         nn.Linear(128, 2))


def real_batch(rng, n=BATCH):
    """Eight Gaussians on a circle of radius 2."""
    k = rng.integers(0, 8, n)
    centers = np.stack([2 * np.cos(k * math.pi / 4), 2 * np.sin(k * math.pi / 4)], 1)
    return torch.from_numpy((centers + 0.05 * rng.standard_normal((n, 2))).astype(np.float32))


def get_noise(n=BATCH):
    return torch.randn(n, NOISE)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--out", default="gan.png")
    ap.add_argument("--log-every", type=int, default=250)
    args = ap.parse_args(argv)
    torch.manual_seed(0)
    rng = np.random.default_rng(0)

    discriminator = create_discriminator()
    generator = create_generator()
    optimD = optim.Adam(discriminator.parameters(), lr=1e-3, betas=(0.5, 0.999))
    optimG = optim.Adam(generator.parameters(), lr=1e-3, betas=(0.5, 0.999))
    loss = nn.BCEWithLogitsLoss()
    real_label, fake_label = torch.ones(BATCH, 1), torch.zeros(BATCH, 1)

    def step(real_sample):
        # (1) Update Discriminator
        optimD.zero_grad()
        errD_real = loss(discriminator(real_sample), real_label)
        errD_real.backward()
        fake = generator(get_noise())
        errD_fake = loss(discriminator(fake.detach()), fake_label)
        errD_fake.backward()
        optimD.step()
        # (2) Update Generator
        optimG.zero_grad()
        errG = loss(discriminator(fake), real_label)
        errG.backward()
        optimG.step()
        return (errD_real + errD_fake).item(), errG.item()

    history = []
    for i in range(args.steps):
        d, g = step(real_batch(rng))
        history.append((d, g))
        if (i + 1) % args.log_every == 0:
            print(f"step {i + 1:5d}  loss_D {d:.4f}  loss_G {g:.4f}")
    with torch.no_grad():
        fake = generator(get_noise(2000)).numpy()
    real = real_batch(rng, 2000).numpy()
    # quality: mean distance from a generated point to the nearest mixture center
    centers = np.stack([2 * np.cos(np.arange(8) * math.pi / 4),
                        2 * np.sin(np.arange(8) * math.pi / 4)], 1)
    dist = np.sqrt(((fake[:, None] - centers[None]) ** 2).sum(-1)).min(1).mean()
    print(f"mean distance of generated samples to the nearest mode: {dist:.3f}")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(5, 5))
        ax.scatter(real[:, 0], real[:, 1], s=2, alpha=0.4, label="real")
        ax.scatter(fake[:, 0], fake[:, 1], s=2, alpha=0.4, label="generated")
        ax.legend()
        ax.set_title("ember GAN: 8 Gaussians")
        fig.savefig(args.out, dpi=100)
        print(f"wrote {args.out}")
    except ImportError:
        print("matplotlib not installed: no plot written")
    return history, dist


if __name__ == "__main__":
    main()
