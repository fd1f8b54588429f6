"""``ember.nn.parallel.data_parallel``: DataParallel and its functional form (torch's module
path; a pickled model names its class from here)."""
from __future__ import annotations

from ..modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    """Wraps ``module``; ``forward`` calls it unchanged (there are no devices to scatter to).

    Args:
        module: the module to wrap (available as ``.module``).
        device_ids, output_device: accepted and ignored, as PyTorch does without CUDA.
        dim: the batch dimension PyTorch would scatter along (unused).
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        # like PyTorch without CUDA, device_ids are ignored and the module runs where it is
        self.module = module
        self.device_ids = []
        self.output_device = None
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """Functional DataParallel: ``module(*inputs, **module_kwargs)`` on the CPU."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,)
    return module(*inputs, **(module_kwargs or {}))
