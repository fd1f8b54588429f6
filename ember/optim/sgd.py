"""Stochastic gradient descent with momentum, dampening, Nesterov momentum and weight decay."""
from __future__ import annotations

import numba

from .. import _blas_parts, _onepool
from ..ops._kernels import split
from . import _kernels as K
from .optimizer import (
    Optimizer,
    _check_fused,
    _check_lr,
    _check_nonneg,
    _closure_loss,
    _columns,
    _elementwise_update,
    _grads,
    _kernel_arrays,
    _kernel_scalars,
    _to_float,
    _zeros_like,
)

__all__ = ["SGD"]


class SGD(Optimizer):
    r"""Stochastic gradient descent (optionally with momentum), as ``torch.optim.SGD``.

    With gradient :math:`g_t` (negated if ``maximize``) the update is

    .. math::
        g_t &\leftarrow g_t + \lambda \theta_{t-1} \\
        b_t &\leftarrow \mu b_{t-1} + (1 - \tau) g_t \quad (b_1 = g_1) \\
        g_t &\leftarrow g_t + \mu b_t \text{ if nesterov else } b_t \\
        \theta_t &\leftarrow \theta_{t-1} - \gamma g_t

    Args:
        params: parameters or parameter groups to optimize.
        lr (float or 0-d Tensor): learning rate :math:`\gamma` (default: 1e-3).
        momentum (float): momentum factor :math:`\mu` (default: 0).
        dampening (float): dampening :math:`\tau` for momentum (default: 0).
        weight_decay (float): L2 penalty :math:`\lambda` (default: 0).
        nesterov (bool): use Nesterov momentum (default: False).
        maximize (bool): maximize the objective instead of minimizing (default: False).
        foreach, differentiable, fused: accepted for compatibility; ignored (see
            ``ember.optim.optimizer``).

    Example:
        >>> import ember
        >>> w = ember.tensor([1.0, 2.0], requires_grad=True)
        >>> opt = ember.optim.SGD([w], lr=0.1, momentum=0.9)
        >>> (w * w).sum().backward()
        >>> opt.step()
        >>> w
        tensor([0.8000, 1.6000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None):
        _check_lr(lr)
        _check_fused(type(self).__name__, foreach, fused)
        _check_nonneg("momentum", momentum)
        _check_nonneg("weight_decay", weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                        foreach=foreach, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)

    def step(self, closure=None):
        """Perform one optimization step; returns ``closure()``'s loss if a closure is given."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            lr = _to_float(group["lr"])
            momentum = _to_float(group["momentum"])
            dampening = _to_float(group["dampening"])
            weight_decay = _to_float(group["weight_decay"])
            nesterov = bool(group["nesterov"])
            gsign = -1.0 if group["maximize"] else 1.0
            floats = (-lr, gsign, momentum, 1.0 - dampening, weight_decay)
            batch = {}  # NOTE [One SGD call for many parameters]
            limit = _batch_limit()
            for p, g in _grads(group, "SGD"):
                buf = None
                init = False
                if momentum != 0:
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = state["momentum_buffer"] = _zeros_like(p)
                        init = True
                arrays = _kernel_arrays(p, g, (buf,)) if p._data.size < limit else None
                if arrays is None:
                    _elementwise_update(_sgd_step, p, g, (buf,), *floats, nesterov, init)
                else:
                    batch.setdefault((arrays[0].dtype, init), []).append((p, arrays))
            for (dt, init), items in batch.items():
                _run_batch(items, (*_kernel_scalars(dt, floats), nesterov, init), dt)
        return loss


def _run_batch(items, scalars, dt):
    """The queued parameters' updates: K._MULTI per kernel call, or all of them in one
    hand-off of parts (NOTE [One SGD hand-off for all parameters])."""
    groups = []
    start = 0
    for lo in range(0, len(items), K._MULTI):
        part = items[lo:lo + K._MULTI]
        size = sum(a[0].size for _, a in part)
        groups.append((start, size, _columns(part, 3, K._MULTI, dt)))
        start += size
    if start >= _PARTS_MIN_ELEMENTS and _parts_on():
        _blas_parts.run_ranges(_spans(groups, scalars), start)
    else:
        for _, _, cols in groups:
            K._k_sgd_multi(*cols, *scalars)
    for p, _ in items:
        p._bump_version()


def _spans(groups, scalars):
    """A part of `_run_batch`'s hand-off: elements lo..hi of all the parameters laid end to end,
    group by group."""
    def part(lo, hi):
        for start, size, cols in groups:
            if start < hi and lo < start + size:
                K._k_sgd_multi_span(*cols, max(lo - start, 0), min(hi - start, size), *scalars)
    return part


# NOTE [One SGD hand-off for all parameters]
# With the parts on OpenBLAS's threads on for user "sgd" (_blas_parts.on: EMBER_BLAS_PARTS=1,
# or "sgd" in its DEFAULT_ON), every parameter whose arrays the kernel takes as they are is
# queued, whatever its size, and one run_ranges call updates all of them: the parameters laid
# end to end are cut in one part per thread, and each part walks the groups of K._MULTI
# parameters its range meets (_k_sgd_multi_span). Otherwise parameters from 2^20 elements go to
# the parts one hand-off each ("split") and those under 2^20 run on the calling thread:
# ResNet-50's 161 parameters, ~4 ms of a one-thread step's ~11 ms of SGD, stay on one core.
# Elementwise, so the numbers are the serial call's. Off by default: ab.py paired off/on in
# quiet slots ResNet-50 1.002 and 0.995, VGG-19 1.013 and 1.006, AlexNet 0.955 (load 1.1-1.6).
_PARTS_MIN_ELEMENTS = 1 << 18


def _parts_on():
    return _blas_parts.on("sgd") and not _onepool.enabled()


# NOTE [One SGD call for many parameters]
# A small model's step (the 3x256 MLP at batch 8: 8 parameters, 150K elements) spent more time
# in the per-parameter Python around the kernel (scalar conversion, argument checks, a numba
# dispatch of ten arguments, the split's slices: ~7 us a parameter) than in the kernel itself.
# Parameters small enough to be updated in one call on one thread anyway are queued, and one
# _k_sgd_multi call updates up to K._MULTI of them, each by _k_sgd_step's own loop, so the
# numbers are the ones the per-parameter call computes (as Adam's NOTE [One Adam call for many
# parameters] in _kernels.py). Bigger ones keep the per-parameter path and its split.


def _batch_limit():
    """Parameters with fewer elements are queued for `_run_batch`: all of them with the parts
    on OpenBLAS's threads (NOTE [One SGD hand-off for all parameters]), else those that
    `_sgd_step` would update in one call on the calling thread."""
    if _parts_on():
        return float("inf")
    return _p_sgd_range.min_work if _onepool.enabled() else _SPLIT_ELEMENTS


# Fewest elements of a parameter updated on two threads. The update streams three or four
# arrays through memory (~1 ns per element on one core), so a hand-off (~20-50 us) pays from a
# few hundred thousand elements: VGG-19's and ResNet-50's big conv and linear weights.
_SPLIT_ELEMENTS = 1 << 18


def _sgd_step(p, g, buf, *scalars):
    """K._k_sgd_step on flat arrays, in two halves on two threads for big parameters (NOTE [Two
    halves on two threads] in ember/ops/_kernels/split.py; elementwise, so the same numbers)."""
    split.run(_sgd_range, p.size, p.size, p, g, buf, scalars, min_work=_SPLIT_ELEMENTS)


def _sgd_range(p, g, buf, scalars, lo, hi):
    K._k_sgd_step(p[lo:hi], g[lo:hi], buf[lo:hi], *scalars)


@_onepool.twin
def _p_sgd_range(p, g, buf, scalars, n, parts):
    """`_sgd_range` over [0, n) in `parts` slices on the one pool (NOTE [Ranges on the one pool]
    in ember/ops/_kernels/split.py); slices start at multiples of 16 elements (whole vectors)."""
    for t in numba.prange(parts):
        lo = n * t // parts // 16 * 16
        hi = n if t == parts - 1 else n * (t + 1) // parts // 16 * 16
        K._k_sgd_step(p[lo:hi], g[lo:hi], buf[lo:hi], *scalars)


split.pooled(_sgd_range, _p_sgd_range)
