"""Ops that rearrange or select elements by position: flip/roll/rot90, repeat/tile,
repeat_interleave, tril/triu, diagonal (a view), diag/diag_embed/trace, meshgrid, block_diag,
cross, kron, vander."""
from __future__ import annotations

import warnings

import numpy as np

from .. import _dtype as D
from .._info import preserved_empty
from .._tensor import Tensor, _make, _wrap_dim
from ..autograd.function import Op
from .registry import FUNCTIONS, export, norm_dims, register, result_dtype


def _int_list(args, name):
    """Varargs or a single sequence (``f(x, 0, 1)`` / ``f(x, (0, 1))``) as a tuple of ints."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    out = []
    for a in args:
        if not isinstance(a, (int, np.integer)):
            raise TypeError(f"{name}(): expected a sequence of ints, got {type(a).__name__}")
        out.append(int(a))
    return tuple(out)


def _row_major(a):
    """``a`` laid out row-major (np.ascontiguousarray would make a 0-d array 1-D)."""
    return a if a.flags.c_contiguous else a.copy(order="C")


def _zeros(shape, dt):
    return _make(np.zeros(shape, D.to_dtype(dt).np))


# ----------------------------------------------------------------------------- flip / roll
class Flip(Op):
    """Reverse the order of elements along dims (a copy, as in torch)."""

    @staticmethod
    def forward(ctx, x, dims=()):
        ctx.dims = dims
        # laid out as the input (torch's flip keeps a permuted input's strides): NOTE [Layout of
        # a preserve_format copy]
        out = preserved_empty(x)
        np.copyto(out, np.flip(x, dims) if dims else x)
        return out

    @staticmethod
    def backward(ctx, grad):
        return Flip.apply(grad, dims=ctx.dims)  # flipping is its own inverse


def flip(input, *dims_args, dims=None):
    """Reverse the order of elements along ``dims`` (returns a copy)."""
    if dims is None and not dims_args:
        raise TypeError('flip() missing 1 required positional arguments: "dims"')
    dims = _int_list(dims_args if dims is None else (dims,), "flip")
    return Flip.apply(input, dims=norm_dims(dims, input.ndim, "flip") if dims else ())


register("flip")(flip)


def fliplr(input):
    """Flip dim 1 (left/right); input must be at least 2-D."""
    if input.ndim < 2:
        raise RuntimeError(f"fliplr: Input must be >= 2-d; got a {input.ndim}-D tensor of shape "
                           f"{list(input.shape)}.")
    return flip(input, 1)


def flipud(input):
    """Flip dim 0 (up/down); input must be at least 1-D."""
    if input.ndim < 1:
        raise RuntimeError("flipud: Input must be >= 1-d; got a 0-D tensor.")
    return flip(input, 0)


register("fliplr")(fliplr)
register("flipud")(flipud)


class Roll(Op):
    """Shift elements circularly along dims (all elements in flat order when dims is None)."""

    @staticmethod
    def forward(ctx, x, shifts=(), dims=None):
        ctx.shifts, ctx.dims = shifts, dims
        if x.size == 0:
            return x.copy()
        # row-major whatever the input's layout, as torch's
        if dims is None:
            return _row_major(np.roll(x, shifts[0]))
        return _row_major(np.roll(x, shifts, dims))

    @staticmethod
    def backward(ctx, grad):
        return Roll.apply(grad, shifts=tuple(-s for s in ctx.shifts), dims=ctx.dims)


def roll(input, shifts, dims=None):
    """Roll ``input`` by ``shifts`` along ``dims``; without dims it rolls the flattened tensor."""
    shifts = (int(shifts),) if isinstance(shifts, (int, np.integer)) else tuple(shifts)
    if dims is None or (not isinstance(dims, (int, np.integer)) and len(dims) == 0):
        if len(shifts) != 1:
            raise RuntimeError(f"roll: shifts and dimensions must align. shifts: {len(shifts)}, "
                               "dims:0")
        return Roll.apply(input, shifts=shifts, dims=None)
    dims = (int(dims),) if isinstance(dims, (int, np.integer)) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"roll: shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    dims = tuple(_wrap_dim(d, input.ndim, "roll") for d in dims)
    return Roll.apply(input, shifts=shifts, dims=dims)


register("roll")(roll)


def rot90(input, k=1, dims=(0, 1)):
    """Rotate by 90 degrees ``k`` times in the plane of ``dims``, from dims[0] towards dims[1]."""
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"rot90: expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"rot90: expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = (_wrap_dim(d, input.ndim, "rot90") for d in dims)
    if d0 == d1:
        raise RuntimeError(f"rot90: expected rotation dims to be different, but got dim0 = {d0} "
                           f"and dim1 = {d1}")
    k = int(k) % 4
    # one quarter turn from d0 towards d1: out[..i..j..] = in[..j..(n-1-i)..] read along d1
    if k == 1:
        return flip(input, d1).transpose(d0, d1)
    if k == 2:
        return flip(input, d0, d1)
    if k == 3:
        return flip(input, d0).transpose(d0, d1)
    return input.clone()


register("rot90")(rot90)


# ----------------------------------------------------------------------------- repeat / tile
class Repeat(Op):
    """np.tile: the whole tensor repeated ``sizes[i]`` times along each dim."""

    @staticmethod
    def forward(ctx, x, sizes=()):
        padded = (1,) * (len(sizes) - x.ndim) + x.shape
        ctx.in_shape, ctx.padded, ctx.sizes = x.shape, padded, sizes
        return _row_major(np.tile(x.reshape(padded), sizes))  # (np.tile of all ones copies in
        # the input's layout; torch's is row-major)

    @staticmethod
    def backward(ctx, grad):
        # view the gradient as (s0, d0, s1, d1, ...) and sum the copies (the s axes)
        inter = []
        for s, d in zip(ctx.sizes, ctx.padded):
            inter += [s, d]
        g = grad.reshape(tuple(inter))
        if ctx.sizes:
            g = g.sum(dim=tuple(range(0, 2 * len(ctx.sizes), 2)))
        return g.reshape(ctx.in_shape)


def repeat(input, *sizes, repeats=None):
    """Tensor.repeat(*sizes): tile the tensor ``sizes[i]`` times along dim i."""
    sizes = _int_list(sizes if repeats is None else (repeats,) + sizes, "repeat")
    if len(sizes) < input.ndim:
        raise RuntimeError("repeat: Number of dimensions of repeat dims can not be smaller than "
                           f"number of dimensions of tensor; got sizes {list(sizes)} for a tensor "
                           f"of shape {list(input.shape)}")
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"repeat: Trying to create tensor with negative dimension; got sizes "
                           f"{list(sizes)}")
    return Repeat.apply(input, sizes=sizes)


Tensor.repeat = repeat  # torch has no torch.repeat function, only the method


def tile(input, *dims_args, dims=None):
    """Repeat like np.tile; ``dims`` shorter than input.ndim is padded with leading ones (the
    method also takes them as ``tile(2, 2)``)."""
    dims = _int_list(dims_args if dims is None else (dims,) + dims_args, "tile")
    dims = (1,) * (input.ndim - len(dims)) + dims
    return repeat(input, dims)


register("tile")(tile)


def _repeat_counts(repeats, n, name):
    r = repeats._data if isinstance(repeats, Tensor) else np.asarray(repeats)
    if isinstance(repeats, Tensor) and r.dtype.kind not in "iu":  # (torch: no such kernel)
        raise NotImplementedError(f"{name}: repeats has to be an integer tensor; got "
                                  f"{repeats.dtype}")
    if r.ndim > 1:
        raise RuntimeError(f"{name}: repeats must be 0-dim or 1-dim tensor; got shape "
                           f"{list(r.shape)}")
    if r.size and r.min() < 0:
        raise RuntimeError(f"{name}: repeats can not be negative; got {r.tolist()}")
    if r.ndim == 1 and r.size != 1 and r.size != n:
        raise RuntimeError(f"{name}: repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {r.size} and input.size(0) = {n}")
    return np.broadcast_to(r.reshape(-1) if r.ndim else r, (n,)).astype(np.int64)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each element ``repeats`` times (per element when repeats is a tensor).

    ``repeat_interleave(r)`` with only an integer tensor returns ``[0]*r[0] + [1]*r[1] + ...``.
    """
    if repeats is None:
        counts = _repeat_counts(input, input.numel(), "repeat_interleave")
        return _make(np.repeat(np.arange(counts.size, dtype=np.int64), counts))
    if dim is None:
        input = input.reshape(-1)
        d = 0
    else:
        if input.ndim == 0:
            raise IndexError(f"repeat_interleave: Dimension specified as {dim} but tensor has no "
                             "dimensions")
        d = _wrap_dim(dim, input.ndim, "repeat_interleave")
    n = input.shape[d] if input.ndim else 1
    counts = _repeat_counts(repeats, n, "repeat_interleave")
    total = int(counts.sum())
    if output_size is not None and output_size != total:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {total} but got "
                           f"{output_size}")
    if isinstance(repeats, int) and not isinstance(repeats, bool) and input.ndim:
        # one count for all: each slice broadcast `repeats` times, all by ops (an index array
        # made here would be a value ember.compile's recorder cannot tell from data)
        if repeats == 1:
            return input.clone()
        shape = list(input.shape)
        wide = input.unsqueeze(d + 1).expand(*shape[:d + 1], repeats, *shape[d + 1:])
        out = wide.reshape(*shape[:d], n * repeats, *shape[d + 1:])
        # reshape views the expansion of an empty input or a size-1 dim: torch's is a copy
        return out.clone() if not out.numel() or np.may_share_memory(out._data, input._data) \
            else out
    index = np.repeat(np.arange(n, dtype=np.int64), counts)
    if input.ndim == 0:
        input = input.reshape(1)
    return input.index_select(d, _make(index))


register("repeat_interleave")(repeat_interleave)


# ----------------------------------------------------------------------------- triangles
class _Triangle(Op):
    """Keep the lower (tril) or upper (triu) triangle of the last two dims, zero the rest."""

    np_fn = None

    @classmethod
    def forward(cls, ctx, x, diagonal=0):
        ctx.diagonal = diagonal
        return _row_major(cls.np_fn(x, diagonal))  # (as torch's)

    @classmethod
    def backward(cls, ctx, grad):
        return cls.apply(grad, diagonal=ctx.diagonal)  # masking is self-adjoint


class Tril(_Triangle):
    np_fn = staticmethod(np.tril)


class Triu(_Triangle):
    np_fn = staticmethod(np.triu)


def _triangle(name, op):
    def fn(input, diagonal=0):
        if input.ndim < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions; got a "
                               f"{input.ndim}-D tensor of shape {list(input.shape)}")
        return op.apply(input, diagonal=int(diagonal))

    fn.__name__ = name
    fn.__doc__ = f"The {'lower' if name == 'tril' else 'upper'} triangle of the last two dims " \
                 "(elements on and below/above the ``diagonal``-th diagonal), the rest zeroed."
    return fn


register("tril", inplace=True, out_exact=True)(_triangle("tril", Tril))
register("triu", inplace=True, out_exact=True)(_triangle("triu", Triu))


def _tri_indices(name, np_fn):
    def fn(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False,
           requires_grad=False):
        if requires_grad:
            raise RuntimeError(f"{name}: only tensors of floating point and complex dtype can "
                               "require gradients; the indices are integers")
        if row < 0 or col < 0:
            raise RuntimeError(f"{name}: row and col must be non-negative; got row={row}, "
                               f"col={col}")
        dt = D.int64 if dtype is None else D.to_dtype(dtype)
        r, c = np_fn(row, offset, col)
        return _make(np.stack([r, c]).astype(dt.np).reshape(2, -1))

    fn.__name__ = name
    fn.__doc__ = f"2 x N indices (row, col) of the {name[:4]} part of a row x col matrix."
    return fn


export(_tri_indices("tril_indices", np.tril_indices))
export(_tri_indices("triu_indices", np.triu_indices))


# ----------------------------------------------------------------------------- diagonals
def _diag_dims(ndim, offset, dim1, dim2, name):
    d1 = _wrap_dim(dim1, ndim, name)
    d2 = _wrap_dim(dim2, ndim, name)
    if d1 == d2:
        raise RuntimeError(f"{name}: diagonal dimensions cannot be identical {dim1}, {dim2}")
    return int(offset), d1, d2


class Diagonal(Op):
    """The diagonal of dims (dim1, dim2) as the last dim: a view sharing input's storage."""

    view = True

    @staticmethod
    def forward(ctx, x, offset=0, dim1=0, dim2=1):
        ctx.shape, ctx.geom = x.shape, (offset, dim1, dim2)
        y = np.diagonal(x, offset, dim1, dim2)
        if x.flags.writeable:  # numpy marks diagonals read-only; torch's are writable views
            y.flags.writeable = True
        return y

    @staticmethod
    def backward(ctx, grad):
        offset, d1, d2 = ctx.geom
        return DiagonalScatter.apply(grad, shape=ctx.shape, offset=offset, dim1=d1, dim2=d2)


class DiagonalScatter(Op):
    """zeros(shape) with src written on the diagonal (offset, dim1, dim2): diagonal's adjoint."""

    @staticmethod
    def forward(ctx, src, shape=(), offset=0, dim1=0, dim2=1):
        ctx.geom = (offset, dim1, dim2)
        out = np.zeros(shape, src.dtype)
        diag = np.diagonal(out, offset, dim1, dim2)
        diag.flags.writeable = True
        diag[...] = src
        return out

    @staticmethod
    def backward(ctx, grad):
        offset, d1, d2 = ctx.geom
        return Diagonal.apply(grad, offset=offset, dim1=d1, dim2=d2)


def diagonal(input, offset=0, dim1=0, dim2=1):
    """The ``offset``-th diagonal of the (dim1, dim2) planes, appended as the last dim (a view)."""
    if input.ndim < 2:  # (dim1, dim2 = 0, 1 of a 1-D tensor: torch's dim error)
        _diag_dims(input.ndim, offset, dim1, dim2, "diagonal")
        raise RuntimeError(f"diagonal: expected a tensor with at least 2 dimensions; got shape "
                           f"{list(input.shape)}")
    offset, d1, d2 = _diag_dims(input.ndim, offset, dim1, dim2, "diagonal")
    return Diagonal.apply(input, offset=offset, dim1=d1, dim2=d2)


register("diagonal")(diagonal)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """A tensor whose (dim1, dim2) diagonals hold the last dim of ``input``; zeros elsewhere."""
    nd = input.ndim + 1
    offset, d1, d2 = _diag_dims(nd, offset, dim1, dim2, "diag_embed")
    n = (input.shape[-1] if input.ndim else 1) + abs(offset)
    rest = list(input.shape[:-1])
    shape = []
    for i in range(nd):
        shape.append(n if i in (d1, d2) else rest.pop(0))
    src = input if input.ndim else input.reshape(1)
    return DiagonalScatter.apply(src, shape=tuple(shape), offset=offset, dim1=d1, dim2=d2)


register("diag_embed")(diag_embed)


def diag(input, diagonal=0):
    """1-D input: a square matrix with it on the ``diagonal``-th diagonal; 2-D: that diagonal."""
    if input.ndim == 1:
        return diag_embed(input, diagonal, 0, 1)
    if input.ndim == 2:
        return Diagonal.apply(input, offset=int(diagonal), dim1=0, dim2=1).clone()
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")


register("diag", out_exact=True)(diag)


def diagflat(input, offset=0):
    """The flattened input on the ``offset``-th diagonal of a square matrix."""
    return diag_embed(input.reshape(-1), offset, 0, 1)


register("diagflat")(diagflat)


def trace(input):
    """Sum of the main diagonal of a 2-D tensor (integers sum as int64)."""
    if input.dtype is D.bool_:  # torch has no bool kernel for it (and says so first)
        raise NotImplementedError("trace: not implemented for bool tensors; got a bool tensor, "
                                  "expected a numeric matrix (convert with .long() first).")
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    return diagonal(input).sum()


register("trace")(trace)


# ----------------------------------------------------------------------------- grids
def _tensor_list(tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return list(tensors[0])
    return list(tensors)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids from 0-/1-D tensors (expanded views); indexing 'ij' (default) or 'xy'."""
    ts = _tensor_list(tensors)
    if indexing is None:
        warnings.warn("meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'meshgrid: indexing must be one of "xy" or "ij", but received: '
                           f"{indexing}")
    if not ts:
        return ()
    for i, t in enumerate(ts):
        if t.ndim > 1:
            raise RuntimeError(f"meshgrid: Expected 0D or 1D tensor in the tensor list but got "
                               f"a {t.ndim}-D tensor of shape {list(t.shape)} at position {i}")
        if t.dtype != ts[0].dtype:
            raise RuntimeError(f"meshgrid expects all tensors to have the same dtype; got "
                               f"{ts[0].dtype} and {t.dtype}")
    axes = list(range(len(ts)))
    if indexing == "xy" and len(ts) >= 2:
        axes[0], axes[1] = 1, 0  # 'xy': the first input varies along columns
    shape = [0] * len(ts)
    for t, ax in zip(ts, axes):
        shape[ax] = t.numel()
    out = []
    for t, ax in zip(ts, axes):
        view_shape = [1] * len(ts)
        view_shape[ax] = t.numel()
        out.append(t.reshape(view_shape).expand(shape))
    return tuple(out)


export(meshgrid)


def cartesian_prod(*tensors):
    """All combinations of the elements of 1-D tensors, one per row (like itertools.product)."""
    ts = _tensor_list(tensors)
    for t in ts:
        if t.ndim != 1:
            raise RuntimeError(f"cartesian_prod: Expect a 1D vector, but got shape "
                               f"{list(t.shape)}")
    if len(ts) == 1:
        return ts[0]
    grids = meshgrid(*ts, indexing="ij")
    return FUNCTIONS["stack"]([g.reshape(-1) for g in grids], dim=1)


export(cartesian_prod)


def _atleast(n, shape_of):
    def fn(*tensors):
        single = len(tensors) == 1 and isinstance(tensors[0], Tensor)
        ts = _tensor_list(tensors)
        out = tuple(t if t.ndim >= n else t.reshape(shape_of(t)) for t in ts)
        return out[0] if single else out

    fn.__name__ = f"atleast_{n}d"
    fn.__doc__ = f"Views of the inputs with at least {n} dimensions."
    return fn


export(_atleast(1, lambda t: (1,)))
export(_atleast(2, lambda t: (1, 1) if t.ndim == 0 else (1, t.shape[0])))
export(_atleast(3, lambda t: (1, 1, 1) if t.ndim == 0 else (
    (1, t.shape[0], 1) if t.ndim == 1 else (t.shape[0], t.shape[1], 1))))


def block_diag(*tensors):
    """A block-diagonal matrix from 0-, 1- (a row) or 2-D tensors; dtypes are promoted."""
    ts = _tensor_list(tensors)
    for i, t in enumerate(ts):
        if t.ndim > 2:
            raise RuntimeError(f"block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {i} has {t.ndim} dimensions")
    if not ts:
        return _zeros((1, 0), D.get_default_dtype())
    dt = result_dtype(*[t if t.ndim else t.reshape(1) for t in ts])
    mats = [t.reshape(1, -1) if t.ndim < 2 else t for t in ts]
    mats = [m if m.dtype == dt else m.to(dt) for m in mats]
    width = sum(m.shape[1] for m in mats)
    rows, left = [], 0
    for m in mats:
        r, c = m.shape
        parts = [_zeros((r, left), dt), m, _zeros((r, width - left - c), dt)]
        rows.append(FUNCTIONS["cat"](parts, 1))
        left += c
    return FUNCTIONS["cat"](rows, 0)


export(block_diag)


# ----------------------------------------------------------------------------- products
def _cross(input, other, dim, name):
    # as torch: the same number of dims, both of length 3 along dim (no broadcasting there),
    # the other dims broadcast
    if input.ndim != other.ndim:
        raise RuntimeError(f"{name}: inputs must have the same number of dimensions.")
    if input.dtype != other.dtype:
        raise RuntimeError(f"{name}: expected both inputs to have the same dtype; got "
                           f"{input.dtype} and {other.dtype}")
    if input.dtype is D.bool_:  # (torch: no kernel)
        raise NotImplementedError(f"{name}: not implemented for bool tensors")
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = _wrap_dim(dim, input.ndim, name)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"{name}: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[d]} and {other.shape[d]}")
    for i, (m, n) in enumerate(zip(input.shape, other.shape)):
        if m != n and m != 1 and n != 1:
            raise RuntimeError(f"{name}: The size of tensor a ({m}) must match the size of "
                               f"tensor b ({n}) at non-singleton dimension {i}")
    a, b = FUNCTIONS["broadcast_tensors"](input, other)
    a0, a1, a2 = (a.select(d, i) for i in range(3))
    b0, b1, b2 = (b.select(d, i) for i in range(3))
    comps = [a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0]
    return FUNCTIONS["stack"](comps, d)


def cross(input, other, dim=None):
    """Cross product of 3-vectors along ``dim`` (the other dims broadcasting); dim=None takes
    input's first dim of size 3 (deprecated in torch, with the same warning)."""
    if dim is None:
        warnings.warn("Using cross without specifying the dim arg is deprecated. Please either "
                      "pass the dim explicitly or simply use linalg.cross.", UserWarning,
                      stacklevel=2)
        if input.ndim != other.ndim:
            raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
        sizes3 = [i for i, s in enumerate(input.shape) if s == 3]  # input's, as torch
        if not sizes3:
            raise RuntimeError(f"cross: no dimension of size 3 in input; got shapes "
                               f"{list(input.shape)} and {list(other.shape)}")
        dim = sizes3[0]
    return _cross(input, other, dim, "linalg.cross")


register("cross")(cross)


def kron(input, other):
    """Kronecker product: blocks input[i] * other, for tensors of any (matching or not) ndim."""
    nd = max(input.ndim, other.ndim)
    sa = (1,) * (nd - input.ndim) + tuple(input.shape)
    sb = (1,) * (nd - other.ndim) + tuple(other.shape)
    # out[i*b + j] = a[i] * b[j]: interleave a's dims with b's and flatten each pair
    a = input.reshape(tuple(x for s in sa for x in (s, 1)))
    b = other.reshape(tuple(x for s in sb for x in (1, s)))
    return (a * b).reshape(tuple(x * y for x, y in zip(sa, sb)))


register("kron")(kron)


def vander(x, N=None, increasing=False):
    """Vandermonde matrix: column j is x**(N-1-j) (x**j when increasing); ints become int64."""
    if x.ndim != 1:
        raise RuntimeError(f"vander: x must be a one-dimensional tensor; got shape "
                           f"{list(x.shape)}")
    n = x.shape[0] if N is None else int(N)
    if n < 0:
        raise RuntimeError(f"vander: N must be non-negative; got {n}")
    if x.dtype.category != D.float64.category:
        x = x.to(D.int64)  # torch widens bool and integer inputs to int64
    if n == 0:
        return _zeros((x.shape[0], 0), x.dtype)
    ones = x.new_ones((x.shape[0], 1))
    if n == 1:
        powers = ones
    else:
        # cumprod of [1, x, x, ...] gives 1, x, x^2, ...; differentiable also at x == 0
        cols = FUNCTIONS["cat"]([ones, x.unsqueeze(1).expand(x.shape[0], n - 1)], 1)
        powers = cols.cumprod(1)
    return powers if increasing else flip(powers, 1)


export(vander)
