"""Graph nodes, the differentiable-op base class ``Op`` and the user-facing ``Function``.

A node is created per op call that needs a gradient. It is also the op's ``ctx``: it holds the
saved tensors and whatever the forward stored on it, and ``next_functions`` — one edge per input.
Edges point from outputs towards inputs only, and saved *outputs* are stored as raw arrays (the
output tensor is rebuilt when unpacked), so the graph has no reference cycles and CPython frees
it the moment the last tensor referring to it goes away (see NOTE [No cycles]).
"""
from __future__ import annotations

import functools
import inspect
import itertools
import traceback

import numpy as np

from .._tensor import Tensor, _make, _make_view, _new
from ..profiler.profiler import _active as _prof
from ..profiler.profiler import record_op
from .grad_mode import _saved_hooks, _state, no_grad
from .node import _BF16, AccumulateGrad, Anomaly, Node, _is_float, _RemovableHandle  # noqa: F401

# NOTE [No cycles]
# output tensor -> its grad_fn node -> edges -> earlier nodes / AccumulateGrad -> leaf tensor.
# A node never holds its own output tensor: a saved output is kept as (array, version counter)
# and turned back into a tensor pointing at the node only while backward runs. Hooks that need
# the tensor (retain_grad) hold it through a weak reference. tests/autograd/test_memory.py
# checks this with gc disabled.

_seq = itertools.count()


# ---------------------------------------------------------------------------------------------
# saved tensors

_FREED = object()


class _Saved:
    """One saved value: the input tensor itself, or an output's array + version counter."""

    __slots__ = ("tensor", "array", "vc", "version", "output_nr", "checksum", "packed",
                 "unpack_hook", "arg")

    def __init__(self, tensor, array, vc, version, output_nr, arg=None):
        # one assignment a line: a tuple assignment builds and unpacks a tuple (once per saved
        # value of every recorded op)
        self.tensor = tensor
        self.array = array
        self.vc = vc
        self.version = version
        self.output_nr = output_nr
        self.checksum = None
        self.unpack_hook = None  # set with `packed` when saved_tensors_hooks were active
        self.arg = arg  # the argument position it came from: its name (saved_attrs.py)


def _checksum(a):
    import zlib
    return zlib.crc32(np.ascontiguousarray(a).view(np.uint8).reshape(-1).data)


class OpNode(Node):
    """The node (and ctx) of an ``Op`` or ``Function`` call."""

    _op = None
    _saved = ()
    _to_save = ()
    materialize_grads = True
    needs_input_grad = ()
    _dirty = ()
    _non_diff = ()
    _guards = ()  # (tensor, version, checksum or None): see NOTE [Guarded inputs]

    _builtin = False  # True on the per-name node classes of built-in ops (node_class)

    def name(self):
        return self._op.__name__ + "Backward0"

    # --- ctx API
    def save_for_backward(self, *values):
        self._to_save = values

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        self._non_diff = tensors

    def set_materialize_grads(self, value: bool):
        self.materialize_grads = bool(value)

    @property
    def saved_tensors(self):
        saved = self._check_saved()
        if len(saved) == 2:  # most binary ops (a comprehension is a call of its own in 3.11)
            return (self._unpack(saved[0]), self._unpack(saved[1]))
        return tuple([self._unpack(s) for s in saved])

    saved_variables = saved_tensors

    def _check_saved(self):
        if self._saved is _FREED:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved "
                "tensors after they have already been freed). Saved intermediate values of the "
                "graph are freed when you call .backward() or autograd.grad(). Specify "
                "retain_graph=True if you need to backward through the graph a second time or "
                "if you need to access saved tensors after calling backward.")
        return self._saved

    def _unpack(self, s):
        if s is None:
            return None
        t = s.tensor
        if t is not None and s.checksum is None:  # a saved input, unchanged: the common case
            vc = s.vc
            if vc is None or vc[0] == s.version:
                return t
        if s.unpack_hook is not None:
            return self._unpack_hooked(s)
        if s.vc is not None and s.vc[0] != s.version:
            t = s.tensor if s.tensor is not None else None
            shape = tuple(t.shape) if t is not None else s.array.shape
            dt = t.dtype if t is not None else s.array.dtype
            what = (f"output {s.output_nr} of {self.name()}" if s.output_nr is not None
                    else f"an input saved by {self.name()}")
            raise _modified_error(dt, shape, what, s.vc[0], s.version, self._op.__name__)
        if s.checksum is not None:
            arr = s.tensor._data if s.tensor is not None else s.array
            if _checksum(arr) != s.checksum:
                raise _alias_write_error(self._op.__name__, arr)
        if s.tensor is not None:
            return s.tensor
        t = _make(s.array, s.vc)
        if s.output_nr is not None and _state.enabled:
            # a saved output points back at this node only while backward runs: no cycle
            t._grad_fn, t._output_nr, t._requires_grad = self, s.output_nr, True
        return t

    def _unpack_hooked(self, s):
        t = s.unpack_hook(s.packed)
        if not isinstance(t, Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                            f"result of type {type(t).__name__}")
        if s.output_nr is not None and _state.enabled and t._grad_fn is not self:
            # as for an unhooked saved output: connected to this node only while backward runs
            t = _make(t._data, t._vc)
            t._grad_fn, t._output_nr, t._requires_grad = self, s.output_nr, True
        return t

    def release(self):
        self._saved = _FREED

    def _check_guards(self):
        """Refuse to run backward once an index/target/mask input (guard_inputs) changed."""
        for t, version, checksum in self._guards:
            if t._vc[0] != version:
                raise _modified_error(t.dtype, tuple(t.shape),
                                      f"an index, target or mask input of {self.name()}",
                                      t._vc[0], version, self._op.__name__)
            if checksum is not None and _checksum(t._data) != checksum:
                raise _alias_write_error(self._op.__name__, t._data)

    def apply(self, grads):
        if self._guards:
            self._check_guards()
        # one output with its gradient (what the engine passes): nothing to fill in
        if self.materialize_grads and (len(grads) != 1 or grads[0] is None):
            for i, g in enumerate(grads):
                if g is None:
                    grads[i] = _zeros_meta(self._out_meta[i])
        op = self._op
        if getattr(op, "holomorphic", False) and _any_complex(grads):
            out = _conjugate_backward(op, self, grads)
        else:
            out = op.backward(self, *grads)
        if not isinstance(out, tuple):
            out = (out,)
        n = len(self.next_functions)
        if len(out) < n and self._builtin:
            # built-in ops may leave out the trailing non-tensor arguments (dim, flags)
            out = out + (None,) * (n - len(out))
        return out


# NOTE [Complex gradients]
# ember follows torch's convention: for a real loss L of complex z = x + iy, z.grad holds
# dL/dx + i dL/dy, the conjugate Wirtinger derivative times 2 (so the same gradient-descent step
# works for real and complex parameters). For an op that is holomorphic in its inputs (exp, mul,
# matmul ...) the chain rule is then grad_in = grad_out * conj(f'(z)). Backward formulas are
# written for real inputs as grad_out * f'(x); an op class marks itself ``holomorphic = True``
# and, when a complex gradient reaches it, runs its backward as conj(backward(conj(grad))),
# which turns grad * f'(z) into grad * conj(f'(z)) without a second formula. Real-linear ops
# (sum, views, indexing, cat) need nothing: conj commutes with them. Non-holomorphic ops (abs,
# angle, real, imag, conj) write their complex formula out. A complex gradient reaching a real
# input keeps its real part (the engine's _check_grad), as torch does.
def _any_complex(grads):
    # a loop, not any() over a generator: this runs for every holomorphic node in backward
    for g in grads:
        if g is not None and g._data.dtype.kind == "c":
            return True
    return False


def _conjugate_backward(op, ctx, grads):
    grads = [g if g is None else g.conj() for g in grads]
    out = op.backward(ctx, *grads)
    if isinstance(out, tuple):
        return tuple(o.conj() if isinstance(o, Tensor) else o for o in out)
    return out.conj() if isinstance(out, Tensor) else out


def _modified_error(dtype, shape, what, version, expected, op_name):
    # torch's phrase, kept word for word so that answers found online still apply
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{dtype} {list(shape)}], which is {what}, is at version "
        f"{version}; expected version {expected} instead. Hint: the forward op that "
        f"saved it is {op_name}; avoid modifying it in place (clone() it "
        "first), or enable ember.autograd.set_detect_anomaly(True) to find where it was "
        "created.")


def _alias_write_error(op_name, arr):
    return RuntimeError(
        f"detect_anomaly: a tensor saved for backward by {op_name} "
        f"(shape {list(arr.shape)}, dtype {arr.dtype}) was modified after it was "
        "saved, through memory the version counter does not see (a .numpy() or "
        "DLPack alias). Modify a copy instead.")


# NOTE [Guarded inputs]
# Index, target, mask and offset tensors reach an Op's forward as NumPy arrays that the op
# keeps for its backward (ctx.index = index). Kept as plain arrays, an in-place change between
# forward and backward (i.add_(1), target[0] = 3) went unseen: in range, the gradient was
# silently wrong; out of range, a numba kernel wrote outside its array (segfault). torch saves
# such tensors like any other and raises its version-counter error. `guard_inputs` gives ember
# the same rule without changing how ops receive their arguments: the function that calls the
# op names the tensors its arrays came from, their versions are recorded on the node, and
# backward refuses to run once any of them moved (under anomaly mode their bytes are
# checksummed too, which also catches writes through .numpy() aliases). A guard holds the tensor
# itself (small: indices, targets, masks); tests/autograd/test_saved_int_versions.py walks every
# op that keeps an integer or boolean input.
def guard_inputs(result, *tensors):
    """Version-check ``tensors`` (the index/target/mask tensors an op read in its forward and
    keeps for its backward) when backward runs through the node that produced ``result``;
    see NOTE [Guarded inputs]. Returns ``result``."""
    first = result[0] if isinstance(result, tuple) else result
    node = first._grad_fn if isinstance(first, Tensor) else None
    if node is None or not isinstance(node, OpNode):
        return result
    anomaly = Anomaly.enabled
    guards = list(node._guards)
    for t in tensors:
        if isinstance(t, Tensor):
            guards.append((t, t._vc[0], _checksum(t._data) if anomaly else None))
    node._guards = tuple(guards)
    return result


def _zeros_meta(meta):
    shape, dt = meta
    return _make(np.zeros(shape, dt))


# ---------------------------------------------------------------------------------------------
# op application


def _edge(t):
    """The (node, output_nr) a gradient for tensor t flows into."""
    if t._base is not None and t._view_v != t._vc[0]:
        t._refresh_view_grad_fn()
    fn = t._grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    if t._requires_grad:
        return (t._accumulator(), 0)
    return (None, 0)


_NO_EDGE = (None, 0)  # the edge of an argument that takes no gradient (immutable: shared)


def _finish(node, op, args, arrays, outs, out_arrays):
    """Connect a freshly computed op call into the graph and pack what it saved."""
    node._op = op
    node._seq = next(_seq)
    if op.grad_name_for is not None:  # a name that depends on the operands
        name = op.grad_name_for(arrays)
        if name is not None:
            node.__class__ = node_class(name)
    # a list comprehension, not a generator into tuple(): this runs for every recorded op
    node.next_functions = tuple([
        _edge(a) if isinstance(a, Tensor) and a._requires_grad else _NO_EDGE for a in args])
    node.num_outputs = len(outs)
    node._out_meta = [(o.shape, o.dtype) for o in out_arrays]
    nd = node._non_diff
    for i, o in enumerate(outs):
        if _is_float(o._data.dtype) and not (nd and any(o is n for n in nd)):
            o._grad_fn, o._output_nr, o._requires_grad = node, i, True
    if node._to_save:
        node._saved = [_pack(node, v, args, arrays, outs, out_arrays) for v in node._to_save]
        if len(node._saved) > 1:
            _split_shared(node._saved, args, arrays)
        node._to_save = ()
    if Anomaly.enabled:
        node._trace = "".join(traceback.format_stack()[:-3])


def _finish1(node, op, args, arrays, out, raw):
    """`_finish` for the one-array output of most ops, after `_record` set needs_input_grad:
    the same steps unrolled (a recorded Linear call spent ~5 us here, as much as its GEMM)."""
    name_for = getattr(op, "grad_name_for", None)
    if name_for is not None:  # a node name from the operands: NOTE [Node class names]
        name = name_for(arrays)
        if name is not None:
            node.__class__ = node_class(name)
    node._op = op
    node._seq = next(_seq)
    need = node.needs_input_grad
    # one to three arguments unrolled: a comprehension is a function call of its own in 3.11
    n = len(args)
    if n == 2:
        node.next_functions = (_edge(args[0]) if need[0] else _NO_EDGE,
                               _edge(args[1]) if need[1] else _NO_EDGE)
    elif n == 1:
        node.next_functions = (_edge(args[0]),)  # recorded: its one argument needs a gradient
    elif n == 3:  # Linear's (input, weight, bias)
        node.next_functions = (_edge(args[0]) if need[0] else _NO_EDGE,
                               _edge(args[1]) if need[1] else _NO_EDGE,
                               _edge(args[2]) if need[2] else _NO_EDGE)
    else:
        node.next_functions = tuple([_edge(a) if n else _NO_EDGE
                                     for a, n in zip(args, need, strict=True)])
    dt = raw.dtype
    node._out_meta = [(raw.shape, dt)]
    if dt.kind in "fc" or dt == _BF16:
        nd = node._non_diff
        if not (nd and any(out is n for n in nd)):
            out._grad_fn = node
            out._output_nr = 0
            out._requires_grad = True
    to_save = node._to_save
    if to_save:
        if _saved_hooks.stack or Anomaly.enabled:
            node._saved = [_pack(node, v, args, arrays, (out,), (raw,)) for v in to_save]
        elif len(to_save) == 2:
            s0 = _pack_plain(to_save[0], args, arrays, out, raw)
            s1 = _pack_plain(to_save[1], args, arrays, out, raw)
            node._saved = [s0, s1]
            if s0 is not None and s1 is not None and s0.tensor is s1.tensor is not None and \
                    args[0] is not args[1]:
                _split_shared(node._saved, args, arrays)
        else:
            node._saved = [_pack_plain(v, args, arrays, out, raw) for v in to_save]
            if len(to_save) > 2:
                _split_shared(node._saved, args, arrays)
        node._to_save = ()
    if Anomaly.enabled:
        node._trace = "".join(traceback.format_stack()[:-3])


def _split_shared(saved, args, arrays):
    """Saved values matched to one input because two different input tensors hold the same
    array (two detach()es of one tensor, as torch.func makes when one tensor is entered twice)
    are given each its own tensor, in argument order: otherwise a second derivative with
    respect to the later tensor is silently missing (NOTE [What save_for_backward keeps])."""
    used: set = set()
    for i, s in enumerate(saved):
        if s is None or s.tensor is None or s.arg is None:
            continue
        k = s.arg
        if k in used:
            for j in range(len(args)):
                a = args[j]
                if j not in used and arrays[j] is arrays[k] and isinstance(a, Tensor) and \
                        a is not args[k]:
                    saved[i] = _Saved(a, None, a._vc, a._vc[0], None, j)
                    k = j
                    break
        used.add(k)


def _pack_plain(v, args, arrays, out, raw):
    """`_pack` of one value for a one-output op without saved-tensor hooks or anomaly mode."""
    if v is None:
        return None
    for k in range(len(arrays)):  # an input first, as `_pack` (a non-tensor one: `_pack`)
        if v is arrays[k]:
            a = args[k]
            if isinstance(a, Tensor):
                return _Saved(a, None, a._vc, a._vc[0], None, k)
            break
    else:
        if v is raw:  # the output
            return _Saved(None, raw, out._vc, out._vc[0], 0)
    return _pack(None, v, args, arrays, (out,), (raw,))


def _pack(node, v, args, arrays, outs, out_arrays):
    if v is None:
        return None
    if isinstance(v, Tensor):  # autograd.Function saves tensors
        for i, o in enumerate(outs):
            if v is o:
                s = _Saved(None, o._data, o._vc, o._vc[0], i)
                break
        else:
            s = _Saved(v, None, v._vc, v._vc[0], None)
    else:
        arg = None  # a non-tensor argument saved as it was (a scalar exponent)
        for k, (a, arr) in enumerate(zip(args, arrays)):
            if v is arr:
                if isinstance(a, Tensor):
                    s = _Saved(a, None, a._vc, a._vc[0], None, k)
                    break
                if arg is None:
                    arg = k
        else:
            for i, arr in enumerate(out_arrays):
                if v is arr:
                    o = outs[i]
                    s = _Saved(None, arr, o._vc, o._vc[0], i)
                    break
            else:  # a private intermediate: nobody else can modify it
                s = _Saved(_make(np.asarray(v)), None, None, 0, None, arg)
    if _saved_hooks.stack:
        return _pack_hooked(s, outs)
    if Anomaly.enabled:
        s.checksum = _checksum(s.tensor._data if s.tensor is not None else s.array)
    return s


def _pack_hooked(s, outs):
    """Hand the saved tensor to the innermost pack hook; keep only what it returns."""
    pack_hook, unpack_hook = _saved_hooks.stack[-1]
    t = s.tensor if s.output_nr is None else outs[s.output_nr]
    return pack_with(pack_hook, unpack_hook, t, s)


def pack_with(pack_hook, unpack_hook, t, s):
    """A saved value like `s` holding only pack_hook(t), rebuilt by unpack_hook on use."""
    hooked = _Saved(None, None, None, 0, s.output_nr, s.arg)
    # what the hook itself computes is not hooked again (as in torch): a hook like
    # `lambda x: x * 4` would otherwise pack the tensors its own op saves, without end
    stack, _saved_hooks.stack = _saved_hooks.stack, ()
    try:
        hooked.packed = pack_hook(t)
    finally:
        _saved_hooks.stack = stack
    hooked.unpack_hook = unpack_hook
    return hooked


# NOTE [Node class names]
# A built-in op's node is an instance of a small OpNode subclass named as torch names the
# backward of that call (type(t.grad_fn).__name__ and t.grad_fn.name() are what programs print
# and compare): "<Op>Backward0" by default, or the op's ``grad_name``. Where torch's name
# depends on the operands (matmul of two matrices is MmBackward0, of two batches BmmBackward0)
# the op sets ``grad_name_for(arrays)``, asked only for recorded calls; where it depends on the
# entry point (max() over everything is MaxBackward1, amax() AmaxBackward0, both the same op)
# the entry renames its result's node with ``rename_node``. Only the name changes: the class
# adds no behaviour, and the op (node._op) is the same.
_node_classes: dict = {}


def _class_name(self):
    return type(self).__name__


def node_class(name):
    """The OpNode subclass called ``name`` (made once, then shared)."""
    cls = _node_classes.get(name)
    if cls is None:
        cls = type(name, (OpNode,), {"name": _class_name, "_builtin": True,
                                     "__module__": "ember.autograd.graph"})
        _node_classes[name] = cls
    return cls


def rename_node(result, name):
    """Give the node that produced ``result`` (a tensor or a tuple's first tensor) the class
    called ``name``; returns ``result``. See NOTE [Node class names]."""
    first = result[0] if type(result) is tuple else result
    node = first._grad_fn
    if node is not None and node._builtin:
        node.__class__ = node_class(name)
    return result


# NOTE [What save_for_backward keeps]
# In an Op's forward, saved arrays are matched by identity: an array that IS an input's array
# is saved as that input tensor (version-checked, and differentiable for double backward); one
# that IS a returned output array is saved as that output; anything else (an .astype() copy, an
# intermediate) is saved as a constant. So save exactly the array you return or receive when
# the backward must differentiate through it.


class Op:
    """Base of ember's built-in differentiable ops.

    ``forward(ctx, *arrays, **params)`` computes with NumPy arrays (Tensor arguments arrive as
    their arrays) and returns an array or a tuple of arrays; ``backward(ctx, *grads)`` receives
    Tensors and returns one Tensor (or None) per positional argument, built from ember ops so
    that double backward works.
    """

    view = False  # the output is a view of the first argument (shares its storage)
    holomorphic = False  # complex grads: see NOTE [Complex gradients]
    grad_name = None  # the node's class name when not "<Op>Backward0": NOTE [Node class names]
    grad_name_for = None  # staticmethod(arrays) -> a name or None, for recorded calls
    _node_cls = OpNode

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        own = cls.__dict__.get("grad_name")
        cls._node_cls = node_class(own or cls.__name__ + "Backward0")

    @classmethod
    def apply(cls, *args, **params):
        if _prof.prof is not None:  # the only profiler cost when not profiling
            return _profiled(cls, args, params)
        return cls._run(*args, **params)

    @classmethod
    def _run(cls, *args, **params):
        # the hot path of every op: kept free of generators and lazy imports
        if _batch_hook[0] is not None:  # inside ember.func.vmap: NOTE [vmap batching]
            res = _batch_hook[0](cls, args, params)
            if res is not NotImplemented:
                return res
        # the arrays of the arguments; one and two arguments (nearly every op) are unrolled:
        # 0.15 us of a 2.7 us 4x4 matmul (benchmarks/overhead.py)
        # forward is called with the arrays spelled out (not *arrays: 0.13 us a call)
        record = False
        node = cls._node_cls()
        n = len(args)
        if n == 1:
            x = args[0]
            if isinstance(x, Tensor):
                record = x._requires_grad
                x = x._data
            arrays = (x,)
            if record:  # _record unrolled: the one argument needs its gradient
                if _state.enabled:
                    node.needs_input_grad = _NEED_FIRST
                else:
                    record = False
            raw = cls.forward(node, x, **params) if params else cls.forward(node, x)
        elif n == 2:
            x, y = args
            x_needs = y_needs = False
            if isinstance(x, Tensor):
                x_needs = x._requires_grad
                x = x._data
            if isinstance(y, Tensor):
                y_needs = y._requires_grad
                y = y._data
            arrays = (x, y)
            if (x_needs or y_needs) and _state.enabled:  # _record unrolled
                record = True
                node.needs_input_grad = (x_needs, y_needs)
            raw = cls.forward(node, x, y, **params) if params else cls.forward(node, x, y)
        elif n == 3:  # Linear's (input, weight, bias): unrolled too (0.7 us of the loop below)
            x, y, z = args
            x_needs = y_needs = z_needs = False
            if isinstance(x, Tensor):
                x_needs = x._requires_grad
                x = x._data
            if isinstance(y, Tensor):
                y_needs = y._requires_grad
                y = y._data
            if isinstance(z, Tensor):
                z_needs = z._requires_grad
                z = z._data
            arrays = (x, y, z)
            if (x_needs or y_needs or z_needs) and _state.enabled:  # _record unrolled
                record = True
                node.needs_input_grad = (x_needs, y_needs, z_needs)
            raw = cls.forward(node, x, y, z, **params) if params else cls.forward(node, x, y, z)
        else:
            arrays = []
            for a in args:
                if isinstance(a, Tensor):
                    arrays.append(a._data)
                    if a._requires_grad:
                        record = True
                else:
                    arrays.append(a)
            if record:
                record = _record(node, args)
            raw = cls.forward(node, *arrays, **params)
        if type(raw) is np.ndarray:  # the common case, first
            if cls.view:
                result = _make_view(raw, args[0])
            else:
                result = _new(Tensor)  # _make(raw) inlined: a call less per op (60 ns)
                result._data = raw
                result._vc = [0]
            if record:
                _finish1(node, cls, args, arrays, result, raw)
            if _fw_active[0] and _state.fw_enabled:
                from .forward_ad import _propagate
                _propagate(cls, node, args, (result,), params)
            return result
        if type(raw) is tuple:
            out_arrays = [o if type(o) is np.ndarray else np.asarray(o) for o in raw]
            if cls.view:
                outs = [_make_view(o, args[0]) for o in out_arrays]
            else:
                outs = [_make(o) for o in out_arrays]
            result = tuple(outs)
        else:  # a NumPy scalar
            scalar, raw = raw, np.asarray(raw)
            if node._to_save:  # keep "saved the output" true for NumPy scalar results
                node._to_save = tuple(raw if v is scalar else v for v in node._to_save)
            out_arrays = (raw,)
            result = _make_view(raw, args[0]) if cls.view else _make(raw)
            outs = (result,)
        if record:
            _finish(node, cls, args, arrays, outs, out_arrays)
        if _fw_active[0] and _state.fw_enabled:
            from .forward_ad import _propagate
            _propagate(cls, node, args, outs, params)
        return result

    @staticmethod
    def forward(ctx, *args, **params):  # pragma: no cover - abstract
        raise NotImplementedError

    @staticmethod
    def backward(ctx, *grads):  # pragma: no cover - abstract
        raise NotImplementedError


def _record(node, args):
    """Whether an op call with an input that requires grad records a node (grad mode, a
    thread-local read, only matters then); sets the node's needs_input_grad when it does."""
    if not _state.enabled:
        return False
    node.needs_input_grad = tuple([isinstance(a, Tensor) and a._requires_grad for a in args])
    return True


_NEED_FIRST = (True,)  # needs_input_grad of a recorded one-argument call
_batch_hook = [None]  # set by ember.func.vmap while it runs (ember/func/_batched.py)
_fw_active = [False]  # set while a forward-AD dual_level is open (checked on every op)
# set while a compiled call's replay hooks Op._run by swapping its code, which leaves
# Op.__dict__ as it is (NOTE [Hooks by code swap] in ember/_dynamo/hooks.py)
_run_hooked = [False]


def _profiled(cls, args, params):
    p = _prof.prof
    start = p._now_us()
    res = cls._run(*args, **params)
    record_op(cls.__name__.lower(), args, res if isinstance(res, tuple) else (res,), start, "op")
    return res


class FunctionCtx(OpNode):
    """ctx of a user-defined Function; each Function class gets a subclass named
    ``<Class>Backward`` (`_ctx_class`), the name torch gives its grad_fn."""

    _tensor_args: tuple = ()  # per argument of apply: was it a tensor

    def name(self):
        return self._op.__name__ + "Backward"

    def save_for_backward(self, *values):
        for i, v in enumerate(values):
            if v is not None and not isinstance(v, Tensor):
                raise TypeError(f"{self.name()}: save_for_backward can only save variables "
                                f"(tensors or None), but argument {i} is of type "
                                f"{type(v).__name__}. Keep other values as ctx attributes.")
        self._to_save = values

    def save_for_forward(self, *tensors):
        """Keep tensors for jvp(): ctx.saved_tensors gives them there (forward mode)."""
        for i, v in enumerate(tensors):
            if v is not None and not isinstance(v, Tensor):
                raise TypeError(f"{self.name()}: save_for_forward expects tensors or None; "
                                f"argument {i} is of type {type(v).__name__}.")
        self._fw_saved = tensors

    @property
    def saved_tensors(self):
        if self._in_jvp:
            return self._fw_saved
        return OpNode.saved_tensors.fget(self)

    _fw_saved: tuple = ()
    _in_jvp = False  # True while the Function's jvp() runs (NOTE [Function.jvp])

    def apply(self, grads):
        out = super().apply(grads)
        for i, (g, is_tensor) in enumerate(zip(out, self._tensor_args)):
            if g is not None and not is_tensor:
                raise RuntimeError(
                    f"function {self.name()} returned a gradient different than None at "
                    f"position {i + 1}, but the corresponding forward input was not a Tensor; "
                    "return None for it.")
        return out


def _ctx_class(cls):
    """The FunctionCtx subclass of Function class ``cls`` (made once per class)."""
    made = cls.__dict__.get("_ctx_class")
    if made is None:
        made = type(cls.__name__ + "Backward", (FunctionCtx,), {})
        cls._ctx_class = made
    return made


class Function:
    """User-defined differentiable function, as in torch.autograd.Function.

    Subclass with static ``forward(ctx, *args)`` (receives Tensors, runs without recording a
    graph) and ``backward(ctx, *grad_outputs)``; call with ``MyFn.apply(...)``.
    """

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode AD.")

    vjp = backward

    _ctx_class = None  # see _ctx_class()

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"{type(self).__name__}: an autograd.Function is not called as an "
                           "instance (the legacy non-static form); call the class's static "
                           f"apply: {type(self).__name__}.apply(...)")

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Save what backward needs, from the inputs and output of a ``forward(*args)`` that
        takes no ctx (torch 2's form, the one torch.func transforms require). A subclass that
        defines it gets ``forward(*args)`` then ``setup_context(ctx, inputs, output)``."""
        raise NotImplementedError("setup_context is not implemented.")

    @classmethod
    def apply(cls, *args, **kwargs):
        separate = cls.setup_context is not Function.setup_context
        if separate:  # inputs as forward binds them, defaults included, as torch passes them
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = tuple(bound.args), bound.kwargs
        if _batch_hook[0] is not None and not getattr(cls, "generate_vmap_rule", False) and \
                getattr(cls, "vmap", None) is not None:  # inside vmap, the class's own rule
            from ..func._function_rule import apply_vmap_rule
            out = apply_vmap_rule(cls, args, kwargs)
            if out is not NotImplemented:
                return out
        ctx = _ctx_class(cls)()
        ctx._op = cls
        if any(getattr(type(a), "_traced_value", False) for a in args):
            # under ember.jit.trace: the ops inside forward record themselves (NOTE [A traced
            # tensor passes isinstance] in jit/_trace.py - a proxy is no tensor to graph here)
            ctx.needs_input_grad = (False,) * len(args)
            return cls.forward(*args, **kwargs) if separate else cls.forward(ctx, *args, **kwargs)
        record = _state.enabled and any(isinstance(a, Tensor) and a.requires_grad for a in args)
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        versions = [a._vc[0] if isinstance(a, Tensor) else None for a in args]
        # forward AD through a Function that defines jvp(): its forward sees no tangents and
        # jvp() gives the outputs' (NOTE [Function.jvp]); without jvp() the ops inside forward
        # propagate tangents themselves (torch would raise; ember is lenient there)
        tangents = _fw_tangents(cls, args) if _fw_active[0] and _state.fw_enabled else None
        prev, prev_fw = _state.enabled, _state.fw_enabled
        _state.enabled = False
        if tangents is not None:
            _state.fw_enabled = False
        try:
            if separate:
                raw = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, raw)
            else:
                raw = cls.forward(ctx, *args, **kwargs)
        finally:
            _state.enabled, _state.fw_enabled = prev, prev_fw
        single = not isinstance(raw, tuple)
        outs = (raw,) if single else raw
        if tangents is not None:
            from .forward_ad import _function_jvp
            _function_jvp(cls, ctx, args, tangents, outs)
        dirty = ctx._dirty
        for a, v in zip(args, versions):
            if isinstance(a, Tensor) and a._vc[0] != v and not any(a is d for d in dirty):
                raise RuntimeError(
                    f"{cls.__name__}.forward modified an input in place (its version went from "
                    f"{v} to {a._vc[0]}) without calling ctx.mark_dirty() on it; the graph would "
                    "compute wrong gradients. Call ctx.mark_dirty(tensor) and return it.")
        for d in dirty:  # a marked in-place write counts once more, as torch counts it
            if not any(o is d for o in outs):
                raise RuntimeError(
                    f"{cls.__name__}.forward: some elements marked as dirty during the forward "
                    "method were not returned as output. The inputs that are modified inplace "
                    "must all be outputs of the Function (return the tensor itself, not a view).")
            d._vc[0] += 1
        if not record:
            return raw
        if dirty:
            for d in dirty:
                if d.is_leaf and d.requires_grad:
                    raise RuntimeError("a leaf Variable that requires grad is being used in an "
                                       "in-place operation.")
        ctx._tensor_args = tuple(isinstance(a, Tensor) for a in args)
        # outputs that alias inputs (not dirty) become fresh tensors sharing data, like torch
        fixed = []
        for o in outs:
            if isinstance(o, Tensor):
                if any(o is a for a in args) and not any(o is d for d in dirty):
                    o = o.detach()  # an input returned as is becomes a new output node
                elif any(o is d for d in dirty):
                    o._base = None
                fixed.append(o)
            else:
                fixed.append(o)
        tensor_outs = [o for o in fixed if isinstance(o, Tensor)]
        arrays = [a._data if isinstance(a, Tensor) else a for a in args]
        _finish_function(ctx, cls, args, arrays, fixed, tensor_outs)
        return fixed[0] if single else tuple(fixed)


def _fw_tangents(cls, args):
    """The tangents of a Function's tensor arguments when forward AD must go through the
    class's own jvp(): None when it defines none or no argument carries a tangent."""
    if getattr(cls, "jvp", None) is None:
        return None
    tangents = [a._fw if isinstance(a, Tensor) else None for a in args]
    return None if all(t is None for t in tangents) else tangents


def _finish_function(ctx, cls, args, arrays, outs, tensor_outs):
    ctx._seq = next(_seq)
    ctx.next_functions = tuple(
        _edge(a) if isinstance(a, Tensor) and a.requires_grad else (None, 0) for a in args)
    ctx.num_outputs = len(outs)
    ctx._out_meta = [(o.shape, o._data.dtype) if isinstance(o, Tensor) else ((), np.float32)
                     for o in outs]
    nd = ctx._non_diff
    for i, o in enumerate(outs):
        if isinstance(o, Tensor) and _is_float(o._data.dtype) and not any(o is n for n in nd):
            o._grad_fn, o._output_nr, o._requires_grad = ctx, i, True
            if o._base is not None:
                o._view_v = o._vc[0]
    if ctx._to_save:
        ctx._saved = [_pack(ctx, v, args, arrays, tensor_outs,
                            [t._data for t in tensor_outs]) for v in ctx._to_save]
        ctx._to_save = ()
    if Anomaly.enabled:
        ctx._trace = "".join(traceback.format_stack()[:-3])


def once_differentiable(fn):
    """Mark a backward as not differentiable: under create_graph it raises instead of lying."""

    @functools.wraps(fn)
    def wrapper(ctx, *grads):
        with no_grad():
            out = fn(ctx, *[g.detach() if g is not None else None for g in grads])
        if not _state.enabled:  # no create_graph: nothing will differentiate the results
            return out
        tracked = [g for g in grads if g is not None and g.requires_grad]
        tracked += [t for t in ctx.saved_tensors if t is not None and t.requires_grad]
        if not tracked:
            return out
        # connect the results to the incoming gradients through a node that raises when run
        single = not isinstance(out, tuple)
        outs = (out,) if single else out
        res = tuple(_DelayedError.apply(o, tracked[0], name=ctx.name()) if o is not None
                    else None for o in outs)
        return res[0] if single else res

    return wrapper


class _DelayedError(Op):
    @staticmethod
    def forward(ctx, x, anchor, name):
        ctx.fn_name = name
        return x.copy()

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError(f"trying to differentiate twice a function ({ctx.fn_name}) that was "
                           "marked with @once_differentiable; its backward is not differentiable.")
