"""AdamW: Adam with decoupled weight decay (Loshchilov & Hutter, 2017)."""
from __future__ import annotations

from .adam import Adam

__all__ = ["AdamW"]


class AdamW(Adam):
    r"""Adam with decoupled weight decay, as ``torch.optim.AdamW``.

    Identical to ``Adam(..., decoupled_weight_decay=True)``: the weights shrink by
    :math:`\theta \leftarrow \theta (1 - \gamma\lambda)` before the Adam update instead of the
    penalty entering the gradient. Note the default ``weight_decay`` is 1e-2.

    Args:
        params, lr, betas, eps, amsgrad, maximize: as for :class:`Adam`.
        weight_decay (float): decoupled weight decay :math:`\lambda` (default: 1e-2).
        foreach, capturable, differentiable, fused: accepted for compatibility; ignored.

    Example:
        >>> import ember
        >>> w = ember.tensor([1.0], requires_grad=True)
        >>> opt = ember.optim.AdamW([w], lr=0.1, weight_decay=0.5)
        >>> w.grad = ember.zeros(1)
        >>> opt.step()
        >>> w
        tensor([0.9500], requires_grad=True)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
