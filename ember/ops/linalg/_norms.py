"""Products and norms of ``ember.linalg``: cross, vecdot, multi_dot, diagonal, matmul,
vector_norm, matrix_norm, norm, and the legacy ``ember.norm`` / ``ember.dist``.
"""
from __future__ import annotations

import math

import numpy as np

from ... import _dtype as D
from ..._tensor import _make
from ...autograd.function import Op
from ..rearrange import _cross
from ..rearrange import diagonal as _diagonal
from ..registry import FUNCTIONS, norm_dims
from ._common import _TORCH_NAMES, _check_float, _out, linalg_op
from ._decomp import svdvals


@linalg_op
def cross(input, other, *, dim=-1, out=None):
    """Cross product of 3-vectors along ``dim`` (default -1); inputs of one ndim whose other
    dims broadcast."""
    return _out(_cross(input, other, dim, "linalg.cross"), out, "linalg.cross")


@linalg_op
def vecdot(x, y, *, dim=-1, out=None):
    """Dot product of vectors along ``dim``, broadcasting the other dims; for complex x it is
    sum(conj(x) * y), as torch (conj of a real tensor is the tensor itself)."""
    for t in (x, y):
        if not (t.is_floating_point() or t.is_complex()):
            raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as "
                               f"input. Got {t.dtype}")
    if x.dtype != y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x "
                           f"of type {x.dtype} and y of type {y.dtype} instead")
    n = x.shape[dim] if -x.ndim <= dim < x.ndim else 1
    m = y.shape[dim] if -y.ndim <= dim < y.ndim else 1
    if n != m and n != 1 and m != 1:
        raise RuntimeError(f"linalg.vecdot: the vectors along dim {dim} differ in length; got x "
                           f"{list(x.shape)} and y {list(y.shape)}")
    return _out((x.conj() * y).sum(dim), out, "linalg.vecdot")


@linalg_op
def multi_dot(tensors, *, out=None):
    """Product of a chain of matrices (first/last may be 1-D), in the cheapest order."""
    ts = list(tensors)
    if len(ts) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(ts)}")
    for i, t in enumerate(ts):
        ok = t.ndim in (1, 2) if i in (0, len(ts) - 1) else t.ndim == 2
        if not ok:
            which = "first" if i == 0 else "last" if i == len(ts) - 1 else f"tensor {i}"
            need = "1D or 2D" if i in (0, len(ts) - 1) else "2D"
            raise RuntimeError(f"multi_dot(): {'the ' if i in (0, len(ts) - 1) else ''}{which}"
                               f"{' tensor' if i in (0, len(ts) - 1) else ''} must be {need} but "
                               f"got {t.ndim}D")
    for i in range(len(ts) - 1):
        inner, nxt = ts[i].shape[-1], ts[i + 1].shape[0]
        if inner != nxt:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(ts[i].shape)} and {list(ts[i + 1].shape)} cannot be "
                               f"multiplied; expected {inner} == {nxt}")
    first_vec, last_vec = ts[0].ndim == 1, ts[-1].ndim == 1
    if first_vec:
        ts[0] = ts[0].unsqueeze(0)
    if last_vec:
        ts[-1] = ts[-1].unsqueeze(-1)
    res = _chain(ts)
    if first_vec:
        res = res.squeeze(0)
    if last_vec:
        res = res.squeeze(-1)
    return _out(res, out, "linalg.multi_dot")


def _chain(ts):
    """Matrix-chain order by dynamic programming on the multiplication count."""
    dims = [ts[0].shape[0]] + [t.shape[1] for t in ts]
    k = len(ts)
    cost = [[0] * k for _ in range(k)]
    split = [[0] * k for _ in range(k)]
    for length in range(1, k):
        for i in range(k - length):
            j = i + length
            cost[i][j] = math.inf
            for s in range(i, j):
                c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, s

    def build(i, j):
        if i == j:
            return ts[i]
        s = split[i][j]
        return build(i, s) @ build(s + 1, j)

    return build(0, k - 1)


@linalg_op
def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonal of the last two dims (by default) as a view."""
    return _diagonal(A, offset, dim1, dim2)


@linalg_op
def matmul(input, other, *, out=None):
    return FUNCTIONS["matmul"](input, other, out=out)


# ----------------------------------------------------------------------------- norms

def _unreduced(ctx, x, y, grad):
    """A norm's value and incoming gradient with its reduced dims kept (size 1), so that they
    broadcast against x."""
    if not ctx.keepdim and ctx.dims:
        kept = tuple(1 if i in ctx.dims else n for i, n in enumerate(x.shape))
        return y.reshape(kept), grad.reshape(kept)
    return y, grad

class PNorm(Op):
    """(sum |x|^p)^(1/p) over dims for a finite p other than 0 and 1 (p = 2 is the Euclidean
    norm). float16/bfloat16 inputs are computed in float32 and rounded once, as torch's (NOTE
    [Half-precision accumulation] in ops/reduce.py).

    d/dx = sign(x) |x|^(p-1) / norm^(p-1); 0 where the norm is 0 (torch's subgradient), and for
    p < 1 (negative p too) also where x is 0 (where |x|^(p-1) is infinite), as torch."""

    @staticmethod
    def forward(ctx, x, p=2.0, dims=(), keepdim=False):
        ctx.p, ctx.dims, ctx.keepdim = p, dims, keepdim
        half = x.dtype == np.float16 or x.dtype == D.bfloat16.np
        x_in, x = x, (x.astype(np.float32) if half else x)
        with np.errstate(over="ignore", divide="ignore"):
            if p == 2 and x.dtype.kind == "c":
                y = np.sqrt(np.sum((x * x.conj()).real, axis=dims, keepdims=keepdim))
            elif p == 2:
                y = np.sqrt(np.sum(x * x, axis=dims, keepdims=keepdim))
            else:
                y = np.sum(np.abs(x) ** p, axis=dims, keepdims=keepdim) ** (1.0 / p)
        y = np.asarray(y, x_in.real.dtype)
        ctx.save_for_backward(x_in, y)
        return y

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        y, grad = _unreduced(ctx, x, y, grad)
        zero = y == 0
        safe = y.masked_fill(zero, 1.0)
        if ctx.p == 2:
            scale = x / safe
        else:  # sgn is sign for real x and x/|x| for complex x
            scale = x.sgn() * x.abs() ** (ctx.p - 1) / safe ** (ctx.p - 1)
            if ctx.p < 1:
                scale = scale.masked_fill(x == 0, 0.0)
        return (grad * scale).masked_fill(zero, 0.0)


class MaxNorm(Op):
    """max |x| (``smallest``: min |x|) over dims, the inf / -inf vector norm.

    torch's derivative: the gradient is shared by the entries where |x| equals the norm, with
    the sign of x; none of them does where the norm is NaN, so the gradient is 0 there (amax's
    own gradient is NaN)."""

    @staticmethod
    def forward(ctx, x, dims=(), keepdim=False, smallest=False):
        ctx.dims, ctx.keepdim = dims, keepdim
        a = np.abs(x)
        y = np.asarray((a.min if smallest else a.max)(axis=dims, keepdims=keepdim))
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        y, grad = _unreduced(ctx, x, y, grad)
        hit = x.abs() == y
        count = hit.to(grad.dtype).sum(ctx.dims, keepdim=True)
        share = grad * x.sgn() / count.masked_fill(count == 0, 1.0)
        return share.masked_fill(~hit, 0.0), None, None, None


def _ord_name(ord):
    return "inf" if ord == math.inf else "-inf" if ord == -math.inf else f"{ord:g}"


@linalg_op
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """Vector ``ord``-norm over ``dim`` (all elements by default): inf/-inf take max/min |x|,
    0 counts non-zeros, other p give (sum |x|^p)^(1/p)."""
    name = "linalg.vector_norm"
    _check_float(x, name, lapack=False)
    if isinstance(ord, str):  # TypeError, as torch's argument parser ('fro' is matrix_norm's)
        raise TypeError(f"{name}(): argument 'ord' must be a number, not str ('{ord}'); the "
                        "'fro' and 'nuc' norms are linalg.matrix_norm's or linalg.norm's")
    if dtype is not None:
        dt = D.to_dtype(dtype)
        if D.promote_types(x.dtype, dt) != dt:
            raise RuntimeError(f"{name}: the dtype of the input ({_TORCH_NAMES[x.dtype]}) should "
                               f"be convertible without narrowing to the specified dtype "
                               f"({_TORCH_NAMES[dt]})")
        x = x.to(dt)
    dims = norm_dims(dim, x.ndim, name)
    ord = float(ord)
    empty = x.ndim and any(x.shape[d] == 0 for d in dims)
    if empty and (ord < 0 or ord == math.inf):
        raise RuntimeError(f"{name} cannot compute the {_ord_name(ord)} norm on an empty tensor "
                           "because the operation does not have an identity")
    a = x.abs()
    if not dims:  # a 0-d input: every norm is |x| (except ord 0, which counts)
        res = ZeroNorm.apply(x, dims, keepdim) if ord == 0 else a
    elif ord == math.inf or ord == -math.inf:
        res = MaxNorm.apply(x, dims, keepdim, ord < 0)
    elif ord == 0:
        res = ZeroNorm.apply(x, dims, keepdim)
    elif ord == 1:
        res = a.sum(dims, keepdim=keepdim)
    else:
        res = PNorm.apply(x, p=ord, dims=dims, keepdim=keepdim)
    return _out(res, out, name)


class ZeroNorm(Op):
    """The ord-0 "norm": the count of non-zero entries, in x's dtype. Piecewise constant: its
    result requires grad, as torch's, and its backward gives no gradient (None: x.grad stays
    None, as under torch)."""

    @staticmethod
    def forward(ctx, x, dims, keepdim):
        return np.asarray(np.count_nonzero(x, axis=dims, keepdims=keepdim), x.real.dtype)

    @staticmethod
    def backward(ctx, grad):
        return None, None, None


def _two_dims(A, dim, name):
    dim = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
    if len(dim) != 2:
        raise RuntimeError(f"{name}: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
    d0, d1 = (norm_dims(d, A.ndim, name)[0] for d in dim)
    if d0 == d1:
        raise RuntimeError(f"{name}: dims must be different. Got ({dim[0]}, {dim[1]})")
    return d0, d1


@linalg_op
def matrix_norm(input, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """Matrix norm over the two dims in ``dim``: 'fro', 'nuc', 2/-2 (largest/smallest singular
    value), 1/-1 (max/min column abs-sum), inf/-inf (max/min row abs-sum)."""
    A = input  # torch's parser name (see NOTE [linalg parameter names])
    name = "linalg.matrix_norm"
    _check_float(A, name, lapack=False)
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    d0, d1 = _two_dims(A, dim, name)
    if dtype is not None:
        A = A.to(dtype)
    if ord == "fro":
        return _out(vector_norm(A, 2, (d0, d1), keepdim), out, name)
    if ord not in ("nuc", 2, -2, 1, -1, math.inf, -math.inf):
        raise RuntimeError(f"{name}: Order {ord} not supported.")
    if A.numel() == 0:
        # the minimum-type orders take a min over an empty set where torch's amin raises
        picked = d1 if ord == -1 else d0
        if ord == -2 or (ord in (-1, -math.inf) and A.shape[picked] == 0):
            raise IndexError(f"{name}: ord={ord} takes a minimum over an empty dimension; got "
                             f"shape {list(A.shape)} with dim ({d0}, {d1}), expected non-empty "
                             "matrices")
        shape = [1 if i in (d0, d1) else s for i, s in enumerate(A.shape)]
        res = _make(np.zeros(shape, A._data.dtype))
        return _out(res if keepdim else res.squeeze((d0, d1)), out, name)
    if ord in ("nuc", 2, -2):
        _check_float(A, name)
        S = svdvals(A.movedim((d0, d1), (-2, -1)))
        res = S.sum(-1) if ord == "nuc" else S.amax(-1) if ord == 2 else S.amin(-1)
        if keepdim:
            for d in sorted((d0, d1)):
                res = res.unsqueeze(d)
        return _out(res, out, name)
    # 1 / -1: reduce rows (sum over d0) then pick over columns; inf / -inf: the other way
    sum_dim, pick_dim = (d0, d1) if abs(ord) == 1 else (d1, d0)
    sums = A.abs().sum(sum_dim, keepdim=True)
    res = sums.amax(pick_dim, keepdim=True) if ord > 0 else sums.amin(pick_dim, keepdim=True)
    return _out(res if keepdim else res.squeeze((d0, d1)), out, name)


@linalg_op
def norm(input, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """Vector or matrix norm (torch.linalg.norm): with ``ord`` and no ``dim`` the input must be
    1-D or 2-D; an int or 1-tuple dim means a vector norm, a 2-tuple a matrix norm. (The
    parameter is ``input``, the name torch's parser takes, though its docs write ``A``.)"""
    _check_float(input, "linalg.norm", lapack=False)
    if dim is not None:
        dim = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
    if ord is None:
        if dim is not None and len(dim) == 2:
            return matrix_norm(input, "fro", dim, keepdim, dtype=dtype, out=out)
        return vector_norm(input, 2, dim, keepdim, dtype=dtype, out=out)
    if dim is None:
        if input.ndim not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must "
                               f"be 1D or 2D. Got {input.ndim}D.")
        dim = tuple(range(input.ndim))
    if isinstance(ord, str) or len(dim) == 2:
        return matrix_norm(input, ord, dim, keepdim, dtype=dtype, out=out)
    return vector_norm(input, ord, dim, keepdim, dtype=dtype, out=out)


def torch_norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """Legacy ember.norm / Tensor.norm: a number p (or 'fro' over <= 2 dims) is a vector norm
    over ``dim`` (every element by default); 'nuc' is the nuclear matrix norm."""
    if dim is not None and not isinstance(dim, (int, np.integer)):
        dim = tuple(dim)
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, (int, np.integer)) or len(dim) <= 2):
            return vector_norm(input, 2, dim, keepdim, dtype=dtype, out=out)
        dims = tuple(range(input.ndim)) if dim is None else dim
        return matrix_norm(input, p, dims, keepdim, dtype=dtype, out=out)
    return vector_norm(input, 2.0 if p is None else p, dim, keepdim, dtype=dtype, out=out)


def dist(input, other, p=2):
    """p-norm of input - other (broadcasting)."""
    return vector_norm(input - other, p)
