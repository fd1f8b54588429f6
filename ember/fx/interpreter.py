"""``ember.fx.Interpreter`` runs a GraphModule node by node; ``Transformer`` builds a new one.

Each op kind has its own method (``placeholder``, ``get_attr``, ``call_function``,
``call_method``, ``call_module``, ``output``) so a subclass changes how one kind runs — swap
ops, time them, record shapes — without touching the others.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from . import _patching
from ._symbolic_trace import Tracer
from .graph import Graph
from .graph_module import GraphModule
from .node import Node, map_aggregate, map_arg
from .proxy import Proxy

__all__ = ["Interpreter", "Transformer"]


class Interpreter:
    """Execute ``module``'s graph with Python values, one node at a time.

    Example:
        >>> import ember
        >>> from ember.fx import Interpreter, symbolic_trace
        >>> class NegRelu(Interpreter):
        ...     def call_function(self, target, args, kwargs):
        ...         if target is ember.relu:
        ...             return ember.neg(*args)
        ...         return super().call_function(target, args, kwargs)
        >>> gm = symbolic_trace(lambda x: ember.relu(x))
        >>> NegRelu(gm).run(ember.tensor([1.0, -2.0]))
        tensor([-1.,  2.])
    """

    def __init__(self, module, garbage_collect_values: bool = True, graph: Graph | None = None):
        self.module = module
        self.submodules = dict(module.named_modules())
        self.graph = graph if graph is not None else module.graph
        self.env: dict[Node, Any] = {}
        self.name = "Interpreter"
        self.garbage_collect_values = garbage_collect_values
        self.extra_traceback = True
        if garbage_collect_values:
            # the last node using each value, so the value can be dropped right after it
            self.user_to_last_uses: dict[Node, list[Node]] = {}
            seen: set = set()
            for node in reversed(self.graph.nodes):
                for n in node._input_nodes:
                    if n not in seen:
                        seen.add(n)
                        self.user_to_last_uses.setdefault(node, []).append(n)

    def run(self, *args, initial_env: dict | None = None, enable_io_processing: bool = True):
        """Run the graph on ``args`` and return what its output node returns."""
        self.env = dict(initial_env) if initial_env is not None else {}
        self.args_iter: Iterator = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            try:
                self.env[node] = self.run_node(node)
            except Exception as e:
                if self.extra_traceback and hasattr(e, "add_note") and \
                        not getattr(e, "_fx_noted", False):
                    e.add_note(f"While executing {node.format_node()}")
                    e.__dict__["_fx_noted"] = True   # note once, at the innermost node
                raise
            if self.garbage_collect_values:
                for dead in self.user_to_last_uses.get(node, []):
                    self.env.pop(dead, None)
            if node.op == "output":
                return self.env[node]
        return None

    def boxed_run(self, args_list: list):
        args_iter = iter(args_list)
        env = {}
        for n in self.graph.nodes:
            if n.op == "placeholder":
                env[n] = next(args_iter)
        args_list.clear()
        return self.run(initial_env=env)

    def run_node(self, n: Node) -> Any:
        """Fetch ``n``'s arguments from the environment and dispatch on its op kind."""
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    # ----------------------------------------------------------------- one method per op kind
    def placeholder(self, target: str, args: tuple, kwargs: dict) -> Any:
        if target.startswith("**"):
            raise RuntimeError("Interpreter: **kwargs placeholders are not supported.")
        if target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration:
            if args:
                return args[0]
            raise RuntimeError(f"Expected positional argument for parameter {target}, but one "
                               "was not passed in!") from None

    def get_attr(self, target: str, args: tuple, kwargs: dict) -> Any:
        return self.fetch_attr(target)

    def call_function(self, target, args: tuple, kwargs: dict) -> Any:
        return target(*args, **kwargs)

    def call_method(self, target: str, args: tuple, kwargs: dict) -> Any:
        self_obj, *rest = args
        return getattr(self_obj, target)(*rest, **kwargs)

    def call_module(self, target: str, args: tuple, kwargs: dict) -> Any:
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target, args: tuple, kwargs: dict) -> Any:
        return args[0]

    # ----------------------------------------------------------------- helpers
    def fetch_attr(self, target: str) -> Any:
        obj = self.module
        for i, atom in enumerate(target.split(".")):
            if not hasattr(obj, atom):
                path = ".".join(target.split(".")[:i]) or "the root module"
                raise RuntimeError(f"Node referenced nonexistent target {target}: {path} has "
                                   f"no attribute {atom!r}")
            obj = getattr(obj, atom)
        return obj

    def fetch_args_kwargs_from_env(self, n: Node) -> tuple[tuple, dict]:
        args = self.map_nodes_to_values(n.args, n)
        kwargs = self.map_nodes_to_values(n.kwargs, n)
        return args, kwargs

    def map_nodes_to_values(self, args, n: Node):
        def load(n_arg: Node):
            if n_arg not in self.env:
                raise RuntimeError(f"Node {n} referenced nonexistent value {n_arg}! Run "
                                   "Graph.lint() to diagnose such issues")
            return self.env[n_arg]
        return map_arg(args, load)


class _TransformerTracer(Tracer):
    def __init__(self, graph: Graph):
        super().__init__()
        self.graph = graph

    def is_leaf_module(self, m, qualname: str) -> bool:
        return True


class Transformer(Interpreter):
    """Run the graph on Proxies to produce a new GraphModule; override a method per op kind to
    rewrite what it emits.

    Example:
        >>> import ember, operator
        >>> from ember.fx import Transformer, symbolic_trace
        >>> class AddToMul(Transformer):
        ...     def call_function(self, target, args, kwargs):
        ...         if target is operator.add:
        ...             target = operator.mul
        ...         return super().call_function(target, args, kwargs)
        >>> gm = AddToMul(symbolic_trace(lambda x: x + x)).transform()
        >>> gm(ember.tensor([3.0]))
        tensor([9.])
    """

    def __init__(self, module):
        super().__init__(module, garbage_collect_values=False)
        self.new_graph = Graph()
        self.tracer = _TransformerTracer(self.new_graph)
        self.tracer.root = module

    def placeholder(self, target: str, args: tuple, kwargs: dict) -> Proxy:
        default = next(iter(args), None) if args else None
        node = self.new_graph.placeholder(target) if not args else \
            self.new_graph.placeholder(target, default_value=default)
        return Proxy(node, self.tracer)

    def get_attr(self, target: str, args: tuple, kwargs: dict) -> Proxy:
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_module(self, target: str, args: tuple, kwargs: dict) -> Any:
        return self.tracer.create_proxy("call_module", target, args, kwargs)

    def call_function(self, target, args: tuple, kwargs: dict) -> Any:
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def call_method(self, target: str, args: tuple, kwargs: dict) -> Any:
        return self.tracer.create_proxy("call_method", target, args, kwargs)

    def run_node(self, n: Node) -> Any:
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        target = n.target
        if n.op == "call_function":
            target = _patching.wrapper_of(target)  # so `target is ember.relu` holds here
        result = getattr(self, n.op)(target, args, kwargs)
        if isinstance(result, Proxy) and result.node.op != "output":
            result.node.meta = {**n.meta, **result.node.meta}
        return result

    def transform(self) -> GraphModule:
        """Run the transformation; returns the new GraphModule."""
        self.tracer.submodule_paths = {id(m): name for name, m in self.module.named_modules()}
        self.tracer._param_proxies = {}
        with _patching.patched(self.tracer):
            result = super().run(enable_io_processing=False)
        if result is not None:
            def strip(a):
                return a.node if isinstance(a, Proxy) else a
            self.new_graph.output(map_aggregate(result, strip))
        return GraphModule(self.module, self.new_graph)
