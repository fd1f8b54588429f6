"""NAdam: Adam with Nesterov momentum (Dozat, 2016), with torch's momentum-decay schedule."""
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

__all__ = ["NAdam"]

class NAdam(Optimizer):
    r"""NAdam, as ``torch.optim.NAdam``.

    .. math::
        \mu_t &= \beta_1 (1 - \tfrac12 0.96^{t\psi}), \quad
        m_t = \beta_1 m_{t-1} + (1-\beta_1) g_t, \quad v_t = \beta_2 v_{t-1} + (1-\beta_2)g_t^2\\
        \theta_t &= \theta_{t-1} - \gamma\frac{1-\mu_t}{1-\prod_{i\le t}\mu_i}
            \frac{g_t}{\sqrt{\hat v_t}+\epsilon}
            - \gamma\frac{\mu_{t+1}}{1-\prod_{i\le t+1}\mu_i}\frac{m_t}{\sqrt{\hat v_t}+\epsilon},
            \quad \hat v_t = v_t / (1 - \beta_2^t)

    Args:
        params: parameters or parameter groups to optimize.
        lr (float or 0-d Tensor): learning rate (default: 2e-3).
        betas (tuple): running-average coefficients (default: (0.9, 0.999)).
        eps (float): added to the denominator (default: 1e-8).
        weight_decay (float): weight decay (default: 0).
        momentum_decay (float): :math:`\psi` (default: 4e-3).
        decoupled_weight_decay (bool): decay weights directly, as AdamW (NAdamW)
            (default: False).
        maximize (bool): maximize the objective (default: False).
        foreach, capturable, differentiable: accepted for compatibility; ignored.

    ``mu_product`` is kept, like torch, in a 0-d float32 tensor (float64 when that is the
    default dtype), and multiplied in that precision.

    Example:
        >>> import ember
        >>> w = ember.tensor([1.0], requires_grad=True)
        >>> opt = ember.optim.NAdam([w])
        >>> w.grad = ember.tensor([1.0])
        >>> opt.step()
        >>> w.item() < 1.0
        True
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        _check_lr(lr)
        _check_nonneg("epsilon", eps)
        _check_betas(betas)
        _check_nonneg("weight_decay", weight_decay)
        _check_nonneg("momentum_decay", momentum_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """Perform one optimization step; returns ``closure()``'s loss if a closure is given."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            lr = _to_float(group["lr"])
            beta1, beta2 = (_to_float(b) for b in group["betas"])
            eps, weight_decay = _to_float(group["eps"]), _to_float(group["weight_decay"])
            momentum_decay = _to_float(group["momentum_decay"])
            decoupled = bool(group["decoupled_weight_decay"])
            gsign = -1.0 if group["maximize"] else 1.0
            for p, g in _grads(group, "NAdam"):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_tensor()
                    state["mu_product"] = _step_tensor(1.0)
                    state["exp_avg"] = _zeros_like(p)
                    state["exp_avg_sq"] = _zeros_like(p)
                step = _increment(state["step"])
                mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
                mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
                # the product is rounded to the counter's precision after each multiply, as in
                # torch (where it is a 0-d tensor and mu is cast to its dtype first)
                prod = state["mu_product"]._data
                prod[...] = prod * prod.dtype.type(mu)
                state["mu_product"]._bump_version()
                mu_product = float(prod)
                grad_coef = -lr * (1.0 - mu) / (1.0 - mu_product)
                avg_coef = (-lr * mu_next) / (1.0 - mu_product * mu_next)
                _elementwise_update(K._k_nadam_step, p, g, (state["exp_avg"], state["exp_avg_sq"]),
                                    gsign, 1 - beta1, 1 - (1 - beta1), beta2, 1 - beta2, eps,
                                    0.0 if decoupled else weight_decay, 1 - lr * weight_decay,
                                    1 - beta2 ** step, grad_coef, avg_coef,
                                    decoupled and weight_decay != 0)
        return loss
