"""Normalization functions of ``ember.nn.functional``.

Training-mode batch norm and row-wise (layer / group / instance) normalization are the fused
ops of ``ember/ops/nn/norm.py`` (see NOTE [Fused norm kernels, composite double backward]
there); the rest are composites of ember ops.
"""
from __future__ import annotations

import numpy as np

import ember

from ..._tensor import Tensor, _make
from ...autograd.grad_mode import _state, no_grad
from ...ops._kernels import norm as _knorm
from ...ops.nn.norm import NativeBatchNorm, NativeLayerNorm
from ...ops.registry import unwatched

__all__ = ["batch_norm", "layer_norm", "group_norm", "instance_norm", "rms_norm",
           "local_response_norm"]


def _compute_dtype(name, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if not input.is_floating_point():
        raise NotImplementedError(f"{name}: expected a floating-point input, got dtype "
                                  f"{input.dtype}")
    return input.dtype in (ember.float16, ember.bfloat16)


_FAST_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _upcast(t):
    return None if t is None else t.float()


def _batch_stats_op(input, weight, bias, eps):
    """(y, mean, invstd arrays) for training-mode batch norm."""
    stats = {}
    if _compute_dtype("batch_norm", input):
        y = NativeBatchNorm.apply(input.float(), _upcast(weight), _upcast(bias), eps, stats)
        return y.to(input.dtype), stats
    if weight is not None and weight.dtype != input.dtype:
        weight = weight.to(input.dtype)
    if bias is not None and bias.dtype != input.dtype:
        bias = bias.to(input.dtype)
    return NativeBatchNorm.apply(input, weight, bias, eps, stats), stats


def _channel_shape(input):
    shape = [1] * input.ndim
    shape[1] = input.shape[1]
    return shape


def _affine_eval(input, mean, var, weight, bias, eps):
    """(x - mean) / sqrt(var + eps) * w + b with per-channel vectors, as x * scale + shift."""
    shape = _channel_shape(input)
    invstd = (var.to(input.dtype) + eps).rsqrt()
    scale = invstd if weight is None else invstd * weight
    shift = -mean.to(input.dtype) * scale
    if bias is not None:
        shift = shift + bias
    return input * scale.reshape(shape) + shift.reshape(shape)


def _check_channels(name, input, n, what):
    c = input.shape[1]
    if n != c:
        raise RuntimeError(f"{name}: {what} should contain {c} elements not {n}; the input of "
                           f"shape {tuple(input.shape)} has {c} channels (dim 1).")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Normalize each channel (dim 1) over the batch and spatial dims.

    With ``training=True`` the batch statistics are used and the running statistics (if
    given) are updated in place: ``running = (1 - momentum) * running + momentum * batch``,
    with the unbiased batch variance. Otherwise the running statistics are used.

    Shape: input (N, C, *); running_mean, running_var, weight, bias (C,).
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"batch_norm(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    count = _fast_training_count(input, (running_mean, running_var), (weight, bias))
    if training and count:
        # the common training case checked on the arrays: the general path below costs
        # ~15 us a call in Size objects and numel() calls
        stats = {}
        y = NativeBatchNorm.apply(input, weight, bias, eps, stats)
        if running_mean is not None or running_var is not None:
            _update_running(stats, running_mean, running_var, momentum, eps, count)
        return y
    if input.ndim < 2:
        raise ValueError(f"batch_norm: expected an input with at least 2 dims (N, C, *), got "
                         f"shape {tuple(input.shape)}")
    for t, what in ((running_mean, "running_mean"), (running_var, "running_var"),
                    (weight, "weight"), (bias, "bias")):
        if t is not None:
            _check_channels("batch_norm", input, t.numel(), what)
    if training and input.numel() == 0:  # torch: an empty batch passes through, stats untouched
        _compute_dtype("batch_norm", input)
        return input.clone()
    if training:
        count = input.numel() // input.shape[1] if input.shape[1] else 0
        if count == 1:
            raise ValueError("batch_norm: Expected more than 1 value per channel when training, "
                             f"got input size {input.shape}")
    if not training:
        if running_mean is None or running_var is None:
            raise RuntimeError("batch_norm: running_mean and running_var must be given when "
                               "training=False")
        return _affine_eval(input, running_mean, running_var, weight, bias, eps)
    y, stats = _batch_stats_op(input, weight, bias, eps)
    if running_mean is not None or running_var is not None:
        _update_running(stats, running_mean, running_var, momentum, eps,
                        input.numel() // input.shape[1])
    return y


def _fast_training_count(input, running, affine):
    """Values per channel if batch norm's common case holds (float32/64 input of at least two
    dims and more than one value per channel, running stats of C elements, affine parameters of
    shape (C,) in the input's dtype), else 0: then the general path checks and converts."""
    data = input._data
    if data.dtype not in _FAST_DTYPES or data.ndim < 2 or not data.shape[1]:
        return 0
    n_chan = data.shape[1]
    count = data.size // n_chan
    if count < 2:
        return 0
    for t in running:
        if t is not None and t._data.size != n_chan:
            return 0
    for t in affine:
        if t is not None and (t._data.shape != (n_chan,) or t._data.dtype != data.dtype):
            return 0
    return count


def _update_running(stats, running_mean, running_var, momentum, eps, count, groups=1):
    """Exponential moving average of the batch statistics (in place, no autograd).

    The kernel returns invstd = 1 / sqrt(biased_var + eps); the running variance is unbiased:
    var * count / (count - 1). ``groups`` > 1 averages per-instance statistics (instance norm).
    """
    if momentum is None:  # torch's binding wants a float (the modules pass one)
        raise TypeError(f"batch_norm(): argument 'momentum' must be float, not "
                        f"{type(momentum).__name__}")
    if any(r is not None and r._meta for r in (running_mean, running_var)):
        return  # meta buffers hold no statistics to update
    if groups == 1 and _running_in_place(running_mean) and _running_in_place(running_var):
        # batch norm's case in one kernel call: the ten NumPy calls below cost ~12 us a layer
        empty = _NO_RUNNING[stats["mean"].dtype]
        _knorm.update_running_stats(
            stats["mean"], stats["invstd"], float(eps), int(count), float(momentum),
            empty if running_mean is None else running_mean._data,
            empty if running_var is None else running_var._data)
        for running in (running_mean, running_var):
            if running is not None:
                running._bump_version()
        return
    mean = stats["mean"].astype(np.float64)
    var = np.maximum(1.0 / stats["invstd"].astype(np.float64) ** 2 - eps, 0.0)
    var = var * count / max(count - 1, 1)
    if groups > 1:
        mean = mean.reshape(groups, -1).mean(0)
        var = var.reshape(groups, -1).mean(0)
    # written straight into the buffers (a version bump, as copy_ would make): the statistics
    # are outside autograd, and copy_'s general path cost ~30 us per call, ~3 ms of a
    # MobileNetV2 step
    for running, batch in ((running_mean, mean), (running_var, var)):
        if running is not None:
            _write_running(running, (1 - momentum) * running._data + momentum * batch)


_NO_RUNNING = {np.dtype(t): np.empty(0, t) for t in (np.float32, np.float64)}


def _running_in_place(running):
    """Whether the kernel may write this running statistic (None: nothing to write)."""
    if running is None:
        return True
    data = running._data
    return (data.dtype in _FAST_DTYPES and data.ndim == 1 and data.flags.c_contiguous
            and data.flags.writeable)


def _write_running(running, new):
    if not running._data.flags.writeable:  # copy_ raises its clear error
        with no_grad():
            running.copy_(_make(new.astype(running._data.dtype)))
        return
    np.copyto(running._data, new, casting="unsafe")
    running._bump_version()


def _row_norm(input, weight, bias, eps, dim):
    if input.numel() == 0:
        # nothing to normalise; still through weight and bias, whose gradients are then zeros
        # (as torch's) rather than None
        out = input * 1.0
        if weight is not None:
            out = out * weight.to(input.dtype)
        if bias is not None:
            out = out + bias.to(input.dtype)
        return out
    if _compute_dtype("layer_norm", input):
        return NativeLayerNorm.apply(input.float(), _upcast(weight), _upcast(bias), eps, dim).to(
            input.dtype)
    if weight is not None and weight.dtype != input.dtype:
        weight = weight.to(input.dtype)
    if bias is not None and bias.dtype != input.dtype:
        bias = bias.to(input.dtype)
    return NativeLayerNorm.apply(input, weight, bias, eps, dim)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalize over the trailing ``normalized_shape`` dims, then scale and shift.

    Shape: input (*, *normalized_shape); weight, bias normalized_shape.
    """
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    x = input._data if isinstance(input, Tensor) else None
    w = None if weight is None else weight._data
    b = None if bias is None else bias._data
    if (x is not None and len(normalized_shape) == 1 and x.dtype in _FAST_DTYPES and x.size
            and x.shape[-1] == normalized_shape[0]
            and (w is None or (w.shape == x.shape[-1:] and w.dtype == x.dtype))
            and (b is None or (b.shape == x.shape[-1:] and b.dtype == x.dtype))):
        # the common case (one trailing dim, float32/64, matching affine parameters) checked
        # on the arrays: the general path below costs ~20 us a call in Size objects and tuples
        dim = x.shape[-1]
        if not (_state.enabled and (input._requires_grad or weight is not None and
                                    weight._requires_grad or bias is not None and
                                    bias._requires_grad)) and unwatched():
            # nothing to record (a decoding step under no_grad): the kernel straight away on
            # the (checked) arrays, NOTE [Unwatched no-grad views] in ops/registry.py
            y = _knorm.layernorm_forward(
                np.ascontiguousarray(x).reshape(-1, dim),
                None if w is None else np.ascontiguousarray(w),
                None if b is None else np.ascontiguousarray(b), eps)[0]
            return _make(y.reshape(x.shape))
        return NativeLayerNorm.apply(input, weight, bias, eps, dim)
    ns = tuple(int(s) for s in normalized_shape)
    _compute_dtype("layer_norm", input)
    if tuple(input.shape[input.ndim - len(ns):]) != ns or input.ndim < len(ns):
        raise RuntimeError(f"layer_norm: Given normalized_shape={list(ns)}, expected input with "
                           f"shape [*, {', '.join(map(str, ns))}], but got input of size "
                           f"{list(input.shape)}")
    for t, what in ((weight, "weight"), (bias, "bias")):
        if t is not None and tuple(t.shape) != ns:
            raise RuntimeError(f"layer_norm: Expected {what} to be of same shape as "
                               f"normalized_shape, but got {what} of shape {list(t.shape)} and "
                               f"normalized_shape = {list(ns)}")
    dim = int(np.prod(ns)) if ns else 1
    return _row_norm(input, weight, bias, eps, dim)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalize over groups of channels (and all spatial dims) per sample.

    Shape: input (N, C, *) with C divisible by num_groups; weight, bias (C,).
    """
    _compute_dtype("group_norm", input)
    if input.ndim < 2:
        raise RuntimeError(f"group_norm: Expected at least 2 dimensions for input tensor but "
                           f"received {input.ndim}")
    n, c = input.shape[0], input.shape[1]
    if num_groups <= 0 or c % num_groups:
        raise RuntimeError(f"group_norm: Expected number of channels in input to be divisible "
                           f"by num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    for t, what in ((weight, "weight"), (bias, "bias")):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"group_norm: Expected {what} to be a vector of size equal to the "
                               f"number of channels in input, but got {what} of shape "
                               f"{list(t.shape)} and input of shape {list(input.shape)}")
    per_group = input.numel() // max(n * num_groups, 1)
    y = _row_norm(input, None, None, eps, per_group) if input.numel() else input * 1.0
    return _affine_channels(y, weight, bias)


def _affine_channels(y, weight, bias):
    shape = _channel_shape(y)
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """Normalize each channel of each sample over its spatial dims.

    With ``use_input_stats`` the per-instance statistics are used (and averaged over the batch
    into running_mean / running_var when given); otherwise the running statistics are.
    Shape: input (N, C, *).
    """
    _compute_dtype("instance_norm", input)
    if input.ndim < 3:
        raise ValueError(f"instance_norm: expected an input with at least 3 dims (N, C, *), "
                         f"got shape {tuple(input.shape)}")
    n, c = input.shape[0], input.shape[1]
    for t, what in ((running_mean, "running_mean"), (running_var, "running_var"),
                    (weight, "weight"), (bias, "bias")):
        if t is not None:
            _check_channels("instance_norm", input, t.numel(), what)
    if not use_input_stats:
        if running_mean is None or running_var is None:
            raise RuntimeError("instance_norm: use_input_stats=False needs running_mean and "
                               "running_var")
        return _affine_eval(input, running_mean, running_var, weight, bias, eps)
    spatial = input.numel() // max(n * c, 1)
    if use_input_stats and spatial == 1:
        raise ValueError("instance_norm: Expected more than 1 spatial element when training, "
                         f"got input size {input.shape}")
    if running_mean is None and running_var is None:
        y = _row_norm(input, None, None, eps, spatial)
    else:
        # each (sample, channel) row is a channel of a batch of one: batch norm's op yields the
        # per-row statistics, filled again by each compiled replay of that op (statistics
        # computed here from input._data would be a captured call's constants)
        y, stats = _batch_stats_op(input.reshape(1, n * c, spatial), None, None, eps)
        y = y.reshape(input.shape)
        _update_running(stats, running_mean, running_var, momentum, eps, spatial, groups=n)
    return _affine_channels(y, weight, bias)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x^2 over normalized_shape) + eps) * weight; eps defaults to the dtype's
    machine epsilon."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    ns = tuple(int(s) for s in normalized_shape)
    _compute_dtype("rms_norm", input)
    if tuple(input.shape[input.ndim - len(ns):]) != ns or input.ndim < len(ns):
        raise RuntimeError(f"rms_norm: Given normalized_shape={list(ns)}, expected input with "
                           f"shape [*, {', '.join(map(str, ns))}], but got input of size "
                           f"{list(input.shape)}")
    if eps is None:
        eps = float(np.finfo(np.float32 if input.dtype is ember.bfloat16 else
                             input._data.dtype).eps)
    dims = tuple(range(input.ndim - len(ns), input.ndim))
    x = input.float() if input.dtype in (ember.float16, ember.bfloat16) else input
    y = x * ((x * x).mean(dims, keepdim=True) + eps).rsqrt()
    y = y.to(input.dtype)
    if weight is not None:
        y = y * weight
    return y


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """x / (k + alpha / size * sum of x^2 over ``size`` neighbouring channels) ^ beta.

    The window over channels c - size//2 .. c + (size-1)//2 is zero-padded at the edges, as
    in torch (AlexNet's response normalization).
    """
    _compute_dtype("local_response_norm", input)
    if input.ndim < 3:
        raise ValueError("local_response_norm: Expected 3D or higher dimensionality input "
                         f"(got {input.ndim} dimensions)")
    if input.numel() == 0:
        return input * 1.0
    c = input.shape[1]
    sq = input * input
    before, after = size // 2, (size - 1) // 2
    pad_shape = list(input.shape)
    parts = []
    if before:
        pad_shape[1] = before
        parts.append(sq.new_zeros(pad_shape))
    parts.append(sq)
    if after:
        pad_shape[1] = after
        parts.append(sq.new_zeros(pad_shape))
    padded = ember.cat(parts, 1) if len(parts) > 1 else sq
    window = padded.narrow(1, 0, c)
    for offset in range(1, size):  # a sum of `size` shifted slices: exact, no cancellation
        window = window + padded.narrow(1, offset, c)
    div = (window * (alpha / size) + k).pow(beta)
    return input / div
