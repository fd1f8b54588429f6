"""Stochastic weight averaging and exponential moving averages of a model's weights
(``torch.optim.swa_utils``): AveragedModel, SWALR, update_bn and the averaging functions."""

from __future__ import annotations

import copy
import itertools
import math

import ember
from ember import nn

from .lr_scheduler import LRScheduler

__all__ = ["AveragedModel", "SWALR", "update_bn", "get_ema_avg_fn", "get_ema_multi_avg_fn",
           "get_swa_avg_fn", "get_swa_multi_avg_fn"]


def get_ema_multi_avg_fn(decay=0.999):
    """In-place EMA over lists of tensors: avg = decay * avg + (1 - decay) * new."""
    if not 0.0 <= decay <= 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")

    @ember.no_grad()
    def ema_update(ema_param_list, current_param_list, _num_averaged):
        for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
            p_ema.lerp_(p_model, 1 - decay)

    return ema_update


def get_swa_multi_avg_fn():
    """In-place running mean over lists of tensors."""

    @ember.no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        n = float(num_averaged.item()) if isinstance(num_averaged, ember.Tensor) else \
            float(num_averaged)
        for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
            p_avg.add_((p_model - p_avg) / (n + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """EMA of one tensor: returns decay * avg + (1 - decay) * new."""
    if not 0.0 <= decay <= 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")

    @ember.no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """Running mean of one tensor."""

    @ember.no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(nn.Module):
    """A copy of ``model`` whose parameters (and, with ``use_buffers``, buffers) hold an average
    of the model's over the calls to ``update_parameters`` (a running mean by default; pass
    ``multi_avg_fn=get_ema_multi_avg_fn(decay)`` for an EMA).

    Example:
        >>> import ember
        >>> from ember.optim.swa_utils import AveragedModel
        >>> model = ember.nn.Linear(2, 1)
        >>> swa = AveragedModel(model)
        >>> swa.update_parameters(model)
        >>> int(swa.n_averaged)
        1
    """

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise ValueError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        self.register_buffer("n_averaged", ember.tensor(0, dtype=ember.long))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def _averaged(self, module):
        if self.use_buffers:
            return itertools.chain(module.parameters(), module.buffers())
        return module.parameters()

    def update_parameters(self, model):
        """Fold ``model``'s current parameters into the average."""
        self_params = [p.detach() for p in self._averaged(self.module)]
        model_params = [p.detach() for p in self._averaged(model)]
        if len(self_params) != len(model_params):
            raise ValueError(f"update_parameters: the model has {len(model_params)} tensors to "
                             f"average but the averaged copy has {len(self_params)}")
        with ember.no_grad():
            if int(self.n_averaged) == 0:
                for p_avg, p_model in zip(self_params, model_params, strict=True):
                    p_avg.copy_(p_model)
            elif self.multi_avg_fn is not None:
                self.multi_avg_fn(self_params, model_params, self.n_averaged)
            elif self.avg_fn is not None:
                for p_avg, p_model in zip(self_params, model_params, strict=True):
                    p_avg.copy_(self.avg_fn(p_avg, p_model, self.n_averaged))
            else:
                get_swa_multi_avg_fn()(self_params, model_params, self.n_averaged)
            if not self.use_buffers:
                # keep the buffers (e.g. batch-norm statistics) of the latest model
                for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                    b_swa.copy_(b_model.detach())
            self.n_averaged += 1


@ember.no_grad()
def update_bn(loader, model, device=None):
    """Recompute the batch-norm running statistics of ``model`` with one pass over ``loader``
    (cumulative averages, momentum None), as needed after weight averaging."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's learning rate to ``swa_lr`` over ``anneal_epochs`` epochs
    (``anneal_strategy`` "cos" or "linear"), then hold it."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos",
                 last_epoch=-1):
        swa_lrs = self._format_param(optimizer, swa_lr)
        for swa_lr_value, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = swa_lr_value
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must by one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else \
            self._linear_anneal
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _format_param(optimizer, swa_lrs):
        if isinstance(swa_lrs, (list, tuple)):
            if len(swa_lrs) != len(optimizer.param_groups):
                raise ValueError("swa_lr must have the same length as optimizer.param_groups: "
                                 f"swa_lr has {len(swa_lrs)}, optimizer.param_groups has "
                                 f"{len(optimizer.param_groups)}")
            return list(swa_lrs)
        return [swa_lrs] * len(optimizer.param_groups)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        self._warn_outside_step()
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, prev_lrs, strict=True)]
