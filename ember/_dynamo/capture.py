"""Capture: one eager run of a function, recorded at the op registry, forward and backward.

The recorder sees every ``Op`` call (ember's differentiable primitives) while the function runs
eagerly, and keeps each call's class, arguments and parameters as an instruction over *values*.
A value is identified by its NumPy array (tensors are thin wrappers around one): an input's
array, an external tensor's (a parameter, a buffer, a closure constant; read live at replay),
an op output, or an array an op kept on its ctx for backward.

The backward is recorded by walking the recorded autograd nodes in reverse creation order and
calling each op's ``backward`` with recording on; the ops those backwards run become the backward
instructions (see NOTE [Backward capture]).

Anything the recorder cannot replay makes a graph break: a value computed outside the op
registry (a comparison done in NumPy, a random factory), data-dependent Python (``if tensor:``,
a use of an ``item()`` other than returning it: NOTE [item() as an output] in item.py), an
in-place write, a custom ``autograd.Function``. The call then runs eagerly and
``ember._dynamo.explain`` reports where and why.
"""
from __future__ import annotations

import collections
import dataclasses
import linecache
import os
import re
import sys
import threading
from dataclasses import dataclass, field

import numpy as np

from .. import _tensor
from ..autograd import function as _fn
from ..autograd.grad_mode import _state
from . import item
from .exc import Unsupported
from .hooks import Patches, forwarder, original

_EMBER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# factories whose result does not depend on tensor data: safe to keep as constants
_CONST_FACTORIES = {
    "zeros", "ones", "full", "empty", "arange", "linspace", "logspace", "eye", "tensor",
    "as_tensor", "from_numpy", "zeros_like", "ones_like", "full_like", "empty_like", "asarray",
    "scalar_tensor", "tril_indices", "triu_indices", "_zeros_meta", "new_zeros", "new_ones",
    "new_full", "new_empty", "new_tensor", "_wrap", "complex",
}
# factories built by a helper in ops/creation.py: their frames are named by the helper's closure
# (zeros_like/ones_like/empty_like and Tensor.new_zeros/new_ones/new_empty)
_CONST_FACTORY_CODES = {"_like.<locals>.fn", "_new.<locals>.m"}
_NP_FACTORY = re.compile(r"_make\(np\.(zeros|ones|full|empty|arange|eye)\(")
_COUNTER = re.compile(r"\._data \+= 1\s*(#.*)?$")
_RANDOM_FACTORIES = {
    "rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like",
    "normal", "bernoulli", "multinomial", "poisson", "uniform_", "normal_",
}


# NOTE [Sequences of values as op arguments]
# An op argument is a reference: ("s", slot) for a value of the graph, ("c", constant) for
# anything else, or ("k", tuple or list, [references]) for a tuple/list that holds values of the
# graph beside constants -- an indexing key such as (None, None, <an input's array>), as in
# ``mask[None, None, input_pos]``. The replay rebuilds the sequence from the current values, so
# the indices change with the input. An array in a sequence that is not a value of the graph
# (a buffer first seen there, NumPy made outside the registry) is still a graph break, and so is
# a boolean mask (the result's shape would depend on the mask's values).


def ref_slots(r):
    """The slots reference r reads (NOTE [Sequences of values as op arguments])."""
    if r[0] == "s":
        return [r[1]]
    if r[0] == "k":
        return [s for x in r[2] for s in ref_slots(x)]
    return []


def map_ref(r, f):
    """Reference r with f applied to each slot it reads ("c" references as they are)."""
    if r[0] == "s":
        return ("s", f(r[1]))
    if r[0] == "k":
        return ("k", r[1], [map_ref(x, f) for x in r[2]])
    return r


@dataclass
class Instr:
    """One recorded op call: ``outs = cls.forward(ctx, *args, **params)``."""

    cls: type
    args: list            # ("s", slot), ("c", constant) or ("k", tuple/list, [refs])
    params: dict          # name -> such a reference
    outs: list            # output slots
    nig: tuple            # ctx.needs_input_grad at capture
    tuple_out: bool
    meta: list            # (shape, dtype) per output
    node: object = None   # the autograd node at capture (None when nothing was recorded)
    wrap: bool = False    # forward returned a NumPy scalar: wrap with np.asarray


class SideEffect:
    """A Python call made for its effect on live objects (BatchNorm's running statistics),
    replayed at the same point with the same (constant or live) arguments."""

    node = None
    inputs = outputs = outs = ()

    def __init__(self, fn, args, kwargs):
        self.fn, self.args, self.kwargs = fn, args, kwargs
        self.cls = type(fn.__name__, (), {})

    def emit(self, e):
        e.lines.append(f"{e.const(self.fn, 'S')}(*{e.const(self.args)}, "
                       f"**{e.const(self.kwargs)})  # {self.fn.__name__}")


def _count_up(t):
    """Replays ``t._data += 1; t._bump_version()`` (a module's step counter)."""
    t._data += 1
    t._vc[0] += 1


@dataclass
class NodeBackward:
    """A backward the recorder could not see into: call ``cls.backward(ctx, *grads)``."""

    fwd_index: int
    grads: list           # slots (or None) of the gradients of the forward outputs
    outs: list            # slots (or None) of the gradients it returns


@dataclass
class Misc:
    """A small NumPy step of the backward walk: zeros, add, reshape, astype."""

    kind: str
    args: list
    out: int


@dataclass
class Capture:
    """Everything one recorded call produced."""

    kinds: list = field(default_factory=list)    # per slot: ("in", k) ("ext", k) ("const",)
    arrays: list = field(default_factory=list)   # per slot: the array seen at capture
    fwd: list = field(default_factory=list)      # Instr
    bwd: list = field(default_factory=list)      # Instr | NodeBackward | Misc
    ext: list = field(default_factory=list)      # external tensors (read live)
    breaks: list = field(default_factory=list)   # (reason, where)
    outputs: list = field(default_factory=list)  # per flat output: slot or ("py", value)
    diff_outputs: list = field(default_factory=list)  # flat output indices that carry grads
    grad_slots: list = field(default_factory=list)    # slot of each incoming output grad
    targets: list = field(default_factory=list)       # ("in", k) / ("ext", k) needing grads
    target_grads: list = field(default_factory=list)  # slot (or None) of each target's grad
    spent_outputs: list = field(default_factory=list)  # outputs whose graph a backward() freed
    saved_needed: set = field(default_factory=set)    # forward slots the backward reads
    ctx_needed: set = field(default_factory=set)      # forward instrs whose ctx backward reads
    splits: list = field(default_factory=list)  # (fwd position, reason, where, slots read):
    #                                             breaks the call continues past (segments.py)
    stored: bool = False  # out_spec is (result, stored tensors): NOTE [Tensors a call stores]


def _where():
    """file:line of the innermost frame outside ember (the user's code)."""
    f = sys._getframe(2)
    inner = None
    while f is not None:
        fn = f.f_code.co_filename
        if not os.path.abspath(fn).startswith(_EMBER_DIR):
            return f"{fn}:{f.f_lineno} in {f.f_code.co_name}"
        if inner is None:
            inner = f"{fn}:{f.f_lineno} in {f.f_code.co_name}"
        f = f.f_back
    return inner or "<unknown>"


def _creator():
    """Name of the ember function that made a tensor outside ops (a known factory if any)."""
    f = sys._getframe(3)
    # ember's own code often wraps a fresh NumPy factory: _make(np.zeros(shape, dt))
    line = linecache.getline(f.f_code.co_filename, f.f_lineno)
    m = _NP_FACTORY.search(line)
    if m:
        return m.group(1)
    first = None
    for _ in range(6):
        if f is None:
            break
        name = f.f_code.co_name
        if name in _CONST_FACTORIES or name in _RANDOM_FACTORIES:
            return name
        if f.f_code.co_qualname in _CONST_FACTORY_CODES and \
                f.f_globals.get("__name__") == "ember.ops.creation":
            return "zeros_like"  # any of them: a constant of the graph
        if first is None:
            first = name
        f = f.f_back
    return first or "<unknown>"


class RandArray(np.ndarray):
    """A random mask drawn outside any op (dropout), with the recipe to draw it again."""

    recipe = None

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        plain = [np.asarray(x).view(np.ndarray) if isinstance(x, RandArray) else x
                 for x in inputs]
        out = getattr(ufunc, method)(*plain, **kwargs)
        others = [x for x in inputs if not isinstance(x, RandArray)]
        if method != "__call__" or any(np.ndim(x) for x in others) or len(
                [x for x in inputs if isinstance(x, RandArray)]) != 1:
            return out  # mixes with data: an ordinary array
        base = next(x for x in inputs if isinstance(x, RandArray))
        pos = [i for i, x in enumerate(inputs) if x is base][0]
        res = np.asarray(out).view(RandArray)
        res.recipe = base.recipe + ((ufunc, pos, tuple(plain)),)
        return res


def redraw(recipe):
    """Draw a RandArray's mask again (same generator, so eager's sequence of draws is kept)."""
    fn, fargs = recipe[0]
    arr = fn(*fargs)
    for ufunc, pos, plain in recipe[1:]:
        operands = list(plain)
        operands[pos] = arr
        arr = ufunc(*operands)
    return arr


_current = threading.local()


def current_recorder():
    """The recorder of the capture running on this thread, if any."""
    return getattr(_current, "rec", None)


class Recorder:
    """Hooks installed for the duration of one capture (one thread)."""

    _lock = threading.RLock()

    def __init__(self, fullgraph):
        self.cap = Capture()
        self.slots = {}          # id(array) -> slot
        self.owners = {}         # id(memory owner of a value of the graph) -> slot
        self.owner_slots = {}    # id(memory owner of any slot's array) -> its slots
        self.made = {}           # id(array) -> (creator, where) for tensors made outside ops
        self.ext_ids = {}        # id(tensor) -> ext index
        self.nodes = {}          # autograd node -> forward instr index
        self.depth = 0
        self.tid = threading.get_ident()
        self.fullgraph = fullgraph
        self.phase = "fwd"
        self.seg_bad = None      # reason the current backward segment cannot be replayed
        self.versions = []       # (version counter, value at first sight, what) of read tensors
        self.seen_vc = set()
        self.written = set()     # version counters written by recorded side effects
        self.bumps = {}          # id(version counter) -> writes recorded into it (writes.py)
        self.own_vcs = set()     # version counters of tensors an Overwrite made (writes.py)
        self.rebound = False     # a value the call computes was rebound by an in-place op
        self.counters = set()    # version counters of step counters the call increments
        self.tensors = {}        # op output slot -> its tensor (the segments' backward walks)
        self.item_reads = []     # (fwd position, where, slot) of each Tensor.item() of a value
        self._patches = Patches()
        self._restore = self._patches.undo  # (train_step.py and grad_calls.py add to it)

    # ------------------------------------------------------------------ slots
    def new_slot(self, arr, kind):
        s = len(self.cap.kinds)
        self.cap.kinds.append(kind)
        self.cap.arrays.append(arr)
        self.slots[id(arr)] = s
        self.owner_slots.setdefault(id(arr if arr.base is None else arr.base), []).append(s)
        if kind[0] not in ("ext", "const", "rand"):  # NOTE [Arrays computed outside the registry]
            self.owners[id(arr if arr.base is None else arr.base)] = s
        return s

    def graph_break(self, reason, where=None):
        where = where or _where()
        if self.phase == "bwd" and self.seg_bad is None:
            self.seg_bad = reason  # the walk falls back to the node's own backward
            return
        if self.phase == "bwd":
            return
        self.cap.breaks.append((reason, where))
        if self.fullgraph:
            raise Unsupported(f"{reason} (at {where}); fullgraph=True forbids graph breaks. "
                              "Remove the construct or compile without fullgraph=True.")

    def split(self, reason, slots=(), where=None, pos=None):
        """A graph break the call continues past: the ops before it and after it become separate
        graphs (see NOTE [Graph breaks that split] in segments.py). ``slots``: the values Python
        reads there; ``pos``: the point of the split in the recorded forward (default: now)."""
        where = where or _where()
        if self.phase != "fwd" or getattr(self, "inline_done", False):
            # after a backward() recorded inline the graph cannot be split any more
            self.graph_break(reason, where)
            return
        if self.fullgraph:
            raise Unsupported(f"{reason} (at {where}); fullgraph=True forbids graph breaks. "
                              "Remove the construct or compile without fullgraph=True.")
        self.cap.splits.append((len(self.cap.fwd) if pos is None else pos, reason, where,
                                tuple(slots)))

    def resolve_tensor(self, t):
        arr = t._data
        vc = t._vc
        if self.phase == "fwd" and id(vc) not in self.seen_vc:
            self.seen_vc.add(id(vc))
            self.versions.append((vc, vc[0], f"shape {list(arr.shape)}"))
        s = self.slots.get(id(arr))
        if s is not None:
            return s
        made = self.made.get(id(arr))
        if made is None:  # existed before the call: a parameter, buffer or closure tensor
            if t._grad_fn is not None and self.phase == "fwd":
                self.graph_break("a tensor with autograd history that is not an argument is "
                                 "used (pass it as an argument instead)")
            k = len(self.cap.ext)
            self.cap.ext.append(t)
            return self.new_slot(arr, ("ext", k))
        creator, where = made
        if creator in _CONST_FACTORIES:
            if vc[0] != 0:
                self.graph_break(f"a tensor made by {creator}() was modified in place before "
                                 "use", where)
            return self.new_slot(arr, ("const",))
        if creator in _RANDOM_FACTORIES:
            self.graph_break(f"random tensor factory {creator}() is called outside the op "
                             "registry", where)
        else:
            self.graph_break(f"a value is computed outside the op registry by {creator}() "
                             "(NumPy code the recorder cannot replay)", where)
        return self.new_slot(arr, ("const",))

    # NOTE [Arrays computed outside the registry]
    # Op wrappers often hand an op NumPy arrays rather than tensors: an index tensor's data
    # (gather, index_select), an order computed by np.argsort (sort, topk), a value picked in
    # Python (median). An array that is not a value of the graph is recorded as a constant, which
    # is right for one made from Python numbers and wrong for one computed from the call's data:
    # the replay would use the captured numbers for every call. Two cases are seen here and are a
    # graph break: an array a tensor made outside ops holds (``made``: _make(np.argsort(...)) and
    # the like, unless a constant factory made it), and an array sharing memory with a value of
    # the graph (a reshape/view of an input's or an op's array: ``owners`` maps the memory owner
    # of each such value). A fresh copy computed from a value's data (astype, np.array(a[i]))
    # carries no mark: the op wrapper must make it through _make (sorting.py's median does).
    def check_outside(self, a):
        made = self.made.get(id(a))
        owner = a if a.base is None else a.base
        if made is None and owner is not a:
            made = self.made.get(id(owner))
        if made is not None:
            if made[0] not in _CONST_FACTORIES:
                self.graph_break(f"a value is computed outside the op registry by {made[0]}() "
                                 "(NumPy code the recorder cannot replay)", made[1])
        elif id(owner) in self.owners:
            self.graph_break("an op received an array computed from a value of the graph "
                             "outside the op registry (a replay would reuse the captured one)")

    def resolve(self, a):
        if isinstance(a, _tensor.Tensor):
            return ("s", self.resolve_tensor(a))
        if item.slot_of(a, self) is not None:
            # the number is a constant of the graph after the split (guarded by its value)
            self.split("data-dependent Python: the number Tensor.item() returned is passed "
                       "to an op", (item.slot_of(a, self),), *item.read_point(a))
            return ("c", item.plain(a))
        if isinstance(a, np.ndarray):
            s = self.slots.get(id(a))
            if s is not None:
                return ("s", s)
            if isinstance(a, RandArray):
                return ("s", self.new_slot(a, ("rand", a.recipe)))
            self.check_outside(a)
            return ("c", a)
        if isinstance(a, (list, tuple)) and any(isinstance(x, (_tensor.Tensor, np.ndarray))
                                                 and np.ndim(x) for x in a):
            return self.resolve_sequence(a)
        return ("c", a)

    def resolve_sequence(self, a):
        """A tuple/list holding arrays: NOTE [Sequences of values as op arguments]."""
        refs = []
        for x in a:
            arr = x._data if isinstance(x, _tensor.Tensor) else x
            if isinstance(arr, np.ndarray) and arr.dtype == np.bool_:
                self.graph_break("a boolean mask indexes a tensor (the result's shape depends "
                                 "on the mask's values)")
                return ("c", a)
            if isinstance(x, _tensor.Tensor):
                refs.append(("s", self.resolve_tensor(x)))
            elif isinstance(x, np.ndarray) and id(x) in self.slots:
                refs.append(("s", self.slots[id(x)]))
            elif isinstance(x, np.ndarray) and self.made.get(id(x), ("",))[0] in \
                    _CONST_FACTORIES:  # the data of ember.tensor([0, 2]) made in the call
                refs.append(("s", self.new_slot(x, ("const",))))
            elif isinstance(x, np.ndarray) and x.ndim or isinstance(x, (list, tuple)) and any(
                    isinstance(y, (_tensor.Tensor, np.ndarray)) for y in x):
                self.graph_break("an op received a sequence holding an array that is not a "
                                 "value of the graph (not supported by the recorder)")
                return ("c", a)
            else:
                refs.append(("c", x))
        return ("k", tuple if isinstance(a, tuple) else list, refs)

    # ------------------------------------------------------------------ the op hook
    def record(self, cls, args, params, result):
        outs_t = result if type(result) is tuple else (result,)
        ins = [self.resolve(a) for a in args]
        ps = {k: self.resolve(v) for k, v in params.items()}
        node = None
        g = outs_t[0]._grad_fn if outs_t else None
        if g is not None and getattr(g, "_op", None) is cls and g not in self.nodes:
            node = g
        idx = len(self.cap.fwd) if self.phase == "fwd" else -1
        out_slots = [self.new_slot(o._data, ("op", idx)) for o in outs_t]
        if self.phase == "fwd":
            self.tensors.update(zip(out_slots, outs_t, strict=True))
        nig = ()
        if _state.enabled and any(isinstance(a, _tensor.Tensor) and a._requires_grad
                                  for a in args):
            nig = tuple(isinstance(a, _tensor.Tensor) and a._requires_grad for a in args)
        inst = Instr(cls, ins, ps, out_slots, nig,
                     type(result) is tuple, [(o._data.shape, o._data.dtype) for o in outs_t],
                     node)
        inst.rg = tuple(o._requires_grad for o in outs_t)
        inst.strides = tuple(o._data.strides for o in outs_t)  # (a split call's placeholders)
        if self.phase == "fwd":
            self.cap.fwd.append(inst)
            if node is not None:
                self.nodes[node] = idx
                self._map_ctx(node, idx, ins)
        else:
            self.cap.bwd.append(inst)

    def _map_ctx(self, node, idx, ins):
        """Arrays an op kept on its ctx (private saved values, attributes) become values."""
        saved = node._saved if isinstance(node._saved, list) else ()
        consts = [r[1] for r in ins if r[0] == "c" and isinstance(r[1], np.ndarray)]
        for k, s in enumerate(saved):
            if s is not None and s.tensor is not None and id(s.tensor._data) not in self.slots:
                arr = s.tensor._data
                # a constant operand saved as it is (a promoted Python scalar) stays constant
                kind = ("const",) if any(arr is c for c in consts) else ("saved", idx, k)
                self.new_slot(arr, kind)
        for name, v in vars(node).items():
            if type(v) is np.ndarray and id(v) not in self.slots:
                self.new_slot(v, ("attr", idx, name))

    # ------------------------------------------------------------------ install / remove
    def install(self):
        rec = self
        if _tensor._backward[0] is None:
            # Tensor.backward binds ember.autograd.backward on first use: bind the real one
            # now, or a first backward() during a capture would keep this recorder's hook
            from ..autograd import backward as real_backward
            _tensor._backward[0] = real_backward
        _current.rec = self
        orig_run = _fn.Op.__dict__["_run"].__func__

        def _run(cls, *args, **params):
            if rec.depth or threading.get_ident() != rec.tid:
                return orig_run(cls, *args, **params)
            rec.depth += 1
            try:
                result = orig_run(cls, *args, **params)
            finally:
                rec.depth -= 1
            rec.record(cls, args, params, result)
            return result

        self._patch(_fn.Op, "_run", classmethod(_run))

        orig_fapply = _fn.Function.__dict__["apply"].__func__

        def fapply(cls, *args, **kwargs):
            if threading.get_ident() == rec.tid and rec.depth == 0 and _state.enabled and any(
                    isinstance(a, _tensor.Tensor) and a._requires_grad for a in args):
                rec.graph_break(f"custom autograd.Function {cls.__name__} (its backward is "
                                "Python the recorder does not see)")
            return orig_fapply(cls, *args, **kwargs)

        self._patch(_fn.Function, "apply", classmethod(fapply))
        self._hook_make()
        self._hook_reads()
        self._hook_inplace()
        self._hook_dropout()
        self._hook_side_effects()
        self._hook_mocks()
        from .train_step import install as install_train_step
        install_train_step(self)

    def _hook_side_effects(self):
        from ..nn.functional import _norm
        rec = self
        orig = getattr(_norm, "_update_running", None)
        if orig is None:
            return

        def update_running(*args, **kwargs):
            if rec.depth == 0 and threading.get_ident() == rec.tid:
                rec.cap.fwd.append(SideEffect(orig, args, kwargs))
                for a in args:
                    if isinstance(a, _tensor.Tensor):
                        rec.written.add(id(a._vc))
            return orig(*args, **kwargs)

        self._patch(_norm, "_update_running", update_running)

        orig_bump = _tensor.Tensor._bump_version

        def bump(t):
            if rec.depth == 0 and threading.get_ident() == rec.tid and id(t._vc) not in \
                    rec.written:
                f = sys._getframe(1)
                line = linecache.getline(f.f_code.co_filename, f.f_lineno - 1)
                if _COUNTER.search(line):  # a step counter: t._data += 1 (BatchNorm)
                    rec.cap.fwd.append(SideEffect(_count_up, (t,), {}))
                    rec.counters.add(id(t._vc))
                else:
                    rec.graph_break("a tensor is modified in place by Python code outside ops")
            return orig_bump(t)

        self._patch(_tensor.Tensor, "_bump_version", bump)

    def _hook_mocks(self):
        """A call of a unittest.mock object is a graph break: a mock exists to record its calls
        (tests assert `weight.called` after each forward), and torch.compile does not trace
        into unittest.mock, so it calls the mock on every call. Replaying the recorded graph
        would skip it; the call runs eagerly instead. (Only when the test has imported
        unittest.mock: nothing is imported here.)"""
        mock = sys.modules.get("unittest.mock")
        if mock is None:
            return
        rec = self
        orig = mock.CallableMixin.__call__

        def call(mock_self, *args, **kwargs):
            if rec.depth == 0 and threading.get_ident() == rec.tid:
                rec.graph_break("a call of a unittest.mock object (its calls are recorded by "
                                "Python; the call runs eagerly so that every call reaches it)")
            return orig(mock_self, *args, **kwargs)

        self._patch(mock.CallableMixin, "__call__", call)

    def check_versions(self):
        """A tensor the graph reads changed in place outside recorded ops: a graph break."""
        for vc, v, what in self.versions:
            if vc[0] != v + self.bumps.get(id(vc), 0) and id(vc) not in self.written:
                self.graph_break(f"a tensor the graph reads ({what}) was modified in place "
                                 "by code the recorder does not see", "<in-place write>")
                return

    def _patch(self, obj, name, value):
        self._patches.set(obj, name, value)

    def remove(self):
        _current.rec = None
        self._patches.restore()

    def _hook_make(self):
        # _make / _make_view are imported by name all over ember, so the function objects are
        # kept and only their code is swapped (see NOTE [Tensor creation hook])
        rec = self
        for fname in ("_make", "_make_view"):
            f = getattr(_tensor, fname)
            orig = original(f)

            def logged(a, k, _orig=orig):
                t = _orig(*a, **k)
                if rec.depth == 0 and threading.get_ident() == rec.tid:
                    rec.made.setdefault(id(t._data), (_creator(), _where()))
                return t

            self._patches.swap(f, forwarder(f, logged, "capture" + fname))

    def _hook_reads(self):
        rec = self
        T = _tensor.Tensor
        for name in ("item", "tolist", "__bool__", "__float__", "__int__", "__index__",
                     "numpy", "__repr__", "__str__", "__format__"):
            orig = getattr(T, name)

            def read(self_t, *a, _orig=orig, _name=name, **k):
                if rec.depth == 0 and threading.get_ident() == rec.tid:
                    s = rec.slots.get(id(self_t._data))
                    if id(self_t._vc) in rec.counters:
                        rec.graph_break(f"data-dependent Python: Tensor.{_name}() reads a "
                                        "counter the call itself updates")
                    elif s is not None and rec.cap.kinds[s][0] not in ("ext", "const"):
                        rec.depth += 1  # (float() reads through item(): one break)
                        try:
                            value = _orig(self_t, *a, **k)
                        finally:
                            rec.depth -= 1
                        # NOTE [item() as an output] in item.py
                        held = item.wrap(value, rec, s) if _name == "item" else None
                        if held is not None:
                            return held
                        what = "print/format" if _name in ("__repr__", "__str__",
                                                             "__format__") else _name
                        rec.split(f"data-dependent Python: Tensor.{what}() reads a value "
                                  "the graph computes", (s,))
                        return value
                    elif s is None:  # made outside ops from the call's data (argmax())
                        made = rec.made.get(id(self_t._data))
                        if made is not None and made[0] not in _CONST_FACTORIES:
                            rec.graph_break(f"data-dependent Python: Tensor.{_name}() reads a "
                                            f"value computed outside the op registry by "
                                            f"{made[0]}()", made[1])
                return _orig(self_t, *a, **k)

            self._patch(T, name, read)

    def _hook_inplace(self):
        from ..ops import registry
        rec = self
        from .writes import install
        install(rec)  # NOTE [In-place writes in a compiled call] in writes.py
        orig_out = registry.write_out

        def write_out(out, result, name):
            if rec.depth == 0 and threading.get_ident() == rec.tid:
                rec.graph_break(f"{name}(out=...) writes into a tensor the recorder does not "
                                "track; drop out= inside compiled code")
            return orig_out(out, result, name)

        self._patch(registry, "write_out", write_out)

    def _hook_dropout(self):
        from ..nn.functional import _dropout as F
        orig = getattr(F, "_keep_mask", None)
        if orig is None:
            return

        def keep_mask(shape, p, dtype):
            res = np.asarray(orig(shape, p, dtype)).view(RandArray)
            res.recipe = ((orig, (shape, p, dtype)),)
            return res

        self._patch(F, "_keep_mask", keep_mask)


# NOTE [Tensor creation hook]
# A value the recorder has not seen must be classified: a tensor that existed before the call
# (parameter, buffer, closure constant) is read live at each replay; one made during the call by
# a factory (zeros, arange) is a constant; one made by other non-op code (a NumPy comparison, a
# random factory) cannot be replayed and is a graph break. Telling these apart needs to know
# where each tensor was made, so while a capture runs `_tensor._make`'s code object is replaced
# by a two-line forwarder to a logger (the function object itself is imported by name in many
# modules, so only its code can be swapped); the original code is restored afterwards, leaving
# the eager hot path untouched.


def flatten(obj, out):
    """Tensors and Python values of nested tuples/lists/dicts into out; returns a spec."""
    if isinstance(obj, _tensor.Tensor):
        out.append(obj)
        return "T"
    if isinstance(obj, (tuple, list)) and not hasattr(obj, "_fields"):
        return (type(obj), tuple(flatten(x, out) for x in obj))
    if isinstance(obj, tuple):  # namedtuple
        return (type(obj), tuple(flatten(x, out) for x in obj))
    if isinstance(obj, dict):
        kind = type(obj)  # a subclass is rebuilt as itself (NOTE [Dict outputs keep their class])
        extra = (kind, getattr(obj, "default_factory", None)) if kind is not dict else ()
        return (dict, tuple(obj.keys()), tuple(flatten(v, out) for v in obj.values())) + extra
    out.append(obj)
    return "P"


# NOTE [Dict outputs keep their class]
# Models return dict subclasses: diffusers' and transformers' outputs are dataclasses deriving
# from OrderedDict (read as `out.sample`, `out.logits`), others OrderedDict or defaultdict. A
# compiled call returns the class the eager call returned: a dataclass is made from its entries
# as keywords (its fields left out of the mapping keep their defaults, as these outputs hold only
# the fields that were set), a defaultdict with its factory, any other subclass from the
# mapping.
def _rebuild_dict(kind, factory, mapping):
    if dataclasses.is_dataclass(kind):
        return kind(**mapping)
    if issubclass(kind, collections.defaultdict):
        return kind(factory, mapping)
    return kind(mapping)


def unflatten(spec, it):
    if spec == "T" or spec == "P":
        return next(it)
    if spec[0] is dict:
        mapping = dict(zip(spec[1], (unflatten(s, it) for s in spec[2]), strict=False))
        return _rebuild_dict(spec[3], spec[4], mapping) if len(spec) > 3 else mapping
    items = [unflatten(s, it) for s in spec[1]]
    if hasattr(spec[0], "_fields"):  # a namedtuple takes its fields as arguments
        return spec[0](*items)
    return spec[0](items)  # tuple, list and their subclasses (ember.Size)
