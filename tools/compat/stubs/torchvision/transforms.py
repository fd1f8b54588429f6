"""Transforms on uint8 HxW or HxWxC numpy images (what the stand-in data sets return) and on
CxHxW tensors."""
from __future__ import annotations

import numpy as np
import torch


class Compose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, x):
        for t in self.transforms:
            x = t(x)
        return x


class ToTensor:
    def __call__(self, image):
        if isinstance(image, torch.Tensor):     # after Resize, which returns a tensor
            return image
        a = np.asarray(image)
        if a.ndim == 2:
            a = a[:, :, None]
        return torch.from_numpy(np.ascontiguousarray(a.transpose(2, 0, 1))).float().div(255)


class Normalize:
    def __init__(self, mean, std, inplace=False):
        self.mean, self.std = mean, std

    def __call__(self, x):
        mean = torch.tensor(self.mean, dtype=x.dtype).view(-1, 1, 1)
        std = torch.tensor(self.std, dtype=x.dtype).view(-1, 1, 1)
        return (x - mean) / std


class Lambda:
    def __init__(self, fn):
        self.fn = fn

    def __call__(self, x):
        return self.fn(x)


class RandomHorizontalFlip:
    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, x):
        if float(torch.rand(1)) < self.p:
            return x.flip(-1) if isinstance(x, torch.Tensor) else np.ascontiguousarray(x[:, ::-1])
        return x


class Pad:
    def __init__(self, padding, fill=0):
        self.padding = padding

    def __call__(self, x):
        p = self.padding
        if isinstance(x, torch.Tensor):
            return torch.nn.functional.pad(x, (p, p, p, p))
        widths = ((p, p), (p, p)) + ((0, 0),) * (x.ndim - 2)
        return np.pad(x, widths)


class RandomCrop:
    def __init__(self, size, padding=None):
        self.size = size if isinstance(size, (tuple, list)) else (size, size)
        self.padding = padding

    def __call__(self, x):
        if self.padding:
            x = Pad(self.padding)(x)
        h, w = (x.shape[-2:] if isinstance(x, torch.Tensor) else x.shape[:2])
        i = int(torch.randint(0, h - self.size[0] + 1, (1,)))
        j = int(torch.randint(0, w - self.size[1] + 1, (1,)))
        if isinstance(x, torch.Tensor):
            return x[..., i:i + self.size[0], j:j + self.size[1]]
        return x[i:i + self.size[0], j:j + self.size[1]]


class Resize:
    def __init__(self, size, antialias=True):
        self.size = size if isinstance(size, (tuple, list)) else (size, size)

    def __call__(self, x):
        if not isinstance(x, torch.Tensor):
            x = ToTensor()(x)
        y = torch.nn.functional.interpolate(x.unsqueeze(0), size=tuple(self.size),
                                            mode="bilinear", align_corners=False)
        return y.squeeze(0)


class CenterCrop:
    def __init__(self, size):
        self.size = size if isinstance(size, (tuple, list)) else (size, size)

    def __call__(self, x):
        h, w = (x.shape[-2:] if isinstance(x, torch.Tensor) else x.shape[:2])
        i, j = (h - self.size[0]) // 2, (w - self.size[1]) // 2
        if isinstance(x, torch.Tensor):
            return x[..., i:i + self.size[0], j:j + self.size[1]]
        return x[i:i + self.size[0], j:j + self.size[1]]
