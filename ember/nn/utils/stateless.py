"""``nn.utils.stateless.functional_call``: the older home of ``ember.func.functional_call``."""

from __future__ import annotations

import warnings

__all__ = ["functional_call"]


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True,
                    strict=False):
    """Deprecated alias of ``ember.func.functional_call``."""
    warnings.warn("This API is deprecated as of PyTorch 2.0 and will be removed in a future "
                  "version of PyTorch. Please use torch.func.functional_call instead which is a "
                  "drop-in replacement.", FutureWarning, stacklevel=2)
    from ...func import functional_call as call
    return call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights,
                strict=strict)
