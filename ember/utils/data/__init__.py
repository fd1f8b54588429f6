"""ember.utils.data: datasets, samplers and the DataLoader (``torch.utils.data``'s API).

Datasets are (possibly lazy) lists (``Dataset``) or streams (``IterableDataset``); the
``DataLoader`` takes care of shuffling, batching and parallel loading in worker processes,
which hand their batches to the main process through shared memory.
"""
from __future__ import annotations

from . import _utils  # noqa: F401  (torch.utils.data._utils.collate's import path)
from ._collate import default_collate, default_convert
from ._worker import WorkerInfo, get_worker_info
from .dataloader import DataLoader
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset,
                      TensorDataset, random_split)
from .datapipes import (DataChunk, DFIterDataPipe, IterDataPipe, MapDataPipe,  # noqa: F401
                        argument_validation, functional_datapipe,
                        guaranteed_datapipes_determinism, non_deterministic,
                        runtime_validation, runtime_validation_disabled)
from .distributed import DistributedSampler
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
                      WeightedRandomSampler)

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
           "DistributedSampler", "IterableDataset", "RandomSampler", "Sampler",
           "SequentialSampler", "StackDataset", "Subset", "SubsetRandomSampler",
           "TensorDataset", "WeightedRandomSampler", "WorkerInfo", "default_collate",
           "default_convert", "get_worker_info", "random_split"]
