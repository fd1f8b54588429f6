"""``torch.utils.data.datapipes.iter.selecting``'s name for the filtering stage."""
from . import Filter as FilterIterDataPipe

__all__ = ["FilterIterDataPipe"]
