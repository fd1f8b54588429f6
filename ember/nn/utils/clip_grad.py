"""Gradient clipping: clip_grad_norm_, clip_grad_value_ (and the pieces of the former)."""
from __future__ import annotations

import math
import warnings

import numpy as np

import ember

from ..._tensor import Tensor, _make
from ...autograd.grad_mode import no_grad

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm",
           "clip_grads_with_norm_"]


def _as_list(tensors):
    if isinstance(tensors, Tensor):
        return [tensors]
    return list(tensors)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The ``norm_type``-norm of all ``tensors`` together (as if concatenated)."""
    tensors = [t for t in _as_list(tensors) if t is not None]
    norm_type = float(norm_type)
    if not tensors:
        return ember.tensor(0.0)
    if norm_type == math.inf:
        total = max(float(np.max(np.abs(t._data), initial=0)) for t in tensors)
    elif norm_type == -math.inf:
        total = min(float(np.min(np.abs(t._data))) for t in tensors if t.numel())
    else:
        from ..functional._distance import _norm
        with no_grad():
            norms = [_norm(t.reshape(-1), norm_type, 0)._data.astype(np.float64)
                     for t in tensors]
        total = float(_norm(_make(np.array(norms)), norm_type, 0)._data)
    result = _make(np.asarray(total, tensors[0]._data.dtype))
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                           "`parameters` is non-finite, so it cannot be clipped. To disable this "
                           "error and scale the gradients by the non-finite norm anyway, set "
                           "`error_if_nonfinite=False`")
    return result


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the gradients by max_norm / (total_norm + 1e-6) when that is below 1."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    coef = float(max_norm) / (float(total_norm) + 1e-6)
    coef = min(coef, 1.0)
    with no_grad():
        for g in grads:
            g.mul_(coef)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Rescale the gradients in place so that their joint norm is at most ``max_norm``.

    Returns the total norm before clipping (a 0-d tensor). ``foreach`` is accepted and
    ignored.

    Example:
        >>> import ember
        >>> p = ember.nn.Parameter(ember.zeros(2))
        >>> p.grad = ember.tensor([3.0, 4.0])
        >>> ember.nn.utils.clip_grad_norm_([p], 1.0)
        tensor(5.)
    """
    params = _as_list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(params, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                   foreach=None):
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient elementwise to [-clip_value, clip_value], in place."""
    clip_value = float(clip_value)
    with no_grad():
        for p in _as_list(parameters):
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)
