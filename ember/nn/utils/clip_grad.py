"""Gradient clipping: clip_grad_norm_, clip_grad_value_ (and the pieces of the former)."""
from __future__ import annotations

import warnings

import numpy as np

import ember

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm",
           "clip_grads_with_norm_"]


def _as_list(tensors):
    if isinstance(tensors, Tensor):
        return [tensors]
    return list(tensors)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The ``norm_type``-norm of all ``tensors`` together, as if they were one vector.

    Each tensor's norm is taken in its own dtype, then the norm of those norms (in their
    promoted dtype), as torch does; an empty list gives ``tensor(0.)``. ``foreach`` is accepted
    and ignored. No graph is recorded.

    Args:
        tensors: a tensor or an iterable of tensors (typically gradients).
        norm_type: the order of the norm; ``inf`` takes the largest absolute value.
        error_if_nonfinite: raise RuntimeError when the total is nan or inf.

    Example:
        >>> import ember
        >>> ember.nn.utils.get_total_norm([ember.tensor([3.0]), ember.tensor([4.0])])
        tensor(5.)
    """
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return ember.tensor(0.0)
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise RuntimeError(f"get_total_norm: tensor {i} of the list is "
                               f"{type(t).__name__}; expected every entry to be a defined "
                               "Tensor (filter out parameters whose .grad is None).")
    with no_grad():
        norms = [ember.linalg.vector_norm(t, norm_type) for t in tensors]
        total = ember.linalg.vector_norm(ember.stack(norms), norm_type)
    if error_if_nonfinite and not np.isfinite(total._data):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                           "`parameters` is non-finite, so it cannot be clipped. To disable this "
                           "error and scale the gradients by the non-finite norm anyway, set "
                           "`error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the parameters' gradients in place by ``min(1, max_norm / (total_norm + 1e-6))``.

    ``total_norm`` is the norm the caller computed (``get_total_norm``); the factor is computed
    in its dtype, as torch does, and a nan/inf norm is not checked (nan scales to nan, inf to
    zero). Parameters without a gradient are skipped. Returns None.

    Example:
        >>> import ember
        >>> p = ember.nn.Parameter(ember.zeros(2))
        >>> p.grad = ember.tensor([3.0, 4.0])
        >>> ember.nn.utils.clip_grads_with_norm_([p], 1.0, ember.tensor(5.0))
        >>> p.grad
        tensor([0.6000, 0.8000])
    """
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    max_norm = float(max_norm)
    if not grads:
        return
    if not isinstance(total_norm, Tensor):
        raise TypeError(f"clip_grads_with_norm_: total_norm must be a Tensor (the result of "
                        f"get_total_norm); got {type(total_norm).__name__}.")
    with no_grad():
        coef = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
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
