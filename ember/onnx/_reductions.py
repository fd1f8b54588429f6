"""ONNX translations of reductions (any/all, arg-reductions, variance, norms, NaN-skipping ones)
and of the matrix products beyond matmul (addmm and family, einsum, tensordot, det)."""
from __future__ import annotations

import numpy as np

from ._builder import Builder, T
from ._functions import _e, _norm, _out_dtype, _reg, _Unsupported
from ._math import _by_name, _k, _lin, arg


def _axes(x: T, dim):
    if dim is None:
        return None
    dims = [dim] if isinstance(dim, int) else list(dim)
    if not dims:
        return None        # an empty dim list reduces everything, as dim=None
    return sorted(_norm(d, max(x.rank, 1)) for d in dims)


def reduce(b: Builder, op_type: str, x: T, dim, keepdim) -> T:
    if x.rank == 0:
        return b.op("Identity", [x])
    axes = _axes(x, dim)
    op, ins, kw = b.axes(op_type, [x], axes, keepdims=int(bool(keepdim)))
    axes = range(x.rank) if axes is None else axes
    if keepdim:
        shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    else:
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    return b.op(op, ins, shape=shape, **kw)


def _truth(op_type):
    def tr(b, node, args, kwargs):
        x = args[0]
        as_int = b.cast(b.cast(x, np.bool_), np.int32)
        r = reduce(b, op_type, as_int, arg(args, kwargs, 1, "dim"),
                   arg(args, kwargs, 2, "keepdim", False))
        return b.cast(r, np.bool_)
    return tr


_by_name("all")(_truth("ReduceMin"))
_by_name("any")(_truth("ReduceMax"))


def _arg_reduce(op_type):
    def tr(b, node, args, kwargs):
        x = args[0]
        dim = arg(args, kwargs, 1, "dim")
        keep = bool(arg(args, kwargs, 2, "keepdim", False))
        if dim is None:
            flat = b.op("Reshape", [x, b.const([-1], np.int64)])
            r = b.op(op_type, [flat], dtype=np.int64, axis=0, keepdims=0)
            if keep:     # torch keeps every dimension as size 1
                r = b.op("Reshape", [r, b.const([1] * x.rank, np.int64)])
            return r
        if x.rank == 0:
            return b.const(0, np.int64)
        return b.op(op_type, [x], dtype=np.int64, axis=_norm(dim, x.rank), keepdims=int(keep))
    return tr


_by_name("argmax")(_arg_reduce("ArgMax"))
_by_name("argmin")(_arg_reduce("ArgMin"))


@_by_name("logsumexp")
def _logsumexp(b, node, args, kwargs):
    x = b.tensor(args[0], _out_dtype(node))
    dim, keep = arg(args, kwargs, 1, "dim"), arg(args, kwargs, 2, "keepdim", False)
    # shift by the max for stability (ReduceLogSumExp does not, in every runtime)
    m = reduce(b, "ReduceMax", x, dim, True)
    m = b.op("Where", [b.op("IsInf", [m], dtype=np.bool_), _k(b, 0.0, m), m])
    s = reduce(b, "ReduceSum", b.op("Exp", [b.op("Sub", [x, m])]), dim, keep)
    if not keep:
        m = b.op("Squeeze", [m, b.const(_axes(x, dim) or list(range(x.rank)), np.int64)]) \
            if x.rank else m
    return b.op("Add", [b.op("Log", [s]), m])


@_by_name("count_nonzero")
def _count_nonzero(b, node, args, kwargs):
    x = args[0]
    nz = b.op("Not", [b.op("Equal", [x, b.tensor(0, x.dtype)], dtype=np.bool_)])
    return reduce(b, "ReduceSum", b.cast(nz, np.int64), arg(args, kwargs, 1, "dim"), False)


def _count(b: Builder, x: T, dim, keepdim) -> T:
    """The number of elements each reduction over ``dim`` sees (dynamic sizes included)."""
    ones = b.op("ConstantOfShape", [b.shape_of(x)], dtype=x.dtype, shape=x.shape,
                value=b.onnx.numpy_helper.from_array(np.ones(1, x.dtype)))
    return reduce(b, "ReduceSum", ones, dim, keepdim)


def _nan_reduce(mean):
    def tr(b, node, args, kwargs):
        x = b.tensor(args[0], _out_dtype(node))
        dim, keep = arg(args, kwargs, 1, "dim"), arg(args, kwargs, 2, "keepdim", False)
        nan = b.op("IsNaN", [x], dtype=np.bool_)
        s = reduce(b, "ReduceSum", b.op("Where", [nan, _k(b, 0.0, x), x]), dim, keep)
        if not mean:
            return s
        n = reduce(b, "ReduceSum", b.cast(b.op("Not", [nan]), x.dtype), dim, keep)
        return b.op("Div", [s, n])
    return tr


_by_name("nansum")(_nan_reduce(False))
_by_name("nanmean")(_nan_reduce(True))


def _var_args(args, kwargs):
    """(dim, correction, keepdim) from torch's var/std forms (unbiased positional or
    correction=)."""
    dim = arg(args, kwargs, 1, "dim")
    correction = kwargs.get("correction")
    if isinstance(dim, bool):            # var(x, unbiased)
        correction, dim = (1 if dim else 0), None
    elif len(args) > 2 and isinstance(args[2], bool):   # var(x, dim, unbiased, keepdim)
        correction = 1 if args[2] else 0
        return dim, correction, arg(args, kwargs, 3, "keepdim", False)
    if "unbiased" in kwargs:
        correction = 1 if kwargs["unbiased"] else 0
    return dim, (1 if correction is None else correction), kwargs.get("keepdim", False)


def variance(b: Builder, x: T, dim, correction, keepdim):
    mean = reduce(b, "ReduceMean", x, dim, True)
    d = b.op("Sub", [x, mean])
    ss = reduce(b, "ReduceSum", b.op("Mul", [d, d]), dim, keepdim)
    n = b.op("Sub", [_count(b, x, dim, keepdim), _k(b, float(correction), x)])
    n = b.op("Max", [n, _k(b, 0.0, x)])       # N <= correction gives inf/nan, as ember
    var = b.op("Div", [ss, n])
    if not keepdim and x.rank:
        axes = _axes(x, dim) or list(range(x.rank))
        mean = b.op("Squeeze", [mean, b.const(axes, np.int64)])
    return var, mean


def _var(std, with_mean):
    def tr(b, node, args, kwargs):
        x = args[0]
        dim, corr, keep = _var_args(args, kwargs)
        var, mean = variance(b, x, dim, corr, keep)
        out = b.op("Sqrt", [var]) if std else var
        return (out, mean) if with_mean else out
    return tr


_by_name("var")(_var(False, False))
_by_name("std")(_var(True, False))
_by_name("var_mean", methods=False)(_var(False, True))
_by_name("std_mean", methods=False)(_var(True, True))


def vector_norm(b: Builder, x: T, p, dim, keepdim) -> T:
    if p == 2:
        return reduce(b, "ReduceL2", x, dim, keepdim)
    if p == 1:
        return reduce(b, "ReduceL1", x, dim, keepdim)
    a = b.op("Abs", [x])
    if p == float("inf"):
        return reduce(b, "ReduceMax", a, dim, keepdim)
    if p == float("-inf"):
        return reduce(b, "ReduceMin", a, dim, keepdim)
    if p == 0:
        nz = b.cast(b.op("Not", [b.op("Equal", [x, _k(b, 0.0, x)], dtype=np.bool_)]), x.dtype)
        return reduce(b, "ReduceSum", nz, dim, keepdim)
    s = reduce(b, "ReduceSum", b.op("Pow", [a, _k(b, float(p), x)]), dim, keepdim)
    return b.op("Pow", [s, _k(b, 1.0 / p, x)])


@_by_name("norm")
def _norm_tr(b, node, args, kwargs):
    x = b.tensor(args[0], _out_dtype(node))
    p = arg(args, kwargs, 1, "p", "fro")
    dim, keep = arg(args, kwargs, 2, "dim"), arg(args, kwargs, 3, "keepdim", False)
    if p == "fro" or p is None:
        p = 2
    if isinstance(p, str) or (dim is not None and not isinstance(dim, int) and len(dim) == 2
                              and p != 2):
        raise _Unsupported()     # nuclear and matrix p-norms have no ONNX composition here
    return vector_norm(b, x, p, dim, keep)


@_reg(_lin("vector_norm"))
def _vector_norm(b, node, args, kwargs):
    x = b.tensor(args[0], _out_dtype(node))
    return vector_norm(b, x, arg(args, kwargs, 1, "ord", 2), arg(args, kwargs, 2, "dim"),
                       arg(args, kwargs, 3, "keepdim", False))


@_reg(_lin("norm"))
def _linalg_norm(b, node, args, kwargs):
    x = b.tensor(args[0], _out_dtype(node))
    ord_, dim = arg(args, kwargs, 1, "ord"), arg(args, kwargs, 2, "dim")
    keep = arg(args, kwargs, 3, "keepdim", False)
    if ord_ in (None, "fro") or (ord_ == 2 and (x.rank == 1 or isinstance(dim, int))):
        return vector_norm(b, x, 2, dim, keep)
    if isinstance(dim, int) or (dim is None and x.rank == 1):
        return vector_norm(b, x, ord_, dim, keep)
    raise _Unsupported()


@_by_name("frobenius_norm", methods=False)
def _frobenius(b, node, args, kwargs):
    x = b.tensor(args[0], _out_dtype(node))
    return vector_norm(b, x, 2, arg(args, kwargs, 1, "dim"), arg(args, kwargs, 2, "keepdim"))


@_by_name("dist")
def _dist(b, node, args, kwargs):
    dt = _out_dtype(node)
    d = b.op("Sub", [b.tensor(args[0], dt), b.tensor(args[1], dt)])
    return vector_norm(b, d, arg(args, kwargs, 2, "p", 2), None, False)


# ------------------------------------------------------------------------------ products
def _scaled(b: Builder, t: T, s) -> T:
    return t if s == 1 else b.op("Mul", [t, b.tensor(s, t.dtype)])


def _add_product(sum_batch, product):
    """beta * input + alpha * product (addmm, addmv, baddbmm, addbmm, addr)."""
    def tr(b, node, args, kwargs):
        dt = _out_dtype(node)
        x = b.tensor(args[0], dt)
        p = product(b, b.tensor(args[1], dt), b.tensor(args[2], dt))
        if sum_batch:
            p = b.op("ReduceSum", [p, b.const([0], np.int64)], keepdims=0)
        beta, alpha = kwargs.get("beta", 1), kwargs.get("alpha", 1)
        if beta == 0:      # beta=0 ignores input, NaNs included
            return _scaled(b, p, alpha)
        return b.op("Add", [_scaled(b, x, beta), _scaled(b, p, alpha)])
    return tr


def outer(b: Builder, u: T, v: T) -> T:
    return b.op("Mul", [b.op("Unsqueeze", [u, b.const([1], np.int64)]), v])


def _matmul(b, x, y):
    return b.op("MatMul", [x, y])


for _name, _sum, _prod in (("addmm", False, _matmul), ("addmv", False, _matmul),
                           ("baddbmm", False, _matmul), ("addbmm", True, _matmul),
                           ("addr", False, outer)):
    _by_name(_name)(_add_product(_sum, _prod))
_by_name("mv", "dot")(lambda b, node, args, kwargs: b.op("MatMul", [args[0], args[1]]))
_by_name("inner")(lambda b, node, args, kwargs: _inner(b, args[0], args[1]))
_by_name("outer", "ger")(lambda b, node, args, kwargs: outer(b, args[0], args[1]))
_reg(_lin("matmul"))(lambda b, node, args, kwargs: b.op("MatMul", [args[0], args[1]]))
_reg(_lin("det"), _e("det"), methods=("det",))(lambda b, node, args, kwargs: b.op(
    "Det", [args[0]]))


def _inner(b: Builder, x: T, y: T) -> T:
    if x.rank == 0 or y.rank == 0:
        return b.op("Mul", [x, y])
    return _tensordot(b, x, y, [x.rank - 1], [y.rank - 1])


@_reg(_lin("multi_dot"))
def _multi_dot(b, node, args, kwargs):
    ts = list(args[0])
    out = ts[0]
    for t in ts[1:]:
        out = b.op("MatMul", [out, t])
    return out


@_reg(_lin("vecdot"))
def _vecdot(b, node, args, kwargs):
    dim = kwargs.get("dim", -1)
    x, y = args[0], args[1]
    prod = b.op("Mul", [x, y])
    return reduce(b, "ReduceSum", prod, _norm(dim, max(x.rank, y.rank)), False)


@_reg(_e("einsum"))
def _einsum(b, node, args, kwargs):
    eq = args[0]
    ops = list(args[1]) if len(args) == 2 and isinstance(args[1], (list, tuple)) \
        else list(args[1:])
    if not isinstance(eq, str) or any(not isinstance(o, T) for o in ops):
        raise _Unsupported()
    dt = _out_dtype(node)
    return b.op("Einsum", [b.tensor(o, dt) for o in ops], equation=eq.replace(" ", ""))


_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _tensordot(b: Builder, x: T, y: T, dx, dy) -> T:
    """tensordot as an Einsum: contracted dims share letters, the rest keep their order."""
    ex = list(_LETTERS[:x.rank])
    ey = list(_LETTERS[x.rank:x.rank + y.rank])
    for i, j in zip(dx, dy, strict=True):
        ey[j] = ex[i]
    out = [c for i, c in enumerate(ex) if i not in dx] + \
          [c for j, c in enumerate(ey) if j not in dy]
    return b.op("Einsum", [x, y], equation=f"{''.join(ex)},{''.join(ey)}->{''.join(out)}")


@_reg(_e("tensordot"))
def _tensordot_tr(b, node, args, kwargs):
    x, y = args[0], args[1]
    dims = arg(args, kwargs, 2, "dims", 2)
    if isinstance(dims, int):
        dx, dy = list(range(x.rank - dims, x.rank)), list(range(dims))
    else:
        dx, dy = ([d] if isinstance(d, int) else list(d) for d in dims)
    return _tensordot(b, x, y, [_norm(d, x.rank) for d in dx], [_norm(d, y.rank) for d in dy])

