"""Dropout of ``ember.nn.functional``: dropout, dropout1d/2d/3d, alpha and feature alpha
dropout. The masks are drawn here; the op (``NativeDropout``) multiplies by them."""
from __future__ import annotations

import warnings

import numpy as np

from ..._tensor import Tensor
from ...autograd.grad_mode import _state, no_grad
from ...ops.nn.dropout import NativeDropout
from ...ops.random import _gen
from ._utils import _check_tensor

__all__ = [
    "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
]



def _check_p(name, p):
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{name}: dropout probability has to be between 0 and 1, but got {p}")


def _keep_mask(shape, p, dtype):
    keep = _gen(None).random(shape) >= p
    return keep.astype(dtype)


def _apply_dropout(input, mult, add, inplace):
    if inplace:
        if _state.enabled and input.requires_grad:
            return input.copy_(NativeDropout.apply(input.clone(), mult, add))
        with no_grad():
            input.copy_(NativeDropout.apply(input, mult, add))
        return input
    return NativeDropout.apply(input, mult, add)


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
    if isinstance(input, Tensor) and not 3 <= input.ndim <= 4:
        return _deprecated_dims_dropout("dropout2d", input, p, training, inplace, 2)
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
    """Zero entire channels of (N, C, D, H, W) or (C, D, H, W) input with probability p."""
    if isinstance(input, Tensor) and not 4 <= input.ndim <= 5:
        return _deprecated_dims_dropout("dropout3d", input, p, training, inplace, 3)
    return _feature_dropout("dropout3d", input, p, training, inplace, 3)


def _deprecated_dims_dropout(name, input, p, training, inplace, spatial):
    """torch accepts dropout2d/3d on inputs with fewer dims than a (C, *spatial) sample or more
    than a batch of them (a 5-D input to dropout2d), warns that it is deprecated, and drops per
    (dim 0, dim 1) entry over the remaining dims."""
    warnings.warn(f"{name}: Received a {input.ndim}-D input to {name}, which is deprecated and "
                  f"will result in an error in a future release. To retain the behavior and "
                  f"silence this warning, please use dropout instead. Note that {name} exists "
                  f"to provide channel-wise dropout on inputs with {spatial} spatial dimensions, "
                  f"a channel dimension, and an optional batch dimension (i.e. {spatial + 1}D "
                  f"or {spatial + 2}D inputs).", UserWarning, stacklevel=3)
    if input.ndim < 2 and (not training or p == 0):  # torch: nothing to drop, no check
        _check_p(name, p)
        return input
    if input.ndim < 2:
        raise RuntimeError(f"{name}: Feature dropout requires at least 2 dimensions in the "
                           f"input; got shape {tuple(input.shape)}, expected (N, C, ...).")
    return _feature_dropout(name, input, p, training, inplace, input.ndim - 2)


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
