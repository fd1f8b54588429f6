"""ember.distributed.algorithms.join: the names of torch's uneven-inputs context manager.

ember does not implement shadowing the collectives of ranks that ran out of inputs: ``Join``
is a no-op when ``enable=False`` and raises
NotImplementedError when entered enabled (docs/DEVIATIONS.md)."""
from __future__ import annotations


class JoinHook:
    """Per-joinable hooks Join would call while other ranks still run (unused by ember)."""

    def main_hook(self):
        pass

    def post_hook(self, is_last_joiner: bool):
        pass


class Joinable:
    """A base class for objects that could take part in a Join (DDP, ZeroRedundancyOptimizer)."""

    def join_hook(self, **kwargs):
        raise NotImplementedError("Joinable.join_hook: a subclass gives its JoinHook")


class Join:
    def __init__(self, joinables, enable=True, throw_on_early_termination=False, **kwargs):
        self._joinables, self._enable = list(joinables), enable
        if not self._joinables:
            raise ValueError("The join context manager requires at least one joinable")

    def __enter__(self):
        if self._enable:
            raise NotImplementedError(
                "ember.distributed.algorithms.join.Join: uneven inputs across ranks (Join "
                "with enable=True) are not implemented in ember; pass enable=False or give "
                "every rank the same number of batches")
        return self

    def __exit__(self, *exc):
        return None
