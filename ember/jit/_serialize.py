"""Saving GraphModules (``jit.save``, ``export.save``) in a format whose loading runs no code.

# NOTE [Graph archive format]
# A zip archive with
#   <prefix>/version        "1"
#   <prefix>/graph.json     {"class_name": str, "nodes": [node...], "extra": {...}}
#                           node = {"op", "name", "target", "args", "kwargs"}; call_function
#                           targets are dotted names ("ember.nn.functional.relu",
#                           "operator.add", "builtins.getattr", "math.sqrt")
#   <prefix>/modules.json   the module tree under the root: {"class": "ember.nn.modules.
#                           linear.Linear", "attrs": {...}, "params": [...], "buffers": [...],
#                           "children": {name: tree}}
#   <prefix>/tensors.pt     ember.save({"<kind>:<path>": tensor}) of every parameter, buffer
#                           and tensor constant (kinds "param", "buffer", "const")
# Arguments are JSON with tagged forms for what JSON lacks: {"node": name}, {"tuple": [...]},
# {"slice": [start, stop, step]}, {"dtype": "float32"}, {"device": "cpu"}, {"float": "inf"},
# {"ellipsis": true}, {"fn": "ember.relu"}, {"dict": {...}}.
# Loading resolves names only inside an allowlist (ember's public namespaces, operator,
# builtins.getattr and a few other builtins, math, ember.nn Module classes), reads tensors
# with ember.load(weights_only=True), and never unpickles or evaluates code from the file.
"""
from __future__ import annotations

import builtins
import importlib
import io
import json
import math
import operator
import zipfile

import ember
from ember.fx.graph import Graph
from ember.fx.graph_module import GraphModule
from ember.fx.node import Node

FORMAT_VERSION = "1"
_BUILTINS = {"getattr": builtins.getattr, "len": builtins.len, "abs": builtins.abs,
             "max": builtins.max, "min": builtins.min, "int": builtins.int,
             "float": builtins.float}


class SerializationError(RuntimeError):
    """The module or archive cannot be saved/loaded in the graph archive format."""


# ------------------------------------------------------------------------------ names
def function_name(fn) -> str:
    from ember.fx._codegen import _public_path
    path = _public_path(fn)
    if path is not None:
        return path
    mod = getattr(fn, "__module__", None)
    name = getattr(fn, "__name__", None) or ""
    if mod in ("_operator", "operator") and getattr(operator, name, None) is fn:
        return "operator." + name
    if _BUILTINS.get(name) is fn:
        return "builtins." + name
    if mod == "math" and getattr(math, name, None) is fn:
        return "math." + name
    raise SerializationError(
        f"cannot save a call to {mod}.{getattr(fn, '__qualname__', name)}: only ember, "
        "operator and math functions can be stored (a Python function would have to be "
        "executed on load). Keep it out of the traced module or express it with ember ops.")


def resolve_function(name: str):
    head, _, rest = name.partition(".")
    fn = None
    if head == "operator":
        fn = getattr(operator, rest, None)
    elif head == "builtins":
        fn = _BUILTINS.get(rest)
    elif head == "math":
        fn = getattr(math, rest, None)
    elif head == "ember":
        from ember.fx._codegen import _public_namespaces
        prefix, _, attr = name.rpartition(".")
        spaces = dict(_public_namespaces())
        fn = getattr(spaces[prefix], attr, None) if prefix in spaces else None
    if fn is None or not callable(fn) or isinstance(fn, type):
        raise SerializationError(f"archive names the function {name!r}, which is not an "
                                 "allowed ember/operator/math function.")
    return fn


def _module_class(path: str):
    mod_name, _, cls_name = path.rpartition(".")
    if not mod_name.startswith("ember."):
        raise SerializationError(f"archive names the module class {path!r}; only ember.nn "
                                 "classes are allowed.")
    cls = getattr(importlib.import_module(mod_name), cls_name, None)
    if not (isinstance(cls, type) and issubclass(cls, ember.nn.Module)):
        raise SerializationError(f"{path!r} is not an ember.nn Module class.")
    return cls


# ------------------------------------------------------------------------------ arguments
def encode(a):
    if isinstance(a, Node):
        return {"node": a.name}
    if a is None or isinstance(a, (bool, str)):
        return a
    if isinstance(a, int):
        return int(a)
    if isinstance(a, float):
        return a if math.isfinite(a) else {"float": repr(a)}
    if isinstance(a, tuple):
        return {"tuple": [encode(e) for e in a]}
    if isinstance(a, list):
        return [encode(e) for e in a]
    if isinstance(a, dict):
        return {"dict": {str(k): encode(v) for k, v in a.items()}}
    if isinstance(a, slice):
        return {"slice": [encode(a.start), encode(a.stop), encode(a.step)]}
    if a is Ellipsis:
        return {"ellipsis": True}
    if isinstance(a, ember.dtype):
        return {"dtype": str(a).split(".")[-1]}
    if isinstance(a, ember.device):
        return {"device": str(a)}
    if callable(a) and not isinstance(a, type):
        return {"fn": function_name(a)}
    raise SerializationError(f"cannot save a value of type {type(a).__name__} ({a!r}).")


def decode(a, nodes: dict):
    if isinstance(a, list):
        return [decode(e, nodes) for e in a]
    if not isinstance(a, dict):
        return a
    if len(a) != 1:
        raise SerializationError("malformed tagged value in archive.")
    (tag, v), = a.items()
    if tag == "node":
        return nodes[v]
    if tag == "tuple":
        return tuple(decode(e, nodes) for e in v)
    if tag == "dict":
        return {k: decode(e, nodes) for k, e in v.items()}
    if tag == "slice":
        return slice(*(decode(e, nodes) for e in v))
    if tag == "float":
        return float(v)
    if tag == "ellipsis":
        return Ellipsis
    if tag == "dtype":
        dt = getattr(ember, v, None)
        if not isinstance(dt, ember.dtype):
            raise SerializationError(f"unknown dtype {v!r} in archive.")
        return dt
    if tag == "device":
        return ember.device(v)
    if tag == "fn":
        return resolve_function(v)
    raise SerializationError(f"unknown tag {tag!r} in archive.")


# ------------------------------------------------------------------------------ graph
def graph_to_json(graph: Graph) -> list:
    out = []
    for n in graph.nodes:
        target = function_name(n.target) if n.op == "call_function" else n.target
        out.append({"op": n.op, "name": n.name, "target": target,
                    "args": encode(n.args), "kwargs": encode(n.kwargs)})
    return out


def graph_from_json(items: list) -> Graph:
    g = Graph()
    nodes: dict = {}
    for item in items:
        op = item["op"]
        if op not in ("placeholder", "get_attr", "call_function", "call_method",
                      "call_module", "output"):
            raise SerializationError(f"unknown node kind {op!r} in archive.")
        if op == "call_function":
            target = resolve_function(item["target"])
        else:
            target = item["target"]
            if not isinstance(target, str):
                raise SerializationError("node target must be a string.")
        node = g.create_node(op, target, decode(item["args"], nodes),
                             decode(item["kwargs"], nodes), name=item["name"])
        nodes[item["name"]] = node
    return g


# ------------------------------------------------------------------------------ modules
_SKIP_ATTRS = {"_parameters", "_buffers", "_modules", "_non_persistent_buffers_set",
               "_graph", "_code", "meta"}


def module_to_json(m, path: str, tensors: dict) -> dict:
    attrs = {}
    for k, v in m.__dict__.items():
        if k in _SKIP_ATTRS:
            continue
        if "hook" in k and isinstance(v, (dict, set)):
            if v and isinstance(v, dict):
                raise SerializationError(f"cannot save module {path or 'root'}: it has {k} "
                                         "(hooks are Python code).")
            continue
        if isinstance(v, ember.Tensor):
            tensors[f"const:{path}{k}"] = v.detach()
            attrs[k] = {"tensor": f"const:{path}{k}"}
            continue
        try:
            attrs[k] = encode(v)
        except SerializationError as e:
            raise SerializationError(f"cannot save attribute {path}{k} of "
                                     f"{type(m).__name__}: {e}") from None
    for k, p in m._parameters.items():
        if p is not None:
            tensors[f"param:{path}{k}"] = p.detach()
    for k, b in m._buffers.items():
        if b is not None:
            tensors[f"buffer:{path}{k}"] = b
    cls = type(m)
    cls_path = "ember.nn.modules.module.Module" if isinstance(m, GraphModule) else \
        f"{cls.__module__}.{cls.__qualname__}"
    return {"class": cls_path, "attrs": attrs,
            "params": [k for k, p in m._parameters.items() if p is not None],
            "buffers": [k for k, b in m._buffers.items() if b is not None],
            "children": {k: module_to_json(c, f"{path}{k}.", tensors)
                         for k, c in m._modules.items() if c is not None}}


def module_from_json(tree: dict, path: str, tensors: dict):
    cls = _module_class(tree["class"])
    m = cls.__new__(cls)
    ember.nn.Module.__init__(m)
    for k, v in tree["attrs"].items():
        if isinstance(v, dict) and "tensor" in v:
            object.__setattr__(m, k, tensors[v["tensor"]])
        else:
            object.__setattr__(m, k, decode(v, {}))
    for k in tree["params"]:
        m._parameters[k] = ember.nn.Parameter(tensors[f"param:{path}{k}"])
    for k in tree["buffers"]:
        m._buffers[k] = tensors[f"buffer:{path}{k}"]
    for k, sub in tree["children"].items():
        m._modules[k] = module_from_json(sub, f"{path}{k}.", tensors)
    return m


# ------------------------------------------------------------------------------ archive
def save_archive(gm: GraphModule, f, prefix: str, extra: dict | None = None,
                 extra_tensors: dict | None = None) -> None:
    tensors: dict = {}
    tree = module_to_json(gm, "", tensors)
    for k, v in (extra_tensors or {}).items():
        tensors["extra:" + k] = v.detach()
    graph = {"class_name": type(gm).__name__, "nodes": graph_to_json(gm.graph),
             "extra": extra or {}}
    buf = io.BytesIO()
    ember.save(tensors, buf)
    with zipfile.ZipFile(f, "w") as z:
        z.writestr(f"{prefix}/version", FORMAT_VERSION)
        z.writestr(f"{prefix}/graph.json", json.dumps(graph))
        z.writestr(f"{prefix}/modules.json", json.dumps(tree))
        z.writestr(f"{prefix}/tensors.pt", buf.getvalue())


def load_archive(f, prefix: str, with_extra_tensors: bool = False):
    """Returns (root Module, Graph, class_name, extra[, extra tensors])."""
    try:
        z = zipfile.ZipFile(f)
    except zipfile.BadZipFile as e:
        raise SerializationError(f"not a {prefix} archive (not a zip file).") from e
    with z:
        names = set(z.namelist())
        if f"{prefix}/graph.json" not in names:
            raise SerializationError(f"not a {prefix} archive: {prefix}/graph.json missing.")
        version = z.read(f"{prefix}/version").decode()
        if version != FORMAT_VERSION:
            raise SerializationError(f"unsupported archive version {version!r}; expected "
                                     f"{FORMAT_VERSION!r}.")
        graph_doc = json.loads(z.read(f"{prefix}/graph.json"))
        tree = json.loads(z.read(f"{prefix}/modules.json"))
        tensors = ember.load(io.BytesIO(z.read(f"{prefix}/tensors.pt")), weights_only=True)
    root = module_from_json(tree, "", tensors)
    graph = graph_from_json(graph_doc["nodes"])
    out: tuple = (root, graph, graph_doc["class_name"], graph_doc.get("extra", {}))
    if with_extra_tensors:
        out += ({k[len("extra:"):]: v for k, v in tensors.items() if k.startswith("extra:")},)
    return out
