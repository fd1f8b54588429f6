"""Transforms on uint8 HxW or HxWxC numpy images (what the stand-in data sets return) and on
CxHxW tensors."""
from __future__ import annotations

import enum
import sys
import types

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


class Normalize(torch.nn.Module):
    # torchvision's tensor transforms are nn.Modules (vit-pytorch's DINO puts them in a
    # Sequential); mean/std may be tensors
    def __init__(self, mean, std, inplace=False):
        super().__init__()
        self.mean, self.std = mean, std

    def forward(self, x):
        mean = torch.as_tensor(self.mean, dtype=x.dtype).view(-1, 1, 1)
        std = torch.as_tensor(self.std, dtype=x.dtype).view(-1, 1, 1)
        return (x - mean) / std


class Lambda:
    def __init__(self, fn):
        self.fn = fn

    def __call__(self, x):
        return self.fn(x)


class RandomHorizontalFlip(torch.nn.Module):
    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, x):
        if float(torch.rand(1)) < self.p:
            if isinstance(x, torch.Tensor):
                return x.flip(-1)
            if _is_pil(x):   # a PIL image stays one (FLIP_LEFT_RIGHT is transpose method 0)
                return x.transpose(0)
            return np.ascontiguousarray(x[:, ::-1])
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


def _is_pil(x):
    return hasattr(x, "convert") and hasattr(x, "crop")


class Resize:
    # a PIL image stays one (CLIP's preprocessing converts it to RGB after the crop), its
    # smaller edge resized to an int size as torchvision does; arrays and tensors go through
    # interpolate to (size, size)
    def __init__(self, size, interpolation=None, max_size=None, antialias=True):
        self.size = size if isinstance(size, (tuple, list)) else (size, size)
        self.edge = None if isinstance(size, (tuple, list)) else size
        self.interpolation = interpolation

    def __call__(self, x):
        if _is_pil(x):
            from PIL import Image
            w, h = x.size
            if self.edge is None:
                h, w = self.size
            elif w < h:
                w, h = self.edge, int(self.edge * h / w)
            else:
                w, h = int(self.edge * w / h), self.edge
            mode = getattr(self.interpolation, "name", None) or "BILINEAR"
            return x.resize((w, h), getattr(Image.Resampling, mode, Image.Resampling.BILINEAR))
        if not isinstance(x, torch.Tensor):
            x = ToTensor()(x)
        y = torch.nn.functional.interpolate(x.unsqueeze(0), size=tuple(self.size),
                                            mode="bilinear", align_corners=False)
        return y.squeeze(0)


class CenterCrop:
    def __init__(self, size):
        self.size = size if isinstance(size, (tuple, list)) else (size, size)

    def __call__(self, x):
        if _is_pil(x):   # super_resolution's data set reads files, CLIP's README opens one
            w, h = x.size
            i, j = int(round((h - self.size[0]) / 2)), int(round((w - self.size[1]) / 2))
            return x.crop((j, i, j + self.size[1], i + self.size[0]))
        h, w = (x.shape[-2:] if isinstance(x, torch.Tensor) else x.shape[:2])
        i, j = (h - self.size[0]) // 2, (w - self.size[1]) // 2
        if isinstance(x, torch.Tensor):
            return x[..., i:i + self.size[0], j:j + self.size[1]]
        return x[i:i + self.size[0], j:j + self.size[1]]


# Batch-level augmentations on (..., C, H, W) tensors, as nn.Modules: one random draw per call
# (torchvision draws once per call too, for the whole batch). Enough for BYOL/DINO pipelines.
class ColorJitter(torch.nn.Module):
    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        super().__init__()
        self.b, self.c, self.s = brightness, contrast, saturation

    def forward(self, x):
        def factor(v):
            return 1.0 + (float(torch.rand(1)) * 2 - 1) * v
        x = x * factor(self.b)
        mean = x.mean(dim=(-3, -2, -1), keepdim=True)
        x = (x - mean) * factor(self.c) + mean
        gray = x.mean(dim=-3, keepdim=True)
        return ((x - gray) * factor(self.s) + gray).clamp(0, 1)


class RandomGrayscale(torch.nn.Module):
    def __init__(self, p=0.1):
        super().__init__()
        self.p = p

    def forward(self, x):
        if float(torch.rand(1)) < self.p:
            return x.mean(dim=-3, keepdim=True).expand_as(x)
        return x


class Grayscale(torch.nn.Module):
    """Luma (ITU-R 601-2 weights, as PIL's convert("L")) of an HxWxC uint8 image (an HxW uint8
    image back) or of a CxHxW tensor (1 or num_output_channels channels)."""

    def __init__(self, num_output_channels=1):
        super().__init__()
        self.num_output_channels = num_output_channels

    def forward(self, x):
        if isinstance(x, torch.Tensor):
            w = torch.tensor([0.2989, 0.587, 0.114], dtype=x.dtype).view(3, 1, 1)
            gray = (x * w).sum(dim=-3, keepdim=True)
            return gray.expand(*x.shape[:-3], self.num_output_channels, *x.shape[-2:])
        a = np.asarray(x).astype(np.float64)
        if a.ndim == 2:
            return np.asarray(x)
        gray = np.rint(a[..., :3] @ np.array([0.299, 0.587, 0.114])).astype(np.uint8)
        if self.num_output_channels == 1:
            return gray
        return np.repeat(gray[:, :, None], self.num_output_channels, axis=2)


class GaussianBlur(torch.nn.Module):
    def __init__(self, kernel_size, sigma=(0.1, 2.0)):
        super().__init__()
        self.k = kernel_size if isinstance(kernel_size, (tuple, list)) else (kernel_size,) * 2
        self.sigma = sigma if isinstance(sigma, (tuple, list)) else (sigma, sigma)

    def forward(self, x):
        lo, hi = self.sigma
        s = lo + float(torch.rand(1)) * (hi - lo)
        kh, kw = self.k
        gh = torch.exp(-(torch.arange(kh, dtype=x.dtype) - (kh - 1) / 2) ** 2 / (2 * s * s))
        gw = torch.exp(-(torch.arange(kw, dtype=x.dtype) - (kw - 1) / 2) ** 2 / (2 * s * s))
        k2 = (gh[:, None] * gw[None, :]) / (gh.sum() * gw.sum())
        c = x.shape[-3]
        y = x.reshape(-1, c, *x.shape[-2:])
        y = torch.nn.functional.pad(y, (kw // 2, kw // 2, kh // 2, kh // 2), mode="reflect")
        y = torch.nn.functional.conv2d(y, k2.expand(c, 1, kh, kw), groups=c)
        return y.reshape(x.shape)


class RandomResizedCrop(torch.nn.Module):
    def __init__(self, size, scale=(0.08, 1.0), ratio=(3 / 4, 4 / 3), antialias=True):
        super().__init__()
        self.size = size if isinstance(size, (tuple, list)) else (size, size)
        self.scale = scale

    def forward(self, x):
        h, w = x.shape[-2:]
        frac = self.scale[0] + float(torch.rand(1)) * (self.scale[1] - self.scale[0])
        ch, cw = max(1, int(h * frac ** 0.5)), max(1, int(w * frac ** 0.5))
        i = int(torch.randint(0, h - ch + 1, (1,)))
        j = int(torch.randint(0, w - cw + 1, (1,)))
        crop = x[..., i:i + ch, j:j + cw]
        flat = crop.reshape(-1, *crop.shape[-3:])
        out = torch.nn.functional.interpolate(flat, size=tuple(self.size), mode="bilinear",
                                              align_corners=False)
        return out.reshape(*crop.shape[:-2], *self.size)


class InterpolationMode(enum.Enum):
    """Interpolation names (transformers' image utilities import them at import time)."""

    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


def _pil_to_tensor(pic):
    """A PIL image as a uint8 CxHxW tensor."""
    a = np.array(pic, dtype=np.uint8)
    return torch.from_numpy(a[:, :, None] if a.ndim == 2 else a).permute(2, 0, 1).contiguous()


# torchvision.transforms is a package in torchvision; this stand-in is one module, so its
# `functional` submodule is made here and registered under its import path
functional = types.ModuleType(__name__ + ".functional")
functional.pil_to_tensor = _pil_to_tensor
functional.InterpolationMode = InterpolationMode
sys.modules[functional.__name__] = functional
# transformers' image_processing_utils imports `torchvision.transforms.v2.functional` at import
# time (the Trainer imports it): the same functions under the v2 path
v2 = types.ModuleType(__name__ + ".v2")
v2.functional = functional
v2.InterpolationMode = InterpolationMode
sys.modules[v2.__name__] = v2
sys.modules[v2.__name__ + ".functional"] = functional
