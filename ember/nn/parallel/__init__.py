"""``ember.nn.parallel``: the data-parallel wrappers of a CPU-only, single-process library.

``DataParallel(module)`` keeps PyTorch's interface (``.module``, ``module.``-prefixed
state_dict keys) and simply calls the wrapped module: with no GPUs to split the batch over,
PyTorch itself falls back to exactly this. ``DistributedDataParallel`` (``distributed.py``)
trains one replica per process over ``ember.distributed``.
"""
from __future__ import annotations

from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
