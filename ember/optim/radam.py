"""RAdam: Adam with a rectified adaptive learning rate (Liu et al., 2019)."""
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

__all__ = ["RAdam"]


class RAdam(Optimizer):
    r"""RAdam, as ``torch.optim.RAdam``.

    .. math::
        \rho_\infty &= \frac{2}{1-\beta_2} - 1, \qquad
        \rho_t = \rho_\infty - \frac{2t\beta_2^t}{1-\beta_2^t} \\
        \theta_t &= \theta_{t-1} - \gamma \hat m_t r_t \frac{\sqrt{1-\beta_2^t}}{\sqrt{v_t}+
        \epsilon} \text{ if } \rho_t > 5 \text{ else } \theta_{t-1} - \gamma \hat m_t, \qquad
        r_t = \sqrt{\frac{(\rho_t-4)(\rho_t-2)\rho_\infty}{(\rho_\infty-4)(\rho_\infty-2)\rho_t}}

    with :math:`\hat m_t = m_t / (1-\beta_1^t)`.

    Args:
        params: parameters or parameter groups to optimize.
        lr (float or 0-d Tensor): learning rate (default: 1e-3).
        betas (tuple): running-average coefficients (default: (0.9, 0.999)).
        eps (float): added to the denominator (default: 1e-8).
        weight_decay (float): weight decay (default: 0).
        decoupled_weight_decay (bool): decay weights directly, as AdamW (default: False).
        maximize (bool): maximize the objective (default: False).
        foreach, capturable, differentiable: accepted for compatibility; ignored.

    Example:
        >>> import ember
        >>> w = ember.tensor([1.0], requires_grad=True)
        >>> opt = ember.optim.RAdam([w], lr=0.1)
        >>> w.grad = ember.tensor([2.0])
        >>> opt.step()
        >>> round(w.item(), 4)
        0.8
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        _check_lr(lr)
        _check_nonneg("epsilon", eps)
        _check_betas(betas)
        _check_nonneg("weight_decay", weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """Perform one optimization step; returns ``closure()``'s loss if a closure is given."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            lr = _to_float(group["lr"])
            beta1, beta2 = (_to_float(b) for b in group["betas"])
            eps, weight_decay = _to_float(group["eps"]), _to_float(group["weight_decay"])
            decoupled = bool(group["decoupled_weight_decay"])
            gsign = -1.0 if group["maximize"] else 1.0
            rho_inf = 2 / (1 - beta2) - 1
            for p, g in _grads(group, "RAdam"):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_tensor()
                    state["exp_avg"] = _zeros_like(p)
                    state["exp_avg_sq"] = _zeros_like(p)
                step = _increment(state["step"])
                bias_correction1 = 1 - beta1 ** step
                bias_correction2 = 1 - beta2 ** step
                rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
                rectify = rho_t > 5.0
                rect = 1.0
                if rectify:
                    rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                            / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                _elementwise_update(K._k_radam_step, p, g, (state["exp_avg"], state["exp_avg_sq"]),
                                    gsign, 1 - beta1, 1 - (1 - beta1), beta2, 1 - beta2, eps,
                                    0.0 if decoupled else weight_decay, 1 - lr * weight_decay,
                                    lr, bias_correction1, bias_correction2 ** 0.5, rect, rectify,
                                    decoupled and weight_decay != 0)
        return loss
