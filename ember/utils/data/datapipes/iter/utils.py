"""``torch.utils.data.datapipes.iter.utils``'s name for the wrapping stage."""
from . import IterableWrapper as IterableWrapperIterDataPipe

__all__ = ["IterableWrapperIterDataPipe"]
