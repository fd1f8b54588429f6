"""Connectionist temporal classification loss (Graves et al., 2006) for
``ember.nn.functional`` (re-exported there).

NOTE [CTC recursions]: the loss is the negative log of the total probability of all frame
alignments that collapse to the target. The alpha (forward) and beta (backward) recursions run
in log space over the blank-extended target l' (blank, l1, blank, l2, ..., blank) with one
Python loop over time steps and NumPy over batch and label positions; the gradient with respect
to each log-probability follows from alpha * beta, computed in the forward when needed.
"""
from __future__ import annotations

import numpy as np

import ember

from .._tensor import Tensor, _make
from ..autograd.function import Op, once_differentiable

__all__ = ["ctc_loss"]


def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"ctc_loss: {reduction} is not a valid value for reduction; expected "
                     "'none', 'mean' or 'sum'.")


def _check_tensor(name, value, arg):
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' must be Tensor, not "
                        f"{type(value).__name__}")


def _lengths(v, name, n):
    a = np.asarray(v._data if isinstance(v, Tensor) else v, dtype=np.int64).reshape(-1)
    if a.size != n:
        raise RuntimeError(f"ctc_loss: {name} must have one entry per batch element ({n}); got "
                           f"{a.size}")
    return a


def _lse(*arrays):
    """Elementwise log(sum(exp)) of same-shape arrays, -inf safe."""
    m = arrays[0]
    for a in arrays[1:]:
        m = np.maximum(m, a)
    safe = np.where(np.isfinite(m), m, 0.0)
    total = sum(np.exp(a - safe) for a in arrays)
    with np.errstate(divide="ignore"):
        return np.log(total) + safe


def _ctc_forward_backward(lp, ext, ext_len, in_len, need_grad):
    """alpha/beta recursions over the blank-extended labels, vectorized over the batch.

    lp: (T, N, C) float64 log-probabilities; ext: (N, L) extended labels; ext_len, in_len:
    (N,). Returns (nll (N,), d nll / d lp (T, N, C) or None).
    """
    t_max, n, _ = lp.shape
    big_l = ext.shape[1]
    neg_inf = -np.inf
    s_idx = np.arange(big_l)
    valid_s = s_idx[None, :] < ext_len[:, None]
    skip = np.zeros((n, big_l), bool)
    skip[:, 2:] = (s_idx[None, 2:] % 2 == 1) & (ext[:, 2:] != ext[:, :-2])
    lp_ext = np.take_along_axis(lp, np.broadcast_to(ext[None], (t_max, n, big_l)), axis=2)

    def shifted(a, k, mask=None):
        out = np.full_like(a, neg_inf)
        out[:, k:] = a[:, :-k] if k else a
        return out if mask is None else np.where(mask, out, neg_inf)

    alpha = np.full((t_max, n, big_l), neg_inf)
    alpha[0, :, 0] = lp_ext[0, :, 0]
    if big_l > 1:
        alpha[0, :, 1] = np.where(ext_len > 1, lp_ext[0, :, 1], neg_inf)
    for t in range(1, t_max):
        prev = alpha[t - 1]
        alpha[t] = _lse(prev, shifted(prev, 1), shifted(prev, 2, skip)) + lp_ext[t]
        alpha[t] = np.where(valid_s, alpha[t], neg_inf)
    last_t = np.clip(in_len - 1, 0, t_max - 1)
    rows = np.arange(n)
    end = alpha[last_t, rows]
    tail1 = end[rows, np.maximum(ext_len - 1, 0)]
    tail2 = np.where(ext_len > 1, end[rows, np.maximum(ext_len - 2, 0)], neg_inf)
    nll = -_lse(tail1, tail2)
    if not need_grad:
        return nll, None
    # beta_t(s): log prob of emitting the rest of the labels from (t, s), emission at t included
    skip_back = np.zeros((n, big_l), bool)
    skip_back[:, :-2] = skip[:, 2:]
    beta = np.full((t_max, n, big_l), neg_inf)
    for t in range(t_max - 1, -1, -1):
        if t < t_max - 1:
            nxt = beta[t + 1]
            fwd1 = np.full_like(nxt, neg_inf)
            fwd1[:, :-1] = nxt[:, 1:]
            fwd2 = np.full_like(nxt, neg_inf)
            fwd2[:, :-2] = nxt[:, 2:]
            fwd2 = np.where(skip_back, fwd2, neg_inf)
            beta[t] = _lse(nxt, fwd1, fwd2) + lp_ext[t]
        starts = last_t == t  # sequences whose last frame is t start their recursion here
        init = np.full((n, big_l), neg_inf)
        init[rows, np.maximum(ext_len - 1, 0)] = lp_ext[t, rows, np.maximum(ext_len - 1, 0)]
        second = np.maximum(ext_len - 2, 0)
        init[rows, second] = np.where(ext_len > 1, lp_ext[t, rows, second], init[rows, second])
        beta[t] = np.where(starts[:, None], init, np.where((t > last_t)[:, None], neg_inf,
                                                           beta[t]))
        beta[t] = np.where(valid_s, beta[t], neg_inf)
    # d nll / d lp[t, c] = -exp(logsumexp_{s: ext_s = c}(alpha + beta) - lp[t, c] + nll)
    ab = alpha + beta
    m = ab.max(axis=2, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    onehot = np.zeros((n, big_l, lp.shape[2]))
    onehot[rows[:, None], s_idx[None, :], ext] = 1.0
    occ = np.einsum("tnl,nlc->tnc", np.exp(ab - m), onehot * valid_s[:, :, None])
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        grad = -np.exp(np.log(occ) + m - lp + nll[None, :, None])
    grad = np.where(np.isfinite(grad), grad, 0.0)
    grad[np.arange(t_max)[:, None] >= in_len[None, :]] = 0.0
    return nll, grad


class _CTC(Op):
    """Per-sequence CTC negative log likelihood (NumPy alpha-beta; not twice
    differentiable)."""

    @staticmethod
    def forward(ctx, log_probs, ext, ext_len, in_len, zero_infinity):
        need = bool(ctx.needs_input_grad and ctx.needs_input_grad[0])
        nll, grad = _ctc_forward_backward(log_probs.astype(np.float64), ext, ext_len, in_len,
                                          need)
        if zero_infinity:
            inf = ~np.isfinite(nll)
            nll = np.where(inf, 0.0, nll)
            if grad is not None:
                grad[:, inf, :] = 0.0
        ctx.grad = None if grad is None else grad.astype(log_probs.dtype)
        return nll.astype(log_probs.dtype)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        return _make(ctx.grad) * grad.reshape(1, -1, 1), None, None, None, None


_CTC.__name__ = "CtcLoss"


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
    nll = _CTC.apply(x, ext, 2 * tgt_len + 1, in_len, bool(zero_infinity)).to(log_probs.dtype)
    if reduction == "mean":
        return (nll / _make(np.maximum(tgt_len, 1).astype(nll._data.dtype))).mean()
    if unbatched and reduction == "none":
        return nll.reshape(())
    return _reduce(nll, reduction)
