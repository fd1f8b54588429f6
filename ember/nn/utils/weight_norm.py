"""weight_norm / remove_weight_norm (Salimans & Kingma, 2016) as a forward pre-hook.

``weight`` is replaced by two parameters, ``weight_g`` (the norm) and ``weight_v`` (the
direction), and recomputed as ``v * g / ||v||`` before every forward.
"""
from __future__ import annotations

import warnings

from ..parameter import Parameter

__all__ = ["weight_norm", "remove_weight_norm", "norm_except_dim"]


def norm_except_dim(v, pow=2, dim=0):
    """The ``pow``-norm of v over every dim but ``dim`` (kept as size-1 dims); dim=-1 means
    the norm of the whole tensor."""
    from ..functional._distance import _norm
    if dim == -1:
        return _norm(v, pow, tuple(range(v.ndim)))
    d = dim % v.ndim
    others = tuple(i for i in range(v.ndim) if i != d)
    if not others:
        return v.abs()
    return _norm(v, pow, others, keepdim=True)


def _weight_norm(v, g, dim):
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook that recomputes ``module.<name>`` from ``<name>_g`` and
    ``<name>_v``."""

    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module, name, dim):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter "
                                   f"{name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if not isinstance(weight, Parameter):
            raise TypeError(f"weight_norm: '{name}' of {type(module).__name__} is not a "
                            "Parameter")
        del module._parameters[name]
        module.register_parameter(name + "_g",
                                  Parameter(norm_except_dim(weight, 2, fn.dim).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module).detach()
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        module.register_parameter(self.name, Parameter(weight))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Reparametrize ``module.<name>`` as g * v / ||v|| (norm over all dims but ``dim``;
    ``dim=None`` uses the whole tensor). Returns the module.

    Example:
        >>> from ember import nn
        >>> m = nn.utils.weight_norm(nn.Linear(3, 2))
        >>> sorted(n for n, _ in m.named_parameters())
        ['bias', 'weight_g', 'weight_v']
    """
    warnings.warn("`nn.utils.weight_norm` is deprecated in favor of "
                  "`nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=2)
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    """Undo weight_norm: ``<name>`` becomes a plain Parameter again."""
    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
