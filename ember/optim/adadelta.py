"""Adadelta (Zeiler, 2012): step sizes from running averages of squared gradients and updates."""
from __future__ import annotations

from . import _kernels as K
from .optimizer import (
    Optimizer,
    _check_lr,
    _check_nonneg,
    _closure_loss,
    _elementwise_update,
    _grads,
    _increment,
    _step_tensor,
    _to_float,
    _zeros_like,
)

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    r"""Adadelta, as ``torch.optim.Adadelta``.

    .. math::
        v_t &= \rho v_{t-1} + (1-\rho) g_t^2, \qquad
        \Delta x_t = \frac{\sqrt{u_{t-1} + \epsilon}}{\sqrt{v_t + \epsilon}} g_t \\
        u_t &= \rho u_{t-1} + (1-\rho)\Delta x_t^2, \qquad \theta_t = \theta_{t-1} - \gamma
        \Delta x_t

    Args:
        params: parameters or parameter groups to optimize.
        lr (float or 0-d Tensor): scale of the delta (default: 1.0).
        rho (float): running-average coefficient (default: 0.9).
        eps (float): added inside the square roots (default: 1e-6).
        weight_decay (float): L2 penalty (default: 0).
        maximize (bool): maximize the objective (default: False).
        foreach, capturable, differentiable: accepted for compatibility; ignored.

    Example:
        >>> import ember
        >>> w = ember.tensor([1.0], requires_grad=True)
        >>> opt = ember.optim.Adadelta([w])
        >>> w.grad = ember.tensor([1.0])
        >>> opt.step()
        >>> w.item() < 1.0
        True
    """

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check_nonneg("epsilon", eps)
        _check_nonneg("weight_decay", weight_decay)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """Perform one optimization step; returns ``closure()``'s loss if a closure is given."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            lr, rho = _to_float(group["lr"]), _to_float(group["rho"])
            eps, weight_decay = _to_float(group["eps"]), _to_float(group["weight_decay"])
            gsign = -1.0 if group["maximize"] else 1.0
            for p, g in _grads(group, "Adadelta"):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_tensor()
                    state["square_avg"] = _zeros_like(p)
                    state["acc_delta"] = _zeros_like(p)
                _increment(state["step"])
                _elementwise_update(K._k_adadelta_step, p, g,
                                    (state["square_avg"], state["acc_delta"]),
                                    -lr, gsign, rho, 1 - rho, eps, weight_decay)
        return loss
