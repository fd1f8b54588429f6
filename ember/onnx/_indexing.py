"""ONNX translations of indexing and creation calls (the registry is in _functions.py)."""
from __future__ import annotations

import operator

import numpy as np

import ember.nn.functional as F

from ._builder import INT64_MAX, Builder, T
from ._functions import _e, _norm, _out_dtype, _reg, _shape_args, _Unsupported


# ------------------------------------------------------------------------------ indexing
@_reg(operator.getitem)
def _getitem(b, node, args, kwargs):
    x, idx = args
    if not isinstance(x, T):
        return x[idx]
    return index(b, x, idx)


def index(b: Builder, x: T, idx) -> T:
    """``x[idx]`` for ints, slices (static or dynamic bounds), None, Ellipsis and one index
    tensor."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    n_real = sum(1 for i in idx if i is not None and i is not Ellipsis)
    if Ellipsis in idx:
        k = idx.index(Ellipsis)
        idx = idx[:k] + (slice(None),) * (x.rank - n_real) + idx[k + 1:]
    starts, ends, axes, steps, squeeze, unsq, gathers = [], [], [], [], [], [], []
    dim = 0
    out_pos = 0
    for i in idx:
        if i is None:
            unsq.append(out_pos)
            out_pos += 1
            continue
        if isinstance(i, slice):
            if not (i.start is None and i.stop is None and i.step in (None, 1)):
                starts.append(0 if i.start is None else i.start)
                ends.append(INT64_MAX if i.stop is None else i.stop)
                axes.append(dim)
                steps.append(1 if i.step is None else i.step)
            out_pos += 1
        elif isinstance(i, T):
            gathers.append((dim, i))
            out_pos += 1
        else:
            starts.append(i)
            ends.append(INT64_MAX if i == -1 else i + 1)
            axes.append(dim)
            steps.append(1)
            squeeze.append(dim)
        dim += 1
    y = x
    if axes:
        y = b.op("Slice", [y, b.i64_vec(starts), b.i64_vec(ends), b.const(axes, np.int64),
                           b.const(steps, np.int64)])
    if len(gathers) == 1 and gathers[0][1].dtype == np.bool_:
        if squeeze or unsq:
            raise _Unsupported()
        return _mask_select(b, y, gathers[0][0], gathers[0][1])
    for d, t in gathers:
        if len(gathers) > 1 or t.dtype == np.bool_:
            raise _Unsupported()
        y = b.op("Gather", [y, b.cast(t, np.int64)], axis=d - sum(1 for s in squeeze if s < d))
    if squeeze:
        y = b.op("Squeeze", [y, b.const(squeeze, np.int64)])
    if unsq:
        y = b.op("Unsqueeze", [y, b.const(unsq, np.int64)])
    return y


def _mask_select(b: Builder, x: T, d: int, mask: T) -> T:
    """``x[..., mask]`` with a boolean mask over dims d .. d+k-1 of x: those dims flatten into
    one, which Compress filters by the flattened mask (the result's length is data-dependent)."""
    k = mask.rank
    if x.rank < d + k:
        raise _Unsupported()
    dims = b.dims(x)
    flat = b.op("Reshape", [x, b.i64_vec(dims[:d] + [-1] + dims[d + k:])])
    keep = b.op("Reshape", [mask, b.const([-1], np.int64)], dtype=np.bool_)
    out = b.op("Compress", [flat, keep], axis=d)
    out.ragged = d
    return out


@_reg(_e("cumsum"), methods=("cumsum",))
def _cumsum(b, node, args, kwargs):
    x = args[0]
    dim = args[1] if len(args) > 1 else kwargs["dim"]
    x = b.cast(x, _out_dtype(node))
    if x.rank == 0:  # a 0-d input is its own running sum
        return b.op("Identity", [x])
    return b.op("CumSum", [x, b.const(_norm(dim, x.rank), np.int64)])


def _pixel_rank4(b: Builder, x: T, body):
    """Run a 4-D (N, C, H, W) translation on a (*, C, H, W) input (leading dims flattened)."""
    if x.rank == 4:
        return body(x)
    if x.rank < 3:
        raise _Unsupported()
    dims = b.dims(x)
    y = body(b.op("Reshape", [x, b.i64_vec([-1] + dims[-3:])], shape=(None, None, None, None)))
    tail = b.op("Shape", [y], dtype=np.int64, shape=(3,), start=1)   # (C', H', W')
    lead = b.i64_vec(dims[:-3]) if dims[:-3] else None
    shape = tail if lead is None else b.op("Concat", [lead, tail], dtype=np.int64, axis=0)
    return b.op("Reshape", [y, shape])


@_reg(_e("pixel_shuffle"))
def _pixel_shuffle(b, node, args, kwargs):
    x = args[0]
    r = int(args[1] if len(args) > 1 else kwargs["upscale_factor"])
    # channel c*r*r + i*r + j moves to (h*r + i, w*r + j): ONNX's column-row-depth order
    return _pixel_rank4(b, x, lambda y: b.op("DepthToSpace", [y], blocksize=r, mode="CRD"))


@_reg(_e("pixel_unshuffle"))
def _pixel_unshuffle(b, node, args, kwargs):
    x = args[0]
    r = int(args[1] if len(args) > 1 else kwargs["downscale_factor"])

    def body(y):
        # SpaceToDepth numbers its channels (i, j, c); ember's (and torch's) order is (c, i, j)
        s2d = b.op("SpaceToDepth", [y], blocksize=r, shape=(None, None, None, None))
        hw = b.op("Shape", [s2d], dtype=np.int64, shape=(2,), start=2)
        # Reshape's 0 keeps the input's size at that position (the batch)
        split = b.op("Reshape", [s2d, b.op("Concat", [b.const([0, r * r, -1], np.int64), hw],
                                           dtype=np.int64, axis=0)])
        perm = b.op("Transpose", [split], perm=[0, 2, 1, 3, 4])
        return b.op("Reshape", [perm, b.op("Concat", [b.const([0, -1], np.int64), hw],
                                           dtype=np.int64, axis=0)])
    return _pixel_rank4(b, x, body)


def conv_transpose(b: Builder, x: T, w: T, bias, stride, padding, output_padding, groups,
                   dilation) -> T:
    """ConvTranspose with ember's (in, out/groups, *kernel) weight, which is ONNX's layout."""
    nd = x.rank - 2
    if nd < 1 or isinstance(padding, str) or w.shape is None or None in w.shape[2:]:
        raise _Unsupported()

    def n(v):
        return [int(e) for e in v] if isinstance(v, (tuple, list)) else [int(v)] * nd
    pads = n(padding)
    ins = [x, w] + ([bias] if bias is not None else [])
    return b.op("ConvTranspose", ins, kernel_shape=[int(k) for k in w.shape[2:]],
                strides=n(stride), pads=pads + pads, output_padding=n(output_padding),
                dilations=n(dilation), group=int(groups))


def _conv_transpose_tr(b, node, args, kwargs):
    names = ("input", "weight", "bias", "stride", "padding", "output_padding", "groups",
             "dilation")
    v = dict(zip(names, args, strict=False))
    v.update(kwargs)
    return conv_transpose(b, v["input"], v["weight"], v.get("bias"), v.get("stride", 1),
                          v.get("padding", 0), v.get("output_padding", 0), v.get("groups", 1),
                          v.get("dilation", 1))


_reg(getattr(F, "conv_transpose1d", None), getattr(F, "conv_transpose2d", None),
     getattr(F, "conv_transpose3d", None))(_conv_transpose_tr)


@_reg(F.embedding, _e("embedding"))
def _embedding(b, node, args, kwargs):
    return b.op("Gather", [args[1], b.cast(args[0], np.int64)], axis=0)


@_reg(_e("index_select"), methods=("index_select",))
def _index_select(b, node, args, kwargs):
    x, dim, idx = args[0], args[1], args[2]
    return b.op("Gather", [x, b.cast(idx, np.int64)], axis=_norm(dim, x.rank))


# ------------------------------------------------------------------------------ creation
def _creation(fill):
    def tr(b, node, args, kwargs):
        shape = _shape_args(args)
        dt = _out_dtype(node)
        value = b.onnx.numpy_helper.from_array(np.array([fill], dtype=dt))
        return b.op("ConstantOfShape", [b.i64_vec(shape)], dtype=dt, value=value)
    return tr


_reg(_e("ones"))(_creation(1))
_reg(_e("zeros"))(_creation(0))


@_reg(_e("arange"))
def _arange(b, node, args, kwargs):
    if len(args) == 1:
        start, end, step = 0, args[0], 1
    else:
        start, end = args[0], args[1]
        step = args[2] if len(args) > 2 else kwargs.get("step", 1)
    dt = _out_dtype(node)
    return b.op("Range", [b.tensor(start, dt), b.tensor(end, dt), b.tensor(step, dt)],
                dtype=dt)
