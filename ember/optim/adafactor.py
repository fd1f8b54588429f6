"""Adafactor (Shazeer & Stern, 2018): Adam-like steps with a factored second moment."""

from __future__ import annotations

import numpy as np

from .optimizer import Optimizer, _check_lr, _closure_loss, _grads, _increment, _step_tensor

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """Adafactor, as ``torch.optim.Adafactor``.

    For a matrix-shaped gradient it keeps only row and column averages of the squared gradient
    (memory O(n + m) instead of O(nm)) and estimates the second moment as their outer product;
    vectors keep a full average. The step is relative to the parameter's RMS and clipped by the
    update's RMS (``d``).

    Args:
        params: parameters or parameter groups to optimize.
        lr (float): relative step size (default: 1e-2).
        beta2_decay (float): the second-moment rate is step ** beta2_decay (default: -0.8).
        eps (tuple): (eps1 for the second moment, None for the dtype's epsilon; eps2 the
            smallest parameter RMS used) (default: (None, 1e-3)).
        d (float): update clipping threshold (default: 1.0).
        weight_decay (float): decoupled weight decay (default: 0.0).
        maximize (bool): maximize the objective (default: False).
        foreach: accepted for compatibility; ignored.
    """

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False):
        _check_lr(lr)
        if beta2_decay > 0:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and eps[0] < 0:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if eps[1] < 0:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if d < 1:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if weight_decay < 0:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """Perform one optimization step; returns ``closure()``'s loss if a closure is given."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            lr, d, wd = float(group["lr"]), group["d"], group["weight_decay"]
            eps1, eps2 = group["eps"]
            for p, g in _grads(group, "Adafactor"):
                state = self.state[p]
                grad = (-g._data if group["maximize"] else g._data).astype(np.float64)
                if len(state) == 0:
                    state["step"] = _step_tensor()
                    if grad.ndim > 1:
                        state["row_var"] = p.new_zeros(grad.shape[:-1] + (1,))
                        state["col_var"] = p.new_zeros(grad.shape[:-2] + (1, grad.shape[-1]))
                    else:
                        state["variance"] = p.new_zeros(p.shape)
                step = _increment(state["step"])
                e1 = np.finfo(p._data.dtype).eps if eps1 is None else eps1
                rate = step ** group["beta2_decay"]  # 1 - beta2 at this step
                data = p._data
                rms = np.sqrt(np.mean(data.astype(np.float64) ** 2)) if data.size else 0.0
                alpha = max(eps2, rms) * min(lr, 1 / np.sqrt(step))
                if wd != 0:
                    data *= 1 - lr * wd
                if grad.ndim > 1:
                    row, col = state["row_var"]._data, state["col_var"]._data
                    row += (np.mean(grad * grad, axis=-1, keepdims=True) - row) * rate
                    col += (np.mean(grad * grad, axis=-2, keepdims=True) - col) * rate
                    var = row @ col / np.maximum(row.mean(axis=-2, keepdims=True), e1)
                else:
                    variance = state["variance"]._data
                    variance += (grad * grad - variance) * rate
                    var = variance.astype(np.float64)
                update = grad / np.sqrt(np.maximum(var, e1 * e1))
                denom = max(1.0, np.sqrt(np.mean(update ** 2)) / d) if update.size else 1.0
                data -= (alpha / denom * update).astype(data.dtype)
                p._bump_version()
        return loss
