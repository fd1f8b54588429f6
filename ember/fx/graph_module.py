"""``ember.fx.GraphModule``: a Module whose ``forward`` is Python generated from a Graph."""
from __future__ import annotations

import copy
import linecache
from pathlib import Path
from typing import Any

from ember.nn import Module

from .graph import Graph, PythonCode

__all__ = ["GraphModule"]

_counter = [0]


def _exec_code(src: str, globals_: dict) -> dict:
    """Run generated source with a fake filename registered in linecache (so tracebacks show
    the generated line)."""
    _counter[0] += 1
    key = f"<eval_with_key>.{_counter[0]}"
    linecache.cache[key] = (len(src), None, src.splitlines(True), key)
    namespace = dict(globals_)
    exec(compile(src, key, "exec"), namespace)
    return namespace


def _copy_attr(src: Module, dst: Module, target: str) -> None:
    """Copy ``src.<target>`` (a dotted path) onto ``dst``, creating plain Modules in between."""
    *prefix, field = target.split(".")
    for item in prefix:
        f = getattr(src, item)
        t = getattr(dst, item, None)
        if f is t:
            return
        if t is None:
            t = Module()
            setattr(dst, item, t)
        src, dst = f, t
    orig = getattr(src, field)
    import ember
    if isinstance(orig, ember.Tensor) and not isinstance(orig, ember.nn.Parameter) and \
            field in getattr(src, "_buffers", {}):
        dst.register_buffer(field, orig)
    else:
        setattr(dst, field, orig)


def _assign_attr(obj: Any, dst: Module, target: str) -> None:
    *prefix, field = target.split(".")
    for item in prefix:
        t = getattr(dst, item, None)
        if t is None:
            t = Module()
            setattr(dst, item, t)
        dst = t
    setattr(dst, field, obj)


class GraphModule(Module):
    """A Module built from a root (Module or dict of attributes) and a Graph.

    ``code`` holds the generated ``forward``; after editing ``graph`` call ``recompile()``.

    Example:
        >>> import ember
        >>> from ember.fx import symbolic_trace
        >>> gm = symbolic_trace(ember.nn.Sequential(ember.nn.Linear(2, 2), ember.nn.ReLU()))
        >>> print(gm.code.strip())
        def forward(self, input):
            input_1 = input
            _0 = getattr(self, "0")(input_1);  input_1 = None
            _1 = getattr(self, "1")(_0);  _0 = None
            return _1
    """

    def __new__(cls, *args, **kwargs):
        # every instance gets its own class, so that assigning ``forward`` (recompile) on it
        # does not affect other GraphModules
        for base in cls.__mro__:
            if base.__name__ == "GraphModuleImpl":
                break
        else:
            cls = type("GraphModuleImpl", (cls,), {})
        return super().__new__(cls)

    def __init__(self, root, graph: Graph, class_name: str = "GraphModule"):
        super().__init__()
        type(self).__name__ = class_name
        type(self).__qualname__ = class_name
        if isinstance(root, Module):
            if hasattr(root, "training"):
                self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError(f"Node {node} referenced target {node.target} but "
                                           "that target was not provided in ``root``!")
                    _assign_attr(root[node.target], self, node.target)
        else:
            raise RuntimeError("Unsupported type " + str(root) + " passed for root!")
        self.meta: dict = {}
        self.graph = graph

    # ----------------------------------------------------------------- graph and code
    @property
    def graph(self) -> Graph:
        return self._graph

    @graph.setter
    def graph(self, g: Graph) -> None:
        if not isinstance(g, Graph):
            raise TypeError(f"GraphModule.graph: expected a Graph; got {type(g).__name__}.")
        object.__setattr__(self, "_graph", g)
        g.owning_module = self
        self.recompile()

    @property
    def code(self) -> str:
        """The Python source of ``forward``."""
        return self._code

    def recompile(self) -> PythonCode:
        """Regenerate ``forward`` from ``self.graph`` (call after editing the graph)."""
        python_code = self._graph.python_code(root_module="self")
        object.__setattr__(self, "_code", python_code.src)
        namespace = _exec_code(python_code.src, python_code.globals)
        type(self).forward = namespace["forward"]  # type: ignore[method-assign]
        return python_code

    def print_readable(self, print_output: bool = True, include_stride: bool = False,
                       include_device: bool = False, colored: bool = False) -> str:
        """The module as a class definition (submodules that are GraphModules nested)."""
        out = self._readable(type(self).__name__)
        if print_output:
            print(out)
        return out

    def _readable(self, name: str) -> str:
        body = self._code.strip("\n").rstrip()
        lines = [f"class {name}(ember.nn.Module):"]
        for sub_name, sub in self.named_children():
            if isinstance(sub, GraphModule):
                lines += ["    " + line for line in sub._readable(sub_name).splitlines()]
                lines.append("")
        lines += ["    " + line for line in body.splitlines()]
        return "\n".join(lines) + "\n"

    def to_folder(self, folder, module_name: str = "FxModule") -> None:
        """Write ``module.py`` (source) and the weights (``state_dict.pt``) into ``folder``:
        ``from folder import <module_name>`` then recreates the module."""
        import ember
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        ember.save(self.state_dict(), folder / "state_dict.pt")
        lines = ["import ember", "from ember.nn import *", "", "",
                 f"class {module_name}(ember.nn.Module):", "    def __init__(self):",
                 "        super().__init__()"]
        for name, mod in self.named_children():
            if isinstance(mod, GraphModule):
                raise RuntimeError(f"to_folder: nested GraphModule {name!r} is not supported.")
            lines.append(f"        setattr(self, {name!r}, {_module_repr(mod)})")
        for name, p in self._parameters.items():
            lines.append(f"        self.{name} = ember.nn.Parameter(ember.empty("
                         f"{tuple(p.shape)}, dtype=ember.{str(p.dtype).split('.')[-1]}))")
        for name, b in self._buffers.items():
            lines.append(f"        self.register_buffer({name!r}, ember.empty("
                         f"{tuple(b.shape)}, dtype=ember.{str(b.dtype).split('.')[-1]}))")
        lines.append("        self.load_state_dict(ember.load(__file__[:-len('module.py')] + "
                     "'state_dict.pt'))")
        code = "\n".join("    " + line for line in self._code.strip("\n").splitlines())
        src = "\n".join(lines) + "\n\n" + code.rstrip() + "\n"
        (folder / "module.py").write_text(src)
        (folder / "__init__.py").write_text(f"from .module import {module_name}\n")

    # ----------------------------------------------------------------- submodules
    def add_submodule(self, target: str, m: Module) -> bool:
        """Install ``m`` at dotted path ``target`` (creating empty Modules on the way); False
        if a non-Module attribute is in the way."""
        *prefix, field = target.split(".")
        mod: Module = self
        for item in prefix:
            sub = getattr(mod, item, None)
            if sub is None:
                sub = Module()
                mod.add_module(item, sub)
            if not isinstance(sub, Module):
                return False
            mod = sub
        mod.add_module(field, m)
        return True

    def delete_submodule(self, target: str) -> bool:
        """Remove the submodule at ``target``; False if it does not exist."""
        *path, leaf = target.split(".")
        mod: Module = self
        for item in path:
            sub = getattr(mod, item, None)
            if not isinstance(sub, Module):
                return False
            mod = sub
        if not isinstance(getattr(mod, leaf, None), Module):
            return False
        delattr(mod, leaf)
        return True

    def delete_all_unused_submodules(self) -> None:
        """Drop submodules that no call_module/get_attr node (or their parents) refers to."""
        used: set = set()
        for node in self._graph.nodes:
            if node.op in ("call_module", "get_attr"):
                atoms = node.target.split(".")
                for i in range(1, len(atoms) + 1):
                    used.add(".".join(atoms[:i]))
                if node.op == "call_module":
                    sub = self.get_submodule(node.target)
                    used.update(f"{node.target}.{n}" for n, _ in sub.named_modules() if n)
        for name, _ in reversed(list(self.named_modules())):
            if name and name not in used:
                self.delete_submodule(name)

    # ----------------------------------------------------------------- copies and printing
    def __deepcopy__(self, memo):
        import ember
        res = GraphModule(self, copy.deepcopy(self._graph, memo), type(self).__name__)
        for table in ("_modules", "_parameters", "_buffers"):
            d = res.__dict__[table]
            for name in list(d):
                d[name] = copy.deepcopy(d[name], memo)
        for name, value in list(res.__dict__.items()):
            if isinstance(value, ember.Tensor):
                res.__dict__[name] = copy.deepcopy(value, memo)
        res.meta = copy.deepcopy(self.meta, memo)
        res.training = self.training
        return res

    def __copy__(self):
        return GraphModule(self, self._graph, type(self).__name__)

    def __reduce__(self):
        raise TypeError("GraphModule objects are not pickled: save the graph with "
                        "ember.jit.save(ember.jit.script(module), f) or ember.export.save.")

    def __str__(self) -> str:
        return super().__str__() + "\n\n\n" + self._code

    def __repr__(self) -> str:
        return Module.__repr__(self)


def _module_repr(mod) -> str:
    text = repr(mod)
    if "\n" in text:
        raise RuntimeError(f"to_folder: cannot write container module {type(mod).__name__}; "
                           "flatten it first.")
    return text


