"""torch's argument-parser names, read from the type stubs it ships, and a check that ember's
callables accept every call form those stubs describe (used by test_keyword_binding.py; run
`python tests/compat/_stubs.py` to print the forms ember rejects).

torch's C builtins (``torch.reshape``, ``Tensor.permute``) take the parameter names of its
native function schema, one overload per schema, and the stubs ``torch/_C/_VariableFunctions.pyi``
and the ``TensorBase`` class of ``torch/_C/__init__.pyi`` spell out exactly those overloads. Their
docstrings do not always (``Tensor.mul(value)`` documents a name the parser rejects), so the
stubs are the oracle here. Each overload gives two call forms, checked by binding, not calling:
every parameter by keyword (positional-only ones and ``*size`` positionally), and every parameter
positionally up to the keyword-only ones. Overloads of named tensors (a ``names`` parameter, a
``Dimname`` dim spelled ``str | EllipsisType``) are left out: ember has no named tensors
(docs/DEVIATIONS.md).
"""
from __future__ import annotations

import ast
import inspect
import os

_P = inspect.Parameter


_NO_DEFAULT = object()


def _default(node):
    """A stub default's value when it is a literal (``False``, ``None``), else _NO_DEFAULT."""
    try:
        return ast.literal_eval(node)
    except ValueError:
        return _NO_DEFAULT


def _param_list(fn: ast.FunctionDef, drop_self: bool, defaults: bool = False):
    a = fn.args
    positional = list(a.posonlyargs) + list(a.args)
    n_defaults = len(a.defaults)
    out = []
    for i, arg in enumerate(positional):
        kind = _P.POSITIONAL_ONLY if i < len(a.posonlyargs) else _P.POSITIONAL_OR_KEYWORD
        has_default = i >= len(positional) - n_defaults
        out.append((arg.arg, kind, has_default, ast.unparse(arg.annotation or ast.Constant(""))))
        if defaults:
            d = a.defaults[i - len(positional) + n_defaults] if has_default else None
            out[-1] += (_default(d) if has_default else _NO_DEFAULT,)
    if a.vararg is not None:
        out.append((a.vararg.arg, _P.VAR_POSITIONAL, True, ""))
        if defaults:
            out[-1] += (_NO_DEFAULT,)
    for arg, d in zip(a.kwonlyargs, a.kw_defaults):
        out.append((arg.arg, _P.KEYWORD_ONLY, d is not None,
                    ast.unparse(arg.annotation or ast.Constant(""))))
        if defaults:
            out[-1] += (_NO_DEFAULT if d is None else _default(d),)
    if drop_self and out and out[0][0] == "self":
        out = out[1:]
    if drop_self:   # a method's out= is a stub artefact: the parser rejects x.add(y, out=z)
        out = [p for p in out if p[0] != "out"]
    elif out and out[0][0] == "self":   # a function's `self` is parsed as `input`
        out[0] = ("input",) + out[0][1:]
    return out


def _left_out(params) -> bool:
    """Named-tensor overloads, and the deprecated scalar-first ones (``addmm(beta, self, ...)``,
    ``where(condition, self, other)``) whose tensor is a `self` after other parameters."""
    return any(p[0] == "names" or "EllipsisType" in p[3] for p in params) or any(
        p[0] == "self" for p in params[1:])


def read_overloads(torch, defaults: bool = False):
    """{'torch': {name: [overload params]}, 'Tensor': {...}} from torch's stubs; each overload
    is a list of (name, kind, has_default, annotation text), and with ``defaults`` the default's
    value too (_NO_DEFAULT when there is none or it is not a literal)."""
    base = os.path.join(os.path.dirname(torch.__file__), "_C")
    out = {"torch": {}, "Tensor": {}}
    with open(os.path.join(base, "_VariableFunctions.pyi")) as f:
        tree = ast.parse(f.read())
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            ps = _param_list(node, False, defaults)
            if not _left_out(ps):
                out["torch"].setdefault(node.name, []).append(ps)
    with open(os.path.join(base, "__init__.pyi")) as f:
        tree = ast.parse(f.read())
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "TensorBase":
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and not item.name.startswith("_"):
                    ps = _param_list(item, True, defaults)
                    if not _left_out(ps):
                        out["Tensor"].setdefault(item.name, []).append(ps)
    return out


def call_forms(params):
    """(label, positional count, keyword names) of the forms one overload allows."""
    varargs = any(k is _P.VAR_POSITIONAL for _n, k, _d, _a in params)
    forms = []
    pos = [n for n, k, _d, _a in params if k is _P.POSITIONAL_ONLY]
    if varargs:
        lead = [n for n, k, _d, _a in params if k in (_P.POSITIONAL_ONLY,
                                                        _P.POSITIONAL_OR_KEYWORD)]
        kw = [n for n, k, _d, _a in params if k is _P.KEYWORD_ONLY]
        forms.append(("*varargs", len(lead) + 2, kw))
        return forms
    by_kw = [n for n, k, _d, _a in params if k is not _P.POSITIONAL_ONLY]
    forms.append(("keywords", len(pos), by_kw))
    npos = sum(k in (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD) for _n, k, _d, _a in params)
    kwonly = [n for n, k, _d, _a in params if k is _P.KEYWORD_ONLY]
    forms.append(("positional", npos, kwonly))
    return forms


def effective_signature(fn, name, namespace):
    """The signature that really binds a call of ember's ``fn``: a registered op kept on the
    registry's generic (*args, out=None, **kwargs) wrapper binds through its implementation."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    ps = list(sig.parameters.values())
    generic = ps and ps[0].kind is _P.VAR_POSITIONAL and any(
        p.kind is _P.VAR_KEYWORD for p in ps)
    if not generic:
        return sig
    from ember.ops import registry
    impl = registry.IMPLS.get(name)
    if impl is None:
        return sig
    owner = getattr(impl, "__self__", None)
    try:
        if isinstance(owner, type) and hasattr(owner, "forward"):
            inner = list(inspect.signature(owner.forward).parameters.values())[1:]
        else:
            inner = list(inspect.signature(impl).parameters.values())
    except (TypeError, ValueError):
        return sig
    if namespace == "Tensor" and inner:
        inner = inner[0:]
    if not any(p.name == "out" for p in inner):
        inner.append(_P("out", _P.KEYWORD_ONLY, default=None))
    inner.sort(key=lambda p: p.kind)
    return inspect.Signature(inner)


def rejected_forms(ember, torch):
    """{namespace: {name: 'form: reason'}} of stub call forms ember's callable cannot bind."""
    overloads = read_overloads(torch)
    out = {}
    for ns, table in overloads.items():
        owner = ember if ns == "torch" else ember.Tensor
        for name, ols in sorted(table.items()):
            theirs = getattr(torch if ns == "torch" else torch.Tensor, name, None)
            ours = getattr(owner, name, None)
            if ours is None or theirs is None or not callable(ours):
                continue
            if ns == "Tensor" and isinstance(inspect.getattr_static(owner, name), property):
                continue
            sig = effective_signature(ours, name, ns)
            if sig is None:
                continue
            problems = []
            for ps in ols:
                for label, npos, kws in call_forms(ps):
                    args = list(range(npos + (1 if ns == "Tensor" else 0)))
                    try:
                        sig.bind(*args, **{k: None for k in kws})
                    except TypeError as e:
                        shown = ", ".join([f"<{npos} positional>"] + kws)
                        problems.append(f"{label} ({shown}): {e}")
            if problems:
                out.setdefault(ns, {})[name] = sorted(set(problems))
    return out


if __name__ == "__main__":
    import torch as _torch

    import ember as _ember

    found = rejected_forms(_ember, _torch)
    for ns, names in found.items():
        print(f"# {ns}: {len(names)}")
        for name, problems in names.items():
            print(f"{ns}.{name}: {problems[0]}" + (f" (+{len(problems) - 1})"
                                                  if len(problems) > 1 else ""))
