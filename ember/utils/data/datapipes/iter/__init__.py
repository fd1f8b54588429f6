"""The iterable DataPipes and their functional names (``pipe.map(fn)``, ``pipe.batch(n)``...)."""
from __future__ import annotations

import builtins
import random

from ..._collate import default_collate
from .._decorator import functional_datapipe
from ..datapipe import DataChunk, IterDataPipe

__all__ = ["Batcher", "Collator", "Concater", "Filter", "IterableWrapper", "Mapper",
           "ShardingFilter", "Shuffler", "UnBatcher", "Unbatcher", "Zipper"]


def _check_pipe(name, pipe):
    if not isinstance(pipe, IterDataPipe):
        raise TypeError(f"{name}: expected an IterDataPipe; got {type(pipe).__name__}")


class IterableWrapper(IterDataPipe):
    """Wrap any iterable as an IterDataPipe."""

    def __init__(self, iterable, deepcopy: bool = True) -> None:
        self.iterable = iterable
        self.deepcopy = deepcopy

    def __iter__(self):
        yield from self.iterable

    def __len__(self):
        return len(self.iterable)


@functional_datapipe("map")
class Mapper(IterDataPipe):
    """``fn(item)`` for every item (or for ``item[input_col]``, written to ``output_col``)."""

    def __init__(self, datapipe, fn, input_col=None, output_col=None) -> None:
        _check_pipe("map", datapipe)
        if output_col is not None and input_col is None:
            raise ValueError("map: `output_col` must be None when `input_col` is None")
        self.datapipe, self.fn = datapipe, fn
        self.input_col, self.output_col = input_col, output_col

    def _apply(self, item):
        if self.input_col is None:
            return self.fn(item)
        cols = self.input_col if isinstance(self.input_col, (list, tuple)) else [self.input_col]
        value = self.fn(*(item[c] for c in cols))
        out = list(item) if isinstance(item, tuple) else item
        target = self.output_col
        if target is None:
            target = cols[0]
            for c in sorted(cols[1:], reverse=True):
                del out[c]
        if target == -1:
            out.append(value)
        else:
            out[target] = value
        return tuple(out) if isinstance(item, tuple) else out

    def __iter__(self):
        for item in self.datapipe:
            yield self._apply(item)

    def __len__(self):
        return len(self.datapipe)


@functional_datapipe("filter")
class Filter(IterDataPipe):
    """The items for which ``filter_fn(item)`` is true."""

    def __init__(self, datapipe, filter_fn, input_col=None) -> None:
        _check_pipe("filter", datapipe)
        self.datapipe, self.filter_fn, self.input_col = datapipe, filter_fn, input_col

    def __iter__(self):
        for item in self.datapipe:
            key = item if self.input_col is None else item[self.input_col]
            keep = self.filter_fn(key)
            if not isinstance(keep, bool):
                raise ValueError(f"filter: filter_fn must return a bool; got "
                                 f"{type(keep).__name__}")
            if keep:
                yield item


@functional_datapipe("batch")
class Batcher(IterDataPipe):
    """Consecutive items grouped into ``wrapper_class`` batches of ``batch_size``."""

    def __init__(self, datapipe, batch_size: int, drop_last: bool = False,
                 wrapper_class=DataChunk) -> None:
        _check_pipe("batch", datapipe)
        if batch_size <= 0:
            raise AssertionError("Batch size is required to be larger than 0!")
        self.datapipe, self.batch_size = datapipe, batch_size
        self.drop_last, self.wrapper_class = drop_last, wrapper_class

    def __iter__(self):
        batch = []
        for item in self.datapipe:
            batch.append(item)
            if len(batch) == self.batch_size:
                yield self.wrapper_class(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.wrapper_class(batch)

    def __len__(self):
        n = len(self.datapipe)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


@functional_datapipe("unbatch")
class Unbatcher(IterDataPipe):
    """Undo ``batch``: the items of each batch, ``unbatch_level`` levels deep (-1: all)."""

    def __init__(self, datapipe, unbatch_level: int = 1) -> None:
        _check_pipe("unbatch", datapipe)
        if unbatch_level < -1:
            raise ValueError("unbatch_level must be -1 or >= 0")
        self.datapipe, self.unbatch_level = datapipe, unbatch_level

    def _dive(self, element, level):
        if level == 0 or (level < 0 and not isinstance(element, list)):
            yield element
            return
        if not isinstance(element, list):
            raise IndexError(f"unbatch_level {self.unbatch_level} exceeds the depth of the "
                             "DataPipe")
        for item in element:
            yield from self._dive(item, level - 1 if level > 0 else -1)

    def __iter__(self):
        for element in self.datapipe:
            yield from self._dive(element, self.unbatch_level)


UnBatcher = Unbatcher  # torch's spelling


@functional_datapipe("collate")
class Collator(Mapper):
    """``collate_fn`` (default: ``default_collate``) applied to every batch."""

    def __init__(self, datapipe, conversion=None, collate_fn=None) -> None:
        super().__init__(datapipe, collate_fn or conversion or default_collate)


@functional_datapipe("shuffle")
class Shuffler(IterDataPipe):
    """Items shuffled within a buffer of ``buffer_size`` (seeded from ember's generator)."""

    def __init__(self, datapipe, *, buffer_size: int = 10000, unbatch_level: int = 0) -> None:
        _check_pipe("shuffle", datapipe)
        if buffer_size <= 0:
            raise AssertionError("buffer_size should be larger than 0")
        self.datapipe = datapipe if unbatch_level == 0 else Unbatcher(datapipe, unbatch_level)
        self.buffer_size, self._enabled, self._seed = buffer_size, True, None

    def set_shuffle(self, shuffle: bool = True):
        self._enabled = shuffle
        return self

    def set_seed(self, seed: int):
        self._seed = seed
        return self

    def __iter__(self):
        if not self._enabled:
            yield from self.datapipe
            return
        if self._seed is None:
            import ember
            seed = int(ember.randint(0, 2 ** 62, ()).item())
        else:
            seed = self._seed
        rng, buffer = random.Random(seed), []
        for item in self.datapipe:
            if len(buffer) == self.buffer_size:
                i = rng.randrange(self.buffer_size)
                buffer[i], item = item, buffer[i]
                yield item
            else:
                buffer.append(item)
        rng.shuffle(buffer)
        yield from buffer

    def __len__(self):
        return len(self.datapipe)


@functional_datapipe("zip")
class Zipper(IterDataPipe):
    """Tuples of one item from each pipe, until the shortest ends."""

    def __init__(self, *datapipes) -> None:
        for pipe in datapipes:
            _check_pipe("zip", pipe)
        self.datapipes = datapipes

    def __iter__(self):
        yield from builtins.zip(*self.datapipes)

    def __len__(self):
        return min(len(p) for p in self.datapipes)


@functional_datapipe("concat")
class Concater(IterDataPipe):
    """The items of each pipe in turn."""

    def __init__(self, *datapipes) -> None:
        if not datapipes:
            raise ValueError("Expected at least one DataPipe, but got nothing")
        for pipe in datapipes:
            _check_pipe("concat", pipe)
        self.datapipes = datapipes

    def __iter__(self):
        for pipe in self.datapipes:
            yield from pipe

    def __len__(self):
        return sum(len(p) for p in self.datapipes)


@functional_datapipe("sharding_filter")
class ShardingFilter(IterDataPipe):
    """Every ``num_of_instances``-th item starting at ``instance_id`` (set by
    ``apply_sharding``, e.g. per DataLoader worker)."""

    def __init__(self, source_datapipe, sharding_group_filter=None) -> None:
        _check_pipe("sharding_filter", source_datapipe)
        self.source_datapipe = source_datapipe
        self.num_of_instances, self.instance_id = 1, 0

    def apply_sharding(self, num_of_instances: int, instance_id: int, sharding_group=None):
        if not 0 <= instance_id < num_of_instances:
            raise ValueError(f"apply_sharding: instance_id {instance_id} out of range for "
                             f"{num_of_instances} instances")
        self.num_of_instances, self.instance_id = num_of_instances, instance_id

    def __iter__(self):
        for i, item in enumerate(self.source_datapipe):
            if i % self.num_of_instances == self.instance_id:
                yield item
