"""Loss functions of ``ember.nn.functional`` (CTC is in _ctc.py).

Every loss takes ``reduction`` in {'none', 'mean', 'sum'} (plus torch's deprecated
``size_average`` / ``reduce``). Cross-entropy with class indices and binary cross-entropy are
ops in ``ember/ops/nn/loss.py`` (fused kernels; log-sum-exp of the shifted logits, so large
logits are safe); the rest are composites of ember ops.
"""
from __future__ import annotations

import functools
import math
import warnings

import numpy as np

import ember

from ..._tensor import Tensor, _make
from ...amp._state import maybe_autocast
from ...amp._state import state as _autocast
from ...autograd.function import guard_inputs
from ...ops.nn.loss import (
    BinaryCrossEntropy,
    BinaryCrossEntropyWithLogits,
    CrossEntropyLoss,
    NLLLoss,
)
from ._activation import log_softmax, logsigmoid
from ._distance import pairwise_distance
from ._utils import _check_tensor

__all__ = [
    "l1_loss", "mse_loss", "smooth_l1_loss", "huber_loss", "cross_entropy", "nll_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
    "margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss",
    "triplet_margin_loss", "triplet_margin_with_distance_loss", "poisson_nll_loss",
    "gaussian_nll_loss", "multilabel_soft_margin_loss", "soft_margin_loss",
    "multi_margin_loss", "multilabel_margin_loss",
]


# ----------------------------------------------------------------------------- helpers
def legacy_get_string(size_average, reduce, emit_warning=True):
    """torch's mapping of the deprecated size_average / reduce flags to a reduction string."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "none" if not reduce else ("mean" if size_average else "sum")
    if emit_warning:
        warnings.warn(f"size_average and reduce args will be deprecated, please use "
                      f"reduction='{ret}' instead.", UserWarning, stacklevel=3)
    return ret


def _reduction(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        return legacy_get_string(size_average, reduce)
    return reduction


_FUSED_DTYPES = (ember.float32, ember.float64)
_CE_ROWS = (np.dtype(np.float32), np.dtype(np.float64))
_INT64 = np.dtype(np.int64)


def _reduce(loss, reduction, name):
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"{name}: {reduction} is not a valid value for reduction; expected "
                     "'none', 'mean' or 'sum'.")


def _check_pair(name, input, target, warn=True):
    """input / target of an elementwise loss: warn when they differ, raise if they can't
    broadcast."""
    _check_tensor(name, input, "input")
    _check_tensor(name, target, "target")
    if tuple(input.shape) == tuple(target.shape):
        return
    try:
        np.broadcast_shapes(tuple(input.shape), tuple(target.shape))
    except ValueError:
        raise RuntimeError(f"{name}: target of shape {tuple(target.shape)} does not match (nor "
                           f"broadcast with) input of shape {tuple(input.shape)}; expected a "
                           "target of the input's shape.") from None
    if warn:
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input "
                      f"size ({input.shape}). This will likely lead to incorrect results due "
                      "to broadcasting. Please ensure they have the same size.", UserWarning,
                      stacklevel=3)


def _check_float_target(name, target, input):
    if not target.is_floating_point():
        raise RuntimeError(f"{name}: expected a floating-point target like the input "
                           f"({input.dtype}), got target of dtype {target.dtype}; convert it "
                           "with .float().")


def _check_weight(name, weight, input):
    if weight is not None and tuple(weight.shape) != tuple(input.shape):
        raise ValueError(f"{name}: Weights and input must have the same size; got weight of "
                         f"shape {tuple(weight.shape)} and input of shape {tuple(input.shape)}.")


# ----------------------------------------------------------------------------- regression
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error |input - target| (weighted mean with ``weight``)."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_pair("l1_loss", input, target)
    _check_weight("l1_loss", weight, input)
    return _weighted(( input - target).abs(), weight, reduction, "l1_loss")


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error (input - target)^2 (weighted mean with ``weight``)."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_pair("mse_loss", input, target)
    _check_weight("mse_loss", weight, input)
    diff = input - target
    if not diff.is_floating_point() and not diff.is_complex():
        raise NotImplementedError(f"mse_loss: expected floating-point inputs, got "
                                  f"{input.dtype} and {target.dtype}")
    return _weighted(diff * diff, weight, reduction, "mse_loss")


def _weighted(loss, weight, reduction, name):
    if weight is None:
        return _reduce(loss, reduction, name)
    loss = loss * weight
    if reduction == "mean":  # torch: the weighted mean, sum(w * l) / sum(w)
        return loss.sum() / weight.sum()
    return _reduce(loss, reduction, name)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (d = input - target)."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_pair("smooth_l1_loss", input, target)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    d = (input - target).abs()
    if beta == 0:
        return _reduce(d, reduction, "smooth_l1_loss")
    # the square of d held at beta beyond it: where() differentiates both branches, and d = inf
    # in the unused one gave 0 * inf = NaN gradients. A NaN d takes the square (NaN gradient,
    # as torch's d / beta)
    far = d >= beta
    near = ember.where(far, beta, d)
    return _reduce(ember.where(far, d - 0.5 * beta, 0.5 * near * near / beta), reduction,
                   "smooth_l1_loss")


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta)."""
    _check_pair("huber_loss", input, target)
    _check_weight("huber_loss", weight, input)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    d = (input - target).abs()
    far = d >= delta  # see smooth_l1_loss: no inf in the unused branch, NaN takes the square
    near = ember.where(far, delta, d)
    loss = ember.where(far, delta * (d - 0.5 * delta), 0.5 * near * near)
    if weight is not None:
        loss = loss * weight  # torch: a plain mean of the weighted losses here
    return _reduce(loss, reduction, "huber_loss")


# ----------------------------------------------------------------------------- classification
def _class_dim_layout(name, input, target):
    """Validate an (N, C, d1, ...) / (C,) input against class-index targets; return C's dim."""
    if input.ndim == 0:
        raise RuntimeError(f"{name}: input must have a class dimension; got a 0-d input")
    cdim = 0 if input.ndim == 1 else 1
    expected = tuple(s for i, s in enumerate(input.shape) if i != cdim)
    if target._data.dtype not in (np.int64, np.uint8):
        raise RuntimeError(
            f"{name}: expected target dtype to be Long or Byte, but got {target.dtype}: class-"
            f"index targets must be int64 with shape {expected}"
            + (f", or class probabilities must be floating point with the input's shape "
               f"{tuple(input.shape)}" if name == "cross_entropy" else "")
            + f"; got target of shape {tuple(target.shape)}.")
    if tuple(target.shape) != expected:
        if input.ndim >= 2 and target.ndim >= 1 and target.shape[0] != input.shape[0]:
            raise ValueError(f"{name}: Expected input batch_size ({input.shape[0]}) to match "
                             f"target batch_size ({target.shape[0]}).")
        raise RuntimeError(f"{name}: Expected target size {list(expected)}, got "
                           f"{list(target.shape)} (input of shape {tuple(input.shape)}).")
    return cdim


def _check_class_weight(name, weight, n_classes):
    if weight is not None and (weight.ndim != 1 or weight.numel() != n_classes):
        raise RuntimeError(f"{name}: weight tensor should be defined either for all "
                           f"{n_classes} classes or no classes but got weight tensor of shape: "
                           f"{list(weight.shape)}")


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """Cross-entropy between logits ``input`` and class indices or class probabilities.

    Shape: input (C,), (N, C) or (N, C, d1, ...); target (), (N,) or (N, d1, ...) of int64
    class indices, or floating-point probabilities of the input's shape.

    Example:
        >>> import ember
        >>> F = ember.nn.functional
        >>> F.cross_entropy(ember.tensor([[1000.0, 0.0]]), ember.tensor([0]))
        tensor(0.)
    """
    if (type(input) is Tensor and type(target) is Tensor and weight is None
            and size_average is None and reduce is None and reduction in ("mean", "sum")
            and type(label_smoothing) is float and label_smoothing == 0.0):
        a, t = input._data, target._data
        if (a.ndim == 2 and a.dtype in _CE_ROWS and t.dtype == _INT64 and t.ndim == 1
                and t.shape[0] == a.shape[0] > 0):
            # a classifier's loss on (N, C) logits and N class indices: the checks below on
            # the arrays, ~3 us of a 10 us call (the one loss of a small-batch training step)
            loss = CrossEntropyLoss.apply(input, t, None, int(ignore_index), 0.0, reduction, 1)
            return guard_inputs(loss, target)  # NOTE [Guarded inputs]
    reduction = _reduction(size_average, reduce, reduction)
    _check_tensor("cross_entropy", input, "input")
    _check_tensor("cross_entropy", target, "target")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"cross_entropy: {reduction} is not a valid value for reduction")
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"cross_entropy: label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing}")
    if not input.is_floating_point():
        raise RuntimeError(f"cross_entropy: expected floating-point logits, got input of dtype "
                           f"{input.dtype}")
    if target.is_floating_point() and tuple(target.shape) == tuple(input.shape):
        return _cross_entropy_probs(input, target, weight, reduction, label_smoothing)
    cdim = _class_dim_layout("cross_entropy", input, target)
    n_classes = input.shape[cdim]
    _check_class_weight("cross_entropy", weight, n_classes)
    x = input
    if input.dtype in (ember.float16, ember.bfloat16):
        x = input.float()
    w = None if weight is None else weight._data.astype(x._data.dtype)
    loss = CrossEntropyLoss.apply(x, target._data, w, int(ignore_index), float(label_smoothing),
                                  reduction, cdim)
    guard_inputs(loss, target)  # see NOTE [Guarded inputs]: backward reads the class indices
    return loss.to(input.dtype) if loss.dtype != input.dtype else loss


def _cross_entropy_probs(input, target, weight, reduction, smoothing):
    cdim = 0 if input.ndim == 1 else 1
    n_classes = input.shape[cdim]
    _check_class_weight("cross_entropy", weight, n_classes)
    logp = log_softmax(input, cdim)
    if smoothing > 0:
        target = target * (1 - smoothing) + smoothing / n_classes
    if weight is not None:
        shape = [1] * input.ndim
        shape[cdim] = n_classes
        logp = logp * weight.reshape(shape)
    loss = -(logp * target).sum(cdim)
    return _reduce(loss, reduction, "cross_entropy")


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log likelihood of log-probabilities ``input`` at class indices ``target``.

    'mean' divides by the summed weight of the non-ignored targets. Shape as cross_entropy.
    """
    reduction = _reduction(size_average, reduce, reduction)
    _check_tensor("nll_loss", input, "input")
    _check_tensor("nll_loss", target, "target")
    cdim = _class_dim_layout("nll_loss", input, target)
    n_classes = input.shape[cdim]
    if input._meta or target._meta:  # no targets to look up: only the result's shape
        return ember.empty(target.shape if reduction == "none" else (), dtype=input.dtype,
                           device="meta")
    _check_class_weight("nll_loss", weight, n_classes)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"nll_loss: {reduction} is not a valid value for reduction")
    if input.dtype in _FUSED_DTYPES:  # one node: NOTE [Negative log-likelihood in one kernel]
        loss = NLLLoss.apply(input, target._data, None if weight is None else weight._data,
                             int(ignore_index), reduction, cdim)
        return guard_inputs(loss, target)  # NOTE [Guarded inputs]: backward reads the targets
    t = target._data.astype(np.int64).reshape(-1)
    valid = t != ignore_index
    bad = t[valid & ((t < 0) | (t >= n_classes))]
    if bad.size:
        raise IndexError(f"nll_loss: Target {bad[0]} is out of bounds; expected class indices "
                         f"in [0, {n_classes}) or ignore_index={ignore_index}.")
    safe = np.where(valid, t, 0)
    rows = input.movedim(cdim, -1).reshape(-1, n_classes)
    picked = guard_inputs(rows.gather(1, _make(safe.reshape(-1, 1))), target).reshape(-1)
    w = valid.astype(input._data.dtype)
    if weight is not None:
        w = w * weight._data.astype(input._data.dtype)[safe]
    wt = _make(w)
    losses = -picked * wt
    if reduction == "none":
        return losses.reshape(target.shape)
    if reduction == "sum":
        return losses.sum()
    if reduction == "mean":
        return losses.sum() / wt.sum()
    raise ValueError(f"nll_loss: {reduction} is not a valid value for reduction")


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """-w (t log x + (1 - t) log(1 - x)) for probabilities x in [0, 1]."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_tensor("binary_cross_entropy", input, "input")
    _check_tensor("binary_cross_entropy", target, "target")
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"binary_cross_entropy: Using a target size ({target.shape}) that is "
                         f"different to the input size ({input.shape}) is deprecated. Please "
                         "ensure they have the same size.")
    _check_float_target("binary_cross_entropy", target, input)
    if target.dtype != input.dtype:
        target = target.to(input.dtype)
    loss = BinaryCrossEntropy.apply(input, target)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction, "binary_cross_entropy")


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction="mean", pos_weight=None):
    """BCE of sigmoid(input), computed from the logits stably; ``pos_weight`` scales the
    positive term (broadcast along the last dim)."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_tensor("binary_cross_entropy_with_logits", input, "input")
    _check_tensor("binary_cross_entropy_with_logits", target, "target")
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"binary_cross_entropy_with_logits: Target size ({target.shape}) must "
                         f"be the same as input size ({input.shape})")
    _check_float_target("binary_cross_entropy_with_logits", target, input)
    if (weight is None and pos_weight is None and reduction in ("mean", "sum", "none")
            and input.dtype == target.dtype and input.dtype in _FUSED_DTYPES):
        return BinaryCrossEntropyWithLogits.apply(input, target, reduction)  # one node
    # loss = (1 - t) x - (1 + (pw - 1) t) log sigmoid(x)
    log_sig = logsigmoid(input)
    if pos_weight is not None:
        coef = (pos_weight - 1) * target + 1
        loss = (1 - target) * input - coef * log_sig
    else:
        loss = (1 - target) * input - log_sig
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction, "binary_cross_entropy_with_logits")


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """KL divergence with log-probabilities ``input``: t (log t - input), summed per
    ``reduction`` ('batchmean' divides the sum by the batch size)."""
    if size_average is not None or reduce is not None:
        reduction = legacy_get_string(size_average, reduce)
    _check_pair("kl_div", input, target, warn=False)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = ember.xlogy(target, target) - target * input
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                      "support size.'batchmean' divides only by the batch size, and aligns with "
                      "the KL div math definition.'mean' will be changed to behave the same as "
                      "'batchmean' in the next major release.", UserWarning, stacklevel=2)
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.ndim else loss.sum()
    return _reduce(loss, reduction, "kl_div")


# ----------------------------------------------------------------------------- margin / embedding
def _broadcast_check(name, *named):
    shapes = [tuple(t.shape) for _, t in named]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        desc = ", ".join(f"{n} of shape {tuple(t.shape)}" for n, t in named)
        raise RuntimeError(f"{name}: inputs must have matching (broadcastable) shapes; got "
                           f"{desc}.") from None


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                        reduction="mean"):
    """max(0, -target * (input1 - input2) + margin)."""
    reduction = _reduction(size_average, reduce, reduction)
    _broadcast_check("margin_ranking_loss", ("input1", input1), ("input2", input2),
                     ("target", target))
    return _reduce((-target * (input1 - input2) + margin).clamp(min=0), reduction,
                   "margin_ranking_loss")


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """input where target == 1, max(0, margin - input) where target == -1."""
    reduction = _reduction(size_average, reduce, reduction)
    _broadcast_check("hinge_embedding_loss", ("input", input), ("target", target))
    zeros = ember.zeros_like(input)
    margin_part = ember.where(target != 1, (margin - input).clamp(min=0), zeros)
    self_part = ember.where(target != -1, input, zeros)
    return _reduce(margin_part + self_part, reduction, "hinge_embedding_loss")


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                          reduction="mean"):
    """1 - cos(x1, x2) where target == 1, max(0, cos(x1, x2) - margin) where target == -1."""
    reduction = _reduction(size_average, reduce, reduction)
    if input1.ndim not in (1, 2) or tuple(input1.shape) != tuple(input2.shape):
        raise RuntimeError(f"cosine_embedding_loss: expected 1-D or 2-D inputs of equal shape; "
                           f"got {tuple(input1.shape)} and {tuple(input2.shape)}")
    expected = tuple(input1.shape[:-1])
    # a 1-element target of the right rank broadcasts over the batch, as in torch
    if target.ndim != len(expected) or (tuple(target.shape) != expected and target.numel() != 1):
        raise RuntimeError(f"cosine_embedding_loss: expected target of shape {expected} (or one "
                           f"element of that rank), got {tuple(target.shape)}")
    eps = 1e-12
    dot = (input1 * input2).sum(-1)
    mag = ((input1 * input1).sum(-1) + eps) * ((input2 * input2).sum(-1) + eps)
    cos = dot / mag.sqrt()
    zeros = ember.zeros_like(cos)
    pos = ember.where(target == 1, 1 - cos, zeros)
    neg = ember.where(target == -1, (cos - margin).clamp(min=0), zeros)
    return _reduce(pos + neg, reduction, "cosine_embedding_loss")


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """max(d(a, p) - d(a, n) + margin, 0) with the p-norm pairwise distance."""
    reduction = _reduction(size_average, reduce, reduction)
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"triplet_margin_loss: The anchor, positive, and negative tensors are "
                           f"expected to have the same number of dimensions, but got: anchor "
                           f"{anchor.ndim}D, positive {positive.ndim}D, and negative "
                           f"{negative.ndim}D inputs")
    _broadcast_check("triplet_margin_loss", ("anchor", anchor), ("positive", positive),
                     ("negative", negative))
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = ember.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + d_pos - d_neg).clamp(min=0), reduction, "triplet_margin_loss")


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """Triplet loss with a custom ``distance_function`` (pairwise_distance by default)."""
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = ember.minimum(d_neg, dist(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp(min=0), reduction,
                   "triplet_margin_with_distance_loss")


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """Poisson negative log likelihood: exp(input) - target * input (log_input) or
    input - target * log(input + eps); ``full`` adds Stirling's term for target > 1."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_pair("poisson_nll_loss", input, target, warn=False)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        safe = ember.where(target > 1, target, ember.ones_like(target))
        stirling = safe * safe.log() - safe + 0.5 * (2 * math.pi * safe).log()
        loss = loss + ember.where(target > 1, stirling, ember.zeros_like(stirling))
    return _reduce(loss, reduction, "poisson_nll_loss")


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """0.5 (log var + (input - target)^2 / var) (+ 0.5 log 2 pi with ``full``).

    var has the input's shape, or one dim fewer, or a last dim of 1 (shared variance); it is
    clamped to >= eps for stability without blocking its gradient (as torch does).
    """
    _check_tensor("gaussian_nll_loss", input, "input")
    if not isinstance(var, Tensor):
        var = ember.full(tuple(input.shape), float(var), dtype=input.dtype)
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.ndim and
                  var.shape[-1] == 1):
            raise ValueError(f"gaussian_nll_loss: var is of incorrect size; got var of shape "
                             f"{tuple(var.shape)} for input of shape {tuple(input.shape)}, "
                             "expected the input's shape, its shape without the last dim, or "
                             "a last dim of 1.")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"gaussian_nll_loss: {reduction} is not a valid value for reduction")
    if bool((var < 0).any()):
        raise ValueError("gaussian_nll_loss: var has negative entry/entries")
    # clamp the value, keep the gradient of the unclamped var (straight-through)
    var = var + (var.clamp(min=eps) - var).detach()
    diff = input - target
    loss = 0.5 * (var.log() + diff * diff / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction, "gaussian_nll_loss")


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """-mean over classes of t log sigmoid(x) + (1 - t) log sigmoid(-x)."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_pair("multilabel_soft_margin_loss", input, target, warn=False)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.ndim - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    return _reduce(loss, reduction, "multilabel_soft_margin_loss")


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target * input))."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_pair("soft_margin_loss", input, target, warn=False)
    return _reduce(-logsigmoid(target * input), reduction, "soft_margin_loss")


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """sum over i != y of max(0, margin - x[y] + x[i])^p / C (multi-class hinge loss)."""
    reduction = _reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("multi_margin_loss: only p == 1 and p == 2 supported")
    x = input if input.ndim == 2 else input.reshape(1, -1)
    t = target.reshape(-1)
    n_classes = x.shape[1]
    xy = x.gather(1, t.reshape(-1, 1))
    m = (margin - xy + x).clamp(min=0)
    if p == 2:
        m = m * m
    if weight is not None:
        m = m * weight[t].reshape(-1, 1)
    not_target = 1 - ember.nn.functional.one_hot(t, n_classes).to(x.dtype)
    loss = (m * not_target).sum(1) / n_classes
    if input.ndim < 2:
        loss = loss.reshape(())
    return _reduce(loss, reduction, "multi_margin_loss")


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Multi-label hinge loss: for each sample, the sum over its target classes j and the
    other classes i of max(0, 1 - (x[j] - x[i])), divided by the number of classes C.

    ``target`` holds class indices (int64, same shape as ``input``); a sample's targets are
    the entries before its first -1. A class listed twice counts twice, as in torch.

    Example:
        >>> import ember
        >>> x = ember.tensor([[0.1, 0.2, 0.4, 0.8]])
        >>> ember.nn.functional.multilabel_margin_loss(x, ember.tensor([[3, 0, -1, 1]]))
        tensor(0.8500)
    """
    name = "multilabel_margin_loss"
    reduction = _reduction(size_average, reduce, reduction)
    _check_tensor(name, input, "input")
    _check_tensor(name, target, "target")
    if input.ndim > 2 or (input.ndim == 1 and input.shape[0] == 0) or (
            input.ndim == 2 and input.shape[1] == 0):
        raise RuntimeError(f"{name}: expected a non-empty vector or matrix with an optional "
                           f"empty batch dimension; got input of shape {tuple(input.shape)}.")
    if target.dtype != ember.int64:
        raise RuntimeError(f"{name}: expected scalar type Long for target but found "
                           f"{target.dtype}.")
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"{name}: inconsistent target size; got target of shape "
                           f"{tuple(target.shape)} for input of shape {tuple(input.shape)}, "
                           "expected the same shape.")
    x = input.reshape(-1, max(input.numel(), 1)) if input.ndim < 2 else input
    labels = target.detach().numpy().reshape(x.shape)
    n_classes = x.shape[1]
    if ((labels < -1) | (labels >= n_classes)).any():
        raise RuntimeError(f"{name}: target values must lie in [-1, {n_classes - 1}]; got "
                           f"values in [{labels.min()}, {labels.max()}].")
    # targets of a row: the entries before its first -1
    valid = np.cumprod(labels != -1, axis=1).astype(bool)
    is_target = np.zeros(x.shape, bool)
    rows, cols = np.nonzero(valid)
    is_target[rows, labels[rows, cols]] = True
    safe = ember.tensor(np.where(valid, labels, 0))
    x_target = x.gather(1, safe)                                     # (N, J)
    # relu, not clamp: the hinge has gradient 0 where it is exactly 0, as torch's kernel
    hinge = (1 - x_target.unsqueeze(2) + x.unsqueeze(1)).relu()     # (N, J, C)
    pair = (valid[:, :, None] & ~is_target[:, None, :]).astype(np.float64)
    loss = (hinge * ember.tensor(pair, dtype=x.dtype)).sum((1, 2)) / n_classes
    if input.ndim < 2:
        loss = loss.reshape(())
    return _reduce(loss, reduction, name)




# NOTE [Losses under autocast]: PyTorch's CPU autocast runs losses in float32 (its "fp32" op
# list). Every public loss here upcasts its tensor arguments through the autocast hook, which
# returns them untouched outside an autocast region (one flag check).
def _fp32_under_autocast(fn, op_name):


    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if _autocast.enabled:   # tensors given by keyword too: F.mse_loss(input=a, target=b)
            pos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
            names = [k for k, v in kwargs.items() if isinstance(v, Tensor)]
            cast = maybe_autocast(op_name, *[args[i] for i in pos],
                                  *[kwargs[k] for k in names])
            args = list(args)
            for i, c in zip(pos, cast[:len(pos)], strict=True):
                args[i] = c
            kwargs.update(zip(names, cast[len(pos):], strict=True))
        return fn(*args, **kwargs)

    return wrapper


_LOSS_NAMES = ("cross_entropy", "nll_loss", "binary_cross_entropy", "kl_div",
               "binary_cross_entropy_with_logits")
for _name in __all__:
    _f = globals().get(_name)
    if callable(_f) and (_name.endswith("loss") or _name in _LOSS_NAMES):
        globals()[_name] = _fp32_under_autocast(_f, _name)
