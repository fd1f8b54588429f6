"""Adamax: the infinity-norm variant of Adam (Kingma & Ba, 2014, section 7)."""
from __future__ import annotations

from . import _kernels as K
from .optimizer import (
    Optimizer,
    _check_betas,
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

__all__ = ["Adamax"]


class Adamax(Optimizer):
    r"""Adamax, as ``torch.optim.Adamax``.

    .. math::
        m_t = \beta_1 m_{t-1} + (1-\beta_1) g_t, \quad
        u_t = \max(\beta_2 u_{t-1}, |g_t| + \epsilon), \quad
        \theta_t = \theta_{t-1} - \frac{\gamma}{1-\beta_1^t} \frac{m_t}{u_t}

    Args:
        params: parameters or parameter groups to optimize.
        lr (float or 0-d Tensor): learning rate (default: 2e-3).
        betas (tuple): coefficients of the running average and the infinity norm
            (default: (0.9, 0.999)).
        eps (float): added to :math:`|g_t|` (default: 1e-8).
        weight_decay (float): L2 penalty (default: 0).
        maximize (bool): maximize the objective (default: False).
        foreach, differentiable, capturable: accepted for compatibility; ignored.

    Example:
        >>> import ember
        >>> w = ember.tensor([1.0], requires_grad=True)
        >>> opt = ember.optim.Adamax([w], lr=0.1)
        >>> w.grad = ember.tensor([3.0])
        >>> opt.step()
        >>> round(w.item(), 4)
        0.9
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        _check_nonneg("epsilon", eps)
        _check_betas(betas)
        _check_nonneg("weight_decay", weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """Perform one optimization step; returns ``closure()``'s loss if a closure is given."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            lr = _to_float(group["lr"])
            beta1, beta2 = (_to_float(b) for b in group["betas"])
            eps, weight_decay = _to_float(group["eps"]), _to_float(group["weight_decay"])
            gsign = -1.0 if group["maximize"] else 1.0
            for p, g in _grads(group, "Adamax"):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_tensor()
                    state["exp_avg"] = _zeros_like(p)
                    state["exp_inf"] = _zeros_like(p)
                step = _increment(state["step"])
                clr = lr / (1 - beta1 ** step)
                _elementwise_update(K._k_adamax_step, p, g, (state["exp_avg"], state["exp_inf"]),
                                    -clr, gsign, 1 - beta1, 1 - (1 - beta1), beta2, eps,
                                    weight_decay)
        return loss
