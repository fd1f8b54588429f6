"""Reductions over dims: sum, mean, prod, max/min, var/std, logsumexp, all/any, cumsum,
logcumsumexp, ..."""
from __future__ import annotations

import math
import operator
import warnings
from collections import namedtuple

import numpy as np

from .. import _dtype as D
from .._meta import mark, marks_meta
from .._tensor import Tensor, _make, _wrap_dim
from ..autograd.function import Op, rename_node
from ._kernels import pooled as _pooled
from .gather import _scatter_into_zeros
from .indexing import where
from .registry import backward_on_arrays, keepdim_needs_dim, norm_dims, register, write_out
from .views import Expand

values_indices = {n: namedtuple(n, ["values", "indices"]) for n in (
    "max", "min", "sort", "topk", "kthvalue", "median", "mode", "nanmedian", "cummax", "cummin")}


def _kept_shape(shape, dims):
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def _unsqueeze_to(grad, shape, dims, keepdim):
    """Give a reduced gradient back its reduced dims (size 1) so that it broadcasts."""
    if keepdim or not dims:
        return grad
    return grad.reshape(_kept_shape(shape, dims))


def _acc_dtype(x, dtype):
    if dtype is not None:
        return D.to_dtype(dtype).np
    return np.dtype(np.int64) if x.dtype.kind in "biu" else x.dtype


_WIDE_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _per_channel(x, dims):
    """Whether the (sorted) dims are every axis but axis 1 of a C-contiguous float32/float64
    array of >= 3 dims (half types keep NumPy's one reduction, which accumulates in float32)."""
    return (len(dims) == x.ndim - 1 > 1 and dims == (0, *range(2, x.ndim))
            and x.dtype in _WIDE_FLOATS and x.flags.c_contiguous and x.size > 0)


# dtypes whose sum NumPy accumulates in the dtype itself, as torch's result dtype (integers and
# bool sum as int64 in torch, while NumPy keeps uint64 and widens the others to its int_; the
# half types go through _half_acc)
_OWN_ACC = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128))

# NOTE [Half-precision accumulation]
# torch sums, averages and multiplies float16/bfloat16 tensors (sum, nansum, mean, prod, cumsum,
# cumprod) in float32 and rounds the result to the half type once. NumPy accumulates bfloat16
# (ml_dtypes) in bfloat16 itself, and float16 in float16 too except along a contiguous last
# axis: a bfloat16 sum of 1200 values drifted 0.6 from torch's and a count past 256 stopped
# growing. So the half types reduce with dtype=float32, after converting the input to the
# requested half type first (sum(float32_x, dtype=float16) rounds every element, as torch's).
# The float32 order of summation still differs from torch's vectorised one: results agree to the
# last half-type bit except at a rounding boundary (tests/parity/test_half_reductions.py).
# float32/float64 never reach this code.
_HALF = frozenset((np.dtype(np.float16), D.bfloat16.np))


def _half_acc(npf, x, acc, **kw):
    """npf over x (converted to the half type acc) accumulated in float32, rounded to acc."""
    work = x if x.dtype == acc else x.astype(acc)
    return np.asarray(npf(work, dtype=np.float32, **kw)).astype(acc)
_ALL_DIMS = [tuple(range(n)) for n in range(65)]  # dim=None's dims by ndim (NumPy's max is 64)


# NOTE [A loss's broadcast gradient]
# The backward of a full sum or mean (every `loss = x.sum()` / `x.mean()`) spreads the 0-d
# gradient over the input's shape. When nothing records or watches the backward
# (registry.backward_on_arrays) that is NumPy's read-only broadcast of the array, wrapped as a
# plain tensor: the values expand() would give, without its op call and view bookkeeping
# (~1.3 us of a 4x4 op's forward and backward). Mean divides first, on the 0-d array, as
# `g / count` would (float32 and float64 only: the half types' division rounds through ember's
# own path).
class Sum(Op):
    """Sum over ``dim`` (all dims by default); integer inputs sum as int64."""

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False, dtype=None):
        if dim is None and dtype is None and x.dtype in _OWN_ACC:
            # x.sum(): the per-op overhead case (benchmarks/overhead.py, 4x4 sum 3.4 -> 2.8 us).
            # out=... makes the ufunc return a 0-d array, not a NumPy scalar that Op._run would
            # convert; the accumulation dtype is x's, as NumPy's default for these dtypes
            ctx.shape, ctx.dims, ctx.keepdim = x.shape, _ALL_DIMS[x.ndim], keepdim
            return np.add.reduce(x, None, keepdims=keepdim, out=...)
        dims = _ALL_DIMS[x.ndim] if dim is None else norm_dims(_every(dim), x.ndim, "sum")
        ctx.shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        acc = _acc_dtype(x, dtype)
        if dim is not None and _per_channel(x, dims) and acc == x.dtype:
            # the batch first (whole contiguous slabs added), then each channel's row: 1.3-4x
            # as fast as NumPy's reduction over (0, 2, 3) at once on conv gradients (8,512,4,4)
            # 78 -> 18 us; the bias gradient of every convolution
            y = x.sum(axis=0).reshape(x.shape[1], -1).sum(axis=1)
            return y.reshape(_kept_shape(x.shape, dims)) if keepdim else y
        if x.size >= _pooled.SUM_MIN and acc == x.dtype:  # big: on the one pool when it is on
            y = _pooled.sum_dims(x, dims)
            if y is not None:
                return y.reshape(_kept_shape(x.shape, dims) if keepdim else
                                 tuple(s for d, s in enumerate(x.shape) if d not in dims))
        if acc in _HALF:  # NOTE [Half-precision accumulation]
            return _half_acc(np.add.reduce, x, acc, axis=dims, keepdims=keepdim)
        # np.add.reduce is what np.sum calls, without its 1.4 us of dispatch (per-op overhead)
        return np.add.reduce(x, axis=dims, keepdims=keepdim, dtype=acc, out=...)

    @staticmethod
    def backward(ctx, grad):
        if grad._data.ndim == 0 and ctx.shape:  # a full reduction: the 0-d gradient
            # broadcasts as it is; straight to the op, skipping expand()'s checks of sizes
            # that are right by construction (every backward of `loss = x.sum()`)
            if backward_on_arrays(grad):  # NOTE [A loss's broadcast gradient]
                return _make(np.broadcast_to(grad._data, ctx.shape))
            return Expand.apply(grad, ctx.shape)
        g = _unsqueeze_to(grad, ctx.shape, ctx.dims, ctx.keepdim)
        return g.expand(ctx.shape)


register("sum", out_dtype=True)(Sum)


def _one_dim(dim, ndim, name):
    """The single dim of max/min/argmax/argmin, range-checked (a 0-d input takes 0 or -1). A
    tuple is refused as torch does: taking its first entry would silently reduce one dim."""
    try:
        dim = operator.index(dim)
    except TypeError:
        raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}") from None
    return (norm_dims(dim, ndim, name) or (0,))[0]


def _every(dim):
    """torch's sum/mean/amax/amin/var/std read an empty dim list (dim=[] or ()) as every dim,
    not as none."""
    if isinstance(dim, (list, tuple)) and len(dim) == 0:
        return None
    return dim


def _float_only(x, name):
    if x.dtype.kind not in "fc" and x.dtype != D.bfloat16.np:
        raise RuntimeError(f"{name}(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {D.from_numpy_dtype(x.dtype)}")


def _float_dtype_only(dtype, name):
    """mean's dtype= must be floating or complex (an integer mean has no dtype to round to)."""
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{name}(): could not infer output dtype. Optional dtype must be "
                           f"either a floating point or complex dtype. Got: {dtype}")


def _mean(x, dims, keepdim, acc):
    if acc in _HALF:  # NOTE [Half-precision accumulation]
        return _half_acc(np.mean, x, acc, axis=dims, keepdims=keepdim)
    return np.mean(x, axis=dims, keepdims=keepdim, dtype=acc)


class Mean(Op):
    """Mean over ``dim``; floating inputs only, as in torch."""

    holomorphic = True  # see NOTE [Complex gradients]

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False, dtype=None):
        if dtype is None:
            _float_only(x, "mean")
        else:
            _float_dtype_only(dtype, "mean")
        dims = norm_dims(_every(dim), x.ndim, "mean")
        ctx.shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        ctx.count = int(np.prod([x.shape[d] for d in dims])) if x.ndim else 1
        # the mean of nothing is NaN, silently (np.mean warns "Mean of empty slice"). Only then
        # the warnings filter: entering catch_warnings clears Python's once-per-location
        # registries, so a "default" warning elsewhere (softmax's implicit dim) would print
        # again after every mean, where torch prints it once
        acc = _acc_dtype(x, dtype)
        with np.errstate(invalid="ignore", divide="ignore"):
            if ctx.count:
                return _mean(x, dims, keepdim, acc)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                return _mean(x, dims, keepdim, acc)

    @staticmethod
    def backward(ctx, grad):
        g = grad._data
        if (g.ndim == 0 and ctx.shape and ctx.count and g.dtype in _WIDE_FLOATS
                and backward_on_arrays(grad)):  # NOTE [A loss's broadcast gradient]
            return _make(np.broadcast_to(np.true_divide(g, ctx.count), ctx.shape))
        g = _unsqueeze_to(grad, ctx.shape, ctx.dims, ctx.keepdim)
        return (g / max(ctx.count, 1)).expand(ctx.shape) if ctx.count else g.expand(ctx.shape) * 0


register("mean")(Mean)


class Prod(Op):
    """Product over one dim (or all); the gradient handles zeros exactly."""

    holomorphic = True  # see NOTE [Complex gradients]

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False, dtype=None):
        keepdim_needs_dim("prod", dim, keepdim)
        dims = norm_dims(dim, x.ndim, "prod")
        ctx.shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        acc = _acc_dtype(x, dtype)
        if acc in _HALF:  # NOTE [Half-precision accumulation]
            y = _half_acc(np.prod, x, acc, axis=dims, keepdims=keepdim)
        else:
            y = np.prod(x, axis=dims, keepdims=keepdim, dtype=acc)
        ctx.save_for_backward(x)
        return y

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        g = _unsqueeze_to(grad, ctx.shape, ctx.dims, ctx.keepdim)
        # d prod / d x_i = prod_{j != i} x_j, computed as exclusive cumprods from both sides
        # (no division, so zeros are handled)
        if len(ctx.dims) != 1:
            flat = x.reshape(-1)
            return (g.reshape(-1) * _prod_others(flat, 0)).reshape(ctx.shape) if x.ndim else g
        return g * _prod_others(x, ctx.dims[0])


def _prod_others(x, dim):
    n = x.shape[dim] if x.ndim else 1
    if n == 0:
        return x
    ones = x.new_ones(x.narrow(dim, 0, 1).shape)  # not x * 0 + 1: NaN where x is inf/NaN
    left = ones._cat_with(x.narrow(dim, 0, n - 1).cumprod(dim), dim) if n > 1 else ones
    rev = x.flip(dim)
    right = ones._cat_with(rev.narrow(dim, 0, n - 1).cumprod(dim), dim).flip(dim) if n > 1 \
        else ones
    return left * right


register("prod", out_dtype=True)(Prod)


class _Extreme(Op):
    """max/min over a dim with indices (gradient to the selected index)."""

    np_arg = None

    @classmethod
    def forward(cls, ctx, x, dim, keepdim=False):
        name = cls.__name__.lower().replace("dim", "")
        d = _one_dim(dim, x.ndim, name)
        if x.ndim and x.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
        ctx.shape, ctx.dim, ctx.keepdim = x.shape, d, keepdim
        if x.ndim == 0:
            return x.copy(), np.zeros((), np.int64)
        idx = cls.np_arg(x, axis=d, keepdims=True)
        if x.dtype.kind == "f" or x.dtype == D.bfloat16.np:  # NaN wins, as in torch
            nan = np.isnan(x)
            if nan.any():
                idx = np.where(nan.any(axis=d, keepdims=True),
                               np.argmax(nan, axis=d, keepdims=True), idx)
        vals = np.take_along_axis(x, idx, axis=d)
        ctx.idx = idx
        if not keepdim:
            vals, idx = vals.squeeze(d), idx.squeeze(d)
        return vals, idx.astype(np.int64)

    @staticmethod
    def backward(ctx, grad, grad_idx):
        g = grad if ctx.keepdim or len(ctx.shape) == 0 else grad.unsqueeze(ctx.dim)
        if len(ctx.shape) == 0:
            return g
        return _scatter_into_zeros(g, ctx.idx, ctx.dim, ctx.shape)


class MaxDim(_Extreme):
    np_arg = staticmethod(np.argmax)
    grad_name = "MaxBackward0"  # torch's names: NOTE [Node class names]


class MinDim(_Extreme):
    np_arg = staticmethod(np.argmin)
    grad_name = "MinBackward0"


class _AmaxAmin(Op):
    """amax/amin: gradient split evenly among all elements equal to the extreme."""

    fn = None

    @classmethod
    def forward(cls, ctx, x, dim=(), keepdim=False):
        name = cls.__name__.lower()
        if x.size == 0 and _every(dim) is None:  # torch: RuntimeError, a dim must be named
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                               f"input.numel() == 0 (input of shape {list(x.shape)}).")
        if x.size == 0 and x.ndim:  # torch reports an empty dim before a repeated one
            for d in (dim if isinstance(dim, (tuple, list)) else (dim,)):
                if x.shape[_wrap_dim(d, x.ndim, name)] == 0:
                    raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero "
                                     f"size; got input of shape {list(x.shape)}.")
        dims = norm_dims(_every(dim), x.ndim, name)
        if x.size == 0 and any(x.shape[d] == 0 for d in dims) or x.size == 0 and x.ndim == 0:
            raise IndexError(f"{name}(): Expected reduction dim to have non-zero size; got input "
                             f"of shape {list(x.shape)}.")
        ctx.shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        with np.errstate(invalid="ignore"):  # NaN propagates silently (bfloat16 warns)
            y = np.asarray(cls.fn(x, axis=dims, keepdims=keepdim))  # saved by identity
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        y = _unsqueeze_to(y, ctx.shape, ctx.dims, ctx.keepdim)
        g = _unsqueeze_to(grad, ctx.shape, ctx.dims, ctx.keepdim)
        mask = (x == y).to(grad.dtype)
        return g * mask / mask.sum(dim=ctx.dims, keepdim=True)


class Amax(_AmaxAmin):
    fn = staticmethod(np.max)


class Amin(_AmaxAmin):
    fn = staticmethod(np.min)


register("amax")(Amax)
register("amin")(Amin)


def _max_min(name, dim_op, ext, pairwise):
    full_name = name.capitalize() + "Backward1"

    def fn(input, dim=None, keepdim=False, *, other=None, out=None):
        if isinstance(dim, Tensor) or other is not None:
            if other is not None and dim is not None:
                raise TypeError(f"{name}(): received both dim and other; the elementwise form "
                                f"is {name}(input, other)")
            res = pairwise(input, dim if other is None else other)
            return res if out is None else write_out(out, res, name)
        if dim is None:
            keepdim_needs_dim(name, dim, keepdim)
            if input._data.size == 0:
                raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                                   "input.numel() == 0. Specify the reduction dim with the 'dim' "
                                   "argument.")
            # the same op as amax/amin (ties share the gradient, as in torch), under torch's
            # node name for a full max()/min(): NOTE [Node class names]
            return rename_node(ext.apply(input), full_name)
        res = values_indices[name](*dim_op.apply(input, dim, keepdim))
        if out is not None:
            write_out(out[0], res.values, name)
            write_out(out[1], res.indices, name)
            return values_indices[name](*out)
        return res

    fn.__name__ = name
    fn.__doc__ = (f"{name}(input) -> the {name} element; {name}(input, dim, keepdim=False) -> "
                  "(values, indices); {name}(input, other) -> elementwise.")
    return fn


from .registry import FUNCTIONS as _F  # noqa: E402

register("max")(_max_min("max", MaxDim, Amax, lambda a, b: _F["maximum"](a, b)))
register("min")(_max_min("min", MinDim, Amin, lambda a, b: _F["minimum"](a, b)))


def _arg(name, npf):
    def fn(input, dim=None, keepdim=False):
        out = run(input, dim, keepdim)
        return mark(out) if input._meta else out  # computed on the stand-in: its shape holds

    def run(input, dim, keepdim):
        a = input._data
        if a.dtype == np.bool_:
            if dim is not None and not isinstance(dim, int):
                _one_dim(dim, a.ndim, name)  # a tuple dim is torch's TypeError, before the dtype
            raise RuntimeError(f"{name}(): does not support bool input (convert it with .int() "
                               "or .long() first)")
        if a.size == 0 and dim is None:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for "
                             "input.numel() == 0.")
        if dim is None:
            return ArgIndex.apply(input, name, None, keepdim)
        if type(dim) is int and -a.ndim <= dim < a.ndim:  # in range: no general check
            d = dim % a.ndim
        else:
            d = _one_dim(dim, a.ndim, name)
        if a.ndim == 0:
            return _make(np.zeros((), np.int64))
        if a.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size; got "
                             f"input of shape {list(a.shape)}.")
        return ArgIndex.apply(input, name, d, keepdim)

    fn.__name__ = name
    return fn


class ArgIndex(Op):
    """argmax/argmin's int64 indices, in an op so that a compile capture replays them from the
    input (NOTE [Arrays computed outside the registry] in _dynamo/capture.py)."""

    @staticmethod
    def forward(ctx, x, name, d, keepdim):
        if d is None:
            r = np.asarray(getattr(x.reshape(-1), name)(), np.int64)
            return r.reshape((1,) * x.ndim) if keepdim else r
        # the array's method: what np.argmax/argmin call, without their Python dispatch (1 us)
        return getattr(x, name)(axis=d, keepdims=keepdim).astype(np.int64, copy=False)

    @staticmethod
    def backward(ctx, grad):  # pragma: no cover - an integer output carries no gradient
        return None, None, None, None


# bool raises: torch has no bool argmax/argmin kernels
register("argmax")(_arg("argmax", np.argmax))
register("argmin")(_arg("argmin", np.argmin))


def _correction(unbiased, correction, name):
    if correction is not None:
        if unbiased is not None:  # torch's parser has no form taking both
            raise TypeError(f"{name}(): pass unbiased or correction, not both; got "
                            f"unbiased={unbiased}, correction={correction}")
        return correction
    if unbiased is None:
        return 1
    return 1 if unbiased else 0


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance over dim with Bessel's ``correction`` (default 1)."""
    return _var(input, dim, unbiased, keepdim, correction, "var")


class Var(Op):
    """Variance (``root``: standard deviation) of real floats over ``dims``.

    Accumulated in float64, as torch's CPU kernels do for float32: the squares of float32
    deviations beyond ~1e19 (or below ~1e-19) overflow (underflow) in float32, where std
    itself is representable. The derivative is torch's, 2 (x - mean) / (n - correction), with
    no term through the mean (it is 0 analytically, but NaN once an input is infinite)."""

    @staticmethod
    def forward(ctx, x, dims, correction, keepdim, root=False):
        ctx.dims, ctx.keepdim, ctx.shape = dims, keepdim, x.shape
        n = int(np.prod([x.shape[d] for d in dims])) if x.ndim else 1
        ctx.den = n - correction
        acc = x.astype(np.float64) if x.dtype.itemsize < 8 else x
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            # the sum over n, not .mean(): NumPy warns for the mean of an empty slice
            dev = acc - acc.sum(axis=dims, keepdims=True) / n
            y = np.sum(dev * dev, axis=dims, keepdims=keepdim) / max(ctx.den, 0)
            if root:
                y = np.sqrt(y)
            y = np.asarray(y).astype(x.dtype, copy=False)  # beyond float32's range: inf
        ctx.save_for_backward(x, y if root else None)
        return y

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        g = _unsqueeze_to(grad, ctx.shape, ctx.dims, ctx.keepdim)
        dev = x - x.mean(dim=ctx.dims, keepdim=True)
        # correction > n: the value is inf (0 degrees of freedom or fewer) but torch's
        # derivative keeps the negative n - correction, so a finite gradient; only n ==
        # correction divides by zero
        if y is None:
            return g * dev * (2.0 / ctx.den if ctx.den != 0 else math.inf)
        # d sqrt(v) = dv / (2 sqrt(v)); 0 where std is 0, as torch (not 0 * inf). The division
        # is by a placeholder there, so that double backward sees no inf either
        r = _unsqueeze_to(y, ctx.shape, ctx.dims, ctx.keepdim)
        zero = r == 0
        if ctx.den == 0:  # no degrees of freedom: NaN (past that, r is inf: a 0 gradient)
            return where(zero, 0.0, g * dev * math.nan)
        gx = g * dev / (r.masked_fill(zero, 1.0) * ctx.den)
        return where(zero, 0.0, gx)


class Std(Var):
    """The standard deviation: Var with ``root`` (a separate name for grad_fn)."""


def _var(input, dim, unbiased, keepdim, correction, name, root=False):
    if isinstance(dim, bool):  # var(input, unbiased) positional form
        unbiased, dim = dim, None
    c = _correction(unbiased, correction, name)
    _float_only(input._data, name)
    dims = norm_dims(_every(dim), input.ndim, name)
    n = int(np.prod([input.shape[d] for d in dims])) if input.ndim else 1
    if n - c <= 0:  # torch's warning, with its key phrase
        warnings.warn(f"{name}(): degrees of freedom is <= 0; got correction={c} for {n} "
                      "elements per result. The result is NaN or inf.", UserWarning,
                      stacklevel=4)
    if not input.is_complex():
        return (Std if root else Var).apply(input, dims=dims, correction=c, keepdim=keepdim,
                                            root=root)
    mu = input.mean(dim=dims, keepdim=True)
    d = input - mu
    # complex: the mean of |d|^2, a real result as torch's
    v = (d * d.conj()).real.sum(dim=dims, keepdim=keepdim) / max(n - c, 0)
    if not root:
        return v
    zero = v == 0
    # sqrt of a placeholder where v == 0, so that its backward never divides by zero
    return where(zero, 0.0, where(zero, 1.0, v).sqrt())


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation: sqrt of var with the same arguments.

    Where the variance is 0 the gradient is 0, as in torch (not the NaN of 0 * d sqrt(0)).
    """
    return _var(input, dim, unbiased, keepdim, correction, "std", root=True)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(dim, bool):  # var_mean(input, unbiased) positional form: every dim
        unbiased, dim = dim, None
    return (_var(input, dim, unbiased, keepdim, correction, "var_mean"),
            input.mean(dim=dim, keepdim=keepdim) if dim is not None else input.mean())


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(dim, bool):  # std_mean(input, unbiased) positional form: every dim
        unbiased, dim = dim, None
    return (_var(input, dim, unbiased, keepdim, correction, "std_mean", root=True),
            input.mean(dim=dim, keepdim=keepdim) if dim is not None else input.mean())


register("var")(var)
register("std")(std)
register("var_mean")(var_mean)
register("std_mean")(std_mean)


def logsumexp(input, dim, keepdim=False):
    """log(sum(exp(x))) over dim, stable: the max is subtracted before exp."""
    x = input if input.is_floating_point() or input.is_complex() else input.float()
    dims = norm_dims(dim, x.ndim, "logsumexp")
    if x.numel() == 0:
        return x.exp().sum(dim=dims, keepdim=keepdim).log()
    # the shift: the largest real part (complex numbers have no max; |exp(z)| = exp(Re z))
    m = (x.detach().real if x.is_complex() else x.detach()).amax(dim=dims, keepdim=True)
    m = m.masked_fill(~m.isfinite(), 0)
    out = (x - m).exp().sum(dim=dims, keepdim=True).log() + m
    return out if keepdim else out.squeeze(dims) if dims else out


register("logsumexp")(logsumexp)


def _bool_reduce(name, npf):
    def fn(input, dim=None, keepdim=False):
        a = input._data
        dims = norm_dims(dim, a.ndim, name)
        r = npf(a, axis=dims, keepdims=keepdim)
        # torch keeps uint8 for uint8 inputs, bool otherwise
        return _make(np.asarray(r).astype(np.uint8 if a.dtype == np.uint8 else np.bool_))

    fn.__name__ = name
    return fn


register("all")(marks_meta(_bool_reduce("all", np.all)))
register("any")(marks_meta(_bool_reduce("any", np.any)))


def count_nonzero(input, *dims, dim=None):
    """Non-zero elements, in all of input or along dim (the method also takes
    ``count_nonzero(0, 1)``)."""
    if dims:
        dim = dims[0] if len(dims) == 1 and dim is None else tuple(dims)
    a = input._data
    return _make(np.asarray(np.count_nonzero(a, axis=norm_dims(dim, a.ndim, "count_nonzero")),
                            np.int64))


register("count_nonzero")(marks_meta(count_nonzero))


class Cumsum(Op):
    """Running sum along dim."""

    holomorphic = True  # see NOTE [Complex gradients]

    @staticmethod
    def forward(ctx, x, dim, dtype=None):
        d = (norm_dims(dim, x.ndim, "cumsum") or (0,))[0]
        ctx.dim = d
        if x.ndim == 0:
            return x.astype(_acc_dtype(x, dtype))
        acc = _acc_dtype(x, dtype)
        if acc in _HALF:  # NOTE [Half-precision accumulation]
            return _half_acc(np.cumsum, x, acc, axis=d)
        return np.cumsum(x, axis=d, dtype=acc)

    @staticmethod
    def backward(ctx, grad):
        if grad.ndim == 0:
            return grad
        return grad.flip(ctx.dim).cumsum(ctx.dim).flip(ctx.dim)  # reverse running sum


register("cumsum", inplace=True, out_dtype=True)(Cumsum)
_cumsum_inplace = Tensor.cumsum_


def _cumsum_(self, dim, *, dtype=None):
    # torch has no bool kernel for a running sum written back into a bool tensor (an empty one
    # never reaches the kernel)
    if self.dtype is D.bool_:
        if self.numel() == 0:
            norm_dims(dim, self.ndim, "cumsum_")  # still checks dim
            return self
        raise NotImplementedError("cumsum_: not implemented for bool tensors; got a bool "
                                  "tensor, expected a numeric one (cumsum(x) returns int64).")
    return _cumsum_inplace(self, dim, dtype=dtype)


Tensor.cumsum_ = _cumsum_


class Logcumsumexp(Op):
    """log(cumsum(exp(x))) along dim, computed with logaddexp so it never overflows."""

    @staticmethod
    def forward(ctx, x, dim=0):
        ctx.dim = dim
        if x.ndim == 0:
            y = x.copy()
        else:
            work = x.astype(np.float32) if x.dtype in _HALF else x  # as torch: see _HALF
            y = np.logaddexp.accumulate(work, axis=dim).astype(x.dtype)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        if x.ndim == 0:
            return grad
        d = ctx.dim
        # d y_j / d x_i = exp(x_i - y_j) for i <= j, so gx_i = sum_{j>=i} g_j exp(x_i - y_j).
        # Done in log space for the positive and negative parts of g separately:
        # gx_i = exp(x_i + revlcse(log(g+) - y)) - exp(x_i + revlcse(log(g-) - y)).
        # Non-positive parts become -inf through where() (not log(0)), and a y of -inf (every
        # x up to it is -inf, so its terms are 0) gets a finite stand-in: no inf - inf, so no
        # NaN in double backward either.
        y = where(y == -math.inf, 0.0, y)

        def part(g):
            pos = g > 0
            t = where(pos, where(pos, g, 1.0).log() - y, -math.inf)
            return (x + Logcumsumexp.apply(t.flip(d), dim=d).flip(d)).exp()

        return part(grad) - part(-grad)


def logcumsumexp(input, dim):
    """log(cumsum(exp(input))) along ``dim``, without overflow."""
    d = _wrap_dim(dim, input.ndim, "logcumsumexp")  # a bad dim first, as torch
    if input.is_complex():  # composed, shifted by the largest real part (principal log)
        if input.ndim == 0:
            return input.clone()
        m = input.detach().real.amax(dim=d, keepdim=True)
        m = m.masked_fill(~m.isfinite(), 0)
        return (input - m).exp().cumsum(d).log() + m
    if not input.is_floating_point():
        raise NotImplementedError(f"logcumsumexp: not implemented for {input.dtype} inputs; "
                                  "convert to a floating dtype first")
    return Logcumsumexp.apply(input, dim=d)


register("logcumsumexp", inplace=False)(logcumsumexp)


class Cumprod(Op):
    """Running product along dim."""

    holomorphic = True  # see NOTE [Complex gradients]

    @staticmethod
    def forward(ctx, x, dim, dtype=None):
        d = (norm_dims(dim, x.ndim, "cumprod") or (0,))[0]
        ctx.dim = d
        acc = _acc_dtype(x, dtype)
        if x.ndim == 0:
            y = x.astype(acc)
        elif acc in _HALF:  # NOTE [Half-precision accumulation]
            y = _half_acc(np.cumprod, x, acc, axis=d)
        else:
            y = np.cumprod(x, axis=d, dtype=acc)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        if x.ndim == 0:
            return grad
        d = ctx.dim
        if bool((x == 0).any()):  # general but quadratic: sum_k>=i g_k prod_{j<=k, j!=i} x_j
            n = x.shape[d]
            parts = []
            for i in range(n):
                xi = x.narrow(d, i, 1)
                ones = xi.new_ones(xi.shape)  # not xi * 0 + 1: NaN where xi is inf
                rest = x.narrow(d, i + 1, n - i - 1)
                xr = x.narrow(d, 0, i)._cat_with(ones, d)._cat_with(rest, d)
                cp = xr.cumprod(d)
                parts.append((grad * cp).narrow(d, i, n - i).sum(d, keepdim=True))
            out = parts[0]
            for p in parts[1:]:
                out = out._cat_with(p, d)
            return out
        # d y_k / d x_i = y_k / x_i for k >= i
        return (grad * y).flip(d).cumsum(d).flip(d) / x


register("cumprod", inplace=True, out_dtype=True)(Cumprod)


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    if not (input.is_floating_point() or input.is_complex()):
        # integers and bools hold no NaN: a plain sum keeps torch's int64 result (replacing
        # NaNs with the float 0.0 would promote to float32)
        return input.sum(dim=dim, keepdim=keepdim, dtype=dtype)
    return where(input.isnan(), 0.0, input).sum(dim=dim, keepdim=keepdim, dtype=dtype)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    if not (input.is_floating_point() or input.is_complex()):
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {str(input.dtype).split('.')[-1]}")
    if dtype is not None:
        _float_dtype_only(dtype, "nanmean")
        input = input.to(dtype)
    keep = (~input.isnan()).to(input.dtype)
    return nansum(input, dim, keepdim) / keep.sum(dim=dim, keepdim=keepdim)


register("nansum", out_dtype=True)(nansum)
register("nanmean")(nanmean)
