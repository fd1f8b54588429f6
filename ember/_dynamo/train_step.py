"""A whole training step in one capture: ``loss.backward()``, ``optimizer.step()`` and
``zero_grad()`` called inside a compiled function.

NOTE [Training-step capture]
torch users compile the step function itself::

    @torch.compile
    def train_step(x, y):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

While such a function is recorded, ``Tensor.backward`` does not start the autograd engine:
the recorder walks the recorded forward in reverse (as it does for a compiled region's own
backward, NOTE [Backward capture] in trace.py) and the backward's instructions go into the
forward's instruction list at that point (an ``InlineBackward`` item), followed by one
accumulation into ``.grad`` per leaf, with the engine's rule (assign when ``.grad`` is None,
else add in place). The replay is then one straight-line function: forward, backward and the
gradient writes, with no Tensor objects or autograd nodes in between.

``optimizer.step()``, ``optimizer.zero_grad()``, ``module.zero_grad()`` and
``lr_scheduler.step()`` are recorded as opaque calls: they run as they are (their ops are not
recorded) and are called again at the same point of each replay, so the update is exactly
eager's (each optimizer already updates a parameter in one fused numba pass). The parameters
they write are read live by the rest of the step, so a forward after ``step()`` sees the new
values, as in eager.

Gradient clipping between ``backward()`` and ``step()`` (``nn.utils.clip_grad_norm_``,
``clip_grad_norm``, ``clip_grad_value_``) is an opaque call too, with the parameters listed once
(a generator such as ``model.parameters()`` is read at capture) and the total norm it returns a
value of the replay (``v = clip_grad_norm_(...)._data``), so returning it, or ``.item()`` of it,
gives each call's norm. The clipping functions are hooked by swapping their code objects (as
``_make``, NOTE [Tensor creation hook] in capture.py), since programs import them by name.

What still runs eagerly (a graph break): ``backward`` with ``retain_graph``, ``create_graph``
or ``inputs=``, a second ``backward`` in one call, hooks on the tensors or nodes the backward
passes, and ``step(closure)``. Assigning ``p.grad = None`` by hand inside the compiled function
is not seen by the recorder; use ``zero_grad()`` there (see docs/DEVIATIONS.md).
"""
from __future__ import annotations

import sys
import threading
import types

import numpy as np

from .. import _tensor
from ..autograd.grad_mode import _state
from .capture import SideEffect


class InlineBackward(SideEffect):
    """The instructions of one ``backward()`` inside the captured call, then the writes of the
    leaves' gradients: ``accs`` = [(("in"|"ext", k), slot, steal)]. A side effect: a capture
    holding one is never re-run at other sizes (it would accumulate into .grad twice)."""

    cls = type("backward", (), {})

    def __init__(self, items, accs):
        self.items = items
        self.accs = accs

    @property
    def inputs(self):
        from .codegen import _ins, _outs
        made, reads = set(), []
        for item in self.items:
            reads.extend(s for s in _ins(item) if s not in made)
            made.update(_outs(item))
        reads.extend(s for _, s, _ in self.accs if s not in made)
        return [("s", s) for s in dict.fromkeys(reads)]

    @property
    def outputs(self):
        from .codegen import _outs
        return [s for item in self.items for s in _outs(item)]

    def emit(self, e):
        from .codegen import emit_backward_items
        emit_backward_items(e, self.items)
        fn = e.const(accumulate_grad, "A")
        for (kind, k), s, steal in self.accs:
            e.marks.append((len(e.lines), "acc"))
            holder = f"E[{k}]" if kind == "ext" else f"T[{k}]"
            e.lines.append(f"{fn}({holder}, {e.val(s)}, {steal})  # .grad")


class CallOut(SideEffect):
    """An opaque call whose returned tensor is a value of the replay (clip_grad_norm_'s norm)."""

    def __init__(self, fn, args, kwargs, out):
        super().__init__(fn, args, kwargs)
        self.out = out

    @property
    def outputs(self):
        return [] if self.out is None else [self.out]

    def emit(self, e):
        call = f"{e.const(self.fn, 'S')}(*{e.const(self.args)}, **{e.const(self.kwargs)})"
        if self.out is None:
            e.lines.append(f"{call}  # {self.fn.__name__}")
            return
        e.lines.append(f"v{self.out} = _A({call}._data)  # {self.fn.__name__}")
        e.defined.add(self.out)


def accumulate_grad(t, g, steal):
    """The engine's AccumulateGrad on arrays: ``t.grad = g`` (``g`` itself when ``steal`` and it
    is a plain dense array of t's dtype and shape, else a copy), or ``t.grad += g`` in place."""
    grad = t.grad
    if grad is None:
        own = (steal and g.base is None and g.flags.c_contiguous and g.flags.writeable
               and g.dtype == t._data.dtype and g.shape == t._data.shape)
        t.grad = _tensor._make(g if own else np.array(g, dtype=t._data.dtype, copy=True))
    elif grad._requires_grad:
        t.grad = grad + _tensor._make(g)
    else:
        np.add(grad._data, g, out=grad._data, casting="unsafe")


def _opaque(rec, owner, name, allow_args):
    """Patch ``owner.name`` so that a call made by the captured function runs unrecorded and is
    replayed as a call (a SideEffect) at the same point."""
    orig = owner.__dict__[name]

    def call(self, *args, **kwargs):
        if rec.depth or threading.get_ident() != rec.tid or rec.phase != "fwd":
            return orig(self, *args, **kwargs)
        vals = list(args) + list(kwargs.values())
        if vals and not allow_args(vals):
            rec.graph_break(f"{type(self).__name__}.{name}() with arguments the replay cannot "
                            "repeat (a closure or a tensor)")
            return orig(self, *args, **kwargs)
        rec.depth += 1
        try:
            out = orig(self, *args, **kwargs)
        finally:
            rec.depth -= 1
        rec.cap.fwd.append(SideEffect(orig, (self,) + args, kwargs))
        for group in getattr(self, "param_groups", ()):
            for p in group["params"]:
                rec.written.add(id(p._vc))  # the graph reads them live: not a stale read
        return out

    call.__name__ = getattr(orig, "__name__", name)
    rec._patch(owner, name, call)


def _plain(vals):
    from .item import ItemFloat, ItemInt
    return all(isinstance(v, (bool, int, float, str, type(None)))
               and not isinstance(v, (ItemFloat, ItemInt)) for v in vals)


def _leaf(rec, t):
    """t is not a value the call computes (a parameter, an input, or unseen so far)."""
    s = rec.slots.get(id(t._data))
    return s is None or rec.cap.kinds[s][0] in ("ext", "in")


def _hook_clip(rec, f):
    """Record calls of the clipping function ``f`` as CallOut items (its code is swapped for a
    forwarder while the capture runs; see the NOTE above)."""
    orig = types.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__,
                              f.__closure__)
    orig.__kwdefaults__ = f.__kwdefaults__

    def clip(parameters, *args, **kwargs):
        if rec.depth or threading.get_ident() != rec.tid or rec.phase != "fwd":
            return orig(parameters, *args, **kwargs)
        params = [parameters] if isinstance(parameters, _tensor.Tensor) else list(parameters)
        ok = all(isinstance(p, _tensor.Tensor) and _leaf(rec, p) for p in params)
        if not ok or not _plain(list(args) + list(kwargs.values())):
            rec.graph_break(f"{f.__name__}() with arguments the replay cannot repeat (a "
                            "tensor computed in the call, or a tensor max_norm)")
            return orig(params, *args, **kwargs)
        rec.depth += 1
        try:
            out = orig(params, *args, **kwargs)
        finally:
            rec.depth -= 1
        slot = None
        if isinstance(out, _tensor.Tensor):
            slot = rec.new_slot(out._data, ("call", len(rec.cap.fwd)))
        rec.cap.fwd.append(CallOut(orig, (params,) + args, kwargs, slot))
        return out

    name = f"_compile_hook_{f.__name__}"
    src = f"def {f.__name__}(*args, **kwargs):\n    return {name}(*args, **kwargs)\n"
    ns = {}
    exec(compile(src, f.__code__.co_filename, "exec"), f.__globals__, ns)
    rec._patch(sys.modules[f.__module__], name, clip)
    rec._restore.append((f, "__defaults__", f.__defaults__, True))
    rec._restore.append((f, "__kwdefaults__", f.__kwdefaults__, True))
    rec._restore.append((f, "__code__", f.__code__, True))
    f.__code__ = ns[f.__name__].__code__
    f.__defaults__ = f.__kwdefaults__ = None


def _subclasses(cls):
    out, todo = [], [cls]
    while todo:
        c = todo.pop()
        out.append(c)
        todo.extend(c.__subclasses__())
    return out


def install(rec):
    """Hooks for backward / optimizer / scheduler calls made inside the captured function."""
    from .. import autograd
    from ..nn.modules.module import Module
    from ..optim import lr_scheduler
    from ..optim.optimizer import Optimizer
    for cls in _subclasses(Optimizer):
        if "step" in cls.__dict__:
            _opaque(rec, cls, "step", lambda v: all(x is None for x in v))  # no closure
        if "zero_grad" in cls.__dict__:
            _opaque(rec, cls, "zero_grad", _plain)
    for cls in _subclasses(lr_scheduler.LRScheduler):
        if "step" in cls.__dict__:
            _opaque(rec, cls, "step", _plain)
    if "zero_grad" in Module.__dict__:
        _opaque(rec, Module, "zero_grad", _plain)
    from ..nn.utils import clip_grad
    for f in (clip_grad.clip_grad_norm_, clip_grad.clip_grad_value_):
        _hook_clip(rec, f)
    from .grad_calls import install as install_grad_calls  # NOTE [Gradient-norm calls ...]
    install_grad_calls(rec)

    orig_backward = _tensor.Tensor.__dict__["backward"]
    orig_fn = autograd.backward

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        if not _inline(rec, self, gradient, retain_graph, create_graph, inputs):
            orig_backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def backward_fn(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
                    grad_variables=None, inputs=None):
        one = isinstance(tensors, _tensor.Tensor) or (
            isinstance(tensors, (tuple, list)) and len(tensors) == 1)
        t = tensors if isinstance(tensors, _tensor.Tensor) else tensors[0] if one else None
        g = grad_tensors
        if isinstance(g, (tuple, list)):
            g = g[0] if len(g) == 1 else False
        if not (one and g is not False and _inline(rec, t, g, retain_graph, create_graph,
                                                     inputs)):
            orig_fn(tensors, grad_tensors, retain_graph, create_graph, grad_variables, inputs)

    rec._patch(_tensor.Tensor, "backward", backward)
    rec._patch(autograd, "backward", backward_fn)


def _inline(rec, loss, gradient, retain_graph, create_graph, inputs):
    """Record ``loss.backward(gradient)`` into the capture and apply its effect; False when it
    must run in the engine instead (a graph break, or not this capture's thread)."""
    if rec.depth or threading.get_ident() != rec.tid or rec.phase != "fwd":
        return False
    if rec.cap.breaks:
        return False  # the call runs eagerly anyway
    if rec.cap.splits:  # after a graph break: the engine runs it (NOTE [Graph breaks that split])
        from .segments import split_backward
        return split_backward(rec, loss, gradient, retain_graph, create_graph, inputs)
    why = None
    if retain_graph or create_graph or inputs is not None:
        why = "backward() with retain_graph, create_graph or inputs="
    elif getattr(rec, "inline_done", False):
        why = "a second backward() in one compiled call"
    elif not isinstance(loss, _tensor.Tensor) or not loss._requires_grad or \
            loss._grad_fn is None or id(loss._data) not in rec.slots:
        why = "backward() of a tensor the recorder did not compute"
    elif gradient is not None and not isinstance(gradient, _tensor.Tensor):
        why = "backward(gradient=) with a non-tensor gradient"
    elif not _state.enabled:
        why = "backward() under no_grad"
    if why is None:
        why = _walk(rec, loss, gradient)
    if why is not None:
        rec.graph_break(why)
        return False
    return True


def _walk(rec, loss, gradient):
    from .trace import _accumulate, _check_edges, _visit
    cap = rec.cap
    if gradient is None:
        if loss._data.size != 1:
            return "backward() of a non-scalar without gradient= (raises in eager)"
        seed = rec.new_slot(np.ones(loss._data.shape, loss._data.dtype), ("const",))
    else:
        if gradient._data.shape != loss._data.shape:
            return "backward(gradient=) of a different shape (raises in eager)"
        seed = rec.resolve_tensor(gradient)
    targets = []
    for s, kind in enumerate(cap.kinds):
        t = rec.inputs[kind[1]] if kind[0] == "in" else \
            cap.ext[kind[1]] if kind[0] == "ext" else None
        if t is not None and t._requires_grad and t._grad_fn is None:
            if t._hooks or getattr(t, "_post_acc_hooks", None):
                return "backward() into a leaf with gradient hooks"
            targets.append((s, t))
    for inst in cap.fwd:
        node = inst.node
        if node is not None and (node._pre_hooks or node._node_prehooks or node._post_hooks):
            return "backward() through a node with hooks (register_hook, retain_grad)"
    if not _check_edges(rec, rec.inputs):
        return None  # _check_edges recorded the break
    grads = {}
    _accumulate(rec, grads, rec.slots[id(loss._data)], seed)
    saved_bwd, cap.bwd = cap.bwd, []
    prev = _state.enabled
    _state.enabled = False
    rec.phase = "bwd"
    try:
        for idx in range(len(cap.fwd) - 1, -1, -1):
            if cap.fwd[idx].node is None:  # a side effect, or an op whose graph is spent
                continue
            try:
                _visit(rec, grads, idx)
            except Exception as e:
                return (f"the backward of {cap.fwd[idx].cls.__name__} raised "
                        f"{type(e).__name__}: {e}")
    finally:
        _state.enabled = prev
        rec.phase = "fwd"
        items, cap.bwd = cap.bwd, saved_bwd
    accs = []
    acc_slots = [grads.get(s) for s, _ in targets]
    for (s, t), gs in zip(targets, acc_slots, strict=True):
        if gs is None:
            continue
        kind = cap.kinds[s]
        arr = cap.arrays[gs]
        produced = cap.kinds[gs][0] in ("bwd", "op") and cap.kinds[gs][1:2] in ((), (-1,))
        alone = acc_slots.count(gs) == 1 and not any(
            o != gs and np.may_share_memory(arr, cap.arrays[o])
            for o in acc_slots if o is not None)
        accs.append(((kind[0], kind[1]), gs, bool(produced and alone)))
        accumulate_grad(t, arr, False)  # the eager effect of this capture run
    for inst in cap.fwd:  # the graph is freed, as the engine frees it
        if not isinstance(inst, SideEffect):
            if inst.node is not None:
                inst.node.release()
            inst.node = None
    cap.fwd.append(InlineBackward(items, accs))
    rec.inline_done = True
    return None
