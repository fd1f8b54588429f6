"""``linear_cross_entropy``: cross-entropy of a linear projection, with an optional chunked path
that never holds the whole (batch, classes) logits matrix.

Reference path (``options=None``): ``cross_entropy(linear(input, W, b), target, ...)`` with W of
shape (C, d1..dK, in_features) viewed as a (C * d1..dK, in_features) matrix; fully
differentiable, double backward included.

Chunked path (``options=LinearCrossEntropyOptions(...)``): the forward walks the batch in chunks
of rows, and for each chunk computes the chunk's loss and its gradients with respect to the
input rows, the weight and the bias right away (ember autograd on the chunk), then drops the
chunk's logits. Peak memory is one chunk of logits plus gradient-sized buffers; backward only
scales the stored gradients by the incoming one. Like torch's chunked op it is
once-differentiable. It covers 'mean' / 'sum' reductions with class-index or probability
targets, and a (C,) bias; anything else (reduction='none', K-dimensional weights) runs the
reference path, with a warning for the K-dimensional case as torch gives.
"""
from __future__ import annotations

import math
import warnings

import ember

from ...autograd.function import Function, once_differentiable
from ._linear import linear
from ._loss import cross_entropy
from ._utils import _check_tensor

__all__ = ["linear_cross_entropy"]


def _logits(input, linear_weight, linear_bias):
    """linear(input) with the (C, d1..dK, in) weight flattened, reshaped back to (N, C, d..)."""
    in_features = linear_weight.shape[-1]
    w = linear_weight.reshape(-1, in_features)
    b = linear_bias.reshape(-1) if linear_bias is not None else None
    z = linear(input, w, b)
    if linear_weight.ndim > 2:
        z = z.reshape((input.shape[0],) + tuple(linear_weight.shape[:-1]))
    return z


def _chunk_rows(options, n, num_classes, in_features):
    """Rows per chunk from the options (torch's rules: an explicit ``batch_chunk_size``, else
    the aspect-ratio heuristic, else one chunk)."""
    method = options.chunking_method
    if options.batch_chunk_size is not None:
        if method not in (None, "auto"):
            raise ValueError("linear_cross_entropy: batch_chunk_size and chunking_method "
                             f"disagree; got batch_chunk_size={options.batch_chunk_size} and "
                             f"chunking_method={method!r}, expected one of them.")
        return options.batch_chunk_size
    if method is None:
        return max(n, 1)
    # 'auto' on the CPU for float32 / float64 resolves to 'aspect_ratio:2', as in torch
    factor = 2 if method == "auto" else int(method.partition(":")[2] or 1)
    # chunk logits about the size of the input: n / ceil(C / in) rows, to a power of two
    rows = -(-n // max(-(-num_classes // max(in_features, 1)), 1))
    rows = 1 << max(rows - 1, 0).bit_length()
    return max(rows // factor, 1)


class _ChunkedLinearCrossEntropy(Function):
    """Loss and its gradients computed chunk by chunk in forward; see the module docstring."""

    @staticmethod
    def forward(ctx, input, linear_weight, linear_bias, target, kwargs, rows, denominator):
        leaves = [t.detach().requires_grad_(t.requires_grad)
                  for t in (input, linear_weight, linear_bias) if t is not None]
        wanted = [t for t in leaves if t.requires_grad]
        totals = {id(t): None for t in wanted}
        grad_input_rows = []
        loss = input.new_zeros(())
        x, w = leaves[0], leaves[1]
        b = leaves[2] if linear_bias is not None else None
        with ember.enable_grad():
            for start in range(0, input.shape[0], rows):
                xc = x[start:start + rows]
                part = cross_entropy(_logits(xc, w, b), target[start:start + rows],
                                     reduction="sum", **kwargs) / denominator
                loss = loss + part.detach()
                if not wanted:
                    continue
                grads = ember.autograd.grad(part, wanted, allow_unused=True)
                for leaf, g in zip(wanted, grads, strict=True):
                    if leaf is x:
                        grad_input_rows.append(g[start:start + rows])
                    elif g is not None:
                        prev = totals[id(leaf)]
                        totals[id(leaf)] = g if prev is None else prev + g
        gx = ember.cat(grad_input_rows) if grad_input_rows else None
        ctx.grads = (gx, totals.get(id(w)), totals.get(id(b)) if b is not None else None)
        return loss

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        gx, gw, gb = (g * grad if g is not None else None for g in ctx.grads)
        return gx, gw, gb, None, None, None, None


def _denominator(input, target, weight, ignore_index, num_classes, kdims, reduction):
    """What 'mean' divides the summed loss by (torch's weighted mean for class indices)."""
    if reduction == "sum":
        return 1.0
    if target.is_floating_point():           # class probabilities: mean over N * d1..dK
        return float(input.shape[0] * math.prod(kdims))
    labels = target.detach()
    keep = labels != ignore_index
    if weight is None:
        return float(keep.sum().item())
    safe = ember.where(keep, labels, ember.zeros_like(labels))
    return float((weight.detach()[safe] * keep.to(weight.dtype)).sum().item())


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction="mean", ignore_index=None, label_smoothing=0.0,
                         options=None):
    """Cross-entropy of ``linear(input, linear_weight, linear_bias)`` against ``target``.

    Shape: input (in_features,) or (N, in_features); linear_weight (C, in_features) or
    (C, d1, ..., dK, in_features) (K > 0 needs batched input); linear_bias (C,) or
    (C, d1, ..., dK); target class indices (), (N,) or (N, d1, ..., dK), or probabilities of
    the logits' shape. ``ignore_index=None`` means -100 for class indices.

    ``options`` (``nn.LinearCrossEntropyOptions``) selects the chunked path, which computes the
    same loss without materializing all logits at once (see the module docstring).

    Example:
        >>> import ember
        >>> x, w = ember.ones(2, 3), ember.zeros(4, 3)
        >>> linear_cross_entropy(x, w, ember.tensor([0, 3]))
        tensor(1.3863)
    """
    name = "linear_cross_entropy"
    _check_tensor(name, input, "input")
    _check_tensor(name, linear_weight, "linear_weight")
    _check_tensor(name, target, "target")
    if linear_weight.ndim < 2:
        raise RuntimeError(f"{name}: expected linear_weight of shape (C, ..., in_features); "
                           f"got shape {tuple(linear_weight.shape)}.")
    if input.ndim == 0 or input.shape[-1] != linear_weight.shape[-1]:
        got = input.shape[-1] if input.ndim else "a 0-d input"
        raise RuntimeError(f"{name}: expected equal input and linear_weight last dimensions "
                           f"(in_features), got {got} and {linear_weight.shape[-1]}, "
                           "respectively")
    if linear_weight.ndim > 2 and input.ndim != 2:
        raise RuntimeError(f"{name}: a multi-dimensional linear_weight of shape "
                           f"{tuple(linear_weight.shape)} needs a batched (N, in_features) "
                           f"input; got input of shape {tuple(input.shape)}.")
    ignore = -100 if ignore_index is None else ignore_index
    kwargs = {"weight": weight, "ignore_index": ignore, "label_smoothing": label_smoothing}
    kdims = tuple(linear_weight.shape[1:-1])
    chunked = options is not None and reduction in ("mean", "sum") and input.ndim == 2
    if chunked and kdims:
        warnings.warn(f"{name}: the chunked path supports a (C, in_features) linear_weight "
                      "only; running the reference path.", UserWarning, stacklevel=2)
        chunked = False
    if not chunked:
        return cross_entropy(_logits(input, linear_weight, linear_bias), target,
                             reduction=reduction, **kwargs)
    rows = _chunk_rows(options, input.shape[0], linear_weight.shape[0], input.shape[1])
    denominator = _denominator(input, target, weight, ignore, linear_weight.shape[0], kdims,
                               reduction)
    return _ChunkedLinearCrossEntropy.apply(input, linear_weight, linear_bias, target, kwargs,
                                            rows, denominator)
