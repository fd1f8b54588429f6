"""ember.utils: helpers around the core library (``torch.utils``'s layout).

Subpackages: ``safetensors`` (read/write the safetensors weight format).
"""
from __future__ import annotations

# subpackages
from . import safetensors  # noqa: F401
from . import data  # noqa: F401
from . import checkpoint  # noqa: F401
from . import dlpack  # noqa: F401  (torch.utils.dlpack needs no import of its own either)
