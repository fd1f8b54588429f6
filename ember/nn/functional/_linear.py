"""Linear maps of ``ember.nn.functional``: linear, bilinear."""
from __future__ import annotations

from ..._tensor import Tensor, _make
from ...amp._state import maybe_autocast
from ...amp._state import state as _autocast
from ...autograd.grad_mode import _state
from ...ops.nn.linear import Linear, small_linear
from ...ops.registry import unwatched
from ...profiler.profiler import _active as _prof
from ._utils import _check_tensor

__all__ = [
    "linear", "bilinear",
]



def linear(input, weight, bias=None):
    """x W^T + b.

    Shape: input (*, in_features); weight (out_features, in_features); bias (out_features,).

    Example:
        >>> import ember
        >>> ember.nn.functional.linear(ember.ones(2, 3), ember.ones(4, 3)).shape
        ember.Size([2, 4])
    """
    if _autocast.enabled:
        input, weight, bias = maybe_autocast("linear", input, weight, bias)
    if not isinstance(input, Tensor):
        _check_tensor("linear", input)
    if not isinstance(weight, Tensor):
        _check_tensor("linear", weight, "weight")
    # the common case checked on the arrays' shapes (a decoding step calls linear ~17 times
    # per token; the general checks below build Size objects and cost ~10 us each call)
    xs, ws = input._data.shape, weight._data.shape
    same = input._data.dtype == weight._data.dtype
    if (len(ws) == 2 and len(xs) >= 1 and xs[-1] == ws[1] and same
            and (bias is None or (bias._data.shape == ws[:1]
                                  and bias._data.dtype == weight._data.dtype))):
        if not (_state.enabled and (input._requires_grad or weight._requires_grad or bias
                                    is not None and bias._requires_grad)) and unwatched():
            # nothing recorded or watching: the small product straight away (NOTE [Unwatched
            # no-grad views] in ops/registry.py), ~1 us of Op._run a call, 17 a decoding step
            y = small_linear(input._data, weight._data, None if bias is None else bias._data)
            if y is not None:
                return _make(y)
        if _prof.prof is None:  # what apply calls when not profiling: a call less
            return Linear._run(input, weight, bias)
        return Linear.apply(input, weight, bias)
    if weight.ndim not in (1, 2):
        raise RuntimeError(f"linear: expected a 1-D or 2-D weight, got shape "
                           f"{tuple(weight.shape)}")
    if input.ndim == 0:
        raise RuntimeError("linear: both arguments to linear need to be at least 1D, but the "
                           "input is 0D")
    if weight.ndim == 1:  # torch allows a vector weight: a dot product over the last dim
        out = input.matmul(weight)
        return out + bias if bias is not None else out
    n_in = weight.shape[1]
    if input.shape[-1] != n_in:
        rows = input.numel() // input.shape[-1] if input.shape[-1] else 0
        raise RuntimeError(f"linear: mat1 and mat2 shapes cannot be multiplied "
                           f"({rows}x{input.shape[-1]} and {n_in}x{weight.shape[0]}); got input "
                           f"of shape {tuple(input.shape)}, expected its last dim to be "
                           f"in_features={n_in}.")
    if input.dtype != weight.dtype or (bias is not None and bias.dtype != input.dtype):
        raise RuntimeError(f"linear: expected input, weight and bias to have the same dtype, "
                           f"got {input.dtype}, {weight.dtype}"
                           + (f" and {bias.dtype}" if bias is not None else "") +
                           "; convert with .to(dtype).")
    if bias is not None and tuple(bias.shape) not in ((weight.shape[0],), (1,), ()):
        raise RuntimeError(f"linear: bias of shape {tuple(bias.shape)} does not match "
                           f"out_features={weight.shape[0]}")
    if bias is not None and tuple(bias.shape) != (weight.shape[0],):
        return Linear.apply(input, weight, None) + bias
    return Linear.apply(input, weight, bias)


def bilinear(input1, input2, weight, bias=None):
    """y_o = x1^T W_o x2 + b_o.

    Shape: input1 (*, in1), input2 (*, in2), weight (out, in1, in2), bias (out,).
    """
    _check_tensor("bilinear", input1, "input1")
    _check_tensor("bilinear", input2, "input2")
    if weight.ndim != 3:
        raise RuntimeError(f"bilinear(): weight must be three-dimensional, got shape "
                           f"{tuple(weight.shape)}")
    n_out, n1, n2 = weight.shape
    if input1.shape[-1] != n1:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got "
                           f"{input1.shape[-1]} but expected {n1}")
    if input2.shape[-1] != n2:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got "
                           f"{input2.shape[-1]} but expected {n2}")
    if tuple(input1.shape[:-1]) != tuple(input2.shape[:-1]):
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got "
                           f"{tuple(input1.shape[:-1])} and {tuple(input2.shape[:-1])}")
    lead = tuple(input1.shape[:-1])
    x1 = input1.reshape(-1, n1)
    x2 = input2.reshape(-1, n2)
    # (B, in1) @ (in1, out*in2) -> (B, out, in2), then contract in2 with x2
    t = x1.matmul(weight.permute(1, 0, 2).reshape(n1, n_out * n2)).reshape(-1, n_out, n2)
    y = (t * x2.unsqueeze(1)).sum(-1)
    if bias is not None:
        y = y + bias
    return y.reshape(lead + (n_out,))
