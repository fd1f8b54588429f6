"""``ember.nn.parallel``: the data-parallel wrappers of a CPU-only, single-process library.

``DataParallel(module)`` keeps PyTorch's interface (``.module``, ``module.``-prefixed
state_dict keys) and simply calls the wrapped module: with no GPUs to split the batch over,
PyTorch itself falls back to exactly this. ``DistributedDataParallel`` (``distributed.py``)
trains one replica per process over ``ember.distributed``. The multi-GPU helpers (scatter,
gather, replicate, parallel_apply) refuse, as torch's CPU build does (``_devices.py``).
"""
from __future__ import annotations

from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel
from .parallel_apply import parallel_apply
from .replicate import replicate
from .scatter_gather import gather, scatter

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel", "gather",
           "parallel_apply", "replicate", "scatter"]
