"""Adam, and the decoupled-weight-decay variant that AdamW builds on."""
from __future__ import annotations

from .. import _blas_parts, _onepool
from .._kernel_threads import num_workers, parallel_range
from . import _kernels as K
from .optimizer import (
    Optimizer,
    _check_betas,
    _check_fused,
    _check_lr,
    _check_nonneg,
    _closure_loss,
    _columns,
    _elementwise_update,
    _grads,
    _increment,
    _kernel_arrays,
    _kernel_scalars,
    _step_tensor,
    _to_float,
    _zeros_like,
)

__all__ = ["Adam"]

_GRAIN = 1 << 15  # elements per kernel-thread part of the queued parameters' updates


class Adam(Optimizer):
    r"""Adam (Kingma & Ba, 2014), as ``torch.optim.Adam``.

    With gradient :math:`g_t` (negated if ``maximize``):

    .. math::
        g_t &\leftarrow g_t + \lambda\theta_{t-1} \quad\text{(or } \theta_{t-1} \leftarrow
              \theta_{t-1}(1 - \gamma\lambda) \text{ if decoupled)} \\
        m_t &= \beta_1 m_{t-1} + (1-\beta_1) g_t, \qquad
        v_t = \beta_2 v_{t-1} + (1-\beta_2) g_t^2 \\
        \hat v_t &= \max(\hat v_{t-1}, v_t) \text{ if amsgrad else } v_t \\
        \theta_t &= \theta_{t-1} - \frac{\gamma}{1-\beta_1^t}\,
              \frac{m_t}{\sqrt{\hat v_t}/\sqrt{1-\beta_2^t} + \epsilon}

    Args:
        params: parameters or parameter groups to optimize.
        lr (float or 0-d Tensor): learning rate :math:`\gamma` (default: 1e-3).
        betas (tuple): coefficients :math:`(\beta_1, \beta_2)` of the running averages
            (default: (0.9, 0.999)).
        eps (float): added to the denominator for stability (default: 1e-8).
        weight_decay (float): L2 penalty :math:`\lambda` (default: 0).
        amsgrad (bool): use the maximum of past second moments (default: False).
        maximize (bool): maximize the objective (default: False).
        decoupled_weight_decay (bool): decay the weights directly, as AdamW (default: False).
        foreach, capturable, differentiable, fused: accepted for compatibility; ignored.

    State per parameter: ``step`` (0-d float32 tensor), ``exp_avg``, ``exp_avg_sq`` and, with
    amsgrad, ``max_exp_avg_sq``.

    Example:
        >>> import ember
        >>> w = ember.tensor([1.0, -1.0], requires_grad=True)
        >>> opt = ember.optim.Adam([w], lr=0.1)
        >>> (w * w).sum().backward()
        >>> opt.step()
        >>> w
        tensor([ 0.9000, -0.9000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        _check_lr(lr)
        _check_nonneg("epsilon", eps)
        _check_fused(type(self).__name__, foreach, fused)
        _check_betas(betas)
        _check_nonneg("weight_decay", weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("decoupled_weight_decay", False)

    def step(self, closure=None):
        """Perform one optimization step; returns ``closure()``'s loss if a closure is given."""
        loss = _closure_loss(closure)
        self._update()
        return loss

    def _update(self, only=None):
        """The update of every parameter with a gradient, or of those whose id() is in ``only``
        (a compiled step updates parts of them on two threads: NOTE [Optimizer steps in a
        two-thread replay] in ember/_dynamo/schedule.py); the same numbers either way, as each
        element's update depends on its own parameter, gradient and state alone."""
        for group in self.param_groups:
            lr = _to_float(group["lr"])
            beta1, beta2 = (_to_float(b) for b in group["betas"])
            eps, weight_decay = _to_float(group["eps"]), _to_float(group["weight_decay"])
            amsgrad = bool(group["amsgrad"])
            gsign = -1.0 if group["maximize"] else 1.0
            decoupled = bool(group.get("decoupled_weight_decay", False))
            scalars_by_step = {}  # NOTE [Adam's per-parameter cost]
            # one kernel call (or one kernel-thread hand-off) for many parameters: NOTE [One
            # Adam call for many parameters] in _kernels.py, NOTE [One Adam hand-off ...] below
            batch = {}
            for p, g in _grads(group, type(self).__name__, only):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_tensor()
                    state["exp_avg"] = _zeros_like(p)
                    state["exp_avg_sq"] = _zeros_like(p)
                    if amsgrad:
                        state["max_exp_avg_sq"] = _zeros_like(p)
                if amsgrad and "max_exp_avg_sq" not in state:
                    state["max_exp_avg_sq"] = _zeros_like(p)
                step = _increment(state["step"])
                scalars = scalars_by_step.get(step)
                if scalars is None:
                    bias_correction1 = 1 - beta1 ** step
                    bias_correction2 = 1 - beta2 ** step
                    step_size = lr / bias_correction1
                    scalars = scalars_by_step[step] = (
                        gsign, 1 - beta1, 1 - (1 - beta1), beta2, 1 - beta2, eps,
                        0.0 if decoupled else weight_decay, 1 - lr * weight_decay, -step_size,
                        bias_correction2 ** 0.5)
                flags = (amsgrad, decoupled and weight_decay != 0)
                states = (state["exp_avg"], state["exp_avg_sq"], state.get("max_exp_avg_sq"))
                if not _batchable(p, g, states, batch, scalars, flags):
                    _elementwise_update(K._k_adam_step, p, g, states, *scalars, *flags)
            if batch:
                _run_batches(batch)


# NOTE [Adam's per-parameter cost]
# A small-batch step (NCF, an LSTM cell loop) spends as much time in the optimizer's Python
# per parameter as in its arithmetic. The step-dependent scalars are computed once per distinct
# step count in a group (usually one), converted to the kernel dtype once per dtype, and the
# common case (contiguous float32/float64 parameter, gradient and state of one dtype) is queued
# for one kernel call over many parameters (_run_batches); everything else goes through
# _elementwise_update, with the same kernel and the same scalar conversion, so the results are
# identical either way.


def _batchable(p, g, states, batch, scalars, flags):
    """Queue the update of p for `_run_batches` when its arrays are what the kernel takes
    without a copy (contiguous, one float dtype); False otherwise (nothing queued)."""
    arrays = _kernel_arrays(p, g, states)  # the unused amsgrad buffer: the parameter
    if arrays is None:
        return False
    batch.setdefault((scalars, arrays[0].dtype, flags), []).append((p, arrays))
    return True


# NOTE [One Adam hand-off for many parameters]
# With ember's kernel threads on (NOTE [Kernel threads]) each parameter's update was split over
# them by its own parallel_range call: NCF's four embedding tables meant four hand-offs a step,
# each waking a worker (~30 us before it starts when OpenBLAS's idle thread spins on the other
# core, busy machine). The queued parameters are instead laid end to end and one parallel_range
# splits the whole run (_k_adam_multi_span): one hand-off per K._MULTI parameters, and the same
# elementwise numbers as the serial call.
def _span(arrays, conv, flags):
    """A parallel_range part: K._k_adam_multi_span over elements lo..hi of the run."""
    return lambda lo, hi: K._k_adam_multi_span(*arrays, lo, hi, *conv, *flags)


def _run_batches(batch):
    """One K._k_adam_multi call per K._MULTI queued parameters sharing scalars and dtype
    (NOTE [One Adam call for many parameters] in _kernels.py)."""
    for (scalars, dt, flags), items in batch.items():
        conv = _kernel_scalars(dt, scalars)  # NOTE [Optimizer kernel numerics and speed]
        for lo in range(0, len(items), K._MULTI):
            part = items[lo:lo + K._MULTI]
            cols = _columns(part, 5, K._MULTI, dt)
            size = sum(a[0].size for _, a in part)
            if size >= K._k_adam_multi_chunks.min_work and _onepool.enabled():
                # chunks of all of them in parallel on the one pool (NOTE [One pool])
                K._k_adam_multi_chunks.parallel(*cols, *conv, *flags)
            elif size >= 2 * _GRAIN and num_workers() >= 2 and not _onepool.enabled():
                parallel_range(_span(tuple(cols), conv, flags), size, _GRAIN)
            elif size >= 2 * _GRAIN and _blas_parts.on("adam") and not _onepool.enabled():
                # NOTE [Python parts on OpenBLAS's threads] in ember/_blas_parts.py; one run
                # per thread: NOTE [One Python part per thread] in ops/_kernels/norm.py
                _blas_parts.run_ranges(_span(tuple(cols), conv, flags), size)
            else:
                K._k_adam_multi(*cols, *conv, *flags)
            for p, _ in part:
                p._bump_version()
