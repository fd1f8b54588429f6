"""ASGD: averaged stochastic gradient descent (Polyak & Juditsky, 1992)."""

from __future__ import annotations

from .optimizer import (
    Optimizer,
    _check_lr,
    _check_nonneg,
    _closure_loss,
    _grads,
    _increment,
    _scalar_dtype,
    _step_tensor,
    _to_float,
)

__all__ = ["ASGD"]

# NOTE [ASGD's rounded eta]
# torch makes each new eta and mu a tensor of the default scalar dtype (float32 unless the
# default dtype is float64) before copying it into the state. The state is of that dtype too,
# except after load_state_dict, which casts it to the parameter's (float64 parameters: a
# float64 eta holding float32-rounded values). Rounded the same way here, so a resumed ASGD
# follows torch's; only such a state pays the extra rounding.


class ASGD(Optimizer):
    """ASGD, as ``torch.optim.ASGD``: SGD with a decaying rate ``eta`` and a running average
    ``ax`` of the parameters, started after ``t0`` steps.

    Args:
        params: parameters or parameter groups to optimize.
        lr (float): learning rate (default: 1e-2).
        lambd (float): decay term (default: 1e-4).
        alpha (float): power for the eta update (default: 0.75).
        t0 (float): step at which averaging starts (default: 1e6).
        weight_decay (float): L2 penalty (default: 0).
        maximize (bool): maximize the objective (default: False).
        foreach, differentiable, capturable: accepted for compatibility; ignored.

    Example:
        >>> import ember
        >>> w = ember.tensor([1.0], requires_grad=True)
        >>> opt = ember.optim.ASGD([w], lr=0.1)
        >>> w.grad = ember.tensor([2.0])
        >>> opt.step()
        >>> round(w.item(), 4)
        0.8
    """

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        _check_nonneg("weight_decay", weight_decay)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """Perform one optimization step; returns ``closure()``'s loss if a closure is given."""
        loss = _closure_loss(closure)
        scalar = _scalar_dtype()
        for group in self.param_groups:
            lr, lambd = _to_float(group["lr"]), group["lambd"]
            alpha, t0, wd = group["alpha"], group["t0"], group["weight_decay"]
            for p, g in _grads(group, "ASGD"):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_tensor()
                    state["eta"] = _step_tensor(lr)
                    state["mu"] = _step_tensor(1.0)
                    state["ax"] = p.new_zeros(p.shape)
                step = _increment(state["step"])
                grad = -g._data if group["maximize"] else g._data
                if wd != 0:
                    grad = grad + wd * p._data
                eta, mu = float(state["eta"]._data), float(state["mu"]._data)
                data = p._data
                data *= 1 - lambd * eta
                data -= (eta * grad).astype(data.dtype)
                ax = state["ax"]._data
                if mu != 1:
                    ax += (data - ax) * mu
                else:
                    ax[...] = data
                eta, mu = state["eta"]._data, state["mu"]._data
                eta[...] = lr / ((1 + lambd * lr * step) ** alpha)
                mu[...] = 1 / max(1, step - t0)
                if eta.dtype.type is not scalar:  # see NOTE [ASGD's rounded eta]
                    eta[...] = scalar(eta)
                    mu[...] = scalar(mu)
                p._bump_version()
        return loss
