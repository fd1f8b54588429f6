"""DistributedDataParallel: one model replica per process, gradients averaged in buckets.

NOTE [DDP buckets and overlap]
Parameters are grouped, in reverse registration order (roughly the order backward produces
their gradients), into buckets of about ``bucket_cap_mb`` MB of one dtype (the first bucket
is capped at 1 MB so communication starts early). A post-accumulate-grad hook on every
parameter counts down its bucket; when a bucket is complete its gradients are copied into the
bucket's flat buffer and its all-reduce is queued on the group's communication thread, while
backward continues on the main thread. mpi4py releases the GIL inside MPI calls and the wait
loop sleeps between tests (NOTE [Collective handshake]), so the two run in parallel.
Buckets are launched strictly in index order on every rank, since MPI needs every rank to call
collectives in the same order. When the last bucket is queued, the hook waits for all of them
and writes the averaged gradients back (into ``.grad``, or by making ``.grad`` a view of the
bucket with ``gradient_as_bucket_view=True``). The share of communication hidden behind
backward is measured by ``benchmarks/ddp.py``.
"""
from __future__ import annotations

import contextlib
import time

import numpy as np

import ember

from ... import distributed as dist
from ...distributed._collectives import all_reduce_array
from ..modules.module import Module

_FIRST_BUCKET_MB = 1.0


class _Bucket:
    def __init__(self, params, dtype):
        self.params = params                    # in the order their slices sit in `buffer`
        self.offsets = np.cumsum([0] + [p.numel() for p in params])
        self.buffer = np.zeros(int(self.offsets[-1]), dtype)
        self.pending = len(params)
        self.work = None

    def slice_of(self, i):
        return self.buffer[self.offsets[i]:self.offsets[i + 1]]


def _assign_buckets(params, cap_bytes):
    """Buckets of consecutive (reverse-order) parameters of one dtype, at most cap bytes each
    (the first one at most 1 MB)."""
    buckets, current, size, limit = [], [], 0, min(cap_bytes, _FIRST_BUCKET_MB * 2**20)
    for p in reversed(params):
        nbytes = p.numel() * p.element_size()
        if current and (size + nbytes > limit or p.dtype != current[0].dtype):
            buckets.append(_Bucket(current, current[0].dtype.np))
            current, size, limit = [], 0, cap_bytes
        current.append(p)
        size += nbytes
    if current:
        buckets.append(_Bucket(current, current[0].dtype.np))
    return buckets


class DistributedDataParallel(Module):
    """Data parallelism over processes: wraps ``module``, averages gradients during backward.

    Args:
        module: the model; its parameters and buffers are broadcast from rank 0 at construction.
        process_group: the group to average over (default: the default group).
        bucket_cap_mb: bucket size in MB (default 25).
        broadcast_buffers: broadcast rank 0's buffers before every forward.
        find_unused_parameters: find, after each forward, the parameters the output does not
            depend on, so that backward does not wait for their gradients.
        gradient_as_bucket_view: ``.grad`` becomes a view into the flat bucket buffers.
        static_graph: accepted (ember's reducer needs no graph-specific state).
        device_ids, output_device, dim: accepted for compatibility (CPU only).

    Differs from torch: ``check_reduction``, ``mixed_precision``, ``device_mesh``,
    ``param_to_hook_all_reduce``, ``bucket_cap_mb_list``, ``batched_grad_copy`` and
    ``forward_sync_buffers`` are accepted and ignored.

    Example:
        >>> import ember, ember.distributed as dist
        >>> ddp = ember.nn.parallel.DistributedDataParallel  # needs init_process_group first
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, init_sync=True, process_group=None,
                 bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None,
                 mixed_precision=None, device_mesh=None, skip_all_reduce_unused_params=False,
                 bucket_cap_mb_list=None, batched_grad_copy=False, forward_sync_buffers=True):
        super().__init__()
        group = dist.distributed_c10d._resolve(process_group, "DistributedDataParallel")
        self.module = module
        self.process_group = process_group
        self.device_ids = [] if device_ids is None else list(device_ids)
        self.output_device = output_device
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self._bucket_bytes = int((25.0 if bucket_cap_mb is None else float(bucket_cap_mb)) * 2**20)
        self._build_reducer(group)
        # the reducer has its own communicator: its queue never interleaves with user calls
        self._pg_own = group.dup("ddp")
        if init_sync:
            self._sync_module_states()
        self.comm_seconds = 0.0     # time spent in bucket all-reduces (for benchmarks)
        self.exposed_seconds = 0.0  # part of it backward waited for at the end

    def _build_reducer(self, group):
        """The parameters' buckets, gradient hooks and bookkeeping (not the communicator)."""
        seen, params = set(), []
        for p in self.module.parameters():
            if p.requires_grad and id(p) not in seen:
                seen.add(id(p))
                params.append(p)
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        self._params = params
        self._group = group
        self._world = group.size()
        self._buckets = _assign_buckets(params, self._bucket_bytes)
        self._where = {}
        for b in self._buckets:
            for i, p in enumerate(b.params):
                self._where[id(p)] = (b, i)
        self._hooks = [p.register_post_accumulate_grad_hook(self._grad_ready) for p in params]
        self._expect_backward = False
        self._reduction_started = False  # a gradient arrived, the reduction is not finished
        self._next_bucket = 0
        self._used = np.ones(len(params), np.uint8)
        self._join_divide_by_initial = True
        self._joined_ranks_active = None

    @property
    def _pg(self):
        # NOTE [Copies of a DDP module]: copy.deepcopy and pickle take the default protocol
        # (as torch): __getstate__ leaves out the communicator and the reducer (buckets, hooks
        # on the original's parameters), __setstate__ builds a reducer for the copy's own
        # parameters on the default group. Only a DDP on the default group can be copied, as in
        # torch. The copy's communicator is duplicated from the group at its first collective,
        # not in __setstate__: duplicating is itself a collective, and a copy made on one rank
        # alone (an EMA or evaluation copy) must not wait for the others until it communicates.
        pg = self._pg_own
        if pg is None:
            pg = self._pg_own = self._group.dup("ddp")
        return pg

    def __getstate__(self):
        if self._group is not dist.distributed_c10d._resolve(None, "DistributedDataParallel"):
            raise RuntimeError("DistributedDataParallel: only a module wrapped on the default "
                               "process group (no process_group argument) can be pickled or "
                               "deep-copied; copy .module instead.")
        state = dict(self.__dict__)
        for k in ("_pg_own", "_group", "_params", "_buckets", "_where", "_hooks", "_used"):
            state.pop(k, None)
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        self._pg_own = None
        self._build_reducer(dist.distributed_c10d._resolve(None, "DistributedDataParallel"))

    # ------------------------------------------------------------------ state
    def _flat_broadcast(self, tensors):
        """Broadcast rank 0's values of ``tensors``, one flat message per dtype."""
        by_dtype = {}
        for t in tensors:
            by_dtype.setdefault(t.dtype, []).append(t)
        for _dtype, group in by_dtype.items():
            flat = ember.from_numpy(np.concatenate([t._data.reshape(-1) for t in group]))
            dist.broadcast(flat, src=self._pg.ranks[0], group=self._pg)
            offset = 0
            for t in group:
                n = t.numel()
                t._data[...] = flat._data[offset:offset + n].reshape(t._data.shape)
                t._bump_version()
                offset += n

    def _sync_module_states(self):
        with ember.no_grad():
            self._flat_broadcast(list(self.module.parameters()) + list(self.module.buffers()))

    # ------------------------------------------------------------------ forward
    def forward(self, *inputs, **kwargs):
        if self._reduction_started and self.require_backward_grad_sync:
            raise RuntimeError(
                "DistributedDataParallel: Expected to have finished reduction in the prior "
                "iteration before starting a new one. This error indicates that your module "
                "has parameters that were not used in producing loss. Pass "
                "find_unused_parameters=True to DistributedDataParallel, and make sure every "
                "forward output takes part in the loss.")
        if self._joined_ranks_active is not None:
            self._join_count(1)
        if self.broadcast_buffers and self.require_forward_param_sync:
            buffers = list(self.module.buffers())
            if buffers and self._world > 1:
                with ember.no_grad():
                    self._flat_broadcast(buffers)
        out = self.module(*inputs, **kwargs)
        if ember.is_grad_enabled() and self.require_backward_grad_sync:
            self._prepare_for_backward(out)
        return out

    def _prepare_for_backward(self, out):
        # a forward whose output never went through backward is forgotten, as in torch
        self._expect_backward = True
        self._next_bucket = 0
        for b in self._buckets:
            b.pending = len(b.params)
            b.work = None
        self._used[:] = 1
        if self.find_unused_parameters:
            reached = _leaves_reached(out)
            for k, p in enumerate(self._params):
                if id(p) not in reached:
                    self._used[k] = 0
                    self._count_down(p)

    # ------------------------------------------------------------------ backward
    def _grad_ready(self, param):
        if not self._expect_backward or not self.require_backward_grad_sync:
            return
        self._reduction_started = True
        self._count_down(param)

    def _count_down(self, param):
        bucket, _ = self._where[id(param)]
        bucket.pending -= 1
        if bucket.pending == 0:
            self._launch_ready_buckets()

    def _launch_ready_buckets(self):
        while (self._next_bucket < len(self._buckets)
               and self._buckets[self._next_bucket].pending == 0):
            self._launch(self._buckets[self._next_bucket])
            self._next_bucket += 1
        if self._next_bucket == len(self._buckets):
            self._finish_reduction()

    def _launch(self, bucket, zeros=False):
        for i, p in enumerate(bucket.params):
            view = bucket.slice_of(i)
            if zeros or p.grad is None:
                view[...] = 0
            elif not np.shares_memory(p.grad._data, bucket.buffer):
                view[...] = p.grad._data.reshape(-1)
        pg, buf = self._pg, bucket.buffer

        def reduce_bucket():
            start = time.perf_counter()
            all_reduce_array(pg, buf, "DistributedDataParallel gradient all_reduce")
            self.comm_seconds += time.perf_counter() - start

        bucket.work = pg.run(reduce_bucket, async_op=True)

    def _finish_reduction(self):
        start = time.perf_counter()
        for b in self._buckets:
            b.work.wait()
        self.exposed_seconds += time.perf_counter() - start
        self._expect_backward = False
        self._reduction_started = False
        used_anywhere = self._used.copy()
        if self.find_unused_parameters:
            all_reduce_array(self._pg, used_anywhere,
                             "DistributedDataParallel unused-parameter map")
        scale = 1.0 / self._divisor()
        k_of = {id(p): k for k, p in enumerate(self._params)}
        with ember.no_grad():
            for b in self._buckets:
                b.buffer *= scale
                for i, p in enumerate(b.params):
                    if not used_anywhere[k_of[id(p)]] and p.grad is None:
                        continue  # unused on every rank: the gradient stays None, as in torch
                    self._write_grad(p, b.slice_of(i))

    def _divisor(self):
        if self._joined_ranks_active is not None and not self._join_divide_by_initial:
            return max(self._joined_ranks_active, 1)
        return self._world

    def _write_grad(self, p, values):
        if self.gradient_as_bucket_view:
            if p.grad is None or not np.shares_memory(p.grad._data, values):
                p.grad = ember.from_numpy(values.reshape(p._data.shape))
            else:
                p.grad._bump_version()
        elif p.grad is None:
            p.grad = ember.from_numpy(values.reshape(p._data.shape).copy())
        else:
            p.grad._data[...] = values.reshape(p.grad._data.shape)
            p.grad._bump_version()

    # ------------------------------------------------------------------ no_sync and join
    @contextlib.contextmanager
    def no_sync(self):
        """Accumulate gradients locally; the first backward after the block averages them."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def _join_count(self, active):
        flag = np.array([active], np.int64)
        all_reduce_array(self._pg, flag.astype(np.float64), "DistributedDataParallel join")
        return flag

    @contextlib.contextmanager
    def join(self, divide_by_initial_world_size=True, enable=True,
             throw_on_early_termination=False):
        """Train on uneven inputs: a rank that runs out of batches keeps answering the others'
        gradient all-reduces with zeros until every rank has finished."""
        if not enable or self._world == 1:
            yield
            return
        self._join_divide_by_initial = divide_by_initial_world_size
        self._joined_ranks_active = self._world
        try:
            yield
            while True:
                active = np.zeros(1)
                all_reduce_array(self._pg, active, "DistributedDataParallel join")
                if active[0] == 0:
                    break
                if throw_on_early_termination:
                    raise RuntimeError("DistributedDataParallel.join: this rank ran out of "
                                       "inputs before the others (throw_on_early_termination).")
                self._shadow_step(int(active[0]))
        finally:
            self._joined_ranks_active = None

    def _shadow_step(self, active):
        """Take part in one iteration of the ranks still training, contributing zeros."""
        self._joined_ranks_active = active
        if self.broadcast_buffers and list(self.module.buffers()):
            with ember.no_grad():
                self._flat_broadcast(list(self.module.buffers()))
        self._next_bucket = 0
        for b in self._buckets:
            self._launch(b, zeros=True)
        for b in self._buckets:
            b.work.wait()
        if self.find_unused_parameters:
            all_reduce_array(self._pg, np.zeros(len(self._params), np.uint8),
                             "DistributedDataParallel unused-parameter map")

    # ------------------------------------------------------------------ misc
    def register_comm_hook(self, state, hook):
        raise NotImplementedError("DistributedDataParallel.register_comm_hook: communication "
                                  "hooks are not supported in ember; gradients are averaged "
                                  "in float32/float64 buckets by all-reduce.")

    def _set_static_graph(self):
        self.static_graph = True


def _leaves_reached(out):
    """ids of the leaf tensors whose gradient ``out`` (any nesting of tensors) depends on."""
    stack, seen, leaves = [], set(), set()

    def collect(o):
        if isinstance(o, ember.Tensor):
            if o.grad_fn is not None:
                stack.append(o.grad_fn)
            elif o.requires_grad:
                leaves.add(id(o))
        elif isinstance(o, (list, tuple)):
            for x in o:
                collect(x)
        elif isinstance(o, dict):
            for x in o.values():
                collect(x)

    collect(out)
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None:
            leaves.add(id(variable))
        for nxt, _ in getattr(node, "next_functions", ()):
            stack.append(nxt)
    return leaves
