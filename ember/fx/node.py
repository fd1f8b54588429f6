"""``ember.fx.node``: one operation of a :class:`~ember.fx.Graph`.

A Node records *what* runs (``op`` kind and ``target``), on *what* (``args``/``kwargs``, which
may nest other Nodes inside tuples, lists, dicts and slices) and who consumes its result
(``users``). Nodes form a doubly linked list owned by their Graph, so inserting and erasing
are O(1) and iteration order is program order.
"""
from __future__ import annotations

import builtins
import operator
import types
from collections.abc import Callable
from typing import Any

__all__ = ["Node", "map_arg", "map_aggregate", "Argument", "Target"]

Target = Any
Argument = Any

_OPS = ("placeholder", "call_method", "call_module", "call_function", "get_attr", "output",
        "root")

# call_function targets that must survive dead-code elimination
_side_effectful_functions: set = {builtins.print}


def map_aggregate(a: Argument, fn: Callable) -> Argument:
    """Apply ``fn`` to every leaf of a nested tuple/list/dict/slice structure."""
    if isinstance(a, tuple):
        mapped = tuple(map_aggregate(e, fn) for e in a)
        # namedtuples (torch.return_types-like) keep their class
        return type(a)(*mapped) if hasattr(a, "_fields") else mapped
    if isinstance(a, list):
        return [map_aggregate(e, fn) for e in a]
    if isinstance(a, dict):
        return {k: map_aggregate(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn),
                     map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a: Argument, fn: Callable[[Node], Argument]) -> Argument:
    """Apply ``fn`` to every Node inside ``a`` (other leaves are kept as they are)."""
    if not callable(fn):
        raise TypeError("map_arg: fn must be callable; got " + type(fn).__name__)
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def _qualified_name(fn) -> str:
    """``ember.relu`` / ``operator.add`` / ``builtins.getattr``: how a target prints."""
    from ._codegen import _public_path
    path = _public_path(fn)
    if path is not None:
        return path
    if getattr(fn, "__module__", None) == "_operator":
        return "operator." + fn.__name__
    module = getattr(fn, "__module__", None) or "builtins"
    return f"{module}.{getattr(fn, '__qualname__', getattr(fn, '__name__', repr(fn)))}"


def _format_arg(arg, max_list_len=float("inf")) -> str:
    if isinstance(arg, Node):
        return "%" + arg.name
    if isinstance(arg, tuple):
        inner = ", ".join(_format_arg(a) for a in arg)
        return f"({inner},)" if len(arg) == 1 else f"({inner})"
    if isinstance(arg, list):
        items = [_format_arg(a) for a in arg[: int(min(len(arg), max_list_len))]]
        more = "" if len(arg) <= max_list_len else f", ...[total_len={len(arg)}]"
        return "[" + ", ".join(items) + more + "]"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items()) + "}"
    return str(arg)


class Node:
    """One operation in a Graph: ``op`` is one of placeholder, get_attr, call_function,
    call_method, call_module, output; ``target`` is what it calls or reads.

    Example:
        >>> import ember.fx as fx
        >>> g = fx.Graph()
        >>> x = g.placeholder("x")
        >>> y = g.call_function(abs, (x,))
        >>> (y.op, y.name, list(x.users))
        ('call_function', 'abs_1', [abs_1])
    """

    def __init__(self, graph, name: str, op: str, target: Target, args: tuple, kwargs: dict,
                 return_type: Any = None):
        if op not in _OPS:
            raise ValueError(f"Node: unknown op kind; got {op!r}, expected one of {_OPS[:-1]}.")
        if op == "call_function" and not callable(target):
            raise ValueError(f"Node: call_function target must be callable; got {target!r}.")
        if op in ("call_method", "call_module", "get_attr", "placeholder") and \
                not isinstance(target, str):
            raise ValueError(f"Node: {op} target must be a string; got {target!r}.")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes: dict[Node, None] = {}
        self.users: dict[Node, None] = {}
        self.type = return_type
        self.meta: dict[str, Any] = {}
        self._prev = self
        self._next = self
        self._erased = False
        self._args: tuple = ()
        self._kwargs: dict = {}
        self._update_args_kwargs(args, kwargs)

    # ----------------------------------------------------------------- linked list
    @property
    def next(self) -> Node:
        return self._next

    @property
    def prev(self) -> Node:
        return self._prev

    def prepend(self, x: Node) -> None:
        """Move ``x`` (of the same graph) to just before this node."""
        if x is self:
            return
        if x.graph is not self.graph:
            raise RuntimeError("Node.prepend: nodes belong to different graphs.")
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x: Node) -> None:
        """Move ``x`` to just after this node."""
        self._next.prepend(x)

    def _remove_from_list(self) -> None:
        p, n = self._prev, self._next
        p._next, n._prev = n, p
        self._prev = self._next = self

    # ----------------------------------------------------------------- arguments
    @property
    def args(self) -> tuple:
        return self._args

    @args.setter
    def args(self, a) -> None:
        self._update_args_kwargs(tuple(a), self._kwargs)

    @property
    def kwargs(self) -> dict:
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k) -> None:
        self._update_args_kwargs(self._args, dict(k))

    @property
    def all_input_nodes(self) -> list[Node]:
        return list(self._input_nodes)

    def _update_args_kwargs(self, args, kwargs) -> None:
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._input_nodes = {}
        self._args = map_arg(tuple(args), self._note_input)
        self._kwargs = map_arg(dict(kwargs), self._note_input)
        for n in self._input_nodes:
            n.users.setdefault(self)

    def _note_input(self, n: Node) -> Node:
        if n.graph is not self.graph:
            raise RuntimeError(f"Node {self.name}: argument {n.name} belongs to another graph.")
        self._input_nodes.setdefault(n)
        return n

    def update_arg(self, idx: int, arg: Argument) -> None:
        args = list(self._args)
        args[idx] = arg
        self.args = tuple(args)

    def update_kwarg(self, key: str, arg: Argument) -> None:
        kwargs = dict(self._kwargs)
        kwargs[key] = arg
        self.kwargs = kwargs

    def replace_input_with(self, old_input: Node, new_input: Node) -> None:
        """Use ``new_input`` wherever this node's arguments mention ``old_input``."""
        swap = lambda n: new_input if n is old_input else n  # noqa: E731
        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    def replace_all_uses_with(self, replace_with: Node,
                              delete_user_cb: Callable[[Node], bool] = lambda user: True, *,
                              propagate_meta: bool = False) -> list[Node]:
        """Make every user of this node use ``replace_with``; returns the users changed."""
        if propagate_meta:
            for k, v in self.meta.items():
                replace_with.meta.setdefault(k, v)
        changed = []
        for user in list(self.users):
            if user is replace_with or not delete_user_cb(user):
                continue
            user.replace_input_with(self, replace_with)
            changed.append(user)
        return changed

    # ----------------------------------------------------------------- info
    def is_impure(self, impure_random: bool = True) -> bool:
        """Whether dead-code elimination must keep this node even without users."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            return self.target in _side_effectful_functions
        if self.op == "call_module":
            mod = self.graph.owning_module
            if mod is not None:
                try:
                    sub = mod.get_submodule(self.target)
                except AttributeError:
                    return False
                return bool(getattr(sub, "_is_impure", False))
        return False

    @property
    def stack_trace(self):
        return self.meta.get("stack_trace")

    @stack_trace.setter
    def stack_trace(self, trace) -> None:
        self.meta["stack_trace"] = trace

    def _pretty_print_target(self, target) -> str:
        if isinstance(target, str):
            return target
        return _qualified_name(target)

    def format_node(self, placeholder_names=None, maybe_return_typename=None) -> str | None:
        """The node's line in ``str(graph)``."""
        if self.op == "placeholder":
            default = "" if not self._args else f"(default={self._args[0]})"
            return (f"%{self.name} : [num_users={len(self.users)}] = "
                    f"placeholder[target={self.target}]{default}")
        if self.op == "get_attr":
            return (f"%{self.name} : [num_users={len(self.users)}] = "
                    f"get_attr[target={self._pretty_print_target(self.target)}]")
        if self.op == "output":
            return f"return {self._args[0] if self._args else None}"
        return (f"%{self.name} : [num_users={len(self.users)}] = "
                f"{self.op}[target={self._pretty_print_target(self.target)}]"
                f"(args = {_format_arg(self._args)}, kwargs = {_format_arg(self._kwargs)})")

    def __repr__(self) -> str:
        return self.name


# operators whose name alone is a fine node-name candidate
_OPERATOR_MODULES = (operator, builtins, types)
