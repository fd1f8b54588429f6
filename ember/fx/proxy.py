"""``ember.fx.proxy``: Proxy objects stand in for values while a program is traced.

Every operation applied to a Proxy (an operator, a method call, an attribute read, a call of
an ember function) appends a Node to the tracer's Graph and returns a new Proxy for its result.
Python control flow that needs the *value* (``if``, ``for``, ``len``) cannot be recorded and
raises :class:`TraceError`, as torch.fx does.
"""
from __future__ import annotations

import dis
import inspect
import operator
import weakref
from typing import Any

from .graph import Graph
from .node import Node, map_aggregate

__all__ = ["Proxy", "Attribute", "TraceError", "TracerBase", "GraphAppendingTracer"]


class TraceError(ValueError):
    """Raised when symbolic tracing meets Python it cannot record (e.g. data-dependent ``if``)."""


class TracerBase:
    """Turns calls on Proxies into Nodes of ``self.graph``."""

    graph: Graph
    record_stack_traces = False
    check_mutable_operations = False
    trace_asserts = False
    proxy_buffer_attributes = False
    traced_func_name = "forward"

    def create_node(self, kind: str, target, args: tuple, kwargs: dict, name: str | None = None,
                    type_expr: Any = None) -> Node:
        """Insert a Node into the graph; override to add metadata to every node."""
        node = self.graph.create_node(kind, target, args, kwargs, name, type_expr)
        if self.record_stack_traces:
            node.stack_trace = "".join(inspect.stack(0)[2].code_context or [])
        return node

    def proxy(self, node: Node) -> Proxy:
        return Proxy(node, self)

    def create_proxy(self, kind: str, target, args: tuple, kwargs: dict, name: str | None = None,
                     type_expr: Any = None, proxy_factory_fn=None) -> Proxy:
        """Record ``target(*args, **kwargs)`` and return a Proxy for its result."""
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        if not isinstance(args_, tuple) or not isinstance(kwargs_, dict):
            raise TypeError("create_proxy: args must be a tuple and kwargs a dict.")
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)

    def create_arg(self, a: Any) -> Any:
        """Turn a value appearing in arguments into something a Node may hold."""
        if isinstance(a, Proxy):
            return a.node
        if isinstance(a, Node):
            return a
        if isinstance(a, tuple) and hasattr(a, "_fields"):
            return type(a)(*(self.create_arg(e) for e in a))
        if isinstance(a, (tuple, list)):
            return type(a)(self.create_arg(e) for e in a)
        if isinstance(a, dict):
            out = {}
            for k, v in a.items():
                if not isinstance(k, str):
                    raise NotImplementedError(
                        f"create_arg: dict keys must be strings; got {type(k).__name__}.")
                out[k] = self.create_arg(v)
            return out
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        if isinstance(a, range):
            return range(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        if a is None or a is ... or isinstance(a, (str, int, float, bool, complex)):
            return a
        import ember
        if isinstance(a, (ember.dtype, ember.device)) or callable(a):
            return a
        if type(a).__module__.startswith("ember") and not isinstance(a, ember.Tensor):
            return a                  # layouts, memory formats, Size...
        raise NotImplementedError(f"argument of type: {type(a)}")

    def to_bool(self, obj: Proxy) -> bool:
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    def iter(self, obj: Proxy):
        raise TraceError(
            "Proxy object cannot be iterated. This can be attempted when the Proxy is used in a "
            "loop or as a *args or **kwargs function argument. Only unpacking into a fixed "
            "number of names (a, b = proxy) can be traced; see ember.fx's docs on control flow.")

    def keys(self, obj: Proxy):
        return Attribute(obj, "keys")()


class GraphAppendingTracer(TracerBase):
    """A tracer that appends to an existing graph: for building graphs through Proxies."""

    def __init__(self, graph: Graph):
        super().__init__()
        self.graph = graph
        # ember functions called on this tracer's Proxies (built by hand, outside any trace)
        # must record too: keep the function wrappers installed while the tracer lives
        from . import _patching
        _patching.acquire()
        weakref.finalize(self, _patching.release)
        self.scope = None
        self.module_stack: dict = {}
        self.node_name_to_scope: dict = {}


def _unpack_count(frame) -> int | None:
    """How many names ``a, b, c = proxy`` at ``frame``'s current instruction unpacks into."""
    for inst in dis.get_instructions(frame.f_code):
        if inst.offset == frame.f_lasti:
            return inst.argval if inst.opname == "UNPACK_SEQUENCE" else None
    return None


class Proxy:
    """A value under tracing: operations on it are recorded into ``self.tracer.graph``.

    Example:
        >>> import ember.fx as fx
        >>> g = fx.Graph()
        >>> x = fx.Proxy(g.placeholder("x"))
        >>> y = (x + 1).relu()
        >>> _ = g.output(y.node)
        >>> [n.op for n in g.nodes]
        ['placeholder', 'call_function', 'call_method', 'output']
    """

    def __init__(self, node: Node, tracer: TracerBase | None = None):
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.tracer = tracer
        self.node = node

    def __repr__(self) -> str:
        return f"Proxy({self.node.name})"

    def __getattr__(self, k: str) -> Attribute:
        if k.startswith("__") and k.endswith("__"):
            raise AttributeError(k)   # copy/pickle probes must not become graph nodes
        return Attribute(self, k)

    def __getstate__(self):
        return self.__dict__

    def __setstate__(self, d):
        self.__dict__ = d

    def __call__(self, *args, **kwargs) -> Proxy:
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self):
        frame = inspect.currentframe()
        caller = frame.f_back if frame is not None else None
        count = _unpack_count(caller) if caller is not None else None
        if count is not None:
            return iter([self[i] for i in range(count)])
        return self.tracer.iter(self)

    def __bool__(self) -> bool:
        return self.tracer.to_bool(self)

    def __len__(self):
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want "
                           "this call to be recorded, please call ember.fx.wrap('len') at "
                           "module scope")

    def __hash__(self) -> int:
        return id(self)

    def keys(self):
        return self.tracer.keys(self)

    def __index__(self):
        raise TraceError(f"symbolically traced value {self.node.name} cannot be used as a Python "
                         "int (range(), list index, shape argument of a non-ember function)")


class Attribute(Proxy):
    """``proxy.name``: a ``getattr`` node, or a ``call_method`` node when it is called."""

    def __init__(self, root: Proxy, attr: str):
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node: Node | None = None

    @property
    def node(self) -> Node:  # type: ignore[override]
        # created lazily: ``x.relu()`` must record one call_method, not a getattr as well
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr,
                                                  (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs) -> Proxy:
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


def _binary(target):
    def forward(self, other):
        return self.tracer.create_proxy("call_function", target, (self, other), {})

    def reflected(self, other):
        return self.tracer.create_proxy("call_function", target, (other, self), {})
    return forward, reflected


def _unary(target):
    def op(self):
        return self.tracer.create_proxy("call_function", target, (self,), {})
    return op


for _name in ("add", "sub", "mul", "floordiv", "truediv", "mod", "pow", "lshift", "rshift",
              "and", "or", "xor", "matmul"):
    _target = getattr(operator, _name + "_" if _name in ("and", "or") else _name)
    _fwd, _refl = _binary(_target)
    setattr(Proxy, f"__{_name}__", _fwd)
    setattr(Proxy, f"__r{_name}__", _refl)
for _name in ("eq", "ne", "lt", "gt", "le", "ge", "getitem"):
    setattr(Proxy, f"__{_name}__", _binary(getattr(operator, _name))[0])
for _name in ("neg", "pos", "invert", "abs"):
    setattr(Proxy, f"__{_name}__", _unary(getattr(operator, _name)))


def _strip(a):
    return map_aggregate(a, lambda x: x.node if isinstance(x, Proxy) else x)
