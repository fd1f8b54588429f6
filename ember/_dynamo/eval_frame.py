"""The compiled callable: guards, the cache of specialisations, recompiles, graph breaks."""
from __future__ import annotations

import functools
import random
import threading
import warnings
import weakref
from collections import OrderedDict

import numpy as np

from .. import _dtype as D
from .. import _tensor
from ..amp import _state as _amp
from ..autograd.grad_mode import _state
from . import config
from .capture import flatten
from .exc import RecompileError, Unsupported

_local = threading.local()
_all_compiled: weakref.WeakSet = weakref.WeakSet()
counters = {"frames": 0, "captures": 0, "recompiles": 0, "graph_breaks": 0, "hits": 0}


def is_compiling():
    """True while ember.compile is capturing a function (torch.compiler.is_compiling)."""
    return getattr(_local, "depth", 0) > 0


class _Disabled:
    """Set by ember.compiler.disable: code under it always runs eagerly."""

    depth = 0


def _tensor_key(t):
    d = t._data
    return (d.shape, d.dtype, t._requires_grad)


def _only_shapes_differ(a, b, dynamic_dims):
    """Whether keys a and b differ only in tensor shapes along dynamic dims (same ndim)."""
    if len(a) != len(b):
        return False
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x == y:
            continue
        if not (type(x) is tuple and len(x) == 3 and type(x[0]) is tuple and type(y) is tuple
                and len(y) == 3 and type(y[0]) is tuple):
            return False
        if x[1:] != y[1:] or len(x[0]) != len(y[0]):
            return False
        dims = dynamic_dims(i)
        if any(p != q and (dims is not None and d not in dims)
               for d, (p, q) in enumerate(zip(x[0], y[0], strict=False))):
            return False
    return True


def _note_changed_dims(acc, a, b):
    """Add to acc (key position -> dims) the tensor dims that differ between keys a and b."""
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y and type(x) is tuple and len(x) == 3 and type(x[0]) is tuple:
            acc.setdefault(i, set()).update(
                d for d, (p, q) in enumerate(zip(x[0], y[0], strict=False)) if p != q)


NUMPY_INPUT = ("a NumPy array is an input (ember.compile captures tensors; the call runs "
               "eagerly)")


# NOTE [Arguments a guard cannot see]
# A non-tensor argument is keyed by its type and id, and the state guard (NOTE [Guards on
# Python state] in guards.py) reads its scalars through its attributes, so a plain object
# mutated, or another one taking a freed object's id, is captured again. An object whose data
# lives outside Python attributes - a NumPy array, a PIL image, a bytearray, anything exposing
# the array interface or the buffer protocol - is neither: the call reads it outside ops (a
# transform's pixels), the capture keeps what it read, and the next image at the freed image's
# id, or the same buffer written in place, would replay the captured result. Such an argument
# runs the call eagerly (a graph break naming its type). Bytes and NumPy scalars are immutable:
# keyed by value.
def _opaque(v):
    """Why argument v cannot be keyed safely (see NOTE above), or None."""
    if isinstance(v, np.ndarray):
        return NUMPY_INPUT
    kind = type(v)
    if any(hasattr(kind, a) for a in ("__array_interface__", "__array_struct__", "__array__")):
        return _opaque_why(kind, "exposes the array interface")
    if kind.__module__ == "builtins" and kind is not bytearray and kind is not memoryview:
        return None  # ints, functions, classes...: no buffer a guard cannot read
    try:
        with memoryview(v):
            return _opaque_why(kind, "exposes a buffer")
    except TypeError:
        return None


def _opaque_why(kind, what):
    return (f"a {kind.__module__}.{kind.__qualname__} argument {what} whose contents no guard "
            "sees (the call runs eagerly)")


_KEYED_BY_VALUE = (int, float, bool, str, type(None), complex, bytes)


def _value_key(v):
    if isinstance(v, _KEYED_BY_VALUE):
        return (type(v), v)
    if isinstance(v, D.dtype):
        return ("dtype", str(v))
    return ("id", type(v), id(v))


# NOTE [Python's random streams in a compiled call]
# A call that draws from Python's `random` module or NumPy's global stream (seq2seq's teacher
# forcing, ``if random.random() < ratio``; a random crop size) computes with the draws of the
# capture run: a replay, running no Python, would take the captured branch and numbers at every
# call. Neither stream is a tensor or an attribute the state walk sees (NOTE [Guards on Python
# state] in guards.py), so the capture compares the two generators' states before and after
# the run, and a call that moved either runs eagerly (a graph break, as torch's compiler
# breaks where it cannot trace a call into the stream; a call that splits at a graph break
# runs its Python at every call and already leaves its recorded path on another draw). The
# comparison runs once per capture (random.getstate(): ~5 us), never on a replay.
def _host_random_states():
    """The states of Python's `random` generator and NumPy's global one (legacy RandomState)."""
    return random.getstate(), np.random.get_state(legacy=True)


def _host_random_drawn(before):
    """Which of the streams _host_random_states saw has moved since, as words; "" if none."""
    py, numpy_state = before
    moved = []
    if random.getstate() != py:
        moved.append("Python's random module")
    now = np.random.get_state(legacy=True)
    if now[2:] != numpy_state[2:] or not np.array_equal(now[1], numpy_state[1]):
        moved.append("NumPy's global random stream")
    return " and ".join(moved)


# NOTE [Tensors a call stores]
# A replay runs no Python, so a call that changes Python state runs eagerly (NOTE [Guards on
# Python state] in guards.py) - except for one common kind of change that a replay can repeat:
# a tensor computed by the call, or None, put at an attribute, dict entry, closure cell or
# global where a tensor or None already was (llama2.c's ``self.last_loss = loss`` that train.py
# reads and calls backward() on; a module keeping its last activation). The capture walks the
# state right after the call; when every change is such a store, the stored values become
# extra outputs of the graph (the result's spec is ``(result, stored)``), so the backward of a
# stored loss is the compiled one, and after each replay ``CacheEntry.finish`` assigns them
# through generated code (guards.make_store) and returns the result. torch's compiler does the
# same with the attributes it sees written. Two conditions keep it exact:
# * the tensor that was there must not be read by the graph (a hidden state carried to the
#   next call, ``self.h = self.h + x``): the replay would read the captured one, so such a
#   call still runs eagerly;
# * Python may test the old value (``if self.h is None``) without the recorder seeing it, so
#   the state guard checks what was there before the capture: None, or a tensor of the same
#   shape and dtype (guards.stored_leaves). The first call, storing where None was, therefore
#   captures again at the second, which sees a tensor there; later calls replay.
class CacheEntry:
    def __init__(self, graph=None, breaks=(), reason="", state=None, store=None):
        self.graph = graph
        self.breaks = list(breaks)
        self.reason = reason
        self.state = state  # the Python state it may have read is unchanged (guards.py)
        self.store = store  # store(F, values): NOTE [Tensors a call stores]

    def finish(self, res, flat):
        """The call's result from a replay's; the tensors the call stores, stored."""
        if self.store is None:
            return res
        res, values = res
        self.store(flat, values)
        return res

    def holds(self, flat):
        """The graph's guards on external tensors and Python state hold for this call."""
        return self.graph.guard_ext() and (self.state is None or self.state(flat))


class CompiledFunction:
    """What ``ember.compile(fn)`` returns for a plain function (and uses for modules)."""

    def __init__(self, fn, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
                 module=None):
        self._fn = fn
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.backend = backend
        self.mode = mode
        self._module = weakref.ref(module) if module is not None else None
        self._cache = OrderedDict()
        self._general = OrderedDict()   # key -> graph replayed from a template at new sizes
        self._generalise_ok = True
        self._generalise_misses = 0
        self._auto_dims = {}            # key position -> dims seen changing (automatic dynamic)
        self._shape_changes = 0
        self._guard_fails = {}          # key -> failed guard checks (bounded: __call__)
        self.stats = {"captures": 0, "recompiles": 0, "hits": 0, "eager": 0, "generalised": 0}
        self.last_breaks = []
        self.sources = None
        functools.update_wrapper(self, fn, updated=())
        _all_compiled.add(self)

    # ------------------------------------------------------------------ key and guards
    def _key(self, flat):
        key = [_state.enabled, D.get_default_dtype()]  # then one item per flat value
        seen = {}
        for i, v in enumerate(flat):
            if isinstance(v, _tensor.Tensor):
                if v.is_sparse:
                    from .trace import SPARSE_INPUT
                    self._why = SPARSE_INPUT
                    return None  # not captured: run eagerly (_uncaptured)
                # the same storage passed twice is one value in the capture: guard on it
                first = seen.setdefault(id(v._data), i)
                key.append(_tensor_key(v) if first == i else ("alias", first))
            elif isinstance(v, _KEYED_BY_VALUE):
                key.append((type(v), v))
            elif isinstance(v, np.generic) and v.dtype.kind != "O":
                key.append((type(v), v.item()))  # an immutable NumPy scalar: by value too
            elif (why := _opaque(v)) is not None:
                self._why = why  # see NOTE [Arguments a guard cannot see]
                return None
            else:
                key.append(_value_key(v))
        mod = self._module() if self._module is not None else None
        if mod is not None:
            key.append(tuple(m.training for m in mod.modules()))
        key.append(_amp.state.enabled and _amp.state.dtype)  # an autocast region around the call
        return tuple(key)

    def reset(self):
        self._cache.clear()
        self._general.clear()
        self._generalise_ok = True
        self._generalise_misses = 0
        self._auto_dims = {}
        self._shape_changes = 0
        self._guard_fails = {}

    def __get__(self, obj, objtype=None):  # decorating a method
        if obj is None:
            return self
        return functools.partial(self, obj)

    def __call__(self, *args, **kwargs):
        if _Disabled.depth or getattr(_local, "depth", 0) or config.disable:
            return self._fn(*args, **kwargs)
        flat = []
        flatten((args, kwargs), flat)
        key = self._key(flat)
        if key is None:
            return self._uncaptured(args, kwargs)
        self._flat = flat
        entry = self._cache.get(key)
        if entry is not None and entry.graph is not None and not entry.holds(flat):
            # a parameter changed shape/dtype/requires_grad, a written buffer was replaced, or
            # Python state the call may read changed: capture again (NOTE [In-place writes in a
            # compiled call] in writes.py, NOTE [Guards on Python state] in guards.py)
            entry = None
            self._guard_fails[key] = self._guard_fails.get(key, 0) + 1
            if self._guard_fails[key] > config.cache_size_limit:
                why = (f"its guards failed {self._guard_fails[key]} times (Python state it "
                       "reads keeps changing): it runs eagerly from now on", "<guards>")
                warnings.warn(f"ember.compile: {self._name()}: {why[0]}", UserWarning,
                              stacklevel=2)
                self._cache[key] = CacheEntry(None, [why], "guard failures")
                self.stats["eager"] += 1
                return self._fn(*args, **kwargs)
        if entry is None:
            graph = self._general.get(key)
            if graph is not None and not graph.source_entry.holds(flat):
                graph = None
            if graph is None:
                graph = self._generalise(key, flat)
            if graph is None:
                return self._capture(key, args, kwargs)
            self._general.move_to_end(key)
            self.stats["hits"] += 1
            counters["hits"] += 1
            return graph.source_entry.finish(
                graph.run([v for v in flat if isinstance(v, _tensor.Tensor)]), flat)
        self._cache.move_to_end(key)
        if entry.graph is None:
            self.stats["eager"] += 1
            return self._fn(*args, **kwargs)
        counters["hits"] += 1
        tensors = [v for v in flat if isinstance(v, _tensor.Tensor)]
        if getattr(entry.graph, "segmented", False):  # NOTE [Graph breaks that split]
            if entry.graph.want_variant:  # NOTE [Paths of a split call]
                return self._capture_variant(entry.graph, args, kwargs)
            return entry.graph.call(self._fn, args, kwargs, tensors, self.stats)
        self.stats["hits"] += 1
        return entry.finish(entry.graph.run(tensors), flat)

    def _uncaptured(self, args, kwargs):
        """A call with a sparse COO tensor, a NumPy array or another argument no guard sees
        (NOTE [Arguments a guard cannot see]) among its inputs: the call runs eagerly (a graph
        break; Unsupported under fullgraph=True)."""
        why = (self._why, "<inputs>")
        if self.fullgraph:
            raise Unsupported(f"{why[0]}; fullgraph=True forbids graph breaks.")
        self.last_breaks = [why]
        counters["graph_breaks"] += 1
        self.stats["eager"] += 1
        return self._fn(*args, **kwargs)

    def _is_dynamic(self):
        return self.dynamic is True or (self.dynamic is None and (
            self._shape_changes > 0 or any(getattr(t, "_dynamo_dynamic_indices", None)
                                           for t in self._flat
                                           if isinstance(t, _tensor.Tensor))))

    def _generalise(self, key, flat):
        """A replay of a cached capture's template at this key's sizes, or None (see NOTE
        [Size generalisation] in symbolic.py)."""
        if not self._generalise_ok or not self._is_dynamic() or config.eager_on_recompile:
            return None
        from .backends import generalise
        from .symbolic import NotGeneral, sizes_at
        for entry in reversed(self._cache.values()):
            tpl = getattr(entry.graph, "template", None)
            if tpl is not None and not (entry.state is None or entry.state(flat)):
                continue  # captured under other Python state
            svals = None if tpl is None else sizes_at(key, tpl["key"], tpl["dyn"], tpl["syms"])
            if svals is None:
                continue
            try:
                graph = generalise(tpl, svals, self._name(),
                                   [v for v in flat if isinstance(v, _tensor.Tensor)])
            except (NotGeneral, Exception):
                # an op cannot take the new sizes: record this signature as before, and give
                # up generalising after a few such misses
                self._generalise_misses += 1
                self._generalise_ok = self._generalise_misses < 3
                return None
            graph.source_entry = CacheEntry(graph, state=entry.state, store=entry.store)
            self.stats["generalised"] += 1
            if len(self._general) >= 8 * config.cache_size_limit:
                self._general.popitem(last=False)
            self._general[key] = graph
            return graph
        return None

    def _shadow(self, key, args, kwargs):
        """The same call captured at two sets of enlarged dynamic sizes (see NOTE [Size
        generalisation]), as ((capture, check capture), key, dynamic dims, symbols), or None.
        When enlarging every dynamic dim fails (a layer checks its feature size), only the
        leading two dims (batch, sequence), then only the first, are treated as dynamic, as
        torch specialises a size code checks."""
        from .symbolic import symbols
        dims = self._dynamic_dims()
        if self.dynamic is None:
            marked = dims

            def dims(i):
                m = marked(i)
                return m if m is not None else self._auto_dims.get(i, set())
        tries = [dims, lambda i: ({0, 1} if dims(i) is None else dims(i) & {0, 1}),
                 lambda i: ({0} if dims(i) is None else dims(i) & {0})]
        for dims_of in tries:
            dyn, syms = symbols(key, dims_of)
            if not syms:
                return None
            cap = self._capture_resized(args, kwargs, dyn, syms, 1)
            if cap is not None and not cap.breaks:
                return (cap, self._capture_resized(args, kwargs, dyn, syms, 2)), key, dyn, syms
        return None

    def _capture_resized(self, args, kwargs, dyn, syms, which):
        from ..ops import random as _random
        from .capture import unflatten
        from .symbolic import resized, shadow_sizes
        from .trace import capture_call
        big = shadow_sizes(syms, which)
        flat = []
        spec = flatten((args, kwargs), flat)
        new, seen = [], {}
        for j, v in enumerate(flat):
            dims = [d for i, d, _ in dyn if i == j + 2]
            if isinstance(v, _tensor.Tensor) and dims:
                if any(v._data.shape[d] not in big for d in dims):
                    # the call changed its arguments (a KV cache dict it extends): no template
                    return None
                v = seen.setdefault(id(v), resized(v, big, dims))
            new.append(v)
        args2, kwargs2 = unflatten(spec, iter(new))
        state = _random.get_rng_state()  # the shadow run must not move the random stream
        streams = _host_random_states()  # nor Python's or NumPy's (NOTE [Python's random
        _local.depth = getattr(_local, "depth", 0) + 1  # streams in a compiled call])
        try:
            return capture_call(self._fn, args2, kwargs2, False)[1]
        except Exception:
            return None
        finally:
            _local.depth -= 1
            _random.set_rng_state(state)
            random.setstate(streams[0])
            np.random.set_state(streams[1])

    def _record(self, args, kwargs, stores=None):
        """One eager run of the function under the recorder, counted as a capture."""
        from .trace import capture_call
        self.stats["captures"] += 1
        counters["captures"] += 1
        _local.depth = getattr(_local, "depth", 0) + 1
        try:
            return capture_call(self._fn, args, kwargs, self.fullgraph, stores)
        finally:
            _local.depth -= 1

    def _capture(self, key, args, kwargs):
        from .backends import compile_capture
        # NOTE [Dynamic shapes]: a capture records concrete sizes; with dynamic shapes its
        # graph keeps a template, and later signatures that differ only in sizes replay it
        # with the sizes rewritten (_generalise; NOTE [Size generalisation] in symbolic.py)
        # instead of recording again. A signature the template cannot serve records again;
        # that is not counted as a recompile when only dynamic sizes changed.
        dims = self._dynamic_dims()
        shape_only = any(_only_shapes_differ(k, key, dims) for k in self._cache)
        dynamic = self._is_dynamic()
        if self._cache and config.eager_on_recompile:
            self.stats["eager"] += 1
            return self._fn(*args, **kwargs)
        if self._cache and not (dynamic and shape_only):
            self.stats["recompiles"] += 1
            counters["recompiles"] += 1
            if config.error_on_recompile:
                raise RecompileError(f"Recompiling function {self._name()}: guards failed for a "
                                     "new input signature and error_on_recompile is set.")
        if shape_only and self.dynamic is None:
            self._shape_changes += 1  # automatic dynamic, as torch after one shape change
            for k in self._cache:     # and, as torch, only the dims that changed are dynamic
                if _only_shapes_differ(k, key, dims):
                    _note_changed_dims(self._auto_dims, k, key)
        limit = config.cache_size_limit * (8 if dynamic else 1)
        if len(self._cache) >= limit:
            warnings.warn(f"ember.compile: {self._name()} reached the recompile limit "
                          f"(cache_size_limit={config.cache_size_limit}); the least recently "
                          "used specialisation is dropped. Inputs whose shapes keep changing "
                          "should use dynamic=True.", UserWarning, stacklevel=3)
            self._cache.popitem(last=False)
        counters["frames"] += 1
        from .guards import (
            describe,
            make_state_guard,
            make_store,
            replayable_stores,
            split_changed,
            stored_leaves,
            walk,
        )
        roots, where = self._roots(args, kwargs)
        before = walk(roots, every_tensor=True)
        seen = {}

        def stores(cap):  # NOTE [Tensors a call stores]
            after = walk(roots, every_tensor=True)
            seen["split"] = split_changed(before, after, cap.ext)
            moved = seen["split"][1]
            paths = moved and replayable_stores(before, after, moved, {id(t) for t in cap.ext})
            if not paths:
                return None
            seen["paths"] = paths
            return [after[k][1] for k in paths]

        streams = _host_random_states()  # NOTE [Python's random streams in a compiled call]
        result, cap = self._record(args, kwargs, stores)
        drawn = _host_random_drawn(streams)
        leaves, moved = seen.get("split") or split_changed(before, walk(roots, every_tensor=True),
                                                           cap.ext)
        if drawn and not cap.breaks and not cap.splits:
            why = (f"the call draws from {drawn} (a replay would repeat the captured draws' "
                   "branches and numbers instead of drawing anew)", "<python random>")
            if self.fullgraph:
                raise Unsupported(f"{why[0]}; fullgraph=True forbids graph breaks.")
            cap.breaks.append(why)
        store = None
        if cap.stored:
            store = make_store(where, roots, seen["paths"])
            leaves.update(stored_leaves(before, seen["paths"]))
        if moved and not cap.stored and not cap.breaks and not cap.splits:
            # a replay runs no Python: it would not repeat the call's own change of state
            why = (f"the call changes Python state ({describe(where, moved[0])}); a replay "
                   "would not repeat that", "<python state>")
            if self.fullgraph:
                raise Unsupported(f"{why[0]}; fullgraph=True forbids graph breaks.")
            cap.breaks.append(why)
        state = None if cap.breaks else make_state_guard(where, roots, leaves)
        self.last_breaks = list(cap.breaks)
        if cap.splits and not cap.breaks:  # NOTE [Graph breaks that split]
            from .replay import SegmentedGraph
            self.last_breaks = [(reason, where) for _, reason, where, _ in cap.splits]
            counters["graph_breaks"] += len(cap.splits)
            graph = SegmentedGraph(cap, self.backend, self.mode, self._name())
            self.sources = graph.sources
            self._cache[key] = CacheEntry(graph, self.last_breaks, "graph break", state=state)
            return result
        if cap.breaks:
            counters["graph_breaks"] += len(cap.breaks)
            self._cache[key] = CacheEntry(None, cap.breaks, "graph break")
            return result
        from .backends import lookup_backend
        from .train_step import InlineBackward
        if any(isinstance(i, InlineBackward) for i in cap.fwd) and \
                lookup_backend(self.backend) not in ("inductor", "aot_eager"):
            # a backend receives a forward graph module; the step's backward cannot be in it
            why = (f"backward() inside a function compiled with backend={self.backend!r} (only "
                   "the inductor and aot_eager backends replay a training step)", "<backward>")
            if self.fullgraph:
                raise Unsupported(f"{why[0]}; fullgraph=True forbids graph breaks.")
            self.last_breaks = [why]
            counters["graph_breaks"] += 1
            self._cache[key] = CacheEntry(None, [why], "graph break")
            return result
        shadow = None
        from .capture import SideEffect
        if (dynamic or (shape_only and self.dynamic is None)) and not cap.stored and not any(
                isinstance(i, SideEffect) for i in cap.fwd):  # no second update of live state
            shadow = self._shadow(key, args, kwargs)
        try:
            graph = compile_capture(cap, self.backend, self.mode, self._name(), shadow)
        except Unsupported:
            raise
        self.sources = getattr(graph, "sources", None)
        self._cache[key] = CacheEntry(graph, state=state, store=store)
        return result

    def _roots(self, args, kwargs):
        """Where the state guard starts: the function and the non-tensor arguments, and their
        names in the generated guard (NOTE [Guards on Python state] in guards.py)."""
        flat = []
        flatten((args, kwargs), flat)
        roots, where = [self._fn], ["_fn"]
        for j, v in enumerate(flat):
            if not isinstance(v, _tensor.Tensor):
                roots.append(v)
                where.append(f"F[{j}]")
        return roots, where

    def _capture_variant(self, graph, args, kwargs):
        """Record this call as another path of a split call (not a recompile)."""
        from .replay import SegmentedGraph
        graph.want_variant = False
        result, cap = self._record(args, kwargs)
        graph.attempts = getattr(graph, "attempts", 0) + 1
        if cap.splits and not cap.breaks:
            new = SegmentedGraph(cap, self.backend, self.mode, self._name())
            if not any(new.same_path(v) for v in graph.variants):
                graph.add_variant(new)
            elif graph.attempts < 2 * graph.max_variants:
                graph.want_variant = True  # this call took a recorded path: try the next one
        return result

    def _dynamic_dims(self):
        """For key position i: the dims allowed to change (None: all of them)."""
        flat = self._flat

        def dims(i):
            j = i - 2
            if self.dynamic is not False and 0 <= j < len(flat):
                marked = getattr(flat[j], "_dynamo_dynamic_indices", None)
                if marked and self.dynamic is not True:
                    return marked
            return None if self.dynamic is not False else set()
        return dims

    def _name(self):
        return getattr(self._fn, "__qualname__", None) or type(self._fn).__name__


def compile_module_inplace(mod, **kwargs):
    """``Module.compile()``: calls of this module instance go through a compiled _call_impl.

    The instance's class is swapped for a cached subclass whose ``__call__`` uses the compiled
    function (special methods are looked up on the type), so other modules pay nothing.
    """
    from ..nn.modules.module import Module
    cls = type(mod)
    if not getattr(cls, "_ember_compiled_class", False):
        sub = _compiled_classes.get(cls)
        if sub is None:
            def __call__(self, *args, **kw):
                return self.__dict__["_compiled_call_impl"](*args, **kw)
            sub = type(cls.__name__, (cls,), {"__call__": __call__, "__module__": cls.__module__,
                                              "__qualname__": cls.__qualname__,
                                              "_ember_compiled_class": True})
            _compiled_classes[cls] = sub
        mod.__class__ = sub
    impl = functools.partial(Module._call_impl, mod)
    mod.__dict__["_compiled_call_impl"] = CompiledFunction(impl, module=mod, **kwargs)


_compiled_classes: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _make_optimized_module():
    from ..nn.modules.module import Module

    class OptimizedModule(Module):
        """What ``ember.compile(module)`` returns: calls go through the compiled forward.

        The original module is ``_orig_mod`` (so state_dict keys carry the ``_orig_mod.``
        prefix, as in torch); other attributes are looked up on it.
        """

        def __init__(self, mod, *, fullgraph=False, dynamic=None, backend="inductor",
                     mode=None):
            super().__init__()
            self._orig_mod = mod
            self.__dict__["_compiled"] = CompiledFunction(
                mod, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                module=mod)

        def forward(self, *args, **kwargs):
            return self.__dict__["_compiled"](*args, **kwargs)

        def __getattr__(self, name):
            try:
                return super().__getattr__(name)
            except AttributeError:
                return getattr(self.__dict__["_modules"]["_orig_mod"], name)

        @property
        def dynamo_ctx(self):
            return self.__dict__["_compiled"]

    OptimizedModule.__module__ = "ember._dynamo.eval_frame"
    return OptimizedModule


def __getattr__(name):
    if name == "OptimizedModule":
        cls = _make_optimized_module()
        globals()["OptimizedModule"] = cls
        return cls
    raise AttributeError(name)
