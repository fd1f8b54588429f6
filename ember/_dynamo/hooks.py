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

``Patches`` records either kind of change and undoes them in reverse order.
"""
from __future__ import annotations

import types


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
    exec(compile(src, fn.__code__.co_filename, "exec"), fn.__globals__, ns)
    return ns[fn.__name__].__code__
