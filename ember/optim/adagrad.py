"""Adagrad (Duchi et al., 2011): per-coordinate learning rates from accumulated squares."""
from __future__ import annotations

import numpy as np

from .._tensor import _make
from . import _kernels as K
from .optimizer import (
    Optimizer,
    _check_fused,
    _check_lr,
    _check_nonneg,
    _closure_loss,
    _elementwise_update,
    _grads,
    _increment,
    _step_tensor,
    _to_float,
)

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    r"""Adagrad, as ``torch.optim.Adagrad``.

    .. math::
        \tilde\gamma_t = \frac{\gamma}{1 + (t-1)\eta}, \quad s_t = s_{t-1} + g_t^2, \quad
        \theta_t = \theta_{t-1} - \tilde\gamma_t \frac{g_t}{\sqrt{s_t} + \epsilon}

    Args:
        params: parameters or parameter groups to optimize.
        lr (float or 0-d Tensor): learning rate :math:`\gamma` (default: 1e-2).
        lr_decay (float): learning rate decay :math:`\eta` (default: 0).
        weight_decay (float): L2 penalty (default: 0).
        initial_accumulator_value (float): starting value of the sums :math:`s_0` (default: 0).
        eps (float): added to the denominator (default: 1e-10).
        maximize (bool): maximize the objective (default: False).
        foreach, differentiable, fused: accepted for compatibility; ignored.

    Like torch, the state (``step`` and ``sum``) is created for every parameter at construction.

    Example:
        >>> import ember
        >>> w = ember.tensor([1.0], requires_grad=True)
        >>> opt = ember.optim.Adagrad([w], lr=0.5)
        >>> w.grad = ember.tensor([2.0])
        >>> opt.step()
        >>> w
        tensor([0.5000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_lr(lr)
        _check_fused(type(self).__name__, foreach, fused)
        _check_nonneg("lr_decay", lr_decay)
        _check_nonneg("weight_decay", weight_decay)
        _check_nonneg("initial_accumulator_value", initial_accumulator_value)
        _check_nonneg("epsilon", eps)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _step_tensor()
                init = group["initial_accumulator_value"]
                state["sum"] = _make(np.full(p._data.shape, init, dtype=p._data.dtype))

    def share_memory(self) -> None:
        """Move the ``sum`` buffers to shared memory (when ember.multiprocessing supports it)."""
        for group in self.param_groups:
            for p in group["params"]:
                buf = self.state[p]["sum"]
                if hasattr(buf, "share_memory_"):
                    buf.share_memory_()

    def step(self, closure=None):
        """Perform one optimization step; returns ``closure()``'s loss if a closure is given."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            lr, lr_decay = _to_float(group["lr"]), _to_float(group["lr_decay"])
            eps, weight_decay = _to_float(group["eps"]), _to_float(group["weight_decay"])
            gsign = -1.0 if group["maximize"] else 1.0
            for p, g in _grads(group, "Adagrad"):
                state = self.state[p]
                if len(state) == 0:  # a group added after construction
                    state["step"] = _step_tensor()
                    init = group["initial_accumulator_value"]
                    state["sum"] = _make(np.full(p._data.shape, init, dtype=p._data.dtype))
                step = _increment(state["step"])
                clr = lr / (1 + (step - 1) * lr_decay)
                _elementwise_update(K._k_adagrad_step, p, g, (state["sum"],), -clr, gsign, eps,
                                    weight_decay)
        return loss
