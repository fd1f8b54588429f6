"""List every attribute of ember.Tensor and where it is defined (file: function or class).

Tensor's class body (ember/_tensor.py) holds the Tensor-specific protocol; most methods are
attached by the op registry (``register(..., method=True)`` in ember/ops) and a few modules set
attributes directly. This listing makes each of them findable from one place.

    python tools/tensor_methods.py                 # print the listing (markdown table)
    python tools/tensor_methods.py | grep tanh     # where Tensor.tanh comes from

Op classes made by ``unary_op`` are listed by class name (``Tanh``); their source is the
decorated ``def tanh`` in the file shown. tests/test_tensor_methods.py checks that every
attribute resolves to a file.
"""
from __future__ import annotations

import argparse
import inspect
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SKIP = {"__dict__", "__module__", "__weakref__", "__doc__", "__annotations__"}


def _unwrap(obj):
    """The function or Op class behind a registry wrapper (closures named fn/impl/f)."""
    for _ in range(5):
        if isinstance(obj, (property, classmethod, staticmethod)):
            obj = obj.fget if isinstance(obj, property) else obj.__func__
            continue
        if getattr(obj, "_ember_impl", None) is not None:  # a generated registry wrapper
            obj = obj._ember_impl
            continue
        code = getattr(obj, "__code__", None)
        if code is None:
            break
        cells = dict(zip(code.co_freevars, obj.__closure__ or (), strict=True))
        inner = None
        for key in ("impl", "fn", "f"):
            if key in cells:
                inner = cells[key].cell_contents
                break
        if inner is None or inner is obj:
            break
        obj = inner
    return getattr(obj, "__self__", obj)  # Op.apply is bound to its Op class


def _where(obj):
    target = _unwrap(obj)
    try:
        path = inspect.getsourcefile(target)
    except TypeError:
        return None
    if path is None:
        return None
    rel = os.path.relpath(path, ROOT)
    name = getattr(target, "__qualname__", getattr(target, "__name__", ""))
    return f"{rel}: {name}"


def rows():
    """(attribute, 'file: name') for every attribute Tensor defines or is given."""
    from ember import Tensor
    out = []
    for name in sorted(set(dir(Tensor)) - set(dir(object)) - _SKIP | {"__init__", "__repr__"}):
        attr = inspect.getattr_static(Tensor, name)
        owner = next(k for k in Tensor.__mro__ if name in vars(k))
        if owner is not Tensor:
            continue
        where = _where(attr)
        if where is None and name in _class_body_names():
            where = "ember/_tensor.py: Tensor (class attribute)"
        elif where is None and not callable(attr) and not isinstance(attr, property):
            where = f"constant {attr!r} (set on the class by a module; grep the name)"
        out.append((name, where))
    return out


def _class_body_names():
    import ast
    src = open(os.path.join(ROOT, "ember", "_tensor.py")).read()
    for node in ast.parse(src).body:
        if isinstance(node, ast.ClassDef) and node.name == "Tensor":
            names = set()
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.ClassDef)):
                    names.add(item.name)
                elif isinstance(item, ast.Assign):
                    names.update(t.id for t in item.targets if isinstance(t, ast.Name))
            return names
    return set()


def main(argv=None):
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    sys.path.insert(0, ROOT)
    print("| attribute | defined in |")
    print("|---|---|")
    for name, where in rows():
        print(f"| `{name}` | {where or '?'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
