"""RMSprop (Hinton's lecture notes), optionally centered and with momentum."""
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

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    r"""RMSprop, as ``torch.optim.RMSprop``.

    .. math::
        v_t &= \alpha v_{t-1} + (1-\alpha) g_t^2, \qquad
        \tilde v_t = v_t - \bar g_t^2 \text{ if centered } (\bar g_t = \alpha \bar g_{t-1} +
        (1-\alpha) g_t) \\
        b_t &= \mu b_{t-1} + g_t / (\sqrt{\tilde v_t} + \epsilon), \qquad
        \theta_t = \theta_{t-1} - \gamma b_t \quad (\text{or } \gamma g_t /
        (\sqrt{\tilde v_t}+\epsilon) \text{ without momentum})

    Args:
        params: parameters or parameter groups to optimize.
        lr (float or 0-d Tensor): learning rate (default: 1e-2).
        alpha (float): smoothing constant (default: 0.99).
        eps (float): added to the denominator (default: 1e-8).
        weight_decay (float): L2 penalty (default: 0).
        momentum (float): momentum factor (default: 0).
        centered (bool): normalize by the estimated variance of the gradient (default: False).
        maximize (bool): maximize the objective (default: False).
        capturable, foreach, differentiable: accepted for compatibility; ignored.

    Example:
        >>> import ember
        >>> w = ember.tensor([1.0], requires_grad=True)
        >>> opt = ember.optim.RMSprop([w], lr=0.01)
        >>> w.grad = ember.tensor([1.0])
        >>> opt.step()
        >>> round(w.item(), 4)
        0.9
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        _check_lr(lr)
        _check_nonneg("epsilon", eps)
        _check_nonneg("momentum", momentum)
        _check_nonneg("weight_decay", weight_decay)
        _check_nonneg("alpha", alpha)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """Perform one optimization step; returns ``closure()``'s loss if a closure is given."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            lr, alpha = _to_float(group["lr"]), _to_float(group["alpha"])
            eps, weight_decay = _to_float(group["eps"]), _to_float(group["weight_decay"])
            momentum = _to_float(group["momentum"])
            centered = bool(group["centered"])
            gsign = -1.0 if group["maximize"] else 1.0
            for p, g in _grads(group, "RMSprop"):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_tensor()
                    state["square_avg"] = _zeros_like(p)
                    if momentum > 0:
                        state["momentum_buffer"] = _zeros_like(p)
                    if centered:
                        state["grad_avg"] = _zeros_like(p)
                _increment(state["step"])
                _elementwise_update(
                    K._k_rmsprop_step, p, g,
                    (state["square_avg"], state.get("grad_avg") if centered else None,
                     state.get("momentum_buffer") if momentum > 0 else None),
                    -lr, gsign, alpha, 1 - alpha, 1 - alpha, 1 - (1 - alpha), eps, weight_decay,
                    momentum, centered)
        return loss
