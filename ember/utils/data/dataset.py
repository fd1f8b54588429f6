"""Datasets: map-style (``__getitem__`` + ``__len__``, a possibly lazy list) and iterable-style.

Example:
    >>> import ember
    >>> from ember.utils.data import TensorDataset, random_split
    >>> ds = TensorDataset(ember.arange(10.0), ember.arange(10))
    >>> len(ds), ds[3]
    (10, (tensor(3.), tensor(3)))
    >>> [len(s) for s in random_split(ds, [0.7, 0.3], generator=ember.Generator().manual_seed(0))]
    [7, 3]
"""
from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Iterable
from typing import Generic, TypeVar

from ..._tensor import Tensor

__all__ = [
    "ChainDataset",
    "ConcatDataset",
    "Dataset",
    "IterableDataset",
    "StackDataset",
    "Subset",
    "TensorDataset",
    "random_split",
]

# NOTE [Generic data classes]: as in torch, Dataset, IterableDataset, Subset, ConcatDataset,
# StackDataset, Sampler, DistributedSampler and DataLoader are Generic over their item type, so
# annotations such as `Sampler[List[int]]` work in class bases (timm subclasses
# `Sampler[List[Tuple[Any, int]]]`). The parameter only types; nothing checks it.
T_co = TypeVar("T_co", covariant=True)


class Dataset(Generic[T_co]):
    """A map-style dataset: subclasses implement ``__getitem__`` (and usually ``__len__``).

    ``a + b`` concatenates two datasets (a ``ConcatDataset``).
    """

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co], Iterable[T_co]):
    """A dataset that is a stream: subclasses implement ``__iter__``.

    With ``num_workers > 0`` every worker iterates its own copy; split the stream with
    ``ember.utils.data.get_worker_info()`` inside ``__iter__`` to avoid duplicates.
    ``a + b`` chains two iterable datasets (a ``ChainDataset``).
    """

    # (no __iter__: as torch's, the class is an abc Iterable, so a subclass without one
    # cannot be made: TypeError "Can't instantiate abstract class")

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Samples are ``tuple(t[i] for t in tensors)``; all tensors share their first dimension."""

    def __init__(self, *tensors):
        for i, t in enumerate(tensors):
            if not isinstance(t, Tensor):
                raise TypeError(f"TensorDataset: argument {i} is a {type(t).__name__}, "
                                "expected a Tensor")
            if t.dim() == 0:   # (IndexError, as torch's t.size(0))
                raise IndexError(f"TensorDataset: tensor {i} is 0-d; expected tensors with a "
                                 "first (sample) dimension")
        # (AssertionError for torch's assert, here and in the other datasets' checks)
        sizes = [t.shape[0] for t in tensors]
        if any(s != sizes[0] for s in sizes):
            raise AssertionError(f"Size mismatch between tensors: first dimensions are "
                                 f"{sizes}, expected all equal")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        if not self.tensors:   # (IndexError, as torch's tensors[0])
            raise IndexError("TensorDataset: made of no tensors, so it has no length")
        return self.tensors[0].shape[0]


class StackDataset(Dataset[T_co]):
    """Samples combine datasets of equal length: a tuple (``*args``) or a dict (``**kwargs``)."""

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via "
                             "``kwargs``) like input/output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        datasets = args or tuple(kwargs.values())
        lengths = [len(d) for d in datasets]
        if any(n != lengths[0] for n in lengths):
            raise ValueError(f"Size mismatch between datasets: lengths {lengths}")
        self._length = lengths[0]
        self.datasets = args if args else kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices):
        return [self[i] for i in indices]

    def __len__(self):
        return self._length


class ConcatDataset(Dataset[T_co]):
    """The concatenation of map-style datasets; ``cumulative_sizes`` holds the end offsets."""

    @staticmethod
    def cumsum(sequence):
        return list(itertools.accumulate(len(e) for e in sequence))

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("ConcatDataset: datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset; chain "
                                     "iterable datasets with ChainDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        n = len(self)
        if idx < 0:
            if -idx > n:
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = n + idx
        if idx >= n:
            raise IndexError(f"ConcatDataset: index {idx} is out of range for a dataset of "
                             f"length {n}")
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which > 0 else 0
        return self.datasets[which][idx - start]


class ChainDataset(IterableDataset):
    """Iterable datasets one after the other (lazily)."""

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset; got "
                                     f"{type(d).__name__}")
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset; got "
                                     f"{type(d).__name__}")
            total += len(d)
        return total


class Subset(Dataset[T_co]):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        items = getattr(self.dataset, "__getitems__", None)
        if callable(items):
            return items([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """Split ``dataset`` into non-overlapping random subsets of the given lengths.

    ``lengths`` are counts summing to ``len(dataset)`` or fractions summing to 1 (the remainder
    of the floors goes round-robin to the first subsets, as in torch).
    """
    from ... import randperm
    n = len(dataset)
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        counts = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            counts.append(math.floor(n * frac))
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        for i, c in enumerate(counts):
            if c == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an "
                              "empty dataset.", stacklevel=2)
        lengths = counts
    # the sum first, as torch: lengths that are neither fractions of 1 nor counts of n
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset! "
                         f"(random_split: got lengths {lengths} for a dataset of {n})")
    if any(not float(n_).is_integer() or n_ < 0 for n_ in lengths):
        raise ValueError(f"random_split: lengths must be non-negative integers or fractions "
                         f"summing to 1; got {lengths}")
    lengths = [int(n_) for n_ in lengths]
    indices = randperm(n, generator=generator).tolist()
    out, offset = [], 0
    for length in lengths:
        out.append(Subset(dataset, indices[offset:offset + length]))
        offset += length
    return out
