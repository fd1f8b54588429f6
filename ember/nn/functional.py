"""``ember.nn.functional``: the stateless counterparts of the layers in ``ember.nn``.

Activations live in _functional_act.py, embeddings in _functional_embedding.py,
normalizations in _functional_norm.py, losses in _functional_loss.py (CTC in
_functional_ctc.py) and convolution / pooling / recurrent / attention / resizing functions in
_functional_b.py; all are re-exported here, so import them from this module.
"""
from __future__ import annotations

import warnings

import numpy as np

import ember

from .._backend import gemm, reusable_empty
from .._tensor import Tensor, _make
from ..amp._state import maybe_autocast
from ..autograd.function import Op
from ..autograd.grad_mode import _state, no_grad
from ..ops.linalg import rows_matmul
from ._functional_act import *  # noqa: F401,F403
from ._functional_act import __all__ as _act_all
from ._functional_embedding import *  # noqa: F401,F403
from ._functional_embedding import __all__ as _emb_all
from ._functional_loss import *  # noqa: F401,F403
from ._functional_loss import __all__ as _loss_all
from ._functional_norm import *  # noqa: F401,F403
from ._functional_norm import __all__ as _norm_all

__all__ = list(_act_all) + list(_emb_all) + list(_loss_all) + list(_norm_all) + [
    "linear", "bilinear", "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
    "feature_alpha_dropout", "normalize", "cosine_similarity", "pairwise_distance", "pdist",
    "cdist",
]


def _check_tensor(name, value, arg="input"):
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' must be Tensor, not {type(value).__name__}")


# ----------------------------------------------------------------------------- linear
class _Linear(Op):
    """y = x W^T + b in one node: one BLAS call forward, two (plus a sum) backward."""

    @staticmethod
    def forward(ctx, x, weight, bias=None):
        ctx.save_for_backward(x, weight)
        # (*, in) inputs as one GEMM: np.matmul would loop over the leading dims (GNMT's
        # (20, 32, 256) x (256, 2000) output layer: 20 thin GEMMs, 2.7x slower)
        y = rows_matmul(x, weight.T) if x.ndim > 2 else gemm(x, weight.T)
        if y.dtype != x.dtype:  # numpy computes bfloat16 products in float32
            y = y.astype(x.dtype)
        if bias is not None:
            y += bias
        return y

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        need = ctx.needs_input_grad
        gx = gw = gb = None
        n_out, n_in = weight.shape
        if need[0]:
            gx = grad.matmul(weight)                                  # dL/dx = G W
        if need[1]:
            gw = _linear_weight_grad(grad, x, n_out, n_in)
        if len(need) > 2 and need[2]:
            gb = grad.reshape(-1, n_out).sum(0)
        return gx, gw, gb


_Linear.__name__ = "Linear"  # grad_fn: LinearBackward0

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _linear_weight_grad(grad, x, n_out, n_in):
    """dL/dW = G^T X. Without create_graph it is one NumPy GEMM into a reused buffer (the
    result becomes weight.grad: NOTE [Reused buffers] in _backend.py); with it, ember
    ops, so that double backward works."""
    g, a = grad._data, x._data
    if _state.enabled or g.dtype != a.dtype or g.dtype not in _FLOATS:
        return grad.reshape(-1, n_out).t().matmul(x.reshape(-1, n_in))
    out = reusable_empty((n_out, n_in), g.dtype)
    np.matmul(g.reshape(-1, n_out).T, a.reshape(-1, n_in), out=out)
    return _make(out)


def linear(input, weight, bias=None):
    """x W^T + b.

    Shape: input (*, in_features); weight (out_features, in_features); bias (out_features,).

    Example:
        >>> import ember
        >>> ember.nn.functional.linear(ember.ones(2, 3), ember.ones(4, 3)).shape
        ember.Size([2, 4])
    """
    input, weight, bias = maybe_autocast("linear", input, weight, bias)
    _check_tensor("linear", input)
    _check_tensor("linear", weight, "weight")
    if weight.ndim not in (1, 2):
        raise RuntimeError(f"linear: expected a 1-D or 2-D weight, got shape "
                           f"{tuple(weight.shape)}")
    if input.ndim == 0:
        raise RuntimeError("linear: both arguments to linear need to be at least 1D, but the "
                           "input is 0D")
    if weight.ndim == 1:  # torch allows a vector weight: a dot product over the last dim
        out = input.matmul(weight)
        return out + bias if bias is not None else out
    n_in = weight.shape[1]
    if input.shape[-1] != n_in:
        rows = input.numel() // input.shape[-1] if input.shape[-1] else 0
        raise RuntimeError(f"linear: mat1 and mat2 shapes cannot be multiplied "
                           f"({rows}x{input.shape[-1]} and {n_in}x{weight.shape[0]}); got input "
                           f"of shape {tuple(input.shape)}, expected its last dim to be "
                           f"in_features={n_in}.")
    if input.dtype != weight.dtype or (bias is not None and bias.dtype != input.dtype):
        raise RuntimeError(f"linear: expected input, weight and bias to have the same dtype, "
                           f"got {input.dtype}, {weight.dtype}"
                           + (f" and {bias.dtype}" if bias is not None else "") +
                           "; convert with .to(dtype).")
    if bias is not None and tuple(bias.shape) not in ((weight.shape[0],), (1,), ()):
        raise RuntimeError(f"linear: bias of shape {tuple(bias.shape)} does not match "
                           f"out_features={weight.shape[0]}")
    return _Linear.apply(input, weight, bias)


def bilinear(input1, input2, weight, bias=None):
    """y_o = x1^T W_o x2 + b_o.

    Shape: input1 (*, in1), input2 (*, in2), weight (out, in1, in2), bias (out,).
    """
    _check_tensor("bilinear", input1, "input1")
    _check_tensor("bilinear", input2, "input2")
    if weight.ndim != 3:
        raise RuntimeError(f"bilinear(): weight must be three-dimensional, got shape "
                           f"{tuple(weight.shape)}")
    n_out, n1, n2 = weight.shape
    if input1.shape[-1] != n1:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got "
                           f"{input1.shape[-1]} but expected {n1}")
    if input2.shape[-1] != n2:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got "
                           f"{input2.shape[-1]} but expected {n2}")
    if tuple(input1.shape[:-1]) != tuple(input2.shape[:-1]):
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got "
                           f"{tuple(input1.shape[:-1])} and {tuple(input2.shape[:-1])}")
    lead = tuple(input1.shape[:-1])
    x1 = input1.reshape(-1, n1)
    x2 = input2.reshape(-1, n2)
    # (B, in1) @ (in1, out*in2) -> (B, out, in2), then contract in2 with x2
    t = x1.matmul(weight.permute(1, 0, 2).reshape(n1, n_out * n2)).reshape(-1, n_out, n2)
    y = (t * x2.unsqueeze(1)).sum(-1)
    if bias is not None:
        y = y + bias
    return y.reshape(lead + (n_out,))


# ----------------------------------------------------------------------------- dropout
class _Scale(Op):
    """y = x * m + c with fixed arrays m (a mask times the keep-scale) and c (alpha
    dropout)."""

    @staticmethod
    def forward(ctx, x, mult, add=None):
        ctx.mult = mult
        y = x * mult
        if add is not None:
            y = y + add
        return y.astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        return grad * _make(ctx.mult), None, None


_Scale.__name__ = "NativeDropout"


def _check_p(name, p):
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{name}: dropout probability has to be between 0 and 1, but got {p}")


def _keep_mask(shape, p, dtype):
    from ..ops.random import _gen
    keep = _gen(None).random(shape) >= p
    return keep.astype(dtype)


def _apply_dropout(input, mult, add, inplace):
    if inplace:
        if _state.enabled and input.requires_grad:
            return input.copy_(_Scale.apply(input.clone(), mult, add))
        with no_grad():
            input.copy_(_Scale.apply(input, mult, add))
        return input
    return _Scale.apply(input, mult, add)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability p and scale the rest by 1 / (1 - p) (training only).

    Exactly the identity (the same tensor) when ``training`` is False or p == 0.
    """
    _check_tensor("dropout", input)
    _check_p("dropout", p)
    if not training or p == 0 or input.numel() == 0:
        return input
    dt = input._data.dtype
    if p == 1:
        mult = np.zeros(input._data.shape, dt)
    else:
        mult = _keep_mask(input._data.shape, p, dt) * np.asarray(1.0 / (1.0 - p), dt)
    return _apply_dropout(input, mult, None, inplace)


def _feature_dropout(name, input, p, training, inplace, feature_dims):
    """Zero whole channels: one draw per (N, C) (or per C for unbatched input)."""
    _check_tensor(name, input)
    _check_p(name, p)
    if input.ndim not in (feature_dims + 1, feature_dims + 2):
        raise RuntimeError(f"{name}: Expected {feature_dims + 1}D or {feature_dims + 2}D input, "
                           f"but received a {input.ndim}D input of shape "
                           f"{tuple(input.shape)}.")
    if not training or p == 0 or input.numel() == 0:
        return input
    batched = input.ndim == feature_dims + 2
    lead = input.shape[:2] if batched else input.shape[:1]
    shape = tuple(lead) + (1,) * feature_dims
    dt = input._data.dtype
    if p == 1:
        mult = np.zeros(shape, dt)
    else:
        mult = _keep_mask(shape, p, dt) * np.asarray(1.0 / (1.0 - p), dt)
    return _apply_dropout(input, mult, None, inplace)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero entire channels of (N, C, L) or (C, L) input with probability p."""
    return _feature_dropout("dropout1d", input, p, training, inplace, 1)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero entire channels of (N, C, H, W) or (C, H, W) input with probability p.

    A 3-D input is treated as unbatched (C, H, W), as torch does since 2.0 (with a warning).
    """
    if isinstance(input, Tensor) and input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-"
                      "wise 1D dropout behavior is desired - input is interpreted as shape "
                      "(N, C, L), where C is the channel dim. This behavior will change in a "
                      "future release to interpret the input as one without a batch dimension, "
                      "i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, "
                      "please switch to using dropout1d instead.", UserWarning, stacklevel=2)
        return _feature_dropout("dropout2d", input, p, training, inplace, 1)
    return _feature_dropout("dropout2d", input, p, training, inplace, 2)


def dropout3d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout("dropout3d", input, p, training, inplace, 3)


_SELU_NEG_SAT = 1.7580993408473766  # -scale * alpha of SELU: where SELU saturates


def _alpha_dropout(name, input, p, training, inplace, feature):
    _check_tensor(name, input)
    _check_p(name, p)
    if not training or p == 0 or input.numel() == 0:
        return input
    dt = input._data.dtype
    if p == 1:
        return input * 0.0
    shape = input._data.shape
    if feature:
        shape = tuple(shape[:2]) + (1,) * (input.ndim - 2)
    keep = _keep_mask(shape, p, dt)
    # dropped units are set to SELU's saturation value; a, b restore zero mean, unit variance
    a = 1.0 / np.sqrt((_SELU_NEG_SAT ** 2 * p + 1) * (1 - p))
    add = ((keep - 1) * (_SELU_NEG_SAT * a) + _SELU_NEG_SAT * a * p).astype(dt)
    mult = (keep * a).astype(dt)
    return _apply_dropout(input, mult, add, inplace)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps SELU activations' zero mean and unit variance."""
    return _alpha_dropout("alpha_dropout", input, p, training, inplace, False)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of entire channels."""
    return _alpha_dropout("feature_alpha_dropout", input, p, training, inplace, True)


# ----------------------------------------------------------------------------- norms, distances
class _VectorNorm(Op):
    """The p-norm over ``dims``; the gradient is 0 (not NaN) where the norm is 0."""

    @staticmethod
    def forward(ctx, x, p, dims, keepdim):
        a = np.abs(x)
        if p == 2:
            n = np.sqrt(np.sum(x * x, axis=dims, keepdims=True))
        elif p == 1:
            n = np.sum(a, axis=dims, keepdims=True)
        elif p == np.inf:
            n = np.max(a, axis=dims, keepdims=True, initial=0)
        elif p == -np.inf:
            n = np.min(a, axis=dims, keepdims=True)
        elif p == 0:
            n = np.sum(x != 0, axis=dims, keepdims=True).astype(x.dtype)
        else:
            n = np.sum(a ** p, axis=dims, keepdims=True) ** (1.0 / p)
        n = n.astype(x.dtype, copy=False)
        ctx.p, ctx.dims, ctx.keepdim = p, dims, keepdim
        ctx.save_for_backward(x, n)
        return n if keepdim else np.squeeze(n, axis=dims)

    @staticmethod
    def backward(ctx, grad):
        x, n = ctx.saved_tensors
        p = ctx.p
        g = grad.reshape(n.shape)
        zero = n == 0
        safe = ember.where(zero, 1.0, n)
        if p == 2:
            gx = g * x / safe
        elif p == 1:
            gx = g * x.sign()
        elif p in (np.inf, -np.inf):  # split evenly between the tied extreme entries
            hit = (x.abs() == n).to(x.dtype)
            gx = g * x.sign() * hit / hit.sum(ctx.dims, keepdim=True)
        elif p == 0:
            gx = x * 0
        else:  # d ||x||_p / dx = sign(x) |x|^(p-1) / ||x||^(p-1)
            gx = g * x.sign() * x.abs().pow(p - 1) / safe.pow(p - 1)
        if p not in (1, 0):
            gx = ember.where(zero, 0.0, gx)
        return gx, None, None, None


_VectorNorm.__name__ = "LinalgVectorNorm"


def _norm(x, p, dim, keepdim=False):
    dims = tuple(sorted(d % x.ndim for d in ((dim,) if isinstance(dim, int) else dim))) \
        if x.ndim else ()
    return _VectorNorm.apply(x, float(p), dims, keepdim)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p over dim, eps)."""
    _check_tensor("normalize", input)
    denom = _norm(input, p, dim, keepdim=True).clamp(min=eps)
    result = input / denom
    if out is not None:
        return out.copy_(result)
    return result


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """(x1 / max(||x1||, eps)) . (x2 / max(||x2||, eps)) along ``dim`` (broadcasting).

    Like torch, the eps clamp limits the value but not the gradient of the norms.
    """
    _check_tensor("cosine_similarity", x1, "x1")
    _check_tensor("cosine_similarity", x2, "x2")
    try:
        shape = np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    except ValueError:
        raise RuntimeError(f"cosine_similarity: x1 of shape {tuple(x1.shape)} and x2 of shape "
                           f"{tuple(x2.shape)} do not broadcast") from None
    if tuple(x1.shape) != shape:
        x1 = x1.expand(shape)
    if tuple(x2.shape) != shape:
        x2 = x2.expand(shape)

    def clamped_norm(x):
        n = _norm(x, 2, dim, keepdim=True)
        return n + (n.clamp(min=eps) - n).detach()

    return ((x1 / clamped_norm(x1)) * (x2 / clamped_norm(x2))).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p over the last dim."""
    _check_tensor("pairwise_distance", x1, "x1")
    _check_tensor("pairwise_distance", x2, "x2")
    diff = x1 - x2 + eps
    if diff.ndim == 0:
        diff = diff.reshape(1)
    return _norm(diff, p, -1, keepdim)


class _Cdist2(Op):
    """Euclidean distances between rows via ||a||^2 + ||b||^2 - 2 a.b (one matmul)."""

    @staticmethod
    def forward(ctx, x1, x2):
        sq1 = np.sum(x1 * x1, axis=-1)[..., :, None]
        sq2 = np.sum(x2 * x2, axis=-1)[..., None, :]
        d2 = sq1 + sq2 - 2 * np.matmul(x1, np.swapaxes(x2, -1, -2))
        d = np.sqrt(np.maximum(d2, 0)).astype(x1.dtype, copy=False)
        ctx.save_for_backward(x1, x2, d)
        return d

    @staticmethod
    def backward(ctx, grad):
        x1, x2, d = ctx.saved_tensors
        # d d_ij / d x1_i = (x1_i - x2_j) / d_ij; W = G / D (0 where d = 0)
        w = ember.where(d == 0, 0.0, grad / ember.where(d == 0, 1.0, d))
        gx1 = x1 * w.sum(-1, keepdim=True) - w.matmul(x2)
        gx2 = x2 * w.sum(-2).unsqueeze(-1) - w.mT.matmul(x1)
        from ..ops.registry import sum_to
        return sum_to(gx1, x1.shape), sum_to(gx2, x2.shape)


_Cdist2.__name__ = "Cdist"


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """p-norm distance between each row of x1 (*, P, M) and each row of x2 (*, R, M)."""
    _check_tensor("cdist", x1, "x1")
    _check_tensor("cdist", x2, "x2")
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D, X2 "
                           f"got: {x2.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"cdist: X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError(f"cdist only supports non-negative p values, got {p}")
    if p == 2 and compute_mode != "donot_use_mm_for_euclid_dist":
        return _Cdist2.apply(x1, x2)
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    return _norm(diff, p, -1)


def pdist(input, p=2):
    """Distances between all pairs of rows of a 2-D input (upper triangle, row-major)."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    n = input.shape[0]
    i, j = np.triu_indices(n, 1)
    return _norm(input[_make(i)] - input[_make(j)], p, -1)



from . import _functional_b as _fb  # noqa: E402

__all__ += [n for n in getattr(_fb, "__all__", ()) if n not in __all__]
from ._functional_b import *  # noqa: E402,F401,F403
