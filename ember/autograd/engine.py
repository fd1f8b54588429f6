"""The backward engine: runs the graph from the outputs to the leaves, iteratively.

A node runs once every node that feeds it a gradient has run (dependency counting), so each
node sees the total gradient of each of its outputs. Among ready nodes the most recently
created runs first, as in torch, which keeps hook order familiar.
"""
from __future__ import annotations

import heapq
import sys
import threading

import numpy as np

from .._backend import is_reused, reusable_empty
from .._dtype import from_numpy_dtype
from .._tensor import Tensor, _make
from ..profiler.profiler import _active as _prof
from ..profiler.profiler import record_op
from .function import AccumulateGrad, Anomaly, _edge, _is_float
from .grad_mode import _state


def _make_root_grads(tensors, grads, what):
    roots = []
    for i, (t, g) in enumerate(zip(tensors, grads)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{what}: expected Tensors as outputs, got {type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have "
                               "a grad_fn")
        if g is None:
            if t._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs; got "
                                   f"an output of shape {tuple(t.shape)}. Pass gradient= with "
                                   "the same shape.")
            if t._data.dtype.kind == "c":
                raise RuntimeError("grad can be implicitly created only for real scalar outputs "
                                   f"but got {t.dtype}")
            shape = t._data.shape
            # np.array(1, dt) is a quarter of np.ones' cost for the 0-d loss of every backward()
            g = _make(np.array(1, t._data.dtype) if not shape else np.ones(shape, t._data.dtype))
        elif not isinstance(g, Tensor):
            g = _make(np.asarray(g, dtype=t._data.dtype))
        if (g._data.dtype.kind == "c" or t._data.dtype.kind == "c") and \
                g._data.dtype != t._data.dtype:
            # (a real gradient for a complex output would silently drop its imaginary part)
            raise RuntimeError(f"{what}: For complex Tensors, both grad_output and output are "
                               f"required to have the same dtype. Mismatch in dtype: "
                               f"grad_output[{i}] has a dtype of {g.dtype} and output[{i}] has "
                               f"a dtype of {t.dtype}.")
        if g._data.shape != t._data.shape:
            raise RuntimeError(f"{what}: Mismatch in shape: grad_output[{i}] has a shape of "
                               f"{tuple(g.shape)} and output[{i}] has a shape of "
                               f"{tuple(t.shape)}.")

        roots.append((_edge(t), g))
    return roots


def _collect(roots, targets):
    """Dependency counts of the nodes that lead to a target (all nodes when targets is None)."""
    # several roots may share a node (two outputs of one op): visit it once, or its children
    # would be counted as dependencies twice and never become ready
    if len(roots) == 1 and targets is None:
        # one loss (every backward()): the walk counts the edges as it goes, and a node is new
        # exactly when it has no count yet (the root itself is never reached again: a DAG)
        deps = {}
        stack = [roots[0][0][0]]
        while stack:
            for nxt, _ in stack.pop().next_functions:
                if nxt is not None:
                    c = deps.get(nxt)
                    if c is None:
                        deps[nxt] = 1
                        stack.append(nxt)
                    else:
                        deps[nxt] = c + 1
        return deps, None
    stack = list(dict.fromkeys([e[0][0] for e in roots]))
    seen = set(stack)
    if targets is None:  # the walk counts the edges as it goes
        deps = {}
        while stack:
            for nxt, _ in stack.pop().next_functions:
                if nxt is not None:
                    deps[nxt] = deps.get(nxt, 0) + 1
                    if nxt not in seen:
                        seen.add(nxt)
                        stack.append(nxt)
        return deps, None
    order = []
    while stack:
        n = stack.pop()
        order.append(n)
        for nxt, _ in n.next_functions:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    needed = set(targets)
    changed = True
    # fixed point over reverse order: a node is needed when any child is needed
    while changed:
        changed = False
        for n in reversed(order):
            if n not in needed and any(nx in needed for nx, _ in n.next_functions):
                needed.add(n)
                changed = True
    deps = {}
    for n in order:
        if n in needed:
            for nxt, _ in n.next_functions:
                if nxt is not None and nxt in needed:
                    deps[nxt] = deps.get(nxt, 0) + 1
    return deps, needed


class _GraphTask:
    """What one backward run will execute, for hooks that need to know it (autograd.graph's
    register_multi_grad_hook): ``nodes`` it may run, ``callbacks`` to call when it ends."""

    __slots__ = ("_nodes", "_parts", "callbacks", "state")

    def __init__(self, deps, needed, roots):
        # the node set is built only when a hook asks for it (most backward passes never do)
        self._nodes = None
        self._parts = (deps, needed, roots)
        self.callbacks = []
        self.state = {}

    @property
    def nodes(self):
        if self._nodes is None:
            deps, needed, roots = self._parts
            self._nodes = ({n for n in deps if needed is None or n in needed}
                           | {node for (node, _), _ in roots if node is not None})
        return self._nodes


# The running backward of each thread: its _GraphTask, or until a hook asks for one (most
# backward passes never do) the (deps, needed, roots) tuple to build it from.
_tasks = threading.local()


def current_graph_task():
    """The _GraphTask of the backward running in this thread (None outside backward)."""
    task = getattr(_tasks, "task", None)
    if type(task) is tuple:
        task = _tasks.task = _GraphTask(*task)
    return task


def _add(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a + b


# NOTE [Sums]
# A gradient that reaches a node along several edges (a weight shared by the steps of a Python
# loop over a cell) is summed in the node's input buffer before the node runs. Without
# create_graph the sum needs no graph, so it is NumPy's add on the arrays, not an ember op (an
# LSTMCell looped over 20 steps sends 19 extra gradients to each of its four parameters: 76 adds
# per training step). The first addition allocates a fresh array that the engine owns; later
# ones add into it in place. The incoming gradients themselves are never written: one tensor may
# be handed to several edges, or be held by the op that made it. An owned sum is written only
# while it sits in the buffer; once its node is popped it goes to hooks, autograd.grad's
# results or a leaf's .grad and is never touched again. Different shapes or dtypes (a gradient
# that _check_grad could not normalise) and tensor subclasses take the ember add, which
# broadcasts and promotes as torch does.


def _add_owned(a, b, owned):
    """a + b for the input buffer without create_graph (NOTE [Sums])."""
    if a is None:
        return b
    if b is None:
        return a
    if type(a) is not Tensor or type(b) is not Tensor:
        return a + b
    x, y = a._data, b._data
    if x.shape != y.shape or x.dtype != y.dtype or not _is_float(x.dtype):
        return a + b
    if id(a) in owned:
        np.add(x, y, out=x)
        return a
    # out=: 0-d stays an array; a reused buffer: NOTE [Reused buffers] in _backend.py
    s = _make(np.add(x, y, out=reusable_empty(x.shape, x.dtype)))
    owned.add(id(s))
    return s


def _drop_extra_nones(node, outs):
    """A backward may return more gradients than its node has inputs when the extra ones are
    all None, as torch allows (custom Functions written for a longer signature return a None
    per optional argument that was never passed); anything else is a wrong count."""
    n = len(node.next_functions)
    if len(outs) > n and all(g is None for g in outs[n:]):
        return outs[:n]
    raise RuntimeError(f"function {node.name()} returned an incorrect number of gradients "
                       f"(expected {n}, got {len(outs)})")


# NOTE [Leaves first]
# A leaf's AccumulateGrad runs as soon as its gradient is complete, before any other ready node,
# as torch gives it the highest priority: .grad (and a post-accumulate-grad hook, where
# optimizer-in-backward code steps the parameter) is there while the rest of the backward still
# runs, and the engine drops its reference to the gradient early. The ready leaves wait on a
# plain stack, not the heap ordered by creation that the other nodes share.


def execute(roots, retain_graph, create_graph, capture=None, accumulate=True, only=None):
    """Run backward from ``roots`` [((node, nr), grad)].

    capture: {(node, nr): slot} — store the total gradient flowing into those edges (for
    autograd.grad) into a list returned; accumulate: add into leaves' .grad; only: set of
    AccumulateGrad nodes allowed to accumulate (backward(inputs=...)).
    """
    targets = None
    if capture is not None or only is not None:
        targets = {e[0] for e in (capture or {})} | set(only or ())
    deps, needed = _collect(roots, targets)
    captured = [None] * (max(capture.values()) + 1 if capture else 0)
    buffers = {}
    owned = set()  # ids of the sums the engine made and nothing else has seen: NOTE [Sums]
    for (node, nr), g in roots:
        if node is None:
            continue
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node.num_outputs
            buf[nr] = g
        else:
            buf[nr] = _add(buf[nr], g)
    ready = []
    for node in buffers:
        if deps.get(node, 0) == 0:
            heapq.heappush(ready, (-node._seq, id(node), node))
    leaves = []  # AccumulateGrad nodes whose gradient is complete: NOTE [Leaves first]
    # the one ready node while the heap is empty (a chain of ops: most of a backward) skips
    # the heap; a second ready node sends it there
    single = None
    prev_task, _tasks.task = getattr(_tasks, "task", None), (deps, needed, roots)
    prev = _state.enabled
    _state.enabled = create_graph
    try:
        while leaves or single is not None or ready:
            if leaves:
                node = leaves.pop()
            elif single is not None:
                node, single = single, None
            else:
                node = heapq.heappop(ready)[2]
            grads = buffers.pop(node)
            if owned:  # the sums leave the engine's hands: never written again
                # (no loop variable: one left holding a gradient makes AccumulateGrad copy it)
                owned.difference_update([id(t) for t in grads])
            acc = type(node) is AccumulateGrad
            if node._node_prehooks or node._pre_hooks or (acc and node.variable._hooks):
                grads = _run_prehooks(node, grads)
            if capture:
                for nr, g in enumerate(grads):
                    slot = capture.get((node, nr))
                    if slot is not None:
                        captured[slot] = g
            if acc:
                if accumulate and (only is None or node in only) and grads[0] is not None:
                    _accumulate(node.variable, grads[0], create_graph)
                continue
            if needed is not None and node not in needed:
                continue
            for g in grads:  # a loop, not all() over a generator: once per node
                if g is not None:
                    break
            else:
                g = None
            if g is None:  # no gradient reached this node
                outs = (None,) * len(node.next_functions)
            else:
                if _prof.prof is None:
                    outs = node.apply(grads)
                else:
                    outs = _profiled_node(node, grads)
                if len(outs) != len(node.next_functions):
                    outs = _drop_extra_nones(node, outs)
                if Anomaly.enabled and Anomaly.check_nan:
                    _check_nan(node, outs)
                if node._post_hooks:
                    for h in node._post_hooks:
                        res = h(outs, grads)
                        if res is not None:  # the hook replaces the node's input gradients
                            outs = _replaced_grad_inputs(node, h, outs, res)
            if not retain_graph:
                node.release()
            for (nxt, nr), g in zip(node.next_functions, outs):
                if nxt is None or (needed is not None and nxt not in needed):
                    continue
                if g is not None:
                    meta = nxt._out_meta
                    if meta is not None:
                        meta = meta[nr]
                    elif type(nxt) is AccumulateGrad:  # a leaf: its own shape and dtype
                        v = nxt.variable._data
                        meta = (v.shape, v.dtype)
                    if (meta is None or type(g) is not Tensor or g._data.shape != meta[0]
                            or (g._data.dtype is not meta[1] and g._data.dtype != meta[1])):
                        g = _check_grad(node, nxt, nr, g)
                buf = buffers.get(nxt)
                if buf is None:  # the first gradient for nxt: nothing to add it to
                    buf = buffers[nxt] = [None] * nxt.num_outputs
                    buf[nr] = g
                elif create_graph:
                    buf[nr] = _add(buf[nr], g)
                else:
                    buf[nr] = _add_owned(buf[nr], g, owned)
                left = deps[nxt] - 1
                deps[nxt] = left
                if left == 0:
                    if type(nxt) is AccumulateGrad:
                        leaves.append(nxt)
                    elif single is None and not ready:
                        single = nxt
                    else:
                        if single is not None:
                            heapq.heappush(ready, (-single._seq, id(single), single))
                            single = None
                        heapq.heappush(ready, (-nxt._seq, id(nxt), nxt))
            # drop this node's gradients now: the buffers own them, and a leftover reference
            # would keep memory alive and make AccumulateGrad copy (see _can_steal)
            outs = g = grads = None
        task = _tasks.task
        if type(task) is _GraphTask:
            for callback in task.callbacks:
                callback()
    finally:
        _state.enabled = prev
        _tasks.task = prev_task
    return captured


def _profiled_node(node, grads):
    start = _prof.prof._now_us()
    outs = node.apply(grads)
    record_op(node.name(), [g for g in grads if g is not None],
              [o for o in outs if o is not None], start, "backward")
    return outs


def _check_grad(node, nxt, nr, g):
    if not isinstance(g, Tensor):
        g = _make(np.asarray(g))
    meta = nxt._out_meta[nr] if nxt._out_meta is not None else None
    if meta is None and type(nxt) is AccumulateGrad:
        v = nxt.variable._data
        meta = (v.shape, v.dtype)
    if meta is not None:
        shape, dt = meta
        if g._data.shape != shape:
            if g._data.size == int(np.prod(shape)) and g._data.size == 1:
                g = g.reshape(shape)
            else:
                # (the index among node's gradients, found here: the engine's loop has none)
                index = [e[0] is nxt and e[1] == nr for e in node.next_functions].index(True)
                raise RuntimeError(
                    f"Function {node.name()} returned an invalid gradient at index {index} - got "
                    f"{list(g._data.shape)} but expected shape compatible with {list(shape)}")
        if g._data.dtype != dt:
            if g._data.dtype.kind == "c" and dt.kind != "c":
                g = g.real  # a real input of a complex op: see NOTE [Complex gradients]
            g = g.to(from_numpy_dtype(dt))
    return g


def _run_prehooks(node, grads):
    if node._node_prehooks:
        for h in node._node_prehooks:
            r = h(tuple(grads))
            if r is not None:
                grads = list(r)
    if node._pre_hooks:
        for nr, hooks in node._pre_hooks.items():
            for h in list(hooks):
                if grads[nr] is None:
                    continue
                r = h(grads[nr])
                if r is not None:
                    grads[nr] = _checked_hook_result(h, grads[nr], r)
    if type(node) is AccumulateGrad:
        hooks = node.variable._hooks
        if hooks and grads[0] is not None:
            for h in list(hooks):
                r = h(grads[0])
                if r is not None:
                    grads[0] = _checked_hook_result(h, grads[0], r)
    return grads


def _replaced_grad_inputs(node, hook, outs, res):
    """A node hook's replacement for the gradients the node computed: one per input."""
    res = tuple(res) if isinstance(res, (tuple, list)) else (res,)
    if len(res) != len(outs):
        raise RuntimeError(f"hook '{getattr(hook, '__name__', hook)}' of {node.name()} returned "
                           f"{len(res)} gradients; expected {len(outs)} (one per input, None "
                           "where there is none).")
    return res


def _checked_hook_result(hook, g, r):
    """A tensor hook's replacement gradient, refused (as torch does) when its shape or dtype is
    not the gradient's: it would otherwise become a .grad of the wrong shape or flow on into
    backward formulas that assume the tensor's own."""
    name = getattr(hook, "__name__", type(hook).__name__)
    if not isinstance(r, Tensor):
        raise TypeError(f"hook '{name}' returned {type(r).__name__}; expected a Tensor or None")
    if tuple(r.shape) != tuple(g.shape):
        raise RuntimeError(f"hook '{name}' has changed the size of value; got shape "
                           f"{tuple(r.shape)}, expected {tuple(g.shape)}")
    if r._data.dtype != g._data.dtype:
        raise RuntimeError(f"hook '{name}' has changed the type of value (was {g.dtype} got "
                           f"{r.dtype})")
    return r


# References to an unshared incoming gradient when _can_steal looks: the engine's `grads` list,
# _accumulate's and _can_steal's arguments and getrefcount's own; its array: the tensor's
# attribute, _can_steal's local and getrefcount's argument. The counts are exact on CPython up to
# 3.13; 3.14 borrows stack references (smaller counts), where a shared gradient could pass, so
# there every first gradient is copied.
_OWN_TENSOR_REFS = 4
_OWN_ARRAY_REFS = 3
_STEAL = sys.implementation.name == "cpython" and sys.version_info < (3, 14)


def _can_steal(leaf, g):
    """Whether the incoming gradient can become ``leaf.grad`` as it is, without a copy.

    The same gradient tensor may have been handed to several inputs (``a + b`` passes one
    tensor to both), or its array may be viewed by another tensor, so in general the first
    gradient is copied; like torch's AccumulateGrad, the copy is skipped when reference counts
    show nothing else holds the tensor or its array (for a big model that is a full copy of
    every gradient per step).
    """
    a = g._data
    return (_STEAL and a.base is None and a.flags.c_contiguous and a.flags.writeable
            and a.dtype == leaf._data.dtype and a.shape == leaf._data.shape
            and sys.getrefcount(g) <= _OWN_TENSOR_REFS
            and sys.getrefcount(a) <= _OWN_ARRAY_REFS + is_reused(a))


def _copy_grad(a):
    return np.array(a, copy=True)


def _accumulate(leaf, g, create_graph):
    if leaf._grad is None:
        if create_graph:
            # kept as it is (it is part of the graph), but in its own dense memory when it is
            # an expanded or strided view, as torch's layout rule for .grad
            leaf._grad = g if g._data.flags.c_contiguous else g.contiguous()
        elif _can_steal(leaf, g):
            leaf._grad = _make(g._data)
        else:  # a copy: see _can_steal
            leaf._grad = _make(_copy_grad(g._data))
    elif create_graph or leaf._grad._requires_grad:
        leaf._grad = leaf._grad + g
    else:
        np.add(leaf._grad._data, g._data, out=leaf._grad._data, casting="unsafe")
    # a class default (None) on Tensor: getattr with a default would raise and catch an
    # AttributeError inside on every leaf of every backward
    hooks = leaf._post_acc_hooks
    if hooks:
        for h in hooks:
            if h(leaf) is not None:
                raise RuntimeError("Tensor post accumulate grad hooks should return None; "
                                   f"hook '{getattr(h, '__name__', h)}' returned a value.")


def _check_nan(node, outs):
    for i, g in enumerate(outs):
        if g is not None and _is_float(g._data.dtype) and np.isnan(g._data).any():
            where = node._trace or "(no forward trace: enable anomaly mode before the forward)\n"
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th "
                               f"output.\nTraceback of the forward call that created it:\n"
                               f"{where}")
