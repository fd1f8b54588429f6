"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict (and the
deprecated Container)."""
from __future__ import annotations

import operator
import warnings
from collections import OrderedDict
from itertools import chain, islice

from ..._tensor import Tensor
from ..parameter import Parameter
from .module import Module, _addindent

__all__ = ["Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList",
           "ParameterDict"]


def _index(idx, size, what):
    """A possibly negative int index into a container of ``size`` items."""
    idx = operator.index(idx)
    if not -size <= idx < size:
        raise IndexError(f"index {idx} is out of range for {what} of length {size}")
    return idx % size


class Container(Module):
    """Deprecated: a Module holding the keyword arguments as named submodules. Subclass
    ``Module`` instead; constructing one warns (FutureWarning), as in torch."""

    def __init__(self, **kwargs):
        super().__init__()
        warnings.warn("nn.Container is deprecated: nn.Module does everything it did; subclass "
                      "nn.Module instead.", FutureWarning, stacklevel=2)
        for name, module in kwargs.items():
            self.add_module(name, module)


class Sequential(Module):
    """Modules applied one after the other: ``Sequential(m1, m2)(x) == m2(m1(x))``.

    Also accepts an ``OrderedDict`` of named modules. Supports indexing, slicing (which
    returns a Sequential), ``len``, iteration, ``append``, ``insert``, ``extend``, ``pop`` and
    ``+``.

    Example:
        >>> from ember import nn
        >>> net = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
        >>> len(net), type(net[:1]).__name__
        (2, 'Sequential')
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _renumber(self):
        self._modules = OrderedDict((str(i), m) for i, m in enumerate(self._modules.values()))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        i = _index(idx, len(self), "Sequential")
        return next(islice(self._modules.values(), i, None))

    def __setitem__(self, idx, module):
        i = _index(idx, len(self), "Sequential")
        key = list(self._modules)[i]
        setattr(self, key, module)

    def __delitem__(self, idx):
        keys = list(self._modules)
        if isinstance(idx, slice):
            for key in keys[idx]:
                delattr(self, key)
        else:
            delattr(self, keys[_index(idx, len(self), "Sequential")])
        self._renumber()

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __add__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        out = Sequential()
        for m in chain(self, other):
            out.append(m)
        return out

    def __iadd__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        return self.extend(other)

    def __mul__(self, other):
        if not isinstance(other, int) or other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        out = Sequential()
        for _ in range(other):
            for m in self:
                out.append(m)
        return out

    __rmul__ = __mul__

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, module):
        """Add ``module`` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index, module):
        """Insert ``module`` before position ``index``; returns self."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        index = index % (n + 1) if index < 0 else index
        mods = list(self._modules.values())
        mods.insert(index, module)
        self._modules = OrderedDict((str(i), m) for i, m in enumerate(mods))
        return self

    def extend(self, sequential):
        for m in sequential:
            self.append(m)
        return self

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input


class ModuleList(Module):
    """A list of modules, registered so that their parameters are found.

    Example:
        >>> from ember import nn
        >>> layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
        >>> len(list(layers.parameters()))
        6
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[str(_index(idx, len(self), "ModuleList"))]

    def __setitem__(self, idx, module):
        setattr(self, str(_index(idx, len(self), "ModuleList")), module)

    def __delitem__(self, idx):
        keys = list(self._modules)
        if isinstance(idx, slice):
            for key in keys[idx]:
                delattr(self, key)
        else:
            delattr(self, keys[_index(idx, len(self), "ModuleList")])
        self._modules = OrderedDict((str(i), m) for i, m in enumerate(self._modules.values()))

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        out = ModuleList()
        for m in chain(self, other):
            out.append(m)
        return out

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def insert(self, index, module):
        mods = list(self._modules.values())
        mods.insert(index, module)
        self._modules = OrderedDict()
        for i, m in enumerate(mods):
            self.add_module(str(i), m)

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def extend(self, modules):
        if isinstance(modules, (Tensor, str)) or not hasattr(modules, "__iter__"):
            raise TypeError("ModuleList.extend should be called with an iterable, but got "
                            + type(modules).__name__)
        for m in modules:
            self.append(m)
        return self

    def __repr__(self):
        # consecutive identical children print once as "(0-2): 3 x Linear(...)", like torch
        lines = []
        items = [(k, repr(m)) for k, m in self._modules.items()]
        i = 0
        while i < len(items):
            j = i
            while j + 1 < len(items) and items[j + 1][1] == items[i][1]:
                j += 1
            body = _addindent(items[i][1], 2)
            if j > i:
                lines.append(f"({items[i][0]}-{items[j][0]}): {j - i + 1} x {body}")
            else:
                lines.append(f"({items[i][0]}): {body}")
            i = j + 1
        if not lines:
            return self._get_name() + "()"
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """An ordered dict of modules, registered so that their parameters are found."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        self._modules.clear()

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules):
        if isinstance(modules, (dict, ModuleDict)) or hasattr(modules, "keys"):
            for key, m in modules.items():
                self[key] = m
            return
        for j, item in enumerate(modules):
            if not isinstance(item, (tuple, list)) or len(item) != 2:
                raise ValueError(f"ModuleDict update sequence element #{j} should be an iterable "
                                 f"of length 2; got {item!r}")
            self[item[0]] = item[1]


def _param_line(key, p, type_name=False):
    """One entry of ParameterList / ParameterDict's repr. torch names the dtype in a list
    (``ember.float64``) but the legacy tensor type in a dict (``ember.DoubleTensor``)."""
    size = "x".join(str(s) for s in p.shape)
    kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
    what = p.type() if type_name else p.dtype
    return f"({key}): {kind} containing: [{what} of size {size}]"


class ParameterList(Module):
    """A list of parameters (plain tensors are wrapped in ``Parameter``)."""

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)([self[i] for i in range(len(self))[idx]])
        return getattr(self, str(_index(idx, len(self), "ParameterList")))

    def __setitem__(self, idx, param):
        idx = _index(idx, len(self), "ParameterList")
        if isinstance(param, Tensor) and not isinstance(param, Parameter):
            param = Parameter(param)
        setattr(self, str(idx), param)

    def __len__(self):
        return self._size

    def __iter__(self):
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters):
        return self.extend(parameters)

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, value):
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values):
        if isinstance(values, Tensor) or not hasattr(values, "__iter__"):
            raise TypeError("ParameterList.extend should be called with an iterable, but got "
                            + type(values).__name__)
        for v in values:
            self.append(v)
        return self

    def extra_repr(self):
        lines = []
        for i, p in enumerate(self):
            if isinstance(p, Tensor):
                lines.append("  " + _param_line(i, p))
            else:
                lines.append(f"  ({i}): Object of type: {type(p).__name__}")
        return "\n".join(lines)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """An ordered dict of parameters (plain tensors are wrapped in ``Parameter``)."""

    def __init__(self, parameters=None):
        super().__init__()
        self._keys = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        return getattr(self, key)

    def __setitem__(self, key, value):
        if not isinstance(key, str):
            raise TypeError(f"ParameterDict keys must be strings, got {type(key).__name__}")
        self._keys[key] = None
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, key, value)

    def __delitem__(self, key):
        del self._keys[key]
        delattr(self, key)

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __reversed__(self):
        return reversed(list(self._keys))

    def __contains__(self, key):
        return key in self._keys

    def copy(self):
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self):
        for k in list(self._keys):
            del self[k]

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def popitem(self):
        k = list(self._keys)[-1]
        v = self[k]
        del self[k]
        return k, v

    def get(self, key, default=None):
        return self[key] if key in self else default

    def fromkeys(self, keys, default=None):
        return ParameterDict((k, default) for k in keys)

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def values(self):
        return (self[k] for k in self._keys)

    def update(self, parameters):
        if hasattr(parameters, "keys"):
            for key in parameters.keys():
                self[key] = parameters[key]
            return
        for j, item in enumerate(parameters):
            if not isinstance(item, (tuple, list)) or len(item) != 2:
                raise ValueError(f"ParameterDict update sequence element #{j} should be an "
                                 f"iterable of length 2; got {item!r}")
            self[item[0]] = item[1]

    def __or__(self, other):
        out = self.copy()
        out.update(other)
        return out

    def extra_repr(self):
        lines = []
        for k, p in self.items():
            if isinstance(p, Tensor):
                lines.append("  " + _param_line(k, p, type_name=True))
            else:
                lines.append(f"  ({k}): Object of type: {type(p).__name__}")
        return "\n".join(lines)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterDict should not be called.")
