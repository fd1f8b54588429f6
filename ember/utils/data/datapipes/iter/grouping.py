"""``torch.utils.data.datapipes.iter.grouping``'s names for the batching stages."""
from . import Batcher as BatcherIterDataPipe
from . import UnBatcher as UnBatcherIterDataPipe

__all__ = ["BatcherIterDataPipe", "UnBatcherIterDataPipe"]
