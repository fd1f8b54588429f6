"""Guards on the Python state a compiled call may have read (NOTE [Guards on Python state]).

NOTE [Guards on Python state]
A replay repeats the ops of the captured call. The Python values that call read -- a global
float, a closure cell, a module attribute such as a temperature, the length of a list a loop
ran over, the flag a branch tested -- are baked into it, and the tensors outside the call that
it read (parameters, buffers, closure and global tensors) are the objects seen then. torch's
compiler guards on what its bytecode analysis saw read; ember's recorder sees ops, not Python
reads, so the guard covers what the call *could* have read. From the function -- its closure
cells, the globals its code and the code nested in it load, the same for the user
functions found that way and for the methods of the program's module classes, a bound method's
object -- and from the call's non-tensor arguments, through modules, lists, tuples, dicts
and plain objects (their __dict__ and __slots__), it takes every scalar (bool, int, float,
str, None, complex, dtype) by value, every container's length, every outside tensor the graph
reads by identity, and the program's methods and function attributes by identity (a
GraphModule's ``recompile()`` or a patched ``Model.forward`` changes the code a call runs).
When one of them changes the guard fails and the call is captured again, so
``model.temperature = 0.5``, a replaced ``model.head`` or parameter, or a rebound global
tensor take effect at the next call, as in eager. A key whose guard keeps failing (a
counter the function reads) runs eagerly after cache_size_limit captures, as torch falls back
past its recompile limit.

The same walk made before and after the capture run (taking every tensor by identity there)
shows what the call itself changed (a ``self.calls += 1``, ``history.append(x)``): a replay
runs no Python, so it would not repeat that, and a whole graph with such a change is a graph
break ("the call changes Python state at ..."), unless every change is a tensor stored where
a tensor or None was, which the replay repeats (NOTE [Tensors a call stores] in
eval_frame.py); in a call that splits at a graph break (NOTE [Graph breaks that split]) Python runs
again at every call, so those leaves are only left out of the guard.

Not walked: ember's own objects other than modules (the replayed optimizer step reads its
learning rates live, and a scheduler changing them every step must not recompile), Python
modules (``config.LR`` of an imported module is not guarded), NumPy arrays, the items of
containers over 64 long (their length is), attributes starting with ``_`` (private state;
a module's forward and backward hook tables are walked),
and anything deeper than 10 steps or past 8192 leaves. The guard is generated code that binds
each object on the way once and then makes one dict lookup and one comparison per leaf, from
the top (ResNet-50 compiled: ~2,000 checks, ~0.2 ms a call).
"""
from __future__ import annotations

import dis
import functools
import math
import types
from collections import deque

from .. import _dtype as D
from .. import _tensor

_SCALARS = (bool, int, float, str, complex, type(None), D.dtype)
_LIBRARIES = ("ember", "numpy", "scipy", "numba", "builtins", "functools", "typing")
_MAX_DEPTH, _MAX_LEAVES, _MAX_ITEMS = 10, 8192, 64
_TABLES = ("_parameters", "_buffers", "_modules")
# a module's call-time hooks: one registered after the capture changes what a call runs
_HOOKS = ("_forward_pre_hooks", "_forward_hooks", "_backward_hooks", "_backward_pre_hooks")


def _library(obj):
    """Whether obj is a library's function or object (not walked), not the program's."""
    mod = getattr(obj, "__module__", None) if isinstance(obj, types.FunctionType) else \
        type(obj).__module__
    return isinstance(mod, str) and mod.split(".")[0] in _LIBRARIES


def _children(obj):
    """(step, child) pairs; a step is (access, name) rendered by _access."""
    from ..nn.modules.module import Module
    if isinstance(obj, Module):
        d = vars(obj)
        for table in _TABLES:
            for name, v in d.get(table, {}).items():
                if v is not None:
                    yield (table, name), v
        for name, v in d.items():
            if not name.startswith("_") or name in _HOOKS:
                yield ("__dict__", name), v
        for name, v in vars(type(obj)).items():  # a program's module: its methods' globals
            if isinstance(v, types.FunctionType) and not _library(v):
                yield ("type", name), v
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            yield ("[]", i), v
    elif isinstance(obj, dict):
        for key, v in obj.items():
            if isinstance(key, (str, int)):
                yield ("[]", key), v
    elif isinstance(obj, functools.partial):  # Module.compile()'s partial(_call_impl, module)
        yield (".", "func"), obj.func
        yield (".", "args"), obj.args
        yield (".", "keywords"), obj.keywords
    elif isinstance(obj, types.MethodType):
        yield (".", "__self__"), obj.__self__
        yield (".", "__func__"), obj.__func__
    elif isinstance(obj, types.FunctionType):
        if _library(obj):
            return
        for i, cell in enumerate(obj.__closure__ or ()):
            try:
                yield ("cell", i), cell.cell_contents
            except ValueError:  # an empty cell
                continue
        for name in _global_loads(obj.__code__):
            if name in obj.__globals__:
                yield ("global", name), obj.__globals__[name]
    elif not isinstance(obj, (types.ModuleType, type)) and not _library(obj):
        if isinstance(getattr(obj, "__dict__", None), dict):
            for name, v in vars(obj).items():
                if not name.startswith("_"):
                    yield ("__dict__", name), v
        # attributes in __slots__ (a dataclass(slots=True) config) have no __dict__ entry
        for name in _slot_names(type(obj)):
            if not name.startswith("_") and hasattr(obj, name):
                yield (".", name), getattr(obj, name)


@functools.lru_cache(maxsize=256)
def _slot_names(kind):
    names = []
    for klass in kind.__mro__:
        slots = vars(klass).get("__slots__", ())
        names += [slots] if isinstance(slots, str) else [n for n in slots if n != "__dict__"]
    return tuple(names)


@functools.lru_cache(maxsize=1024)
def _global_loads(code):
    """The names a code object and the code nested in it read as globals (not the attribute
    names also in co_names: a module-level ``step`` counter is not what ``opt.step()`` reads)."""
    names = dict.fromkeys(i.argval for i in dis.get_instructions(code)
                          if i.opname in ("LOAD_GLOBAL", "LOAD_NAME"))
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names.update(dict.fromkeys(_global_loads(c)))
    return tuple(names)


def _literal(key):
    """Whether ``repr(key)`` is Python source giving an equal key."""
    if type(key) is float:
        return math.isfinite(key)
    if type(key) is tuple:
        return all(_literal(k) for k in key)
    return type(key) in (str, int, bool, bytes, type(None))


def _access(var, step, glob=None):
    """Source reading ``step`` of ``var``. A dict key that is no literal (an Enum member, an
    object) is bound in ``glob`` as ``_k<n>`` and read from there."""
    how, name = step
    if how == "[]":
        if glob is None or _literal(name):
            return f"{var}[{name!r}]"
        bound = f"_k{sum(k.startswith('_k') for k in glob)}"
        glob[bound] = name
        return f"{var}[{bound}]"
    if how == ".":
        return f"{var}.{name}"
    if how == "cell":
        return f"{var}.__closure__[{name}].cell_contents"
    if how == "global":
        return f"{var}.__globals__[{name!r}]"
    if how == "type":
        return f"vars(type({var}))[{name!r}]"
    return f"{var}.{how}[{name!r}]"  # a module's table or an object's __dict__


def walk(roots, tensors=(), every_tensor=False):
    """{(root index, steps): (test, value)}: "==" for a scalar, "len" for a container, "is"
    for a tensor of ``tensors`` (every tensor with ``every_tensor``; at the first path found)."""
    want = {id(t) for t in tensors}
    leaves, seen = {}, set()
    queue = deque((i, r, ()) for i, r in enumerate(roots))
    while queue and len(leaves) < _MAX_LEAVES:
        ri, obj, path = queue.popleft()
        if isinstance(obj, _SCALARS):
            if path and not (type(obj) is float and math.isnan(obj)):
                leaves[ri, path] = ("==", obj)
            continue
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, _tensor.Tensor):
            if every_tensor or id(obj) in want:
                leaves[ri, path] = ("is", obj)
            continue
        if isinstance(obj, types.FunctionType) and path and path[-1][0] in ("type", "__dict__"):
            # a method or a function attribute: replaced (GraphModule.recompile() sets a new
            # forward), the call runs other code
            leaves[ri, path] = ("is", obj)
        if isinstance(obj, (list, tuple, dict)):
            if path:
                leaves[ri, path] = ("len", len(obj))
            if len(obj) > _MAX_ITEMS:
                continue
        if len(path) < _MAX_DEPTH:
            queue.extend((ri, child, path + (step,)) for step, child in _children(obj))
    return leaves


def _same(a, b):
    if a[0] != b[0]:
        return False
    return a[1] is b[1] if a[0] == "is" else (type(a[1]) is type(b[1]) and a[1] == b[1])


def split_changed(before, after, tensors):
    """(leaves of ``after`` to guard, paths the call changed): a leaf that differs from before
    the call or is new, and everything under a container whose length changed. Both walks
    took every tensor; a tensor stored where another was (``self.last_loss = loss``) is a
    change, and only the tensors of ``tensors`` (those the graph reads) are guarded."""
    moved = [k for k, v in after.items() if k not in before or not _same(before[k], v)]
    moved += [k for k, v in before.items() if k not in after]
    under = [k for k in moved if after.get(k, before.get(k))[0] == "len"]
    want = {id(t) for t in tensors}
    after = {k: v for k, v in after.items() if v[0] != "is" or id(v[1]) in want or
             not isinstance(v[1], _tensor.Tensor)}
    kept = {k: v for k, v in after.items() if k not in moved and not any(
        k[0] == ri and k[1][:len(p)] == p for ri, p in under)}
    return kept, moved


# the last steps a replay can store a tensor through (NOTE [Tensors a call stores])
_STORE_STEPS = ("__dict__", "[]", "cell", "global")


def replayable_stores(before, after, moved, read):
    """The moved paths when every one is a tensor (or None) stored where a tensor the graph
    does not read or None was (NOTE [Tensors a call stores]); else None. ``read``: the ids of the
    tensors the graph reads from outside the call."""
    for k in moved:
        new, old = after.get(k), before.get(k)
        if new is None or k[1][-1][0] not in _STORE_STEPS or not (new == ("==", None) or (
                new[0] == "is" and isinstance(new[1], _tensor.Tensor) and
                not new[1].is_sparse)):
            return None
        if old is None or not (old == ("==", None) or (
                old[0] == "is" and isinstance(old[1], _tensor.Tensor) and
                id(old[1]) not in read)):
            return None
    return list(moved)


def stored_leaves(before, paths):
    """Guard leaves for the paths a replay stores to: what was there before the capture
    (None, or a tensor of that shape and dtype), so Python that tests it (``if self.h is
    None``) replays only the branch it took."""
    out = {}
    for k in paths:
        old = before[k]
        out[k] = old if old[0] == "==" else ("tensor", (old[1]._data.shape, old[1]._data.dtype))
    return out


def _binder(roots_src, lines, glob):
    """var(ri, path): a local of the generated code bound to the object at path (its parents
    bound first, each once), the binding lines appended to ``lines``; keys no literal can
    write go into ``glob``."""
    names = {}

    def var(ri, path):
        if not path:
            return roots_src[ri]
        if (ri, path) not in names:
            parent = var(ri, path[:-1])
            names[ri, path] = f"o{len(names)}"
            lines.append(f"{names[ri, path]} = {_access(parent, path[-1], glob)}")
        return names[ri, path]

    return var


def make_store(roots_src, roots, paths):
    """``store(F, values)`` assigning ``values[j]`` at ``paths[j]`` (keys of walk)."""
    lines: list = []
    glob = {"_fn": roots[0]}
    var = _binder(roots_src, lines, glob)
    for j, (ri, path) in enumerate(paths):
        lines.append(f"{_access(var(ri, path[:-1]), path[-1], glob)} = values[{j}]")
    src = "def store(F, values):\n" + "".join(f"    {x}\n" for x in lines)
    ns: dict = {}
    exec(compile(src, "<ember.compile state store>", "exec"), glob, ns)
    ns["store"].source = src
    return ns["store"]


def describe(roots_src, key):
    out = roots_src[key[0]]
    for step in key[1]:
        out = _access(out, step)
    return out


def make_state_guard(roots_src, roots, leaves):
    """``guard(F)`` checking ``leaves`` (from walk) top-down, or None when there are none.
    ``roots_src`` names each root in the generated code ("_fn", "F[j]")."""
    if not leaves:
        return None
    glob, lines = {"_fn": roots[0]}, []
    var = _binder(roots_src, lines, glob)
    for j, ((ri, path), (test, value)) in enumerate(leaves.items()):
        where = _access(var(ri, path[:-1]), path[-1], glob)
        if test == "len":
            lines.append(f"if len({where}) != {value}: return False")
        elif value is None:
            lines.append(f"if {where} is not None: return False")
        elif test == "is":
            glob[f"_v{j}"] = value
            lines.append(f"if {where} is not _v{j}: return False")
        elif test == "tensor":  # a tensor of this shape and dtype (stored_leaves)
            glob["_Tensor"], glob[f"_v{j}"] = _tensor.Tensor, value
            lines.append(f"o = {where}")
            lines.append(f"if not isinstance(o, _Tensor) or (o._data.shape, o._data.dtype) "
                         f"!= _v{j}: return False")
        else:
            glob[f"_v{j}"] = value
            lines.append(f"if {where} != _v{j}: return False")
    src = "def guard(F):\n    try:\n" + "".join(f"        {x}\n" for x in lines) + \
        "    except Exception:\n        return False\n    return True\n"
    ns: dict = {}
    exec(compile(src, "<ember.compile state guard>", "exec"), glob, ns)
    ns["guard"].source = src
    ns["guard"].leaves = len(leaves)
    return ns["guard"]


__all__ = ["describe", "make_state_guard", "make_store", "replayable_stores", "split_changed",
           "stored_leaves", "walk"]
