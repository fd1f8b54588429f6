"""Scaled-dot-product attention on (..., L, E) queries and (..., S, E) keys / values (... =
batch, heads): the two GEMMs of each direction go to BLAS through NumPy's batched matmul (on the
strided inputs as they are: no copies of permuted heads), and numba
fuses everything between them, the scale, the causal mask, the softmax and (backward) the
softmax's gradient, in one pass over each row of the (..., L, S) scores, without a mask array.

Causal masking is top-left aligned as in torch: query i sees keys 0..i, also when L != S (so
every row sees key 0 and no row is all masked).
"""

import math
import os

import numba
import numpy as np
from numba import types
from numba.core.extending import intrinsic

from ... import _blas_parts, _onepool
from ..._backend import reusable_empty
from ..._kernel_threads import blas_parallel_range, num_workers
from ..._onepool import _call13
from .vmath import row_dot, row_max, row_sum, vexp

_OPTS = {"nogil": True, "cache": True, "error_model": "numpy"}


@numba.njit(**_OPTS, inline="always")
def _softmax_live(row, seen):
    """row[:seen] -> its softmax in place (the row's scaled scores), row[seen:] -> 0."""
    live = row[:seen]
    m = row_max(live)
    m = m if m != -math.inf else row.dtype.type(0)  # see _shift in softmax.py
    for k in range(seen):
        live[k] = vexp(live[k] - m)
    total = row_sum(live)
    for k in range(seen):
        live[k] = live[k] / total
    row[seen:] = 0  # a slice: a loop storing the zeros ran ~4x slower on short rows


@numba.njit(**_OPTS)
def _k_attention_softmax_fwd(scores, scale, causal):
    """scores (N, L, S) -> softmax(scores * scale) per row, in place; with ``causal`` the keys
    after the row's query are set to probability 0 without being read."""
    n_batch, n_query, n_key = scores.shape
    for b in range(n_batch):
        for i in range(n_query):
            row = scores[b, i]
            seen = min(i + 1, n_key) if causal else n_key
            live = row[:seen]
            for k in range(seen):
                live[k] = live[k] * scale
            _softmax_live(row, seen)


@numba.njit(**_OPTS)
def _k_attention_softmax_bwd(grad_p, p, scale, causal):
    """grad_p (N, L, S) = dL/dP -> dL/d(q k^T) = scale * P * (dP - sum(dP * P)), in place.
    Masked keys have P = 0, so their gradient is 0 and only the seen prefix is visited."""
    n_batch, n_query, n_key = p.shape
    for b in range(n_batch):
        for i in range(n_query):
            seen = min(i + 1, n_key) if causal else n_key
            g, y = grad_p[b, i, :seen], p[b, i, :seen]
            s = row_dot(g, y)
            for k in range(seen):
                g[k] = scale * y[k] * (g[k] - s)
            grad_p[b, i, seen:] = 0


# NOTE [One query row]
# A decoding step attends one new query per head to the cached keys: (B, H, 1, E) against
# (B, H, S, E). There the two batched GEMMs are B*H dot-product loops of S*E multiply-adds
# (4 heads x ~80 keys x 64: ~20k), and NumPy's batched matmul, the buffers and the thread
# hand-off of `attention_forward` cost more than the arithmetic (14.7 us a call against torch's
# 7.2). One kernel computes scores, softmax (the same vexp) and P v per head; the results agree
# with the two-GEMM path to rounding (tests/nn/test_attention_one_query.py). The same kernel
# takes a few query rows (up to _FEW_QUERIES) while the work stays as small: a generation's
# prefill (GPT-S: 16 prompt queries against 16 keys, causal) ran the two-GEMM path at ~147 us
# a call against torch's ~35, its batched products over the heads' strided views being
# NumPy's loops rather than BLAS. Each row is computed as for one query row, causal or not.
_ONE_QUERY_MAX_WORK = 1 << 16  # B * H * L * S * E up to this: the loop; beyond, BLAS
_FEW_QUERIES = 16


@numba.njit(**_OPTS)
def _k_attention_one_query(q, k, v, scale, causal, p, out):
    """q (N, L, E), k (N, S, E), v (N, S, Ev) any strides -> p (N, L, S) = softmax(q k^T *
    scale) and out (N, L, Ev) = p v; with ``causal`` query i sees keys 0..i only (top-left),
    the others get probability 0."""
    n_batch, n_query, n_key = q.shape[0], q.shape[1], k.shape[1]
    n_value = v.shape[2]
    for b in range(n_batch):
        for i in range(n_query):
            seen = min(i + 1, n_key) if causal else n_key
            row = p[b, i]
            qb = q[b, i]
            for s in range(seen):
                row[s] = row_dot(qb, k[b, s]) * scale
            _softmax_live(row, seen)
            o = out[b, i]
            for e in range(n_value):
                o[e] = 0
            for s in range(seen):
                w = row[s]
                vb = v[b, s]
                for e in range(n_value):
                    o[e] += w * vb[e]


def attention_one_query(q, k, v, scale, causal):
    """`attention_forward` without dropout for one query row or a few (q (..., L, E), L <=
    _FEW_QUERIES) and little work (NOTE [One query row]); None when that does not apply."""
    n_query, n_key, n_embed = q.shape[-2], k.shape[-2], k.shape[-1]
    n_value = v.shape[-1]
    batch = q.shape[:-2]
    n_batch = math.prod(batch)
    if (n_query > _FEW_QUERIES
            or n_batch * n_query * n_key * max(n_embed, n_value) > _ONE_QUERY_MAX_WORK):
        return None
    # 3-D views: reshape of (..., L, E) views made by transposing heads is a view (the
    # merged axes are the batch ones); where it is not, NumPy copies, which only costs time
    q3 = q.reshape(n_batch, n_query, n_embed)
    k3 = k.reshape(n_batch, n_key, n_embed)
    v3 = v.reshape(n_batch, n_key, n_value)
    p = np.empty((n_batch, n_query, n_key), q.dtype)
    out = _out_buffer(q, n_value) if n_query > 1 else np.empty(batch + (1, n_value), q.dtype)
    out3 = out.reshape(n_batch, n_query, n_value)
    _k_attention_one_query(q3, k3, v3, q.dtype.type(scale), causal, p, out3)
    if not np.may_share_memory(out3, out):  # a reshape that copied (heads of several batches)
        out[...] = out3.reshape(out.shape)
    return out, p.reshape(batch + (n_query, n_key))


# NOTE [Causal attention in query tiles]
# With a causal mask, query i sees keys 0..i only, so about half of each (L, S) score matrix
# is masked. The GEMMs skip that half in blocks: the queries are cut into tiles of rows and
# tile lo..hi-1 is multiplied with keys 0..hi-1 only (scores, P V, dP = G V^T, dQ = dS K); the
# products whose rows are keys (dV = P^T G, dK = dS^T Q) take key tile lo..hi-1 against queries
# lo..L-1, the only queries that see it. With 4 tiles that is 10 of 16 blocks (62.5 % of the
# full products; smaller tiles make BLAS calls too small to run at speed). The masked entries
# of P and dS are zeros written by the softmax kernels, and the tiles leave out only products
# with those zeros: the results are the full products' up to the order of additions in BLAS.
# The tiles' products are smaller (32 x 64 x 32..128 for GPT-S): below OpenBLAS's threading
# bound (~2^18 multiply-adds), where the whole (128 x 64 x 128) squares ran on two OpenBLAS
# threads. Fewer FLOPs on one thread against more on two is for a quiet machine to judge:
# EMBER_CAUSAL_TILES=0 turns the tiles off (read on first use; for A/B runs).
_TILE_MIN = 32   # rows per tile at least (BLAS slows down below)
_TILES_MAX = 8   # and at most this many tiles
_tiles_on = [None]


def _tiles_enabled():
    if _tiles_on[0] is None:
        _tiles_on[0] = os.environ.get("EMBER_CAUSAL_TILES", "1").strip() != "0"
    return _tiles_on[0]


def _tiles(n_query, n_key, causal):
    """[(lo, hi, n)]: query rows lo..hi-1 see keys 0..n-1 at most (NOTE [Causal attention in
    query tiles]); one tile of everything without ``causal``, for short sequences, or with
    EMBER_CAUSAL_TILES=0."""
    if not causal or n_query < 2 * _TILE_MIN or not _tiles_enabled():
        return [(0, n_query, n_key)]
    size = max(_TILE_MIN, -(-n_query // _TILES_MAX))
    return [(lo, min(lo + size, n_query), min(lo + size, n_query, n_key))
            for lo in range(0, n_query, size)]


def attention_forward(q, k, v, scale, causal, keep=None):
    """(out, p): out = P v with P = softmax(q k^T * scale [causal]) (..., L, S), each dropped-out
    entry of P zeroed and the rest scaled by ``keep`` (an array shaped like P of 0 or 1/(1-p),
    or None). q (..., L, E), k (..., S, E), v (..., S, Ev): one float dtype, the same leading
    dims, L, S >= 1, any strides (NumPy's batched matmul takes strided matrices as they are,
    so the heads of a permuted q/k/v projection are not copied). p is C-contiguous, the softmax
    before dropout: the backward needs it."""
    if keep is None and q.shape[-2] <= _FEW_QUERIES:  # decoding: NOTE [One query row]
        res = attention_one_query(q, k, v, scale, causal)
        if res is not None:
            return res
    n_query, n_key = q.shape[-2], k.shape[-2]
    tiles = _tiles(n_query, n_key, causal)
    p = reusable_empty(q.shape[:-2] + (n_query, n_key), q.dtype)
    out = _out_buffer(q, v.shape[-1])
    scale = q.dtype.type(scale)
    if (keep is None and _by_planes(q, n_key, v.shape[-1], tiles)
            and _forward_planes(q, k, v, p, out, scale, causal, tiles)):
        return out, p  # NOTE [Attention on the one pool], NOTE [Serial plane kernels]
    k_t = np.swapaxes(k, -1, -2)

    def part(cut):
        q_, k_t_, v_, p_, out_ = (cut(a) for a in (q, k_t, v, p, out))
        for lo, hi, n in tiles:  # only the scores a query sees (NOTE [Causal attention in ...])
            np.matmul(q_[..., lo:hi, :], k_t_[..., :n], out=p_[..., lo:hi, :n])
        _k_attention_softmax_fwd(p_.reshape(-1, n_query, n_key), scale, causal)
        weights = p_ if keep is None else p_ * cut(keep)
        for lo, hi, n in tiles:
            np.matmul(weights[..., lo:hi, :n], v_[..., :n, :], out=out_[..., lo:hi, :])

    _over_batch(part, q)
    return out, p


def _out_buffer(q, n_value):
    """The uninitialised (..., L, Ev) output, laid out as torch lays out its CPU kernel's: for
    a 4-D query whose heads are interleaved in memory ((B, L, H, E) transposed to (B, H, L, E),
    as a transformer block makes them) a (B, H, L, Ev) view of a C-contiguous (B, L, H, Ev)
    array, so that the usual ``y.transpose(1, 2).reshape(B, L, H * Ev)`` is a view rather than
    a copy; C-contiguous otherwise."""
    if q.ndim == 4 and q.strides[1] < q.strides[2]:
        b, h, n_query, _ = q.shape
        return reusable_empty((b, n_query, h, n_value), q.dtype).transpose(0, 2, 1, 3)
    return reusable_empty(q.shape[:-1] + (n_value,), q.dtype)


def attention_backward(grad, q, k, v, p, scale, causal, keep=None):
    """(dq, dk, dv) of `attention_forward` given dL/dout (..., L, Ev), any strides."""
    n_query, n_key = p.shape[-2], p.shape[-1]
    tiles = _tiles(n_query, n_key, causal)
    # the products with the keys as rows (dV, dK) take key tile lo..n-1 against the queries
    # lo..L-1, the only ones that see it (NOTE [Causal attention in query tiles])
    key_tiles = [(lo, n) for lo, _, n in tiles if n > lo]
    joint = _pieces_like(q, k, v, np.result_type(p, k, grad))
    if joint is not None:  # NOTE [Gradients of q, k, v as pieces of one buffer]
        dq, dk, dv = joint
    else:  # from the reuse pool (NOTE [Reused buffers] in _backend.py)
        dv = reusable_empty(v.shape[:-1] + grad.shape[-1:], grad.dtype)
        dq = reusable_empty(q.shape, np.result_type(p, k))
        dk = reusable_empty(k.shape, np.result_type(p, q))
    scale = q.dtype.type(scale)
    if (keep is None and _by_planes(q, n_key, v.shape[-1], tiles)
            and _backward_planes(grad, q, k, v, p, dq, dk, dv, scale, causal, tiles,
                                 key_tiles)):
        return dq, dk, dv  # NOTE [Attention on the one pool], NOTE [Serial plane kernels]
    dp = reusable_empty(p.shape, p.dtype)
    v_t = np.swapaxes(v, -1, -2)

    def part(cut):
        g_, q_, k_, v_t_, p_, dq_, dk_, dv_, dp_ = (
            cut(a) for a in (grad, q, k, v_t, p, dq, dk, dv, dp))
        if len(tiles) > 1 and n_query < n_key:  # keys after the last query: nobody sees them
            dv_[..., n_query:, :] = 0
            dk_[..., n_query:, :] = 0
        weights = p_ if keep is None else p_ * cut(keep)
        for lo, n in key_tiles:
            np.matmul(np.swapaxes(weights[..., lo:, lo:n], -1, -2), g_[..., lo:, :],
                      out=dv_[..., lo:n, :])
        for lo, hi, n in tiles:
            np.matmul(g_[..., lo:hi, :], v_t_[..., :n], out=dp_[..., lo:hi, :n])
        if keep is not None:
            dp_ *= cut(keep)
        _k_attention_softmax_bwd(dp_.reshape(-1, n_query, n_key),
                                 p_.reshape(-1, n_query, n_key), scale, causal)
        for lo, hi, n in tiles:
            np.matmul(dp_[..., lo:hi, :n], k_[..., :n, :], out=dq_[..., lo:hi, :])
        for lo, n in key_tiles:
            np.matmul(np.swapaxes(dp_[..., lo:, lo:n], -1, -2), q_[..., lo:, :],
                      out=dk_[..., lo:n, :])

    _over_batch(part, q)
    return dq, dk, dv


def _over_batch(part, q):
    """part(cut) once over everything (cut = identity), or - with the kernel threads on and a
    batch axis of 2 or more entries with only size-1 axes before it - over parts of that axis
    on the kernel threads (cut(a) = a's part), BLAS on one thread per part (NOTE [Small GEMMs
    on the kernel threads] in _kernel_threads.py). One hand-off per call: each part runs all
    of its products and its softmax rows. The parts of P stay C-contiguous."""
    axis = next((i for i in range(q.ndim - 2) if q.shape[i] != 1), None)
    if axis is None or q.shape[axis] < 2 or num_workers() < 2:
        part(_whole)
        return
    lead = (slice(None),) * axis
    blas_parallel_range(lambda lo, hi: part(lambda a: a[lead + (slice(lo, hi),)]),
                        q.shape[axis], 1)


def _whole(a):
    return a


# NOTE [Gradients of q, k, v as pieces of one buffer]
# A transformer block takes q, k, v as pieces of one projection (qkv.view(B, T, 3, H, E)
# .permute(2, 0, 3, 1, 4).unbind(0)); unbind's backward writes the three gradients side by side
# into one buffer laid out like that projection (NOTE [Pieces of one tensor] in ops/views.py),
# a copy of 3 x (B, H, T, E) elements per block. When q, k and v are such pieces - views of one
# C-contiguous array holding exactly the three, with one layout - the backward writes dq, dk,
# dv straight into a new buffer laid out like that array, at the same places; unbind's backward
# finds its gradients already in place and returns the buffer without copying.


def _pieces_like(q, k, v, dtype):
    """(dq, dk, dv) as views of one new (reused) buffer laid out like the one array q, k and v
    are pieces of, or None when they are not such pieces (see the NOTE above). Pieces means:
    the three stacked at offsets o, o + d, o + 2d (in any order) cover that array exactly once,
    so the views never overlap (q, k, v may not be one piece twice, nor overlapping slices)."""
    base = q.base
    if (base is None or k.base is not base or v.base is not base or base.dtype != dtype
            or not base.flags.c_contiguous or q.dtype != dtype or q.size == 0
            or base.size != 3 * q.size or not q.shape == k.shape == v.shape
            or not q.strides == k.strides == v.strides):
        return None
    start = base.ctypes.data
    offsets = sorted(a.ctypes.data - start for a in (q, k, v))
    step = offsets[1] - offsets[0]
    if offsets[0] != 0 or step <= 0 or offsets[2] - offsets[1] != step:
        return None
    # (3,) + q.shape with strides (step,) + q.strides must be C-contiguous up to the order of
    # its axes: each stride the product of the sizes of the axes below it
    expected = base.itemsize
    for stride, size in sorted(zip((step,) + q.strides, (3,) + q.shape, strict=True)):
        if size == 1:
            continue
        if stride != expected:
            return None
        expected *= size
    buf = reusable_empty(base.shape, dtype)
    return tuple(np.ndarray(a.shape, dtype, buffer=buf, offset=a.ctypes.data - start,
                            strides=a.strides) for a in (q, k, v))


# NOTE [Attention on the one pool]
# With the one pool on (NOTE [One pool] in ember/_onepool.py) OpenBLAS runs one thread, so
# NumPy's batched matmuls above would leave the second core idle and the softmax kernels are
# serial. Instead one parallel loop over the (batch x heads) planes runs everything a plane
# needs - the tiles' GEMMs (sgemm/dgemm from scipy's BLAS table at one thread, the strided q/k/v
# as they are), the softmax rows, and in the backward dV, dP, the softmax gradient, dQ, dK - so
# a forward or a backward is one pool launch. A plane is computed by one thread in one fixed
# order, so the numbers do not depend on the thread count; they are the NumPy path's up to the
# order of additions inside BLAS. Used for float32/float64 without dropout when every matrix has
# a unit-stride last axis; the NumPy path above otherwise.
_POOL_MIN_WORK = 1 << 17  # planes * L * S * E from which the parallel version runs


@numba.njit(nogil=True, cache=True)
def _gemm_rm(f, scal, item, flags, args, ta, tb, a, lda, b, ldb, c, ldc, m, n, k):
    """Row-major c (m x n, leading dim ldc) = op(a) @ op(b) through the column-major BLAS
    routine at address f (sgemm/dgemm, _onepool._routine): c^T = op(b)^T op(a)^T. a, b, c are
    addresses; ta/tb say the operand is stored transposed (its rows are op's columns); scal
    holds alpha = 1, beta = 0; flags/args are scratch."""
    if m <= 0 or n <= 0:
        return
    u = np.uint64
    flags[0] = 84 if tb else 78  # 'T' / 'N'
    flags[1] = 84 if ta else 78
    args[0] = n
    args[1] = m
    args[2] = k
    args[3] = ldb
    args[4] = lda
    args[5] = ldc
    base = args.ctypes.data
    fp = flags.ctypes.data
    sp = scal.ctypes.data
    _call13(f, (u(fp), u(fp + 1), u(base), u(base + 4), u(base + 8), u(sp), u(b), u(base + 12),
                u(a), u(base + 16), u(sp + item), u(c), u(base + 20)))


# NOTE [Products against a transposed plane]
# Q K^T (forward scores) and G V^T (backward dP) contract over the last, unit-stride axis of
# both operands. OpenBLAS's sgemm runs that layout (its "TN" in column-major terms) at ~60 % of
# the rate of the plain layout on GPT-S's tiles (32 x 32..128 x 64, one thread: 0.66 against
# 0.39 ms for the 32 planes' scores), so the plane kernels first copy the plane's K (or V)
# transposed into a small scratch array (S x E -> E x S, 8 x 8 blocks, ~2.5 us for 128 x 64)
# and multiply by that as stored. The sums are the same products added in BLAS's order for the
# other layout: equal up to float rounding.


@intrinsic
def _address_ptr(typingctx, address):
    """The integer `address` as a void pointer (for numba.carray over a plane of q/k/v)."""
    def codegen(context, builder, sig, args):
        return builder.inttoptr(args[0], context.get_value_type(types.voidptr))
    return types.voidptr(address), codegen


@numba.njit(nogil=True, cache=True)
def _transpose_plane(address, ld, rows, cols, out):
    """out[:cols, :rows] = the (rows x cols) matrix at `address` (row stride ld elements)
    transposed, in 8 x 8 blocks (NOTE [Products against a transposed plane])."""
    src = numba.carray(_address_ptr(address), (rows, ld), out.dtype)
    r8, c8 = rows - rows % 8, cols - cols % 8
    for r0 in range(0, r8, 8):
        for c0 in range(0, c8, 8):
            a = src[r0:r0 + 8, c0:c0 + 8]
            b = out[c0:c0 + 8, r0:r0 + 8]
            for c in range(8):
                for r in range(8):
                    b[c, r] = a[r, c]
        for r in range(r0, r0 + 8):
            for c in range(c8, cols):
                out[c, r] = src[r, c]
    for r in range(r8, rows):
        for c in range(cols):
            out[c, r] = src[r, c]


@_onepool.twin(min_work=_POOL_MIN_WORK, error_model="numpy")
def _k_attention_fwd_planes(f, scal, item, q, q_off, ldq, k, k_off, ldk, v, v_off, ldv, o, o_off,
                            ldo, p, n_embed, n_value, scale, causal, tiles):
    """Per plane t: P = softmax(Q K^T * scale [causal]), O = P V over the query tiles (rows of
    `tiles`: lo, hi, n). q/k/v/o are base addresses, *_off byte offsets of each plane, ld* row
    strides in elements; p is the C-contiguous (planes, L, S) probabilities."""
    n_planes, n_query, n_key = p.shape
    n_seen = tiles[:, 2].max()  # the keys any query sees
    for t in numba.prange(n_planes):
        flags = np.empty(2, np.uint8)
        args = np.empty(6, np.int32)
        k_t = np.empty((n_embed, n_seen), p.dtype)  # NOTE [Products against a transposed plane]
        _transpose_plane(k + k_off[t], ldk, n_seen, n_embed, k_t)
        pp = p[t]
        p_at = pp.ctypes.data
        for j in range(tiles.shape[0]):
            lo, hi, n = tiles[j, 0], tiles[j, 1], tiles[j, 2]
            _gemm_rm(f, scal, item, flags, args, False, False, q + q_off[t] + lo * ldq * item,
                     ldq, k_t.ctypes.data, n_seen, p_at + lo * n_key * item, n_key, hi - lo, n,
                     n_embed)
        for i in range(n_query):
            row = pp[i]
            seen = min(i + 1, n_key) if causal else n_key
            live = row[:seen]
            for s in range(seen):
                live[s] = live[s] * scale
            _softmax_live(row, seen)
        for j in range(tiles.shape[0]):
            lo, hi, n = tiles[j, 0], tiles[j, 1], tiles[j, 2]
            _gemm_rm(f, scal, item, flags, args, False, False, p_at + lo * n_key * item, n_key,
                     v + v_off[t], ldv, o + o_off[t] + lo * ldo * item, ldo, hi - lo, n_value,
                     n)


@_onepool.twin(min_work=_POOL_MIN_WORK, error_model="numpy")
def _k_attention_bwd_planes(f, scal, item, g, g_off, ldg, q, q_off, ldq, k, k_off, ldk, v, v_off,
                            ldv, dq, dq_off, lddq, dk, dk_off, lddk, dv, dv_off, lddv, p,
                            n_embed, n_value, scale, causal, tiles, key_tiles):
    """The backward of `_k_attention_fwd_planes` per plane: dV = P^T G and dK = dS^T Q over the
    key tiles (lo, n: keys lo..n-1 against queries lo..L-1), dP = G V^T and dQ = dS K over the
    query tiles, dS = scale * P * (dP - sum(dP * P)) per row. dP and dS live in one (L, S)
    scratch array per plane, which stays in cache from the dP products to the dQ and dK ones
    (a (planes, L, S) array of them cost ~0.8 ms per GPT-S call in a training step, most of it
    in memory traffic). Arguments as in the forward."""
    n_planes, n_query, n_key = p.shape
    n_seen = tiles[:, 2].max()
    for t in numba.prange(n_planes):
        flags = np.empty(2, np.uint8)
        args = np.empty(6, np.int32)
        v_t = np.empty((n_value, n_seen), p.dtype)  # NOTE [Products against a transposed plane]
        _transpose_plane(v + v_off[t], ldv, n_seen, n_value, v_t)
        pp = p[t]
        # NOTE [Scratch arrays outlive their addresses]: numba frees an array after the last
        # statement that names it, so each BLAS call takes dpp.ctypes.data itself; an address
        # saved once up front let dpp be freed after the softmax rows, and the dQ / dK products
        # read freed memory (garbage in dK whenever another thread's malloc took it first)
        dpp = np.empty((n_query, n_key), p.dtype)
        p_at = pp.ctypes.data  # a view of the caller's p: its memory outlives the kernel
        row_bytes = n_key * item
        for j in range(key_tiles.shape[0]):
            lo, n = key_tiles[j, 0], key_tiles[j, 1]
            _gemm_rm(f, scal, item, flags, args, True, False, p_at + lo * row_bytes + lo * item,
                     n_key, g + g_off[t] + lo * ldg * item, ldg,
                     dv + dv_off[t] + lo * lddv * item, lddv, n - lo, n_value, n_query - lo)
        for j in range(tiles.shape[0]):
            lo, hi, n = tiles[j, 0], tiles[j, 1], tiles[j, 2]
            _gemm_rm(f, scal, item, flags, args, False, False, g + g_off[t] + lo * ldg * item,
                     ldg, v_t.ctypes.data, n_seen, dpp.ctypes.data + lo * row_bytes, n_key,
                     hi - lo, n, n_value)
        for i in range(n_query):
            seen = min(i + 1, n_key) if causal else n_key
            gr, y = dpp[i, :seen], pp[i, :seen]
            s = row_dot(gr, y)
            for c in range(seen):
                gr[c] = scale * y[c] * (gr[c] - s)
            dpp[i, seen:] = 0
        for j in range(tiles.shape[0]):
            lo, hi, n = tiles[j, 0], tiles[j, 1], tiles[j, 2]
            _gemm_rm(f, scal, item, flags, args, False, False, dpp.ctypes.data + lo * row_bytes,
                     n_key, k + k_off[t], ldk, dq + dq_off[t] + lo * lddq * item, lddq, hi - lo,
                     n_embed, n)
        for j in range(key_tiles.shape[0]):
            lo, n = key_tiles[j, 0], key_tiles[j, 1]
            _gemm_rm(f, scal, item, flags, args, True, False,
                     dpp.ctypes.data + lo * row_bytes + lo * item,
                     n_key, q + q_off[t] + lo * ldq * item, ldq,
                     dk + dk_off[t] + lo * lddk * item, lddk, n - lo, n_embed, n_query - lo)


def _blas_matrix(a):
    """(base address, byte offsets of its planes (int64), row stride in elements) of an array
    whose last axis is unit-stride, for the plane kernels; None for any other layout."""
    item = a.itemsize
    rows, cols = a.shape[-2], a.shape[-1]
    if (a.strides[-1] != item and cols != 1) or a.strides[-2] % item:
        return None
    ld = a.strides[-2] // item
    if rows > 1 and ld < cols:
        return None
    return a.ctypes.data, _plane_offsets(a.shape[:-2], a.strides[:-2]), max(ld, cols, 1)


_OFFSETS = {}  # (leading shape, leading strides) -> read-only byte offsets of the planes


def _plane_offsets(shape, strides):
    """The byte offsets of the planes of an array with these leading dims, in C order; cached
    (a model calls attention with the same few layouts every step: ~9 us a call otherwise)."""
    key = (shape, strides)
    off = _OFFSETS.get(key)
    if off is None:
        off = np.zeros(1, np.int64)
        for size, stride in zip(shape, strides, strict=True):
            off = (off[:, None] + np.arange(size, dtype=np.int64) * stride).reshape(-1)
        off.flags.writeable = False
        if len(_OFFSETS) > 256:
            _OFFSETS.clear()
        _OFFSETS[key] = off
    return off


def _pool_work(q, n_key):
    """planes * L * S * E of an attention call: the work the plane kernels pick by."""
    return q.size * n_key


# NOTE [Serial plane kernels]
# With the one pool off, the plane kernels above still beat the NumPy path on one thread when
# every product of the tiles runs on one OpenBLAS thread anyway: one call runs all of a plane's
# work while its (L, S) block of P is in cache (scores, softmax rows, P V; backward dV, dP, the
# softmax gradient, dQ, dK) instead of one NumPy batched matmul per tile over all planes, each
# with its own per-plane dispatch. GPT-S (8 x 4 planes, L = S = 128, E = 64, tiles of 32 rows),
# one thread, CPU time per attention call, busy machine: forward 2.3-2.5 -> 2.0-2.1 ms, backward
# 3.9-4.3 -> 3.1-3.2 ms; the results are equal (the same BLAS kernels, the same row kernels).
# The plane kernels call scipy's BLAS, a second OpenBLAS beside NumPy's: used serially only
# while each product stays within OpenBLAS's one-thread bound (m * n * k <= 2^18 multiply-adds,
# SMALL_GEMM[0] in _kernel_threads.py), so that its thread pool never wakes; bigger products
# (long unmasked sequences) keep the NumPy path, whose batched matmuls run on NumPy's threads.
# With the kernel threads on (EMBER_KERNEL_THREADS=2, default off) the planes are split over
# them, each part one serial kernel call (`_over_planes`), as `_over_batch` splits the NumPy path;
# with the parts on (user "attention" of ember/_blas_parts.py) they go to OpenBLAS's worker in
# the same way. Each plane is one thread's whole work either way: the serial results bit for bit.
# EMBER_ATTENTION_PLANES=0 turns the serial use off (read on first use; for A/B runs).
_planes_on = [None]


def _serial_planes_enabled():
    if _planes_on[0] is None:
        _planes_on[0] = os.environ.get("EMBER_ATTENTION_PLANES", "1").strip() != "0"
    return _planes_on[0]


def _largest_product(n_query, n_key, n_width, tiles):
    """The most multiply-adds of one BLAS call of the plane kernels for these tiles (n_width:
    the larger of E and Ev): a query tile's rows against its keys, or a key tile against the
    queries that see it."""
    rows = max(hi - lo for lo, hi, _ in tiles)
    keys = max(n for _, _, n in tiles)
    key_rows = max((n - lo for lo, _, n in tiles if n > lo), default=0)
    return max(rows * keys, key_rows * n_query) * n_width


def _by_planes(q, n_key, n_value, tiles):
    """Whether the plane kernels compute this call: on the one pool, or serially under NOTE
    [Serial plane kernels]."""
    if q.dtype not in _PLANE_DTYPES:
        return False
    if _onepool.enabled():
        return True
    return (_serial_planes_enabled()
            and _largest_product(q.shape[-2], n_key, max(q.shape[-1], n_value), tiles)
            <= _SERIAL_MAX_MACS)


_SERIAL_MAX_MACS = 1 << 18  # OpenBLAS runs a product this small on the calling thread


_PLANE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _forward_planes(q, k, v, p, out, scale, causal, tiles):
    """`attention_forward`'s products and softmax by the plane kernel (NOTE [Attention on the
    one pool]); False (nothing done) when a layout does not suit BLAS."""
    mats = [_blas_matrix(a) for a in (q, k, v, out)]
    if any(m is None for m in mats) or q.dtype != k.dtype or q.dtype != v.dtype:
        return False
    (qa, qo, ldq), (ka, ko, ldk), (va, vo, ldv), (oa, oo, ldo) = mats
    n_query, n_key = p.shape[-2], p.shape[-1]
    kernel = _k_attention_fwd_planes.pick(_pool_work(q, n_key))
    p3, tiles_a = p.reshape(-1, n_query, n_key), np.array(tiles, np.int64).reshape(-1, 3)

    def run(lo, hi):
        kernel(_onepool._routine(q.dtype), _onepool._SCALARS[q.dtype], q.itemsize, qa,
               qo[lo:hi], ldq, ka, ko[lo:hi], ldk, va, vo[lo:hi], ldv, oa, oo[lo:hi], ldo,
               p3[lo:hi], q.shape[-1], v.shape[-1], scale, causal, tiles_a)

    _over_planes(run, p3.shape[0])
    return True


def _over_planes(run, n_planes):
    """run(lo, hi) over planes lo..hi-1: whole on the one pool (its kernel is parallel); in
    parts on OpenBLAS's worker when user "attention" of the parts is on, else on the kernel
    threads when there are two (EMBER_KERNEL_THREADS or ember.set_num_threads), else whole
    (NOTE [Serial plane kernels])."""
    if _onepool.enabled() or n_planes < 2:
        run(0, n_planes)
    elif _blas_parts.on("attention"):
        # one run of planes per thread: NOTE [One Python part per thread] in norm.py
        _blas_parts.run_ranges(run, n_planes)
    elif num_workers() < 2:
        run(0, n_planes)
    else:
        blas_parallel_range(run, n_planes, 1)


def _backward_planes(grad, q, k, v, p, dq, dk, dv, scale, causal, tiles, key_tiles):
    """`attention_backward`'s work by the plane kernel (NOTE [Attention on the one pool]);
    False (nothing done) when a layout or dtype does not suit it."""
    arrays = (grad, q, k, v, dq, dk, dv)
    if any(a.dtype != q.dtype for a in arrays + (p,)):
        return False
    mats = [_blas_matrix(a) for a in arrays]
    if any(m is None for m in mats):
        return False
    n_query, n_key = p.shape[-2], p.shape[-1]
    if len(tiles) > 1 and n_query < n_key:  # keys after the last query: nobody sees them
        dv[..., n_query:, :] = 0
        dk[..., n_query:, :] = 0
    kernel = _k_attention_bwd_planes.pick(_pool_work(q, n_key))
    p3 = p.reshape(-1, n_query, n_key)
    tiles_a = np.array(tiles, np.int64).reshape(-1, 3)
    key_tiles_a = np.array(key_tiles, np.int64).reshape(-1, 2)

    def run(lo, hi):
        flat = [x for base, off, ld in mats for x in (base, off[lo:hi], ld)]
        kernel(_onepool._routine(q.dtype), _onepool._SCALARS[q.dtype], q.itemsize, *flat,
               p3[lo:hi], q.shape[-1], v.shape[-1], scale, causal, tiles_a,
               key_tiles_a)

    _over_planes(run, p3.shape[0])
    return True
