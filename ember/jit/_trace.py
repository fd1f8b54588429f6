"""``ember.jit.trace``: run the model once on example inputs and record what ran.

The recording reuses ember.fx: a Tracer whose Proxies also carry the *value* computed on the
example inputs. Python that needs a value (``if``, ``int()``, ``.item()``, shapes) gets the
example's value and the trace keeps it as a constant — with a ``TracerWarning`` where torch
warns, because the trace may not generalise to other inputs.
"""
from __future__ import annotations

import warnings

import ember
import ember.fx as fx
from ember.fx import _patching
from ember.fx.node import map_aggregate
from ember.fx.proxy import Attribute, Proxy

_tracing = [0]

# Tensor attributes that are metadata: read from the example value, not recorded
_META_ATTRS = {"shape", "dtype", "device", "requires_grad", "ndim", "is_cuda", "layout",
               "is_leaf", "grad_fn", "names", "is_sparse", "is_quantized"}
# methods whose result is a Python value: taken from the example (size() and dim() silently,
# as shapes of the example inputs are specialised; the value-reading ones warn)
_META_METHODS = {"size", "dim", "numel", "nelement", "stride", "is_contiguous",
                 "element_size", "is_floating_point", "is_complex", "get_device", "type",
                 "ndimension", "is_signed", "is_pinned", "is_inference", "storage_offset",
                 "data_ptr"}
_VALUE_METHODS = {"item": "a Python number", "tolist": "a Python list",
                  "numpy": "a NumPy array", "__int__": "a Python integer",
                  "__float__": "a Python float"}


class TracerWarning(Warning):
    """The trace recorded a Python value computed from a tensor: it may not generalise."""

    @staticmethod
    def ignore_lib_warnings():
        warnings.filterwarnings("ignore", category=TracerWarning, module="ember")


def _warn(what: str) -> None:
    warnings.warn(f"Converting a tensor to {what} might cause the trace to be incorrect. The "
                  "data flow of Python values is not recorded, so this value is treated as a "
                  "constant in the future. This means that the trace might not generalize to "
                  "other inputs!", TracerWarning, stacklevel=3)


def _value(a):
    return map_aggregate(a, lambda x: x.value if isinstance(x, (ConcreteProxy,
                                                                _ConcreteAttribute)) else x)


class ConcreteProxy(Proxy):
    """A Proxy that also holds the value computed on the example inputs."""

    _traced_value = True  # Function.apply steps aside for it

    def __init__(self, node, tracer, value):
        super().__init__(node, tracer)
        self.value = value

    def __repr__(self) -> str:
        return f"ConcreteProxy({self.node.name})"

    # NOTE [A traced tensor passes isinstance]: torch.jit.trace runs the function on real
    # tensors, so library code in a traced function may check ``isinstance(x, torch.Tensor)``
    # (Pyro's einsum asserts it of every operand). isinstance falls back to ``__class__`` when
    # the type itself does not match, so a proxy whose example value is a tensor reports the
    # value's class there; ``type(proxy)`` stays ConcreteProxy, which is what the tracer's own
    # checks (and copy, which reads type()) use.
    @property
    def __class__(self):
        value = self.__dict__.get("value")
        return type(value) if isinstance(value, ember.Tensor) else ConcreteProxy

    def __getattr__(self, k: str):
        if k.startswith("__") and k.endswith("__"):
            raise AttributeError(k)
        if k in _META_ATTRS:
            return getattr(self.value, k)
        return _ConcreteAttribute(self, k)

    def __bool__(self) -> bool:
        _warn("a Python boolean")
        return bool(self.value)

    def __int__(self) -> int:
        _warn("a Python integer")
        return int(self.value)

    def __float__(self) -> float:
        _warn("a Python float")
        return float(self.value)

    def __index__(self) -> int:
        _warn("a Python index")
        return int(self.value)

    def __len__(self) -> int:
        if isinstance(self.value, ember.Tensor):
            warnings.warn("Using len to get tensor shape might cause the trace to be incorrect."
                          " Recommended usage would be tensor.shape[0].", TracerWarning,
                          stacklevel=2)
        return len(self.value)

    def __iter__(self):
        return iter([self[i] for i in range(len(self.value))])

    def __hash__(self) -> int:
        return id(self)


class _ConcreteAttribute(Attribute):
    def __call__(self, *args, **kwargs):
        root = self.root
        if self.attr in _META_METHODS:
            return getattr(root.value, self.attr)(*_value(args), **_value(kwargs))
        if self.attr in _VALUE_METHODS:
            _warn(_VALUE_METHODS[self.attr])
            return getattr(root.value, self.attr)(*_value(args), **_value(kwargs))
        return super().__call__(*args, **kwargs)

    @property
    def value(self):
        return getattr(self.root.value, self.attr)


class ConcreteTracer(fx.Tracer):
    """Records one execution: every call is also run on the example values."""

    def __init__(self, leaf_modules: bool = True):
        super().__init__()
        self._autowrap_modules = ()  # runs real kernels: NOTE [Autowrapped modules]
        self._leaf_modules = leaf_modules

    def is_leaf_module(self, m, qualname: str) -> bool:
        return self._leaf_modules and super().is_leaf_module(m, qualname)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None,
                     proxy_factory_fn=None):
        node = self.create_node(kind, target, self.create_arg(args), self.create_arg(kwargs),
                                name, type_expr)
        value = self._run(kind, target, _value(args), _value(kwargs))
        return ConcreteProxy(node, self, value)

    def create_arg(self, a):
        # before the tensor check: NOTE [A traced tensor passes isinstance]
        if isinstance(a, Proxy):
            return a.node
        if isinstance(a, ember.Tensor) and not isinstance(a, ember.nn.Parameter) and \
                id(a) not in self.tensor_attrs and \
                all(b is not a for b in self.root.buffers()):
            warnings.warn("A tensor created while tracing is recorded as a constant of the "
                          "trace. This is fine when it is the same on every call; otherwise "
                          "the trace might not generalize to other inputs.", TracerWarning,
                          stacklevel=4)
        return super().create_arg(a)

    def _run(self, kind, target, args, kwargs):
        with _patching.suspended():
            if kind == "placeholder":
                return self._inputs.pop(0)
            if kind == "get_attr":
                obj = self.root
                for atom in target.split("."):
                    obj = getattr(obj, atom)
                return obj
            if kind == "call_function":
                return target(*args, **kwargs)
            if kind == "call_method":
                return getattr(args[0], target)(*args[1:], **kwargs)
            if kind == "call_module":
                return self.root.get_submodule(target)(*args, **kwargs)
        raise RuntimeError(f"jit.trace: unexpected node kind {kind}")

    def trace_with_inputs(self, root, example_inputs: tuple):
        """Trace ``root`` called on ``example_inputs``; returns (Graph, example output)."""
        if isinstance(root, ember.nn.Module) and self.is_leaf_module(root, ""):
            # an ember layer as the root: record it as one call of a wrapped child
            root = _LeafRoot(root)
        self._inputs = list(example_inputs)
        self.root = root if isinstance(root, ember.nn.Module) else ember.nn.Module()
        fn = type(root).forward if isinstance(root, ember.nn.Module) else root
        self.graph = fx.Graph(tracer_cls=type(self))
        self._param_proxies = {}
        self.submodule_paths = {id(m): n for n, m in self.root.named_modules()}
        import inspect
        params = list(inspect.signature(fn).parameters.values())
        if isinstance(root, ember.nn.Module):
            params = params[1:]
        if params and params[-1].kind == inspect.Parameter.VAR_POSITIONAL:
            params = params[:-1] + [inspect.Parameter(f"input_{i}",
                                                      inspect.Parameter.POSITIONAL_ONLY)
                                    for i in range(len(example_inputs) - len(params) + 1)]
        if len(example_inputs) > len(params) and not any(
                p.kind == p.VAR_POSITIONAL for p in params):
            raise TypeError(f"jit.trace: {len(example_inputs)} example inputs for a forward "
                            f"taking {len(params)} arguments.")
        _tracing[0] += 1
        try:
            with _patching.patched(self):
                proxies = [self.create_proxy("placeholder", p.name, (), {})
                           for p in params[:len(example_inputs)]]
                result = fn(root, *proxies) if isinstance(root, ember.nn.Module) else \
                    fn(*proxies)
                self.create_node("output", "output", (self.create_arg(result),), {})
        finally:
            _tracing[0] -= 1
            self.submodule_paths = None
        return self.graph, _value(result)


class _LeafRoot(ember.nn.Module):
    def __init__(self, module):
        super().__init__()
        self.module = module

    def forward(self, *args):
        return self.module(*args)


def _has_tensor(v) -> bool:
    found = []
    map_aggregate(v, lambda x: found.append(1) if isinstance(x, ember.Tensor) else None)
    return bool(found)


def is_tracing() -> bool:
    """True while ``ember.jit.trace`` records a model."""
    return _tracing[0] > 0
