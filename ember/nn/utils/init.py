"""``skip_init``: build a module without running its parameter initialization
(torch.nn.utils.init)."""
from __future__ import annotations

import inspect

import ember

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """Construct ``module_cls(*args, **kwargs)`` with parameters and buffers left
    uninitialized (arbitrary values, as ``ember.empty``), for code that loads or sets them next.

    The class must accept a ``device`` keyword argument (RuntimeError otherwise), as in torch.

    Differs from torch: torch builds the module on the 'meta' device and never runs the
    initializers; ember has no meta device, so it builds the module normally, without recording
    gradients, and then replaces every parameter's and buffer's values with uninitialized
    memory. The result is the same; only the construction time is not saved.

    Example:
        >>> import ember
        >>> layer = skip_init(ember.nn.Linear, 3, 4, dtype=ember.float64)
        >>> tuple(layer.weight.shape), layer.weight.dtype
        ((4, 3), ember.float64)
    """
    from ..modules.module import Module
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"skip_init: expected a Module class; got {module_cls!r}.")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization; "
                           f"{module_cls.__name__}.__init__ has none.")
    with ember.no_grad():
        module = module_cls(*args, **kwargs)
        for tensor in list(module.parameters()) + list(module.buffers()):
            tensor.data = ember.empty_like(tensor)
    return module
