"""``ember.fx.symbolic_trace`` and the ``Tracer`` behind it.

The Tracer calls ``forward`` with Proxies in place of the inputs. Submodules that are leaves
(ember's own layers by default) become ``call_module`` nodes; other submodules are traced
through. Parameters read inside forward become ``get_attr`` nodes; other tensors met along the
way are stored on the root as ``_tensor_constant<i>``.
"""
from __future__ import annotations

import builtins
import inspect
import math
from collections.abc import Callable
from typing import Any

from . import _patching
from .graph import Graph
from .node import Node
from .proxy import Proxy, TracerBase

__all__ = ["Tracer", "symbolic_trace", "wrap", "PH"]

# (globals dict, name) pairs registered by ``wrap``
_wrapped_functions: list = []


class _PH:
    """Marker for ``concrete_args``: this argument stays a placeholder."""

    def __repr__(self) -> str:
        return "PH"


PH = _PH()


def wrap(fn_or_name: str | Callable):
    """Keep calls to a module-level function as single ``call_function`` nodes.

    Call at the top level of the module that defines (or imports) the function:
    ``ember.fx.wrap("my_fn")`` or ``ember.fx.wrap(my_fn)``. ``wrap('len')`` records ``len``.
    """
    if callable(fn_or_name):
        name = fn_or_name.__name__
    elif isinstance(fn_or_name, str):
        name = fn_or_name
    else:
        raise TypeError("wrap: expected a function or the name of one; got "
                        + type(fn_or_name).__name__)
    frame = inspect.currentframe()
    caller = frame.f_back if frame is not None else None
    if caller is None or caller.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    g = caller.f_globals
    if name not in g and hasattr(builtins, name):
        _wrapped_functions.append((builtins, name))
    else:
        _wrapped_functions.append((g, name))
    return fn_or_name


def _is_ember_leaf_class(m) -> bool:
    from ember.nn import Sequential
    mod = type(m).__module__
    return (mod.startswith("ember.nn") or mod.startswith("ember.ao.nn")) and \
        not isinstance(m, Sequential)


class Tracer(TracerBase):
    """Records a Module's (or function's) ``forward`` into a Graph; subclass to customise which
    modules are leaves, how nodes are created, and how arguments are lifted.

    Example:
        >>> import ember
        >>> from ember.fx import Tracer
        >>> class NoLeaves(Tracer):
        ...     def is_leaf_module(self, m, qualname):
        ...         return False
        >>> g = NoLeaves().trace(ember.nn.Sequential(ember.nn.ReLU()))
        >>> [n.op for n in g.nodes]
        ['placeholder', 'call_function', 'output']
    """

    def __init__(self, autowrap_modules: tuple = (math,), autowrap_functions: tuple = (),
                 param_shapes_constant: bool = False):
        super().__init__()
        self._autowrap_modules = autowrap_modules
        self._autowrap_functions = tuple(autowrap_functions)
        self.param_shapes_constant = param_shapes_constant
        self.submodule_paths: dict | None = None
        self.root: Any = None
        self.scope = None
        self.module_stack: dict = {}
        self.node_name_to_scope: dict = {}
        self.tensor_attrs: dict = {}
        self._in_call_module = None

    # ----------------------------------------------------------------- hooks for subclasses
    def is_leaf_module(self, m, module_qualified_name: str) -> bool:
        """ember's built-in layers are leaves (Sequential is traced through)."""
        return _is_ember_leaf_class(m)

    def path_of_module(self, mod) -> str:
        """The qualified name of ``mod`` inside the root module."""
        if self.submodule_paths is not None:
            path = self.submodule_paths.get(id(mod))
            if path is None:
                raise NameError("module is not installed as a submodule")
            return path
        for name, m in self.root.named_modules():
            if m is mod:
                return name
        raise NameError("module is not installed as a submodule")

    def call_module(self, m, forward: Callable, args: tuple, kwargs: dict) -> Any:
        """Record a leaf module as one node, or trace through ``forward``."""
        qualname = self.path_of_module(m)
        if not self.is_leaf_module(m, qualname):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", qualname, args, kwargs)

    def getattr(self, attr: str, attr_val: Any, parameter_proxy_cache: dict) -> Any:
        """A parameter read in forward becomes a get_attr node (buffers too, when
        ``proxy_buffer_attributes``)."""
        import ember
        from ember.nn import Parameter
        if isinstance(attr_val, Parameter):
            pairs = self.root.named_parameters()
        elif self.proxy_buffer_attributes and isinstance(attr_val, ember.Tensor):
            pairs = self.root.named_buffers()
        else:
            return attr_val
        for name, p in pairs:
            if p is attr_val:
                cache = self._param_proxies
                if name not in cache:
                    cache[name] = self.create_proxy("get_attr", name, (), {})
                return cache[name]
        return attr_val

    def create_arg(self, a: Any) -> Any:
        import ember
        from ember.nn import Module, Parameter
        if isinstance(a, Parameter):
            for name, p in self.root.named_parameters():
                if p is a:
                    return self.create_node("get_attr", name, (), {})
            raise NameError("parameter is not a member of this module")
        if isinstance(a, ember.Tensor):
            for name, b in self.root.named_buffers():
                if b is a:
                    return self.create_node("get_attr", name, (), {})
            qualname = self.tensor_attrs.get(id(a))
            if qualname is None:
                i = 0
                while hasattr(self.root, f"_tensor_constant{i}"):
                    i += 1
                qualname = f"_tensor_constant{i}"
                self.tensor_attrs[id(a)] = qualname
                setattr(self.root, qualname, a)
            return self.create_node("get_attr", qualname, (), {})
        if isinstance(a, Module):
            return self.create_node("get_attr", self.path_of_module(a), (), {})
        return super().create_arg(a)

    # ----------------------------------------------------------------- tracing
    def _trace_module_call(self, m, orig_call, args, kwargs):
        def forward(*a, **k):
            # run the module's own __call__ (hooks included) without re-entering the tracer
            prev, self._in_call_module = self._in_call_module, m
            try:
                return orig_call(m, *a, **k)
            finally:
                self._in_call_module = prev
        return self.call_module(m, forward, args, kwargs)

    def create_args_for_root(self, root_fn: Callable, is_module: bool,
                             concrete_args: dict | None = None):
        """Placeholders for ``root_fn``'s parameters; returns (fn, args to call it with)."""
        sig = inspect.signature(root_fn)
        params = list(sig.parameters.values())
        if is_module:
            params = params[1:]           # self
        concrete_args = dict(concrete_args or {})
        unknown = set(concrete_args) - {p.name for p in params}
        if unknown:
            raise RuntimeError(f"symbolic_trace: concrete_args names {sorted(unknown)} are not "
                               f"parameters of {root_fn.__name__}.")
        args: list = []
        kwargs: dict = {}
        for p in params:
            if p.name in concrete_args and concrete_args[p.name] is not PH:
                value = concrete_args[p.name]
                # kept in the signature (with the specialised value as default)
                self.create_proxy("placeholder", p.name, (value,), {})
                target = kwargs if p.kind == p.KEYWORD_ONLY else None
                if target is None:
                    args.append(value)
                else:
                    target[p.name] = value
                continue
            if p.kind == p.VAR_POSITIONAL:
                raise RuntimeError(f"symbolic_trace: *{p.name} is not supported; pass "
                                   "the arguments explicitly.")
            if p.kind == p.VAR_KEYWORD:
                raise RuntimeError(f"symbolic_trace: **{p.name} is not supported.")
            default = () if p.default is inspect.Parameter.empty else (p.default,)
            proxy = self.create_proxy("placeholder", p.name, default, {},
                                      type_expr=None if p.annotation is p.empty
                                      else p.annotation)
            if p.kind == p.KEYWORD_ONLY:
                kwargs[p.name] = proxy
            else:
                args.append(proxy)
        return args, kwargs

    def trace(self, root, concrete_args: dict | None = None) -> Graph:
        """Trace ``root`` (a Module or a function) into a new Graph."""
        from ember.nn import Module
        if isinstance(root, Module):
            self.root = root
            fn = getattr(type(root), self.traced_func_name)
            is_module = True
        elif callable(root):
            self.root = Module()
            fn = root
            is_module = False
        else:
            raise TypeError(f"symbolic_trace: expected a Module or a function; got "
                            f"{type(root).__name__}.")
        self.graph = Graph(tracer_cls=type(self))
        self.tensor_attrs = {}
        self._param_proxies: dict = {}
        self.submodule_paths = {id(m): name for name, m in self.root.named_modules()}
        with _patching.patched(self):
            args, kwargs = self.create_args_for_root(fn, is_module, concrete_args)
            if is_module:
                result = fn(root, *args, **kwargs)
            else:
                result = fn(*args, **kwargs)
            self.create_node("output", "output", (self.create_arg(result),), {},
                             type_expr=getattr(fn, "__annotations__", {}).get("return"))
        self.submodule_paths = None
        return self.graph


def symbolic_trace(root, concrete_args: dict | None = None):
    """Trace ``root`` symbolically and return a GraphModule running the recorded graph.

    Args:
        root: an ``nn.Module`` or a function.
        concrete_args: values for some parameters; control flow on them is specialised.

    Example:
        >>> import ember
        >>> from ember.fx import symbolic_trace
        >>> gm = symbolic_trace(lambda x: ember.relu(x) + 1)
        >>> [n.op for n in gm.graph.nodes]
        ['placeholder', 'call_function', 'call_function', 'output']
    """
    from .graph_module import GraphModule
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    from ember.nn import Module
    name = type(root).__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)


def _node_of(p) -> Node:
    return p.node if isinstance(p, Proxy) else p
