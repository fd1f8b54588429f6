"""Muon: momentum SGD whose update is orthogonalised by a Newton-Schulz iteration (Jordan et
al., 2024), for the 2-d weight matrices of hidden layers."""
from __future__ import annotations

import math

import numpy as np

from .optimizer import Optimizer, _check_lr, _closure_loss, _grads

__all__ = ["Muon"]

_NS_COEFFICIENTS = (3.4445, -4.775, 2.0315)

try:  # NumPy's bfloat16 comes from ml_dtypes (ember's bfloat16 dtype uses it too)
    from ml_dtypes import bfloat16 as _bf16
except ImportError:  # pragma: no cover - ml_dtypes is a dependency
    _bf16 = None


def _bf16_round(x) -> np.ndarray:
    """Values rounded to the nearest bfloat16, kept as float64 for the next product."""
    return np.asarray(x).astype(np.float32).astype(_bf16).astype(np.float64)


def _lerp(start, end, weight: float) -> np.ndarray:
    # the two-sided formula keeps lerp exact at both ends; torch's CPU kernel uses it with a
    # fused multiply-add, approximated here by one long-double evaluation
    start, end = np.asarray(start), np.asarray(end)
    w = np.longdouble(weight)
    diff = (end - start).astype(np.longdouble)
    if weight < 0.5:
        out = start.astype(np.longdouble) + w * diff
    else:
        out = end.astype(np.longdouble) - diff * np.longdouble(1.0 - weight)
    return out.astype(start.dtype)


def zeropower_via_newtonschulz(grad: np.ndarray, ns_coefficients, ns_steps: int,
                               eps: float) -> np.ndarray:
    """An approximately orthogonal matrix with grad's singular vectors (``U V^T`` with the
    singular values pushed to about 1) by ``ns_steps`` quintic Newton-Schulz iterations.

    NOTE [Muon in bfloat16]: torch runs the iteration in bfloat16. Here each product is
    computed in float64 and rounded to bfloat16, which reproduces torch's CPU bfloat16 results
    bit for bit on all but about 1 in 1000 random small matrices (where its float32 accumulation
    order rounds the other way), so trajectories follow torch's, not just approximately.
    """
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = (float(v) for v in ns_coefficients)
    x = _bf16_round(grad)
    tall = grad.shape[0] > grad.shape[1]
    if tall:
        x = x.T
    norm = _bf16_round(np.sqrt(np.sum(x * x)))
    x = _bf16_round(x / max(norm, _bf16_round(eps)))
    for _ in range(ns_steps):
        gram = _bf16_round(x @ x.T)
        poly = _bf16_round(b * gram + c * (gram @ gram))
        x = _bf16_round(a * x + poly @ x)
    return x.T if tall else x


def _adjusted_lr(lr: float, adjust_lr_fn, shape) -> float:
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * math.sqrt(max(1.0, rows / cols))   # same update RMS for any aspect ratio
    if adjust_lr_fn == "match_rms_adamw":
        return lr * 0.2 * math.sqrt(max(rows, cols))   # update RMS of AdamW's
    return lr


class Muon(Optimizer):
    r"""Muon, as ``torch.optim.Muon`` (2-d parameters only; use AdamW for the others).

    Each step: ``B = momentum * B + (1 - momentum) * g`` (a lerp), the update direction is
    ``lerp(g, B, momentum)`` with Nesterov else ``B``, orthogonalised by Newton-Schulz in
    bfloat16 (see NOTE [Muon in bfloat16]); then decoupled weight decay
    ``p *= 1 - lr * weight_decay`` and ``p -= adjusted_lr * update``, where ``adjust_lr_fn``
    "original" (the default) scales lr by ``sqrt(max(1, rows / cols))`` and "match_rms_adamw"
    by ``0.2 * sqrt(max(rows, cols))``.

    Args:
        params: 2-d parameters or parameter groups to optimize.
        lr (float): learning rate (default: 1e-3).
        weight_decay (float): decoupled weight decay (default: 0.1).
        momentum (float): momentum factor (default: 0.95).
        nesterov (bool): Nesterov momentum (default: True).
        ns_coefficients (tuple): the quintic's coefficients (a, b, c).
        eps (float): lower bound of the norm the update is divided by (default: 1e-7).
        ns_steps (int): Newton-Schulz iterations (default: 5).
        adjust_lr_fn (str or None): "original", "match_rms_adamw" or None ("original").

    Example:
        >>> import ember
        >>> w = ember.tensor([[3.0, 0.0], [0.0, 1.0]], requires_grad=True)
        >>> opt = ember.optim.Muon([w], lr=0.1, weight_decay=0.0)
        >>> w.grad = ember.tensor([[3.0, 0.0], [0.0, 1.0]])
        >>> opt.step()
        >>> [round(v, 2) for v in w.detach().diagonal().tolist()]
        [2.92, 0.89]
    """

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=_NS_COEFFICIENTS, eps=1e-7, ns_steps=5, adjust_lr_fn=None):
        _check_lr(lr)
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps,
                        adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    def step(self, closure=None):
        """Perform one optimization step; returns ``closure()``'s loss if a closure is given."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            lr, momentum = float(group["lr"]), float(group["momentum"])
            for p, g in _grads(group, "Muon"):
                state = self.state[p]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = p.grad.new_zeros(p.grad.shape)
                buf = state["momentum_buffer"]
                grad = g._data
                buf._data[...] = _lerp(buf._data, grad, 1.0 - momentum)
                buf._bump_version()
                direction = _lerp(grad, buf._data, momentum) if group["nesterov"] else buf._data
                update = zeropower_via_newtonschulz(direction, group["ns_coefficients"],
                                                    group["ns_steps"], group["eps"])
                step_lr = _adjusted_lr(lr, group["adjust_lr_fn"], p.shape)
                pa = p._data
                pa *= pa.dtype.type(1 - lr * float(group["weight_decay"]))
                # p - lr * u rounded once, as torch's fused multiply-add: u has 8 significant
                # bits, so the product is exact in long double before the one rounding to p's
                pa[...] = (pa.astype(np.longdouble)
                           - np.longdouble(step_lr) * update.astype(np.longdouble))
                p._bump_version()
        return loss
