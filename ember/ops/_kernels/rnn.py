"""Pointwise parts of the LSTM and GRU cells; the matmuls stay with the caller (BLAS).

The caller computes the gate pre-activations with GEMMs and hands them here; these kernels do
the nonlinearities and the state update in as few passes as possible. sigmoid and tanh go
through NumPy's SIMD ufuncs (numba's scalar tanh is ~90x slower); the backward passes need no
transcendental at all because the forward saves the activated gates. Loops run over the batch
with prange, compiled serially: see NOTE [Kernel threading] in conv.py.
"""

import platform
import warnings

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.core.errors import NumbaIRAssumptionWarning
from numba.core.extending import intrinsic

from ... import _onepool
from ..._blas_parts import as_ptr
from .attention import _gemm_rm
from .vmath import vsigmoid, vtanh

PARALLEL = False
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
# Batches up to this many rows take the one-pass kernel (every batch in practice: with each gate
# as its own view it beats the six NumPy calls at batch 32 too, 25.6 vs 44 us at hidden 256)
_FUSED_MAX_ROWS = 1 << 30


def _sigmoid(z, out):
    """1 / (1 + exp(-z)) into out: keeps full relative precision for very negative z, where
    0.5 + 0.5 * tanh(z / 2) would round to 0."""
    np.negative(z, out=out)
    with np.errstate(over="ignore"):  # exp(-z) = inf for z << 0 gives the right limit, 0
        np.exp(out, out=out)
    out += 1
    np.reciprocal(out, out=out)
    return out


# ---------------------------------------------------------------------------------------------
# LSTM, gate order (i, f, g, o) as in torch:
#     i, f, o = sigmoid(.), g = tanh(.), c = f * c_prev + i * g, h = o * tanh(c)


# `one` (here and in the GRU kernels) is 1 in the arrays' dtype: with a literal 1, numba computes
# float32 arithmetic in float64 (Python int with float32 promotes), which is 5-6x slower here
# and rounds differently from NumPy's float32 ufuncs. Rows are taken as 1-D views so that LLVM
# vectorizes the inner loops.

@numba.njit(nogil=True, cache=True, parallel=PARALLEL, error_model="numpy")
def _k_lstm_cell_fwd(act, c_prev, c, one):
    """act holds exp(-z) for the i, f, o gates and tanh(z) for g: finish the sigmoids,
    1 / (1 + exp(-z)) as `_sigmoid` computes them, and c = f * c_prev + i * g. NumPy's error
    model: Python's (a ZeroDivisionError check on every division) keeps the loops scalar, and
    1 + exp(-z) >= 1 never divides by zero anyway."""
    n_batch, hidden = c.shape
    for b in numba.prange(n_batch):
        row = act[b]
        for k in range(2 * hidden):  # i and f
            row[k] = one / (one + row[k])
        for k in range(3 * hidden, 4 * hidden):  # o
            row[k] = one / (one + row[k])
        cp = c_prev[b]
        cb = c[b]
        for k in range(hidden):
            cb[k] = row[hidden + k] * cp[k] + row[k] * row[2 * hidden + k]


@numba.njit(nogil=True, cache=True, parallel=PARALLEL)
def _k_lstm_cell_bwd(grad_h, grad_c, act, tanh_c, c_prev, grad_gates, grad_c_prev, one):
    n_batch, hidden = c_prev.shape
    for b in numba.prange(n_batch):
        ai = act[b, :hidden]
        af = act[b, hidden:2 * hidden]
        ag = act[b, 2 * hidden:3 * hidden]
        ao = act[b, 3 * hidden:]
        di = grad_gates[b, :hidden]
        df = grad_gates[b, hidden:2 * hidden]
        dg = grad_gates[b, 2 * hidden:3 * hidden]
        do = grad_gates[b, 3 * hidden:]
        gh = grad_h[b]
        gc = grad_c[b]
        tcb = tanh_c[b]
        cp = c_prev[b]
        dcp = grad_c_prev[b]
        for k in range(hidden):
            i = ai[k]
            f = af[k]
            g = ag[k]
            o = ao[k]
            tc = tcb[k]
            # total gradient reaching c: directly, and through h = o * tanh(c)
            dc = gc[k] + gh[k] * o * (one - tc * tc)
            di[k] = dc * g * i * (one - i)                    # sigmoid'
            df[k] = dc * cp[k] * f * (one - f)
            dg[k] = dc * i * (one - g * g)                    # tanh'
            do[k] = gh[k] * tc * o * (one - o)
            dcp[k] = dc * f


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _k_lstm_cell_fwd_fused(gates, c_prev, h, c, act, tanh_c):
    """The whole cell in one pass per row, with vmath's vectorisable sigmoid and tanh: at a
    small batch the NumPy form is mostly the overhead of its six calls (batch 4, hidden 128:
    10 us -> 2.1 us; batch 32, hidden 256: 44 -> 25.6 us, single thread, busy machine)."""
    n_batch, hidden = c.shape
    for b in range(n_batch):
        # each gate as its own view, loops from 0: see _k_lstm_step_fwd_t
        z_if, a_if = gates[b, :2 * hidden], act[b, :2 * hidden]
        for k in range(2 * hidden):  # i and f
            a_if[k] = vsigmoid(z_if[k])
        z_g, a_g = gates[b, 2 * hidden:3 * hidden], act[b, 2 * hidden:3 * hidden]
        for k in range(hidden):
            a_g[k] = vtanh(z_g[k])
        z_o, a_o = gates[b, 3 * hidden:], act[b, 3 * hidden:]
        for k in range(hidden):
            a_o[k] = vsigmoid(z_o[k])
        a_i, a_f = act[b, :hidden], act[b, hidden:2 * hidden]
        cp = c_prev[b]
        cb = c[b]
        tb = tanh_c[b]
        hb = h[b]
        for k in range(hidden):
            cv = a_f[k] * cp[k] + a_i[k] * a_g[k]
            cb[k] = cv
            tc = vtanh(cv)
            tb[k] = tc
            hb[k] = a_o[k] * tc


def lstm_cell_forward(gates, c_prev, out=None):
    """One LSTM step from gate pre-activations.

    Args:
        gates: (B, 4H) = x @ W_ih.T + b_ih + h_prev @ W_hh.T + b_hh, gate order i, f, g, o.
        c_prev: (B, H) previous cell state.
        out: optional (h, c, act, tanh_c) arrays to write the results into (C-contiguous
            rows; an LSTM layer passes its per-step slices, saving a copy of each).

    Returns:
        (h, c, saved): h, c (B, H); saved = (act, tanh_c) with act (B, 4H) the activated gates
        [sigmoid(i), sigmoid(f), tanh(g), sigmoid(o)] and tanh_c = tanh(c) (B, H).
    """
    hidden = c_prev.shape[1]
    if out is None:
        out = (np.empty_like(c_prev), np.empty_like(c_prev), np.empty_like(gates),
               np.empty_like(c_prev))
    h, c, act, tanh_c = out
    if _FUSED_MAX_ROWS >= gates.shape[0] and gates.dtype == c_prev.dtype and \
            gates.dtype in _FLOATS and gates.flags.c_contiguous and c_prev.flags.c_contiguous:
        _k_lstm_cell_fwd_fused(gates, c_prev, h, c, act, tanh_c)
        return h, c, (act, tanh_c)
    # one exp over all four gates (g's quarter is then overwritten by its tanh): fewer NumPy
    # calls per time step; exp(-z) = inf for z << 0 gives the sigmoid's right limit, 0
    np.negative(gates, out=act)
    with np.errstate(over="ignore"):
        np.exp(act, out=act)
    np.tanh(gates[:, 2 * hidden:3 * hidden], out=act[:, 2 * hidden:3 * hidden])
    _k_lstm_cell_fwd(act, c_prev, c, c.dtype.type(1))
    np.tanh(c, out=tanh_c)
    np.multiply(act[:, 3 * hidden:], tanh_c, out=h)
    return h, c, (act, tanh_c)


def lstm_cell_backward(grad_h, grad_c, saved, c_prev, grad_gates=None):
    """Gradients of `lstm_cell_forward`: (grad_gates (B, 4H), grad_c_prev (B, H)).

    grad_h or grad_c may be None (no gradient flows into that output). grad_gates, if given,
    is the C-contiguous (B, 4H) array to write that gradient into.
    """
    act, tanh_c = saved
    zeros = None
    if grad_h is None or grad_c is None:
        zeros = np.zeros_like(c_prev)
    if grad_gates is None:
        grad_gates = np.empty_like(act)
    grad_c_prev = np.empty_like(c_prev)
    _k_lstm_cell_bwd(zeros if grad_h is None else grad_h, zeros if grad_c is None else grad_c,
                     act, tanh_c, c_prev, grad_gates, grad_c_prev, act.dtype.type(1))
    return grad_gates, grad_c_prev


# ---------------------------------------------------------------------------------------------
# LSTM layer steps in gate-major layout: NOTE [Gate-major LSTM layer] in ember/ops/nn/rnn.py.
# A step's arrays are (rows, B) with the batch innermost, C-contiguous, passed flat: gates
# (4H * B,) hold rows i, f, g, o one after another and the states (H * B,). Each loop below then
# runs over thousands of contiguous elements and vectorises (vmath's sigmoid/tanh are
# branch-free); rows of B elements each would leave too short a loop (B = 32: the vectorised body
# of 16 lanes unrolled four times never runs).


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _lstm_state_span(act, c_prev, c, tanh_c, h, lo, hi):
    """c = f * c_prev + i * g, tanh_c = tanh(c), h = o * tanh_c on elements [lo, hi) of the
    states (and of each gate of act)."""
    n = c.size
    ai, af = act[lo:hi], act[n + lo:n + hi]
    ag, ao = act[2 * n + lo:2 * n + hi], act[3 * n + lo:3 * n + hi]
    cp, cb, tb, hb = c_prev[lo:hi], c[lo:hi], tanh_c[lo:hi], h[lo:hi]
    for j in range(hi - lo):
        cv = af[j] * cp[j] + ai[j] * ag[j]
        cb[j] = cv
        tc = vtanh(cv)
        tb[j] = tc
        hb[j] = ao[j] * tc


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _k_lstm_step_fwd_t(z, act, c_prev, c, tanh_c, h):
    """One step from the pre-activations z (4H * B,): act = [sigmoid(i), sigmoid(f), tanh(g),
    sigmoid(o)], c = f * c_prev + i * g, tanh_c = tanh(c), h = o * tanh_c. Each gate is
    taken as its own view with loops from 0: indexing one array at offsets (act[2 * n + j])
    ran the same loops at half the speed (LLVM vectorised them worse)."""
    n = c.size
    zif, aif = z[:2 * n], act[:2 * n]
    for j in range(2 * n):  # i and f
        aif[j] = vsigmoid(zif[j])
    zg, ag = z[2 * n:3 * n], act[2 * n:3 * n]
    for j in range(n):
        ag[j] = vtanh(zg[j])
    zo, ao = z[3 * n:], act[3 * n:]
    for j in range(n):
        ao[j] = vsigmoid(zo[j])
    _lstm_state_span(act, c_prev, c, tanh_c, h, 0, n)


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _lstm_bwd_span(dh, g_out, dc, act, tanh_c, c_prev, grad_gates, one, lo, hi):
    """The backward cell (see _k_lstm_step_bwd_t) on elements [lo, hi) of the states and of
    each gate."""
    n = dc.size
    ai, af = act[lo:hi], act[n + lo:n + hi]
    ag, ao = act[2 * n + lo:2 * n + hi], act[3 * n + lo:3 * n + hi]
    di, df = grad_gates[lo:hi], grad_gates[n + lo:n + hi]
    dg, do = grad_gates[2 * n + lo:2 * n + hi], grad_gates[3 * n + lo:3 * n + hi]
    dhb, gob, dcb = dh[lo:hi], g_out[lo:hi], dc[lo:hi]
    tcb, cpb = tanh_c[lo:hi], c_prev[lo:hi]
    for j in range(hi - lo):
        i = ai[j]
        f = af[j]
        g = ag[j]
        o = ao[j]
        tc = tcb[j]
        gh = dhb[j] + gob[j]
        # total gradient reaching c: directly, and through h = o * tanh(c)
        d = dcb[j] + gh * o * (one - tc * tc)
        di[j] = d * g * i * (one - i)                    # sigmoid'
        df[j] = d * cpb[j] * f * (one - f)
        dg[j] = d * i * (one - g * g)                    # tanh'
        do[j] = gh * tc * o * (one - o)
        dcb[j] = d * f


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _k_lstm_step_bwd_t(dh, g_out, dc, act, tanh_c, c_prev, grad_gates, one):
    """Backward of one step: the gradient reaching h is dh + g_out (the caller passes zeros
    for an output without gradient); dc holds the gradient reaching c on entry and the one
    reaching c_prev on exit. Writes grad_gates (4H * B,)."""
    _lstm_bwd_span(dh, g_out, dc, act, tanh_c, c_prev, grad_gates, one, 0, dc.size)


# ---------------------------------------------------------------------------------------------
# The same steps on the one pool (NOTE [One pool] in ember/_onepool.py; NOTE [LSTM layer on the
# one pool] in ember/ops/nn/rnn.py): the hidden units are cut into `blocks` spans of whole rows,
# one per thread; a span covers elements [lo, hi) of every gate's flat segment, so each loop
# below still runs over long contiguous stretches. Every element is computed as in the kernels
# above (elementwise), so the results do not depend on the split.
# A step moves ~4H * B elements (32k for GNMT-S): a few tens of microseconds on one core.
_STEP_MIN_WORK = 1 << 14
# Compiling vmath's inlined tanh twice in one prange body, numba's pedantic SSA check warns
# ("variable '_ov_vtanh...' is not in scope"; the code is right: the tests compare it with the
# serial kernels and NumPy). Silenced for the names of ember's vmath overloads only.
warnings.filterwarnings("ignore", message=r"variable '_ov_v", category=NumbaIRAssumptionWarning)


@_onepool.twin(min_work=_STEP_MIN_WORK, error_model="numpy")
def _k_lstm_step_fwd_pool(z, p, bias, act, c_prev, c, tanh_c, h, rows, blocks):
    """_k_lstm_step_fwd_t from the pre-activation z + (p + bias): the recurrent product, the
    step's input projection and both biases (each repeated over its row's B elements), added
    here instead of by passes of their own, in the order the serial layer adds them; `blocks`
    spans of the `rows` hidden units in parallel."""
    n = c.size
    width = n // rows
    for b in numba.prange(blocks):
        lo = width * (rows * b // blocks)
        hi = width * (rows * (b + 1) // blocks)
        for q in (0, 1, 3):  # i, f, o
            zq, pq = z[q * n + lo:q * n + hi], p[q * n + lo:q * n + hi]
            bq, aq = bias[q * n + lo:q * n + hi], act[q * n + lo:q * n + hi]
            for j in range(hi - lo):
                aq[j] = vsigmoid(zq[j] + (pq[j] + bq[j]))
        zg, pg = z[2 * n + lo:2 * n + hi], p[2 * n + lo:2 * n + hi]
        bg, ag = bias[2 * n + lo:2 * n + hi], act[2 * n + lo:2 * n + hi]
        for j in range(hi - lo):
            ag[j] = vtanh(zg[j] + (pg[j] + bg[j]))
        _lstm_state_span(act, c_prev, c, tanh_c, h, lo, hi)


@_onepool.twin(min_work=_STEP_MIN_WORK, error_model="numpy")
def _k_lstm_step_bwd_pool(dh, g_out, dc, act, tanh_c, c_prev, grad_gates, grad_rows, one, rows,
                          blocks):
    """One backward step as _k_lstm_step_bwd_t, `blocks` spans of hidden units in parallel;
    each span also copies its rows of the gate gradient (4H, B) into grad_rows, the step's
    columns of the whole layer's gate gradient G (NOTE [Gate-major LSTM layer])."""
    n = dc.size
    width = n // rows
    for b in numba.prange(blocks):
        r0 = rows * b // blocks
        r1 = rows * (b + 1) // blocks
        _lstm_bwd_span(dh, g_out, dc, act, tanh_c, c_prev, grad_gates, one, width * r0,
                       width * r1)
        for q in range(4):
            for r in range(q * rows + r0, q * rows + r1):
                src = grad_gates[r * width:(r + 1) * width]
                dst = grad_rows[r]
                for k in range(width):
                    dst[k] = src[k]


# ---------------------------------------------------------------------------------------------
# GRU, gate order (r, z, n) as in torch, with gi = x @ W_ih.T + b_ih, gh = h @ W_hh.T + b_hh:
#     r = sigmoid(gi_r + gh_r), z = sigmoid(gi_z + gh_z), n = tanh(gi_n + r * gh_n)
#     h = (1 - z) * n + z * h_prev


@numba.njit(nogil=True, cache=True, parallel=PARALLEL)
def _k_gru_cell_fwd(act, h_prev, h, one):
    n_batch, hidden = h.shape
    for b in numba.prange(n_batch):
        az, an = act[b, hidden:2 * hidden], act[b, 2 * hidden:3 * hidden]
        hp, hb = h_prev[b], h[b]
        for k in range(hidden):
            z = az[k]
            hb[k] = (one - z) * an[k] + z * hp[k]


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _k_gru_cell_fwd_fused(gi, gh, h_prev, h, saved, one):
    """The whole GRU cell in one pass per row, each gate as its own view (loops from 0, as in
    _k_lstm_cell_fwd_fused), with vmath's vectorisable sigmoid and tanh: replaces eight NumPy
    calls and a kernel. saved gets [r, z, n, gh_n] as `gru_cell_forward` documents."""
    n_batch, hidden = h.shape
    for b in range(n_batch):
        gi_rz, gh_rz, s_rz = gi[b, :2 * hidden], gh[b, :2 * hidden], saved[b, :2 * hidden]
        for k in range(2 * hidden):  # r and z
            s_rz[k] = vsigmoid(gi_rz[k] + gh_rz[k])
        s_r, s_z = saved[b, :hidden], saved[b, hidden:2 * hidden]
        gi_n, gh_n = gi[b, 2 * hidden:], gh[b, 2 * hidden:]
        s_n, s_ghn = saved[b, 2 * hidden:3 * hidden], saved[b, 3 * hidden:]
        hp, hb = h_prev[b], h[b]
        for k in range(hidden):
            ghn = gh_n[k]
            s_ghn[k] = ghn
            n = vtanh(gi_n[k] + s_r[k] * ghn)
            s_n[k] = n
            z = s_z[k]
            hb[k] = (one - z) * n + z * hp[k]


@numba.njit(nogil=True, cache=True, parallel=PARALLEL)
def _k_gru_cell_bwd(grad_h, saved, h_prev, grad_gi, grad_gh, grad_h_prev, one):
    """Each gate as its own view of its row (loops from 0): indexing rows at offsets
    (saved[b, 2 * hidden + k]) vectorises worse, as in the LSTM kernels."""
    n_batch, hidden = h_prev.shape
    for b in numba.prange(n_batch):
        s_r, s_z = saved[b, :hidden], saved[b, hidden:2 * hidden]
        s_n, s_ghn = saved[b, 2 * hidden:3 * hidden], saved[b, 3 * hidden:]
        di_r, di_z, di_n = (grad_gi[b, :hidden], grad_gi[b, hidden:2 * hidden],
                            grad_gi[b, 2 * hidden:])
        dh_r, dh_z, dh_n = (grad_gh[b, :hidden], grad_gh[b, hidden:2 * hidden],
                            grad_gh[b, 2 * hidden:])
        gb, hp, dhp = grad_h[b], h_prev[b], grad_h_prev[b]
        for k in range(hidden):
            r = s_r[k]
            z = s_z[k]
            n = s_n[k]
            g = gb[k]
            d_n = g * (one - z) * (one - n * n)      # through tanh into gi_n + r * gh_n
            d_r = d_n * s_ghn[k] * r * (one - r)
            d_z = g * (hp[k] - n) * z * (one - z)
            di_r[k] = d_r
            di_z[k] = d_z
            di_n[k] = d_n
            dh_r[k] = d_r
            dh_z[k] = d_z
            dh_n[k] = d_n * r
            dhp[k] = g * z


def gru_cell_forward(gi, gh, h_prev):
    """One GRU step from the input and hidden projections.

    Args:
        gi: (B, 3H) = x @ W_ih.T + b_ih; gh: (B, 3H) = h_prev @ W_hh.T + b_hh (order r, z, n).
        h_prev: (B, H).

    Returns:
        (h, saved): h (B, H); saved (B, 4H) holds [r, z, n, gh_n] (gh_n is copied, so the
        caller may reuse gh).
    """
    hidden = h_prev.shape[1]
    saved = np.empty(gi.shape[:1] + (4 * hidden,), dtype=gi.dtype)
    if _FUSED_MAX_ROWS >= gi.shape[0] and gi.dtype == gh.dtype == h_prev.dtype and \
            gi.dtype in _FLOATS and gi.flags.c_contiguous and gh.flags.c_contiguous and \
            h_prev.flags.c_contiguous:
        h = np.empty_like(h_prev)
        _k_gru_cell_fwd_fused(gi, gh, h_prev, h, saved, h.dtype.type(1))
        return h, saved
    rz = np.add(gi[:, :2 * hidden], gh[:, :2 * hidden])
    _sigmoid(rz, saved[:, :2 * hidden])
    saved[:, 3 * hidden:] = gh[:, 2 * hidden:]
    n = saved[:, 2 * hidden:3 * hidden]
    np.multiply(saved[:, :hidden], gh[:, 2 * hidden:], out=n)
    n += gi[:, 2 * hidden:]
    np.tanh(n, out=n)
    h = np.empty_like(h_prev)
    _k_gru_cell_fwd(saved, h_prev, h, h.dtype.type(1))
    return h, saved


def gru_cell_backward(grad_h, saved, h_prev):
    """Gradients of `gru_cell_forward`: (grad_gi (B, 3H), grad_gh (B, 3H), grad_h_prev (B, H))."""
    n_batch, hidden = h_prev.shape
    grad_gi = np.empty((n_batch, 3 * hidden), dtype=h_prev.dtype)
    grad_gh = np.empty_like(grad_gi)
    grad_h_prev = np.empty_like(h_prev)
    _k_gru_cell_bwd(grad_h, saved, h_prev, grad_gi, grad_gh, grad_h_prev, h_prev.dtype.type(1))
    return grad_gi, grad_gh, grad_h_prev


# ---------------------------------------------------------------------------------------------
# The LSTM layer's steps on OpenBLAS's own threads (NOTE [Kernels on OpenBLAS's threads] in
# ember/_blas_parts.py; NOTE [LSTM steps on OpenBLAS's threads] in ember/ops/nn/rnn.py): cfuncs
# of the legacy part signature, each part computing a run of hidden units exactly as the serial
# kernels above compute them. Arguments come in an int64 array (slot 0: the row shift).
_PARTS = {}


def _lstm_fwd_part_of(dt):
    """The forward step part for dtype dt: z (4H*B,) += the step's columns of the projection,
    then _k_lstm_step_fwd_t's arithmetic on the part's hidden units, writing the step's saved
    slices. Slots: 1 z, 2 projection (4H, ld), 3 ld, 4 acts (T, 4H*B), 5 cs, 6 tanh_cs,
    7 hs (T, H*B), 8 c_prev, 9 H*B, 10 B, 11 t, 12 the summed biases (4H,) or 0 for none: added
    to the projection's value first, as the serial layer's pass over the projection does."""
    from ..._blas_parts import as_ptr
    kind = numba.from_dtype(dt)
    item = dt.itemsize

    def part(m, n_, k_, alpha, a, lda, b_, ldb, c, ldc, sb):
        arg = numba.carray(as_ptr(c, numba.int64), (13,))
        n, width, t, ld = arg[9], arg[10], arg[11], arg[3]
        rows = n // width
        r0 = a >> arg[0]
        lo, hi = r0 * width, (r0 + m) * width
        z = numba.carray(as_ptr(arg[1], kind), (4 * n,))
        proj = numba.carray(as_ptr(arg[2], kind), (4 * rows, ld))
        act = numba.carray(as_ptr(arg[4] + t * 4 * n * item, kind), (4 * n,))
        cc = numba.carray(as_ptr(arg[5] + t * n * item, kind), (n,))
        tanh_c = numba.carray(as_ptr(arg[6] + t * n * item, kind), (n,))
        h = numba.carray(as_ptr(arg[7] + t * n * item, kind), (n,))
        c_prev = numba.carray(as_ptr(arg[8], kind), (n,))
        bias = numba.carray(as_ptr(arg[12], kind), (4 * rows if arg[12] else 0,))
        for q in range(4):
            for r in range(q * rows + r0, q * rows + r0 + m):
                zr = z[r * width:(r + 1) * width]
                pr = proj[r, t * width:(t + 1) * width]
                if arg[12]:
                    br = bias[r]
                    for j in range(width):
                        zr[j] = zr[j] + (pr[j] + br)
                else:
                    for j in range(width):
                        zr[j] = zr[j] + pr[j]
        for q in (0, 1, 3):  # i, f, o
            zq, aq = z[q * n + lo:q * n + hi], act[q * n + lo:q * n + hi]
            for j in range(hi - lo):
                aq[j] = vsigmoid(zq[j])
        zg, ag = z[2 * n + lo:2 * n + hi], act[2 * n + lo:2 * n + hi]
        for j in range(hi - lo):
            ag[j] = vtanh(zg[j])
        _lstm_state_span(act, c_prev, cc, tanh_c, h, lo, hi)

    return part


def _lstm_bwd_part_of(dt):
    """The backward step part for dtype dt: _lstm_bwd_span's arithmetic on the part's hidden
    units, the gate gradient into the step's slice of the step-major buffer. Slots: 1 dh, 2 the
    output's gradient (T, H*B), 3 its step stride in elements (0: one row of zeros), 4 dc,
    5 acts, 6 tanh_cs, 7 c_prev, 8 gate gradients (T, 4H*B), 9 H*B, 10 B, 11 t."""
    from ..._blas_parts import as_ptr
    kind = numba.from_dtype(dt)
    item = dt.itemsize
    one = dt.type(1)

    def part(m, n_, k_, alpha, a, lda, b_, ldb, c, ldc, sb):
        arg = numba.carray(as_ptr(c, numba.int64), (12,))
        n, width, t = arg[9], arg[10], arg[11]
        r0 = a >> arg[0]
        lo, hi = r0 * width, (r0 + m) * width
        dh = numba.carray(as_ptr(arg[1], kind), (n,))
        g_out = numba.carray(as_ptr(arg[2] + t * arg[3] * item, kind), (n,))
        dc = numba.carray(as_ptr(arg[4], kind), (n,))
        act = numba.carray(as_ptr(arg[5] + t * 4 * n * item, kind), (4 * n,))
        tanh_c = numba.carray(as_ptr(arg[6] + t * n * item, kind), (n,))
        c_prev = numba.carray(as_ptr(arg[7], kind), (n,))
        grad = numba.carray(as_ptr(arg[8] + t * 4 * n * item, kind), (4 * n,))
        _lstm_bwd_span(dh, g_out, dc, act, tanh_c, c_prev, grad, one, lo, hi)

    return part


def lstm_step_part(direction, dt):
    """The compiled cfunc ("fwd" or "bwd") for float dtype dt, made on first use."""
    key = (direction, np.dtype(dt))
    fn = _PARTS.get(key)
    if fn is None:
        from ..._blas_parts import PART
        make = _lstm_fwd_part_of if direction == "fwd" else _lstm_bwd_part_of
        fn = _PARTS[key] = numba.cfunc(PART, nopython=True, error_model="numpy",
                                       cache=True)(make(np.dtype(dt)))
    return fn


# NOTE [LSTM layer copies in parts]
# Three copies per layer reorder whole sequences between the time loop's gate-major (rows, B)
# steps and the (T, B, H) tensors outside: the output h (T, H, B) -> (T, B, H) after the
# forward loop, the output's gradient back before the backward loop, and the step-major gate
# gradients (T, 4H, B) into G's column blocks (4H, T*B) after it (NOTE [Step-major gate
# gradients] in ops/nn/rnn.py): ~160, ~160 and ~390 us a GNMT-S layer on one core, serial
# beside two-thread GEMMs. These kernels take a range of steps (or of G's rows), so that with
# the LSTM's parts on they run in two parts on OpenBLAS's worker; a copy is a copy, whatever
# the split.
@numba.njit(nogil=True, cache=True)
def _k_steps_transposed(src, dst, lo, hi):
    """dst[t] = src[t].T for the steps t in [lo, hi) (src (T, m, n), dst (T, n, m))."""
    for t in range(lo, hi):
        a, b = src[t], dst[t]
        for i in range(a.shape[0]):
            row = a[i]
            for j in range(row.size):
                b[j, i] = row[j]


@numba.njit(nogil=True, cache=True)
def _k_gate_columns(g, gates, lo, hi):
    """gates[r, t*B:(t+1)*B] = g[t, r] for G's rows r in [lo, hi) (g (T, 4H, B), gates
    (4H, T*B))."""
    steps, batch = g.shape[0], g.shape[2]
    for r in range(lo, hi):
        dst = gates[r]
        for t in range(steps):
            src = g[t, r]
            for b in range(batch):
                dst[t * batch + b] = src[b]


# ---------------------------------------------------------------------------------------------
# The LSTM layer's whole time loop in two parts, MKL's sequential sgemm called from each (NOTE
# [LSTM time loop in two parts] in ember/ops/nn/rnn.py). float32 only. Each step is phases of
# two chunks; sync (int64, three slots a phase: the two chunks' claims, the count of chunks
# done) lets each part claim its own chunk first, then the other's if still unclaimed, and then
# wait until both are done: a part that never starts (or runs after the other) leaves its
# chunks to the one that runs, so the loop cannot deadlock.
_LOOPS = {}


@intrinsic
def _atomic_add(typingctx, addr, value):
    """Add value to the int64 at address addr atomically; returns the value before."""
    if not (isinstance(addr, types.Integer) and isinstance(value, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        word = ir.IntType(64)
        ptr = builder.inttoptr(args[0], word.as_pointer())
        v = context.cast(builder, args[1], signature.args[1], types.int64)
        return builder.atomic_rmw("add", ptr, v, "seq_cst")

    return types.int64(addr, value), codegen


@intrinsic
def _atomic_load(typingctx, addr):
    """The int64 at address addr, read atomically (acquire)."""
    if not isinstance(addr, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        ptr = builder.inttoptr(args[0], ir.IntType(64).as_pointer())
        return builder.load_atomic(ptr, "acquire", 8)

    return types.int64(addr), codegen


_X86 = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686")


@intrinsic
def _pause(typingctx):
    """x86's PAUSE in a spin loop (it yields the core's pipeline to a sibling thread); nothing
    elsewhere."""
    def codegen(context, builder, signature, args):
        if _X86:
            fnty = ir.FunctionType(ir.VoidType(), [])
            fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.x86.sse2.pause")
            builder.call(fn, [])
        return context.get_dummy_value()

    return types.void(), codegen


@numba.njit(nogil=True, cache=True)
def _claim(sync, phase, chunk):
    """Whether this part is the first to claim `chunk` (0 or 1) of `phase`."""
    return _atomic_add(sync + (3 * phase + chunk) * 8, 1) == 0


@numba.njit(nogil=True, cache=True)
def _finish(sync, phase):
    _atomic_add(sync + (3 * phase + 2) * 8, 1)


@numba.njit(nogil=True, cache=True)
def _wait(sync, phase):
    while _atomic_load(sync + (3 * phase + 2) * 8) < 2:
        _pause()


@numba.njit(nogil=True, cache=True)
def _sgemm(f, scratch, ta, m, n, k, a, lda, b, ldb, accumulate, c, ldc):
    """Row-major C (m x n, ldc) = op(A) @ B, plus C when `accumulate`, by the Fortran sgemm at
    address f (attention's _gemm_rm): op(A) is A (m x k, lda) or, when ta, the transpose of A
    stored (k x m, lda); B is (k x n, ldb). scratch: 48 bytes of this part's for the arguments."""
    args = numba.carray(as_ptr(scratch, numba.int32), (6,))
    flags = numba.carray(as_ptr(scratch + 24, numba.uint8), (2,))
    scal = numba.carray(as_ptr(scratch + (40 if accumulate else 32), numba.float32), (2,))
    scal[0] = 1.0  # alpha
    scal[1] = 1.0 if accumulate else 0.0  # beta
    _gemm_rm(f, scal, 4, flags, args, ta, False, a, lda, b, ldb, c, ldc, m, n, k)


def _lstm_fwd_loop(m, n_, k_, alpha, a, lda, b_, ldb, c, ldc, sb):
    """The forward time loop (one part of two). Slots: 1 sgemm, 2 W_hh (4H, H), 3 h0 (H, B),
    4 projection (4H, ld), 5 ld, 6 acts (T, 4H*B), 7 cs, 8 tanh_cs, 9 hs (T, H*B), 10 c0,
    11 H, 12 B, 13 summed biases (4H,) or 0, 14 order (T,) int64, 15 T, 16 sync, 17 scratch
    (2 x 64 bytes). Per step: the projection's columns of the step += W_hh @ h_prev (halves of
    the gate rows), then the cell on halves of the hidden units, as _k_lstm_step_fwd_t."""
    arg = numba.carray(as_ptr(c, numba.int64), (18,))
    mine = 0 if (a >> arg[0]) == 0 else 1
    f, w_at, h0_at, p_at, ld = arg[1], arg[2], arg[3], arg[4], arg[5]
    hidden, width, steps, sync = arg[11], arg[12], arg[15], arg[16]
    n = hidden * width
    scratch = arg[17] + 64 * mine
    order = numba.carray(as_ptr(arg[14], numba.int64), (steps,))
    proj = numba.carray(as_ptr(p_at, numba.float32), (4 * hidden, ld))
    bias = numba.carray(as_ptr(arg[13], numba.float32), (4 * hidden if arg[13] else 0,))
    for s in range(steps):
        t = order[s]
        prev = order[s - 1] if s > 0 else 0
        h_prev = h0_at if s == 0 else arg[9] + prev * n * 4
        for chunk in (mine, 1 - mine):  # the recurrent product, two halves of the gate rows
            if _claim(sync, 2 * s, chunk):
                r0 = chunk * 2 * hidden
                _sgemm(f, scratch, False, 2 * hidden, width, hidden, w_at + r0 * hidden * 4,
                       hidden, h_prev, width, True, p_at + (r0 * ld + t * width) * 4, ld)
                _finish(sync, 2 * s)
        _wait(sync, 2 * s)
        act = numba.carray(as_ptr(arg[6] + t * 4 * n * 4, numba.float32), (4 * n,))
        cc = numba.carray(as_ptr(arg[7] + t * n * 4, numba.float32), (n,))
        tanh_c = numba.carray(as_ptr(arg[8] + t * n * 4, numba.float32), (n,))
        h = numba.carray(as_ptr(arg[9] + t * n * 4, numba.float32), (n,))
        c_prev = numba.carray(as_ptr(arg[10] if s == 0 else arg[7] + prev * n * 4,
                                     numba.float32), (n,))
        for chunk in (mine, 1 - mine):  # the cell, two halves of the hidden units
            if _claim(sync, 2 * s + 1, chunk):
                u0 = chunk * (hidden // 2)
                u1 = hidden // 2 if chunk == 0 else hidden
                lo, hi = u0 * width, u1 * width
                for q in range(4):
                    for r in range(q * hidden + u0, q * hidden + u1):
                        zr = proj[r, t * width:(t + 1) * width]
                        ar = act[r * width:(r + 1) * width]
                        br = bias[r] if arg[13] else np.float32(0)
                        for j in range(width):
                            ar[j] = zr[j] + br
                for q in (0, 1, 3):  # i, f, o
                    aq = act[q * n + lo:q * n + hi]
                    for j in range(hi - lo):
                        aq[j] = vsigmoid(aq[j])
                ag = act[2 * n + lo:2 * n + hi]
                for j in range(hi - lo):
                    ag[j] = vtanh(ag[j])
                _lstm_state_span(act, c_prev, cc, tanh_c, h, lo, hi)
                _finish(sync, 2 * s + 1)
        _wait(sync, 2 * s + 1)


def _lstm_bwd_loop(m, n_, k_, alpha, a, lda, b_, ldb, c, ldc, sb):
    """The backward time loop (one part of two). Slots: 1 sgemm, 2 W_hh (4H, H), 3 dh (H, B),
    4 dc, 5 the output's gradient (T, H*B), 6 its step stride (0: one row of zeros), 7 acts,
    8 tanh_cs, 9 cs, 10 c0, 11 gate gradients (T, 4H*B), 12 H, 13 B, 14 order, 15 T, 16 sync,
    17 scratch. Per step, last first: the cell on halves of the hidden units (_lstm_bwd_span),
    then dh = W_hh^T @ g on the same halves of dh's rows."""
    arg = numba.carray(as_ptr(c, numba.int64), (18,))
    mine = 0 if (a >> arg[0]) == 0 else 1
    f, w_at, dh_at = arg[1], arg[2], arg[3]
    hidden, width, steps, sync = arg[12], arg[13], arg[15], arg[16]
    n = hidden * width
    scratch = arg[17] + 64 * mine
    order = numba.carray(as_ptr(arg[14], numba.int64), (steps,))
    dh = numba.carray(as_ptr(dh_at, numba.float32), (n,))
    dc = numba.carray(as_ptr(arg[4], numba.float32), (n,))
    one = np.float32(1)
    phase = 0
    for s in range(steps - 1, -1, -1):
        t = order[s]
        g_out = numba.carray(as_ptr(arg[5] + t * arg[6] * 4, numba.float32), (n,))
        act = numba.carray(as_ptr(arg[7] + t * 4 * n * 4, numba.float32), (4 * n,))
        tanh_c = numba.carray(as_ptr(arg[8] + t * n * 4, numba.float32), (n,))
        c_prev = numba.carray(as_ptr(arg[10] if s == 0 else arg[9] + order[s - 1] * n * 4,
                                     numba.float32), (n,))
        g_at = arg[11] + t * 4 * n * 4
        grad = numba.carray(as_ptr(g_at, numba.float32), (4 * n,))
        for chunk in (mine, 1 - mine):
            if _claim(sync, phase, chunk):
                u0 = chunk * (hidden // 2)
                u1 = hidden // 2 if chunk == 0 else hidden
                _lstm_bwd_span(dh, g_out, dc, act, tanh_c, c_prev, grad, one, u0 * width,
                               u1 * width)
                _finish(sync, phase)
        _wait(sync, phase)
        phase += 1
        for chunk in (mine, 1 - mine):
            if _claim(sync, phase, chunk):
                u0 = chunk * (hidden // 2)
                u1 = hidden // 2 if chunk == 0 else hidden
                _sgemm(f, scratch, True, u1 - u0, width, 4 * hidden, w_at + u0 * 4, hidden,
                       g_at, width, False, dh_at + u0 * width * 4, width)
                _finish(sync, phase)
        _wait(sync, phase)
        phase += 1


def lstm_loop_part(direction):
    """The compiled float32 time-loop cfunc ("fwd" or "bwd"), made on first use."""
    fn = _LOOPS.get(direction)
    if fn is None:
        from ..._blas_parts import PART
        fn = _LOOPS[direction] = numba.cfunc(PART, nopython=True, error_model="numpy",
                                             cache=True)(
            _lstm_fwd_loop if direction == "fwd" else _lstm_bwd_loop)
    return fn
