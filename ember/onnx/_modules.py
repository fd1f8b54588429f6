"""ONNX translations of ember layers (call_module nodes). Keyed by class; subclasses of a
translated class use its translation."""
from __future__ import annotations

import numpy as np

import ember.nn as nn
import ember.nn.functional as F

from . import _indexing as _ix
from ._builder import Builder, T
from ._functions import FUNCTIONS, _Unsupported, clip, flatten, gelu, linear, silu
from ._indexing import conv_transpose
from ._nn import attention, layer_norm

MODULES: dict = {}


def _reg(*names):
    """Register a translation for the ember.nn classes called ``names`` (those that exist)."""
    def deco(fn):
        for n in names:
            c = getattr(nn, n, None)
            if c is not None:
                MODULES[c] = fn
        return fn
    return deco


def _p(b: Builder, m, name: str, path: str):
    t = getattr(m, name, None)
    return None if t is None else b.param(t, f"{path}.{name}" if path else name)


def _pair(v, n=2):
    return list(v) if isinstance(v, (tuple, list)) else [v] * n


@_reg("Linear")
def _linear(b, m, path, x):
    return linear(b, x, _p(b, m, "weight", path), _p(b, m, "bias", path))


@_reg("Conv1d", "Conv2d", "Conv3d")
def _conv(b, m, path, x):
    nd = x.rank - 2
    if m.padding_mode != "zeros":
        raise _Unsupported()
    k = list(m.kernel_size)
    dil = _pair(m.dilation, nd)
    if isinstance(m.padding, str):
        if m.padding == "valid":
            pads = [0] * (2 * nd)
        else:   # "same": total padding dil*(k-1), the extra one at the end
            tot = [d * (kk - 1) for d, kk in zip(dil, k, strict=True)]
            pads = [t // 2 for t in tot] + [t - t // 2 for t in tot]
    else:
        p = _pair(m.padding, nd)
        pads = p + p
    ins = [x, _p(b, m, "weight", path)]
    if m.bias is not None:
        ins.append(_p(b, m, "bias", path))
    return b.op("Conv", ins, kernel_shape=k, strides=_pair(m.stride, nd), pads=pads,
                dilations=dil, group=m.groups)


@_reg("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d")
def _conv_transpose(b, m, path, x, output_size=None):
    if m.padding_mode != "zeros" or output_size is not None:
        raise _Unsupported()
    return conv_transpose(b, x, _p(b, m, "weight", path), _p(b, m, "bias", path), m.stride,
                          m.padding, m.output_padding, m.groups, m.dilation)


_reg("PixelShuffle")(lambda b, m, path, x: _ix._pixel_shuffle(b, None, (x, m.upscale_factor),
                                                                {}))
_reg("PixelUnshuffle")(lambda b, m, path, x: _ix._pixel_unshuffle(
    b, None, (x, m.downscale_factor), {}))


@_reg("BatchNorm1d", "BatchNorm2d", "BatchNorm3d")
def _batchnorm(b, m, path, x):
    if m.training or m.running_mean is None:
        raise _Unsupported()   # batch statistics: export in eval mode
    c = m.num_features
    scale = _p(b, m, "weight", path) if m.affine else b.const(np.ones(c, np.float32))
    bias = _p(b, m, "bias", path) if m.affine else b.const(np.zeros(c, np.float32))
    y = b.op("BatchNormalization", [x, scale, bias, _p(b, m, "running_mean", path),
                                    _p(b, m, "running_var", path)], epsilon=float(m.eps))
    return y


@_reg("LayerNorm")
def _layernorm(b, m, path, x):
    return layer_norm(b, x, m.normalized_shape, _p(b, m, "weight", path),
                      _p(b, m, "bias", path), m.eps)


_reg("ReLU")(lambda b, m, path, x: b.op("Relu", [x]))
_reg("ReLU6")(lambda b, m, path, x: clip(b, x, 0.0, 6.0))
_reg("Sigmoid")(lambda b, m, path, x: b.op("Sigmoid", [x]))
_reg("Tanh")(lambda b, m, path, x: b.op("Tanh", [x]))
_reg("SiLU")(lambda b, m, path, x: silu(b, x))
_reg("GELU")(lambda b, m, path, x: gelu(b, x, m.approximate))
_reg("LeakyReLU")(lambda b, m, path, x: b.op("LeakyRelu", [x], alpha=float(m.negative_slope)))
_reg("Hardtanh")(lambda b, m, path, x: clip(b, x, m.min_val, m.max_val))
_reg("Identity")(lambda b, m, path, x, *a, **k: b.op("Identity", [x]))


@_reg("Softmax", "LogSoftmax")
def _softmax(b, m, path, x):
    if m.dim is None:
        raise _Unsupported()
    op = "Softmax" if isinstance(m, nn.Softmax) else "LogSoftmax"
    return b.op(op, [x], axis=m.dim % x.rank)


@_reg("Dropout", "Dropout1d", "Dropout2d", "AlphaDropout")
def _dropout(b, m, path, x):
    if m.training and m.p > 0:
        raise _Unsupported()
    return b.op("Identity", [x])


@_reg("Flatten")
def _flatten(b, m, path, x):
    return flatten(b, x, m.start_dim, m.end_dim)


@_reg("MaxPool1d", "MaxPool2d")
def _maxpool(b, m, path, x):
    nd = x.rank - 2
    if m.return_indices:
        raise _Unsupported()
    k = _pair(m.kernel_size, nd)
    s = _pair(m.stride if m.stride is not None else m.kernel_size, nd)
    p = _pair(m.padding, nd)
    return b.op("MaxPool", [x], kernel_shape=k, strides=s, pads=p + p,
                dilations=_pair(m.dilation, nd), ceil_mode=int(m.ceil_mode))


@_reg("AvgPool1d", "AvgPool2d")
def _avgpool(b, m, path, x):
    nd = x.rank - 2
    if getattr(m, "divisor_override", None):
        raise _Unsupported()
    k = _pair(m.kernel_size, nd)
    s = _pair(m.stride if m.stride is not None else m.kernel_size, nd)
    p = _pair(m.padding, nd)
    return b.op("AveragePool", [x], kernel_shape=k, strides=s, pads=p + p,
                ceil_mode=int(m.ceil_mode), count_include_pad=int(m.count_include_pad))


@_reg("AdaptiveAvgPool1d", "AdaptiveAvgPool2d")
def _adaptive_avg(b, m, path, x):
    nd = x.rank - 2
    out = _pair(m.output_size, nd)
    spatial = list(x.shape[2:])
    if all(o == 1 for o in out):
        return b.op("GlobalAveragePool", [x])
    if any(s is None for s in spatial) or any(o is None or s % o for s, o in
                                              zip(spatial, out, strict=True)):
        raise _Unsupported()   # only evenly dividing windows are a plain AveragePool
    k = [s // o for s, o in zip(spatial, out, strict=True)]
    return b.op("AveragePool", [x], kernel_shape=k, strides=k)


@_reg("Embedding")
def _embedding(b, m, path, x):
    if m.max_norm is not None:
        raise _Unsupported()
    return b.op("Gather", [_p(b, m, "weight", path), b.cast(x, np.int64)], axis=0)


# ------------------------------------------------------------------------------ recurrent
def _reorder_gates(w: np.ndarray, hidden: int) -> np.ndarray:
    """ember/torch LSTM gate order (i, f, g, o) -> ONNX's (i, o, f, c)."""
    i, f, g, o = (w[k * hidden:(k + 1) * hidden] for k in range(4))
    return np.concatenate([i, o, f, g], axis=0)


@_reg("LSTM")
def _lstm(b, m, path, x, hx=None):
    if getattr(m, "proj_size", 0):
        raise _Unsupported()
    H = m.hidden_size
    dirs = 2 if m.bidirectional else 1
    if m.batch_first:
        x = b.op("Transpose", [x], perm=[1, 0, 2])
    seq = x
    h_all, c_all = [], []
    h0 = c0 = None
    if hx is not None:
        h0, c0 = hx
    for layer in range(m.num_layers):
        Ws, Rs, Bs = [], [], []
        for d in range(dirs):
            sfx = f"_l{layer}" + ("_reverse" if d else "")
            w_ih = getattr(m, "weight_ih" + sfx).detach().numpy()
            w_hh = getattr(m, "weight_hh" + sfx).detach().numpy()
            Ws.append(_reorder_gates(w_ih, H))
            Rs.append(_reorder_gates(w_hh, H))
            if m.bias:
                b_ih = getattr(m, "bias_ih" + sfx).detach().numpy()
                b_hh = getattr(m, "bias_hh" + sfx).detach().numpy()
                Bs.append(np.concatenate([_reorder_gates(b_ih, H), _reorder_gates(b_hh, H)]))
            else:
                Bs.append(np.zeros(8 * H, dtype=w_ih.dtype))
        W = b.array_param(np.stack(Ws), f"{path}.W_l{layer}")
        R = b.array_param(np.stack(Rs), f"{path}.R_l{layer}")
        B = b.array_param(np.stack(Bs), f"{path}.B_l{layer}")
        init = ["", ""]
        if h0 is not None:
            sl = [dirs * layer, dirs * (layer + 1)]
            starts, ends = b.const([sl[0]], np.int64), b.const([sl[1]], np.int64)
            init = [b.op("Slice", [h0, starts, ends]), b.op("Slice", [c0, starts, ends])]
        y, h, c = b.op("LSTM", [seq, W, R, B, "", init[0], init[1]], outputs=3,
                       hidden_size=H, direction="bidirectional" if dirs == 2 else "forward")
        # Y is (seq, dirs, batch, H): put directions next to features
        y = b.op("Transpose", [y], perm=[0, 2, 1, 3])
        seq = b.op("Reshape", [y, b.const([0, 0, dirs * H], np.int64)])
        h_all.append(h)
        c_all.append(c)
    out = b.op("Transpose", [seq], perm=[1, 0, 2]) if m.batch_first else seq
    h_n = h_all[0] if len(h_all) == 1 else b.op("Concat", h_all, axis=0)
    c_n = c_all[0] if len(c_all) == 1 else b.op("Concat", c_all, axis=0)
    return out, (h_n, c_n)


@_reg("GRU")
def _gru(b, m, path, x, hx=None):
    H = m.hidden_size
    dirs = 2 if m.bidirectional else 1
    if m.batch_first:
        x = b.op("Transpose", [x], perm=[1, 0, 2])
    seq, h_all = x, []

    def reorder(w):       # (r, z, n) -> ONNX (z, r, h)
        r, z, n = (w[k * H:(k + 1) * H] for k in range(3))
        return np.concatenate([z, r, n], axis=0)
    for layer in range(m.num_layers):
        Ws, Rs, Bs = [], [], []
        for d in range(dirs):
            sfx = f"_l{layer}" + ("_reverse" if d else "")
            Ws.append(reorder(getattr(m, "weight_ih" + sfx).detach().numpy()))
            Rs.append(reorder(getattr(m, "weight_hh" + sfx).detach().numpy()))
            if m.bias:
                Bs.append(np.concatenate([reorder(getattr(m, "bias_ih" + sfx).detach().numpy()),
                                          reorder(getattr(m, "bias_hh" + sfx).detach().numpy())]))
            else:
                Bs.append(np.zeros(6 * H, dtype=Ws[-1].dtype))
        init = ""
        if hx is not None:
            init = b.op("Slice", [hx, b.const([dirs * layer], np.int64),
                                  b.const([dirs * (layer + 1)], np.int64)])
        y, h = b.op("GRU", [seq, b.array_param(np.stack(Ws), f"{path}.W_l{layer}"),
                            b.array_param(np.stack(Rs), f"{path}.R_l{layer}"),
                            b.array_param(np.stack(Bs), f"{path}.B_l{layer}"), "", init],
                    outputs=2, hidden_size=H, linear_before_reset=1,
                    direction="bidirectional" if dirs == 2 else "forward")
        y = b.op("Transpose", [y], perm=[0, 2, 1, 3])
        seq = b.op("Reshape", [y, b.const([0, 0, dirs * H], np.int64)])
        h_all.append(h)
    out = b.op("Transpose", [seq], perm=[1, 0, 2]) if m.batch_first else seq
    return out, (h_all[0] if len(h_all) == 1 else b.op("Concat", h_all, axis=0))


# ------------------------------------------------------------------------------ attention
def mha(b: Builder, m, path, query, key, value, key_padding_mask=None, need_weights=True,
        attn_mask=None, average_attn_weights=True, is_causal=False):
    """nn.MultiheadAttention as MatMul/Softmax (eval: no dropout)."""
    if m.bias_k is not None or m.add_zero_attn or (m.training and m.dropout > 0):
        raise _Unsupported()
    E, nh = m.embed_dim, m.num_heads
    hd = E // nh
    if not m.batch_first:            # (L, N, E) -> (N, L, E)
        query, key, value = (b.op("Transpose", [t], perm=[1, 0, 2]) for t in
                             (query, key, value))
    if m._qkv_same_embed_dim:
        w = m.in_proj_weight.detach().numpy()
        ws = [b.array_param(w[i * E:(i + 1) * E], f"{path}.in_proj_weight_{i}")
              for i in range(3)]
    else:
        ws = [_p(b, m, n, path) for n in ("q_proj_weight", "k_proj_weight", "v_proj_weight")]
    bs: list = [None] * 3
    if m.in_proj_bias is not None:
        bias = m.in_proj_bias.detach().numpy()
        bs = [b.array_param(bias[i * E:(i + 1) * E], f"{path}.in_proj_bias_{i}")
              for i in range(3)]

    def heads(t, w, bias):
        y = linear(b, t, w, bias)                                   # (N, L, E)
        y = b.op("Reshape", [y, b.const([0, 0, nh, hd], np.int64)])
        y = b.op("Transpose", [y], perm=[0, 2, 1, 3])               # (N, nh, L, hd)
        y.shape = (None, nh, None, hd)
        return y
    q, k, v = (heads(t, w, bb) for t, w, bb in zip((query, key, value), ws, bs, strict=True))
    mask = None
    if attn_mask is not None:
        mask = _mha_mask(b, attn_mask, q.dtype)
    if key_padding_mask is not None:
        kpm = b.op("Unsqueeze", [key_padding_mask, b.const([1, 2], np.int64)])  # (N,1,1,S)
        kpm = _mha_mask(b, kpm, q.dtype)
        mask = kpm if mask is None else b.op("Add", [mask, kpm])
    ctx = attention(b, q, k, v, mask, is_causal and attn_mask is None)
    ctx = b.op("Transpose", [ctx], perm=[0, 2, 1, 3])
    ctx = b.op("Reshape", [ctx, b.const([0, 0, E], np.int64)])
    out = linear(b, ctx, _p(b, m.out_proj, "weight", path + ".out_proj"),
                 _p(b, m.out_proj, "bias", path + ".out_proj"))
    if not m.batch_first:
        out = b.op("Transpose", [out], perm=[1, 0, 2])
    if need_weights:
        raise _Unsupported()     # the averaged weights output; call with need_weights=False
    return out, None


def _mha_mask(b, mask: T, dtype):
    """Boolean masks mark positions NOT allowed to attend: -inf there, 0 elsewhere."""
    if mask.dtype == np.bool_:
        return b.op("Where", [mask, b.tensor(-np.inf, dtype), b.tensor(0.0, dtype)],
                    dtype=dtype)
    return b.cast(mask, dtype)


_reg("MultiheadAttention")(mha)


@_reg("TransformerEncoderLayer")
def _encoder_layer(b, m, path, src, src_mask=None, src_key_padding_mask=None,
                   is_causal=False):
    act = m.activation

    def ff(x):
        h = _linear(b, m.linear1, path + ".linear1", x)
        if isinstance(act, nn.Module):
            h = MODULES[type(act)](b, act, path + ".activation", h)
        elif getattr(act, "__name__", "") == "relu":
            h = b.op("Relu", [h])
        elif getattr(act, "__name__", "") == "gelu":
            h = gelu(b, h)
        else:
            raise _Unsupported()
        return _linear(b, m.linear2, path + ".linear2", h)

    def sa(x):
        return mha(b, m.self_attn, path + ".self_attn", x, x, x, src_key_padding_mask, False,
                   src_mask, True, is_causal)[0]

    def norm(mod, name, x):
        return _layernorm(b, mod, f"{path}.{name}", x)
    x = src
    if m.norm_first:
        x = b.op("Add", [x, sa(norm(m.norm1, "norm1", x))])
        x = b.op("Add", [x, ff(norm(m.norm2, "norm2", x))])
    else:
        x = norm(m.norm1, "norm1", b.op("Add", [x, sa(x)]))
        x = norm(m.norm2, "norm2", b.op("Add", [x, ff(x)]))
    return x


# ------------------------------------------------------------------------------ via functional
# Layers that bind their function at import (``_fn = F.hardswish``) or check the input's shape
# in Python (GroupNorm, InstanceNorm) are not traced through: they are leaves translated by the
# functional translation with the layer's settings as arguments.
def _via(fname, *attrs, **params):
    def tr(b, m, path, x):
        fn = FUNCTIONS[getattr(F, fname)]
        args = [x] + [getattr(m, a) for a in attrs]
        args += [_p(b, m, p, path) if getattr(m, p, None) is not None else None
                 for p in params.get("tensors", ())]
        return fn(b, None, tuple(args), {})
    return tr


for _cls, _fname, _attrs in (("Hardswish", "hardswish", ()), ("Hardsigmoid", "hardsigmoid", ()),
                             ("Mish", "mish", ()), ("SELU", "selu", ()),
                             ("Softsign", "softsign", ()), ("LogSigmoid", "logsigmoid", ()),
                             ("Tanhshrink", "tanhshrink", ()), ("CELU", "celu", ("alpha",)),
                             ("Softshrink", "softshrink", ("lambd",)),
                             ("Hardshrink", "hardshrink", ("lambd",)),
                             ("Threshold", "threshold", ("threshold", "value")),
                             ("GLU", "glu", ("dim",)), ("Softmin", "softmin", ("dim",))):
    _reg(_cls)(_via(_fname, *_attrs))
_reg("PReLU")(_via("prelu", tensors=("weight",)))


@_reg("GroupNorm")
def _group_norm_module(b, m, path, x):
    return FUNCTIONS[F.group_norm](b, None, (x, m.num_groups, _p(b, m, "weight", path),
                                             _p(b, m, "bias", path), m.eps), {})


@_reg("InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d")
def _instance_norm_module(b, m, path, x):
    use_batch = m.training or not m.track_running_stats
    return FUNCTIONS[F.instance_norm](b, None, (
        x, _p(b, m, "running_mean", path), _p(b, m, "running_var", path),
        _p(b, m, "weight", path), _p(b, m, "bias", path), use_batch, m.momentum, m.eps), {})
