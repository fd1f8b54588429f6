"""SparseAdam: Adam whose moments are updated only where the gradient has entries."""

from __future__ import annotations

import numpy as np

from .optimizer import (
    Optimizer,
    _check_betas,
    _check_lr,
    _check_nonneg,
    _closure_loss,
    _to_float,
)

__all__ = ["SparseAdam"]


def _rows_and_values(grad):
    """(row indices, their gradient rows) of a sparse COO gradient, or of the nonzero rows of a
    dense one (ember's Embedding(sparse=True) produces dense gradients)."""
    if getattr(grad, "is_sparse", False):
        grad = grad.coalesce()
        return grad.indices().numpy()[0], grad.values().numpy()
    data = grad._data
    rows = np.flatnonzero(np.any(data.reshape(data.shape[0], -1) != 0, axis=1))
    return rows, data[rows]


class SparseAdam(Optimizer):
    """SparseAdam, as ``torch.optim.SparseAdam``: a lazy Adam for sparse gradients (embedding
    tables): only the rows present in a step's gradient update their moments and weights.

    Differs from torch: a dense gradient is accepted and its all-zero rows are treated as
    absent, since ember's ``Embedding(sparse=True)`` produces dense gradients.

    Args:
        params: parameters or parameter groups to optimize.
        lr (float): learning rate (default: 1e-3).
        betas (tuple): coefficients of the running averages (default: (0.9, 0.999)).
        eps (float): added to the denominator (default: 1e-8).
        maximize (bool): maximize the objective (default: False).
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        _check_lr(lr)
        _check_nonneg("epsilon", eps)
        _check_betas(betas)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))

    def step(self, closure=None):
        """Perform one optimization step; returns ``closure()``'s loss if a closure is given."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            lr, eps = _to_float(group["lr"]), group["eps"]
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = 0  # a Python int, as torch's SparseAdam keeps it
                    state["exp_avg"] = p.new_zeros(p.shape)
                    state["exp_avg_sq"] = p.new_zeros(p.shape)
                # int(): load_state_dict turns a loaded count into a step tensor
                step = state["step"] = int(state["step"]) + 1
                rows, values = _rows_and_values(p.grad)
                if group["maximize"]:
                    values = -values
                exp_avg, exp_avg_sq = state["exp_avg"]._data, state["exp_avg_sq"]._data
                exp_avg[rows] += (values - exp_avg[rows]) * (1 - beta1)
                exp_avg_sq[rows] += (values * values - exp_avg_sq[rows]) * (1 - beta2)
                step_size = lr * np.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
                update = exp_avg[rows] / (np.sqrt(exp_avg_sq[rows]) + eps)
                p._data[rows] -= (step_size * update).astype(p._data.dtype)
                p._bump_version()
        return loss
