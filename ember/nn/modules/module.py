"""``nn.Module``: the base class of layers and models (paper, section 4.1).

A module is a Python object holding parameters, buffers and submodules in three ordered
dicts. Attribute assignment routes values into the right dict (``__setattr__``), attribute
lookup falls back to them (``__getattr__``), and everything else — traversal, state_dict,
dtype conversion, hooks, repr — walks those dicts. ``forward`` is plain Python.
"""
from __future__ import annotations

import functools
import itertools
import numbers
import warnings
from collections import OrderedDict

from ... import _dtype as D
from ... import _meta
from ..._backend import check_device
from ..._tensor import Tensor
from ...autograd.grad_mode import _state, no_grad
from ..parameter import Buffer, Parameter
from . import _hooks
from ._hooks import GLOBAL_BACKWARD as _GLOBAL_BACKWARD
from ._hooks import GLOBAL_BACKWARD_PRE as _GLOBAL_BACKWARD_PRE
from ._hooks import GLOBAL_FORWARD as _GLOBAL_FORWARD
from ._hooks import GLOBAL_FORWARD_ALWAYS as _GLOBAL_FORWARD_ALWAYS
from ._hooks import GLOBAL_FORWARD_PRE as _GLOBAL_FORWARD_PRE
from ._hooks import GLOBAL_FORWARD_WITH_KWARGS as _GLOBAL_FORWARD_WITH_KWARGS
from ._hooks import RemovableHandle, _BackwardHookState, _insert
from ._state_dict import _EXTRA_STATE_KEY_SUFFIX as _EXTRA_STATE_KEY_SUFFIX  # torch's names
from ._state_dict import _IncompatibleKeys as _IncompatibleKeys  # (transformers reads them)
from ._state_dict import _StateDict

__all__ = ["Module"]

# the hooks of every module, where torch defines them (torch.nn.modules.module)
register_module_forward_pre_hook = _hooks.register_module_forward_pre_hook
register_module_forward_hook = _hooks.register_module_forward_hook
register_module_full_backward_pre_hook = _hooks.register_module_full_backward_pre_hook
register_module_full_backward_hook = _hooks.register_module_full_backward_hook



def _addindent(text, spaces):
    """Indent every line but the first (how a child's repr nests in its parent's)."""
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    pad = " " * spaces
    return lines[0] + "\n" + "\n".join(pad + line for line in lines[1:])


# NOTE [Registered reads]
# `self.weight` on a module is a failed ordinary lookup and then Module.__getattr__ (~0.45 us): a
# decoding step's Linear and LayerNorm calls read 52 parameters that way per token. Their forward
# reads the pair from `_parameters` instead, when the module is exactly the library's class (a
# subclass may answer the names itself, and parametrize swaps the class) and both names are
# registered there (prune and weight_norm set a plain attribute in place of the parameter).
def registered_pair(module, cls, first, second):
    """(module.first, module.second), read from the parameter registry where NOTE [Registered
    reads] allows it."""
    params = module._parameters
    if type(module) is cls and first in params and second in params:
        return params[first], params[second]
    return getattr(module, first), getattr(module, second)


def check_sizes(module, **sizes):
    """A layer constructor's sizes must be ints (TypeError) and not negative (RuntimeError),
    named with the layer and the argument (torch's errors come from allocating the weight and
    name neither)."""
    for arg, size in sizes.items():
        for pos, n in enumerate(size if isinstance(size, tuple) else (size,)):
            if not isinstance(n, numbers.Integral) or isinstance(n, bool):
                # (torch's allocation words it so: "must be tuple of ints, but found ...")
                raise TypeError(f"{module}: {arg} must be an int or a tuple of ints; got "
                                f"{size!r} (must be tuple of ints, but found element of type "
                                f"{type(n).__name__} at pos {pos})")
            if n < 0:
                raise RuntimeError(f"{module}: {arg} must be non-negative; got {size}. Trying to "
                                   f"create tensor with negative dimension {n}")


def _typename(value):
    if isinstance(value, Tensor):
        return value.type()
    return type(value).__name__


class Module(_StateDict):
    """Base class for all neural network layers and models.

    Subclasses call ``super().__init__()`` and then assign parameters (``nn.Parameter``),
    buffers (``register_buffer`` / ``nn.Buffer``) and submodules as attributes; ``forward``
    says how an input becomes an output. Call the module (``model(x)``), not ``forward``, so
    that hooks run.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> class Net(nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.fc = nn.Linear(2, 1)
        ...     def forward(self, x):
        ...         return self.fc(x).relu()
        >>> [name for name, _ in Net().named_parameters()]
        ['fc.weight', 'fc.bias']
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is not None and cls.__module__.startswith("ember."):
            cls.__init__ = _builds_on_meta(init)

    _version: int = 1
    training: bool
    dump_patches: bool = False
    call_super_init: bool = False

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments "
                            f"{args!r} {kwargs!r}; Module.__init__ takes none.")
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", OrderedDict())
        setattr_(self, "_buffers", OrderedDict())
        setattr_(self, "_non_persistent_buffers_set", set())
        setattr_(self, "_modules", OrderedDict())
        for name in _HOOK_DICTS:
            setattr_(self, name, OrderedDict())
        setattr_(self, "_forward_hooks_with_kwargs", set())
        setattr_(self, "_forward_pre_hooks_with_kwargs", set())
        setattr_(self, "_forward_hooks_always_called", set())

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  '"forward" function')

    # ------------------------------------------------------------------ registration
    def register_buffer(self, name, tensor, persistent=True):
        """Add a tensor that is module state but not a parameter (e.g. running statistics).

        Persistent buffers are saved in ``state_dict``; ``tensor=None`` registers a slot that
        is skipped by ``state_dict`` until a tensor is assigned.
        """
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name(name, "buffer", self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(ember Tensor or None required)")
        if isinstance(tensor, Buffer):
            persistent = getattr(tensor, "persistent", persistent)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        """Add a parameter under ``name`` (``None`` registers an empty slot, e.g. no bias)."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name(name, "parameter", self._parameters)
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(ember.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                             "parameters must be created explicitly. To express '{name}' as a "
                             "function of another Tensor, compute the value in the forward() "
                             "method.")
        self._parameters[name] = param

    def add_module(self, name, module):
        """Add a child module under ``name`` (reachable as an attribute)."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    register_module = add_module

    def _check_name(self, name, kind, table):
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in table:
            raise KeyError(f"attribute '{name}' already exists")

    def __getattr__(self, name):
        # only called when normal lookup failed: look in the three registries, parameters
        # first and spelled out (a decoding step reads ~80 weights and biases this way)
        d = self.__dict__
        if "_parameters" in d:
            params = d["_parameters"]
            if name in params:
                return params[name]
        for table in ("_buffers", "_modules"):
            if table in d and name in d[table]:
                return d[table][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        d = self.__dict__

        def remove_from(*tables):
            for t in tables:
                if name in t:
                    if t is d.get("_buffers"):
                        d["_non_persistent_buffers_set"].discard(name)
                    del t[name]

        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(d, d["_buffers"], d["_modules"])
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(ember.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            modules = d.get("_modules")
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            remove_from(d, d["_parameters"], d["_buffers"])
            modules[name] = value
        elif d.get("_modules") is not None and name in d["_modules"]:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                "(ember.nn.Module or None expected)")
            d["_modules"][name] = value
        elif isinstance(value, Buffer):
            if d.get("_buffers") is None:
                raise AttributeError("cannot assign buffer before Module.__init__() call")
            remove_from(d, d["_parameters"], d["_modules"])
            self.register_buffer(name, value, value.persistent)
        elif d.get("_buffers") is not None and name in d["_buffers"]:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(ember.Tensor or None expected)")
            d["_buffers"][name] = value
        else:
            object.__setattr__(self, name, value)

    def __delattr__(self, name):
        d = self.__dict__
        if name in d.get("_parameters", ()):
            del d["_parameters"][name]
        elif name in d.get("_buffers", ()):
            del d["_buffers"][name]
            d["_non_persistent_buffers_set"].discard(name)
        elif name in d.get("_modules", ()):
            del d["_modules"][name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        keys = (list(dir(type(self))) + list(self.__dict__) + list(self._parameters) +
                list(self._modules) + list(self._buffers))
        return sorted(k for k in set(keys) if not k[0].isdigit())

    # copy.deepcopy and pickle take the default protocol (no __deepcopy__ / __reduce_ex__ here,
    # as in torch), so a subclass's __getstate__ / __setstate__ decide what a copy gets:
    # torchmetrics' Metric.clone() drops its wrapped update/compute and wraps the copy's own
    def __setstate__(self, state):
        self.__dict__.update(state)
        # modules pickled by older code may lack newer bookkeeping attributes
        for name in _HOOK_DICTS:
            self.__dict__.setdefault(name, OrderedDict())
        for name in ("_forward_hooks_with_kwargs", "_forward_pre_hooks_with_kwargs",
                     "_forward_hooks_always_called", "_non_persistent_buffers_set"):
            self.__dict__.setdefault(name, set())

    # ------------------------------------------------------------------ traversal
    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or (remove_duplicate and id(v) in memo):
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield (module_prefix + ("." if module_prefix else "") + k), v

    def parameters(self, recurse=True):
        """Iterate over the parameters (each shared parameter once)."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """Iterate over (dotted name, parameter) pairs."""
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                       remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                       remove_duplicate)

    def children(self):
        for _, m in self.named_children():
            yield m

    def named_children(self):
        memo = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in memo:
                memo.add(id(m))
                yield name, m

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """Iterate over (dotted name, module) pairs, this module first ('' is its name)."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from m.named_modules(memo, sub, remove_duplicate)

    def get_submodule(self, target):
        """The submodule at dotted path ``target`` ('' is this module)."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def set_submodule(self, target, module, strict=False):
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        path, _, name = target.rpartition(".")
        parent = self.get_submodule(path)
        if strict and not hasattr(parent, name):
            raise AttributeError(f"{parent._get_name()} has no attribute `{name}`")
        setattr(parent, name, module)

    def get_parameter(self, target):
        """The parameter at dotted path ``target`` (e.g. 'layer1.0.weight')."""
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        if name not in mod._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return getattr(mod, name)

    # ------------------------------------------------------------------ modes and grads
    def train(self, mode=True):
        """Set training mode on this module and its descendants; returns self."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self):
        """Evaluation mode (dropout off, batch norm uses running statistics); returns self."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Reset the gradients of all parameters (to None by default)."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                g = p.grad
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                with no_grad():
                    g.zero_()

    # ------------------------------------------------------------------ conversion
    def apply(self, fn):
        """Call ``fn(m)`` on every submodule (children first) and on self; returns self."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _apply(self, fn, recurse=True):
        """Replace every parameter's and buffer's data by fn(tensor), keeping the Parameter
        objects (so optimizers holding them keep working)."""
        if recurse:
            for m in self.children():
                m._apply(fn)
        for p in self._parameters.values():
            if p is None:
                continue
            with no_grad():
                new = fn(p)
            _swap_data(p, new)
            if p.grad is not None:
                with no_grad():
                    g = fn(p.grad)
                _swap_data(p.grad, g)
        for key, b in self._buffers.items():
            if b is not None:
                with no_grad():
                    self._buffers[key] = fn(b)
        return self

    def to(self, *args, **kwargs):
        """Move/cast parameters and buffers: ``to(dtype)``, ``to(device)``, ``to(tensor)``.

        Only floating-point tensors change dtype; a CUDA device raises (no CUDA backend).
        """
        dtype = kwargs.pop("dtype", None)
        device = kwargs.pop("device", None)
        kwargs.pop("non_blocking", None)
        kwargs.pop("memory_format", None)
        if kwargs:
            raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
        for a in args:
            if isinstance(a, Tensor):
                dtype = a.dtype
            elif isinstance(a, D.dtype):
                dtype = a
            elif isinstance(a, bool):
                continue  # non_blocking given positionally
            elif a is not None:
                device = a
        if check_device(device).type == "meta":
            self._apply(_meta.to_meta)
        elif device is not None:
            self._apply(_meta.check_not_meta)
        if dtype is not None:
            dtype = D.to_dtype(dtype)
            if not dtype.is_floating_point:
                raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but "
                                f"got desired dtype={dtype}")
            return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)
        return self

    def to_empty(self, *, device, recurse=True):
        """Give every parameter and buffer (and gradient) new uninitialised storage of its shape
        and dtype on ``device``: the step before a program sets all values itself
        (``init_weights()``, ``load_state_dict``). Returns self."""
        check_device(device)
        from ... import empty_like
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def cpu(self):
        return self

    def cuda(self, device=None):
        check_device("cuda")
        return self

    def type(self, dst_type):
        return self._apply(lambda t: t.type(dst_type))

    def _cast_floats(self, dtype):
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self):
        return self._cast_floats(D.float32)

    def double(self):
        return self._cast_floats(D.float64)

    def half(self):
        return self._cast_floats(D.float16)

    def bfloat16(self):
        return self._cast_floats(D.bfloat16)

    def share_memory(self):
        """Move parameters and buffers to shared memory (for multiprocessing)."""
        for t in itertools.chain(self.parameters(), self.buffers()):
            share = getattr(t, "share_memory_", None)
            if share is not None:
                share()
        return self

    def _replicate_for_data_parallel(self):
        """A shallow copy for a data-parallel replica (torch's private hook, which timm's tests
        call): the same attributes, submodules and buffers, no parameters of its own (a
        replicator sets them), and ``_is_replica`` set."""
        replica = self.__new__(type(self))
        replica.__dict__ = self.__dict__.copy()
        replica._parameters = {}
        replica._buffers = replica._buffers.copy()
        replica._modules = replica._modules.copy()
        replica._is_replica = True
        return replica

    # ------------------------------------------------------------------ hooks and __call__
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """hook(module, args) -> None or new args (or hook(module, args, kwargs) -> None or
        (args, kwargs) with ``with_kwargs=True``) runs before ``forward``."""
        handle = RemovableHandle(self._forward_pre_hooks, self._forward_pre_hooks_with_kwargs)
        _insert(self._forward_pre_hooks, handle.id, hook, prepend)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs.add(handle.id)
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False,
                              always_call=False):
        """hook(module, args, output) -> None or a replacement output (``with_kwargs=True``:
        hook(module, args, kwargs, output)) runs after ``forward``."""
        handle = RemovableHandle(self._forward_hooks, self._forward_hooks_with_kwargs,
                                 self._forward_hooks_always_called)
        _insert(self._forward_hooks, handle.id, hook, prepend)
        if with_kwargs:
            self._forward_hooks_with_kwargs.add(handle.id)
        if always_call:
            self._forward_hooks_always_called.add(handle.id)
        return handle

    def register_full_backward_hook(self, hook, prepend=False):
        """hook(module, grad_input, grad_output) -> None or new grad_input, called once the
        gradients with respect to the module's tensor inputs are computed."""
        handle = RemovableHandle(self._backward_hooks)
        _insert(self._backward_hooks, handle.id, hook, prepend)
        return handle

    def register_backward_hook(self, hook):
        warnings.warn("register_backward_hook is deprecated; ember runs it as a full backward "
                      "hook (register_full_backward_hook).", FutureWarning, stacklevel=2)
        return self.register_full_backward_hook(hook)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """hook(module, grad_output) -> None or new grad_output, called before the gradients
        with respect to the module's inputs are computed."""
        handle = RemovableHandle(self._backward_pre_hooks)
        _insert(self._backward_pre_hooks, handle.id, hook, prepend)
        return handle

    def compile(self, *args, **kwargs):
        """Compile this module's calls in place with ``ember.compile(..., **kwargs)``."""
        from ..._dynamo.eval_frame import compile_module_inplace
        compile_module_inplace(self, *args, **kwargs)

    def _call_impl(self, *args, **kwargs):
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks or
                self._backward_pre_hooks or _GLOBAL_FORWARD_PRE or _GLOBAL_FORWARD or
                _GLOBAL_BACKWARD or _GLOBAL_BACKWARD_PRE):
            return self.forward(*args, **kwargs)
        # the hooks of every module first (register_module_*_hook), then the module's own
        for hid, hook in list(_GLOBAL_FORWARD_PRE.items()) + list(self._forward_pre_hooks.items()):
            if hid in self._forward_pre_hooks_with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {result}.")
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        bw_state = None
        if (self._backward_hooks or self._backward_pre_hooks or _GLOBAL_BACKWARD or
                _GLOBAL_BACKWARD_PRE) and _state.enabled:
            bw_state = _BackwardHookState(self)
            args = bw_state.wrap_inputs(args)
        called = set()
        try:
            output = self.forward(*args, **kwargs)
            for hid, hook in list(_GLOBAL_FORWARD.items()) + list(self._forward_hooks.items()):
                called.add(hid)
                if hid in self._forward_hooks_with_kwargs or hid in _GLOBAL_FORWARD_WITH_KWARGS:
                    result = hook(self, args, kwargs, output)
                else:
                    result = hook(self, args, output)
                if result is not None:
                    output = result
        except Exception:
            self._call_always_hooks(args, kwargs, called)
            raise
        if bw_state is not None:
            output = bw_state.wrap_outputs(output)
        return output

    __call__ = _call_impl

    def _call_always_hooks(self, args, kwargs, called):
        """After forward (or a hook) raised: the always_call forward hooks not yet run get
        output None; their own errors are reported as warnings, the original error wins."""
        for hid, hook in list(_GLOBAL_FORWARD.items()) + list(self._forward_hooks.items()):
            always = hid in self._forward_hooks_always_called or hid in _GLOBAL_FORWARD_ALWAYS
            if hid in called or not always:
                continue
            try:
                if hid in self._forward_hooks_with_kwargs or hid in _GLOBAL_FORWARD_WITH_KWARGS:
                    hook(self, args, kwargs, None)
                else:
                    hook(self, args, None)
            except Exception as exc:
                warnings.warn(f"{type(self).__name__}: an always_call forward hook raised "
                              f"{type(exc).__name__}: {exc}, while the forward's error is "
                              "propagating; the forward's error is raised.", stacklevel=3)

    # ------------------------------------------------------------------ repr
    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        """Text shown inside this module's repr parentheses (override in layers)."""
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(m), 2) for key, m in self._modules.items()]
        lines = extra_lines + child_lines
        body = ""
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                body = extra_lines[0]
            else:
                body = "\n  " + "\n  ".join(lines) + "\n"
        return f"{self._get_name()}({body})"


_HOOK_DICTS = ("_forward_pre_hooks", "_forward_hooks", "_backward_hooks", "_backward_pre_hooks",
               "_state_dict_hooks", "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
               "_load_state_dict_post_hooks")



def _builds_on_meta(init):
    """An ember layer's __init__ that honours ``device="meta"`` (``nn.Linear(4, 3,
    device="meta")``): it builds inside ``with ember.device("meta"):``, so its factories make
    meta tensors. Only ember's own layers: a program's ``device`` argument may mean anything."""
    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        dev = kwargs.get("device")
        if dev is not None and check_device(dev).type == "meta":
            with _meta.META:
                return init(self, *args, **kwargs)
        return init(self, *args, **kwargs)
    return __init__


def _swap_data(t, new):
    """Give tensor ``t`` the values of ``new`` in place of its own (Module._apply).

    The version counter is kept: converting a module is not an in-place write that saved
    tensors should be invalidated by (torch's ``param.data = ...`` behaves the same).
    """
    if new is t:
        return
    if new._meta:
        _meta.mark(t)
    elif t._meta:
        _meta.unmark(t)
    t._data = new._data
