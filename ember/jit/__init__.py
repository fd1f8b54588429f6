"""``ember.jit``: TorchScript's entry points on top of ember.fx graphs.

``trace`` records one execution on example inputs; ``script`` captures code without
data-dependent control flow by symbolic tracing. Both return a :class:`ScriptModule` — a
GraphModule with ``.graph`` and ``.code`` — that ``save``/``load`` store in a zip archive whose
loading never executes code (NOTE [Graph archive format] in ``_serialize.py``).

Differs from torch: there is no TorchScript language. ``.graph`` is an ``ember.fx.Graph`` and
``.code`` Python source; ``script`` rejects data-dependent ``if``/``for``/``while`` instead of
compiling them (control flow on shapes, dtypes and devices runs the forward as one opaque node:
NOTE [Shape-dependent control flow in script]); ``trace`` keeps tensor shapes of the example as
constants.
"""
from __future__ import annotations

import copy
import os
import traceback
import types
import typing
import warnings

import ember
import ember.fx as fx
from ember.fx.graph_module import GraphModule
from ember.fx.proxy import TraceError

from ._eager import (
    Attribute,
    annotate,
    enable_onednn_fusion,
    interface,
    onednn_fusion_enabled,
    script_if_tracing,
    set_fusion_strategy,
    strict_fusion,
)
from ._serialize import SerializationError, load_archive, save_archive
from ._trace import ConcreteTracer, TracerWarning, is_tracing

__all__ = ["trace", "script", "save", "load", "ignore", "unused", "export", "is_scripting",
           "is_tracing", "freeze", "optimize_for_inference", "ScriptModule", "ScriptFunction",
           "TracerWarning", "Error", "trace_module", "fork", "wait", "Final",
           "SerializationError", "Attribute", "annotate", "interface", "isinstance",
           "script_if_tracing", "enable_onednn_fusion", "onednn_fusion_enabled",
           "set_fusion_strategy", "strict_fusion"]

_scripting = [0]


class Error(RuntimeError):
    """``jit.script`` met Python it cannot capture (the message names the construct and line)."""


class ScriptModule(GraphModule):
    """A captured module: ``graph`` (ember.fx Graph), ``code`` (Python source), ``save``."""

    # An opaque script (NOTE [Shape-dependent control flow in script]) shares the original
    # module's parameters, buffers and children under their own names, follows its training
    # mode, and answers its other attributes and methods.
    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            root = self.__dict__.get("_ember_opaque_root")
            if root is None:
                raise
            return getattr(root, name)

    def train(self, mode=True):
        super().train(mode)
        root = self.__dict__.get("_ember_opaque_root")
        if root is not None:
            root.train(mode)
        return self

    def save(self, f, _extra_files=None) -> None:
        save(self, f, _extra_files=_extra_files)

    @property
    def original_name(self) -> str:
        return type(self).__name__

    @property
    def inlined_graph(self):
        return self.graph

    def graph_for(self, *args, **kwargs):
        return self.graph


class ScriptFunction(ScriptModule):
    """A captured function (``jit.script(fn)`` / ``jit.trace(fn, inputs)``)."""

    @property
    def name(self) -> str:
        return type(self).__name__


TopLevelTracedModule = ScriptModule
RecursiveScriptModule = ScriptModule


def _wrap(root, graph, name, cls) -> ScriptModule:
    return cls(root, graph, name)


# ------------------------------------------------------------------------------ decorators
def ignore(drop=False, **kwargs):
    """Leave a method as a Python call in scripted code (``drop=True``: like ``unused``)."""
    if callable(drop):
        drop._ember_jit = "ignore"
        return drop

    def deco(fn):
        fn._ember_jit = "unused" if drop else "ignore"
        return fn
    return deco


def unused(fn):
    """Replace a method by a stub raising when scripted code calls it."""
    if isinstance(fn, property):
        return fn
    fn._ember_jit = "unused"
    return fn


def export(fn):
    """Mark a method to be kept on the scripted module alongside ``forward``."""
    fn._ember_jit = "export"
    return fn


def is_scripting() -> bool:
    """True while ``ember.jit.script`` captures a model (False in eager code)."""
    return _scripting[0] > 0


Final = typing.Final       # ``x: ember.jit.Final[int]`` annotations stay valid


def fork(func, *args, **kwargs):
    """Run ``func`` now (ember has no interop thread pool); ``wait`` returns its result."""
    return _Future(func(*args, **kwargs))


def wait(future):
    return future.value


class _Future:
    def __init__(self, value):
        self.value = value

    def wait(self):
        return self.value


# ------------------------------------------------------------------------------ trace
def _as_tuple(example_inputs):
    if isinstance(example_inputs, tuple):
        return example_inputs
    return (example_inputs,)


def _outputs_match(a, b, tol) -> bool:
    if isinstance(a, ember.Tensor) and isinstance(b, ember.Tensor):
        if a.shape != b.shape:
            return False
        diff = (a.detach().double() - b.detach().double()).abs()
        scale = b.detach().double().abs() * tol + tol
        return bool((diff <= scale).all())
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_outputs_match(x, y, tol) for x, y in zip(a, b,
                                                                                 strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_outputs_match(a[k], b[k], tol) for k in a)
    return a == b


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-5, strict=True, _force_outplace=False, _module_class=None,
          _compilation_unit=None, example_kwarg_inputs=None, _store_inputs=True):
    """Run ``func`` (a Module or function) on ``example_inputs`` and record the ops into a
    :class:`ScriptModule`.

    Python values computed from tensors (``bool(t)``, ``t.item()``, ``int(t)``) are kept as the
    example's constants and a ``TracerWarning`` says so; with ``check_trace`` the trace is run
    again on the inputs and a ``TracerWarning`` reports outputs that differ (nondeterminism).

    Example:
        >>> import ember
        >>> m = ember.jit.trace(ember.nn.Linear(3, 2), ember.ones(1, 3))
        >>> [n.op for n in m.graph.nodes]
        ['placeholder', 'call_module', 'output']
    """
    if example_inputs is None and example_kwarg_inputs is None:
        raise RuntimeError("jit.trace: example_inputs is required; pass a tuple of tensors.")
    if example_kwarg_inputs is not None:
        raise NotImplementedError("jit.trace: example_kwarg_inputs is not supported; pass the "
                                  "inputs positionally.")
    if isinstance(func, ScriptModule):
        return func
    inputs = _as_tuple(example_inputs)
    tracer = ConcreteTracer()
    graph, expected = tracer.trace_with_inputs(func, inputs)
    is_module = isinstance(func, ember.nn.Module)
    name = type(func).__name__ if is_module else getattr(func, "__name__", "traced_fn")
    traced = _wrap(tracer.root, graph, name, ScriptModule if is_module else ScriptFunction)
    if check_trace:
        for check in ([inputs] if check_inputs is None else [_as_tuple(c) for c in
                                                            check_inputs]):
            with ember.no_grad():
                got = traced(*check)
                want = expected if check is inputs else func(*check)
            if not _outputs_match(got, want, check_tolerance):
                warnings.warn("Output nr 1. of the traced function does not match the "
                              "corresponding output of the Python function: the trace has "
                              "nondeterministic nodes or specialised Python values "
                              "(see earlier TracerWarnings).", TracerWarning, stacklevel=2)
                break
    return traced


def trace_module(mod, inputs, **kwargs):
    """``trace`` for a module's ``forward`` given as ``{"forward": example_inputs}``."""
    if set(inputs) != {"forward"}:
        raise NotImplementedError("jit.trace_module: only the 'forward' method is supported.")
    return trace(mod, inputs["forward"], **kwargs)


# ------------------------------------------------------------------------------ script
def _user_frame(tb):
    """The innermost traceback frame outside ember (where the user's construct is)."""
    ember_dir = os.path.dirname(os.path.abspath(ember.__file__)) + os.sep
    found = None
    for frame, lineno in traceback.walk_tb(tb):
        if not os.path.abspath(frame.f_code.co_filename).startswith(ember_dir):
            found = (frame, lineno)
    return found


def _construct(line: str, message: str) -> str:
    stripped = line.strip()
    for kw in ("if", "elif", "while", "for", "assert"):
        if stripped.startswith(kw + " ") or stripped.startswith(kw + "("):
            what = {"elif": "if", "assert": "assert"}.get(kw, kw)
            return f"a data-dependent `{what}`"
    if "iterated" in message:
        return "iteration over a tensor"
    if "len" in message:
        return "len() of a tensor"
    if " if " in stripped and " else " in stripped:
        return "a data-dependent conditional expression"
    return "Python control flow on a tensor value"


class _ScriptTracer(fx.Tracer):
    """Symbolic tracer honouring @jit.ignore / @jit.unused methods."""

    def trace(self, root, concrete_args=None):
        patched = []
        mods = root.named_modules() if isinstance(root, ember.nn.Module) else []
        for path, m in mods:
            for attr, fn in vars(type(m)).items():
                mark = getattr(fn, "_ember_jit", None)
                if mark in ("ignore", "unused") and attr != "forward":
                    m.__dict__[attr] = self._stub(m, attr, fn, mark, path)
                    patched.append((m, attr))
        _scripting[0] += 1
        try:
            return super().trace(root, concrete_args)
        finally:
            _scripting[0] -= 1
            for m, attr in patched:
                del m.__dict__[attr]

    def to_bool(self, obj):
        self.python_use = obj.node     # for _shape_dependent: which value was branched on
        return super().to_bool(obj)

    def _stub(self, m, attr, fn, mark, path):
        tracer = self
        if mark == "unused":
            def call(*args, **kwargs):
                return tracer.create_proxy("call_function", _raise_unused,
                                           (f"{type(m).__name__}.{attr}",), {})
        else:
            bound = types.MethodType(fn, m)

            def call(*args, **kwargs):
                return tracer.create_proxy("call_function", bound, args, kwargs,
                                           name=attr)
        return call


def _raise_unused(name: str):
    raise RuntimeError(f"{name} was marked @ember.jit.unused and cannot be called from a "
                       "scripted module.")


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """Capture ``obj`` (a Module or function) without running it, by symbolic tracing.

    Code whose control flow depends on tensor values cannot be captured: the error names the
    construct and the source line. ``@jit.ignore`` methods stay Python calls, ``@jit.unused``
    ones raise when called, ``@jit.export`` methods stay available on the result.

    Example:
        >>> import ember
        >>> m = ember.jit.script(ember.nn.Sequential(ember.nn.Linear(2, 2), ember.nn.ReLU()))
        >>> print(m.code.strip().splitlines()[0])
        def forward(self, input):
    """
    if isinstance(obj, ScriptModule):
        return obj
    if isinstance(obj, ember.nn.Module) or callable(obj):
        tracer, opaque = _ScriptTracer(), False
        try:
            graph = tracer.trace(obj, concrete_args=_python_args(obj))
        except (TraceError, RuntimeError, KeyError, TypeError) as e:
            if isinstance(e, Error):
                raise
            if _shape_dependent(e, tracer):
                graph, opaque = _opaque_graph(obj), True
            elif isinstance(e, TraceError) or "'len'" in str(e):
                raise _script_error(obj, e) from None
            else:
                raise
        is_module = isinstance(obj, ember.nn.Module)
        root = obj if is_module else ember.nn.Module()
        name = type(obj).__name__ if is_module else obj.__name__
        out = _wrap(root, graph, name, ScriptModule if is_module else ScriptFunction)
        if opaque:
            object.__setattr__(out, "_ember_opaque", True)
        if opaque and is_module:
            for table in ("_parameters", "_buffers", "_modules"):
                object.__setattr__(out, table, obj.__dict__[table])
            object.__setattr__(out, "_ember_opaque_root", obj)
        if is_module:
            for attr, fn in vars(type(obj)).items():
                if getattr(fn, "_ember_jit", None) == "export":
                    object.__setattr__(out, attr, types.MethodType(fn, obj))
        return out
    raise TypeError(f"jit.script: expected a Module or a function; got {type(obj).__name__}.")


_PY_TYPES = (bool, int, float, str)

# NOTE [Shape-dependent control flow in script]
# TorchScript compiles `if x.dim() == 3:`, `for i in range(x.size(0)):` and `table[x.ndim]`
# (einops' layers): shapes, dtypes and devices are ordinary values at run time. Symbolic tracing
# cannot branch on them (they are Proxies while capturing), so when capture stops at a Python
# use of a value computed only from such queries, the forward becomes one opaque call node (as
# if it were @jit.ignore'd): results equal torch's, `.code` shows the call. A branch on tensor
# *values* (`if x.sum() > 0:`) still raises jit.Error (DEVIATIONS: jit is not TorchScript).
_SHAPE_ATTRS = frozenset({"shape", "ndim", "dtype", "device", "is_cuda", "layout",
                          "requires_grad", "is_sparse"})
_SHAPE_METHODS = frozenset({"size", "dim", "ndimension", "numel", "nelement", "get_device",
                            "is_floating_point", "is_complex", "is_contiguous", "stride"})


def _from_shapes(node) -> bool:
    """True if ``node``'s value is computed only from shape/dtype/device queries."""
    import builtins
    if node.op == "call_method" and node.target in _SHAPE_METHODS:
        return True
    if (node.op == "call_function" and node.target is builtins.getattr
            and len(node.args) > 1 and node.args[1] in _SHAPE_ATTRS):
        return True
    if node.op in ("call_function", "call_method"):
        inputs = node.all_input_nodes
        return bool(inputs) and all(_from_shapes(n) for n in inputs)
    return False


def _shape_dependent(e: Exception, tracer) -> bool:
    """Did capture stop at a Python use (truth test, int, dict key) of a shape-derived value?"""
    from ember.fx.proxy import Proxy
    node = None
    if isinstance(e, KeyError) and e.args and isinstance(e.args[0], Proxy):
        node = e.args[0].node
    elif isinstance(e, TraceError):
        msg = str(e)
        if "control flow" in msg:
            node = getattr(tracer, "python_use", None)
        elif msg.startswith("symbolically traced value "):
            name = msg.split()[3]
            graph = getattr(tracer, "graph", None)
            node = next((n for n in graph.nodes if n.name == name), None) if graph else None
    return node is not None and _from_shapes(node)


def _opaque_graph(obj) -> fx.Graph:
    """A graph calling ``obj``'s forward (or ``obj``) as one node, parameters as placeholders."""
    import inspect
    is_module = isinstance(obj, ember.nn.Module)
    target = obj.forward if is_module else obj
    graph = fx.Graph()
    args, kwargs = [], {}
    for p in inspect.signature(target).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise Error(f"jit.script: *{p.name}/**{p.name} parameters are not supported.")
        node = graph.placeholder(p.name, default_value=p.default)
        if p.kind == p.KEYWORD_ONLY:
            kwargs[p.name] = node
        else:
            args.append(node)
    graph.output(graph.call_function(target, tuple(args), kwargs))
    return graph


def _python_args(obj) -> dict:
    """Parameters annotated (or defaulted) as bool/int/float/str are configuration, not
    tensors: scripting specialises them to their defaults, as TorchScript constants."""
    import inspect
    fn = obj.forward if isinstance(obj, ember.nn.Module) else obj
    out = {}
    for p in inspect.signature(fn).parameters.values():
        ann = p.annotation
        if isinstance(ann, str):
            ann = {"bool": bool, "int": int, "float": float, "str": str}.get(ann)
        has_default = p.default is not inspect.Parameter.empty
        if has_default and (ann in _PY_TYPES or isinstance(p.default, _PY_TYPES)):
            out[p.name] = p.default
    return out


def _script_error(obj, e: Exception) -> Error:
    where = _user_frame(e.__traceback__)
    if where is None:
        return Error(f"jit.script: cannot capture {getattr(obj, '__name__', type(obj))}: {e}")
    frame, lineno = where
    import linecache
    line = linecache.getline(frame.f_code.co_filename, lineno).strip()
    construct = _construct(line, str(e))
    return Error(f"jit.script: {construct} is not supported: `{line}` at "
                 f"{frame.f_code.co_filename}:{lineno}, in {frame.f_code.co_name}. The condition "
                 "depends on a tensor's value, which is unknown when the code is captured. "
                 "Use ember.where / masking, or ember.jit.trace with example inputs "
                 "(which keeps the branch taken on them).")


# ------------------------------------------------------------------------------ save/load
def save(m, f, _extra_files=None) -> None:
    """Write a traced/scripted module to ``f`` (path or binary file) as a graph archive."""
    if not isinstance(m, GraphModule):
        raise TypeError("jit.save: expected a module returned by jit.trace or jit.script; got "
                        f"{type(m).__name__}. Call ember.jit.script(model) first.")
    if m.__dict__.get("_ember_opaque"):
        raise SerializationError(
            "jit.save: this module was scripted as one opaque call of its forward (its control "
            "flow depends on input shapes, dtypes or devices), which a graph archive cannot "
            "store; use ember.jit.trace(model, example_inputs) for a storable graph.")
    extra: dict = {"kind": "ScriptFunction" if isinstance(m, ScriptFunction) else "ScriptModule"}
    if _extra_files:
        extra["extra_files"] = {k: (v.decode() if isinstance(v, bytes) else v)
                                for k, v in _extra_files.items()}
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            save_archive(m, fh, "ember_jit", extra)
    else:
        save_archive(m, f, "ember_jit", extra)


def load(f, map_location=None, _extra_files=None, _restore_shapes=False) -> ScriptModule:
    """Load a module saved by ``jit.save``; no code from the file is executed."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            root, graph, name, extra = load_archive(fh, "ember_jit")
    else:
        root, graph, name, extra = load_archive(f, "ember_jit")
    if _extra_files is not None:
        for k, v in extra.get("extra_files", {}).items():
            if k in _extra_files:
                _extra_files[k] = v.encode()
    cls = ScriptFunction if extra.get("kind") == "ScriptFunction" else ScriptModule
    out = cls(root, graph, name)
    out.training = bool(getattr(root, "training", False))
    return out


# ------------------------------------------------------------------------------ freezing
def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """Inline parameters as constants of an eval-mode scripted module (a new module)."""
    if not isinstance(mod, ScriptModule):
        raise RuntimeError("Freezing expects a ScriptModule as input. Please use "
                           "ember.jit.script or ember.jit.trace to script your 'nn.Module'.")
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. "
                           "Please call .eval() on your module before freezing.")
    out = copy.deepcopy(mod)
    keep = set(preserved_attrs or ())
    for path, m in list(out.named_modules()):
        for name in list(m._parameters):
            full = f"{path}.{name}" if path else name
            p = m._parameters[name]
            if p is None or full in keep:
                continue
            del m._parameters[name]
            object.__setattr__(m, name, p.detach())  # a constant now: no grad, not a Parameter
    out.graph.eliminate_dead_code()
    out.recompile()
    out._ember_frozen = True
    return out


def optimize_for_inference(mod, other_methods=None):
    """Freeze (if needed) and fold each BatchNorm into the convolution before it."""
    frozen = mod if getattr(mod, "_ember_frozen", False) else freeze(
        mod if isinstance(mod, ScriptModule) else script(mod.eval()))
    from ._passes import fold_conv_bn
    fold_conv_bn(frozen)
    return frozen




def __getattr__(name):
    # ``jit.isinstance`` is served here so that this module's own ``isinstance`` calls keep
    # meaning the builtin.
    if name == "isinstance":
        from ._eager import isinstance as jit_isinstance
        return jit_isinstance
    raise AttributeError(f"module 'ember.jit' has no attribute {name!r}")
