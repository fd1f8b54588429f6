"""The map-style DataPipes and their functional names."""
from __future__ import annotations

import random

from ._decorator import functional_datapipe
from .datapipe import DataChunk, MapDataPipe

__all__ = ["Batcher", "Concater", "Mapper", "SequenceWrapper", "Shuffler", "Zipper"]


class SequenceWrapper(MapDataPipe):
    """Wrap a sequence (anything indexable with a length) as a MapDataPipe."""

    def __init__(self, sequence, deepcopy: bool = True) -> None:
        self.sequence = sequence

    def __getitem__(self, index):
        return self.sequence[index]

    def __len__(self):
        return len(self.sequence)


@functional_datapipe("map")
class Mapper(MapDataPipe):
    def __init__(self, datapipe, fn) -> None:
        self.datapipe, self.fn = datapipe, fn

    def __getitem__(self, index):
        return self.fn(self.datapipe[index])

    def __len__(self):
        return len(self.datapipe)


@functional_datapipe("batch")
class Batcher(MapDataPipe):
    def __init__(self, datapipe, batch_size: int, drop_last: bool = False,
                 wrapper_class=DataChunk) -> None:
        if batch_size <= 0:
            raise AssertionError("Batch size is required to be larger than 0!")
        self.datapipe, self.batch_size = datapipe, batch_size
        self.drop_last, self.wrapper_class = drop_last, wrapper_class

    def __getitem__(self, index):
        if not 0 <= index < len(self):
            raise IndexError(f"Index {index} is out of bound.")
        start = index * self.batch_size
        stop = min(start + self.batch_size, len(self.datapipe))
        return self.wrapper_class([self.datapipe[i] for i in range(start, stop)])

    def __len__(self):
        n = len(self.datapipe)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


@functional_datapipe("concat")
class Concater(MapDataPipe):
    def __init__(self, *datapipes) -> None:
        if not datapipes:
            raise ValueError("Expected at least one DataPipe, but got nothing")
        self.datapipes = datapipes

    def __getitem__(self, index):
        for pipe in self.datapipes:
            if index < len(pipe):
                return pipe[index]
            index -= len(pipe)
        raise IndexError(f"Index {index} is out of range.")

    def __len__(self):
        return sum(len(p) for p in self.datapipes)


@functional_datapipe("shuffle")
class Shuffler(MapDataPipe):
    """The items in a shuffled order (fixed for one pass; seeded from ember's generator)."""

    def __init__(self, datapipe, *, indices=None) -> None:
        self.datapipe = datapipe
        self.indices = list(range(len(datapipe))) if indices is None else list(indices)
        self._order = None

    def set_seed(self, seed: int):
        self._order = list(self.indices)
        random.Random(seed).shuffle(self._order)
        return self

    def __iter__(self):
        if self._order is None:
            import ember
            self.set_seed(int(ember.randint(0, 2 ** 62, ()).item()))
        order, self._order = self._order, None
        for i in order:
            yield self.datapipe[i]

    def __getitem__(self, index):
        if self._order is None:
            import ember
            self.set_seed(int(ember.randint(0, 2 ** 62, ()).item()))
        return self.datapipe[self._order[index]]

    def __len__(self):
        return len(self.indices)


@functional_datapipe("zip")
class Zipper(MapDataPipe):
    def __init__(self, *datapipes) -> None:
        if not datapipes:
            raise ValueError("Expected at least one DataPipe, but got nothing")
        self.datapipes = datapipes

    def __getitem__(self, index):
        return tuple(pipe[index] for pipe in self.datapipes)

    def __len__(self):
        return min(len(p) for p in self.datapipes)
