"""``ember.nn.init``: in-place parameter initializations with PyTorch's distributions.

Every function fills its tensor in place without recording autograd history and returns it.
Random draws come from ``generator`` (or the default generator), so ``ember.manual_seed``
makes them reproducible; the streams differ from torch's (see docs/DEVIATIONS.md).
"""
from __future__ import annotations

import functools
import math
import warnings

import numpy as np

import ember

from .._tensor import Tensor, _make
from ..autograd.grad_mode import no_grad

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_",
           "zeros_", "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
           "kaiming_normal_", "orthogonal_", "sparse_"]

_LINEAR_FNS = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
               "conv_transpose3d")


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity (scales the std of the init distributions).

    linear / conv / sigmoid: 1; tanh: 5/3; relu: sqrt(2); leaky_relu: sqrt(2 / (1 + slope^2));
    selu: 3/4.

    Example:
        >>> from ember import nn
        >>> round(nn.init.calculate_gain("relu"), 4)
        1.4142
    """
    if nonlinearity in _LINEAR_FNS or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _check(name, tensor):
    if not isinstance(tensor, Tensor):
        raise TypeError(f"nn.init.{name}: expected a Tensor, got {type(tensor).__name__}")


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill with U(a, b)."""
    _check("uniform_", tensor)
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill with N(mean, std^2)."""
    _check("normal_", tensor)
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fill with N(mean, std^2) truncated to [a, b] (inverse-CDF sampling, then clamped)."""
    _check("trunc_normal_", tensor)
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                      "distribution of values may be incorrect.", stacklevel=2)

    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    lo, hi = norm_cdf((a - mean) / std), norm_cdf((b - mean) / std)
    with no_grad():
        # uniform on [2lo - 1, 2hi - 1], then erfinv maps it to a truncated standard normal
        tensor.uniform_(2 * lo - 1, 2 * hi - 1, generator=generator)
        tensor.erfinv_()
        tensor.mul_(std * math.sqrt(2.0))
        tensor.add_(mean)
        tensor.clamp_(min=a, max=b)
    return tensor


def constant_(tensor, val):
    """Fill with ``val``."""
    _check("constant_", tensor)
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    return constant_(tensor, 1.0)


def zeros_(tensor):
    return constant_(tensor, 0.0)


def eye_(tensor):
    """Fill a 2-D tensor with the identity matrix (ones on the diagonal)."""
    _check("eye_", tensor)
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        tensor.copy_(ember.eye(*tensor.shape, dtype=tensor.dtype))
    return tensor


def dirac_(tensor, groups=1):
    """Fill a 3/4/5-D conv weight so the convolution is the identity (per group)."""
    _check("dirac_", tensor)
    if tensor.ndim not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    min_dim = min(out_per_group, sizes[1])
    arr = np.zeros(tuple(sizes), tensor._data.dtype)
    center = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):
        for d in range(min_dim):
            arr[(g * out_per_group + d, d) + center] = 1
    with no_grad():
        tensor.copy_(_make(arr))
    return tensor


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive = int(np.prod(tensor.shape[2:])) if tensor.ndim > 2 else 1
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio, 2010)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(name, tensor, a, mode, nonlinearity):
    _check(name, tensor)
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return None
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """U(-b, b) with b = gain * sqrt(3 / fan) (He et al., 2015)."""
    std = _kaiming_std("kaiming_uniform_", tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """N(0, std^2) with std = gain / sqrt(fan)."""
    std = _kaiming_std("kaiming_normal_", tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix from the QR decomposition of a Gaussian matrix (Saxe et al.,
    2013); trailing dims are flattened."""
    _check("orthogonal_", tensor)
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    # the QR is real and computed in float64: an integer tensor would keep truncated zeros,
    # a complex one a real matrix (torch raises NotImplementedError for both); float16 and
    # bfloat16 get the float64 result rounded (torch's CPU QR has no half kernels)
    if not tensor.is_floating_point():
        raise NotImplementedError(f"nn.init.orthogonal_: not implemented for {tensor.dtype}; "
                                  "expected a floating-point tensor")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = ember.randn(rows, cols, generator=generator, dtype=ember.float64)._data
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))  # makes the decomposition unique (uniform over orthogonals)
    if rows < cols:
        q = q.T
    with no_grad():
        tensor.copy_(_make((q * gain).reshape(tuple(tensor.shape)).astype(tensor._data.dtype)))
    return tensor


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """A 2-D matrix with N(0, std^2) entries and a ``sparsity`` fraction of each column
    zero."""
    _check("sparse_", tensor)
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        arr = np.array(tensor._data, copy=True)
        for c in range(cols):
            perm = ember.randperm(rows, generator=generator)._data
            arr[perm[:num_zeros], c] = 0
        tensor.copy_(_make(arr))
    return tensor


def _deprecated(new):
    def old(*args, **kwargs):
        warnings.warn(f"nn.init.{new.__name__[:-1]} is now deprecated in favor of "
                      f"nn.init.{new.__name__}.", FutureWarning, stacklevel=2)
        return new(*args, **kwargs)

    old.__name__ = new.__name__[:-1]
    return old


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)


# NOTE [Init on meta tensors]: an initializer given a meta tensor (a module built under
# ``with ember.device("meta"):``) has nothing to fill and returns the tensor, as torch's do.
def _skip_meta(fn):
    @functools.wraps(fn)
    def init(tensor, *args, **kwargs):
        if isinstance(tensor, Tensor) and tensor._meta:
            return tensor
        return fn(tensor, *args, **kwargs)
    return init


for _name in [n for n, f in list(globals().items()) if n.endswith("_") and not n.startswith("_")
              and callable(f)]:
    globals()[_name] = _skip_meta(globals()[_name])
