"""``torch.utils.data.datapipes.iter.callable``'s names for the mapping stages."""
from . import Collator as CollatorIterDataPipe
from . import Mapper as MapperIterDataPipe

__all__ = ["CollatorIterDataPipe", "MapperIterDataPipe"]
