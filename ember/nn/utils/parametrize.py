"""Parametrizations: a module attribute computed from other tensors on every access.

``register_parametrization(module, "weight", P)`` moves the tensor to
``module.parametrizations.weight.original`` and makes ``module.weight`` a property that returns
``P(original)``; several parametrizations chain. When ``P`` has ``right_inverse``, the original
is initialised so that the property starts at the tensor's old value, and assigning to
``module.weight`` goes through ``right_inverse``. As in torch, the module's class is swapped for
a subclass that carries the property, so other instances are unaffected.
"""

from __future__ import annotations

import contextlib
import copy

import ember

from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized",
           "remove_parametrizations", "type_before_parametrizations",
           "transfer_parametrizations_and_params"]

_cache_enabled = 0
_cache: dict = {}


@contextlib.contextmanager
def cached():
    """Within this context each parametrized tensor is computed once and reused."""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


def _as_parameter(original, value):
    if isinstance(original, Parameter):
        return Parameter(value.detach(), original.requires_grad)
    return value.detach()


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and the ``original`` tensor(s)
    they start from (``original0``, ``original1``... when right_inverse returns several)."""

    def __init__(self, modules, original, unsafe=False):
        super().__init__(modules)
        self.unsafe = unsafe
        new = original
        with ember.no_grad():
            for module in reversed(self):
                if not hasattr(module, "right_inverse"):
                    continue
                # a right_inverse that raises NotImplementedError (orthogonal's matrix_exp
                # without trivialization) is taken as the identity at registration, as torch
                # does: the original starts as the tensor itself
                try:
                    new = module.right_inverse(new)
                except NotImplementedError:
                    pass
        self.is_tensor = isinstance(new, ember.Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if not unsafe and (new.dtype != original.dtype or new.shape != original.shape):
                raise ValueError(f"When `right_inverse` outputs one tensor, it may not change "
                                 f"the dtype or shape; got {new.dtype} {tuple(new.shape)}, "
                                 f"expected {original.dtype} {tuple(original.shape)}")
            self._register_original("original", _as_parameter(original, new))
        else:
            for i, value in enumerate(new):
                self._register_original(f"original{i}", _as_parameter(original, value))
        if not unsafe:
            value = self()
            if value.dtype != original.dtype or value.shape != original.shape:
                raise ValueError(f"Registering a parametrization may not change the dtype or "
                                 f"shape of the tensor; got {value.dtype} {tuple(value.shape)}, "
                                 f"expected {original.dtype} {tuple(original.shape)}")

    def _register_original(self, name, value):
        if isinstance(value, Parameter):
            self.register_parameter(name, value)
        else:
            self.register_buffer(name, value)

    def right_inverse(self, value):
        """Set the original(s) so that the parametrized tensor becomes ``value``."""
        with ember.no_grad():
            for module in reversed(self):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not "
                                       "implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                self.original.copy_(value)
            else:
                for i, piece in enumerate(value):
                    getattr(self, f"original{i}").copy_(piece)

    def forward(self):
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _get(module, name):
    parametrization = module.parametrizations[name]
    if not _cache_enabled:
        return parametrization()
    key = (id(module), name)
    if key not in _cache:
        _cache[key] = parametrization()
    return _cache[key]


def _inject_new_class(module):
    cls = module.__class__

    def getstate(self):
        raise RuntimeError("Serialization of parametrized modules is only supported through "
                           "state_dict().")

    def deepcopy(self, memo):
        # copy.deepcopy stays allowed (it would reach the refusing __getstate__ otherwise)
        new = self.__new__(type(self))
        memo[id(self)] = new
        new.__dict__ = copy.deepcopy(self.__dict__, memo)
        return new

    param_cls = type(f"Parametrized{cls.__name__}", (cls,),
                     {"__getstate__": getstate, "__deepcopy__": deepcopy})
    param_cls._ember_unparametrized_class = cls
    module.__class__ = param_cls


def _inject_property(module, name):
    def getter(self):
        return _get(self, name)

    def setter(self, value):
        self.parametrizations[name].right_inverse(value)

    setattr(module.__class__, name, property(getter, setter))


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Make ``module.<tensor_name>`` be ``parametrization(original)``; returns the module.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> class Symmetric(nn.Module):
        ...     def forward(self, X):
        ...         return X.triu() + X.triu(1).mT
        >>> layer = nn.utils.parametrize.register_parametrization(nn.Linear(3, 3), "weight",
        ...                                                       Symmetric())
        >>> bool((layer.weight == layer.weight.mT).all())
        True
    """
    if not isinstance(parametrization, Module):
        raise TypeError(f"register_parametrization: the parametrization must be an "
                        f"nn.Module; got {type(parametrization).__name__}")
    if is_parametrized(module, tensor_name):
        plist = module.parametrizations[tensor_name]
        if not unsafe:
            value = parametrization(plist())
            if not isinstance(value, ember.Tensor):
                raise ValueError("A parametrization must return a tensor.")
        plist.append(parametrization)
        plist.unsafe |= unsafe
        return module
    if tensor_name not in module._parameters and tensor_name not in module._buffers:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    original = getattr(module, tensor_name)
    plist = ParametrizationList([parametrization], original, unsafe=unsafe)
    delattr(module, tensor_name)
    if not is_parametrized(module):
        _inject_new_class(module)
        module.parametrizations = ModuleDict()
    _inject_property(module, tensor_name)
    module.parametrizations[tensor_name] = plist
    return module


def is_parametrized(module, tensor_name=None) -> bool:
    """Whether ``module`` (or its ``tensor_name``) has a parametrization."""
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Remove the parametrizations of ``tensor_name``; the tensor becomes a plain parameter or
    buffer holding the parametrized value (or the original, when leave_parametrized=False)."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        value = plist().detach() if leave_parametrized else original.detach()
        kept = Parameter(value, original.requires_grad) if isinstance(original, Parameter) \
            else value
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a "
                             "tensor that is parametrized in terms of a sequence of tensors.")
        kept = Parameter(plist().detach())
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    if isinstance(kept, Parameter):
        module.register_parameter(tensor_name, kept)
    else:
        module.register_buffer(tensor_name, kept)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__._ember_unparametrized_class
    return module


def type_before_parametrizations(module):
    """The module's class as it was before any parametrization was registered."""
    if is_parametrized(module):
        return module.__class__._ember_unparametrized_class
    return type(module)


def transfer_parametrizations_and_params(from_module, to_module, tensor_name=None):
    """Register the parametrizations of ``from_module`` on ``to_module``, which then shares
    ``from_module``'s original tensors (the same Parameter objects, as torch: training one
    module trains the other); returns ``to_module``."""
    if not is_parametrized(from_module):   # nothing to transfer (torch returns as well)
        return to_module
    names = [tensor_name] if tensor_name is not None else list(from_module.parametrizations)
    for name in names:
        source = from_module.parametrizations[name]
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name).detach()))
        for parametrization in source:
            register_parametrization(to_module, name, parametrization)
        target = to_module.parametrizations[name]
        if source.is_tensor:
            target.original = source.original
        else:
            for i in range(source.ntensors):
                setattr(target, f"original{i}", getattr(source, f"original{i}"))
    return to_module

