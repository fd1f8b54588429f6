"""torch._dynamo._trace_wrapped_higher_order_op's names that eager programs import.

``TransformGetItemToIndex`` is entered around functions that index tensors with 0-d tensors under
``vmap`` (transformers' attention-mask builders do). torch needs it to route such indexing to an
indexing op its tracer understands; ember's ``vmap`` batches ``x[i]`` for a batched 0-d ``i``
directly, and ``ember.compile`` records the indexing op it runs, so entering it changes nothing.
"""
from __future__ import annotations

__all__ = ["TransformGetItemToIndex"]


class TransformGetItemToIndex:
    """A context manager under which ``tensor[index_tensor]`` behaves as outside it."""

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        return False
