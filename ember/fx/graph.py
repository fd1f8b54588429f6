"""``ember.fx.graph``: an ordered list of Nodes — the intermediate representation of ember.fx.

A Graph is a doubly linked list of Nodes around a sentinel; new nodes go to the current insert
point (the end, unless ``inserting_before``/``inserting_after`` moved it). Node names are unique
Python identifiers, so the graph prints as readable code (``python_code``).
"""
from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from ._codegen import PythonCode, _Namespace, _target_to_str, python_code
from .node import Node, _format_arg, map_arg

__all__ = ["Graph", "PythonCode"]


class _NodeList:
    """Live view of a graph's nodes in program order (reversible, sized)."""

    def __init__(self, graph: Graph, reverse: bool = False):
        self._graph = graph
        self._reverse = reverse

    def __len__(self) -> int:
        return self._graph._len

    def __iter__(self):
        root = self._graph._root
        cur = root._prev if self._reverse else root._next
        while cur is not root:
            nxt = cur._prev if self._reverse else cur._next
            if not cur._erased:
                yield cur
            cur = nxt

    def __reversed__(self):
        return iter(_NodeList(self._graph, not self._reverse))

    def __repr__(self) -> str:
        return repr(list(self))


class _InsertPoint:
    """Moves the insert point now; restores it when used as a context manager and exited."""

    def __init__(self, graph: Graph, new_insert: Callable[[Node], None]):
        self.graph = graph
        self.orig_insert = graph._insert
        graph._insert = new_insert

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.graph._insert = self.orig_insert
        return False


class Graph:
    """The nodes of one traced function, in order.

    Example:
        >>> import ember, operator
        >>> from ember.fx import Graph, GraphModule
        >>> g = Graph()
        >>> x = g.placeholder("x")
        >>> y = g.call_function(operator.add, (x, 1))
        >>> _ = g.output(y)
        >>> gm = GraphModule(ember.nn.Module(), g)
        >>> gm(ember.tensor([1.0, 2.0]))
        tensor([2., 3.])
    """

    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None):
        self._root = Node(self, "", "root", "", (), {})
        self._insert = self._root.prepend
        self._len = 0
        self._graph_namespace = _Namespace()
        self._owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras
        self._codegen = None

    # ----------------------------------------------------------------- basics
    @property
    def owning_module(self):
        return self._owning_module

    @owning_module.setter
    def owning_module(self, mod) -> None:
        self._owning_module = mod

    @property
    def nodes(self) -> _NodeList:
        return _NodeList(self)

    def find_nodes(self, *, op: str, target=None, sort: bool = True) -> list[Node]:
        """Nodes with this op kind (and target, if given), in program order."""
        return [n for n in self.nodes
                if n.op == op and (target is None or n.target == target)]

    def create_node(self, op: str, target, args: tuple | None = None,
                    kwargs: dict | None = None, name: str | None = None,
                    type_expr: Any = None) -> Node:
        """Create a Node and insert it at the current insert point."""
        if op == "call_function":
            from ._patching import unwrap
            target = unwrap(target)    # nodes hold the original function, never a wrapper
        candidate = name if name is not None else _target_to_str(target)
        unique = self._graph_namespace.create_name(candidate, None)
        node = Node(self, unique, op, target, tuple(args or ()), dict(kwargs or {}), type_expr)
        self._insert(node)
        self._len += 1
        return node

    def erase_node(self, to_erase: Node) -> None:
        """Remove a node that has no users left."""
        if to_erase.users:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had "
                               f"{len(to_erase.users)} users in the graph: {to_erase.users}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"erase_node: node {to_erase} does not belong to this graph.")
        if to_erase._erased:
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        to_erase._update_args_kwargs((), {})

    def inserting_before(self, n: Node | None = None) -> _InsertPoint:
        """New nodes go just before ``n`` (the start of the graph if None)."""
        if n is None:
            return self.inserting_after(self._root)
        if n.graph is not self:
            raise ValueError("inserting_before: node must belong to this graph.")
        return _InsertPoint(self, n.prepend)

    def inserting_after(self, n: Node | None = None) -> _InsertPoint:
        """New nodes go just after ``n`` (the end of the graph if None)."""
        if n is None:
            return self.inserting_before(self._root)
        if n.graph is not self:
            raise ValueError("inserting_after: node must belong to this graph.")
        return _InsertPoint(self, n.append)

    # ----------------------------------------------------------------- builders
    def placeholder(self, name: str, type_expr: Any = None,
                    default_value: Any = inspect.Signature.empty) -> Node:
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args=args, type_expr=type_expr)

    def get_attr(self, qualified_name: str, type_expr: Any = None) -> Node:
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name: str, args: tuple | None = None,
                    kwargs: dict | None = None, type_expr: Any = None) -> Node:
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name: str, args: tuple | None = None,
                    kwargs: dict | None = None, type_expr: Any = None) -> Node:
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function: Callable, args: tuple | None = None,
                      kwargs: dict | None = None, type_expr: Any = None) -> Node:
        return self.create_node("call_function", the_function, args, kwargs,
                                type_expr=type_expr)

    def output(self, result: Any, type_expr: Any = None) -> Node:
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def node_copy(self, node: Node, arg_transform: Callable[[Node], Any] = lambda x: x) -> Node:
        """Copy ``node`` (from any graph) into this one, mapping its inputs by ``arg_transform``."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        new = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        new.meta = dict(node.meta)
        return new

    def graph_copy(self, g: Graph, val_map: dict, return_output_node: bool = False):
        """Copy every node of ``g`` but its output into this graph; ``val_map`` maps old nodes to
        new ones (and is filled in). Returns the copied output value."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                out = map_arg(node.args[0], lambda n: val_map[n])
                return (out, node) if return_output_node else out
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo=None) -> Graph:
        g = Graph(tracer_cls=self._tracer_cls)
        val_map: dict = {}
        out = g.graph_copy(self, val_map, return_output_node=True)
        if out is not None:
            value, old_output = out
            new_output = g.output(value, type_expr=old_output.type)
            new_output.meta = dict(old_output.meta)
        return g

    # ----------------------------------------------------------------- passes
    def eliminate_dead_code(self, is_impure_node: Callable[[Node], bool] | None = None) -> bool:
        """Erase nodes whose value nobody uses (placeholders, output and impure calls stay)."""
        impure = is_impure_node or (lambda n: n.is_impure())
        changed = False
        for node in reversed(self.nodes):
            if not node.users and not impure(node):
                self.erase_node(node)
                changed = True
        return changed

    def lint(self) -> None:
        """Check the graph's invariants; raise RuntimeError naming the first broken one."""
        seen: set = set()
        names: set = set()
        outputs = 0
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node {node} does not belong to this Graph!")
            if node.name in names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            names.add(node.name)
            for arg in node._input_nodes:
                if arg.graph is not self:
                    raise RuntimeError(f"Arg {arg} of node {node} does not belong to this Graph")
                if arg not in seen:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' was used before it "
                                       "has been defined! Please check that Nodes in the graph "
                                       "are topologically ordered")
                if node not in arg.users:
                    raise RuntimeError(f"Node {arg} does not list its user {node}.")
            if node.op == "output":
                outputs += 1
            seen.add(node)
        if outputs > 1:
            raise RuntimeError(f"Graph has {outputs} output nodes; expected at most one.")
        mod = self._owning_module
        if mod is None:
            return
        for node in self.nodes:
            if node.op in ("get_attr", "call_module"):
                obj = mod
                for i, atom in enumerate(node.target.split(".")):
                    if not hasattr(obj, atom):
                        path = ".".join(node.target.split(".")[:i])
                        raise RuntimeError(f"Node {node} target {node.target} references "
                                           f"nonexistent attribute {atom} of {path or 'root'}")
                    obj = getattr(obj, atom)
                if node.op == "call_module" and not _is_module(obj):
                    raise RuntimeError(f"Node {node} target {node.target} is "
                                       f"{type(obj).__name__}, not a Module")

    # ----------------------------------------------------------------- printing
    def python_code(self, root_module: str = "self", **kwargs) -> PythonCode:
        return python_code(self, root_module)

    def __str__(self) -> str:
        lines = ["graph():"]
        for node in self.nodes:
            lines.append("    " + node.format_node())
        return "\n".join(lines)

    def print_tabular(self) -> None:
        """Print one row per node: opcode, name, target, args, kwargs."""
        rows = [[n.op, n.name, n._pretty_print_target(n.target), _format_arg(n.args),
                 _format_arg(n.kwargs)] for n in self.nodes]
        header = ["opcode", "name", "target", "args", "kwargs"]
        widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(5)]
        fmt = "  ".join("{:<" + str(w) + "}" for w in widths)
        print(fmt.format(*header))
        print(fmt.format(*("-" * w for w in widths)))
        for r in rows:
            print(fmt.format(*r).rstrip())


def _is_module(obj) -> bool:
    from ember.nn import Module
    return isinstance(obj, Module)
