"""The DataPipe base classes and ``DataChunk`` (the list type batches are made of)."""
from __future__ import annotations

import functools
from typing import Generic, TypeVar

from ..dataset import Dataset, IterableDataset

T_co = TypeVar("T_co", covariant=True)


class _FunctionalMixin:
    """Class-level registry of functional forms: ``pipe.<name>(...)`` builds ``cls(pipe, ...)``."""

    functions: dict = {}

    @classmethod
    def register_datapipe_as_function(cls, function_name, cls_to_register):
        if function_name in cls.functions:
            raise Exception(f"Unable to add DataPipe function name {function_name} as it is "
                            "already taken")

        def build(source, *args, **kwargs):
            return cls_to_register(source, *args, **kwargs)

        cls.functions[function_name] = build

    def __getattr__(self, name):
        functions = type(self).functions
        if name in functions:
            return functools.partial(functions[name], self)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(type(self).functions))


class IterDataPipe(_FunctionalMixin, IterableDataset, Generic[T_co]):
    """An iterable stage of a data pipeline; subclasses implement ``__iter__``."""

    functions: dict = {}

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__}: an IterDataPipe must implement "
                                  "__iter__.")

    def __repr__(self):
        return type(self).__qualname__

    def reset(self) -> None:
        """Called when a new iteration starts; stateful pipes override it."""


class DFIterDataPipe(IterDataPipe):
    """An ``IterDataPipe`` whose items are data frames (kept for API compatibility)."""

    def _is_dfpipe(self) -> bool:
        return True


class MapDataPipe(_FunctionalMixin, Dataset, Generic[T_co]):
    """An indexable stage of a data pipeline; subclasses implement ``__getitem__``/``__len__``."""

    functions: dict = {}

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__}: a MapDataPipe must implement "
                                  "__getitem__.")

    def __repr__(self):
        return type(self).__qualname__


class DataChunk(list):
    """A batch: a list that also keeps the items it was built from in ``items``."""

    def __init__(self, items):
        items = list(items)
        super().__init__(items)
        self.items = items

    def as_str(self, indent: str = "") -> str:
        return indent + "[" + ", ".join(str(i) for i in iter(self)) + "]"

    def raw_iterator(self):
        yield from self.items
