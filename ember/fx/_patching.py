"""Route ember's public functions to the active tracer while a trace is running.

torch.fx finds calls like ``torch.relu(proxy)`` through ``__torch_function__``. ember's ops take
no such detour (it would cost every eager call), so instead, while at least one tracer is
active, every public function of ``ember``, ``ember.nn.functional``, ``ember.linalg``... is
replaced by a thin wrapper that records a ``call_function`` node when an argument is a Proxy
and otherwise calls the original. The node's target is always the *original* function, so
``node.target is ember.relu`` holds once tracing is over. The wrappers are removed when the
last tracer finishes. See NOTE [Function patching while tracing].

# NOTE [Function patching while tracing]
# Patched: public callables of ember's public namespaces (looked up at call time, e.g.
# ``torch.cat`` / ``F.relu``); Tensor's binary operators (so ``tensor + proxy`` reaches
# ``Proxy.__radd__``); ``Module.__call__`` and ``Module.__getattr__`` (modules become
# call_module nodes, parameters get_attr nodes). Functions imported by name before tracing
# (``from ember import relu``) are not seen; ``ember.fx.wrap`` covers user functions.

# NOTE [Autowrapped modules]
# A symbolic trace also wraps the public functions of its Tracer's ``autowrap_modules``
# (``math`` by default, as torch.fx: ``math.sqrt(proxy)`` records a node). Only there: a trace
# that runs real ops (jit.trace's concrete tracer) or a Proxy built by hand through a
# GraphAppendingTracer (which keeps the wrappers while it lives) leaves ``math`` alone. numba
# resolves ``math.exp``, ``math.fabs``... when it compiles a kernel, and a kernel compiled for
# the first time while ``math.fabs`` is a wrapper fails ("No definition for lowering
# fabs(float32)"); a trace that never computes never compiles a kernel.
"""
from __future__ import annotations

import functools
import operator
import threading
import types

_lock = threading.RLock()
_depth = [0]
_saved: list = []           # (owner, name, original) restored on exit
_auto_depth = [0]
_saved_auto: list = []      # the same for autowrapped modules (math)
_local = threading.local()  # per-thread stack of tracers; the innermost records
_WRAPPED: dict[int, object] = {}  # id(wrapper) -> original
_WRAPPER_OF: dict[int, object] = {}  # id(original) -> installed wrapper

_TENSOR_BINARY = ("__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__mod__",
                  "__pow__", "__matmul__", "__and__", "__or__", "__xor__", "__lshift__",
                  "__rshift__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
                  "__radd__", "__rsub__", "__rmul__", "__rtruediv__", "__rfloordiv__",
                  "__rpow__", "__rmatmul__")

# functions whose result never depends on a Proxy argument in a way worth recording
_SKIP = {"is_tensor", "is_storage", "is_grad_enabled", "no_grad", "enable_grad",
         "set_grad_enabled", "manual_seed", "seed", "get_default_dtype", "set_default_dtype",
         "compile", "save", "load", "typename", "set_printoptions", "inference_mode",
         "is_inference_mode_enabled", "set_num_threads", "get_num_threads", "device", "Size"}


def unwrap(fn):
    """The original function behind a tracing wrapper (or ``fn`` itself)."""
    return fn if not _is_wrapper(fn) else _WRAPPED[id(fn)]


def _is_wrapper(fn) -> bool:
    # _WRAPPED is keyed by id; a dead wrapper's id can be reused by another object, so the
    # entry must also be this object's own __wrapped__
    orig = _WRAPPED.get(id(fn))
    return orig is not None and getattr(fn, "__wrapped__", None) is orig


def _stack() -> list:
    if not hasattr(_local, "stack"):
        _local.stack = []
    return _local.stack


def wrapper_of(fn):
    """The wrapper currently standing in for ``fn`` (so ``target is ember.relu`` holds inside
    Transformer methods while patches are installed), or ``fn`` itself."""
    return _WRAPPER_OF.get(id(fn), fn)


def current_tracer():
    """The tracer recording on this thread (None outside tracing or inside ``suspended``)."""
    stack = _stack()
    return stack[-1] if stack else None


class suspended:
    """Run real code (a leaf module on concrete values) without recording it."""

    def __enter__(self):
        _stack().append(None)

    def __exit__(self, *exc):
        _stack().pop()
        return False


def _has_proxy(args, kwargs) -> bool:
    from .proxy import Proxy
    found = []

    def visit(a):
        if isinstance(a, Proxy):
            found.append(a)
        elif isinstance(a, (tuple, list)):
            for e in a:
                visit(e)
                if found:
                    return
        elif isinstance(a, dict):
            for e in a.values():
                visit(e)
        elif isinstance(a, slice):
            visit((a.start, a.stop, a.step))
    visit(args)
    if not found and kwargs:
        visit(kwargs)
    return bool(found)


def _tracer_of(args, kwargs):
    """The tracer owning the first Proxy argument (functions called on Proxies built by hand
    with a GraphAppendingTracer record into that tracer's graph)."""
    from .proxy import Proxy
    out = []

    def visit(a):
        if out:
            return
        if isinstance(a, Proxy):
            out.append(a.tracer)
        elif isinstance(a, (tuple, list)):
            for e in a:
                visit(e)
        elif isinstance(a, dict):
            for e in a.values():
                visit(e)
        elif isinstance(a, slice):
            visit((a.start, a.stop, a.step))
    visit(args)
    visit(kwargs)
    return out[0] if out else None


def _make_wrapper(orig):
    @functools.wraps(orig)
    def wrapper(*args, **kwargs):
        if _has_proxy(args, kwargs):
            tracer = _tracer_of(args, kwargs)
            return tracer.create_proxy("call_function", orig, args, kwargs)
        return orig(*args, **kwargs)
    _WRAPPED[id(wrapper)] = orig
    return wrapper


def _make_tensor_dunder(orig):
    def dunder(self, other):
        from .proxy import Proxy
        if isinstance(other, Proxy):
            return NotImplemented     # Python then asks Proxy's reflected operator
        return orig(self, other)
    dunder.__name__ = orig.__name__
    dunder.__wrapped__ = orig
    _WRAPPED[id(dunder)] = orig
    return dunder


def _make_tensor_getitem(orig):
    def getitem(self, key):
        # ``buffer[:, :T]`` with T a Proxy: the indexing itself must be recorded
        if _has_proxy((key,), None):
            tracer = _tracer_of((key,), None)
            return tracer.create_proxy("call_function", operator.getitem, (self, key), {})
        return orig(self, key)
    getitem.__wrapped__ = orig
    _WRAPPED[id(getitem)] = orig
    return getitem


def _namespaces():
    from ._codegen import _public_namespaces
    return [mod for _, mod in _public_namespaces()]


def _wrap_functions_of(mod, wrappers: dict, saved: list) -> None:
    for name, obj in list(vars(mod).items()):
        if name.startswith("_") or name in _SKIP or isinstance(obj, (type, types.ModuleType)):
            continue
        if not isinstance(obj, (types.FunctionType, types.BuiltinFunctionType,
                                functools.partial)) or _is_wrapper(obj):
            continue
        w = wrappers.get(id(obj))
        if w is None:
            w = wrappers[id(obj)] = _make_wrapper(obj)
            _WRAPPER_OF[id(obj)] = w
        saved.append((mod, name, obj))
        setattr(mod, name, w)


def _install():
    import ember
    from ember.nn import Module
    wrappers: dict[int, object] = {}
    for mod in _namespaces():
        _wrap_functions_of(mod, wrappers, _saved)
    for name in _TENSOR_BINARY:
        orig = ember.Tensor.__dict__.get(name)
        if orig is not None:
            _saved.append((ember.Tensor, name, orig))
            setattr(ember.Tensor, name, _make_tensor_dunder(orig))
    getitem = ember.Tensor.__dict__.get("__getitem__")
    if getitem is not None:
        _saved.append((ember.Tensor, "__getitem__", getitem))
        ember.Tensor.__getitem__ = _make_tensor_getitem(getitem)
    for name, fn in (("__call__", _module_call), ("__getattr__", _module_getattr)):
        _saved.append((Module, name, Module.__dict__[name]))
        setattr(Module, name, fn)
    from . import _symbolic_trace
    for owner, name in _symbolic_trace._wrapped_functions:
        orig = owner[name] if isinstance(owner, dict) else getattr(owner, name)
        w = _make_wrapper(orig)
        _WRAPPER_OF.setdefault(id(orig), w)
        _saved.append((owner, name, orig))
        if isinstance(owner, dict):
            owner[name] = w
        else:
            setattr(owner, name, w)


def _uninstall():
    _restore(_saved)
    _WRAPPER_OF.clear()


def _restore(saved: list) -> None:
    while saved:
        owner, name, orig = saved.pop()
        w = owner[name] if isinstance(owner, dict) else owner.__dict__.get(name)
        _WRAPPED.pop(id(w), None)
        if isinstance(owner, dict):
            owner[name] = orig
        else:
            setattr(owner, name, orig)


def _orig(owner, name):
    for o, n, f in _saved:
        if o is owner and n == name:
            return f
    return getattr(owner, name)


def _module_call(self, *args, **kwargs):
    from ember.nn import Module
    tracer = current_tracer()
    orig_call = _orig(Module, "__call__")
    if tracer is None or getattr(tracer, "_in_call_module", False) is self:
        return orig_call(self, *args, **kwargs)
    return tracer._trace_module_call(self, orig_call, args, kwargs)


def _module_getattr(self, name):
    from ember.nn import Module
    orig_getattr = _orig(Module, "__getattr__")
    value = orig_getattr(self, name)
    tracer = current_tracer()
    if tracer is None:
        return value
    return tracer.getattr(name, value, {})


def acquire(autowrap: tuple = ()) -> None:
    """Install the wrappers (reference counted); ``autowrap``: further modules whose public
    functions record too while a symbolic trace runs (NOTE [Autowrapped modules])."""
    with _lock:
        if _depth[0] == 0:
            _install()
        _depth[0] += 1
        if autowrap:
            if _auto_depth[0] == 0:
                wrappers: dict[int, object] = {}
                for mod in autowrap:
                    _wrap_functions_of(mod, wrappers, _saved_auto)
            _auto_depth[0] += 1


def release(autowrap: tuple = ()) -> None:
    with _lock:
        if autowrap:
            _auto_depth[0] -= 1
            if _auto_depth[0] == 0:
                _restore(_saved_auto)
        _depth[0] -= 1
        if _depth[0] == 0:
            _uninstall()


class patched:
    """Context manager: wrappers installed, and ``tracer`` records this thread's module calls."""

    def __init__(self, tracer):
        self.tracer = tracer

    def __enter__(self):
        self.autowrap = tuple(getattr(self.tracer, "_autowrap_modules", ()))
        acquire(self.autowrap)
        _stack().append(self.tracer)
        return self

    def __exit__(self, *exc):
        _stack().pop()
        release(self.autowrap)
        return False
