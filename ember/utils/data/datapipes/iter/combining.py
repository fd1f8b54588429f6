"""``torch.utils.data.datapipes.iter.combining``'s names for the joining stages."""
from . import Concater as ConcaterIterDataPipe
from . import Zipper as ZipperIterDataPipe

__all__ = ["ConcaterIterDataPipe", "ZipperIterDataPipe"]
