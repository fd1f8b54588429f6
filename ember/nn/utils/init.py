"""``skip_init``: build a module without running its parameter initialization
(torch.nn.utils.init)."""
from __future__ import annotations

import inspect

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """Construct ``module_cls(*args, **kwargs)`` with parameters and buffers left
    uninitialized (arbitrary values, as ``ember.empty``), for code that loads or sets them next.

    The class must accept a ``device`` keyword argument (RuntimeError otherwise), as in torch:
    the module is built on the ``meta`` device, so no initializer computes anything, and then
    given fresh storage on the requested device (``device=``, the CPU by default) by
    ``Module.to_empty``.

    Example:
        >>> import ember
        >>> layer = skip_init(ember.nn.Linear, 3, 4, dtype=ember.float64)
        >>> tuple(layer.weight.shape), layer.weight.dtype
        ((4, 3), ember.float64)
    """
    from ..modules.module import Module
    if not issubclass(module_cls, Module):   # (not a class: issubclass's TypeError, as torch)
        raise RuntimeError(f"skip_init: expected a Module class; got {module_cls!r}.")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization; "
                           f"{module_cls.__name__}.__init__ has none.")
    final_device = kwargs.pop("device", "cpu")
    kwargs["device"] = "meta"
    return module_cls(*args, **kwargs).to_empty(device=final_device)
