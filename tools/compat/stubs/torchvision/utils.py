"""save_image writes the grid as a .npy next to the requested path (no image codecs needed)."""
from __future__ import annotations

import numpy as np
import torch


def make_grid(tensor, nrow=8, padding=2, normalize=False, **kwargs):
    if isinstance(tensor, (list, tuple)):
        tensor = torch.stack(list(tensor))
    if tensor.dim() == 3:
        tensor = tensor.unsqueeze(0)
    n, c, h, w = tensor.shape
    ncol = min(nrow, n)
    nrows = (n + ncol - 1) // ncol
    grid = torch.zeros(c, nrows * (h + padding) + padding, ncol * (w + padding) + padding)
    for k in range(n):
        r, q = divmod(k, ncol)
        top, left = r * (h + padding) + padding, q * (w + padding) + padding
        grid[:, top:top + h, left:left + w] = tensor[k].detach().float()
    return grid


def save_image(tensor, fp, nrow=8, padding=2, **kwargs):
    grid = make_grid(tensor, nrow=nrow, padding=padding)
    np.save(str(fp) + ".npy", grid.numpy())
