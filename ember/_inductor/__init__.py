"""``ember._inductor``: the import path of torch's compiler backend, for programs that tune it.

ember has no inductor: ``ember.compile`` captures at the op registry and fuses with numba (see
``ember._dynamo``). Programs still import ``torch._inductor.config`` to set its knobs before
compiling (karpathy/llm.c's train_gpt2.py sets ``coordinate_descent_tuning``), so the config
module exists with torch's knob names and defaults; the knobs are accepted and have no effect.
"""
from __future__ import annotations

from . import config as config

__all__ = ["config"]
