"""``ember._functorch``: the import path of torch's functorch internals, for programs that tune
them (pytorch-labs/gpt-fast sets ``torch._functorch.config.enable_autograd_cache``). The
transforms themselves are ``ember.func``; ``config`` holds torch's knob names and defaults,
accepted and without effect, as ``ember._inductor.config`` does."""
from __future__ import annotations

from . import config as config

__all__ = ["config"]
