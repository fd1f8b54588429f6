"""nn.Module's state dict: saving, loading (strict, assign) and their hooks.

``_StateDict`` is a base class of Module holding only these methods; it has no state of its own
(the hook dicts and ``_non_persistent_buffers_set`` are created by ``Module.__init__``).
"""
from __future__ import annotations

import itertools
import warnings
from collections import OrderedDict, namedtuple

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ..parameter import Parameter
from ._hooks import RemovableHandle

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys it did not find and the ones it did not use."""

    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__



class _StateDict:
    """The state-dict half of nn.Module (see the module docstring)."""

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        if type(self).get_extra_state is not _StateDict.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An OrderedDict of every parameter and persistent buffer by dotted name.

        Values are detached tensors sharing memory with the module (``keep_vars=True`` keeps
        the Parameters themselves).
        """
        if args:  # torch's deprecated positional form (destination, prefix, keep_vars)
            warnings.warn("Positional args are being deprecated, use kwargs instead.",
                          FutureWarning, stacklevel=2)
            destination, prefix, keep_vars = (list(args) + [destination, prefix, keep_vars][
                len(args):])[:3]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        metadata = getattr(destination, "_metadata", None)
        if metadata is not None:
            metadata[prefix[:-1]] = {"version": self._version}
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".",
                             keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, {"version": self._version})
            if result is not None:
                destination = result
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        """Copy this module's own entries from ``state_dict`` (children are done by the
        caller); report missing / unexpected keys and shape mismatches."""
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        persistent = {k: v for k, v in self._buffers.items()
                      if k not in self._non_persistent_buffers_set}
        local = {k: v for k, v in itertools.chain(self._parameters.items(), persistent.items())
                 if v is not None}
        for name, param in local.items():
            key = prefix + name
            if key not in state_dict:
                missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected '
                                  f"ember.Tensor or Tensor-like object from checkpoint but "
                                  f"received {type(value)}")
                continue
            if tuple(value.shape) != tuple(param.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{value.shape} from checkpoint, the shape in current model "
                                  f"is {param.shape}.")
                continue
            if local_metadata.get("assign_to_params_buffers", False):
                # assign=True: the checkpoint's tensor replaces the module's (the way out of a
                # model built on the meta device); a parameter stays a Parameter
                if name in self._parameters and not isinstance(value, Parameter):
                    value = Parameter(value, requires_grad=param.requires_grad)
                (self._parameters if name in self._parameters else self._buffers)[name] = value
                continue
            if param._meta and not value._meta:
                warnings.warn(f"for {key}: copying from a non-meta parameter in the checkpoint "
                              "to a meta parameter in the current model, which is a no-op. "
                              "(Did you mean to pass `assign=True` to assign items in the "
                              "state dictionary to their corresponding key in the module "
                              "instead of copying them in place?)", UserWarning, stacklevel=3)
                continue
            try:
                with no_grad():
                    param.copy_(value)
            except Exception as e:  # dtype that cannot be cast, read-only memory, ...
                error_msgs.append(f'While copying the parameter named "{key}", whose '
                                  f"dimensions in the model are {param.shape} and whose "
                                  f"dimensions in the checkpoint are {value.shape}, an "
                                  f"exception occurred : {e.args}.")
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not _StateDict.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif extra_key in state_dict:  # no set_extra_state here to take it
            unexpected_keys.append(extra_key)
        for key in state_dict:
            if not key.startswith(prefix) or key == extra_key:
                continue
            head, dot, _ = key[len(prefix):].partition(".")
            if dot:
                if head not in self._modules:
                    unexpected_keys.append(key)
            elif head not in local:
                unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy parameters and buffers from ``state_dict`` into this module, in place.

        Returns ``_IncompatibleKeys(missing_keys, unexpected_keys)``. With ``strict=True``
        any missing or unexpected key raises RuntimeError; a shape mismatch always raises.
        Values are copied into the existing tensors, so optimizers holding the parameters
        keep working.
        """
        if not hasattr(state_dict, "keys") or not hasattr(state_dict, "__getitem__"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module, local_dict, prefix=""):
            local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
            local_metadata = {**local_metadata, "assign_to_params_buffers": assign}
            module._load_from_state_dict(local_dict, prefix, local_metadata, strict, missing,
                                         unexpected, errors)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_dict = {k: v for k, v in local_dict.items()
                                  if k.startswith(child_prefix)}
                    load(child, child_dict, child_prefix)
            incompatible = _IncompatibleKeys(missing, unexpected)
            for hook in module._load_state_dict_post_hooks.values():
                hook(module, incompatible)

        load(self, state_dict)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    def get_extra_state(self):
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never "
                           "be called.")

    def set_extra_state(self, state):
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never "
                           "be called.")

    def register_state_dict_pre_hook(self, hook):
        """hook(module, prefix, keep_vars) runs before ``state_dict`` collects this module."""
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def register_state_dict_post_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata) may edit or replace the dict."""
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    _register_state_dict_hook = register_state_dict_post_hook

    def register_load_state_dict_pre_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata, strict, missing, unexpected,
        errors) runs before this module loads its entries."""
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = (
            lambda *a: hook(self, *a))
        return handle

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = (
            (lambda *a: hook(self, *a)) if with_module else hook)
        return handle

    def register_load_state_dict_post_hook(self, hook):
        """hook(module, incompatible_keys) runs after this module and its children loaded."""
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle
