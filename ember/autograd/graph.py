"""Graph inspection helpers (torch.autograd.graph): the Node type."""
from __future__ import annotations

from .function import Node  # noqa: F401
