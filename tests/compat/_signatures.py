"""Compare the signatures of ember's public callables with torch 2.13's (used by
test_signatures.py and by `python tests/compat/_signatures.py`, which prints the mismatches in
signature_gaps.py's format).

torch's Python functions and classes give ``inspect.signature``; its C builtins do not, and for
those the first signature line of the docstring (``add(input, other, *, alpha=1, out=None)``) is
read instead. Compared: parameter names and order, kinds (positional-only, positional-or-keyword,
``*args``, keyword-only, ``**kwargs``) and defaults. A callable whose torch signature cannot be
read is not compared.
"""
from __future__ import annotations

import ast
import inspect
import math
import re

_EMPTY = inspect.Parameter.empty
_P = inspect.Parameter


# ------------------------------------------------------------------ namespaces
def namespaces(ember, torch):
    """(key, ember object, torch object, member kind) per compared namespace; member kind is
    'function' (public callables), 'method' (Tensor methods, self dropped) or 'init' (the
    constructors of the public classes)."""
    import torch.distributions
    import torch.optim.lr_scheduler
    import torch.utils.data

    import ember.distributions
    import ember.linalg
    import ember.nn.functional
    import ember.optim.lr_scheduler
    import ember.special
    import ember.utils.data

    return [
        ("torch", ember, torch, "function"),
        ("Tensor", ember.Tensor, torch.Tensor, "method"),
        ("nn.functional", ember.nn.functional, torch.nn.functional, "function"),
        ("nn", ember.nn, torch.nn, "init"),
        ("linalg", ember.linalg, torch.linalg, "function"),
        ("special", ember.special, torch.special, "function"),
        ("optim", ember.optim, torch.optim, "init"),
        ("optim.lr_scheduler", ember.optim.lr_scheduler, torch.optim.lr_scheduler, "init"),
        ("utils.data", ember.utils.data, torch.utils.data, "function+init"),
        ("distributions", ember.distributions, torch.distributions, "init"),
    ]


def _public(obj, torch_obj):
    names = getattr(torch_obj, "__all__", None)
    if names is None or isinstance(torch_obj, type):
        names = [n for n in dir(torch_obj) if not n.startswith("_")]
    return sorted(n for n in names if not n.startswith("_") and hasattr(obj, n))


def members(ember_ns, torch_ns, kind):
    """name -> (ember callable, torch callable, drop_self) for names both have."""
    out = {}
    for name in _public(ember_ns, torch_ns):
        theirs = getattr(torch_ns, name, None)
        ours = getattr(ember_ns, name, None)
        if theirs is None or ours is None:
            continue
        if isinstance(theirs, type):
            if "init" not in kind or not isinstance(ours, type):
                continue
            if theirs.__init__ is object.__init__:
                continue
            out[name] = (ours.__init__, theirs.__init__, True)
        elif callable(theirs) and callable(ours):
            if "function" in kind:
                out[name] = (ours, theirs, False)
            elif kind == "method" and not isinstance(inspect.getattr_static(
                    torch_ns, name, None), (property, type(torch_ns.__dict__.get("T")))):
                out[name] = (ours, theirs, True)
    return out


# ------------------------------------------------------------------ reading signatures
_SIG_START = re.compile(r"^\s*(?:[\w.]+\.)?(\w+)\(")


def _sig_line(line):
    """(name, text between the call's parentheses) of a docstring signature line, or None."""
    m = _SIG_START.match(line)
    if not m:
        return None
    depth, start = 0, m.end() - 1
    for k in range(start, len(line)):
        depth += {"(": 1, ")": -1}.get(line[k], 0)
        if depth == 0:
            rest = line[k + 1:].strip()
            if rest and not rest.startswith("->"):
                return None
            return m.group(1), line[start + 1:k]
    return None


def _literal(text):
    text = text.strip()
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        pass
    table = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan, "True": True, "False": False,
             "None": None, "torch.strided": "strided", "torch.preserve_format": "preserve_format",
             "torch.contiguous_format": "contiguous_format"}
    return table.get(text, _Unparsed(text))


class _Unparsed(str):
    """A default written as an expression the reader does not evaluate; compared as text."""


def _split(args: str):
    parts, depth, cur = [], 0, ""
    for ch in args:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


def doc_signature(fn, name):
    """The first ``name(...)`` line of a builtin's docstring as an inspect.Signature."""
    doc = (getattr(fn, "__doc__", None) or "").replace("\\*", "*")
    for line in doc.splitlines()[:6]:
        m = _sig_line(line)
        if not m or m[0] != name:
            continue
        params, kind = [], _P.POSITIONAL_OR_KEYWORD
        try:
            for part in _split(m[1]):
                if part == "*":
                    kind = _P.KEYWORD_ONLY
                    continue
                if part == "/":
                    params = [p.replace(kind=_P.POSITIONAL_ONLY) for p in params]
                    continue
                ptext, _, default = part.partition("=")
                pname = ptext.split(":")[0].strip()
                if pname.startswith("**"):
                    params.append(_P(pname[2:], _P.VAR_KEYWORD))
                elif pname.startswith("*"):
                    params.append(_P(pname[1:], _P.VAR_POSITIONAL))
                    kind = _P.KEYWORD_ONLY
                else:
                    if not pname.isidentifier():
                        return None
                    params.append(_P(pname, kind, default=_literal(default) if default
                                     else _EMPTY))
            return inspect.Signature(params)
        except ValueError:
            return None
    return None


def _only_varargs(params) -> bool:
    return bool(params) and all(p.kind in (_P.VAR_POSITIONAL, _P.VAR_KEYWORD) for p in params)


def signature_of(fn, name, drop_self):
    """torch's parameters (self dropped), and whether they were read from the docstring.
    None when unreadable, or when torch itself only says (*args, **kwargs) (overloads)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = None
    if params is not None and drop_self and params and params[0].name == "self":
        params = params[1:]
    if params is not None and not _only_varargs(params):
        return params, False
    sig = doc_signature(fn, name)
    if sig is None:
        return None
    params = list(sig.parameters.values())
    if drop_self and params and params[0].name == "self":
        params = params[1:]
    return (None if _only_varargs(params) else params), True


# ------------------------------------------------------------------ comparing
def _same_default(a, b) -> bool:
    if a is _EMPTY or b is _EMPTY:
        return a is b
    if isinstance(a, _Unparsed) or isinstance(b, _Unparsed):
        return True       # an expression in torch's docs: not compared
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    for x, y in ((a, b), (b, a)):
        mod = type(x).__module__ or ""
        if mod.startswith(("torch", "ember")):   # dtypes, layouts, generators: by name
            if isinstance(x, type) or type(x).__repr__ is object.__repr__ or "object at" in repr(x):
                return type(x).__name__ == type(y).__name__
            return str(x).split(".")[-1] == str(y).split(".")[-1]
    if callable(a) or callable(b):
        return getattr(a, "__name__", a) == getattr(b, "__name__", b)
    try:
        return bool(a == b) and type(a) is type(b) or (
            isinstance(a, (int, float)) and isinstance(b, (int, float)) and a == b
            and not isinstance(a, bool) and not isinstance(b, bool))
    except Exception:
        return repr(a) == repr(b)


def _fmt(params) -> str:
    return "(" + ", ".join(_fmt_param(p) for p in params) + ")"


def _fmt_param(p) -> str:
    star = {_P.VAR_POSITIONAL: "*", _P.VAR_KEYWORD: "**"}.get(p.kind, "")
    kw = "kw:" if p.kind is _P.KEYWORD_ONLY else ""
    pos = "/" if p.kind is _P.POSITIONAL_ONLY else ""
    d = "" if p.default is _EMPTY else f"={p.default!r}"
    return f"{kw}{star}{p.name}{pos}{d}"


def compare(ours, theirs, from_doc: bool):
    """None when the signatures agree, else a one-line description of the first difference."""
    if [p.name for p in ours] != [p.name for p in theirs]:
        return f"names {_fmt(ours)} vs torch {_fmt(theirs)}"
    for a, b in zip(ours, theirs):
        ka, kb = a.kind, b.kind
        if from_doc and b.default is _EMPTY and kb is _P.KEYWORD_ONLY:
            b = b.replace(default=a.default)   # builtin docs often leave out `out=None`
        if from_doc and {ka, kb} <= {_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD}:
            pass    # builtin docs rarely mark positional-only parameters
        elif ka is not kb:
            return f"kind of {a.name}: {ka.description} vs torch {kb.description}"
        if not _same_default(a.default, b.default):
            return f"default of {a.name}: {a.default!r} vs torch {b.default!r}"
    return None


def mismatches(ember, torch):
    """{namespace: {name: difference}} and the number of callables compared. A builtin that
    torch's type stubs describe is left to test_keyword_binding.py, whose oracle (the stubs'
    overloads, the names the parser really takes) is truer than the docstring's first line."""
    from _stubs import read_overloads
    stubbed = read_overloads(torch)
    out, compared = {}, 0
    for key, ours_ns, theirs_ns, kind in namespaces(ember, torch):
        for name, (ours, theirs, drop_self) in members(ours_ns, theirs_ns, kind).items():
            read = signature_of(theirs, name if not isinstance(getattr(theirs_ns, name), type)
                                else "__init__", drop_self)
            if read is None or read[0] is None:
                continue
            t, from_doc = read
            if from_doc and name in stubbed.get(key, {}):
                continue
            try:
                o = inspect.signature(ours)
            except (TypeError, ValueError):
                out.setdefault(key, {})[name] = "no signature in ember"
                compared += 1
                continue
            o = list(o.parameters.values())
            # a method's first parameter receives the tensor, whatever ember calls it
            if drop_self and o and o[0].kind in (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD):
                o = o[1:]
            diff = compare(o, t, from_doc)
            compared += 1
            if diff:
                out.setdefault(key, {})[name] = diff
    return out, compared


# who owns the code behind a mismatch this session (COORD.md), by the defining module
_OWNERS = [
    ("ember.ops.registry", "WRAPPER"),
    ("ember.nn", "nnrest"), ("ember.ops.nn", "nnrest"),
    ("ember.ops.linalg", "linalg"), ("ember.linalg", "linalg"),
    ("ember.fft", "fft"), ("ember.ops.fft", "fft"), ("ember.ops.signal", "fft"),
    ("ember.ops.complex", "complex"), ("ember.func", "vmap"),
    ("ember._tensor_surface", "surface"), ("ember.ops.numeric", "surface"),
    ("ember._info", "surface"), ("ember.utils.data", "surface"),
    ("ember.distributions", "surface"), ("ember.optim", "surface"),
    ("ember._compile", "compile"), ("ember._dynamo", "compile"),
]


def owner(fn, params) -> str:
    """The reason class of a mismatch: WRAPPER (the registry's generic (*args, **kwargs)
    wrapper), the owning helper's name, or 'unowned'."""
    if _only_varargs(params) or any(p.name in ("args", "params") and p.kind is _P.VAR_POSITIONAL
                                    for p in params[:1]):
        return "WRAPPER"
    mod = getattr(fn, "__module__", None) or ""
    if getattr(fn, "__qualname__", "").startswith(("m.", "_method.", "_inplace_method.")):
        mod = "ember.ops.registry"
    for prefix, who in _OWNERS:
        if mod == prefix or mod.startswith(prefix + "."):
            return who
    return "unowned"


def classified(ember, torch):
    """{namespace: {name: (owner class, difference)}} over every namespace."""
    found, n = mismatches(ember, torch)
    out = {}
    for key, ours_ns, theirs_ns, kind in namespaces(ember, torch):
        got = members(ours_ns, theirs_ns, kind)
        for name, diff in found.get(key, {}).items():
            fn = got[name][0]
            try:
                params = list(inspect.signature(fn).parameters.values())
            except (TypeError, ValueError):
                params = []
            out.setdefault(key, {})[name] = (owner(fn, params), diff)
    return out, n


if __name__ == "__main__":
    import torch as _torch

    import ember as _ember

    table, n = classified(_ember, _torch)
    print(f"# {n} callables compared, {sum(map(len, table.values()))} differ")
    print("SIGNATURE_GAPS = {")
    for key, names in table.items():
        print(f"    {key!r}: {{")
        for name, (who, _diff) in sorted(names.items()):
            print(f"        {name!r}: {who},")
        print("    },")
    print("}")
