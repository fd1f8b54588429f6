"""``ember.utils.flop_counter``: the FlopCounterMode name libraries build at import time or in
summaries (Lightning's ModelSummary makes one for every fit).

torch counts FLOPs by intercepting the aten operators run while the mode is entered; ember has
no such dispatch (docs/DEVIATIONS.md). A counter can be made and read - nothing has been counted,
so the totals are 0 - and entering it, which would count, raises NotImplementedError rather than
report 0 FLOPs for work that ran.
"""
from __future__ import annotations

__all__ = ["FlopCounterMode"]


class FlopCounterMode:
    """Counts FLOPs of the operators run inside ``with`` in torch; in ember it can be made and
    read, and entering it raises NotImplementedError."""

    def __init__(self, mods=None, depth: int = 2, display: bool = True, custom_mapping=None):
        self.depth = depth
        self.display = display
        self.flop_counts: dict = {"Global": {}}

    def get_total_flops(self) -> int:
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self) -> dict:
        """FLOPs by module name ('Global' for all) and operator."""
        return {name: dict(counts) for name, counts in self.flop_counts.items()}

    def __enter__(self):
        raise NotImplementedError("FlopCounterMode: ember does not count FLOPs (it has no "
                                  "operator dispatch to intercept); construct and read only")

    def __exit__(self, *exc):
        return None
