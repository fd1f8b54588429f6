"""``ember.utils.tensorboard``: write TensorBoard event files (``SummaryWriter``).

Writing needs nothing beyond ember; viewing them needs the optional ``tensorboard`` package
(``tensorboard --logdir runs``), exactly as with PyTorch.
"""
from __future__ import annotations

from .writer import FileWriter, SummaryWriter

__all__ = ["SummaryWriter", "FileWriter"]
