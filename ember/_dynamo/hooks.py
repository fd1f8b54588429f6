"""Hooks a capture or a split call's replay puts into ember while it runs, and takes out after.

NOTE [Hooks by code swap]
The recorder (capture.py) and the replay of a split call (replay.py) watch the library from
inside: every op call, every read of a tensor's value by Python, a backward(), an in-place
write. They replace functions for their duration, in one of two ways:

* Setting a class or module attribute. Simple, but on a class it gives the type a new version,
  and CPython then drops every attribute cache and specialised instruction that depended on it
  (``Op`` has 200+ subclasses; every ``Tensor`` attribute access in the library). Once per
  capture that costs nothing worth counting; once per call of a replay (set, then restored) it
  cost ~70 us of a ~600 us call of benchmarks/graph_break.py (CPU time, busy machine), most of
  it paid afterwards, by the code that looks attributes up again.
* Swapping the function's ``__code__`` for a forwarder to the hook (kept as a global of the
  function's module), leaving the function object and every class and name that holds it alone.
  Functions imported by name all over ember (``_tensor._make``) can only be hooked this way.
  The other side of it: every holder of the function object is hooked, also one that should
  not be (a dropout mask's recipe keeps ``_keep_mask`` to draw again inside a compiled graph),
  so the replay swaps code only for class attributes. A function with a closure cannot take a
  forwarder without one (``forwarder`` returns None): the caller sets the attribute.

``Patches`` records either kind of change and undoes them in reverse order. The second half of
this file is the replay's hooks (replay.py installs them for each call).
"""
from __future__ import annotations

import threading
import types

import numpy as np

from .. import _tensor


class Patches:
    """Attribute sets and code swaps made for a capture or a replay, undone by ``restore``."""

    def __init__(self):
        self.undo = []  # (object, attribute, old value, whether it had one), in order

    def set(self, obj, name, value):
        """``obj.name = value`` (a class or module attribute)."""
        d = vars(obj)
        self.undo.append((obj, name, d.get(name), name in d))
        setattr(obj, name, value)

    def swap(self, fn, code):
        """Run ``code`` (from ``forwarder``) when ``fn`` is called."""
        self.undo.append((fn, "__code__", fn.__code__, True))
        fn.__code__ = code

    def restore(self):
        for obj, name, old, had in reversed(self.undo):
            if had:
                setattr(obj, name, old)
            else:
                delattr(obj, name)
        self.undo.clear()


def original(fn):
    """A copy of ``fn`` that keeps running its own code while ``fn`` forwards to a hook."""
    copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__,
                              fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__qualname__ = fn.__qualname__
    return copy


def forwarder(fn, hook, tag):
    """Code for ``fn`` that returns ``hook(args, kwargs)`` (its arguments as a tuple and a dict),
    or None when ``fn`` cannot take it (not a plain function, or one with a closure). The hook
    becomes the global ``_ember_hook_<tag>`` of fn's module."""
    if type(fn) is not types.FunctionType or fn.__closure__:
        return None
    name = f"_ember_hook_{tag}"
    fn.__globals__[name] = hook
    src = f"def {fn.__name__}(*args, **kwargs):\n    return {name}(args, kwargs)\n"
    ns: dict = {}
    # its own file name: a traceback through the hook says what it is
    exec(compile(src, f"<ember hook of {fn.__qualname__}>", "exec"), fn.__globals__, ns)
    return ns[fn.__name__].__code__


# ---------------------------------------------------------------------------- the replay's hooks
# The hooks a replay installs, by code swap where it can (NOTE [Hooks by code swap]):
# built once per hooked function (again if that function was replaced meanwhile); they find the
# running replay in _ACTIVE (one at a time: Recorder._lock).
_ACTIVE = [None]
_HOOKS: dict = {}
_READS = ("item", "tolist", "__bool__", "__float__", "__int__", "__index__", "numpy",
          "__repr__", "__str__", "__format__", "__array__")


def _hook_into(patches, plan, kind, owner, name):
    """Hook ``owner.name`` with a hook of ``kind`` for one replay, and add what was done to
    ``plan`` (the next call of the same graph repeats it after a check)."""
    fn = getattr(owner, name) if kind == "read" else owner.__dict__[name]
    if kind == "read" and fn is getattr(object, name, None):
        return  # object's own __str__: it calls __repr__, which is hooked
    if kind in ("run", "before_cls"):
        fn = fn.__func__
    key = (kind, owner, name)
    hit = _HOOKS.get(key)
    if hit is None or hit[0] is not fn or hit[1] is not getattr(fn, "__code__", None):
        orig = original(fn) if type(fn) is types.FunctionType else fn
        hook = _make_hook(kind, orig)
        # a class's attribute by code swap; a module's by setting it (cheap, and a function
        # object kept elsewhere, as a dropout mask's recipe keeps _keep_mask, stays unhooked)
        code = forwarder(fn, hook, f"{kind}_{name}_{len(_HOOKS)}") if isinstance(
            owner, type) else None
        attr = None
        if code is None:  # a module's function, a closure, a builtin: set the attribute
            def attr(*a, _hook=hook, **k):
                return _hook(a, k)
            attr = classmethod(attr) if kind in ("run", "before_cls") else attr
        hit = _HOOKS[key] = (fn, getattr(fn, "__code__", None), orig, code, attr)
    fn, code0, orig, code, attr = hit
    where = next(c for c in owner.__mro__ if name in vars(c)) if kind == "read" else owner
    plan.append((vars(where), name, vars(where)[name], fn, code0, code, owner, attr))
    if code is not None:
        patches.swap(fn, code)
    else:
        patches.set(owner, name, attr)


def _current():
    rp = _ACTIVE[0]
    return rp if rp is not None and threading.get_ident() == rp.tid else None


def _mask_args(shape, p, dtype):
    return shape, dtype


def _write_args(t, arr, name):
    return t, arr, name


def _make_hook(kind, orig):
    """The hook: called with the hooked function's arguments as a tuple and a dict."""
    if kind == "run":
        def run(a, k):
            rp = _current()
            if rp is None:
                return orig(*a, **k)
            return rp.op(orig, a[0], a[1:], k)
        return run
    if kind == "read":
        def read(a, k):
            rp = _current()
            if rp is not None and isinstance(a[0], _tensor.Tensor):
                rp.read(a[0])
            return orig(*a, **k)
        return read
    if kind == "mask":
        def keep_mask(a, k):
            rp = _current()
            if rp is None or rp.eager:
                return orig(*a, **k)
            shape, dtype = _mask_args(*a, **k)
            return np.ones(shape, dtype)  # drawn by the compiled segment
        return keep_mask
    if kind == "write":
        def write_into(a, k):
            rp = _current()
            if rp is None:
                return orig(*a, **k)
            t, arr, name = _write_args(*a, **k)
            rp.before((t,), {})
            if id(arr) in rp.holders:  # the result of a deferred op
                arr = rp.holders[id(arr)]._data
            return orig(t, arr, name)
        return write_into

    def call(a, k):
        rp = _current()
        if rp is not None:
            rp.before(a, k)
        return orig(*a, **k)
    return call
