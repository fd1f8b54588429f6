"""Loss ops: cross-entropy with class indices and binary cross-entropy (fused kernels of
``ember/ops/_kernels/loss.py``), and CTC.

Cross-entropy's gradient is written once, in the kernel, as the op CrossEntropyBackward; that
op's own backward (double backward) is softmax's Jacobian and the gradient's linearity in the
incoming gradient.

NOTE [CTC recursions]: the loss is the negative log of the total probability of all frame
alignments that collapse to the target. The alpha (forward) and beta (backward) recursions run
in log space over the blank-extended target l' (blank, l1, blank, l2, ..., blank) with one
Python loop over time steps and NumPy over batch and label positions; the gradient with respect
to each log-probability follows from alpha * beta, computed in the forward when needed.
"""
from __future__ import annotations

import numpy as np

from ..._tensor import _make
from ...autograd.function import Op, once_differentiable
from .._kernels import loss as _kloss
from .activation import Softmax


def _to_rows(x, cdim):
    """(M, C) C-contiguous rows of an array with its class dim moved last."""
    if cdim == x.ndim - 1 and x.flags.c_contiguous:  # (N, C) logits: nothing moves
        return x.reshape(-1, x.shape[-1]), x.shape
    moved = np.moveaxis(x, cdim, -1)
    return np.ascontiguousarray(moved).reshape(-1, moved.shape[-1]), moved.shape


class CrossEntropyLoss(Op):
    """Cross-entropy of logits with class-index targets (fused kernel forward and backward)."""

    @staticmethod
    def forward(ctx, x, target, weight, ignore_index, smoothing, reduction, cdim):
        rows, _ = _to_rows(x, cdim)
        t = target.reshape(-1) if target.dtype == np.int64 else target.astype(np.int64).reshape(-1)
        if not t.flags.c_contiguous:
            t = np.ascontiguousarray(t)
        w = None if weight is None else np.ascontiguousarray(weight, dtype=x.dtype)
        loss, saved = _kloss.cross_entropy_forward(rows, t, w, ignore_index, smoothing,
                                                   reduction)
        ctx.kernel_saved, ctx.params = saved, (ignore_index, smoothing, reduction, cdim)
        ctx.target, ctx.weight = t, w
        ctx.save_for_backward(x)
        if reduction == "none":
            return loss.reshape(target.shape)
        return loss

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        gx = CrossEntropyBackward.apply(grad, x, ctx.target, ctx.weight, ctx.kernel_saved,
                                        ctx.params)
        return gx, None, None, None, None, None, None


class CrossEntropyBackward(Op):
    """d cross_entropy / d logits, written once: the fused kernel.

    G = scale * (softmax(x) * coef - (1 - smoothing) * w_t * onehot(t) - smoothing / C * w)
    per row, where coef = w_t (1 - smoothing) + smoothing / C * sum(w) (0 on ignored rows) and
    scale is the incoming gradient (divided by the total weight for 'mean'). Its own backward
    (double backward) needs only the parts that vary: softmax's Jacobian in x, and G's
    linearity in the incoming gradient.
    """

    @staticmethod
    def forward(ctx, grad, x, target, weight, kernel_saved, params):
        ignore_index, smoothing, reduction, cdim = params
        ctx.target, ctx.weight, ctx.kernel_saved, ctx.params = target, weight, kernel_saved, params
        ctx.save_for_backward(grad, x)
        rows, moved_shape = _to_rows(x, cdim)
        g = _kloss.cross_entropy_backward(grad, rows, target, kernel_saved, weight, ignore_index,
                                          smoothing, reduction)
        if cdim == len(moved_shape) - 1:
            return g.reshape(moved_shape)
        return np.ascontiguousarray(np.moveaxis(g.reshape(moved_shape), -1, cdim))

    @staticmethod
    def backward(ctx, gg):
        grad, x = ctx.saved_tensors
        ignore_index, smoothing, reduction, cdim = ctx.params
        n_classes = x.shape[cdim]
        need = ctx.needs_input_grad
        g_grad = g_x = None
        if need[0]:  # G is linear in grad: G = grad * G(1) (per row for 'none')
            unit = CrossEntropyBackward.apply(grad.new_ones(grad.shape), x, ctx.target, ctx.weight,
                                              ctx.kernel_saved, ctx.params)
            prod = (gg * unit).movedim(cdim, -1).reshape(-1, n_classes)
            g_grad = prod.sum(-1).reshape(grad.shape) if reduction == "none" else prod.sum()
        if need[1]:  # d G_i / d x_i = coef_i * scale_i * J_softmax(x_i)
            t = ctx.target
            valid = t != ignore_index
            w = np.ones(n_classes, x._data.dtype) if ctx.weight is None else ctx.weight
            w_t = np.where(valid, w[np.where(valid, t, 0)], 0)
            coef = _make(((1 - smoothing) * w_t + smoothing / n_classes * w.sum() * valid)
                         .astype(x._data.dtype))
            if reduction == "none":
                scale = grad.reshape(-1)
            elif reduction == "mean":
                scale = grad / ctx.kernel_saved[-1]
            else:
                scale = grad
            rows = x.movedim(cdim, -1).reshape(-1, n_classes)
            s = Softmax.apply(rows, 1, False)
            u = gg.movedim(cdim, -1).reshape(-1, n_classes) * (coef * scale).unsqueeze(1)
            g_rows = s * (u - (u * s).sum(-1, keepdim=True))
            moved_shape = tuple(n for i, n in enumerate(x.shape) if i != cdim) + (n_classes,)
            g_x = g_rows.reshape(moved_shape).movedim(-1, cdim)
        return g_grad, g_x, None, None, None, None


_NO_WEIGHT = {np.dtype(d): np.empty(0, d) for d in (np.float32, np.float64)}


class NLLLoss(Op):
    """Negative log-likelihood of rows at class indices: one kernel forward, one backward
    (NOTE [Negative log-likelihood in one kernel] in ops/_kernels/loss.py)."""

    @staticmethod
    def forward(ctx, x, target, weight, ignore_index, reduction, cdim):
        rows, _ = _to_rows(x, cdim)
        t = np.ascontiguousarray(target.reshape(-1), dtype=np.int64)
        w = (_NO_WEIGHT[x.dtype] if weight is None
             else np.ascontiguousarray(weight, dtype=x.dtype))
        losses = np.empty(rows.shape[0], x.dtype)
        sums = np.zeros(2)
        bad = _kloss.nll_forward(rows, t, w, weight is not None, ignore_index, losses, sums)
        if bad >= 0:
            raise IndexError(f"nll_loss: Target {t[bad]} is out of bounds; expected class indices "
                             f"in [0, {rows.shape[1]}) or ignore_index={ignore_index}.")
        ctx.target, ctx.weight, ctx.params = target, weight, (ignore_index, reduction, cdim)
        ctx.x_shape, ctx.total = x.shape, float(sums[1])
        if reduction == "none":
            return losses.reshape(target.shape)
        if reduction == "sum":
            return np.asarray(sums[0], x.dtype)
        return np.asarray(sums[0] / sums[1] if sums[1] else np.nan, x.dtype)

    @staticmethod
    def backward(ctx, grad):
        gx = NLLLossBackward.apply(grad, ctx.target, ctx.weight, ctx.params, ctx.x_shape,
                                   ctx.total)
        return gx, None, None, None, None, None


class NLLLossBackward(Op):
    """d nll_loss / d input: -w_t * scale at each row's target, zero elsewhere. Linear in the
    incoming gradient and constant in the input, so its own backward is nll_loss of gg."""

    @staticmethod
    def forward(ctx, grad, target, weight, params, x_shape, total):
        ignore_index, reduction, cdim = params
        ctx.target, ctx.weight, ctx.params = target, weight, params
        n_classes = x_shape[cdim]
        moved = tuple(n for i, n in enumerate(x_shape) if i != cdim) + (n_classes,)
        out = np.zeros((int(np.prod(moved[:-1])), n_classes), grad.dtype)
        t = np.ascontiguousarray(target.reshape(-1), dtype=np.int64)
        w = (_NO_WEIGHT[grad.dtype] if weight is None
             else np.ascontiguousarray(weight, dtype=grad.dtype))
        scale = np.ascontiguousarray(grad.reshape(-1))
        if reduction == "mean":
            scale = scale / (total if total else np.nan)
        _kloss.nll_backward(t, w, weight is not None, ignore_index, scale, reduction == "none",
                            out)
        if cdim == len(x_shape) - 1:
            return out.reshape(x_shape)
        return np.ascontiguousarray(np.moveaxis(out.reshape(moved), -1, cdim))

    @staticmethod
    def backward(ctx, gg):
        ignore_index, reduction, cdim = ctx.params
        return (NLLLoss.apply(gg, ctx.target, ctx.weight, ignore_index, reduction, cdim),
                None, None, None, None, None)


class BinaryCrossEntropy(Op):
    """Binary cross-entropy of probabilities; logs are clamped at -100 like torch."""

    @staticmethod
    def forward(ctx, x, t):
        if x.size and (np.nanmin(x) < 0 or np.nanmax(x) > 1):
            raise RuntimeError("binary_cross_entropy: all elements of input should be between 0 "
                               f"and 1; got values in [{np.nanmin(x)}, {np.nanmax(x)}].")
        ctx.save_for_backward(x, t)
        with np.errstate(divide="ignore"):
            log_x = np.maximum(np.log(x), -100)
            log_1mx = np.maximum(np.log1p(-x), -100)
        return -(t * log_x + (1 - t) * log_1mx)

    @staticmethod
    def backward(ctx, grad):
        x, t = ctx.saved_tensors
        gx = gt = None
        if ctx.needs_input_grad[0]:  # d/dx = (x - t) / (x (1 - x)), denominator kept >= 1e-12
            gx = grad * (x - t) / (x * (1 - x)).clamp(min=1e-12)
        if ctx.needs_input_grad[1]:  # d/dt = log(1 - x) - log(x)
            gt = grad * ((1 - x).log().clamp(min=-100) - x.log().clamp(min=-100))
        return gx, gt


class BinaryCrossEntropyWithLogits(Op):
    """Binary cross-entropy of sigmoid(x) against targets t, from the logits, reduced by
    ``reduction`` ('none', 'mean' or 'sum'); without weight or pos_weight (the functional
    composes those cases from ember ops).

    One node where the composed form is five (log-sigmoid, two products, a difference, the
    reduction) and as many in backward: NCF's loss at batch 4096 is overhead-bound. The
    backward is built from ember ops, so double backward works as for the composed form.
    """

    @staticmethod
    def forward(ctx, x, t, reduction):
        # (1 - t) x - log sigmoid(x) = (1 - t) x + max(-x, 0) + log(1 + exp(-|x|)): no overflow,
        # and torch's form at infinite logits (x = inf, t = 0: inf; x = -inf: NaN, as torch's
        # inf - inf; max(x, 0) - t x gave NaN at x = inf, t = 0)
        loss = np.abs(x)
        np.negative(loss, out=loss)
        np.exp(loss, out=loss)
        np.log1p(loss, out=loss)
        with np.errstate(invalid="ignore"):
            loss += np.maximum(-x, 0)
            loss += (1 - t) * x
        ctx.reduction = reduction
        ctx.save_for_backward(x, t)
        if reduction == "mean":  # the mean of nothing is nan, as torch's (without a warning)
            with np.errstate(invalid="ignore"):
                return np.asarray(loss.sum() / loss.size, x.dtype)
        if reduction == "sum":
            return np.asarray(loss.sum(), x.dtype)
        return loss

    @staticmethod
    def backward(ctx, grad):
        x, t = ctx.saved_tensors
        if ctx.reduction == "mean" and x.numel():
            grad = grad / x.numel()
        need = ctx.needs_input_grad
        gx = (x.sigmoid() - t) * grad if need[0] else None   # d/dx = sigmoid(x) - t
        gt = -x * grad if need[1] else None                   # d/dt = -x
        return gx, gt, None


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


class CtcLoss(Op):
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
