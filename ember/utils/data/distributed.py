"""``DistributedSampler``: each of ``num_replicas`` processes gets its own slice of the data.

Example:
    >>> from ember.utils.data import DistributedSampler
    >>> s = DistributedSampler(range(10), num_replicas=3, rank=1, shuffle=False)
    >>> list(s), len(s)
    ([1, 4, 7, 0], 4)
"""
from __future__ import annotations

import math

from .dataset import T_co
from .sampler import Sampler

__all__ = ["DistributedSampler"]


def _default_world():
    """(world size, rank) from ember.distributed when it exists and is initialised."""
    try:
        from ... import distributed as dist
    except ImportError:
        dist = None
    if dist is None or not getattr(dist, "is_available", lambda: False)():
        raise RuntimeError("DistributedSampler: Requires distributed package to be available; "
                           "pass num_replicas and rank explicitly.")
    if not dist.is_initialized():   # (ValueError, as torch's default-group lookup raises)
        raise ValueError("DistributedSampler: Default process group has not been initialized, "
                         "please make sure to call init_process_group (or pass num_replicas "
                         "and rank explicitly).")
    return dist.get_world_size(), dist.get_rank()


class DistributedSampler(Sampler[T_co]):
    """Indices for replica ``rank`` of ``num_replicas``.

    Every replica gets the same number of samples: the index list is padded by repeating its
    start (or trimmed with ``drop_last=True``). With ``shuffle=True`` the order is a permutation
    seeded with ``seed + epoch``; call ``set_epoch(epoch)`` at the start of each epoch so that
    the replicas agree on a new order.
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None or rank is None:
            world, world_rank = _default_world()
            num_replicas = world if num_replicas is None else num_replicas
            rank = world_rank if rank is None else rank
        if num_replicas <= 0:
            raise ValueError(f"DistributedSampler: num_replicas must be positive, got "
                             f"{num_replicas}")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        import ember
        n = len(self.dataset)
        if self.shuffle:
            g = ember.Generator().manual_seed(self.seed + self.epoch)
            indices = ember.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding > 0 and indices:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Use a new shuffling order for this epoch (same on every replica)."""
        self.epoch = epoch
