"""Recurrent cell ops: the GEMMs stay with the caller, the numba kernels fuse the pointwise
work. The LSTM and GRU cells use the fused numba backward and are ``once_differentiable``.
"""
from __future__ import annotations

import os

import numba
import numpy as np

from ... import _blas_parts, _mkl, _onepool
from ..._backend import gemm, reusable_empty
from ..._kernel_threads import blas_threads_enter, blas_threads_exit
from ..._tensor import _make
from ...autograd.function import Op, once_differentiable
from .._kernels import gemm as _kgemm
from .._kernels import rnn as _krnn
from ..join import cat, stack
from ._common import _back, _prep


class LSTMCell(Op):
    """(h, c) from gate pre-activations (B, 4H) (order i, f, g, o) and c_prev (B, H).

    The backward is the fused numba kernel, so it is once-differentiable.
    """

    @staticmethod
    def forward(ctx, gates, c_prev):
        h, c, (act, tanh_c) = _krnn.lstm_cell_forward(_prep(gates), _prep(c_prev))
        ctx.dtype = gates.dtype
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(c_prev, act, tanh_c)
        return _back(h, gates.dtype), _back(c, gates.dtype)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_h, grad_c):
        c_prev, act, tanh_c = ctx.saved_tensors
        if grad_h is None and grad_c is None:
            return None, None
        dt = act._data.dtype
        gh = None if grad_h is None else _prep(grad_h._data).astype(dt, copy=False)
        gc = None if grad_c is None else _prep(grad_c._data).astype(dt, copy=False)
        grad_gates, grad_c_prev = _krnn.lstm_cell_backward(
            gh, gc, (act._data, tanh_c._data), _prep(c_prev._data))
        return _make(_back(grad_gates, ctx.dtype)), _make(_back(grad_c_prev, ctx.dtype))


class LSTMCellStep(Op):
    """One whole LSTMCell step as one graph node: (h', c') from x (B, I), h (B, H), c (B, H),
    w_ih (4H, I), w_hh (4H, H) and the biases b_ih, b_hh (4H,) (both None without bias).

    A Python loop over nn.LSTMCell at small batch is bound by per-op overhead: composed, a step
    is two transposes, two matmuls, three adds and the cell (eight nodes, each a dispatch and an
    engine visit). Here the forward is two GEMMs, the bias adds and the fused cell kernel; the
    backward is the cell kernel and the GEMMs for each gradient that is needed. Arrays are
    float32 or float64, all of one dtype (the module falls back to the composed ops otherwise).
    The backward is NumPy/numba, so it is once-differentiable (as the composed form, whose cell
    op already was).
    """

    @staticmethod
    def forward(ctx, x, h, c, w_ih, w_hh, b_ih, b_hh):
        gates = gemm(x, w_ih.T)
        gates += gemm(h, w_hh.T)
        if b_ih is not None:
            gates += b_ih
            gates += b_hh
        h_new, c_new, (act, tanh_c) = _krnn.lstm_cell_forward(gates, np.ascontiguousarray(c))
        ctx.set_materialize_grads(False)
        # inputs are saved as themselves (version-checked); act and tanh_c are private, saved
        # through save_for_backward too so that backward frees them (retain_graph=False)
        ctx.save_for_backward(x, h, c, w_ih, w_hh, act, tanh_c)
        return h_new, c_new

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_h, grad_c):
        need = ctx.needs_input_grad
        if grad_h is None and grad_c is None:
            return (None,) * len(need)
        x, h, c, w_ih, w_hh, act, tanh_c = (t._data for t in ctx.saved_tensors)
        dt = act.dtype
        gh = None if grad_h is None else np.ascontiguousarray(grad_h._data, dt)
        gc = None if grad_c is None else np.ascontiguousarray(grad_c._data, dt)
        grad_gates, grad_c_prev = _krnn.lstm_cell_backward(gh, gc, (act, tanh_c),
                                                           np.ascontiguousarray(c))
        # gates = x W_ih^T + h W_hh^T + b_ih + b_hh: each input's gradient is one product
        gx = _make(grad_gates @ w_ih) if need[0] else None
        gh_prev = _make(grad_gates @ w_hh) if need[1] else None
        gc_prev = _make(grad_c_prev) if need[2] else None
        gw_ih = _make(grad_gates.T @ x) if need[3] else None
        gw_hh = _make(grad_gates.T @ h) if need[4] else None
        gb = grad_gates.sum(0) if need[5] or need[6] else None
        # two arrays for the two biases: a tensor handed to two leaves would alias their .grad
        gb_ih = _make(gb) if need[5] else None
        gb_hh = _make(gb.copy()) if need[6] else None
        return gx, gh_prev, gc_prev, gw_ih, gw_hh, gb_ih, gb_hh


# NOTE [Gate-major LSTM layer]
# An unpacked LSTM layer runs as one node (LSTMLayer) whose arrays are gate-major: the input
# projection of the whole sequence is ONE GEMM W_ih @ X^T -> (4H, T*B) (step t in columns
# t*B..t*B+B), each step's recurrent product is W_hh @ h^T -> (4H, B) with h kept as (H, B), and
# the saved gates, cell states and gate gradients are (rows, B) per step. Both GEMMs run in
# OpenBLAS's fast orientation for few batch rows (NOTE [GEMM orientation] in _backend.py), and
# the numba step kernel computes the four gates and the state update in one call over flat,
# contiguous arrays (vectorised). Batch-major (B, 4H) gates cost a transposing add per step
# (25 us at B=32, H=256) and six NumPy calls for the cell (44 us alone, 69 us inside the layer);
# gate-major, a strided add of the step's projection (10 us) and the kernel (42 us) remain.
# Single-thread CPU time on a busy machine, LSTM(256, 256) on (20, 32, 256): forward 10.0-10.6
# -> 9.1-10.1 ms, forward + backward 25.6-26.4 -> 25.0-25.9 ms (torch 7.1-7.5 / 21.5-23.3: its
# oneDNN layer's GEMMs are faster than OpenBLAS's for 32 rows).
# The backward keeps the same layout: each step's gate gradient (computed contiguous for the
# step's GEMM W_hh^T @ g) is copied into its columns of one (4H, T*B) array G, so that
# grad W_hh = G @ H_prev, grad W_ih = G @ X and grad x = G^T @ W_ih are one GEMM each over all
# T*B rows, and both biases' gradient is one GEMV of G. Only the layer's output is transposed
# back to (T, B, H), once, at the end.

# NOTE [Step-major gate gradients]
# The backward time loop writes each step's gate gradient into its own contiguous (4H, B) slice
# of a (T, 4H, B) buffer, which that step's recurrent GEMM reads, and G (4H, T*B) is filled from
# it by one copy after the loop. Copying each step's slice into G's columns inside the loop
# touched 4H rows of B elements at G's row stride (T*B) per step, cache lines that were not in
# cache: 35-42 us a step against 7 us for the same copy on a warm G (GNMT-S's (20, 32, 256)
# layer, one thread, load ~3.5), while the one pass over the whole buffer after the loop runs
# through both arrays in order (~18-20 us a step).


# NOTE [BLAS threads in the LSTM time loop]
# Each step's recurrent product is W_hh @ h^T, 4H * H * B multiply-adds (8.4M for GNMT-S's
# H=256, B=32): above the 4M cap under which Linear runs its GEMMs on one OpenBLAS thread (NOTE
# [One BLAS thread for small GEMMs]), but near it, and there are T of them back to back per
# layer and direction. EMBER_LSTM_BLAS_THREADS=N (read on first use) runs the time loops of
# forward and backward with OpenBLAS at N threads (restored after; the whole-sequence GEMMs keep
# BLAS's count). Unset, nothing changes. An A/B switch for a quiet machine: a busy one cannot
# tell (NOTE [Kernel threads] in _kernel_threads.py). With the one pool on, BLAS stays at one
# thread and the switch is not read (NOTE [LSTM layer on the one pool]).
_LOOP_BLAS = [None]


def _numpy_product(a, b, out):
    np.matmul(a, b, out=out)


def _numba_product(a, b, out):
    _kgemm.matmul(a, b, out)


def _step_product(w, h, z):
    """How each step of a time loop computes z = W h (the same shapes every step): by NOTE [A
    GEMM in numba] where it takes the product, else np.matmul (asked once, not per step)."""
    return _numba_product if _kgemm.takes(w, h, z) else _numpy_product


def _transposed_step_product(w, g, dh):
    """(W^T, how each step computes dh = W^T g[t]) for a backward time loop over the (T, 4H, B)
    gate gradients g: W^T copied C-contiguous once when that lets NOTE [A GEMM in numba] take
    the steps' products, else the view and np.matmul."""
    if len(g) and _kgemm.takes(w.T, g[0], dh):
        return w.T, _numba_product
    if len(g) and _kgemm.ON[0] and _kgemm._host_ok():
        w_t = np.ascontiguousarray(w.T)
        if _kgemm.takes(w_t, g[0], dh):
            return w_t, _numba_product
    return w.T, _numpy_product


def _loop_blas_enter():
    if _LOOP_BLAS[0] is None:
        env = os.environ.get("EMBER_LSTM_BLAS_THREADS", "").strip()
        try:
            _LOOP_BLAS[0] = max(0, int(env)) if env else 0
        except ValueError:
            raise ValueError("EMBER_LSTM_BLAS_THREADS: expected a positive integer; got "
                             f"{env!r}.") from None
    return blas_threads_enter(_LOOP_BLAS[0]) if _LOOP_BLAS[0] else 0


def _per_step(a):
    """(T, rows, B) as (T, rows * B): each step's array flat (sizes spelled out, so that an
    empty batch reshapes too)."""
    return a.reshape(a.shape[0], a.shape[1] * a.shape[2])


def _steps_fwd(xa, w_x, w, bias, h0, c0, order, saved):
    """The forward time loop of LSTMLayer (NOTE [Gate-major LSTM layer]): fills the saved
    sequences (acts, cs, tanh_cs, hs), each (T, rows, B), and returns the last (h, c), (H, B)."""
    acts, cs, tanh_cs, hs = saved
    dt, hidden, batch = acts.dtype, cs.shape[1], cs.shape[2]
    rows = xa.shape[0] * batch
    proj = reusable_empty((4 * hidden, rows), dt)  # NOTE [Reused buffers]
    _onepool.matmul(w_x, xa.reshape(rows, xa.shape[2]).T, out=proj)  # np.matmul, pool off
    parts = _in_parts(dt, hidden, batch)  # NOTE [LSTM steps on OpenBLAS's threads]
    if bias is not None and not parts:  # both biases ride on the projection, added once
        proj += bias[:, None]
    h = np.ascontiguousarray(h0.T, dt)
    c_flat = np.ascontiguousarray(c0.T, dt).reshape(-1)
    z = np.empty((4 * hidden, batch), dt)
    z_flat = z.reshape(-1)
    # per-step flat views, made once (the kernel reads every step's arrays flat)
    flat = [_per_step(a) for a in saved]
    blas = _loop_blas_enter()  # NOTE [BLAS threads in the LSTM time loop]
    try:
        f = _two_parts(dt, hidden, batch, len(order))
        if f:  # NOTE [LSTM time loop in two parts]
            _loop_in_parts("fwd", f, (np.ascontiguousarray(w), h, proj, proj.shape[1], *saved,
                                      c_flat, hidden, batch, bias), order)
            return hs[order[-1]], cs[order[-1]]
        if parts:  # the parts add the biases as they read the projection
            return _fwd_in_parts(w, h, c_flat, z, proj, bias, saved, order)
        product = _step_product(w, h, z)
        for t in order:
            product(w, h, z)
            np.add(z, proj[:, t * batch:(t + 1) * batch], out=z)
            _krnn._k_lstm_step_fwd_t(z_flat, flat[0][t], c_flat, flat[1][t], flat[2][t],
                                     flat[3][t])
            h, c_flat = hs[t], flat[1][t]
    finally:
        blas_threads_exit(blas)
    return h, c_flat.reshape(hidden, batch)


def _steps_bwd(dh, dc, g_out, c0_flat, w, saved, order, gates):
    """The backward time loop of LSTMLayer: dh, dc (H, B) hold the gradients reaching the last
    step's h and c on entry and h0's and c0's on exit; g_out (T, H * B) the output's gradient
    (None: none flows); writes each step's gate gradient into its columns of gates (4H, T*B)."""
    acts, tanh_cs, cs = (_per_step(a) for a in saved)
    dt, batch = dh.dtype, dh.shape[1]
    steps, rows = len(order), gates.shape[0]
    if g_out is None:
        g_out = np.zeros((1, dh.size), dt)  # every step reads row 0
    # NOTE [Step-major gate gradients]
    g = reusable_empty((steps, rows, batch), dt)  # each step's gate gradient, contiguous
    g_flat = _per_step(g)
    one = dt.type(1)
    dh_flat, dc_flat = dh.reshape(-1), dc.reshape(-1)
    blas = _loop_blas_enter()  # NOTE [BLAS threads in the LSTM time loop]
    try:
        f = _two_parts(dt, rows // 4, batch, steps)
        if f:  # NOTE [LSTM time loop in two parts]
            stride = dh.size if g_out.shape[0] > 1 else 0
            _loop_in_parts("bwd", f, (np.ascontiguousarray(w), dh, dc, g_out, stride, acts,
                                      tanh_cs, cs, c0_flat, g, rows // 4, batch), order)
        elif _in_parts(dt, rows // 4, batch):  # NOTE [LSTM steps on OpenBLAS's threads]
            _bwd_in_parts(dh, dc, g_out, c0_flat, w, (acts, tanh_cs, cs), order, g)
        else:
            w_t, product = _transposed_step_product(w, g, dh)
            for k in range(len(order) - 1, -1, -1):  # undo the steps in reverse order
                t = order[k]
                c_prev = c0_flat if k == 0 else cs[order[k - 1]]
                _krnn._k_lstm_step_bwd_t(dh_flat, g_out[t if g_out.shape[0] > 1 else 0],
                                         dc_flat, acts[t], tanh_cs[t], c_prev, g_flat[t], one)
                product(w_t, g[t], dh)
    finally:
        blas_threads_exit(blas)
    _copy(_krnn._k_gate_columns, rows, g, gates)  # G's column blocks


# NOTE [LSTM steps on OpenBLAS's threads]
# With the "lstm" parts on (default; NOTE [Kernels on OpenBLAS's threads] in _blas_parts.py) each
# step's cell kernel runs in one part per OpenBLAS thread - the threads that have just run the
# step's recurrent GEMM and spin waiting for the next - instead of on the calling thread alone:
# the serial share of a GNMT-S step (the forward's projection add and cell, ~45 us, and the
# backward's cell, ~20 us, beside a ~105 us two-thread GEMM) is what keeps the layer from
# scaling. The parts compute each hidden unit exactly as the serial kernels do (same values);
# the forward's parts also add the biases as they read the projection (z + (p + b), the
# serial order), which saves the serial pass over the whole projection (~160 us a layer).


def _copy(kernel, n, src, dst):
    """kernel(src, dst, lo, hi) over range(n): one of the layer's reordering copies, in parts
    on OpenBLAS's worker with the LSTM's parts on (NOTE [LSTM layer copies in parts] in
    ops/_kernels/rnn.py)."""
    if n >= 2 and _in_parts(dst.dtype, 1, 1) and not _onepool.enabled():
        _blas_parts.run_ranges(lambda lo, hi: kernel(src, dst, lo, hi), n)
    else:
        kernel(src, dst, 0, n)


def _in_parts(dt, hidden, batch):
    return (hidden > 0 and batch > 0 and dt in (np.dtype(np.float32), np.dtype(np.float64))
            and _blas_parts.on("lstm"))


# NOTE [LSTM time loop in two parts]
# With MKL loaded (NOTE [MKL's sgemm] in ember/_mkl.py), float32 and the "lstm" parts on, each
# direction's whole time loop is ONE hand-off to OpenBLAS's threads (a cfunc in
# ops/_kernels/rnn.py) instead of two per step. Both parts run every step: each computes half of
# the step's recurrent product by one call of MKL's sequential sgemm (forward: half of W_hh's
# gate rows, accumulated straight into the step's columns of the input projection; backward:
# half of dh's rows, W_hh[:, half]^T @ g), then the cell on half of the hidden units, meeting at
# a spin barrier (atomic counters) after each phase. Each chunk of a phase is claimed before it
# runs, by its own part first and then by the other part if still unclaimed, so a part that
# starts late (a sleeping worker) or never runs concurrently leaves its work to the other and
# nothing waits for it. The step-by-step loops above pay per step an OpenBLAS two-thread GEMM
# (77-90 us at GNMT-S's 1024 x 32 x 256, its own hand-off), a hand-off for the cell's parts and
# the Python between them; MKL's sgemm runs the half product in ~57 us on one thread, the
# whole in ~110 (quiet slot 02:52). benchmarks/ab.py gnmt, loop off/on (quiet slots, Intel
# Xeon, 20 pairs): 1.078 and on/off 0.914 (03:09, load 1.36), 1.080 / 0.939 (02:36, 16 pairs);
# one LSTM(256, 256) layer on (20, 32, 256): forward 3.97 -> 3.41 ms, backward 6.98 -> 6.17.
# In GNMT-S's step (quiet slot 03:26, chunks counted by a debug build) every loop split 20/20
# between the parts; in a micro-benchmark that ran a big OpenBLAS GEMM just before a layer the
# worker often joined only milliseconds late and the caller ran nearly every chunk alone (the
# layer figures above), which still beat the old loop. Main 89e8ef0: 1.078 / 0.918 (03:26).
# Values: another GEMM (MKL's, not OpenBLAS's) and the biases added after the projection and
# the product ((W h + p) + b against W h + (p + b)): within float32 rounding of the loops above,
# not their bits (tests/nn/test_lstm_loop_parts.py); float64 and the other cases keep them.
_LOOP_PARTS = [True]  # an A/B switch (benchmarks/ab.py)


def _two_parts(dt, hidden, batch, steps):
    """MKL's sgemm address when the layer's loops run in two parts, else 0."""
    if (not _LOOP_PARTS[0] or dt != np.dtype(np.float32) or hidden < 2 or steps < 1
            or not _in_parts(dt, hidden, batch)):
        return 0
    return _mkl.sgemm_address()


def _loop_in_parts(direction, f, arrays, order):
    """One run of the time-loop cfunc (ops/_kernels/rnn.py) over its two parts: slot 1 is
    the sgemm address f, `arrays` (C-contiguous float32 arrays, integers, None for a missing
    array) fill slots 2..13, then come the order of the steps, T, sync and scratch."""
    steps = len(order)
    order = np.asarray(order, np.int64)
    sync = np.zeros(6 * steps, np.int64)  # three slots a phase, two phases a step
    scratch = np.zeros(16, np.int64)  # 64 bytes for each part's sgemm arguments
    args = _blas_parts.arguments(17)
    args[1] = f
    for i, a in enumerate(arrays):
        if isinstance(a, np.ndarray):
            assert a.flags.c_contiguous and a.dtype == np.float32
            a = a.ctypes.data
        args[2 + i] = 0 if a is None else a
    args[14:18] = (order.ctypes.data, steps, sync.ctypes.data, scratch.ctypes.data)
    _blas_parts.run(_krnn.lstm_loop_part(direction).address, 2, args.ctypes.data,
                    _blas_parts.threads())


def _fwd_in_parts(w, h, c0_flat, z, proj, bias, saved, order):
    """_steps_fwd's loop with the step kernel and the add of the projection and the biases
    (None: none) in parts."""
    acts, cs, tanh_cs, hs = saved
    hidden, batch = cs.shape[1], cs.shape[2]
    step = hidden * batch * cs.itemsize
    if bias is not None:
        bias = np.ascontiguousarray(bias, acts.dtype)
    args = _blas_parts.arguments(12)
    args[1:11] = (z.ctypes.data, proj.ctypes.data, proj.shape[1], acts.ctypes.data,
                  cs.ctypes.data, tanh_cs.ctypes.data, hs.ctypes.data, c0_flat.ctypes.data,
                  hidden * batch, batch)
    args[12] = 0 if bias is None else bias.ctypes.data
    address = _krnn.lstm_step_part("fwd", acts.dtype).address
    threads, args_at, cs_at = _blas_parts.threads(), args.ctypes.data, cs.ctypes.data
    product = _step_product(w, h, z)
    for t in order:
        product(w, h, z)
        args[11] = t
        _blas_parts.run(address, hidden, args_at, threads)
        args[8] = cs_at + t * step  # the next step's c_prev
        h = hs[t]
    return h, cs[order[-1]] if len(order) else c0_flat.reshape(hidden, batch)


def _bwd_in_parts(dh, dc, g_out, c0_flat, w, saved, order, g):
    """_steps_bwd's loop with the step kernel in parts; g (T, 4H, B) gets the gate gradients."""
    acts, tanh_cs, cs = saved
    n = dh.size
    step = n * dh.itemsize
    args = _blas_parts.arguments(11)
    args[1:11] = (dh.ctypes.data, g_out.ctypes.data, n if g_out.shape[0] > 1 else 0,
                  dc.ctypes.data, acts.ctypes.data, tanh_cs.ctypes.data, 0, g.ctypes.data, n,
                  dh.shape[1])
    address = _krnn.lstm_step_part("bwd", acts.dtype).address
    threads, args_at, cs_at = _blas_parts.threads(), args.ctypes.data, cs.ctypes.data
    c0_at = c0_flat.ctypes.data
    w_t, product = _transposed_step_product(w, g, dh)
    for k in range(len(order) - 1, -1, -1):
        t = order[k]
        args[7] = c0_at if k == 0 else cs_at + order[k - 1] * step
        args[11] = t
        _blas_parts.run(address, dh.shape[0], args_at, threads)
        product(w_t, g[t], dh)


# NOTE [LSTM layer on the one pool]
# With the one pool on (NOTE [One pool] in ember/_onepool.py) OpenBLAS runs one thread, so the
# layer's GEMMs go through _onepool.matmul and its step kernels are twins that cut the hidden
# units into one span per thread (_k_lstm_step_fwd_pool / _bwd_pool in ops/_kernels/rnn.py).
# Per step: the recurrent product on the pool, then the cell kernel on the pool - two launches
# of ~2 us beside ~100 us of work at GNMT-S's size (4H * H * B = 8.4M multiply-adds, 32k
# elements). The input projection is computed step-major, (T, 4H, B) by one batched product,
# so that each step's slice is contiguous and the kernel adds it and the biases as it reads the
# recurrent product (no strided add pass, no bias pass over the projection); in the backward
# the kernel copies each span's gate gradient rows into G's columns itself. Values match the
# loops above elementwise; only the GEMMs' blocking differs. Pool off, the loops above run
# unchanged; pool on with a small batch (_POOL_MIN_BATCH), they run with their whole-sequence
# GEMMs on the pool.


# Under this many sequences a step's products stay off the pool anyway (_onepool.matmul keeps
# thin products on NumPy's GEMV/GEMM), the step kernels are small, and the step-major projection
# would be T thin products instead of one: the loops above run, their whole-sequence GEMMs still
# on the pool.
_POOL_MIN_BATCH = 16


def _on_pool(batch):
    return batch >= _POOL_MIN_BATCH and _onepool.enabled()


def _steps_fwd_pool(xa, w_x, w, bias, h0, c0, order, saved):
    """_steps_fwd on the one pool (NOTE [LSTM layer on the one pool])."""
    acts, cs, tanh_cs, hs = saved
    steps, hidden, batch = cs.shape
    dt = acts.dtype
    proj = reusable_empty((steps, 4 * hidden, batch), dt)  # proj[t] = W_ih @ x[t]^T
    _onepool.matmul(w_x, xa.transpose(0, 2, 1), out=proj)
    # the biases, each repeated over its row's B elements, are added by the step kernel
    bias_rows = np.zeros(4 * hidden * batch, dt) if bias is None else np.repeat(bias, batch)
    h = np.ascontiguousarray(h0.T, dt)
    c_flat = np.ascontiguousarray(c0.T, dt).reshape(-1)
    z = np.empty((4 * hidden, batch), dt)
    z_flat = z.reshape(-1)
    proj_flat = _per_step(proj)
    flat = [_per_step(a) for a in saved]
    step = _krnn._k_lstm_step_fwd_pool.pick(z.size)
    blocks = numba.get_num_threads() if step is _krnn._k_lstm_step_fwd_pool.parallel else 1
    for t in order:
        _onepool.matmul(w, h, out=z)
        step(z_flat, proj_flat[t], bias_rows, flat[0][t], c_flat, flat[1][t], flat[2][t],
             flat[3][t], hidden, blocks)
        h, c_flat = hs[t], flat[1][t]
    return h, c_flat.reshape(hidden, batch)


def _steps_bwd_pool(dh, dc, g_out, c0_flat, w, saved, order, gates):
    """_steps_bwd on the one pool (NOTE [LSTM layer on the one pool])."""
    acts, tanh_cs, cs = (_per_step(a) for a in saved)
    dt, (hidden, batch) = dh.dtype, dh.shape
    if g_out is None:
        g_out = np.zeros((1, dh.size), dt)
    g = np.empty((gates.shape[0], batch), dt)
    one = dt.type(1)
    dh_flat, dc_flat, g_flat = dh.reshape(-1), dc.reshape(-1), g.reshape(-1)
    step = _krnn._k_lstm_step_bwd_pool.pick(g.size)
    blocks = numba.get_num_threads() if step is _krnn._k_lstm_step_bwd_pool.parallel else 1
    w_t = w.T
    for k in range(len(order) - 1, -1, -1):
        t = order[k]
        c_prev = c0_flat if k == 0 else cs[order[k - 1]]
        step(dh_flat, g_out[t if g_out.shape[0] > 1 else 0], dc_flat, acts[t], tanh_cs[t],
             c_prev, g_flat, gates[:, t * batch:(t + 1) * batch], one, hidden, blocks)
        _onepool.matmul(w_t, g, out=dh)


class LSTMLayer(Op):
    """A whole LSTM layer over unpacked time steps, one direction, input projection included:
    (out (T, B, H), h_T, c_T) from x (T, B, I), h0, c0 (B, H), w_ih (4H, I), w_hh (4H, H) and
    the biases b_ih, b_hh (4H,) (both None without bias); ``reverse`` runs from the last step
    to the first. See NOTE [Gate-major LSTM layer].

    One graph node for the whole sequence instead of a Linear and four nodes per step
    (matmul, add, cell, split). Same arithmetic per step as LSTMCell (sigmoid and tanh from
    vmath, within 2 ulp of NumPy's); once-differentiable like it.
    """

    @staticmethod
    def forward(ctx, x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse=False):
        xa = _prep(x)
        dt = xa.dtype
        steps, batch = xa.shape[0], xa.shape[1]
        w_x = _prep(w_ih).astype(dt, copy=False)
        w = _prep(w_hh).astype(dt, copy=False)
        hidden = w.shape[1]
        # the sequences saved for backward are big and made every step: NOTE [Reused buffers]
        acts = reusable_empty((steps, 4 * hidden, batch), dt)
        cs = reusable_empty((steps, hidden, batch), dt)
        tanh_cs = reusable_empty((steps, hidden, batch), dt)
        hs = reusable_empty((steps, hidden, batch), dt)
        bias = None if b_ih is None else np.add(b_ih, b_hh, dtype=dt, casting="unsafe")
        order = range(steps - 1, -1, -1) if reverse else range(steps)
        steps_fwd = _steps_fwd_pool if _on_pool(batch) else _steps_fwd
        h, c = steps_fwd(xa, w_x, w, bias, h0, c0, order, (acts, cs, tanh_cs, hs))
        out = reusable_empty((steps, batch, hidden), dt)
        _copy(_krnn._k_steps_transposed, steps, hs, out)
        ctx.reverse, ctx.has_bias = reverse, b_ih is not None
        ctx.dtypes = tuple(None if a is None else a.dtype
                           for a in (x, h0, c0, w_ih, w_hh, b_ih, b_hh))
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(xa, h0, c0, w_x, w, acts, tanh_cs, cs, out)
        return _back(out, x.dtype), _back(h.T.copy(), x.dtype), _back(c.T.copy(), x.dtype)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out, grad_h, grad_c):
        need = ctx.needs_input_grad
        x, h0, c0, w_x, w, acts, tanh_cs, cs, out = (v._data for v in ctx.saved_tensors)
        dt = acts.dtype
        steps, batch, hidden = out.shape
        rows = steps * batch
        order = list(range(steps - 1, -1, -1) if ctx.reverse else range(steps))
        g_out = None
        if grad_out is not None:
            g_out = reusable_empty((steps, hidden, batch), dt)
            go = grad_out._data
            if go.dtype == dt and go.strides[-1] == dt.itemsize:
                _copy(_krnn._k_steps_transposed, steps, go, g_out)
            else:
                np.copyto(g_out, go.transpose(0, 2, 1), casting="unsafe")
            g_out = _per_step(g_out)
        dh = np.zeros((hidden, batch), dt) if grad_h is None else \
            np.array(grad_h._data.T, dt, order="C")  # a copy: written to
        dc = np.zeros((hidden, batch), dt) if grad_c is None else \
            np.array(grad_c._data.T, dt, order="C")
        c0_flat = np.ascontiguousarray(c0.T, dt).reshape(-1)
        gates = reusable_empty((4 * hidden, rows), dt)  # G: NOTE [Gate-major LSTM layer]
        steps_bwd = _steps_bwd_pool if _on_pool(batch) else _steps_bwd
        steps_bwd(dh, dc, g_out, c0_flat, w, (acts, tanh_cs, cs), order, gates)
        return (*LSTMLayer._input_grads(ctx, need, x, gates, w_x),
                _make(_back(dh.T.copy(), ctx.dtypes[1])) if need[1] else None,
                _make(_back(dc.T.copy(), ctx.dtypes[2])) if need[2] else None,
                *LSTMLayer._weight_grads(ctx, need, x, h0, out, gates))

    @staticmethod
    def _input_grads(ctx, need, x, gates, w_x):
        """(grad x,) = G^T @ W_ih, reshaped to x's (T, B, I)."""
        if not need[0]:
            return (None,)
        gx = reusable_empty((gates.shape[1], w_x.shape[1]), gates.dtype)
        _onepool.matmul(gates.T, w_x, out=gx)
        return (_make(_back(gx.reshape(x.shape), ctx.dtypes[0])),)

    @staticmethod
    def _weight_grads(ctx, need, x, h0, out, gates):
        """(grad w_ih, grad w_hh, grad b_ih, grad b_hh) from G (4H, T*B): one GEMM each over
        all T*B rows (the h each step read lines up with its columns of G)."""
        dt, rows = gates.dtype, gates.shape[1]
        steps, batch, hidden = out.shape
        gw_ih = gw_hh = gb_ih = gb_hh = None
        if need[3]:
            gw_ih = reusable_empty((4 * hidden, x.shape[2]), dt)  # NOTE [Reused buffers]
            _onepool.matmul(gates, x.reshape(rows, x.shape[2]), out=gw_ih)
            gw_ih = _make(_back(gw_ih, ctx.dtypes[3]))
        if need[4]:
            gw_hh = reusable_empty((4 * hidden, hidden), dt)
            if not h0.any():  # NOTE [grad W_hh without h0's columns]
                cols = slice(0, rows - batch) if ctx.reverse else slice(batch, rows)
                h_read = out[1:] if ctx.reverse else out[:-1]
                _onepool.matmul(gates[:, cols], h_read.reshape(rows - batch, hidden),
                                out=gw_hh)
            else:
                h_prev = reusable_empty((steps, batch, hidden), dt)  # the h each step read
                if ctx.reverse:
                    h_prev[-1] = h0
                    h_prev[:-1] = out[1:]
                else:
                    h_prev[0] = h0
                    h_prev[1:] = out[:-1]
                _onepool.matmul(gates, h_prev.reshape(rows, hidden), out=gw_hh)
            gw_hh = _make(_back(gw_hh, ctx.dtypes[4]))
        if ctx.has_bias and (need[5] or need[6]):
            gb = np.matmul(gates, np.ones(rows, dt))  # a GEMV: half the time of a row sum
            # two arrays for the two biases: a tensor handed to two leaves would alias .grad
            gb_ih = _make(_back(gb, ctx.dtypes[5])) if need[5] else None
            gb_hh = _make(_back(gb.copy(), ctx.dtypes[6])) if need[6] else None
        return gw_ih, gw_hh, gb_ih, gb_hh


# NOTE [grad W_hh without h0's columns]
# grad W_hh = G H_prev sums, over every step's B columns of G, the gate gradient times the h that
# step read: h0 for the first step, the layer's own outputs for the others. h0 is zeros unless the
# caller passes a state (nn.LSTM without hx: every GNMT-S layer), and then its B columns add
# nothing: the product is G without them times the saved outputs, with no (T*B, H) copy of
# H_prev and 1/T less work. The float32 sums start at the next step's terms (a different
# blocking of the same sums, within rounding of the full product). Whole-step A/B (ab.py gnmt,
# quiet slot 18:00, load 1.28), paired old/new 1.004 and new/old 0.993: ~0.5 % of a step, inside
# the noise (1/T of one GEMM in each of four layers); kept as less work for a few lines.


class GRUCell(Op):
    """h from gi = x W_ih^T + b_ih, gh = h_prev W_hh^T + b_hh (B, 3H) (order r, z, n), h_prev.

    The backward is the fused numba kernel, so it is once-differentiable.
    """

    @staticmethod
    def forward(ctx, gi, gh, h_prev):
        h, saved = _krnn.gru_cell_forward(_prep(gi), _prep(gh), _prep(h_prev))
        ctx.dtype = gi.dtype
        ctx.save_for_backward(h_prev, saved)
        return _back(h, gi.dtype)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_h):
        h_prev, saved = ctx.saved_tensors
        g = _prep(grad_h._data).astype(saved._data.dtype, copy=False)
        grad_gi, grad_gh, grad_h_prev = _krnn.gru_cell_backward(g, saved._data,
                                                                _prep(h_prev._data))
        return tuple(_make(_back(a, ctx.dtype)) for a in (grad_gi, grad_gh, grad_h_prev))


class SplitRows(Op):
    """Split along dim 0 into pieces of ``sizes`` rows (squeezed when ``squeeze``).

    One node for all pieces: the backward concatenates every piece's gradient at once, where
    per-piece narrow/select would each build a full-size zero gradient (quadratic over a
    sequence).
    """

    @staticmethod
    def forward(ctx, x, sizes, squeeze=False):
        ctx.sizes, ctx.squeeze = sizes, squeeze
        bounds = np.cumsum((0,) + tuple(sizes))
        if squeeze:
            return tuple(x[i] for i in range(len(sizes)))
        return tuple(x[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True))

    @staticmethod
    def backward(ctx, *grads):
        if ctx.squeeze:
            return stack(list(grads), 0)
        return cat(list(grads), 0)
