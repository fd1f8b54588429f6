"""ember.utils.hooks (``torch.utils.hooks``): the handle ``register_*_hook`` returns, for code
that keeps hooks of its own in a dict (accelerate's save/load-state hooks)."""
from __future__ import annotations

from ..nn.modules._hooks import RemovableHandle

__all__ = ["RemovableHandle", "unserializable_hook"]


def unserializable_hook(f):
    """Mark a hook as one that need not survive serialization (torch only checks the mark)."""
    f.__torch_unserializable__ = True
    return f
