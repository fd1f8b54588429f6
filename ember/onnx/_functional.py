"""ONNX translations of nn.functional calls beyond _nn.py's: activations, group/instance/batch
norms, convolution and pooling functions, interpolate, pad, one_hot, distances and losses.
Modules without a translation of their own (nn.GroupNorm, nn.MaxPool3d, nn.Mish, ...) are traced
into these calls."""
from __future__ import annotations

import numpy as np

import ember.nn.functional as F

from ._builder import Builder, T
from ._functions import _norm, _out_dtype, _reg, _Unsupported
from ._math import _k, arg
from ._reductions import reduce, vector_norm


def _f(name):
    return getattr(F, name, None)


def _fn(*names):
    return _reg(*[_f(n) for n in names])


# ------------------------------------------------------------------------------ activations
_fn("hardswish")(lambda b, node, args, kwargs: b.op("HardSwish", [args[0]]))
_fn("hardsigmoid")(lambda b, node, args, kwargs: b.op("HardSigmoid", [args[0]],
                                                      alpha=1.0 / 6.0, beta=0.5))
_fn("selu")(lambda b, node, args, kwargs: b.op("Selu", [args[0]]))
_fn("softsign")(lambda b, node, args, kwargs: b.op("Softsign", [args[0]]))
_fn("tanhshrink")(lambda b, node, args, kwargs: b.op("Sub", [args[0],
                                                            b.op("Tanh", [args[0]])]))
_fn("logsigmoid")(lambda b, node, args, kwargs: b.op("Neg", [
    b.op("Softplus", [b.op("Neg", [args[0]])])]))


@_fn("mish")
def _mish(b, node, args, kwargs):
    x = args[0]
    return b.op("Mul", [x, b.op("Tanh", [b.op("Softplus", [x])])])


@_fn("celu")
def _celu(b, node, args, kwargs):
    return b.op("Celu", [args[0]], alpha=float(arg(args, kwargs, 1, "alpha", 1.0)))


@_fn("softshrink")
def _softshrink(b, node, args, kwargs):
    lambd = float(arg(args, kwargs, 1, "lambd", 0.5))
    return b.op("Shrink", [args[0]], lambd=lambd, bias=lambd)


@_fn("hardshrink")
def _hardshrink(b, node, args, kwargs):
    return b.op("Shrink", [args[0]], lambd=float(arg(args, kwargs, 1, "lambd", 0.5)), bias=0.0)


@_fn("threshold")
def _threshold(b, node, args, kwargs):
    x = args[0]
    th, value = arg(args, kwargs, 1, "threshold"), arg(args, kwargs, 2, "value")
    keep = b.op("Greater", [x, _k(b, th, x)], dtype=np.bool_)
    return b.op("Where", [keep, x, _k(b, value, x)])


@_fn("prelu")
def _prelu(b, node, args, kwargs):
    x, w = args[0], args[1]
    if w.shape is not None and len(w.shape) == 1 and w.shape[0] != 1 and x.rank > 2:
        # one slope per channel (dim 1): shape it (C, 1, ..., 1) to broadcast over the rest
        w = b.op("Reshape", [w, b.const([-1] + [1] * (x.rank - 2), np.int64)])
    return b.op("PRelu", [x, w])


@_fn("glu")
def _glu(b, node, args, kwargs):
    x = args[0]
    d = _norm(arg(args, kwargs, 1, "dim", -1), x.rank)
    if x.shape[d] is None:
        raise _Unsupported()
    half = x.shape[d] // 2
    a, g = b.op("Split", [x, b.const([half, half], np.int64)], outputs=2, axis=d)
    return b.op("Mul", [a, b.op("Sigmoid", [g])])


@_fn("softmin")
def _softmin(b, node, args, kwargs):
    x = args[0]
    dim = arg(args, kwargs, 1, "dim")
    if dim is None:
        raise _Unsupported()
    if kwargs.get("dtype") is not None:
        x = b.cast(x, kwargs["dtype"])
    return b.op("Softmax", [b.op("Neg", [x])], axis=_norm(dim, x.rank))


@_fn("normalize")
def _normalize(b, node, args, kwargs):
    x = args[0]
    p, dim = arg(args, kwargs, 1, "p", 2.0), arg(args, kwargs, 2, "dim", 1)
    eps = arg(args, kwargs, 3, "eps", 1e-12)
    n = vector_norm(b, x, p, _norm(dim, x.rank), True)
    return b.op("Div", [x, b.op("Max", [n, _k(b, eps, x)])])


# ------------------------------------------------------------------------------ norms
def _per_channel(b: Builder, v: T, rank: int) -> T:
    """A (C,) vector shaped (C, 1, ..., 1) to broadcast against an (N, C, ...) input."""
    return b.op("Reshape", [v, b.const([-1] + [1] * (rank - 2), np.int64)])


def _affine(b: Builder, y: T, weight, bias, rank: int) -> T:
    if weight is not None:
        y = b.op("Mul", [y, _per_channel(b, weight, rank)])
    if bias is not None:
        y = b.op("Add", [y, _per_channel(b, bias, rank)])
    return y


def _standardize(b: Builder, x: T, axes, eps) -> T:
    mean = reduce(b, "ReduceMean", x, axes, True)
    d = b.op("Sub", [x, mean])
    var = reduce(b, "ReduceMean", b.op("Mul", [d, d]), axes, True)
    return b.op("Div", [d, b.op("Sqrt", [b.op("Add", [var, _k(b, eps, x)])])])


@_fn("group_norm")
def _group_norm(b, node, args, kwargs):
    x, groups = args[0], arg(args, kwargs, 1, "num_groups")
    weight, bias = arg(args, kwargs, 2, "weight"), arg(args, kwargs, 3, "bias")
    eps = arg(args, kwargs, 4, "eps", 1e-5)
    # statistics per (sample, group): view the input as (N, G, -1)
    grouped = b.op("Reshape", [x, b.const([0, groups, -1], np.int64)], shape=(None, groups, None))
    y = b.op("Reshape", [_standardize(b, grouped, [2], eps), b.shape_of(x)], shape=x.shape)
    return _affine(b, y, weight, bias, x.rank)


@_fn("instance_norm")
def _instance_norm(b, node, args, kwargs):
    x = args[0]
    names = ("running_mean", "running_var", "weight", "bias", "use_input_stats", "momentum",
             "eps")
    v = {n: arg(args, kwargs, i + 1, n) for i, n in enumerate(names)}
    eps = 1e-5 if v["eps"] is None else v["eps"]
    if v["use_input_stats"] is False:
        return _eval_batch_norm(b, x, v["running_mean"], v["running_var"], v["weight"],
                                v["bias"], eps)
    y = _standardize(b, x, list(range(2, x.rank)), eps)
    return _affine(b, y, v["weight"], v["bias"], x.rank)


def _eval_batch_norm(b: Builder, x: T, mean, var, weight, bias, eps) -> T:
    y = b.op("Sub", [x, _per_channel(b, mean, x.rank)])
    y = b.op("Div", [y, b.op("Sqrt", [b.op("Add", [_per_channel(b, var, x.rank),
                                                   _k(b, eps, x)])])])
    return _affine(b, y, weight, bias, x.rank)


@_fn("batch_norm")
def _batch_norm(b, node, args, kwargs):
    x = args[0]
    names = ("running_mean", "running_var", "weight", "bias", "training", "momentum", "eps")
    v = {n: arg(args, kwargs, i + 1, n) for i, n in enumerate(names)}
    eps = 1e-5 if v["eps"] is None else v["eps"]
    if v["training"] or v["running_mean"] is None:
        # batch statistics (the running buffers' update is a side effect ONNX does not keep)
        y = _standardize(b, x, [0] + list(range(2, x.rank)), eps)
        return _affine(b, y, v["weight"], v["bias"], x.rank)
    return _eval_batch_norm(b, x, v["running_mean"], v["running_var"], v["weight"], v["bias"],
                            eps)


@_fn("rms_norm")
def _rms_norm(b, node, args, kwargs):
    x, shape = args[0], list(arg(args, kwargs, 1, "normalized_shape"))
    weight, eps = arg(args, kwargs, 2, "weight"), arg(args, kwargs, 3, "eps")
    eps = float(np.finfo(x.dtype).eps) if eps is None else eps
    axes = list(range(x.rank - len(shape), x.rank))
    ms = reduce(b, "ReduceMean", b.op("Mul", [x, x]), axes, True)
    y = b.op("Div", [x, b.op("Sqrt", [b.op("Add", [ms, _k(b, eps, x)])])])
    return b.op("Mul", [y, weight]) if weight is not None else y


# ------------------------------------------------------------------------------ conv, pooling
def _tuple(v, n):
    return [int(e) for e in v] if isinstance(v, (tuple, list)) else [int(v)] * n


def _unbatched(b: Builder, x: T, nd: int, body):
    """Run ``body`` on an (N, C, *spatial) input; an unbatched (C, *spatial) one gains N=1."""
    if x.rank == nd + 2:
        return body(x)
    y = body(b.op("Unsqueeze", [x, b.const([0], np.int64)]))
    return b.op("Squeeze", [y, b.const([0], np.int64)])


def _conv(nd):
    def tr(b, node, args, kwargs):
        x, w = args[0], args[1]
        bias = arg(args, kwargs, 2, "bias")
        stride, padding = arg(args, kwargs, 3, "stride", 1), arg(args, kwargs, 4, "padding", 0)
        dilation, groups = arg(args, kwargs, 5, "dilation", 1), arg(args, kwargs, 6, "groups", 1)
        if w.shape is None or None in w.shape[2:]:
            raise _Unsupported()
        k, dil = [int(s) for s in w.shape[2:]], _tuple(dilation, nd)
        if padding == "valid":
            begin = end = [0] * nd
        elif padding == "same":
            # total padding d (k - 1), the extra one on the far side (as ember)
            total = [d * (kk - 1) for d, kk in zip(dil, k, strict=True)]
            begin = [t // 2 for t in total]
            end = [t - s for t, s in zip(total, begin, strict=True)]
        else:
            begin = end = _tuple(padding, nd)
        ins = [w] + ([bias] if bias is not None else [])
        return _unbatched(b, x, nd, lambda y: b.op(
            "Conv", [y] + ins, kernel_shape=k, strides=_tuple(stride, nd), pads=begin + end,
            dilations=dil, group=int(groups)))
    return tr


for _n in (1, 2, 3):
    _fn(f"conv{_n}d")(_conv(_n))


def _max_pool(nd):
    def tr(b, node, args, kwargs):
        x, k = args[0], _tuple(arg(args, kwargs, 1, "kernel_size"), nd)
        stride = arg(args, kwargs, 2, "stride")
        s = k if stride is None or stride == [] else _tuple(stride, nd)
        p, d = _tuple(arg(args, kwargs, 3, "padding", 0), nd), \
            _tuple(arg(args, kwargs, 4, "dilation", 1), nd)
        if arg(args, kwargs, 6, "return_indices", False):
            raise _Unsupported()
        ceil = int(bool(arg(args, kwargs, 5, "ceil_mode", False)))
        return _unbatched(b, x, nd, lambda y: b.op("MaxPool", [y], kernel_shape=k, strides=s,
                                                   pads=p + p, dilations=d, ceil_mode=ceil))
    return tr


def _avg_pool(nd):
    def tr(b, node, args, kwargs):
        x, k = args[0], _tuple(arg(args, kwargs, 1, "kernel_size"), nd)
        stride = arg(args, kwargs, 2, "stride")
        s = k if stride is None or stride == [] else _tuple(stride, nd)
        p = _tuple(arg(args, kwargs, 3, "padding", 0), nd)
        ceil = int(bool(arg(args, kwargs, 4, "ceil_mode", False)))
        include = int(bool(arg(args, kwargs, 5, "count_include_pad", True)))
        if arg(args, kwargs, 6, "divisor_override") is not None:
            raise _Unsupported()
        return _unbatched(b, x, nd, lambda y: b.op(
            "AveragePool", [y], kernel_shape=k, strides=s, pads=p + p, ceil_mode=ceil,
            count_include_pad=include))
    return tr


def _adaptive(nd, kind):
    def tr(b, node, args, kwargs):
        x, out = args[0], arg(args, kwargs, 1, "output_size")
        if kind == "Max" and arg(args, kwargs, 2, "return_indices", False):
            raise _Unsupported()
        spatial = list(x.shape[-nd:])
        out = [s if o is None else o for o, s in
               zip(out if isinstance(out, (tuple, list)) else [out] * nd, spatial, strict=True)]
        if all(o == 1 for o in out):
            return _unbatched(b, x, nd, lambda y: b.op(f"Global{kind}Pool", [y]))
        if any(s is None or o is None or s % o for s, o in zip(spatial, out, strict=True)):
            raise _Unsupported()   # only evenly dividing windows are a plain pooling
        k = [s // o for s, o in zip(spatial, out, strict=True)]
        op = "MaxPool" if kind == "Max" else "AveragePool"
        return _unbatched(b, x, nd, lambda y: b.op(op, [y], kernel_shape=k, strides=k))
    return tr


for _n in (1, 2, 3):
    _fn(f"max_pool{_n}d")(_max_pool(_n))
    _fn(f"avg_pool{_n}d")(_avg_pool(_n))
    _fn(f"adaptive_avg_pool{_n}d")(_adaptive(_n, "Average"))
    _fn(f"adaptive_max_pool{_n}d")(_adaptive(_n, "Max"))


# ------------------------------------------------------------------------------ interpolate
def interpolate(b: Builder, x: T, size, scale, mode: str, align_corners) -> T:
    nd = x.rank - 2
    attrs: dict = {}
    if mode == "nearest":
        attrs = dict(mode="nearest", coordinate_transformation_mode="asymmetric",
                     nearest_mode="floor")
    elif mode == "nearest-exact":
        attrs = dict(mode="nearest", coordinate_transformation_mode="half_pixel",
                     nearest_mode="round_prefer_ceil")
    elif mode in ("linear", "bilinear", "trilinear", "bicubic"):
        attrs = dict(mode="cubic" if mode == "bicubic" else "linear",
                     coordinate_transformation_mode="align_corners" if align_corners
                     else "pytorch_half_pixel")
        if mode == "bicubic":
            attrs["cubic_coeff_a"] = -0.75
    else:
        raise _Unsupported()
    if size is not None:
        size = _tuple(size, nd)
        lead = b.op("Slice", [b.shape_of(x), b.const([0], np.int64), b.const([2], np.int64)],
                    shape=(2,))
        sizes = b.op("Concat", [lead, b.const(size, np.int64)], dtype=np.int64, axis=0)
        return b.op("Resize", [x, "", "", sizes], **attrs)
    scales = [1.0, 1.0] + [float(s) for s in (scale if isinstance(scale, (tuple, list))
                                               else [scale] * nd)]
    return b.op("Resize", [x, "", b.const(np.array(scales, np.float32))], **attrs)


@_fn("interpolate", "upsample")
def _interpolate(b, node, args, kwargs):
    x = args[0]
    size, scale = arg(args, kwargs, 1, "size"), arg(args, kwargs, 2, "scale_factor")
    mode, ac = arg(args, kwargs, 3, "mode", "nearest"), arg(args, kwargs, 4, "align_corners")
    if kwargs.get("antialias") or (kwargs.get("recompute_scale_factor") and size is None):
        raise _Unsupported()
    return interpolate(b, x, size, scale, mode, ac)


_fn("upsample_nearest")(lambda b, node, args, kwargs: interpolate(
    b, args[0], arg(args, kwargs, 1, "size"), arg(args, kwargs, 2, "scale_factor"), "nearest",
    None))
_fn("upsample_bilinear")(lambda b, node, args, kwargs: interpolate(
    b, args[0], arg(args, kwargs, 1, "size"), arg(args, kwargs, 2, "scale_factor"), "bilinear",
    True))


@_fn("pad")
def _pad(b, node, args, kwargs):
    x, pad = args[0], list(arg(args, kwargs, 1, "pad"))
    mode, value = arg(args, kwargs, 2, "mode", "constant"), arg(args, kwargs, 3, "value")
    onnx_mode = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
                 "circular": "wrap" if b.opset >= 19 else None}.get(mode)
    if onnx_mode is None:
        raise _Unsupported()
    begins, ends = [0] * x.rank, [0] * x.rank
    for i in range(len(pad) // 2):      # pairs from the last dimension backwards
        begins[x.rank - 1 - i], ends[x.rank - 1 - i] = pad[2 * i], pad[2 * i + 1]
    ins = [x, b.i64_vec(begins + ends)]
    if mode == "constant":
        ins.append(_k(b, 0.0 if value is None else value, x))
    return b.op("Pad", ins, mode=onnx_mode)


@_fn("one_hot")
def _one_hot(b, node, args, kwargs):
    x, n = args[0], arg(args, kwargs, 1, "num_classes", -1)
    if n == -1:
        raise _Unsupported()     # the class count would come from the data
    values = b.const(np.array([0, 1], np.int64))
    return b.op("OneHot", [b.cast(x, np.int64), b.const([n], np.int64), values], axis=-1,
                dtype=np.int64)


# ------------------------------------------------------------------------------ distances, losses
@_fn("cosine_similarity")
def _cosine_similarity(b, node, args, kwargs):
    dt = _out_dtype(node)
    x, y = b.tensor(args[0], dt), b.tensor(args[1], dt)
    dim, eps = arg(args, kwargs, 2, "dim", 1), arg(args, kwargs, 3, "eps", 1e-8)
    rank = max(x.rank, y.rank)
    d = _norm(dim, rank)
    nx = b.op("Max", [vector_norm(b, x, 2, d, False), _k(b, eps, x)])
    ny = b.op("Max", [vector_norm(b, y, 2, d, False), _k(b, eps, x)])
    dot = reduce(b, "ReduceSum", b.op("Mul", [x, y]), d, False)
    return b.op("Div", [dot, b.op("Mul", [nx, ny])])


@_fn("pairwise_distance")
def _pairwise_distance(b, node, args, kwargs):
    dt = _out_dtype(node)
    x, y = b.tensor(args[0], dt), b.tensor(args[1], dt)
    p, eps = arg(args, kwargs, 2, "p", 2.0), arg(args, kwargs, 3, "eps", 1e-6)
    keep = arg(args, kwargs, 4, "keepdim", False)
    diff = b.op("Add", [b.op("Sub", [x, y]), _k(b, eps, x)])
    return vector_norm(b, diff, p, diff.rank - 1 if diff.rank else None, keep)


def _reduction(b: Builder, loss: T, how: str) -> T:
    if how == "none":
        return loss
    if how not in ("mean", "sum"):
        raise _Unsupported()
    return reduce(b, "ReduceMean" if how == "mean" else "ReduceSum", loss, None, False)


def _pointwise_loss(build):
    def tr(b, node, args, kwargs):
        dt = _out_dtype(node)
        x, t = b.tensor(args[0], dt), b.tensor(args[1], dt)
        how = kwargs.get("reduction", "mean")
        return _reduction(b, build(b, x, t, args, kwargs), how)
    return tr


def _sq(b, x, t, args, kwargs):
    d = b.op("Sub", [x, t])
    return b.op("Mul", [d, d])


def _smooth(b, x, t, args, kwargs, scale_by_beta=True):
    beta = kwargs.get("beta", kwargs.get("delta", 1.0))
    d = b.op("Abs", [b.op("Sub", [x, t])])
    small = b.op("Mul", [b.op("Mul", [d, d]), _k(b, 0.5 / beta if scale_by_beta else 0.5, x)])
    large = b.op("Sub", [d, _k(b, 0.5 * beta, x)])
    if not scale_by_beta:          # huber: delta * (|d| - delta/2)
        large = b.op("Mul", [large, _k(b, beta, x)])
    if beta == 0:
        return d
    return b.op("Where", [b.op("Less", [d, _k(b, beta, x)], dtype=np.bool_), small, large])


_fn("mse_loss")(_pointwise_loss(_sq))
_fn("l1_loss")(_pointwise_loss(lambda b, x, t, a, k: b.op("Abs", [b.op("Sub", [x, t])])))
_fn("smooth_l1_loss")(_pointwise_loss(_smooth))
_fn("huber_loss")(_pointwise_loss(lambda b, x, t, a, k: _smooth(b, x, t, a, k, False)))


def _bce(b, x, t, args, kwargs):
    # log terms clamped at -100, as ember's (and torch's) binary_cross_entropy
    lo = _k(b, -100.0, x)
    lx = b.op("Max", [b.op("Log", [x]), lo])
    l1x = b.op("Max", [b.op("Log", [b.op("Sub", [_k(b, 1.0, x), x])]), lo])
    loss = b.op("Neg", [b.op("Add", [b.op("Mul", [t, lx]),
                                     b.op("Mul", [b.op("Sub", [_k(b, 1.0, x), t]), l1x])])])
    w = arg(args, kwargs, 2, "weight")
    return b.op("Mul", [loss, w]) if isinstance(w, T) else loss


def _softplus_neg(b: Builder, x: T) -> T:
    """log(1 + exp(-x)) without overflow: max(-x, 0) + log(1 + exp(-|x|))."""
    m = b.op("Max", [b.op("Neg", [x]), _k(b, 0.0, x)])
    e = b.op("Exp", [b.op("Neg", [b.op("Abs", [x])])])
    return b.op("Add", [m, b.op("Log", [b.op("Add", [e, _k(b, 1.0, x)])])])


def _bce_logits(b, x, t, args, kwargs):
    pw = kwargs.get("pos_weight")
    sp = _softplus_neg(b, x)
    if isinstance(pw, T):
        coef = b.op("Add", [b.op("Mul", [b.op("Sub", [pw, _k(b, 1.0, x)]), t]), _k(b, 1.0, x)])
        sp = b.op("Mul", [coef, sp])
    loss = b.op("Add", [b.op("Mul", [b.op("Sub", [_k(b, 1.0, x), t]), x]), sp])
    w = arg(args, kwargs, 2, "weight")
    return b.op("Mul", [loss, w]) if isinstance(w, T) else loss


_fn("binary_cross_entropy")(_pointwise_loss(_bce))
_fn("binary_cross_entropy_with_logits")(_pointwise_loss(_bce_logits))


def _class_loss(op_type):
    def tr(b, node, args, kwargs):
        x, t = args[0], args[1]
        weight = arg(args, kwargs, 2, "weight")
        ignore = kwargs.get("ignore_index", -100)
        how = kwargs.get("reduction", "mean")
        if kwargs.get("label_smoothing", 0.0) or not np.issubdtype(t.dtype, np.integer) or \
                x.rank == 1:
            raise _Unsupported()    # probability targets / smoothing / unbatched: not here
        ins = [x, b.cast(t, np.int64)] + ([weight] if isinstance(weight, T) else [])
        return b.op(op_type, ins, reduction=how, ignore_index=int(ignore))
    return tr


_fn("cross_entropy")(_class_loss("SoftmaxCrossEntropyLoss"))
_fn("nll_loss")(_class_loss("NegativeLogLikelihoodLoss"))

