"""Pruning: zero out parts of a parameter through a mask, as ``torch.nn.utils.prune``.

Pruning ``module.<name>`` moves the parameter to ``<name>_orig``, adds a buffer
``<name>_mask`` and recomputes ``module.<name> = <name>_orig * <name>_mask`` before every
forward (a forward pre-hook). Pruning the same tensor again combines the new mask with the old
one, pruning only among the entries still kept. ``remove`` makes the pruning permanent.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod

import numpy as np

import ember

from ..parameter import Parameter

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured",
           "L1Unstructured", "RandomStructured", "LnStructured", "CustomFromMask", "identity",
           "random_unstructured", "l1_unstructured", "random_structured", "ln_structured",
           "global_unstructured", "custom_from_mask", "remove", "is_pruned"]


def _validate_amount(amount):
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral) and not 0.0 <= float(amount) <= 1.0):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a "
                         "non-negative integer")


def _validate_amount_vs_size(amount, size):
    if isinstance(amount, numbers.Integral) and amount > size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to "
                         f"prune={size}")


def _count(amount, size):
    """How many of ``size`` entries ``amount`` (a count or a fraction) prunes."""
    if isinstance(amount, numbers.Integral):
        return int(amount)
    return round(float(amount) * size)


class BasePruningMethod(ABC):
    """A way of computing a mask; subclasses implement ``compute_mask(t, default_mask)``."""

    PRUNING_TYPE = None  # "unstructured", "structured" or "global"
    _tensor_name = None

    def __call__(self, module, inputs):
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The new mask for tensor ``t`` given the mask already applied."""

    def apply_mask(self, module):
        orig = getattr(module, self._tensor_name + "_orig")
        mask = getattr(module, self._tensor_name + "_mask")
        return orig * mask.to(dtype=orig.dtype)

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prune ``module.<name>`` by a new instance of this method; returns the method."""
        old_method = None
        hooks = [(k, h) for k, h in module._forward_pre_hooks.items()
                 if isinstance(h, BasePruningMethod) and h._tensor_name == name]
        if len(hooks) > 1:
            raise RuntimeError(f"Pruning the tensor {name} of {module} is ambiguous: it has "
                               "several pruning hooks")
        if hooks:
            key, old_method = hooks[0]
            del module._forward_pre_hooks[key]
        method = cls(*args, **kwargs)
        method._tensor_name = name
        if old_method is not None:
            container = old_method if isinstance(old_method, PruningContainer) else \
                PruningContainer(old_method)
            container.add_pruning_method(method)
            method = container
        orig = getattr(module, name)
        scores = orig if importance_scores is None else importance_scores
        if scores.shape != orig.shape:
            raise ValueError(f"importance_scores should have the same shape as parameter "
                             f"{name} of {module}; got {tuple(scores.shape)}, expected "
                             f"{tuple(orig.shape)}")
        if old_method is None:
            module.register_parameter(name + "_orig", Parameter(orig.detach(),
                                                                orig.requires_grad))
            default_mask = ember.ones_like(orig)
            del module._parameters[name]
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        mask = method.compute_mask(scores, default_mask=default_mask)
        module.register_buffer(name + "_mask", mask)
        setattr(module, name, method.apply_mask(module))
        module.register_forward_pre_hook(method)
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """``t`` with this method's mask applied (no module involved)."""
        scores = t if importance_scores is None else importance_scores
        default_mask = ember.ones_like(t) if default_mask is None else default_mask
        return t * self.compute_mask(scores, default_mask=default_mask)

    def remove(self, module):
        """Make the pruning permanent: ``<name>`` becomes a parameter holding orig * mask."""
        if self._tensor_name is None:
            raise ValueError(f"Module {module} has to be pruned before pruning can be removed")
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        with ember.no_grad():
            orig.copy_(weight.detach())
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        module.register_parameter(self._tensor_name, orig)


class PruningContainer(BasePruningMethod):
    """Several pruning methods applied in turn to one tensor."""

    def __init__(self, *args):
        self._pruning_methods = ()
        if len(args) == 1 and not isinstance(args[0], BasePruningMethod):
            args = tuple(args[0])
        for method in args:
            self.add_pruning_method(method)

    def add_pruning_method(self, method):
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name is not None and \
                self._tensor_name != method._tensor_name:
            raise ValueError(f"Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found "
                             f"'{method._tensor_name}'")
        self._tensor_name = method._tensor_name
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        """The last method's mask, computed only among the entries the old mask keeps."""
        method = self._pruning_methods[-1]
        kept = default_mask.detach().numpy() == 1
        new_mask = default_mask.detach().numpy().copy()
        if method.PRUNING_TYPE == "unstructured":
            partial = method.compute_mask(ember.tensor(t.detach().numpy()[kept]),
                                          default_mask=ember.ones(int(kept.sum())))
            new_mask[kept] = partial.numpy()
        elif method.PRUNING_TYPE == "structured":
            dim = method.dim % t.dim()
            others = tuple(d for d in range(t.dim()) if d != dim)
            alive = np.flatnonzero(kept.any(axis=others) if others else kept)
            sliced = np.take(t.detach().numpy(), alive, axis=dim)
            partial = method.compute_mask(ember.tensor(sliced), default_mask=ember.ones(
                sliced.shape)).numpy()
            region = np.take(new_mask, alive, axis=dim) * partial
            index = [slice(None)] * t.dim()
            index[dim] = alive
            new_mask[tuple(index)] = region
        elif method.PRUNING_TYPE == "global":
            new_mask = method.compute_mask(t, default_mask=default_mask).numpy() * new_mask
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {method.PRUNING_TYPE}")
        return ember.tensor(new_mask, dtype=default_mask.dtype)


class Identity(BasePruningMethod):
    """Prunes nothing: the mask is all ones."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    """Prune ``amount`` randomly chosen entries."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        size = t.numel()
        _validate_amount_vs_size(self.amount, size)
        k = _count(self.amount, size)
        mask = default_mask.clone()
        if k:
            prob = ember.rand(t.shape)
            idx = ember.topk(prob.reshape(-1), k=k).indices
            mask.view(-1)[idx] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prune the ``amount`` entries of smallest magnitude."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        size = t.numel()
        _validate_amount_vs_size(self.amount, size)
        k = _count(self.amount, size)
        mask = default_mask.clone()
        if k:
            idx = ember.topk(ember.abs(t).reshape(-1), k=k, largest=False).indices
            mask.view(-1)[idx] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


def _channel_mask(t, dim, channels, default_mask):
    mask = ember.zeros_like(t)
    index = [slice(None)] * t.dim()
    index[dim] = ember.tensor(channels, dtype=ember.long)
    mask[tuple(index)] = 1
    return mask * default_mask


class RandomStructured(BasePruningMethod):
    """Prune ``amount`` randomly chosen channels (slices along ``dim``)."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _validate_amount(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _validate_structured(t, self.dim, "random_structured")
        n = t.shape[self.dim]
        _validate_amount_vs_size(self.amount, n)
        k = _count(self.amount, n)
        keep = np.sort(np.argsort(ember.rand(n).numpy())[:n - k])
        return _channel_mask(t, self.dim % t.dim(), keep, default_mask)

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


def _validate_structured(t, dim, name):
    """Channels along ``dim`` exist: t has 2+ dims and dim is one of them."""
    if t.dim() <= 1:
        raise ValueError(f"{name}: Structured pruning can only be applied to multidimensional "
                         f"tensors. Found tensor of shape {tuple(t.shape)} with {t.dim()} dims")
    if not -t.dim() <= dim < t.dim():
        raise IndexError(f"{name}: Invalid index {dim} for tensor of size {tuple(t.shape)} "
                         f"(the channels' dim must be in [{-t.dim()}, {t.dim() - 1}])")


class LnStructured(BasePruningMethod):
    """Prune the ``amount`` channels along ``dim`` of smallest L``n`` norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1):
        _validate_amount(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _validate_structured(t, self.dim, "ln_structured")
        d = self.dim % t.dim()
        size = t.shape[d]
        _validate_amount_vs_size(self.amount, size)
        k = _count(self.amount, size)
        others = [i for i in range(t.dim()) if i != d]
        # ember.norm, not vector_norm: n may be any of torch.norm's p ('fro', 'nuc' too)
        norms = ember.norm(t, p=self.n, dim=others)
        keep = ember.topk(norms, k=size - k, largest=True).indices.numpy() if size - k else \
            np.array([], dtype=np.int64)
        return _channel_mask(t, d, np.sort(keep), default_mask)

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prune by a given mask."""

    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if default_mask.shape != self.mask.shape:
            raise ValueError(f"custom_from_mask: mask of shape {tuple(self.mask.shape)} does "
                             f"not match the tensor's {tuple(default_mask.shape)}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


def identity(module, name):
    """Apply a mask of ones (so the tensor is reparametrized as orig * mask)."""
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    """Prune the ``amount`` (count or fraction) smallest-magnitude entries of module.<name>.

    Example:
        >>> import ember
        >>> from ember.nn.utils import prune
        >>> m = prune.l1_unstructured(ember.nn.Linear(4, 2), "weight", amount=0.5)
        >>> int((m.weight == 0).sum())
        4
    """
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prune across several (module, name) pairs at once, ranking all their entries together."""
    parameters = list(parameters)
    if not parameters:
        raise ValueError("global_unstructured: no parameters given")
    importance_scores = importance_scores or {}
    scores = [importance_scores.get((m, n), getattr(m, n)).reshape(-1) for m, n in parameters]
    masks = [getattr(m, n + "_mask", ember.ones_like(getattr(m, n))).reshape(-1)
             for m, n in parameters]
    relevant = ember.cat(scores)
    default_mask = ember.cat(masks)
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(f'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. '
                        f"Found method {pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final_mask = container.compute_mask(relevant, default_mask)
    start = 0
    for module, name in parameters:
        n = getattr(module, name).numel()
        piece = final_mask[start:start + n].reshape(getattr(module, name).shape)
        custom_from_mask(module, name, mask=piece)
        start += n


def custom_from_mask(module, name, mask):
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module, name):
    """Make the pruning of module.<name> permanent and remove its hook."""
    for k, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning "
                     "can be removed")


def is_pruned(module) -> bool:
    """Whether any submodule of ``module`` has a pruning hook."""
    for m in module.modules():
        for hook in m._forward_pre_hooks.values():
            if isinstance(hook, BasePruningMethod):
                return True
    return False
