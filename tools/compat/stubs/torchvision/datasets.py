"""Image-classification data sets made from a fixed seed: each class has a prototype image and
a sample is its prototype, shifted by up to two pixels, plus noise. Learnable (so accuracy means
something) and identical under both implementations, because numpy draws it.

COMPAT_DATA_N sets the training-set size (default 2000; the test set is a quarter of it);
COMPAT_SEED (run.py --seed) draws other samples of the same classes."""
from __future__ import annotations

import os
import sys
import types
import warnings

import numpy as np
import torch


def _make(n, shape, classes, seed):
    rng = np.random.default_rng(1234)   # same prototypes for train and test
    protos = rng.random((classes,) + shape) ** 3
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, classes, n)
    images = protos[labels]
    shifts = rng.integers(-2, 3, (n, 2))
    for i in range(n):
        images[i] = np.roll(images[i], tuple(shifts[i]), axis=(0, 1))
    images = np.clip(images + 0.25 * rng.standard_normal(images.shape), 0.0, 1.0)
    return (images * 255).astype(np.uint8), labels


class _Generated(torch.utils.data.Dataset):
    shape: tuple = (28, 28)
    classes = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"]

    def __init__(self, root=None, train=True, transform=None, target_transform=None,
                 download=False):
        n = int(os.environ.get("COMPAT_DATA_N", "2000"))
        n = n if train else max(n // 4, 10)
        base = 10 * int(os.environ.get("COMPAT_SEED", "0") or 0)
        images, labels = _make(n, self.shape, len(self.classes), base + (1 if train else 2))
        self.data = torch.from_numpy(images)
        self.targets = torch.from_numpy(labels)
        self.transform = transform
        self.target_transform = target_transform
        self.root = root
        self.train = train

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, index):
        image = self.data[index].numpy()
        target = int(self.targets[index])
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return image, target


class MNIST(_Generated):
    # torchvision keeps the pre-0.2.2 names as warning properties; old tutorials use them
    @property
    def train_data(self):
        warnings.warn("train_data has been renamed data", stacklevel=2)
        return self.data

    @property
    def test_data(self):
        warnings.warn("test_data has been renamed data", stacklevel=2)
        return self.data

    @property
    def train_labels(self):
        warnings.warn("train_labels has been renamed targets", stacklevel=2)
        return self.targets

    @property
    def test_labels(self):
        warnings.warn("test_labels has been renamed targets", stacklevel=2)
        return self.targets


class FashionMNIST(_Generated):
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
               "Sneaker", "Bag", "Ankle boot"]


class CIFAR10(_Generated):
    shape = (32, 32, 3)
    classes = ["plane", "car", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]


class CIFAR100(_Generated):  # timm's dataset factory imports it (and KMNIST) at import time
    shape = (32, 32, 3)
    classes = [str(i) for i in range(100)]


class KMNIST(_Generated):
    classes = ["o", "ki", "su", "tsu", "na", "ha", "ma", "ya", "re", "wo"]


class ImageFolder(_Generated):
    shape = (64, 64, 3)
    classes = ["a", "b"]


class FakeData(torch.utils.data.Dataset):
    """torchvision's FakeData signature: ``size`` images of ``image_size`` (C, H, W) in
    ``num_classes`` classes, generated as the other sets are (uint8 H x W x C arrays)."""

    def __init__(self, size=1000, image_size=(3, 224, 224), num_classes=10, transform=None,
                 target_transform=None, random_offset=0):
        c, h, w = image_size
        base = 10 * int(os.environ.get("COMPAT_SEED", "0") or 0)
        images, labels = _make(size, (h, w, c), num_classes, base + 3 + random_offset)
        self.data, self.targets = images, labels
        self.transform, self.target_transform = transform, target_transform

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, index):
        image, target = self.data[index], int(self.targets[index])
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return image, target


# torchvision.datasets is a package whose data sets live in submodules named for them
# (`from torchvision.datasets.mnist import MNIST`); this stand-in is one module, so those
# submodules are made here and registered under their import paths
for _sub, _classes in (("mnist", (MNIST, FashionMNIST, KMNIST)), ("cifar", (CIFAR10, CIFAR100))):
    _module = types.ModuleType(f"{__name__}.{_sub}")
    for _cls in _classes:
        setattr(_module, _cls.__name__, _cls)
    sys.modules[_module.__name__] = _module
    globals()[_sub] = _module
