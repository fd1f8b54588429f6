"""DataPipes: composable dataset stages (``torch.utils.data.datapipes``'s API, which torch
has deprecated but still ships).

An ``IterDataPipe`` is an iterable dataset whose stages chain as methods: registering a class
with ``@functional_datapipe("name")`` makes ``pipe.name(...)`` build that class around ``pipe``.

Example:
    >>> from ember.utils.data.datapipes.iter import IterableWrapper
    >>> list(IterableWrapper(range(6)).map(lambda x: x * 10).filter(lambda x: x > 0).batch(2))
    [[10, 20], [30, 40], [50]]
"""
from . import iter, map  # noqa: F401  (registers the functional forms)
from ._decorator import (argument_validation, functional_datapipe,  # noqa: F401
                         guaranteed_datapipes_determinism, non_deterministic,
                         runtime_validation, runtime_validation_disabled)
from .datapipe import DataChunk, DFIterDataPipe, IterDataPipe, MapDataPipe  # noqa: F401
