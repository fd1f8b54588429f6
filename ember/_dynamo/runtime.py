"""Running a compiled capture: arrays in, tensors out, one autograd node for the backward."""
from __future__ import annotations

import itertools
import math
import os
import threading

import numpy as np

from .. import _onepool, _tensor
from ..autograd import function as _fn
from ..autograd.grad_mode import _state
from .capture import unflatten

_FREED_MSG = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you "
    "call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved tensors after calling "
    "backward.")


class CompiledFunction:
    """Stands for the whole compiled region in the autograd graph (``CompiledFunctionBackward``)."""

    @staticmethod
    def backward(ctx, *grads):
        if ctx._values is None:
            raise RuntimeError(_FREED_MSG)
        res = ctx._bwd(ctx._values, [g._data for g in grads])
        out = tuple(None if r is None else _tensor._make(r) for r in res)
        if _state.enabled:
            _twice_node(ctx, out)
        return out


def _twice_node(ctx, grads):
    """create_graph: the gradients are right, but differentiating them again is not supported.
    They get a node with the compiled region's own input edges, whose backward raises: so
    ``autograd.grad(grads, params)`` (Adahessian's Hessian-vector product) reaches it and says
    why, instead of finding the parameters unused."""
    node = _TwiceNode()
    node._seq = next(_fn._seq)
    node.next_functions = ctx.next_functions
    node.num_outputs = len(grads)
    node._out_meta = [None if g is None else (g._data.shape, g._data.dtype) for g in grads]
    for j, g in enumerate(grads):
        if g is not None:
            g._grad_fn, g._output_nr, g._requires_grad = node, j, True


class _Twice:
    """What differentiating a compiled region's gradient runs (double backward)."""

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(
            "ember.compile: double backward through a compiled region is not supported (its "
            "backward is replayed, not recorded); run the function eagerly "
            "(ember.compiler.disable) for higher-order gradients.")


class _TwiceNode(_fn.OpNode):
    _op = _Twice  # type: ignore[assignment]

    def name(self):
        return "CompiledFunctionBackwardBackward"


class _Node(_fn.OpNode):
    _op = CompiledFunction  # type: ignore[assignment]
    _values = None

    def name(self):
        return "CompiledFunctionBackward"

    def release(self):
        self._values = None


class CompiledGraph:
    """One specialisation of a compiled function: replays forward, wires the backward."""

    def __init__(self, cap, fwd, bwd, sources):
        self.fwd, self.bwd, self.sources = fwd, bwd, sources
        self.ext = cap.ext
        self.out_spec = cap.out_spec
        self.outputs = cap.outputs
        self.diff = cap.diff_outputs
        self.targets = cap.targets
        self.out_is_input = [o if isinstance(o, int) and cap.kinds[o][0] in ("in", "ext")
                             else None for o in cap.outputs]
        self.kinds = {o: cap.kinds[o] for o in cap.outputs if isinstance(o, int)}
        self.py = {i: o[1] for i, o in enumerate(cap.outputs)
                   if isinstance(o, tuple) and o[0] == "py"}
        self.items = {i for i, o in enumerate(cap.outputs)
                      if isinstance(o, tuple) and o[0] == "item"}
        self.ext_meta = [(t._data.shape, t._data.dtype, t._requires_grad) for t in cap.ext]
        self.spent = cap.spent_outputs
        self.blas_threads = replay_blas_threads(cap)

    def _spent(self, outs):
        """Outputs whose backward ran inside the call: they require grad, and a further
        backward() raises as it does after eager's backward freed the graph."""
        node = _Node()
        node._seq = next(_fn._seq)
        node.next_functions = ()
        node.num_outputs = len(self.spent)
        node._out_meta = [(outs[i]._data.shape, outs[i]._data.dtype) for i in self.spent]
        for j, i in enumerate(self.spent):
            t = outs[i]
            t._grad_fn, t._output_nr, t._requires_grad = node, j, True

    def guard_ext(self):
        for t, (shape, dt, rg) in zip(self.ext, self.ext_meta, strict=False):
            d = t._data
            if d.shape != shape or d.dtype != dt or t._requires_grad != rg:
                return False
        return True

    def run(self, inputs):
        arrays = [t._data for t in inputs]
        blas = _blas_enter(self.blas_threads)
        kernel = _kernel_enter(REPLAY_KERNEL_THREADS[0] if self.blas_threads == 1 else None)
        try:
            out_arrays, values = self.fwd(arrays, self.ext, inputs)
        finally:
            _kernel_exit(kernel)
            _blas_exit(blas)
        outs = []
        for i, a in enumerate(out_arrays):
            if i in self.py:
                outs.append(self.py[i])
                continue
            if i in self.items:  # NOTE [item() as an output]
                outs.append(a.item())
                continue
            src = self.out_is_input[i]
            if src is not None:
                kind = self.kinds[src]
                outs.append(inputs[kind[1]] if kind[0] == "in" else self.ext[kind[1]])
                continue
            outs.append(_tensor._make(a))
        if self.bwd is not None and _state.enabled:
            self._attach(inputs, outs, values)
        elif self.spent:
            self._spent(outs)
        return unflatten(self.out_spec, iter(outs))

    def _attach(self, inputs, outs, values):
        node = _Node()
        node._bwd = self.bwd
        node._values = values
        node._seq = next(_fn._seq)
        tgt = [inputs[k] if kind == "in" else self.ext[k] for kind, k in self.targets]
        node.next_functions = tuple(_fn._edge(t) for t in tgt)
        diff = [outs[i] for i in self.diff]
        node.num_outputs = len(diff)
        node._out_meta = [(t._data.shape, t._data.dtype) for t in diff]
        for j, t in enumerate(diff):
            if self.out_is_input[self.diff[j]] is not None:
                continue  # an input returned as is keeps its own history
            t._grad_fn, t._output_nr, t._requires_grad = node, j, True


_ids = itertools.count()


# NOTE [BLAS threads in a replay]
# A replay whose largest matrix product is below MID_GEMM multiply-adds runs with OpenBLAS at
# one thread (restored after). NCF's training step has three GEMMs of 2^23 multiply-adds
# (fc1), just above eager Linear's one-thread cap (NOTE [One BLAS thread for small GEMMs]), so
# at the default they hand work to OpenBLAS's second thread, which then spins between GEMMs
# while the replay's other kernels want that core. Quiet machine, 2026-11-26 08:40 UTC
# (benchmarks/compile.py --only ncf, three alternating reps, benchmarks/RESULTS.md): the
# compiled NCF step took 7.1-7.5 ms at the default and 3.9-4.4 ms at one thread (eager 5.7-5.9
# ms). Graphs with a bigger product (a transformer block's 2^27-2^28) keep the default: there
# the second thread pays. EMBER_COMPILE_BLAS_THREADS=N (read at import) forces N for every
# replay, for A/B runs.
MID_GEMM = 1 << 24
REPLAY_BLAS_THREADS = [None]


def _read_env():
    from .._kernel_threads import env_positive_int
    return env_positive_int("EMBER_COMPILE_BLAS_THREADS")


REPLAY_BLAS_THREADS[0] = _read_env()


# NOTE [Kernel threads in a replay]
# EMBER_COMPILE_KERNEL_THREADS=N (read at import; default off) runs the replays that NOTE [BLAS
# threads in a replay] puts on one OpenBLAS thread with ember's kernel threads at N (NOTE
# [Kernel threads] in _kernel_threads.py), eager code keeping its own setting: the second core,
# which such a replay leaves idle, then takes part of Adam's update, of the embedding lookups and
# of their gradients (NCF: ~1.7 of its ~3.8 ms, one thread, smoke). Results are the same for
# any thread count (each kernel splits elementwise or over disjoint rows). An explicit
# ember.set_num_threads() wins over it. Off by default until a quiet A/B says otherwise: the pool
# lost the quiet window for eager models, where OpenBLAS's spinning thread held the second
# core; here OpenBLAS is at one thread, unless an eager step with a multi-threaded GEMM ran
# within OpenBLAS's spin time (~0.1 s) before. benchmarks/compile.py interleaves eager steps,
# whose fc1 GEMMs (2^23 multiply-adds) run on two OpenBLAS threads, so there that worker spins
# through every compiled step (process CPU 7.7 ms against the main thread's 3.7 ms for a 3.8 ms
# step, load 0.9). A kernel worker still gets the core within ~30 us of its wake-up (median;
# p90 ~50 us; busy machine, a nogil loop on the caller's core): a cost per hand-off, which is
# why Adam's update of all parameters is one hand-off (NOTE [One Adam hand-off for many
# parameters] in optim/adam.py).
# EMBER_COMPILE_SPLIT_GEMMS=1 (with the switch above at 2 or more) also runs such a replay's
# bigger GEMMs in parts on those threads (NOTE [Convolution GEMMs on the kernel threads] in
# ops/_kernels/split.py: NCF's fc1, 2^23 multiply-adds, forward and backward); a split GEMM
# may round differently from a whole one (the BLAS kernel's block edges), so this one is equal
# to eager up to float rounding, not bit for bit.
REPLAY_KERNEL_THREADS = [None]
REPLAY_SPLIT_GEMMS = [False]

# NOTE [A replay on the one pool]
# With ember's one pool on (EMBER_ONE_POOL=1, NOTE [One pool] in ember/_onepool.py) a replay
# changes no thread setting: the pool already holds OpenBLAS at one thread and runs the GEMMs
# (_onepool.matmul) and the parallel kernels (twins: the generated fused kernels, NOTE [Fused
# kernels on the one pool] in fusion.py; the embedding kernels) on numba's threading layer. So
# EMBER_COMPILE_BLAS_THREADS, EMBER_COMPILE_KERNEL_THREADS and EMBER_COMPILE_SPLIT_GEMMS are
# ignored while it is on: ember's Python kernel threads would be a second pool beside it.


def _read_kernel_env():
    from .._kernel_threads import env_positive_int
    return env_positive_int("EMBER_COMPILE_KERNEL_THREADS")


REPLAY_KERNEL_THREADS[0] = _read_kernel_env()
REPLAY_SPLIT_GEMMS[0] = os.environ.get("EMBER_COMPILE_SPLIT_GEMMS", "").strip() == "1"


_KERNEL_LOCK = threading.Lock()
_KERNEL_ACTIVE = [0, None]  # replays inside _kernel_enter, and the settings to restore


def _kernel_enter(n):
    """Let parallel_range use n threads during a replay (None: leave it); returns whether it
    did. Replays running at once on several threads share one setting, restored by the last."""
    if n is None or _onepool.enabled():  # NOTE [A replay on the one pool]
        return False
    from .. import _kernel_threads
    from ..ops._kernels import split
    with _KERNEL_LOCK:
        if _KERNEL_ACTIVE[0] == 0:
            split.split_gemms()  # reads EMBER_SPLIT_GEMMS once, so that the exit restores it
            _KERNEL_ACTIVE[1] = (_kernel_threads._default[0], split._split_gemms[0])
            _kernel_threads._default[0] = n
            if REPLAY_SPLIT_GEMMS[0]:
                split._split_gemms[0] = True
        _KERNEL_ACTIVE[0] += 1
    return True


def _kernel_exit(entered):
    if not entered:
        return
    from .. import _kernel_threads
    from ..ops._kernels import split
    with _KERNEL_LOCK:
        _KERNEL_ACTIVE[0] -= 1
        if _KERNEL_ACTIVE[0] == 0:
            _kernel_threads._default[0], split._split_gemms[0] = _KERNEL_ACTIVE[1]


def replay_blas_threads(cap):
    """OpenBLAS's thread count for a capture's replays (None: leave it as it is), from the
    largest Linear/matmul product the capture ran: NOTE [BLAS threads in a replay]."""
    if REPLAY_BLAS_THREADS[0] is not None:
        return REPLAY_BLAS_THREADS[0]
    largest = 0
    for inst in cap.fwd:
        if inst.cls.__name__ not in ("Linear", "Matmul") or not inst.meta or not inst.args:
            continue
        kind, value = inst.args[0]
        x = cap.arrays[value] if kind == "s" else value
        inner = np.shape(x)[-1] if np.ndim(x) else 1
        largest = max(largest, math.prod(inst.meta[0][0]) * inner)
    return 1 if 0 < largest < MID_GEMM else None


def _blas_enter(n):
    """Set OpenBLAS to n threads for a replay (None: leave it); returns the count to restore."""
    if n is None or _onepool.enabled():  # NOTE [A replay on the one pool]
        return 0
    from .._kernel_threads import blas_threads_enter
    return blas_threads_enter(n)


def _blas_exit(before):
    if before:
        from .._kernel_threads import blas_threads_exit
        blas_threads_exit(before)
