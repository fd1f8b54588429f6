"""Rprop: resilient backpropagation (Riedmiller & Braun, 1993): per-weight step sizes adapted by
the sign of successive gradients."""

from __future__ import annotations

import numpy as np

from .optimizer import Optimizer, _check_lr, _closure_loss, _grads, _increment, _step_tensor

__all__ = ["Rprop"]


def _as_real(a):
    """A complex array as a real view with a trailing (real, imag) axis (torch's view_as_real:
    each part keeps its own sign and step size); a real one as it is. The added axis of length
    1 lets any strided array split in place."""
    return a[..., np.newaxis].view(a.real.dtype) if a.dtype.kind == "c" else a


class Rprop(Optimizer):
    """Rprop, as ``torch.optim.Rprop``.

    Each weight keeps a step size: it grows by ``etas[1]`` while the gradient keeps its sign,
    shrinks by ``etas[0]`` when the sign flips (and that step is skipped), and stays within
    ``step_sizes``. The weight moves by ``-sign(grad) * step_size``.

    Args:
        params: parameters or parameter groups to optimize.
        lr (float): initial step size (default: 1e-2).
        etas (tuple): (decrease, increase) factors (default: (0.5, 1.2)).
        step_sizes (tuple): (minimal, maximal) step size (default: (1e-6, 50)).
        maximize (bool): maximize the objective (default: False).
        foreach, differentiable, capturable: accepted for compatibility; ignored.

    Example:
        >>> import ember
        >>> w = ember.tensor([1.0], requires_grad=True)
        >>> opt = ember.optim.Rprop([w], lr=0.1)
        >>> w.grad = ember.tensor([3.0])
        >>> opt.step()
        >>> round(w.item(), 4)
        0.9
    """

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """Perform one optimization step; returns ``closure()``'s loss if a closure is given."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            etaminus, etaplus = group["etas"]
            step_min, step_max = group["step_sizes"]
            for p, g in _grads(group, "Rprop"):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_tensor()
                    state["prev"] = p.new_zeros(p.shape)
                    lr = float(group["lr"])  # (each part of a complex weight starts at lr)
                    state["step_size"] = p.new_full(p.shape, complex(lr, lr) if p.is_complex()
                                                    else lr)
                _increment(state["step"])
                # an array even for 0-d params (-g._data is a scalar)
                grad = _as_real(g._data).copy()
                if group["maximize"]:
                    np.negative(grad, out=grad)
                prev, step_size = _as_real(state["prev"]._data), _as_real(state["step_size"]._data)
                agreement = np.sign(grad * prev)
                factor = np.where(agreement > 0, etaplus, np.where(agreement < 0, etaminus, 1.0))
                np.clip(step_size * factor, step_min, step_max, out=step_size)
                grad[agreement < 0] = 0  # after a sign flip, skip this step and forget it
                data = _as_real(p._data)
                data -= (np.sign(grad) * step_size).astype(data.dtype)
                prev[...] = grad
                p._bump_version()
        return loss
