"""``torch.utils.data.datapipes.iter.combinatorics``'s name for the shuffling stage."""
from . import Shuffler as ShufflerIterDataPipe

__all__ = ["ShufflerIterDataPipe"]
