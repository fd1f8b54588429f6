"""Offline stand-in for the parts of torchvision the compatibility corpus uses.

It serves locally generated data and uses only the torch API, so a program runs unchanged under
torch and under ember (where `import torch` is ember). Nothing here reaches the network:
`download=True` is accepted and ignored.
"""
from . import datasets, io, models, ops, transforms, utils  # noqa: F401

__version__ = "0.0+compat"
