"""Connectionist temporal classification loss (Graves et al., 2006) of
``ember.nn.functional``: argument checks here, the recursions in ``ember/ops/nn/loss.py`` (see
NOTE [CTC recursions] there).
"""
from __future__ import annotations

import numpy as np

import ember

from ..._tensor import Tensor, _make
from ...autograd.function import guard_inputs
from ...ops.nn.loss import CtcLoss
from ._utils import _check_tensor

__all__ = ["ctc_loss"]


def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"ctc_loss: {reduction} is not a valid value for reduction; expected "
                     "'none', 'mean' or 'sum'.")


def _lengths(v, name, n):
    a = np.asarray(v._data if isinstance(v, Tensor) else v, dtype=np.int64).reshape(-1)
    if a.size != n:
        raise RuntimeError(f"ctc_loss: {name} must have one entry per batch element ({n}); got "
                           f"{a.size}")
    return a


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """Connectionist temporal classification loss.

    Shape: log_probs (T, N, C) or (T, C) (log_softmax outputs); targets (N, S) padded or the
    1-D concatenation of all targets; input_lengths, target_lengths (N,). 'mean' divides each
    sequence's loss by its target length, then averages over the batch.

    Differs from torch: the gradient is the exact derivative with respect to ``log_probs``;
    torch returns the derivative with respect to the logits before log_softmax (they differ by
    exp(log_probs), which cancels once the gradient flows through log_softmax).
    """
    _check_tensor("ctc_loss", log_probs, "log_probs")
    _check_tensor("ctc_loss", targets, "targets")
    unbatched = log_probs.ndim == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        if targets.ndim == 1:
            targets = targets.unsqueeze(0)
    if log_probs.ndim != 3:
        raise RuntimeError(f"ctc_loss: expected log_probs of shape (T, N, C) or (T, C), got "
                           f"{tuple(log_probs.shape)}")
    if targets._data.dtype.kind not in "iu":
        raise RuntimeError(f"ctc_loss: targets must be an integer tensor, got {targets.dtype}")
    t_max, n, n_classes = log_probs.shape
    in_len = _lengths(input_lengths, "input_lengths", n)
    tgt_len = _lengths(target_lengths, "target_lengths", n)
    if (in_len > t_max).any() or (in_len < 0).any():
        raise RuntimeError(f"ctc_loss: Expected input_lengths to have value at most {t_max}, "
                           f"but got {in_len.tolist()}")
    tg = targets._data.astype(np.int64)
    if tg.ndim == 2:
        if (tgt_len > tg.shape[1]).any():
            raise RuntimeError(f"ctc_loss: Expected tensor to have size at least "
                               f"{tgt_len.max()} at dimension 1, but got size {tg.shape[1]} "
                               "for targets")
        padded = tg
    else:
        if tg.size < tgt_len.sum():
            raise RuntimeError(f"ctc_loss: 1-D targets hold {tg.size} labels but "
                               f"target_lengths sum to {tgt_len.sum()}")
        padded = np.zeros((n, max(int(tgt_len.max(initial=0)), 1)), np.int64)
        offsets = np.concatenate([[0], np.cumsum(tgt_len)])
        for i in range(n):
            padded[i, :tgt_len[i]] = tg[offsets[i]:offsets[i + 1]]
    s_max = max(int(tgt_len.max(initial=0)), 1)
    labels = padded[:, :s_max]
    used = np.arange(labels.shape[1])[None, :] < tgt_len[:, None]
    if ((labels < 0) | (labels >= n_classes) | (labels == blank))[used].any():
        raise RuntimeError(f"ctc_loss: target labels must be in [0, {n_classes}) and differ "
                           f"from blank={blank}")
    ext = np.full((n, 2 * labels.shape[1] + 1), blank, np.int64)
    ext[:, 1::2] = np.where(used, labels, blank)
    x = log_probs
    if x.dtype in (ember.float16, ember.bfloat16):
        x = x.float()
    nll = CtcLoss.apply(x, ext, 2 * tgt_len + 1, in_len, bool(zero_infinity))
    # see NOTE [Guarded inputs]: torch refuses backward once these changed in place
    guard_inputs(nll, targets, input_lengths, target_lengths)
    nll = nll.to(log_probs.dtype)
    if reduction == "mean":
        return (nll / _make(np.maximum(tgt_len, 1).astype(nll._data.dtype))).mean()
    if unbatched and reduction == "none":
        return nll.reshape(())
    return _reduce(nll, reduction)
