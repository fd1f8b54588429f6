"""``ember.distributed.fsdp.wrap``: FSDP's auto-wrap policies. They only decide which submodules
FSDP would wrap - plain functions of a module, real here - and ember has no FSDP to wrap them
(diffusers' training_utils imports ``transformer_auto_wrap_policy``)."""
from __future__ import annotations

__all__ = ["always_wrap_policy", "transformer_auto_wrap_policy"]


def always_wrap_policy(*args, **kwargs) -> bool:
    """Wrap every submodule."""
    return True


def transformer_auto_wrap_policy(module, recurse: bool, nonwrapped_numel: int,
                                 transformer_layer_cls) -> bool:
    """Descend into every module; wrap the instances of ``transformer_layer_cls``."""
    if recurse:
        return True
    return isinstance(module, tuple(transformer_layer_cls))
