"""Python source for a Graph: node names, printable targets and the ``forward`` function.

The generated code reads like torch.fx's: one line per node, infix operators for the
``operator`` module's functions, ``self.<path>`` for modules and attributes, and
``;  a = b = None`` after the last use of a value so that it is freed as early as in eager code.
"""
from __future__ import annotations

import builtins
import keyword
import math
import operator
import re
import sys
import types
from dataclasses import dataclass
from typing import Any

_BINARY = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
           operator.floordiv: "//", operator.mod: "%", operator.pow: "**",
           operator.matmul: "@", operator.and_: "&", operator.or_: "|", operator.xor: "^",
           operator.lshift: "<<", operator.rshift: ">>", operator.eq: "==", operator.ne: "!=",
           operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">="}
_UNARY = {operator.neg: "-", operator.pos: "+", operator.invert: "~", operator.not_: "not "}

_ILLEGAL = set(keyword.kwlist) | set(dir(builtins)) | {"ember", "torch", "inf", "nan", "self"}


# ------------------------------------------------------------------------------ names
def _snake_case(s: str) -> str:
    """``MyModule`` -> ``my_module`` (node names follow Python's variable style)."""
    out = []
    for i, c in enumerate(s):
        if c.isupper() and i > 0 and (s[i - 1].islower() or s[i - 1].isdigit()):
            out.append("_")
        out.append(c.lower())
    return "".join(out)


_SUFFIX = re.compile(r"(.*)_(\d+)$")


class _Namespace:
    """Hands out unique, legal Python identifiers: ``add``, ``add_1``, ``add_2``..."""

    def __init__(self):
        self._used: set[str] = set()
        self._base_count: dict[str, int] = {}
        self._obj_to_name: dict[int, str] = {}

    def create_name(self, candidate: str, obj: Any = None) -> str:
        if obj is not None and id(obj) in self._obj_to_name:
            return self._obj_to_name[id(obj)]
        candidate = re.sub(r"[^0-9a-zA-Z_]+", "_", candidate) or "_unnamed"
        if candidate[0].isdigit():
            candidate = "_" + candidate
        match = _SUFFIX.match(candidate)
        if match:
            base, num = match.group(1), int(match.group(2))
        else:
            base, num = candidate, None
        if num is None:
            num = self._base_count.get(base, 0)
        while candidate in self._used or candidate in _ILLEGAL:
            num += 1
            candidate = f"{base}_{num}"
        self._used.add(candidate)
        self._base_count[base] = num
        if obj is not None:
            self._obj_to_name[id(obj)] = candidate
        return candidate

    def associate_name_with_obj(self, name: str, obj: Any) -> None:
        self._obj_to_name[id(obj)] = name

    def _rename_object(self, obj, name: str) -> None:
        self._obj_to_name[id(obj)] = name


def _target_to_str(target) -> str:
    """The name candidate for a node calling ``target``."""
    if callable(target) and not isinstance(target, str):
        name = getattr(target, "__name__", None) or type(target).__name__
        return _snake_case(name)
    return _snake_case(str(target))


# ------------------------------------------------------------------------------ targets
_PATHS: dict[int, tuple[Any, str]] | None = None


def _public_namespaces():
    import ember
    spaces = [("ember", ember)]
    for sub in ("nn.functional", "linalg", "special", "fft", "nn.init"):
        mod = ember
        for part in sub.split("."):
            mod = getattr(mod, part, None)
        if isinstance(mod, types.ModuleType):
            spaces.append(("ember." + sub, mod))
    return spaces


def _build_paths() -> dict[int, tuple[Any, str]]:
    # keyed by id but holding the object too: an id can be reused once an object dies, and a
    # lookup must never name a different function. Tracing wrappers are looked through, so a
    # table built while a tracer has the namespaces patched still names the originals.
    from . import _patching
    paths: dict[int, tuple[Any, str]] = {}
    for prefix, mod in _public_namespaces():
        for name, obj in vars(mod).items():
            if name.startswith("_") or isinstance(obj, (type, types.ModuleType)):
                continue
            if callable(obj):
                target = _patching.unwrap(obj)
                paths.setdefault(id(target), (target, f"{prefix}.{name}"))
    return paths


def _lookup(fn) -> str | None:
    entry = _PATHS.get(id(fn)) if _PATHS is not None else None
    return entry[1] if entry is not None and entry[0] is fn else None


def _public_path(fn) -> str | None:
    """``ember.relu`` for a function reachable from ember's public namespaces, else None."""
    global _PATHS
    from . import _patching
    fn = _patching.unwrap(fn)
    path = _lookup(fn)
    if path is None and "ember" in sys.modules:
        # functions registered after the first lookup (late imports) are found on demand
        _PATHS = _build_paths()
        path = _lookup(fn)
    return path


# ------------------------------------------------------------------------------ code
@dataclass
class PythonCode:
    """Source of ``forward`` and the globals it must be executed with."""

    src: str
    globals: dict[str, Any]


class _Globals:
    def __init__(self, namespace: _Namespace):
        import ember
        self.ns = namespace
        self.values: dict[str, Any] = {"ember": ember, "inf": math.inf, "nan": math.nan,
                                       "NoneType": type(None)}

    def name_for(self, obj) -> str:
        """An expression naming ``obj``: its public path, or a new global bound to it."""
        import ember
        path = _public_path(obj)
        if path is not None:
            return path
        if isinstance(obj, ember.dtype):
            return "ember." + str(obj).split(".")[-1]
        if getattr(obj, "__module__", None) in ("_operator", "operator"):
            self.values["operator"] = operator
            return "operator." + obj.__name__
        if getattr(obj, "__module__", None) == "builtins" and \
                getattr(builtins, getattr(obj, "__name__", ""), None) is obj:
            return str(obj.__name__)  # type: ignore[union-attr]
        qual = f"{getattr(obj, '__module__', 'obj')}_{getattr(obj, '__qualname__', 'obj')}"
        name = self.ns.create_name(qual.replace(".", "_"), obj)
        self.values[name] = obj
        return name


def _repr_arg(arg, g: _Globals) -> str:
    import ember

    from .node import Node
    if isinstance(arg, Node):
        return arg.name
    if isinstance(arg, tuple) and hasattr(arg, "_fields"):
        cls = g.name_for(type(arg))
        return f"{cls}(" + ", ".join(_repr_arg(a, g) for a in arg) + ")"
    if isinstance(arg, tuple):
        inner = ", ".join(_repr_arg(a, g) for a in arg)
        return f"({inner},)" if len(arg) == 1 else f"({inner})"
    if isinstance(arg, list):
        return "[" + ", ".join(_repr_arg(a, g) for a in arg) + "]"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k!r}: {_repr_arg(v, g)}" for k, v in arg.items()) + "}"
    if isinstance(arg, slice):
        return (f"slice({_repr_arg(arg.start, g)}, {_repr_arg(arg.stop, g)}, "
                f"{_repr_arg(arg.step, g)})")
    if isinstance(arg, ember.dtype):
        return g.name_for(arg)
    if isinstance(arg, ember.device):
        g.values["device"] = ember.device
        return repr(arg)
    if isinstance(arg, float) and (math.isinf(arg) or math.isnan(arg)):
        return repr(arg) if not math.isinf(arg) else ("inf" if arg > 0 else "-inf")
    if arg is None or isinstance(arg, (bool, int, float, complex, str, bytes, type(Ellipsis))):
        return repr(arg)
    if isinstance(arg, (types.FunctionType, types.BuiltinFunctionType, type)):
        return g.name_for(arg)
    # anything else (Size, enums...) is bound as a global so the code still runs
    name = g.ns.create_name("_" + _snake_case(type(arg).__name__), arg)
    g.values[name] = arg
    return name


def _attr_expr(root: str, qualname: str) -> str:
    expr = root
    for part in qualname.split("."):
        expr = f"{expr}.{part}" if part.isidentifier() and not keyword.iskeyword(part) \
            else f'getattr({expr}, "{part}")'
    return expr


def _call_args(args, kwargs, g) -> str:
    parts = [_repr_arg(a, g) for a in args]
    parts += [f"{k} = {_repr_arg(v, g)}" for k, v in kwargs.items()]
    return ", ".join(parts)


def _node_expr(node, g: _Globals, root: str) -> str:
    args, kwargs = node.args, node.kwargs
    if node.op == "get_attr":
        return _attr_expr(root, node.target)
    if node.op == "call_module":
        return f"{_attr_expr(root, node.target)}({_call_args(args, kwargs, g)})"
    if node.op == "call_method":
        return f"{_repr_arg(args[0], g)}.{node.target}({_call_args(args[1:], kwargs, g)})"
    target = node.target
    if not kwargs:
        if target in _BINARY and len(args) == 2:
            return f"{_repr_arg(args[0], g)} {_BINARY[target]} {_repr_arg(args[1], g)}"
        if target in _UNARY and len(args) == 1:
            return f"{_UNARY[target]}{_repr_arg(args[0], g)}"
        if target is operator.getitem and len(args) == 2:
            return f"{_repr_arg(args[0], g)}[{_repr_arg(args[1], g)}]"
        if target is builtins.getattr and len(args) == 2 and isinstance(args[1], str) \
                and args[1].isidentifier():
            return f"{_repr_arg(args[0], g)}.{args[1]}"
    return f"{g.name_for(target)}({_call_args(args, kwargs, g)})"


def python_code(graph, root_module: str = "self") -> PythonCode:
    """Generate ``def forward(self, ...)`` for ``graph``."""
    from .node import map_arg
    ns = _Namespace()
    for node in graph.nodes:
        ns._used.add(node.name)
    g = _Globals(ns)
    nodes = list(graph.nodes)

    # last use of every value: walk backwards, the first user met is the last one
    last_use: dict = {}
    frees: dict = {n: [] for n in nodes}
    for user in reversed(nodes):
        seen_here: list = []

        def note(n, user=user, seen_here=seen_here):
            if n not in last_use:
                last_use[n] = user
                seen_here.append(n)
        map_arg(user.args, note)
        map_arg(user.kwargs, note)
        frees[user] = seen_here

    signature, body = [root_module], []
    for node in nodes:
        if node.op == "placeholder":
            arg = node.target
            if node.args:
                arg = f"{arg} = {_repr_arg(node.args[0], g)}"
            signature.append(arg)
            plain = node.target.lstrip("*")
            if node.name != plain:
                body.append(f"{node.name} = {plain}")
            continue
        if node.op == "output":
            body.append(f"return {_repr_arg(node.args[0], g) if node.args else None}")
            continue
        line = f"{node.name} = {_node_expr(node, g, root_module)}"
        dead = [n.name for n in frees[node] if n.op != "output"]
        if dead:
            line += ";  " + " = ".join(dead) + " = None"
        body.append(line)
    if not body or not body[-1].startswith("return"):
        body.append("return None")
    src = "\n\n\ndef forward(" + ", ".join(signature) + "):\n"
    src += "".join(f"    {line}\n" for line in body) + "    "
    return PythonCode(src, g.values)
