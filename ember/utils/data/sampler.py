"""Samplers: iterables of dataset indices (or of index lists, for ``BatchSampler``).

Random samplers draw from ``generator`` when given; otherwise each pass seeds a fresh generator
from ember's default generator, so ``ember.manual_seed`` makes the order reproducible.

Example:
    >>> from ember.utils.data import BatchSampler, SequentialSampler
    >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
    [[0, 1], [2, 3], [4]]
"""
from __future__ import annotations

import numbers
from typing import Generic

from .dataset import T_co

__all__ = [
    "BatchSampler",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
]


def _fresh_generator(generator):
    """``generator`` itself, or a new one seeded from the default generator."""
    import ember
    if generator is not None:
        return generator
    seed = int(ember.randint(0, 2**63 - 1, (1,)).item())
    return ember.Generator().manual_seed(seed)


class Sampler(Generic[T_co]):  # NOTE [Generic data classes] in dataset.py
    """Base class: subclasses implement ``__iter__`` (and ``__len__`` when they can)."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random permutation, or ``num_samples`` draws with ``replacement=True``."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        if not isinstance(replacement, bool):
            raise TypeError("replacement should be a boolean value, but got "
                            f"replacement={replacement}")
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        import ember
        n = len(self.data_source)
        g = _fresh_generator(self.generator)
        if self.replacement:
            for start in range(0, self.num_samples, 32):
                count = min(32, self.num_samples - start)
                yield from ember.randint(0, n, (count,), generator=g).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from ember.randperm(n, generator=g).tolist()
        yield from ember.randperm(n, generator=g).tolist()[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        import ember
        for i in ember.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """Indices 0..len(weights)-1 drawn with probabilities proportional to ``weights``."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        import ember
        if (not isinstance(num_samples, numbers.Integral) or isinstance(num_samples, bool)
                or num_samples <= 0):
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(
                             f"replacement={replacement}")
        weights = ember.as_tensor(weights, dtype=ember.float64)
        if weights.dim() != 1:
            raise ValueError("weights should be a 1d sequence but given weights have shape "
                             f"{tuple(weights.shape)}")
        self.weights = weights
        self.num_samples = int(num_samples)
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        import ember
        rand = ember.multinomial(self.weights, self.num_samples, self.replacement,
                                 generator=self.generator)
        yield from rand.tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size``."""

    def __init__(self, sampler, batch_size, drop_last):
        if (not isinstance(batch_size, numbers.Integral) or isinstance(batch_size, bool)
                or batch_size <= 0):
            raise ValueError("batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError("drop_last should be a boolean value, but got "
                             f"drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = int(batch_size)
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
